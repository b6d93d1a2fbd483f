//! The deferred `initialize`: the host answers it, under the session's rules.

use serde_json::{Value, json};

use super::harness::{Client, config};
use super::http_harness::Http;
use crate::jsonrpc::ErrorObject;
use crate::server::http::{HttpEvent, HttpMode, HttpServerConfig};
use crate::server::{Event, InitializeAnswer, ServerState, UsageError, answered_version};
use crate::session::{CloseReason, ProtocolVersion};
use crate::time::Duration;
use crate::types::{Implementation, InitializeParams, PromptsCapability, ServerCapabilities};

fn deferred() -> Client {
    Client::with_config(config().with_deferred_initialize(true))
}

fn hello(c: &mut Client, version: &str) {
    c.request(
        7,
        "initialize",
        json!({"protocolVersion": version, "capabilities": {"roots": {}},
               "clientInfo": {"name": "host-a", "version": "3.1"}}),
    );
}

/// The one `InitializeRequested` among the events.
fn requested(events: Vec<Event>) -> InitializeParams {
    let mut found: Vec<InitializeParams> = events
        .into_iter()
        .filter_map(|e| match e {
            Event::InitializeRequested { params } => Some(*params),
            _ => None,
        })
        .collect();
    assert_eq!(found.len(), 1, "one InitializeRequested");
    found.remove(0)
}

fn upstream_answer() -> InitializeAnswer {
    InitializeAnswer::new(Implementation::new("upstream", "9.9"))
        .with_capabilities(ServerCapabilities {
            prompts: Some(PromptsCapability::default()),
            ..ServerCapabilities::default()
        })
        .with_instructions(Some("from upstream".into()))
}

#[test]
fn initialize_is_held_for_the_host_with_the_clients_params() {
    let mut c = deferred();
    hello(&mut c, "2025-03-26");
    assert!(c.received().is_empty(), "nothing answered before the host");
    let params = requested(c.events());
    assert_eq!(params.protocol_version, "2025-03-26");
    assert_eq!(params.client_info.name, "host-a");
    assert_eq!(params.client_info.version, "3.1");
    assert!(params.capabilities.roots.is_some());
    assert!(c.server.initialize_pending());
    assert_eq!(c.server.state(), ServerState::AwaitingInitialize);
    assert_eq!(c.server.protocol_version(), None);
}

#[test]
fn the_hosts_answer_is_sent_and_becomes_the_sessions_identity() {
    let mut c = deferred();
    hello(&mut c, "2025-03-26");
    c.events();
    let version = c
        .server
        .accept_initialize(c.now, upstream_answer())
        .unwrap();
    assert_eq!(version, ProtocolVersion::V2025_03_26);
    let answer = c.one();
    assert_eq!(answer["id"], 7);
    assert_eq!(answer["result"]["protocolVersion"], "2025-03-26");
    assert_eq!(answer["result"]["serverInfo"]["name"], "upstream");
    assert_eq!(answer["result"]["instructions"], "from upstream");
    assert_eq!(answer["result"]["capabilities"], json!({"prompts": {}}));
    let events = c.events();
    assert!(matches!(
        events.as_slice(),
        [Event::InitializeAnswered {
            version: ProtocolVersion::V2025_03_26
        }]
    ));
    assert_eq!(
        c.server.client_info().map(|i| i.name.as_str()),
        Some("host-a")
    );
    assert_eq!(c.server.config().server_info.name, "upstream");
    // The answered capabilities gate the session: prompts now flow, tools (only in the
    // configuration) are method-not-found.
    c.notify("notifications/initialized", json!({}));
    c.request(8, "prompts/list", json!({}));
    c.request(9, "tools/list", json!({}));
    let answers = c.received();
    assert_eq!(answers.len(), 1, "{answers:?}");
    assert_eq!(answers[0]["id"], 9);
    assert_eq!(answers[0]["error"]["code"], -32601);
    assert!(
        c.events()
            .iter()
            .any(|e| matches!(e, Event::Request { method, .. } if method == "prompts/list"))
    );
}

#[test]
fn without_a_version_the_session_negotiates() {
    let mut c = deferred();
    hello(&mut c, "2099-01-01");
    c.events();
    let version = c
        .server
        .accept_initialize(c.now, InitializeAnswer::from_config(&config()))
        .unwrap();
    assert_eq!(version, ProtocolVersion::LATEST_INITIALIZE);
    assert_eq!(
        c.one()["result"]["protocolVersion"],
        ProtocolVersion::LATEST_INITIALIZE.as_str()
    );
}

#[test]
fn a_version_the_client_cannot_take_is_refused_and_the_initialize_still_waits() {
    let mut c = deferred();
    hello(&mut c, "2025-03-26");
    c.events();
    let newer = upstream_answer().with_protocol_version(ProtocolVersion::V2025_11_25);
    assert_eq!(
        c.server.accept_initialize(c.now, newer),
        Err(UsageError::VersionNotOffered {
            answered: ProtocolVersion::V2025_11_25,
            requested: "2025-03-26".into(),
        })
    );
    assert!(c.received().is_empty());
    assert!(c.server.initialize_pending());
    // An older version is the spec's "another version it supports".
    let older = upstream_answer().with_protocol_version(ProtocolVersion::V2024_11_05);
    assert_eq!(
        c.server.accept_initialize(c.now, older),
        Ok(ProtocolVersion::V2024_11_05)
    );
    assert_eq!(c.one()["result"]["protocolVersion"], "2024-11-05");
}

#[test]
fn answered_version_rules() {
    assert_eq!(
        answered_version("2025-06-18", None),
        Ok(ProtocolVersion::V2025_06_18)
    );
    assert_eq!(
        answered_version("2025-06-18", Some(ProtocolVersion::V2025_06_18)),
        Ok(ProtocolVersion::V2025_06_18)
    );
    assert!(answered_version("2025-06-18", Some(ProtocolVersion::V2025_11_25)).is_err());
    // A client asking for a version unknown here can take any version spoken here.
    assert_eq!(
        answered_version("2099-01-01", Some(ProtocolVersion::V2025_06_18)),
        Ok(ProtocolVersion::V2025_06_18)
    );
    // A version of the discover era is not spoken by this session.
    let unspoken = ProtocolVersion::parse("2026-07-28");
    if let Some(v) = unspoken.filter(|v| v.era() != crate::session::Era::Initialize) {
        assert!(answered_version("2099-01-01", Some(v)).is_err());
    }
}

#[test]
fn requests_before_the_answer_are_refused_and_ping_answered() {
    let mut c = deferred();
    hello(&mut c, "2025-11-25");
    c.events();
    c.request(8, "tools/list", json!({}));
    c.request(9, "ping", json!({}));
    let answers = c.received();
    assert_eq!(answers.len(), 2, "{answers:?}");
    assert_eq!(answers[0]["id"], 8);
    assert_eq!(answers[0]["error"]["code"], -32600);
    assert_eq!(answers[1], json!({"jsonrpc": "2.0", "id": 9, "result": {}}));
}

#[test]
fn a_second_initialize_while_held_is_refused() {
    let mut c = deferred();
    hello(&mut c, "2025-11-25");
    c.events();
    c.request(
        8,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "again", "version": "0"}}),
    );
    let answer = c.one();
    assert_eq!(answer["id"], 8);
    assert_eq!(answer["error"]["code"], -32600);
    assert!(
        !c.events()
            .iter()
            .any(|e| matches!(e, Event::InitializeRequested { .. }))
    );
    assert!(c.server.initialize_pending());
}

#[test]
fn the_answer_is_given_exactly_once() {
    let mut c = deferred();
    assert_eq!(
        c.server.accept_initialize(c.now, upstream_answer()),
        Err(UsageError::NoInitializePending),
        "no initialize came yet"
    );
    hello(&mut c, "2025-11-25");
    c.events();
    c.server
        .accept_initialize(c.now, upstream_answer())
        .unwrap();
    assert_eq!(
        c.server.accept_initialize(c.now, upstream_answer()),
        Err(UsageError::NoInitializePending)
    );
    assert_eq!(
        c.server
            .refuse_initialize(c.now, ErrorObject::new(-32603, "late")),
        Err(UsageError::NoInitializePending)
    );
    assert_eq!(c.received().len(), 1);
}

#[test]
fn a_refusal_answers_the_error_and_the_client_may_try_again() {
    let mut c = deferred();
    hello(&mut c, "2025-11-25");
    c.events();
    c.server
        .refuse_initialize(c.now, ErrorObject::new(-32603, "upstream failed"))
        .unwrap();
    let answer = c.one();
    assert_eq!(answer["id"], 7);
    assert_eq!(answer["error"]["message"], "upstream failed");
    assert!(!c.server.initialize_pending());
    assert_eq!(c.server.state(), ServerState::AwaitingInitialize);
    hello(&mut c, "2025-11-25");
    let params = requested(c.events());
    assert_eq!(params.client_info.name, "host-a");
}

#[test]
fn a_host_that_never_answers_is_bounded_by_the_handshake_deadline() {
    let mut c = Client::with_config(
        config()
            .with_deferred_initialize(true)
            .with_handshake_timeout(Some(Duration::from_secs(5))),
    );
    hello(&mut c, "2025-11-25");
    c.events();
    assert!(
        c.server.poll_timeout().is_some(),
        "the deadline stays armed"
    );
    c.advance(Duration::from_secs(5));
    let answer = c.one();
    assert_eq!(answer["id"], 7);
    assert_eq!(answer["error"]["code"], -32603);
    assert!(c.server.is_closed());
    let events = c.events();
    assert!(matches!(
        events.last(),
        Some(Event::Closed {
            reason: CloseReason::InitializeNotAnswered { .. }
        })
    ));
    assert_eq!(
        c.server.accept_initialize(c.now, upstream_answer()),
        Err(UsageError::Closed)
    );
}

#[test]
fn without_the_option_nothing_changes() {
    let mut c = Client::new();
    let answer = c.initialize("2025-06-18", json!({}));
    assert_eq!(answer["result"]["serverInfo"]["name"], "test-server");
    assert!(
        !c.events()
            .iter()
            .any(|e| matches!(e, Event::InitializeRequested { .. }))
    );
    assert_eq!(
        c.server.accept_initialize(c.now, upstream_answer()),
        Err(UsageError::NoInitializePending)
    );
}

// ---- over HTTP -----------------------------------------------------------------------------

fn http_deferred(mode: HttpMode) -> Http {
    Http::with_config(
        HttpServerConfig::new(config())
            .with_mode(mode)
            .with_deferred_initialize(true),
    )
}

fn initialize_body(version: &str, name: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {},
        "clientInfo": {"name": name, "version": "1"}}})
}

/// The session key and client params of each `InitializeRequested` so far.
fn http_requested(h: &mut Http) -> Vec<(crate::server::http::SessionKey, InitializeParams)> {
    let mut out = Vec::new();
    h.events.retain(|e| match e {
        HttpEvent::Session {
            session,
            event: Event::InitializeRequested { params },
        } => {
            out.push((*session, (**params).clone()));
            false
        }
        _ => true,
    });
    out
}

#[test]
fn http_the_initialize_post_is_answered_when_the_host_answers() {
    let mut h = http_deferred(HttpMode::Stateful);
    let a = h.post(None, &initialize_body("2025-03-26", "host-a"));
    let b = h.post(None, &initialize_body("2025-11-25", "host-b"));
    assert_eq!(h.seen(a).status, None, "no head before the host answers");
    assert_eq!(h.seen(b).status, None);
    let held = http_requested(&mut h);
    assert_eq!(held.len(), 2);
    assert_eq!(held[0].1.client_info.name, "host-a");
    assert_eq!(held[1].1.client_info.name, "host-b");
    // Answered in the other order, each with its own identity.
    for (key, params) in held.iter().rev() {
        let answer = InitializeAnswer::new(Implementation::new(
            format!("upstream-of-{}", params.client_info.name),
            "1",
        ));
        let now = h.now;
        h.server
            .session_mut(*key)
            .unwrap()
            .accept_initialize(now, answer)
            .unwrap();
        h.drain();
    }
    for (r, version, name) in [
        (a, "2025-03-26", "upstream-of-host-a"),
        (b, "2025-11-25", "upstream-of-host-b"),
    ] {
        assert_eq!(h.status(r), 200);
        assert!(h.seen(r).ended);
        assert!(
            h.seen(r).header("mcp-session-id").is_some(),
            "the session id comes with the answer"
        );
        let body = h.seen(r).json();
        assert_eq!(body["result"]["protocolVersion"], version);
        assert_eq!(body["result"]["serverInfo"]["name"], name);
    }
    assert_ne!(
        h.seen(a).header("mcp-session-id"),
        h.seen(b).header("mcp-session-id")
    );
    // The session works as any other from now on.
    let id = h.seen(a).header("mcp-session-id").unwrap().to_owned();
    let n = h.post(
        Some(&id),
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    assert_eq!(h.status(n), 202);
}

#[test]
fn http_a_refusal_answers_the_post_with_the_error() {
    let mut h = http_deferred(HttpMode::Stateful);
    let a = h.post(None, &initialize_body("2025-11-25", "host-a"));
    let (key, _) = http_requested(&mut h).remove(0);
    let now = h.now;
    h.server
        .session_mut(key)
        .unwrap()
        .refuse_initialize(now, ErrorObject::new(-32603, "the upstream did not start"))
        .unwrap();
    h.server.close_session(now, key);
    h.drain();
    assert_eq!(h.status(a), 200);
    assert!(h.seen(a).ended);
    assert_eq!(
        h.seen(a).json()["error"]["message"],
        "the upstream did not start"
    );
    assert_eq!(
        h.seen(a).header("mcp-session-id"),
        None,
        "a refused initialize hands out no session id"
    );
    assert!(
        h.events
            .iter()
            .any(|e| matches!(e, HttpEvent::SessionEnded { .. }))
    );
}

#[test]
fn http_a_refusal_alone_hands_out_no_id_and_ends_the_unreachable_session() {
    let mut h = http_deferred(HttpMode::Stateful);
    let a = h.post(None, &initialize_body("2025-11-25", "host-a"));
    let (key, _) = http_requested(&mut h).remove(0);
    let now = h.now;
    // The host refuses and does not close: the HTTP server must not keep the session.
    h.server
        .session_mut(key)
        .unwrap()
        .refuse_initialize(now, ErrorObject::new(-32603, "the upstream did not start"))
        .unwrap();
    h.drain();
    assert_eq!(h.status(a), 200);
    assert!(h.seen(a).ended);
    assert_eq!(h.seen(a).json()["error"]["code"], -32603);
    assert_eq!(h.seen(a).header("mcp-session-id"), None);
    assert!(h.server.session(key).is_none(), "the session was ended");
    assert!(
        h.events
            .iter()
            .any(|e| matches!(e, HttpEvent::SessionEnded { session, .. } if *session == key))
    );
    // A later initialize opens a session of its own, with an id this time when accepted.
    let b = h.post(None, &initialize_body("2025-11-25", "host-a"));
    let (key, _) = http_requested(&mut h).remove(0);
    let now = h.now;
    h.server
        .session_mut(key)
        .unwrap()
        .accept_initialize(now, InitializeAnswer::new(Implementation::new("up", "1")))
        .unwrap();
    h.drain();
    assert_eq!(h.status(b), 200);
    assert!(h.seen(b).header("mcp-session-id").is_some());
}

#[test]
fn http_a_host_that_never_answers_gets_the_post_an_error_and_the_session_ends() {
    let mut h = Http::with_config(HttpServerConfig::new(
        config()
            .with_deferred_initialize(true)
            .with_handshake_timeout(Some(Duration::from_secs(5))),
    ));
    let a = h.post(None, &initialize_body("2025-11-25", "host-a"));
    assert_eq!(http_requested(&mut h).len(), 1);
    h.advance(Duration::from_secs(5));
    assert_eq!(h.status(a), 200);
    assert!(h.seen(a).ended);
    assert_eq!(h.seen(a).json()["error"]["code"], -32603);
    assert!(h.events.iter().any(|e| matches!(
        e,
        HttpEvent::SessionEnded {
            reason: CloseReason::InitializeNotAnswered { .. },
            ..
        }
    )));
    assert_eq!(h.server.sessions().count(), 0);
}

#[test]
fn http_stateless_implied_handshake_needs_no_host_answer() {
    let mut h = http_deferred(HttpMode::Stateless);
    let r = h.send(
        "POST",
        &[
            super::http_harness::ACCEPT_BOTH,
            super::http_harness::JSON,
            ("mcp-protocol-version", "2025-06-18"),
        ],
        br#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#,
    );
    assert!(http_requested(&mut h).is_empty());
    let (key, id, method) = h.host_requests().remove(0);
    assert_eq!(method, "tools/list");
    let now = h.now;
    h.server
        .session_mut(key)
        .unwrap()
        .respond(
            now,
            id,
            crate::jsonrpc::to_raw(&json!({"tools": []})).unwrap(),
        )
        .unwrap();
    h.drain();
    assert_eq!(h.status(r), 200);
    assert_eq!(h.seen(r).json()["result"], json!({"tools": []}));
}

#[test]
fn http_a_client_that_leaves_before_its_initialize_is_answered_frees_its_session() {
    let mut h = http_deferred(HttpMode::Stateful);
    let left = h.post(None, &initialize_body("2025-11-25", "gone"));
    let stays = h.post(None, &initialize_body("2025-11-25", "stays"));
    assert_eq!(http_requested(&mut h).len(), 2);
    assert_eq!(h.server.sessions().count(), 2);
    // Its connection drops while the host is still preparing the answer: no one ever learns
    // that session's id, so nothing could use it or DELETE it.
    let now = h.now;
    h.server.handle_response_closed(now, left);
    h.drain();
    assert_eq!(h.server.sessions().count(), 1, "{:?}", h.events);
    assert!(
        h.events
            .iter()
            .any(|e| matches!(e, HttpEvent::SessionEnded { .. })),
        "{:?}",
        h.events
    );
    // The other one, still waiting for its answer, is kept.
    assert_eq!(h.seen(stays).status, None);
}
