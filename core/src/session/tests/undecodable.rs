//! Bytes that cannot be decoded still complete what they can: an undecodable answer fails its
//! request at once, an error with `"id": null` fails the one request it can be for.

use super::*;

fn timeout_60() -> RequestOptions {
    RequestOptions::new().timeout(Duration::from_secs(60))
}

fn invalid_response(r: &Result<RawResult, RequestError>) -> &str {
    match r {
        Err(RequestError::InvalidResponse(detail)) => detail,
        other => panic!("expected an invalid response, got {other:?}"),
    }
}

#[test]
fn invalid_json_with_a_pending_id_completes_that_request_at_once() {
    let mut h = Harness::ready(config(), "2025-11-25");
    let a = h.send("tools/call", json!({"name": "a"}), timeout_60());
    let b = h.send("tools/call", json!({"name": "b"}), timeout_60());
    let id = h.wire_id(a);
    h.server_bytes(format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"t"#).as_bytes());
    let done = h.completions(a);
    assert_eq!(done.len(), 1, "{:?}", h.events);
    assert!(invalid_response(done[0]).contains("not a valid JSON-RPC response"));
    assert!(
        h.events
            .iter()
            .any(|e| matches!(e, Event::Diagnostic(Diagnostic::NotJson { .. }))),
        "the frame is still reported: {:?}",
        h.events
    );
    // The other request is untouched, and a late valid answer to `a` is only stale.
    assert!(h.completions(b).is_empty());
    h.server(json!({"jsonrpc": "2.0", "id": id, "result": {}}));
    assert_eq!(h.completions(a).len(), 1);
    h.respond_ok(b, json!({"ok": true}));
    assert!(h.completions(b)[0].is_ok());
}

#[test]
fn a_server_request_with_broken_json_completes_nothing() {
    let mut h = Harness::ready(config(), "2025-11-25");
    let a = h.send("tools/call", json!({"name": "a"}), timeout_60());
    let id = h.wire_id(a);
    h.server_bytes(
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping","params":{{"#).as_bytes(),
    );
    assert!(h.completions(a).is_empty(), "{:?}", h.events);
}

#[test]
fn invalid_utf8_through_the_line_framing_completes_the_request() {
    let now = Instant::now();
    let mut c = crate::StdioConnection::new(config(), now);
    let mut sink = Vec::new();
    while c.poll_transmit(&mut sink).is_some() {}
    c.handle_bytes(
        now,
        format!(
            "{}\n",
            json!({"jsonrpc":"2.0","id":0,"result": init_result("2025-11-25")})
        )
        .as_bytes(),
    );
    let a = c
        .session_mut()
        .send_request(now, "tools/call", None, timeout_60())
        .unwrap();
    while c.poll_transmit(&mut sink).is_some() {}
    while c.session_mut().poll_event().is_some() {}
    let mut line =
        format!(r#"{{"jsonrpc":"2.0","id":{},"result":{{"text":""#, a.get()).into_bytes();
    line.extend_from_slice(b"\xff\xfe\"}}\n");
    c.handle_bytes(now, &line);
    let mut events = Vec::new();
    while let Some(e) = c.session_mut().poll_event() {
        events.push(e);
    }
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::Diagnostic(Diagnostic::InvalidUtf8 { .. }))),
        "{events:?}"
    );
    let done: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Event::Completed { handle, result } if *handle == a => Some(result),
            _ => None,
        })
        .collect();
    assert_eq!(done.len(), 1, "{events:?}");
    assert!(
        invalid_response(done[0]).contains("not valid UTF-8"),
        "{done:?}"
    );
}

#[test]
fn an_undecodable_initialize_answer_closes_the_handshake() {
    let mut h = Harness::new(config());
    h.server_bytes(br#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","cap"#);
    assert!(
        matches!(
            h.events.last(),
            Some(Event::Closed {
                reason: CloseReason::InvalidHandshake(_)
            })
        ),
        "{:?}",
        h.events
    );
}

#[test]
fn a_null_id_error_completes_the_only_pending_request() {
    let mut h = Harness::ready(config(), "2025-11-25");
    let a = h.send("tools/call", json!({"name": "a"}), timeout_60());
    h.server(
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}}),
    );
    assert!(
        h.events
            .iter()
            .any(|e| matches!(e, Event::Diagnostic(Diagnostic::UncorrelatedError(_)))),
        "{:?}",
        h.events
    );
    match h.completions(a).as_slice() {
        [Err(RequestError::Remote(e))] => assert_eq!(e.code, -32700),
        other => panic!("expected the remote error, got {other:?}"),
    }
}

#[test]
fn a_null_id_error_with_two_pending_requests_completes_neither() {
    let mut h = Harness::ready(config(), "2025-11-25");
    let a = h.send("tools/call", json!({"name": "a"}), timeout_60());
    let b = h.send("tools/call", json!({"name": "b"}), timeout_60());
    h.server(
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}}),
    );
    assert!(h.completions(a).is_empty() && h.completions(b).is_empty());
    assert!(
        h.events
            .iter()
            .any(|e| matches!(e, Event::Diagnostic(Diagnostic::UncorrelatedError(_))))
    );
}

#[test]
fn a_null_id_error_during_the_handshake_rejects_it() {
    let mut h = Harness::new(config());
    h.server(
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}}),
    );
    assert!(
        matches!(
            h.events.last(),
            Some(Event::Closed {
                reason: CloseReason::HandshakeRejected(_)
            })
        ),
        "{:?}",
        h.events
    );
}
