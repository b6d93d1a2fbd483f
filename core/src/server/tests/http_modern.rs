//! Protocol 2026-07-28 on the HTTP server, one rule per test: each request its own POST and
//! session, the headers checked against the body, the statuses of the era's errors, no GET or
//! DELETE, and the stream's close as the cancellation.

use serde_json::{Value, json};

use super::http_harness::{ACCEPT_BOTH, Http, JSON};
use crate::server::Event;
use crate::server::http::{HttpEvent, Refusal, SessionKey};

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "h", "version": "1"},
    })
}

fn post(h: &mut Http, extra: &[(&str, &str)], body: &Value) -> crate::server::http::ResponseId {
    let mut headers = vec![ACCEPT_BOTH, JSON, ("mcp-protocol-version", "2026-07-28")];
    headers.extend_from_slice(extra);
    h.send("POST", &headers, body.to_string().as_bytes())
}

fn call(id: u64, name: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": name, "arguments": {}, "_meta": meta()}})
}

#[test]
fn a_request_is_served_by_a_session_of_its_own_that_ends_with_its_answer() {
    let mut h = Http::new();
    let r = post(
        &mut h,
        &[
            ("mcp-method", "tools/call"),
            ("mcp-name", "echo"),
            ("mcp-session-id", "ignored"),
        ],
        &call(3, "echo"),
    );
    let requests = h.host_requests();
    let [(key, id, method)] = requests.as_slice() else {
        panic!("{requests:?}")
    };
    assert_eq!(method, "tools/call");
    let now = h.now;
    h.server
        .session_mut(*key)
        .unwrap()
        .respond(
            now,
            *id,
            crate::jsonrpc::to_raw(&json!({"content": []})).unwrap(),
        )
        .unwrap();
    h.drain();
    assert_eq!(h.status(r), 200);
    assert!(h.seen(r).header("mcp-session-id").is_none());
    let body = h.seen(r).json();
    assert_eq!(body["id"], 3);
    assert_eq!(body["result"]["resultType"], "complete");
    assert!(
        h.events
            .iter()
            .any(|e| matches!(e, HttpEvent::SessionEnded { session, .. } if session == key))
    );
    assert_eq!(h.server.sessions().count(), 0);
}

#[test]
fn discover_is_answered_at_once() {
    let mut h = Http::new();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta()}});
    let r = post(&mut h, &[("mcp-method", "server/discover")], &body);
    assert_eq!(h.status(r), 200);
    let answer = h.seen(r).json();
    assert_eq!(answer["result"]["supportedVersions"], json!(["2026-07-28"]));
    assert_eq!(h.server.sessions().count(), 0, "the session ended with it");
}

#[test]
fn a_header_that_does_not_match_the_body_is_400_with_32020() {
    let mut h = Http::new();
    let r = post(
        &mut h,
        &[("mcp-method", "tools/call"), ("mcp-name", "other")],
        &call(9, "echo"),
    );
    assert_eq!(h.status(r), 400);
    let body = h.seen(r).json();
    assert_eq!(body["error"]["code"], -32020);
    assert_eq!(body["id"], 9);
    assert!(h.host_requests().is_empty());
    assert!(h.events.iter().any(|e| matches!(
        e,
        HttpEvent::Refused {
            refusal: Refusal::Rejected(_),
            ..
        }
    )));
}

#[test]
fn the_era_errors_get_their_statuses() {
    let mut h = Http::new();
    // No envelope: 400 + -32602.
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let r = post(&mut h, &[("mcp-method", "tools/list")], &body);
    assert_eq!(
        (h.status(r), h.seen(r).json()["error"]["code"].clone()),
        (400, json!(-32602))
    );
    // A removed method: 404 + -32601.
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {"_meta": meta()}});
    let r = post(&mut h, &[("mcp-method", "ping")], &body);
    assert_eq!(
        (h.status(r), h.seen(r).json()["error"]["code"].clone()),
        (404, json!(-32601))
    );
    // A version the server does not speak in the header: 400 before anything else.
    let r = h.post_with(
        &[ACCEPT_BOTH, JSON, ("mcp-protocol-version", "2099-01-01")],
        &call(3, "echo"),
    );
    assert_eq!(h.status(r), 400);
}

#[test]
fn get_and_delete_are_405_in_the_era() {
    let mut h = Http::new();
    for method in ["GET", "DELETE"] {
        let r = h.send(
            method,
            &[ACCEPT_BOTH, ("mcp-protocol-version", "2026-07-28")],
            b"",
        );
        assert_eq!(h.status(r), 405, "{method}");
    }
}

#[test]
fn closing_the_stream_cancels_the_request() {
    let mut h = Http::new();
    let r = post(
        &mut h,
        &[("mcp-method", "tools/call"), ("mcp-name", "slow")],
        &call(4, "slow"),
    );
    let requests = h.host_requests();
    let [(key, id, _)] = requests.as_slice() else {
        panic!("{requests:?}")
    };
    let now = h.now;
    h.server.handle_response_closed(now, r);
    h.drain();
    assert!(
        h.events
            .iter()
            .any(|e| matches!(e, HttpEvent::SessionEnded { session, .. } if session == key))
    );
    assert!(h.server.session_mut(*key).is_none());
    let _ = id;
    assert!(h.events.iter().any(|e| matches!(
        e,
        HttpEvent::Session {
            event: Event::Closed { .. },
            ..
        }
    )));
}

#[test]
fn a_server_without_the_era_refuses_its_header() {
    use crate::server::http::HttpServerConfig;
    use crate::session::ProtocolVersion;
    let config = super::harness::config().with_versions(ProtocolVersion::INITIALIZE_ERA);
    let mut h = Http::with_config(HttpServerConfig::new(config));
    let r = post(
        &mut h,
        &[("mcp-method", "tools/call"), ("mcp-name", "echo")],
        &call(1, "echo"),
    );
    assert_eq!(h.status(r), 400);
    assert!(h.host_requests().is_empty());
}

/// A `subscriptions/listen` POST; returns its response and the session serving it.
fn open_listen(h: &mut Http, id: u64) -> (crate::server::http::ResponseId, SessionKey) {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
        "params": {"_meta": meta(), "notifications": {"toolsListChanged": true}}});
    let r = post(h, &[("mcp-method", "subscriptions/listen")], &body);
    let key = h
        .events
        .iter()
        .find_map(|e| match e {
            HttpEvent::Session {
                session,
                event: Event::ListenOpened { .. },
            } => Some(*session),
            _ => None,
        })
        .expect("the listen opened");
    h.events.clear();
    (r, key)
}

#[test]
fn a_listen_streams_its_acknowledgement_and_notifications_on_its_post() {
    let mut h = Http::new();
    let (r, key) = open_listen(&mut h, 6);
    assert_eq!(h.status(r), 200);
    assert_eq!(h.seen(r).header("content-type"), Some("text/event-stream"));
    assert!(!h.seen(r).ended, "the listen stays open");
    let now = h.now;
    h.server
        .session_mut(key)
        .unwrap()
        .notify_list_changed(now, crate::server::ListChanged::Tools)
        .unwrap();
    h.drain();
    let events = h.seen(r).events();
    let methods: Vec<&Value> = events.iter().map(|(_, m)| &m["method"]).collect();
    assert_eq!(
        methods,
        [
            &json!("notifications/subscriptions/acknowledged"),
            &json!("notifications/tools/list_changed")
        ]
    );
    assert!(
        events.iter().all(
            |(_, m)| m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == json!(6)
        )
    );
    // The host ends it: the complete result ends the stream, and the session with it.
    let token = h.server.session(key).unwrap().listens().next().unwrap().0;
    h.server
        .session_mut(key)
        .unwrap()
        .close_listen(now, token)
        .unwrap();
    h.drain();
    let events = h.seen(r).events();
    let (_, last) = events.last().unwrap();
    assert_eq!(last["id"], 6);
    assert_eq!(last["result"]["resultType"], "complete");
    assert!(h.seen(r).ended);
    assert!(h.server.session(key).is_none());
}

#[test]
fn closing_a_listen_stream_ends_the_listen() {
    let mut h = Http::new();
    let (r, key) = open_listen(&mut h, 2);
    let now = h.now;
    h.server.handle_response_closed(now, r);
    h.drain();
    assert!(h.events.iter().any(|e| matches!(
        e,
        HttpEvent::Session {
            event: Event::ListenClosed {
                end: crate::server::ListenEnd::Cancelled { reason: None },
                ..
            },
            ..
        }
    )));
    assert!(h.server.session(key).is_none());
}

#[test]
fn a_listen_from_a_client_that_does_not_accept_sse_is_406() {
    let mut h = Http::new();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
        "params": {"_meta": meta(), "notifications": {"toolsListChanged": true}}});
    let r = h.send(
        "POST",
        &[
            ("accept", "application/json"),
            JSON,
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "subscriptions/listen"),
        ],
        body.to_string().as_bytes(),
    );
    assert_eq!(h.status(r), 406);
    assert_eq!(h.server.sessions().count(), 0);
}

#[test]
fn closing_a_listens_session_answers_it_complete_first() {
    // A server shutting down closes its sessions: each listen gets its clean end.
    let mut h = Http::new();
    let (r, key) = open_listen(&mut h, 5);
    let now = h.now;
    h.server.close_session(now, key);
    h.drain();
    let events = h.seen(r).events();
    let (_, last) = events.last().expect("events");
    assert_eq!(last["id"], 5);
    assert_eq!(last["result"]["resultType"], "complete");
    assert_eq!(
        last["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        5
    );
    assert!(h.seen(r).ended);
    assert!(h.events.iter().any(|e| matches!(
        e,
        HttpEvent::Session {
            event: Event::ListenClosed {
                end: crate::server::ListenEnd::SessionClosed,
                ..
            },
            ..
        }
    )));
}
