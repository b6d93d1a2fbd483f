//! The Streamable HTTP server's sessions and refusals, one scenario per test.

use serde_json::{Value, json};

use super::harness::config;
use super::http_harness::{ACCEPT_BOTH, Http, JSON};
use crate::server::Event;
use crate::server::http::{HttpEvent, HttpMode, HttpServerConfig, OriginCheck, Refusal};
use crate::session::{CloseReason, RequestError, RequestOptions};
use crate::time::Duration;

pub(super) fn call(id: u64, name: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": {}}})
}

#[test]
fn initialize_mints_a_session_id_and_answers_with_json() {
    let mut h = Http::new();
    let r = h.post(
        None,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "c", "version": "1"}}}),
    );
    let seen = h.seen(r);
    assert_eq!(seen.status, Some(200));
    assert!(seen.ended);
    assert_eq!(seen.header("content-type"), Some("application/json"));
    let id = seen.header("mcp-session-id").unwrap();
    assert_eq!(id, "01".repeat(16), "the hex of the host's entropy");
    assert_eq!(seen.json()["result"]["protocolVersion"], "2025-06-18");
    assert!(matches!(h.events[0], HttpEvent::SessionOpened { .. }));
}

#[test]
fn a_post_without_session_id_after_initialize_is_400() {
    let mut h = Http::new();
    h.initialize("2025-11-25", json!({}));
    let r = h.post(None, &call(1, "echo"));
    assert_eq!(h.status(r), 400);
    assert_eq!(h.refusals(), [Refusal::MissingSessionId]);
    assert_eq!(h.seen(r).json()["error"]["code"], -32000);
}

#[test]
fn an_unknown_session_id_is_404() {
    let mut h = Http::new();
    h.initialize("2025-11-25", json!({}));
    for method in ["POST", "GET", "DELETE"] {
        let r = h.send(
            method,
            &[ACCEPT_BOTH, JSON, ("mcp-session-id", "nope")],
            call(1, "echo").to_string().as_bytes(),
        );
        assert_eq!(h.status(r), 404, "{method}");
    }
}

#[test]
fn an_unsupported_protocol_version_header_is_400() {
    let mut h = Http::new();
    let (sid, _) = h.initialize("2025-11-25", json!({}));
    let r = h.post_with(
        &[
            ACCEPT_BOTH,
            JSON,
            ("mcp-session-id", &sid),
            ("mcp-protocol-version", "1999-01-01"),
        ],
        &call(1, "echo"),
    );
    assert_eq!(h.status(r), 400);
    let text = String::from_utf8(h.seen(r).body.clone()).unwrap();
    assert!(
        text.contains("2025-11-25"),
        "lists the supported versions: {text}"
    );
    let ok = h.post_with(
        &[
            ACCEPT_BOTH,
            JSON,
            ("mcp-session-id", &sid),
            ("mcp-protocol-version", "2025-11-25"),
        ],
        &json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}),
    );
    assert_eq!(h.status(ok), 202);
}

#[test]
fn a_post_of_notifications_only_is_202_without_body() {
    let mut h = Http::new();
    let (sid, _) = h.initialize("2025-11-25", json!({}));
    let r = h.post(
        Some(&sid),
        &json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}),
    );
    let seen = h.seen(r);
    assert_eq!(seen.status, Some(202));
    assert!(seen.body.is_empty() && seen.ended);
    assert!(h.events.iter().any(|e| matches!(
        e,
        HttpEvent::Session {
            event: Event::Notification { .. },
            ..
        }
    )));
}

#[test]
fn delete_ends_the_session_and_what_it_was_doing() {
    let mut h = Http::new();
    let (sid, key) = h.initialize("2025-11-25", json!({"roots": {}}));
    let r = h.post(Some(&sid), &call(1, "slow"));
    let get = h.get_stream(&sid);
    let now = h.now;
    let handle = h
        .server
        .session_mut(key)
        .unwrap()
        .send_request(now, "roots/list", None, RequestOptions::default())
        .unwrap();
    h.drain();
    let d = h.send("DELETE", &[("mcp-session-id", &sid)], b"");
    assert_eq!(h.status(d), 200);
    assert!(h.events.iter().any(|e| matches!(e, HttpEvent::Session { event: Event::Completed { handle: x, result: Err(RequestError::Closed(_)) }, .. } if *x == handle)));
    assert!(h.events.iter().any(|e| matches!(e, HttpEvent::SessionEnded { session, reason: CloseReason::TransportClosed { .. } } if *session == key)));
    assert!(h.seen(get).ended, "the GET stream ends");
    assert!(h.seen(r).ended, "the open POST ends");
    assert_eq!(
        h.seen(r).status,
        Some(404),
        "unanswered: the session is gone"
    );
    assert!(h.server.session(key).is_none());
    let again = h.post(Some(&sid), &call(2, "echo"));
    assert_eq!(h.status(again), 404, "an ended session's id");
}

#[test]
fn a_foreign_origin_is_403_loopback_and_allowed_ones_pass() {
    let mut h = Http::new();
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}}).to_string();
    let r = h.send(
        "POST",
        &[ACCEPT_BOTH, JSON, ("origin", "http://evil.example")],
        init.as_bytes(),
    );
    assert_eq!(h.status(r), 403);
    assert!(matches!(&h.refusals()[..], [Refusal::Origin(o)] if o == "http://evil.example"));
    assert_eq!(h.server.sessions().count(), 0);
    let r = h.send(
        "POST",
        &[ACCEPT_BOTH, JSON, ("origin", "http://localhost:5173")],
        init.as_bytes(),
    );
    assert_eq!(h.status(r), 200);
    let mut h = Http::with_config(
        HttpServerConfig::new(config())
            .with_origin_check(OriginCheck::LoopbackOr(vec!["https://app.example".into()])),
    );
    let r = h.send(
        "POST",
        &[ACCEPT_BOTH, JSON, ("origin", "https://app.example")],
        init.as_bytes(),
    );
    assert_eq!(h.status(r), 200);
    let mut h =
        Http::with_config(HttpServerConfig::new(config()).with_origin_check(OriginCheck::Off));
    let r = h.send(
        "POST",
        &[ACCEPT_BOTH, JSON, ("origin", "http://evil.example")],
        init.as_bytes(),
    );
    assert_eq!(h.status(r), 200);
}

#[test]
fn a_missing_or_wrong_bearer_token_is_401_with_a_challenge() {
    let mut h = Http::with_config(HttpServerConfig::new(config()).with_bearer_token("t0k"));
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}}).to_string();
    // No token at all: a bare challenge (RFC 6750 §3.1), and a body that says so.
    for auth in [None, Some("Basic t0k"), Some("Bearer")] {
        let mut headers = vec![ACCEPT_BOTH, JSON];
        if let Some(a) = auth {
            headers.push(("authorization", a));
        }
        let r = h.send("POST", &headers, init.as_bytes());
        assert_eq!(h.status(r), 401, "{auth:?}");
        assert_eq!(h.seen(r).header("www-authenticate"), Some("Bearer"));
        let message = h.seen(r).json()["error"]["message"].to_string();
        assert!(message.contains("has none"), "{auth:?}: {message}");
    }
    // A wrong token: `invalid_token`, a body that says the token is not the one required,
    // and the token itself nowhere.
    let r = h.send(
        "POST",
        &[ACCEPT_BOTH, JSON, ("authorization", "Bearer nope-s3cret")],
        init.as_bytes(),
    );
    assert_eq!(h.status(r), 401);
    let challenge = h.seen(r).header("www-authenticate").unwrap_or_default();
    assert!(
        challenge.starts_with(r#"Bearer error="invalid_token""#),
        "{challenge}"
    );
    let body = h.seen(r).json().to_string();
    assert!(
        body.contains("is not the one this server requires"),
        "{body}"
    );
    assert!(!body.contains("nope-s3cret") && !challenge.contains("nope-s3cret"));
    assert_eq!(
        h.refusals().last(),
        Some(&Refusal::InvalidToken),
        "the host's log says which"
    );
    let r = h.send(
        "POST",
        &[ACCEPT_BOTH, JSON, ("authorization", "Bearer t0k")],
        init.as_bytes(),
    );
    assert_eq!(h.status(r), 200);
}

#[test]
fn bad_posts_get_their_status() {
    let mut h = Http::with_config(HttpServerConfig::new(config()).with_limits(64, 300, 32));
    let (sid, _) = h.initialize("2025-11-25", json!({}));
    let big = format!(
        r#"{{"jsonrpc":"2.0","method":"x","params":{{"p":"{}"}}}}"#,
        "a".repeat(400)
    );
    let r = h.send(
        "POST",
        &[ACCEPT_BOTH, JSON, ("mcp-session-id", &sid)],
        big.as_bytes(),
    );
    assert_eq!(h.status(r), 413);
    let r = h.send(
        "POST",
        &[ACCEPT_BOTH, JSON, ("mcp-session-id", &sid)],
        b"{not json",
    );
    assert_eq!(h.status(r), 400);
    assert_eq!(h.seen(r).json()["error"]["code"], -32700, "a parse error");
    // JSON, but no JSON-RPC message: an invalid request.
    for body in [&b"{}"[..], b"[]", b"42", br#"{"jsonrpc":"2.0"}"#] {
        let r = h.send("POST", &[ACCEPT_BOTH, JSON, ("mcp-session-id", &sid)], body);
        assert_eq!(h.status(r), 400);
        let error = &h.seen(r).json()["error"];
        assert_eq!(
            error["code"],
            -32600,
            "{}: {error}",
            String::from_utf8_lossy(body)
        );
    }
    let r = h.send(
        "POST",
        &[("accept", "text/html"), JSON, ("mcp-session-id", &sid)],
        b"{}",
    );
    assert_eq!(h.status(r), 406);
    let r = h.send(
        "POST",
        &[
            ACCEPT_BOTH,
            ("content-type", "text/plain"),
            ("mcp-session-id", &sid),
        ],
        b"{}",
    );
    assert_eq!(h.status(r), 415);
    let r = h.send("PUT", &[ACCEPT_BOTH, ("mcp-session-id", &sid)], b"");
    assert_eq!(h.status(r), 405);
    assert_eq!(h.seen(r).header("allow"), Some("GET, POST, DELETE"));
    for seen in h.seen.values() {
        assert!(seen.ended && seen.heads == 1);
    }
}

#[test]
fn the_session_table_is_bounded() {
    let mut h = Http::with_config(HttpServerConfig::new(config()).with_limits(2, 1 << 20, 32));
    h.initialize("2025-11-25", json!({}));
    h.initialize("2025-11-25", json!({}));
    let r = h.post(None, &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}}));
    assert_eq!(h.status(r), 503);
    assert_eq!(h.server.sessions().count(), 2);
    // A JSON-RPC error that says what the bound is and how a place comes free.
    let body: Value = serde_json::from_slice(&h.seen(r).body).expect("a JSON body");
    assert_eq!(body["error"]["code"], -32000);
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("too many sessions (open: 2,") && message.contains("DELETE"),
        "{message}"
    );
    assert_eq!(h.refusals(), [Refusal::TooManySessions { limit: 2 }]);
}

#[test]
fn the_streams_of_a_session_are_bounded() {
    let mut h = Http::with_config(HttpServerConfig::new(config()).with_limits(4, 1 << 20, 2));
    let (sid, _) = h.initialize("2025-11-25", json!({}));
    let a = h.post(Some(&sid), &call(1, "a"));
    let b = h.post(Some(&sid), &call(2, "b"));
    let c = h.post(Some(&sid), &call(3, "c"));
    assert_eq!(h.seen(a).status, None);
    assert_eq!(h.seen(b).status, None);
    assert_eq!(h.status(c), 429);
}

#[test]
fn stateless_mode_serves_each_post_with_its_own_session() {
    let mut h = Http::with_config(HttpServerConfig::new(config()).with_mode(HttpMode::Stateless));
    let r = h.post_with(
        &[ACCEPT_BOTH, JSON, ("mcp-protocol-version", "2025-06-18")],
        &call(4, "echo"),
    );
    let [(key, id, ref method)] = h.host_requests()[..] else {
        panic!("{:?}", h.events)
    };
    assert_eq!(method, "tools/call", "no initialize needed");
    assert_eq!(
        h.server
            .session(key)
            .unwrap()
            .protocol_version()
            .map(|v| v.as_str()),
        Some("2025-06-18")
    );
    h.answer_empty(key, id);
    let seen = h.seen(r);
    assert_eq!(seen.json()["id"], 4);
    assert_eq!(seen.header("mcp-session-id"), None, "no session ids");
    assert!(
        h.server.session(key).is_none(),
        "the session ended with its POST"
    );
    assert_eq!(h.server.sessions().count(), 0);
    let g = h.send("GET", &[("accept", "text/event-stream")], b"");
    assert_eq!(h.status(g), 405);
    let d = h.send("DELETE", &[], b"");
    assert_eq!(h.status(d), 405);
    let init = h.post(None, &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}}));
    assert_eq!(
        h.seen(init).json()["result"]["protocolVersion"],
        "2025-11-25"
    );
    assert_eq!(h.server.sessions().count(), 0);
}

#[test]
fn a_session_the_host_closes_ends_and_its_id_is_404() {
    let mut h = Http::new();
    let (sid, key) = h.initialize("2025-11-25", json!({}));
    let now = h.now;
    h.server.close_session(now, key);
    h.drain();
    assert!(h.events.iter().any(|e| matches!(e, HttpEvent::SessionEnded { session, reason: CloseReason::Local } if *session == key)));
    let r = h.post(Some(&sid), &call(1, "x"));
    assert_eq!(h.status(r), 404);
}

#[test]
fn session_deadlines_run_through_the_server() {
    let mut h = Http::new();
    let (sid, key) = h.initialize("2025-11-25", json!({"roots": {}}));
    let get = h.get_stream(&sid);
    let now = h.now;
    let options = RequestOptions::new().timeout(Duration::from_secs(1));
    let handle = h
        .server
        .session_mut(key)
        .unwrap()
        .send_request(now, "roots/list", None, options)
        .unwrap();
    h.drain();
    assert_eq!(h.server.poll_timeout(), Some(now + Duration::from_secs(1)));
    h.advance(Duration::from_secs(1));
    assert!(h.events.iter().any(|e| matches!(e, HttpEvent::Session { event: Event::Completed { handle: x, result: Err(RequestError::Timeout { .. }) }, .. } if *x == handle)));
    let methods: Vec<Value> = h
        .seen(get)
        .events()
        .into_iter()
        .map(|(_, m)| m["method"].clone())
        .collect();
    assert_eq!(
        methods,
        [json!("roots/list"), json!("notifications/cancelled")]
    );
}

#[test]
fn an_idle_session_ends_and_one_with_an_open_stream_does_not() {
    let mut h = Http::with_config(
        HttpServerConfig::new(config()).with_idle_timeout(Some(Duration::from_secs(60))),
    );
    let (idle_sid, idle) = h.initialize("2025-11-25", json!({}));
    let (busy_sid, busy) = h.initialize("2025-11-25", json!({}));
    let get = h.get_stream(&busy_sid);
    assert_eq!(
        h.server.poll_timeout(),
        Some(h.now + Duration::from_secs(60))
    );
    h.advance(Duration::from_secs(59));
    assert!(h.server.session(idle).is_some());
    h.advance(Duration::from_secs(1));
    assert!(
        h.server.session(idle).is_none(),
        "idle for the timeout: ended"
    );
    assert!(h.events.iter().any(|e| matches!(e, HttpEvent::SessionEnded { session, reason: CloseReason::TransportClosed { .. } } if *session == idle)));
    let r = h.post(Some(&idle_sid), &call(1, "x"));
    assert_eq!(h.status(r), 404);
    h.advance(Duration::from_secs(3600));
    assert!(h.server.session(busy).is_some(), "its GET stream is open");
    let now = h.now;
    h.server.handle_response_closed(now, get);
    h.advance(Duration::from_secs(60));
    assert!(
        h.server.session(busy).is_none(),
        "idle from the stream's end"
    );
}

#[test]
fn a_stateless_post_whose_client_left_ends_its_session_and_cancels_its_request() {
    let mut h = Http::with_config(HttpServerConfig::new(config()).with_mode(HttpMode::Stateless));
    let r = h.post_with(
        &[ACCEPT_BOTH, JSON, ("mcp-protocol-version", "2025-06-18")],
        &call(4, "echo"),
    );
    let [(key, _, _)] = h.host_requests()[..] else {
        panic!("{:?}", h.events)
    };
    h.events.clear();
    let now = h.now;
    h.server.handle_response_closed(now, r);
    h.drain();
    assert!(h.server.session(key).is_none(), "nothing can resume it");
    assert!(
        h.events.iter().any(|e| matches!(
            e,
            HttpEvent::Session { session, event: Event::Closed { .. } } if *session == key
        )),
        "the host hears the close that stops its work: {:?}",
        h.events
    );
    assert!(
        h.events
            .iter()
            .any(|e| matches!(e, HttpEvent::SessionEnded { session, .. } if *session == key))
    );
}

#[test]
fn a_stateful_post_whose_client_left_keeps_its_request() {
    let mut h = Http::new();
    let (sid, key) = h.initialize("2025-11-25", json!({}));
    let r = h.post(Some(&sid), &call(5, "echo"));
    assert_eq!(h.host_requests().len(), 1);
    h.events.clear();
    let now = h.now;
    h.server.handle_response_closed(now, r);
    h.drain();
    assert!(
        h.server.session(key).is_some(),
        "a disconnection is not a cancellation"
    );
    assert!(
        !h.events.iter().any(|e| matches!(
            e,
            HttpEvent::Session {
                event: Event::RequestCancelled { .. } | Event::Closed { .. },
                ..
            }
        )),
        "{:?}",
        h.events
    );
}
