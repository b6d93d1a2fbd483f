//! One scenario per test, read like a script.

use serde_json::json;

use super::*;

const S: Duration = Duration::from_secs(1);

#[test]
fn handshake_sends_initialize_then_initialized_then_ready() {
    let mut h = Harness::new(config().with_capabilities(caps_roots_elicitation()));
    assert_eq!(h.session.state(), SessionState::Handshaking);
    assert_eq!(h.sent.len(), 1);
    let init = &h.sent[0].1;
    assert_eq!(init["method"], "initialize");
    assert_eq!(init["params"]["protocolVersion"], "2025-11-25");
    assert_eq!(init["params"]["clientInfo"]["name"], "test-client");
    assert_eq!(
        init["params"]["capabilities"],
        json!({"roots": {}, "elicitation": {}})
    );
    assert_eq!(h.sent[0].0.kind, MessageKind::Request);

    h.answer_initialize("2025-11-25");
    assert_eq!(
        h.sent_methods(),
        ["initialize", "notifications/initialized"]
    );
    assert_eq!(h.sent[1].0.kind, MessageKind::Notification);
    match &h.events[..] {
        [Event::Ready { era, version }] => {
            assert_eq!(*era, Era::Initialize);
            assert_eq!(*version, ProtocolVersion::V2025_11_25);
        }
        e => panic!("{e:?}"),
    }
    assert_eq!(h.session.state(), SessionState::Ready);
    assert_eq!(h.session.server_info().unwrap().name, "fake");
    assert_eq!(h.session.instructions(), Some("be nice"));
    assert!(h.session.server_capabilities().unwrap().tools.is_some());
    assert_eq!(
        h.session.poll_timeout(),
        None,
        "handshake deadline disarmed"
    );
}

#[test]
fn server_may_downgrade_to_an_older_supported_version() {
    let h = Harness::ready(config(), "2025-03-26");
    assert_eq!(
        h.session.protocol_version(),
        Some(ProtocolVersion::V2025_03_26)
    );
}

#[test]
fn unsupported_version_closes_and_fails_queued_requests() {
    let mut h = Harness::new(config());
    let queued = h.send("tools/list", json!({}), RequestOptions::new());
    h.answer_initialize("2099-01-01");
    assert_eq!(
        h.sent_methods(),
        ["initialize"],
        "nothing sent after refusing"
    );
    assert_eq!(h.completions(queued).len(), 1);
    match h.events.last() {
        Some(Event::Closed {
            reason: CloseReason::UnsupportedVersion { offered, supported },
        }) => {
            assert_eq!(offered, "2099-01-01");
            assert!(supported.contains(&"2025-11-25"));
        }
        e => panic!("{e:?}"),
    }
    assert_eq!(
        h.session
            .send_request(h.now, "ping", None, RequestOptions::new()),
        Err(UsageError::Closed)
    );
}

#[test]
fn restricting_supported_versions_refuses_an_old_answer() {
    let mut cfg = config();
    cfg.supported_versions = vec![ProtocolVersion::V2025_11_25];
    let mut h = Harness::new(cfg);
    h.answer_initialize("2024-11-05");
    assert!(matches!(
        h.events.last(),
        Some(Event::Closed {
            reason: CloseReason::UnsupportedVersion { .. }
        })
    ));
}

#[test]
fn ping_goes_out_before_the_initialize_result() {
    let mut h = Harness::new(config());
    let ping = h.send("ping", json!({}), RequestOptions::new());
    assert_eq!(h.sent_methods(), ["initialize", "ping"]);
    h.respond_ok(ping, json!({}));
    assert!(h.completions(ping)[0].is_ok());
}

#[test]
fn requests_wait_for_the_handshake_and_keep_their_order() {
    let mut h = Harness::new(config());
    let a = h.send("tools/list", json!({}), RequestOptions::new());
    h.session
        .notify(h.now, "notifications/roots/list_changed", None)
        .unwrap();
    let b = h.send("prompts/list", json!({}), RequestOptions::new());
    h.drain();
    assert_eq!(h.sent_methods(), ["initialize"]);
    h.advance(20 * S);
    h.answer_initialize("2025-06-18");
    assert_eq!(
        h.sent_methods(),
        [
            "initialize",
            "notifications/initialized",
            "tools/list",
            "notifications/roots/list_changed",
            "prompts/list"
        ]
    );
    // The 30 s timeout starts when a request is sent, not when it was queued.
    h.advance(29 * S);
    assert!(h.completions(a).is_empty() && h.completions(b).is_empty());
    h.advance(S);
    assert_eq!(h.completions(a).len(), 1);
}

#[test]
fn the_queue_before_the_handshake_is_bounded() {
    let mut cfg = config();
    cfg.max_queued = 2;
    let mut h = Harness::new(cfg);
    h.send("a", json!({}), RequestOptions::new());
    h.send("b", json!({}), RequestOptions::new());
    assert_eq!(
        h.session
            .send_request(h.now, "c", None, RequestOptions::new()),
        Err(UsageError::QueueFull { limit: 2 })
    );
    // ping is not queued, so it is not refused.
    assert!(
        h.session
            .send_request(h.now, "ping", None, RequestOptions::new())
            .is_ok()
    );
}

#[test]
fn requests_in_flight_are_capped() {
    // Held requests switched off: past the cap, a request fails at once.
    let cfg = config().with_max_in_flight(1, 0);
    let mut h = Harness::ready(cfg, "2025-11-25");
    let a = h.send("x", json!({}), RequestOptions::new());
    assert_eq!(
        h.session
            .send_request(h.now, "y", None, RequestOptions::new()),
        Err(UsageError::TooManyInFlight { limit: 1 })
    );
    h.respond_ok(a, json!({}));
    assert!(
        h.session
            .send_request(h.now, "y", None, RequestOptions::new())
            .is_ok()
    );
}

#[test]
fn timeout_then_late_response_resolves_once() {
    let mut h = Harness::ready(config(), "2025-11-25");
    let r = h.send(
        "tools/call",
        json!({"name": "slow"}),
        RequestOptions::new().timeout(S),
    );
    let wire = h.wire_id(r);
    assert_eq!(h.session.poll_timeout(), Some(h.now + S));
    h.advance(S / 2);
    assert!(h.completions(r).is_empty(), "early tick is a no-op");
    h.advance(S / 2);
    assert!(matches!(
        h.completions(r)[..],
        [Err(RequestError::Timeout { total: false, .. })]
    ));
    let (_, cancel) = h.sent.last().unwrap();
    assert_eq!(cancel["method"], "notifications/cancelled");
    assert_eq!(cancel["params"]["requestId"], wire);
    h.server(json!({"jsonrpc": "2.0", "id": wire, "result": {}}));
    assert_eq!(h.completions(r).len(), 1);
    assert!(matches!(
        h.diagnostics()[..],
        [Diagnostic::StaleResponse { .. }]
    ));
}

#[test]
fn zero_timeout_is_a_usage_error_and_none_means_no_deadline() {
    let mut h = Harness::ready(config(), "2025-11-25");
    assert_eq!(
        h.session.send_request(
            h.now,
            "x",
            None,
            RequestOptions::new().timeout(Duration::ZERO)
        ),
        Err(UsageError::ZeroTimeout)
    );
    let r = h.send("x", json!({}), RequestOptions::new().no_timeout());
    assert_eq!(h.session.poll_timeout(), None);
    h.advance(Duration::from_secs(100_000));
    assert!(h.completions(r).is_empty());
}

#[test]
fn cancel_completes_locally_and_tells_the_server() {
    let mut h = Harness::ready(config(), "2025-11-25");
    let r = h.send("tools/call", json!({"name": "x"}), RequestOptions::new());
    let wire = h.wire_id(r);
    h.session
        .cancel(h.now, r, Some("user pressed ^C".into()))
        .unwrap();
    h.drain();
    assert!(matches!(
        h.completions(r)[..],
        [Err(RequestError::Cancelled { reason: Some(_) })]
    ));
    let (out, cancel) = h.sent.last().unwrap();
    assert_eq!(out.kind, MessageKind::Notification);
    assert_eq!(
        cancel["params"],
        json!({"requestId": wire, "reason": "user pressed ^C"})
    );
    assert_eq!(h.session.poll_timeout(), None, "its deadline is gone");
    assert_eq!(
        h.session.cancel(h.now, r, None),
        Err(UsageError::UnknownRequest(r))
    );
}

#[test]
fn cancelling_a_request_the_server_never_saw_sends_nothing() {
    let mut h = Harness::new(config());
    let r = h.send("tools/list", json!({}), RequestOptions::new());
    h.session.cancel(h.now, r, None).unwrap();
    h.answer_initialize("2025-11-25");
    assert_eq!(
        h.sent_methods(),
        ["initialize", "notifications/initialized"]
    );
    assert_eq!(h.completions(r).len(), 1);
}

#[test]
fn progress_is_routed_and_resets_the_deadline_under_a_maximum() {
    let mut h = Harness::ready(config(), "2025-11-25");
    let opts = RequestOptions::new()
        .timeout(10 * S)
        .reset_timeout_on_progress(25 * S);
    let r = h.send("tools/call", json!({"name": "long", "arguments": {}}), opts);
    let (_, req) = h.sent.last().unwrap();
    let token = req["params"]["_meta"]["progressToken"].clone();
    assert!(token.is_u64());
    assert_eq!(req["params"]["name"], "long");
    for step in 1..=3 {
        h.advance(8 * S);
        h.server(json!({"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": token, "progress": step as f64 * 0.5, "total": 2.0, "message": "working"}}));
    }
    // 24 s in: without the reset it would have timed out at 10 s.
    assert!(h.completions(r).is_empty());
    let progress: Vec<_> = h
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Progress {
                handle,
                progress,
                total,
                message,
                ..
            } if *handle == r => Some((*progress, *total, message.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(progress.len(), 3);
    assert_eq!(progress[2], (1.5, Some(2.0), Some("working".into())));
    // Next deadline is the total limit (25 s), not 24 + 10 s.
    assert_eq!(h.session.poll_timeout(), Some(h.t0 + 25 * S));
    h.advance(S);
    assert!(matches!(
        h.completions(r)[..],
        [Err(RequestError::Timeout { total: true, .. })]
    ));
}

#[test]
fn progress_for_an_unknown_token_is_a_diagnostic() {
    let mut h = Harness::ready(config(), "2025-11-25");
    h.server(json!({"jsonrpc": "2.0", "method": "notifications/progress",
        "params": {"progressToken": "nope", "progress": 1}}));
    h.server(json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": 5}));
    assert!(matches!(
        h.diagnostics()[..],
        [
            Diagnostic::UnknownProgress,
            Diagnostic::InvalidNotification { .. }
        ]
    ));
}

#[test]
fn server_ping_is_answered_at_any_time() {
    let mut h = Harness::new(config());
    h.server(json!({"jsonrpc": "2.0", "id": "p-1", "method": "ping"}));
    let (out, resp) = h.sent.last().unwrap();
    assert_eq!(out.kind, MessageKind::Response);
    assert_eq!(resp, &json!({"jsonrpc": "2.0", "id": "p-1", "result": {}}));
    assert!(h.events.is_empty(), "the host never sees pings");
}

#[test]
fn declared_server_requests_reach_the_host_and_are_answered_verbatim() {
    let mut h = Harness::ready(
        config().with_capabilities(caps_roots_elicitation()),
        "2025-11-25",
    );
    h.server(json!({"jsonrpc": "2.0", "id": "r/1", "method": "roots/list"}));
    let Some(Event::ServerRequest { id, method, .. }) = h.events.last() else {
        panic!("{:?}", h.events)
    };
    assert_eq!(method, "roots/list");
    let id = *id;
    let result = serde_json::value::to_raw_value(&json!({"roots": []})).unwrap();
    h.session.respond(h.now, id, Ok(result)).unwrap();
    h.drain();
    assert_eq!(
        h.sent.last().unwrap().1,
        json!({"jsonrpc": "2.0", "id": "r/1", "result": {"roots": []}})
    );
    assert_eq!(
        h.session.respond(h.now, id, Ok(jsonrpc::empty_object())),
        Err(UsageError::UnknownServerRequest(id))
    );
}

#[test]
fn undeclared_server_requests_are_refused_with_method_not_found() {
    let mut h = Harness::ready(config(), "2025-11-25");
    h.server(json!({"jsonrpc": "2.0", "id": 41, "method": "sampling/createMessage", "params": {}}));
    h.server(json!({"jsonrpc": "2.0", "id": 42, "method": "made/up"}));
    for (i, id) in [(0, 41), (1, 42)] {
        let resp = &h.sent[i].1;
        assert_eq!(resp["id"], id);
        assert_eq!(resp["error"]["code"], -32601);
    }
    assert_eq!(h.diagnostics().len(), 2);
    assert!(
        !h.events
            .iter()
            .any(|e| matches!(e, Event::ServerRequest { .. }))
    );
}

#[test]
fn open_server_requests_are_capped() {
    let mut cfg = config().with_capabilities(caps_roots_elicitation());
    cfg.max_server_requests = 1;
    let mut h = Harness::ready(cfg, "2025-11-25");
    h.server(json!({"jsonrpc": "2.0", "id": 1, "method": "roots/list"}));
    h.server(json!({"jsonrpc": "2.0", "id": 2, "method": "roots/list"}));
    assert_eq!(h.sent.len(), 1, "the second is refused at once");
    assert_eq!(h.sent[0].1["error"]["code"], -32603);
    assert_eq!(h.session.open_server_requests(), 1);
}

#[test]
fn server_cancellation_of_its_request_reaches_the_host() {
    let mut h = Harness::ready(
        config().with_capabilities(caps_roots_elicitation()),
        "2025-11-25",
    );
    h.server(
        json!({"jsonrpc": "2.0", "id": 9, "method": "elicitation/create",
        "params": {"message": "name?", "requestedSchema": {"type": "object", "properties": {}}}}),
    );
    let Some(Event::ServerRequest { id, .. }) = h.events.last() else {
        panic!()
    };
    let id = *id;
    h.server(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 9, "reason": "gone"}}),
    );
    assert!(matches!(
        h.events.last(),
        Some(Event::ServerRequestCancelled { id: i, reason: Some(_) }) if *i == id
    ));
    assert!(!h.session.deadlines_paused());
    assert_eq!(
        h.session.respond(h.now, id, Ok(jsonrpc::empty_object())),
        Err(UsageError::UnknownServerRequest(id))
    );
    assert!(
        h.sent.is_empty(),
        "nothing is sent for a cancelled server request"
    );
}

#[test]
fn an_open_elicitation_pauses_request_deadlines() {
    let mut h = Harness::ready(
        config().with_capabilities(caps_roots_elicitation()),
        "2025-11-25",
    );
    let r = h.send(
        "tools/call",
        json!({"name": "ask"}),
        RequestOptions::new().timeout(10 * S),
    );
    h.advance(4 * S);
    h.server(json!({"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": {}}));
    assert!(h.session.deadlines_paused());
    assert_eq!(h.session.poll_timeout(), None);
    h.advance(300 * S); // the user takes five minutes
    assert!(h.completions(r).is_empty());
    let Some(Event::ServerRequest { id, .. }) = h
        .events
        .iter()
        .rev()
        .find(|e| matches!(e, Event::ServerRequest { .. }))
    else {
        panic!()
    };
    let id = *id;
    h.session
        .respond(h.now, id, Ok(jsonrpc::empty_object()))
        .unwrap();
    h.drain();
    // Six seconds of the ten remain.
    assert_eq!(h.session.poll_timeout(), Some(h.now + 6 * S));
    h.advance(6 * S);
    assert_eq!(h.completions(r).len(), 1);
}

#[test]
fn unknown_response_ids_are_diagnostics() {
    let mut h = Harness::ready(config(), "2025-11-25");
    let r = h.send("x", json!({}), RequestOptions::new());
    h.server(json!({"jsonrpc": "2.0", "id": 999, "result": {}}));
    h.server(json!({"jsonrpc": "2.0", "id": "1", "result": {}}));
    assert!(matches!(
        h.diagnostics()[..],
        [
            Diagnostic::UnknownResponse { .. },
            Diagnostic::UnknownResponse { .. }
        ]
    ));
    assert!(h.completions(r).is_empty());
}

#[test]
fn duplicate_responses_complete_once() {
    let mut h = Harness::ready(config(), "2025-11-25");
    let r = h.send("x", json!({}), RequestOptions::new());
    h.respond_ok(r, json!({"n": 1}));
    h.respond_ok(r, json!({"n": 2}));
    let done = h.completions(r);
    assert_eq!(done.len(), 1);
    assert_eq!(done[0].as_ref().unwrap().get(), r#"{"n":1}"#);
    assert!(matches!(
        h.diagnostics()[..],
        [Diagnostic::StaleResponse { .. }]
    ));
}

#[test]
fn remote_errors_keep_code_message_and_data() {
    let mut h = Harness::ready(config(), "2025-11-25");
    let r = h.send(
        "resources/read",
        json!({"uri": "x://y"}),
        RequestOptions::new(),
    );
    let id = h.wire_id(r);
    h.server(json!({"jsonrpc": "2.0", "id": id,
        "error": {"code": -32002, "message": "Resource not found", "data": {"uri": "x://y"}}}));
    match h.completions(r)[..] {
        [Err(RequestError::Remote(e))] => {
            assert_eq!(e.code, ErrorObject::RESOURCE_NOT_FOUND);
            assert_eq!(e.data.as_ref().unwrap().get(), r#"{"uri":"x://y"}"#);
        }
        ref other => panic!("{other:?}"),
    }
}

#[test]
fn an_error_with_a_null_id_is_reported_and_harms_nothing_when_ambiguous() {
    // Two requests pending: the error could be for either, so it fails neither (with one
    // pending it fails that one: see `undecodable.rs`).
    let mut h = Harness::ready(config(), "2025-11-25");
    let r = h.send("x", json!({}), RequestOptions::new());
    let other = h.send("y", json!({}), RequestOptions::new());
    h.server(
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}}),
    );
    h.server(json!({"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid"}}));
    assert!(matches!(
        h.diagnostics()[..],
        [
            Diagnostic::UncorrelatedError(_),
            Diagnostic::UncorrelatedError(_)
        ]
    ));
    h.respond_ok(r, json!({}));
    assert!(h.completions(r)[0].is_ok());
    assert!(h.completions(other).is_empty());
}

#[test]
fn batches_are_accepted_on_input() {
    let mut h = Harness::ready(config(), "2025-03-26");
    let a = h.send("a", json!({}), RequestOptions::new());
    let b = h.send("b", json!({}), RequestOptions::new());
    let (ia, ib) = (h.wire_id(a), h.wire_id(b));
    h.server(json!([
        {"jsonrpc": "2.0", "id": ib, "result": {"b": true}},
        {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"},
        "garbage",
        {"jsonrpc": "2.0", "id": ia, "result": {"a": true}},
    ]));
    assert!(h.completions(a)[0].is_ok() && h.completions(b)[0].is_ok());
    assert!(h.events.iter().any(|e| matches!(e,
        Event::Notification(n) if n.kind() == NotificationKind::ToolsListChanged)));
    assert_eq!(h.diagnostics().len(), 1);
}

#[test]
fn non_json_input_is_skipped_and_the_session_carries_on() {
    let mut h = Harness::ready(config(), "2025-11-25");
    let r = h.send("x", json!({}), RequestOptions::new());
    h.server_bytes(b"Starting server v1.2 ...");
    h.server_bytes(br#"{"some": "json"}"#);
    assert!(matches!(
        h.diagnostics()[..],
        [
            Diagnostic::NotJson { .. },
            Diagnostic::InvalidMessage { .. }
        ]
    ));
    h.respond_ok(r, json!({}));
    assert!(h.completions(r)[0].is_ok());
}

#[test]
fn close_with_requests_in_flight_completes_each_once_then_closed() {
    let mut h = Harness::ready(config(), "2025-11-25");
    let a = h.send("a", json!({}), RequestOptions::new());
    let b = h.send("b", json!({}), RequestOptions::new().no_timeout());
    h.session.close(h.now);
    h.drain();
    for r in [a, b] {
        assert!(matches!(
            h.completions(r)[..],
            [Err(RequestError::Closed(CloseReason::Local))]
        ));
    }
    assert!(matches!(
        h.events.last(),
        Some(Event::Closed {
            reason: CloseReason::Local
        })
    ));
    let first_completed = h
        .events
        .iter()
        .position(|e| matches!(e, Event::Completed { handle, .. } if *handle == a));
    let second = h
        .events
        .iter()
        .position(|e| matches!(e, Event::Completed { handle, .. } if *handle == b));
    assert!(first_completed < second, "completions in handle order");
    assert_eq!(h.session.state(), SessionState::Closed);
    assert_eq!(h.session.poll_timeout(), None);
    assert_eq!(h.session.notify(h.now, "x", None), Err(UsageError::Closed));
    h.session.close(h.now);
    h.respond_ok(a, json!({}));
    assert_eq!(h.completions(a).len(), 1, "input after close is ignored");
    assert_eq!(
        h.events
            .iter()
            .filter(|e| matches!(e, Event::Closed { .. }))
            .count(),
        1
    );
}

#[test]
fn transport_closed_fails_pending_requests_with_the_detail() {
    let mut h = Harness::ready(config(), "2025-11-25");
    let r = h.send("a", json!({}), RequestOptions::new());
    h.session
        .handle_transport_closed(h.now, Some("exited with status 1".into()));
    h.drain();
    match h.completions(r)[..] {
        [Err(RequestError::Closed(CloseReason::TransportClosed { detail: Some(d) }))] => {
            assert_eq!(d, "exited with status 1");
        }
        ref other => panic!("{other:?}"),
    }
}

#[test]
fn handshake_timeout_closes_the_session() {
    let mut h = Harness::new(config().with_handshake_timeout(Some(5 * S)));
    let r = h.send("tools/list", json!({}), RequestOptions::new());
    assert_eq!(h.session.poll_timeout(), Some(h.now + 5 * S));
    h.advance(5 * S);
    assert!(matches!(
        h.completions(r)[..],
        [Err(RequestError::Closed(
            CloseReason::HandshakeTimeout { .. }
        ))]
    ));
    assert!(
        !h.sent_methods()
            .contains(&"notifications/cancelled".to_owned()),
        "initialize is never cancelled"
    );
}

#[test]
fn initialize_error_closes_the_session() {
    let mut h = Harness::new(config());
    h.server(json!({"jsonrpc": "2.0", "id": 0,
        "error": {"code": -32602, "message": "Unsupported protocol version",
                  "data": {"supported": ["2024-11-05"], "requested": "2025-11-25"}}}));
    assert!(matches!(
        h.events.last(),
        Some(Event::Closed { reason: CloseReason::HandshakeRejected(e) }) if e.code == -32602
    ));
}

#[test]
fn invalid_initialize_result_closes_the_session() {
    let mut h = Harness::new(config());
    h.server(json!({"jsonrpc": "2.0", "id": 0, "result": {"capabilities": {}}}));
    assert!(matches!(
        h.events.last(),
        Some(Event::Closed {
            reason: CloseReason::InvalidHandshake(_)
        })
    ));
}

#[test]
fn reserved_methods_are_refused() {
    let mut h = Harness::ready(config(), "2025-11-25");
    assert!(matches!(
        h.session
            .send_request(h.now, "initialize", None, RequestOptions::new()),
        Err(UsageError::ReservedMethod(_))
    ));
    assert!(matches!(
        h.session.notify(h.now, "notifications/cancelled", None),
        Err(UsageError::ReservedMethod(_))
    ));
}

#[test]
fn typed_requests_serialize_their_params() {
    use crate::types::{ListTools, PaginatedParams};
    let mut h = Harness::ready(config(), "2025-11-25");
    let params = Some(PaginatedParams {
        cursor: Some("c2".into()),
        ..PaginatedParams::default()
    });
    let r = h
        .session
        .request::<ListTools>(h.now, &params, RequestOptions::new())
        .unwrap();
    h.drain();
    assert_eq!(h.sent.last().unwrap().1["params"], json!({"cursor": "c2"}));
    assert_eq!(h.sent.last().unwrap().0.request, Some(r));
}

#[test]
fn extreme_durations_never_panic() {
    let mut cfg = config().with_handshake_timeout(Some(Duration::MAX));
    cfg.request_timeout = Some(Duration::MAX);
    let mut h = Harness::new(cfg);
    h.answer_initialize("2025-11-25");
    let a = h.send("a", json!({}), RequestOptions::new());
    let b = h.send(
        "b",
        json!({}),
        RequestOptions::new()
            .timeout(Duration::MAX)
            .reset_timeout_on_progress(Duration::MAX),
    );
    assert!(h.session.poll_timeout().is_some_and(|t| t > h.now));
    h.advance(Duration::from_secs(u64::from(u32::MAX)));
    assert!(h.completions(a).is_empty() && h.completions(b).is_empty());
    h.session.close(h.now);
    h.drain();
    assert_eq!(h.completions(a).len() + h.completions(b).len(), 2);
}
