//! Protocol version 2026-07-28 on the server session, one rule per test: `server/discover`,
//! the per-request envelope, the era's refusals, results and logging.

use serde_json::{Value, json};

use super::harness::{Client, config};
use crate::jsonrpc::to_raw;
use crate::server::{Event, ServerState, UsageError};
use crate::session::{Era, ProtocolVersion, RequestOptions};
use crate::time::Duration;
use crate::types::{ListRoots, LoggingLevel};

/// The envelope of a 2026 request, with `extra` members merged into `_meta`.
fn envelope(extra: Value) -> Value {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "modern-client", "version": "3"},
    });
    if let (Some(m), Value::Object(extra)) = (meta.as_object_mut(), extra) {
        m.extend(extra);
    }
    meta
}

fn modern_call(c: &mut Client, id: u64, meta_extra: Value) {
    c.request(
        id,
        "tools/call",
        json!({"name": "echo", "arguments": {}, "_meta": envelope(meta_extra)}),
    );
}

/// The host token and envelope of the one request event.
fn request_event(
    c: &mut Client,
) -> (
    crate::server::ClientRequestId,
    crate::server::RequestEnvelope,
) {
    let events = c.events();
    let found = events.into_iter().find_map(|e| match e {
        Event::Request { id, envelope, .. } => Some((id, envelope)),
        _ => None,
    });
    let (id, envelope) = found.expect("a request event");
    (id, *envelope.expect("a 2026 request carries its envelope"))
}

#[test]
fn discover_answers_versions_capabilities_and_server_info() {
    let mut c = Client::new();
    c.request(1, "server/discover", json!({"_meta": envelope(json!({}))}));
    let answer = c.one();
    let result = &answer["result"];
    assert_eq!(answer["id"], 1);
    assert_eq!(result["supportedVersions"], json!(["2026-07-28"]));
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["ttlMs"], 0);
    assert_eq!(result["cacheScope"], "public");
    assert_eq!(result["instructions"], "be kind");
    assert!(result["capabilities"]["tools"].is_object());
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "test-server"
    );
    // It reads as the client's own type.
    let typed: crate::types::v2026::DiscoverResult =
        serde_json::from_value(result.clone()).unwrap();
    assert_eq!(typed.server_info().unwrap().name, "test-server");
    // Discover does not pin the era: `initialize` still works afterwards.
    assert_eq!(c.server.state(), ServerState::AwaitingInitialize);
    let init = c.initialize("2025-11-25", json!({}));
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
}

#[test]
fn discover_ttl_is_configurable() {
    let mut c = Client::with_config(config().with_discover_ttl(Duration::from_secs(90)));
    c.request(1, "server/discover", json!({"_meta": envelope(json!({}))}));
    assert_eq!(c.one()["result"]["ttlMs"], 90_000);
}

#[test]
fn discover_without_an_envelope_gets_32602_and_an_unknown_version_32022() {
    let mut c = Client::new();
    c.request(1, "server/discover", json!({}));
    assert_eq!(c.one()["error"]["code"], -32602);
    c.request(
        2,
        "server/discover",
        json!({"_meta": envelope(json!({"io.modelcontextprotocol/protocolVersion": "1900-01-01"}))}),
    );
    let error = &c.one()["error"];
    assert_eq!(error["code"], -32022);
    assert_eq!(
        error["data"],
        json!({"supported": ["2026-07-28"], "requested": "1900-01-01"})
    );
}

#[test]
fn a_server_without_the_2026_era_answers_discover_32601() {
    let mut c = Client::with_config(config().with_versions(ProtocolVersion::INITIALIZE_ERA));
    c.request(1, "server/discover", json!({"_meta": envelope(json!({}))}));
    assert_eq!(c.one()["error"]["code"], -32601);
    // Nor is the envelope read: the request is refused as before `initialize`.
    modern_call(&mut c, 2, json!({}));
    assert_eq!(c.one()["error"]["code"], -32600);
    assert_eq!(c.server.state(), ServerState::AwaitingInitialize);
}

#[test]
fn a_server_without_the_initialize_era_refuses_initialize() {
    let mut c = Client::with_config(config().with_versions([ProtocolVersion::V2026_07_28]));
    let answer = c.initialize("2025-11-25", json!({}));
    assert_eq!(answer["error"]["code"], -32602);
    assert_eq!(answer["error"]["data"]["supported"], json!(["2026-07-28"]));
    assert_eq!(c.server.state(), ServerState::AwaitingInitialize);
}

#[test]
fn an_enveloped_request_reaches_the_host_with_its_envelope() {
    let mut c = Client::new();
    modern_call(
        &mut c,
        7,
        json!({"io.modelcontextprotocol/logLevel": "info", "progressToken": "p"}),
    );
    assert!(c.received().is_empty(), "the host answers, not the session");
    let (id, envelope) = request_event(&mut c);
    assert_eq!(envelope.version, ProtocolVersion::V2026_07_28);
    assert_eq!(envelope.client_info.unwrap().name, "modern-client");
    assert!(envelope.capabilities.elicitation.is_some());
    assert_eq!(envelope.log_level, Some(LoggingLevel::Info));
    assert_eq!(c.server.state(), ServerState::PerRequest);
    assert_eq!(c.server.era(), Some(Era::Discover));
    assert_eq!(
        c.server.protocol_version(),
        Some(ProtocolVersion::V2026_07_28)
    );
    // No handshake deadline any more: the client is speaking.
    assert_eq!(c.server.poll_timeout(), None);
    // The answer gets `resultType` and the server's info.
    let result = to_raw(&json!({"content": [], "_meta": {"mine": 1}})).unwrap();
    c.server.respond(c.now, id, result).unwrap();
    let answer = c.one();
    assert_eq!(answer["id"], 7);
    assert_eq!(answer["result"]["resultType"], "complete");
    assert_eq!(answer["result"]["_meta"]["mine"], 1);
    assert_eq!(
        answer["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["version"],
        "1.0"
    );
}

#[test]
fn a_result_type_the_host_set_is_kept() {
    let mut c = Client::new();
    modern_call(&mut c, 1, json!({}));
    let (id, _) = request_event(&mut c);
    let result = to_raw(&json!({"resultType": "input_required", "requestState": "s"})).unwrap();
    c.server.respond(c.now, id, result).unwrap();
    let answer = c.one();
    assert_eq!(answer["result"]["resultType"], "input_required");
    assert_eq!(answer["result"]["requestState"], "s");
}

#[test]
fn capabilities_are_per_request_never_inferred() {
    let mut c = Client::new();
    modern_call(&mut c, 1, json!({}));
    let (_, first) = request_event(&mut c);
    modern_call(
        &mut c,
        2,
        json!({"io.modelcontextprotocol/clientCapabilities": {}}),
    );
    let (_, second) = request_event(&mut c);
    assert!(first.capabilities.elicitation.is_some());
    assert!(second.capabilities.elicitation.is_none());
    assert!(c.server.client_capabilities().is_none());
}

#[test]
fn once_in_the_era_every_request_needs_the_envelope() {
    let mut c = Client::new();
    modern_call(&mut c, 1, json!({}));
    c.events();
    c.request(2, "tools/list", json!({}));
    let error = &c.one()["error"];
    assert_eq!(error["code"], -32602);
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("protocolVersion")
    );
}

#[test]
fn a_missing_capabilities_key_or_a_bad_version_is_refused_before_the_host() {
    let mut c = Client::new();
    c.request(
        1,
        "tools/list",
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}),
    );
    assert_eq!(c.one()["error"]["code"], -32602);
    c.request(
        2,
        "tools/list",
        json!({"_meta": envelope(json!({"io.modelcontextprotocol/protocolVersion": "2027-01-01"}))}),
    );
    assert_eq!(c.one()["error"]["code"], -32022);
    assert!(
        !c.events()
            .iter()
            .any(|e| matches!(e, Event::Request { .. }))
    );
    assert_eq!(c.server.state(), ServerState::AwaitingInitialize);
}

#[test]
fn the_era_refuses_initialize_and_the_removed_methods() {
    let mut c = Client::new();
    modern_call(&mut c, 1, json!({}));
    c.events();
    let init = c.initialize("2025-11-25", json!({}));
    assert_eq!(init["error"]["code"], -32600);
    for (id, method) in [
        (2, "ping"),
        (3, "logging/setLevel"),
        (4, "resources/subscribe"),
    ] {
        c.request(
            id,
            method,
            json!({"level": "info", "uri": "x:/", "_meta": envelope(json!({}))}),
        );
        let answer = c.one();
        assert_eq!(answer["error"]["code"], -32601, "{method}: {answer}");
    }
    // Before any era is chosen, a removed method with an envelope is refused and pins
    // nothing (`ping` alone is still answered: a legacy client may ping first).
    let mut c = Client::new();
    c.request(
        1,
        "logging/setLevel",
        json!({"level": "info", "_meta": envelope(json!({}))}),
    );
    assert_eq!(c.one()["error"]["code"], -32601);
    assert_eq!(c.server.state(), ServerState::AwaitingInitialize);
}

#[test]
fn the_initialize_era_ignores_the_envelope() {
    let mut c = Client::ready(json!({}));
    modern_call(&mut c, 1, json!({}));
    let events = c.events();
    let Some(Event::Request { envelope, .. }) = events.first() else {
        panic!("{events:?}")
    };
    assert!(envelope.is_none());
    assert_eq!(c.server.era(), Some(Era::Initialize));
}

#[test]
fn the_server_sends_no_requests_in_the_era() {
    let mut c = Client::new();
    modern_call(&mut c, 1, json!({}));
    c.events();
    let err = c
        .server
        .request::<ListRoots>(c.now, &None, RequestOptions::new())
        .unwrap_err();
    assert!(matches!(err, UsageError::NotInEra { .. }), "{err:?}");
}

#[test]
fn progress_and_cancellation_work_per_request() {
    let mut c = Client::new();
    modern_call(&mut c, 5, json!({"progressToken": 99}));
    let (id, _) = request_event(&mut c);
    c.server
        .notify_progress(c.now, id, 0.5, Some(1.0), None)
        .unwrap();
    let progress = c.one();
    assert_eq!(progress["method"], "notifications/progress");
    assert_eq!(progress["params"]["progressToken"], 99);
    c.notify("notifications/cancelled", json!({"requestId": 5}));
    assert!(
        c.events()
            .iter()
            .any(|e| matches!(e, Event::RequestCancelled { id: i, .. } if *i == id))
    );
    let late = to_raw(&json!({"content": []})).unwrap();
    assert_eq!(
        c.server.respond(c.now, id, late),
        Err(UsageError::NotOpen(id))
    );
}

#[test]
fn log_messages_go_only_to_requests_that_asked_at_their_level() {
    let mut c = Client::new();
    let data = to_raw(&json!("hello")).unwrap();
    modern_call(&mut c, 1, json!({}));
    let (quiet, _) = request_event(&mut c);
    modern_call(
        &mut c,
        2,
        json!({"io.modelcontextprotocol/logLevel": "warning"}),
    );
    let (loud, _) = request_event(&mut c);
    let now = c.now;
    // No level: nothing for that request, and nothing session-wide in this era.
    assert_eq!(
        c.server
            .log_for(now, quiet, LoggingLevel::Error, None, &data),
        Ok(false)
    );
    assert_eq!(
        c.server.log(now, LoggingLevel::Error, None, &data),
        Ok(false)
    );
    assert_eq!(
        c.server.log_for(now, loud, LoggingLevel::Info, None, &data),
        Ok(false)
    );
    assert_eq!(
        c.server
            .log_for(now, loud, LoggingLevel::Error, None, &data),
        Ok(true)
    );
    let sent = c.one();
    assert_eq!(sent["method"], "notifications/message");
    assert_eq!(sent["params"]["level"], "error");
}

#[test]
fn cacheable_results_get_cache_hints_unless_the_host_set_them() {
    let mut c = Client::new();
    c.request(1, "tools/list", json!({"_meta": envelope(json!({}))}));
    let (id, _) = request_event(&mut c);
    c.server
        .respond(c.now, id, to_raw(&json!({"tools": []})).unwrap())
        .unwrap();
    let result = &c.one()["result"];
    assert_eq!(result["ttlMs"], 0);
    assert_eq!(result["cacheScope"], "private");
    assert_eq!(result["resultType"], "complete");
    // The host's own hints are kept.
    c.request(
        2,
        "resources/read",
        json!({"uri": "x:/", "_meta": envelope(json!({}))}),
    );
    let (id, _) = request_event(&mut c);
    let own = json!({"contents": [], "ttlMs": 5000, "cacheScope": "public"});
    c.server.respond(c.now, id, to_raw(&own).unwrap()).unwrap();
    let result = &c.one()["result"];
    assert_eq!(result["ttlMs"], 5000);
    assert_eq!(result["cacheScope"], "public");
    // A tool call is not cacheable.
    modern_call(&mut c, 3, json!({}));
    let (id, _) = request_event(&mut c);
    c.server
        .respond(c.now, id, to_raw(&json!({"content": []})).unwrap())
        .unwrap();
    let result = &c.one()["result"];
    assert!(result.get("ttlMs").is_none(), "{result}");
}
