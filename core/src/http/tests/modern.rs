//! 2026-07-28 over Streamable HTTP: the probe and its fallbacks, headers, no session,
//! -32020 re-fetch, broken streams, cancel by abort.

use serde_json::{Value, json};

use super::*;
use crate::session::{EraPolicy, Event as SessionEvent};

const DISCOVER: &str = include_str!(
    "../../../tests/data/2026-07-28/DiscoverResult/server-capabilities-discovery.json"
);

fn auto() -> SessionConfig {
    session_config().with_era_policy(EraPolicy::Auto {
        probe_timeout: Duration::from_secs(5),
    })
}

impl H {
    fn modern_with(session: SessionConfig) -> Self {
        let t0 = Instant::now();
        let mut h = H {
            conn: Connection::new(ConnectionConfig::new(url()), session, t0),
            t0,
            now: t0,
            out: Default::default(),
            aborts: Vec::new(),
            events: Vec::new(),
        };
        h.drain();
        h
    }

    /// Discover answered; no listener, nothing else asked for.
    fn modern() -> Self {
        let mut h = H::modern_with(auto());
        let probe = h.next();
        let b = body(&probe);
        let reply = json!({"jsonrpc": "2.0", "id": b["id"], "result": serde_json::from_str::<Value>(DISCOVER).unwrap()});
        h.reply(
            probe.id,
            200,
            &[
                ("content-type", "application/json"),
                ("mcp-session-id", "ignored"),
            ],
            reply.to_string().as_bytes(),
        );
        h.no_exchange();
        assert_eq!(h.conn.session().era(), Some(session::Era::Discover));
        h.events.clear();
        h
    }

    fn ready_era(&self) -> Option<session::Era> {
        self.events.iter().find_map(|e| match e {
            Event::Session(SessionEvent::Ready { era, .. }) => Some(*era),
            _ => None,
        })
    }
}

fn header<'a>(x: &'a HttpRequest, name: &str) -> Option<&'a str> {
    x.headers.get(name)
}

#[test]
fn the_probe_is_a_sessionless_post_with_the_standard_headers() {
    let mut h = H::modern_with(auto());
    let probe = h.next();
    assert_eq!(probe.method, Method::Post);
    assert_eq!(body(&probe)["method"], "server/discover");
    assert_eq!(header(&probe, "mcp-protocol-version"), Some("2026-07-28"));
    assert_eq!(header(&probe, "mcp-method"), Some("server/discover"));
    assert_eq!(header(&probe, "mcp-session-id"), None);
    assert_eq!(
        header(&probe, "accept"),
        Some("application/json, text/event-stream")
    );
}

#[test]
fn a_modern_server_gets_no_session_no_listener_and_named_posts() {
    let mut h = H::modern();
    assert_eq!(
        h.conn.session_id(),
        None,
        "a session id from a modern exchange is ignored"
    );
    let call = h.send(
        "tools/call",
        json!({"name": "get_weather", "arguments": {"location": "Oslo"}}),
    );
    let x = h.next();
    assert_eq!(header(&x, "mcp-method"), Some("tools/call"));
    assert_eq!(header(&x, "mcp-name"), Some("get_weather"));
    assert_eq!(header(&x, "mcp-protocol-version"), Some("2026-07-28"));
    assert_eq!(header(&x, "mcp-session-id"), None);
    assert_eq!(
        body(&x)["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    h.reply_json(
        x.id,
        &answer(&x, json!({"resultType": "complete", "content": []})),
    );
    assert!(h.completions(call)[0].is_ok());
    let read = h.send("resources/read", json!({"uri": "file:///ü"}));
    let x = h.next();
    assert_eq!(header(&x, "mcp-name"), Some("=?base64?ZmlsZTovLy/DvA==?="));
    let _ = read;
    // Close: no DELETE.
    h.conn.close(h.now);
    h.no_exchange();
    assert!(h.conn.is_finished());
}

#[test]
fn tools_list_is_filtered_and_its_annotations_become_param_headers() {
    let mut h = H::modern();
    let list = h.send("tools/list", json!({}));
    let x = h.next();
    h.reply_json(
        x.id,
        &answer(
            &x,
            json!({"resultType": "complete", "ttlMs": 0, "cacheScope": "private", "tools": [
                {"name": "deploy", "inputSchema": {"type": "object", "properties": {
                    "region": {"type": "string", "x-mcp-header": "Region"},
                    "n": {"type": "integer", "x-mcp-header": "N"}}}},
                {"name": "broken", "inputSchema": {"type": "object", "properties": {
                    "f": {"type": "number", "x-mcp-header": "F"}}}}
            ]}),
        ),
    );
    let result = h.result(list);
    let names: Vec<_> = result["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].clone())
        .collect();
    assert_eq!(names, [json!("deploy")], "the invalid tool is dropped");
    assert!(
        h.http_events()
            .iter()
            .any(|e| matches!(e, HttpEvent::ToolDropped { name, .. } if name == "broken"))
    );
    h.send(
        "tools/call",
        json!({"name": "deploy", "arguments": {"region": "eu west ", "n": 7}}),
    );
    let x = h.next();
    assert_eq!(
        header(&x, "mcp-param-region"),
        Some("=?base64?ZXUgd2VzdCA=?=")
    );
    assert_eq!(header(&x, "mcp-param-n"), Some("7"));
    h.send(
        "tools/call",
        json!({"name": "deploy", "arguments": {"region": null}}),
    );
    let x = h.next();
    assert_eq!(header(&x, "mcp-param-region"), None, "null: omitted");
    assert_eq!(header(&x, "mcp-param-n"), None, "absent: omitted");
}

#[test]
fn header_mismatch_refetches_tools_and_retries_once() {
    let mut h = H::modern();
    let call = h.send("tools/call", json!({"name": "t", "arguments": {}}));
    let x = h.next();
    let first_id = body(&x)["id"].clone();
    let mismatch = |id: &Value| {
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32020, "message": "Header mismatch"}})
            .to_string()
    };
    h.reply(
        x.id,
        400,
        &[("content-type", "application/json")],
        mismatch(&first_id).as_bytes(),
    );
    let list = h.next();
    assert_eq!(body(&list)["method"], "tools/list");
    assert!(h.completions(call).is_empty());
    h.reply_json(
        list.id,
        &answer(
            &list,
            json!({"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}),
        ),
    );
    let retry = h.next();
    assert_eq!(body(&retry)["method"], "tools/call");
    let retry_id = body(&retry)["id"].clone();
    assert_ne!(retry_id, first_id);
    // A second mismatch is the answer.
    h.reply(
        retry.id,
        400,
        &[("content-type", "application/json")],
        mismatch(&retry_id).as_bytes(),
    );
    h.no_exchange();
    assert!(matches!(h.error(call), RequestError::Remote(e) if e.code == -32020));
}

#[test]
fn a_broken_stream_reissues_the_request_with_a_new_id() {
    let mut h = H::modern();
    let call = h.send("tools/call", json!({"name": "slow"}));
    let x = h.next();
    let first = body(&x)["id"].clone();
    h.head(x.id, 200, &[("content-type", "text/event-stream")]);
    h.chunk(x.id, b"event: message\nid: e1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"x\"}}\n\n");
    h.end(x.id);
    let again = h.next();
    assert_eq!(
        again.method,
        Method::Post,
        "no GET resumption in 2026-07-28"
    );
    assert_eq!(header(&again, "last-event-id"), None);
    assert_ne!(body(&again)["id"], first);
    h.reply_json(again.id, &answer(&again, json!({"content": []})));
    assert!(h.completions(call)[0].is_ok());
}

#[test]
fn cancel_aborts_the_exchange_and_sends_no_notification() {
    let mut h = H::modern();
    let call = h.send("tools/call", json!({"name": "slow"}));
    let x = h.next();
    h.head(x.id, 200, &[("content-type", "text/event-stream")]);
    h.aborts.clear();
    h.conn.session_mut().cancel(h.now, call, None).unwrap();
    h.drain();
    assert!(h.aborts.contains(&x.id));
    h.no_exchange();
}

#[test]
fn refused_probes_with_an_empty_or_legacy_body_fall_back_to_initialize() {
    let legacy = br#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Server not initialized"},"id":null}"#;
    for (status, body_bytes) in [
        (400, &b""[..]),
        (404, &b""[..]),
        (405, &b""[..]),
        (400, &legacy[..]),
    ] {
        let mut h = H::modern_with(auto());
        let probe = h.next();
        h.reply(probe.id, status, &[], body_bytes);
        let init = h.next();
        assert_eq!(body(&init)["method"], "initialize", "status {status}");
        assert_eq!(header(&init, "mcp-method"), None);
        let reply =
            json!({"jsonrpc": "2.0", "id": body(&init)["id"], "result": init_result("2025-11-25")});
        h.reply(
            init.id,
            200,
            &[
                ("content-type", "application/json"),
                ("mcp-session-id", "s1"),
            ],
            reply.to_string().as_bytes(),
        );
        assert_eq!(h.ready_era(), Some(session::Era::Initialize));
        assert_eq!(h.conn.session_id(), Some("s1"));
        let initialized = h.next();
        assert_eq!(body_of(&initialized)["method"], "notifications/initialized");
        assert_eq!(header(&initialized, "mcp-session-id"), Some("s1"));
    }
}

#[test]
fn a_method_not_found_answer_to_the_probe_falls_back_on_a_new_exchange() {
    // A server that answers the probe with 200 and a JSON-RPC -32601: the fallback's
    // `initialize` goes out, and the probe's finished exchange is not taken for it.
    let mut h = H::modern_with(auto());
    let probe = h.next();
    let refusal = json!({"jsonrpc": "2.0", "id": body(&probe)["id"],
                         "error": {"code": -32601, "message": "Method not found"}});
    h.reply(
        probe.id,
        200,
        &[("content-type", "application/json")],
        refusal.to_string().as_bytes(),
    );
    let init = h.next();
    assert_eq!(body(&init)["method"], "initialize");
    let reply =
        json!({"jsonrpc": "2.0", "id": body(&init)["id"], "result": init_result("2025-11-25")});
    h.reply(
        init.id,
        200,
        &[("content-type", "application/json")],
        reply.to_string().as_bytes(),
    );
    assert_eq!(h.ready_era(), Some(session::Era::Initialize));
}

#[test]
fn a_method_not_found_event_on_the_probe_stream_falls_back_too() {
    let mut h = H::modern_with(auto());
    let probe = h.next();
    let refusal = json!({"jsonrpc": "2.0", "id": body(&probe)["id"],
                         "error": {"code": -32601, "message": "Method not found"}});
    h.reply(
        probe.id,
        200,
        &[("content-type", "text/event-stream")],
        format!("data: {refusal}\n\n").as_bytes(),
    );
    let init = h.next();
    assert_eq!(body(&init)["method"], "initialize");
    assert!(
        !h.events
            .iter()
            .any(|e| matches!(e, Event::Session(SessionEvent::Closed { .. }))),
        "{:?}",
        h.events
    );
}

#[test]
fn a_refused_initialize_after_the_fallback_goes_on_to_legacy_sse() {
    let mut h = H::modern_with(auto());
    let probe = h.next();
    h.reply(probe.id, 405, &[], b"");
    let init = h.next();
    h.reply(init.id, 405, &[], b"");
    let get = h.next();
    assert_eq!(get.method, Method::Get);
    assert_eq!(get.purpose, Purpose::LegacyConnect);
}

#[test]
fn a_400_with_a_modern_error_does_not_fall_back() {
    let mut h = H::modern_with(auto());
    let probe = h.next();
    let err = json!({"jsonrpc": "2.0", "id": body(&probe)["id"], "error": {"code": -32020, "message": "Header mismatch"}});
    h.reply(
        probe.id,
        400,
        &[("content-type", "application/json")],
        err.to_string().as_bytes(),
    );
    h.no_exchange();
    assert!(h.conn.session().is_closed());
    assert!(h.events.iter().any(|e| matches!(e, Event::Session(SessionEvent::Closed { reason: session::CloseReason::HandshakeRejected(e) })  if e.code == -32020)));
}

#[test]
fn unauthorized_forbidden_and_server_errors_never_fall_back() {
    for status in [401, 403, 500, 502] {
        let mut h = H::modern_with(auto());
        let probe = h.next();
        h.reply(probe.id, status, &[], b"");
        h.no_exchange();
        assert!(h.conn.session().is_closed(), "status {status}");
        assert!(
            !h.session_diagnostics()
                .iter()
                .any(|d| matches!(d, session::Diagnostic::EraFallback { .. })),
            "status {status}"
        );
    }
}

/// An `input_required` reply answers its exchange: the request waits for the host's input
/// (no "no response" failure, no re-issue), then the retry goes out with the input, under a
/// new id; over JSON and over an SSE stream that ends after the reply.
#[test]
fn an_input_required_reply_is_an_answer_not_a_lost_exchange() {
    for sse in [false, true] {
        let caps = crate::types::ClientCapabilities {
            elicitation: Some(Default::default()),
            ..Default::default()
        };
        let mut h = H::modern_with(auto().with_capabilities(caps));
        let probe = h.next();
        let b = body(&probe);
        let reply = json!({"jsonrpc": "2.0", "id": b["id"], "result": serde_json::from_str::<Value>(DISCOVER).unwrap()});
        h.reply_json(probe.id, &reply);
        h.events.clear();
        let call = h.send("tools/call", json!({"name": "confirm"}));
        let x = h.next();
        let first = body(&x)["id"].clone();
        let input = json!({"jsonrpc": "2.0", "id": first, "result": {
            "resultType": "input_required",
            "inputRequests": {"ok": {"method": "elicitation/create", "params": {
                "message": "sure?", "requestedSchema": {"type": "object", "properties": {}}}}},
            "requestState": "s1"}});
        if sse {
            h.head(x.id, 200, &[("content-type", "text/event-stream")]);
            h.chunk(
                x.id,
                format!("event: message\ndata: {input}\n\n").as_bytes(),
            );
            h.end(x.id);
        } else {
            h.reply_json(x.id, &input);
        }
        h.no_exchange();
        assert!(h.completions(call).is_empty(), "sse {sse}: failed early");
        let id = h
            .events
            .iter()
            .find_map(|e| match e {
                Event::Session(SessionEvent::ServerRequest { id, .. }) => Some(*id),
                _ => None,
            })
            .expect("the input request reaches the host");
        let accepted = crate::jsonrpc::to_raw(&json!({"action": "accept", "content": {}})).unwrap();
        h.conn
            .session_mut()
            .respond(h.now, id, Ok(accepted))
            .unwrap();
        h.drain();
        let retry = h.next();
        let rb = body(&retry);
        assert_ne!(rb["id"], first);
        assert_eq!(rb["params"]["requestState"], "s1");
        assert_eq!(rb["params"]["inputResponses"]["ok"]["action"], "accept");
        h.reply_json(retry.id, &answer(&retry, json!({"content": []})));
        assert!(h.completions(call)[0].is_ok(), "sse {sse}");
    }
}

/// A listen over HTTP: its notifications come on its POST's stream and are routed to it; a
/// broken stream is re-issued once with a new id (acknowledged again, still routed to the same
/// handle); cancel closes the stream and sends no `notifications/cancelled`.
#[test]
fn a_listen_stream_is_reissued_once_when_broken_and_cancel_closes_it() {
    use crate::types::v2026::ListenFilter;
    let mut h = H::modern();
    let filter = ListenFilter {
        tools_list_changed: Some(true),
        ..ListenFilter::default()
    };
    let l = h
        .conn
        .session_mut()
        .listen(h.now, &filter, session::Deadline::SessionDefault)
        .unwrap();
    h.drain();
    let on_stream = |id: &Value, method: &str| {
        json!({"jsonrpc": "2.0", "method": method,
            "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": id}, "notifications": {"toolsListChanged": true}}})
    };
    let routed = |h: &H| {
        h.events
            .iter()
            .filter_map(|e| match e {
                Event::Session(SessionEvent::SubscriptionAcknowledged { handle, .. }) => {
                    Some((*handle, "ack".to_owned()))
                }
                Event::Session(SessionEvent::Subscription {
                    handle,
                    notification,
                }) => Some((*handle, notification.method.clone())),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    let x = h.next();
    assert_eq!(header(&x, "mcp-method"), Some("subscriptions/listen"));
    let first = body(&x)["id"].clone();
    h.head(x.id, 200, &[("content-type", "text/event-stream")]);
    let ack = on_stream(&first, "notifications/subscriptions/acknowledged");
    h.chunk(x.id, &sse(&[("message", None, &ack)]));
    let broke = h.now;
    h.end(x.id);
    let again = h.next();
    h.advance(Duration::from_millis(40));
    let second = body(&again)["id"].clone();
    assert_ne!(second, first);
    assert_eq!(body(&again)["method"], "subscriptions/listen");
    h.head(again.id, 200, &[("content-type", "text/event-stream")]);
    let ack = on_stream(&second, "notifications/subscriptions/acknowledged");
    let changed = on_stream(&second, "notifications/tools/list_changed");
    h.chunk(
        again.id,
        &sse(&[("message", None, &ack), ("message", None, &changed)]),
    );
    assert_eq!(
        routed(&h),
        [
            (l, "ack".to_owned()),
            (l, "ack".to_owned()),
            (l, "notifications/tools/list_changed".to_owned())
        ]
    );
    assert!(h.notifications().is_empty(), "{:?}", h.notifications());
    assert!(h.completions(l).is_empty());
    // The re-issue is a gap, reported once it is acknowledged again.
    let resumed: Vec<_> = h
        .http_events()
        .into_iter()
        .filter(|e| matches!(e, HttpEvent::ListenResumed { .. }))
        .collect();
    assert!(
        matches!(resumed[..], [HttpEvent::ListenResumed { handle, since, until }]
            if *handle == l && *since == broke && *until == broke + Duration::from_millis(40)),
        "{resumed:?}"
    );
    h.aborts.clear();
    h.conn.session_mut().cancel(h.now, l, None).unwrap();
    h.drain();
    assert!(h.aborts.contains(&again.id));
    h.no_exchange();
    assert!(matches!(
        h.completions(l)[..],
        [Err(RequestError::Cancelled { .. })]
    ));
}
