//! The era policy over a scripted server: discover handshake, envelope, Auto fallbacks.

use serde_json::{Value, json};

use super::*;

const DISCOVER_RESULT: &str = include_str!(
    "../../../tests/data/2026-07-28/DiscoverResult/server-capabilities-discovery.json"
);
const UNSUPPORTED: &str = include_str!(
    "../../../tests/data/2026-07-28/UnsupportedProtocolVersionError/unsupported-version.json"
);
const MISMATCH: &str =
    include_str!("../../../tests/data/2026-07-28/HeaderMismatchError/header-mismatch.json");

pub(super) fn auto() -> SessionConfig {
    config().with_era_policy(EraPolicy::Auto {
        probe_timeout: Duration::from_secs(5),
    })
}

pub(super) fn discover_result() -> Value {
    serde_json::from_str(DISCOVER_RESULT).unwrap()
}

impl Harness {
    pub(super) fn answer_discover(&mut self, result: Value) {
        let (_, sent) = self.sent.last().unwrap().clone();
        assert_eq!(sent["method"], "server/discover");
        self.server(json!({"jsonrpc": "2.0", "id": sent["id"], "result": result}));
    }

    pub(super) fn answer_discover_error(&mut self, error: Value) {
        let (_, sent) = self.sent.last().unwrap().clone();
        assert_eq!(sent["method"], "server/discover");
        self.server(json!({"jsonrpc": "2.0", "id": sent["id"], "error": error}));
    }

    /// A session that finished the discover handshake; sent messages and events cleared.
    pub(super) fn modern(config: SessionConfig) -> Self {
        let mut h = Harness::new(config);
        h.answer_discover(discover_result());
        assert!(
            matches!(
                h.events.last(),
                Some(Event::Ready {
                    era: Era::Discover,
                    ..
                })
            ),
            "{:?}",
            h.events
        );
        h.sent.clear();
        h.events.clear();
        h
    }

    fn fallbacks(&self) -> usize {
        self.diagnostics()
            .iter()
            .filter(|d| matches!(d, Diagnostic::EraFallback { .. }))
            .count()
    }
}

fn error_of(example: &str) -> Value {
    serde_json::from_str::<Value>(example).unwrap()["error"].clone()
}

#[test]
fn the_discover_request_carries_only_the_envelope() {
    let h = Harness::new(auto());
    assert_eq!(h.sent.len(), 1);
    let (out, msg) = &h.sent[0];
    assert_eq!(out.method.as_deref(), Some("server/discover"));
    assert_eq!(out.request, None);
    assert_eq!(
        msg["params"],
        json!({"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "test-client", "version": "1.0.0"}
        }})
    );
}

#[test]
fn a_valid_discover_result_makes_the_session_ready_in_the_discover_era() {
    let mut h = Harness::new(auto());
    let early = h.send("tools/list", json!({}), RequestOptions::new());
    assert_eq!(h.sent.len(), 1, "requests wait for the handshake");
    h.answer_discover(discover_result());
    assert!(matches!(
        h.events[0],
        Event::Ready {
            era: Era::Discover,
            version: ProtocolVersion::V2026_07_28
        }
    ));
    assert_eq!(h.session.era(), Some(Era::Discover));
    assert_eq!(h.session.server_info().unwrap().name, "ExampleServer");
    assert!(h.session.server_capabilities().unwrap().tools.is_some());
    assert!(h.session.instructions().unwrap().contains("weather"));
    // No `notifications/initialized`; the waiting request goes out with the envelope.
    assert_eq!(h.sent_methods(), ["server/discover", "tools/list"]);
    let meta = &h.sent[1].1["params"]["_meta"];
    assert_eq!(
        meta["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert_eq!(
        meta["io.modelcontextprotocol/clientInfo"]["name"],
        "test-client"
    );
    assert_eq!(
        meta["io.modelcontextprotocol/clientCapabilities"],
        json!({})
    );
    assert!(meta.get("io.modelcontextprotocol/logLevel").is_none());
    h.respond_ok(early, json!({"resultType": "complete", "tools": []}));
    assert!(h.completions(early)[0].is_ok());
}

#[test]
fn the_envelope_merges_with_the_callers_meta_and_progress() {
    let mut cfg = auto();
    cfg.log_level = Some(crate::types::LoggingLevel::Warning);
    let mut h = Harness::modern(cfg);
    let call = h.send(
        "tools/call",
        json!({"name": "t", "arguments": {"a": 1},
               "_meta": {"trace": "x", "io.modelcontextprotocol/protocolVersion": "1900-01-01"}}),
        RequestOptions::new().progress(),
    );
    let p = &h.sent[0].1["params"];
    assert_eq!(p["name"], "t");
    assert_eq!(p["arguments"], json!({"a": 1}));
    let meta = &p["_meta"];
    assert_eq!(meta["trace"], "x");
    assert_eq!(meta["progressToken"], json!(call.get()));
    assert_eq!(
        meta["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert_eq!(meta["io.modelcontextprotocol/logLevel"], "warning");
    // A request without params gets params carrying the envelope.
    h.send_raw("prompts/list", None);
    assert!(h.sent[1].1["params"]["_meta"]["io.modelcontextprotocol/clientInfo"].is_object());
}

#[test]
fn methods_the_era_lacks_are_usage_errors_or_fail_when_they_waited() {
    let mut h = Harness::new(auto());
    let ping = h.send("ping", json!({}), RequestOptions::new());
    h.answer_discover(discover_result());
    assert!(matches!(
        h.completions(ping)[..],
        [Err(RequestError::NotInEra { .. })]
    ));
    for method in [
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
    ] {
        let err = h
            .session
            .send_request(h.now, method, None, RequestOptions::new())
            .unwrap_err();
        assert!(
            matches!(
                err,
                UsageError::NotInEra {
                    era: Era::Discover,
                    ..
                }
            ),
            "{method}"
        );
    }
    let err = h
        .session
        .notify(h.now, "notifications/roots/list_changed", None)
        .unwrap_err();
    assert!(matches!(err, UsageError::NotInEra { .. }));
    let err = h
        .session
        .send_request(h.now, "server/discover", None, RequestOptions::new())
        .unwrap_err();
    assert!(matches!(err, UsageError::ReservedMethod(_)));
}

#[test]
fn cancel_still_sends_notifications_cancelled() {
    let mut h = Harness::modern(auto());
    let call = h.send("tools/call", json!({"name": "slow"}), RequestOptions::new());
    h.session.cancel(h.now, call, Some("user".into())).unwrap();
    h.drain();
    assert_eq!(h.sent_methods(), ["tools/call", "notifications/cancelled"]);
    assert_eq!(h.sent[1].1["params"]["requestId"], h.sent[0].1["id"]);
}

#[test]
fn method_not_found_falls_back_to_initialize() {
    let mut h = Harness::new(auto());
    let early = h.send("tools/list", json!({}), RequestOptions::new());
    h.answer_discover_error(json!({"code": -32601, "message": "Method not found"}));
    assert_eq!(h.fallbacks(), 1);
    assert_eq!(h.sent_methods(), ["server/discover", "initialize"]);
    assert_ne!(h.sent[1].1["id"], h.sent[0].1["id"], "fresh wire id");
    h.server(
        json!({"jsonrpc": "2.0", "id": h.sent[1].1["id"], "result": init_result("2025-11-25")}),
    );
    assert!(h.events.iter().any(|e| matches!(
        e,
        Event::Ready {
            era: Era::Initialize,
            ..
        }
    )));
    assert_eq!(
        h.sent_methods(),
        [
            "server/discover",
            "initialize",
            "notifications/initialized",
            "tools/list"
        ]
    );
    assert!(
        h.sent[3]
            .1
            .get("params")
            .is_some_and(|p| p["_meta"].is_null()),
        "no envelope"
    );
    h.respond_ok(early, json!({"tools": []}));
    assert!(h.completions(early)[0].is_ok());
}

#[test]
fn any_other_error_code_falls_back_too() {
    for code in [-32600, -32000, -32603, -32602, 1] {
        let mut h = Harness::new(auto());
        h.answer_discover_error(json!({"code": code, "message": "no"}));
        assert_eq!(
            h.sent_methods(),
            ["server/discover", "initialize"],
            "code {code}"
        );
    }
}

#[test]
fn an_empty_object_is_not_a_discover_result() {
    for answer in [
        json!({}),
        json!({"supportedVersions": ["2026-07-28"]}),
        json!({"resultType": "input_required", "supportedVersions": [], "capabilities": {}}),
    ] {
        let mut h = Harness::new(auto());
        h.answer_discover(answer.clone());
        assert_eq!(
            h.sent_methods(),
            ["server/discover", "initialize"],
            "{answer}"
        );
        assert_eq!(h.fallbacks(), 1);
    }
}

#[test]
fn silence_falls_back_after_the_probe_timeout_and_a_late_answer_is_stale() {
    let mut h = Harness::new(auto());
    assert_eq!(
        h.session.poll_timeout(),
        Some(h.t0 + Duration::from_secs(5))
    );
    h.advance(Duration::from_secs(4));
    assert_eq!(h.sent_methods(), ["server/discover"]);
    h.advance(Duration::from_secs(1));
    assert_eq!(h.sent_methods(), ["server/discover", "initialize"]);
    let discover_id = h.sent[0].1["id"].clone();
    // The late discover answer: stale, ignored; the session still waits for initialize.
    h.server(json!({"jsonrpc": "2.0", "id": discover_id, "result": discover_result()}));
    assert_eq!(h.session.state(), SessionState::Handshaking);
    assert!(matches!(
        h.diagnostics().last(),
        Some(Diagnostic::StaleResponse { .. })
    ));
    h.server(
        json!({"jsonrpc": "2.0", "id": h.sent[1].1["id"], "result": init_result("2025-06-18")}),
    );
    assert_eq!(
        h.session.protocol_version(),
        Some(ProtocolVersion::V2025_06_18)
    );
    assert_eq!(h.session.era(), Some(Era::Initialize));
}

#[test]
fn modern_errors_on_discover_do_not_fall_back() {
    let mut h = Harness::new(auto());
    h.answer_discover_error(error_of(MISMATCH));
    assert_eq!(h.sent_methods(), ["server/discover"]);
    assert!(matches!(
        h.events.last(),
        Some(Event::Closed { reason: CloseReason::HandshakeRejected(e) }) if e.code == -32020
    ));
}

#[test]
fn unsupported_version_with_a_supported_list_retries_at_a_listed_version() {
    // The example error lists 2026-07-28 (which we sent) and 2025-11-25: we cannot do better
    // in the discover era, and 2025-11-25 means `initialize`.
    let mut h = Harness::new(auto());
    h.answer_discover_error(json!({"code": -32022, "message": "Unsupported", "data": {"supported": ["2025-11-25"], "requested": "2026-07-28"}}));
    assert_eq!(h.sent_methods(), ["server/discover", "initialize"]);
    assert_eq!(h.sent[1].1["params"]["protocolVersion"], "2025-11-25");
    // A list naming our version again: one more discover at it, with a new id; the same
    // rejection twice closes instead of looping.
    let mut h = Harness::new(config().with_era_policy(EraPolicy::Discover));
    h.answer_discover_error(error_of(UNSUPPORTED));
    assert_eq!(h.sent_methods(), ["server/discover", "server/discover"]);
    assert_ne!(h.sent[0].1["id"], h.sent[1].1["id"]);
    assert_eq!(
        h.sent[1].1["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert!(!matches!(h.events.last(), Some(Event::Closed { .. })));
    h.answer_discover_error(error_of(UNSUPPORTED));
    assert_eq!(h.sent_methods(), ["server/discover", "server/discover"]);
    assert!(matches!(
        h.events.last(),
        Some(Event::Closed {
            reason: CloseReason::UnsupportedVersion { .. }
        })
    ));
    // Nothing in common at all: closes.
    let mut h = Harness::new(auto());
    h.answer_discover_error(
        json!({"code": -32022, "message": "u", "data": {"supported": ["1999-01-01"]}}),
    );
    assert!(matches!(
        h.events.last(),
        Some(Event::Closed {
            reason: CloseReason::UnsupportedVersion { .. }
        })
    ));
}

#[test]
fn a_discover_result_without_a_common_version_falls_back_or_closes() {
    let mut legacy_only = discover_result();
    legacy_only["supportedVersions"] = json!(["2025-06-18"]);
    let mut h = Harness::new(auto());
    h.answer_discover(legacy_only.clone());
    assert_eq!(h.sent_methods(), ["server/discover", "initialize"]);
    assert_eq!(h.sent[1].1["params"]["protocolVersion"], "2025-06-18");
    let mut h = Harness::new(config().with_era_policy(EraPolicy::Discover));
    h.answer_discover(legacy_only);
    assert!(matches!(
        h.events.last(),
        Some(Event::Closed {
            reason: CloseReason::UnsupportedVersion { .. }
        })
    ));
}

#[test]
fn discover_policy_never_falls_back() {
    let mut h = Harness::new(config().with_era_policy(EraPolicy::Discover));
    assert_eq!(
        h.session.poll_timeout(),
        Some(h.t0 + Duration::from_secs(60)),
        "no probe timer"
    );
    let err = h
        .session
        .send_request(h.now, "ping", None, RequestOptions::new())
        .unwrap_err();
    assert!(matches!(err, UsageError::NotInEra { .. }));
    h.answer_discover_error(json!({"code": -32601, "message": "Method not found"}));
    assert!(matches!(
        h.events.last(),
        Some(Event::Closed {
            reason: CloseReason::HandshakeRejected(_)
        })
    ));
}

#[test]
fn initialize_policy_is_unchanged() {
    let h = Harness::new(config());
    assert_eq!(h.sent_methods(), ["initialize"]);
    assert_eq!(h.sent[0].1["params"]["protocolVersion"], "2025-11-25");
}

#[test]
fn a_remembered_initialize_era_skips_the_probe_and_reprobes_on_failure() {
    let cfg = auto().with_known_era(Some(KnownEra::Initialize));
    let mut h = Harness::new(cfg.clone());
    assert_eq!(h.sent_methods(), ["initialize"]);
    h.answer_initialize("2025-11-25");
    assert_eq!(h.session.era(), Some(Era::Initialize));
    // The server was upgraded and rejects initialize: the session re-probes.
    let mut h = Harness::new(cfg);
    h.server(json!({"jsonrpc": "2.0", "id": h.sent[0].1["id"], "error": {"code": -32022, "message": "u", "data": {"supported": ["2026-07-28"]}}}));
    assert_eq!(h.sent_methods(), ["initialize", "server/discover"]);
    h.answer_discover(discover_result());
    assert_eq!(h.session.era(), Some(Era::Discover));
}

#[test]
fn an_initialize_answer_naming_the_discover_version_is_refused() {
    let mut h = Harness::new(config());
    h.answer_initialize("2026-07-28");
    assert!(matches!(
        h.events.last(),
        Some(Event::Closed {
            reason: CloseReason::UnsupportedVersion { .. }
        })
    ));
}

#[test]
fn unsupported_version_on_a_request_completes_it_with_the_error() {
    let mut h = Harness::modern(auto());
    let call = h.send("tools/list", json!({}), RequestOptions::new());
    let id = h.wire_id(call);
    let mut e: Value = serde_json::from_str(UNSUPPORTED).unwrap();
    e["id"] = id;
    h.server(e);
    assert!(matches!(
        h.completions(call)[..],
        [Err(RequestError::Remote(e))] if e.code == -32022
    ));
    assert_eq!(h.sent.len(), 1, "no retry at the same version");
}

#[test]
fn result_types_complete_task_and_unknown() {
    let mut h = Harness::modern(auto());
    let a = h.send("tools/list", json!({}), RequestOptions::new());
    h.respond_ok(a, json!({"tools": []}));
    assert!(h.completions(a)[0].is_ok(), "absent resultType is complete");
    let b = h.send("tools/call", json!({"name": "x"}), RequestOptions::new());
    h.respond_ok(b, json!({"resultType": "eventually", "content": []}));
    assert!(matches!(
        h.completions(b)[..],
        [Err(RequestError::InvalidResult(_))]
    ));
    let c = h.send("tools/call", json!({"name": "x"}), RequestOptions::new());
    h.respond_ok(c, json!({"resultType": "task", "taskId": "t1"}));
    assert!(
        matches!(h.completions(c)[..], [Err(RequestError::InvalidResult(_))]),
        "no extension"
    );
    let d = h.send("tools/list", json!({}), RequestOptions::new());
    h.respond_ok(
        d,
        json!({"resultType": "input_required", "requestState": "s"}),
    );
    assert!(
        matches!(h.completions(d)[..], [Err(RequestError::InvalidResult(_))]),
        "not a multi-round method"
    );
}

#[test]
fn task_results_complete_when_the_extension_was_negotiated() {
    let mut caps = ClientCapabilities::default();
    caps.extra.insert(
        "extensions".into(),
        json!({"io.modelcontextprotocol/tasks": {}}),
    );
    let mut h = Harness::new(auto().with_capabilities(caps));
    let mut d = discover_result();
    d["capabilities"]["extensions"] = json!({"io.modelcontextprotocol/tasks": {}});
    h.answer_discover(d);
    let c = h.send("tools/call", json!({"name": "x"}), RequestOptions::new());
    assert_eq!(
        h.sent.last().unwrap().1["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"],
        json!({"io.modelcontextprotocol/tasks": {}})
    );
    h.respond_ok(
        c,
        json!({"resultType": "task", "taskId": "t1", "pollIntervalMs": 100}),
    );
    assert!(h.completions(c)[0].is_ok());
}

#[test]
fn listen_notifications_are_routed_by_subscription_id() {
    let mut h = Harness::modern(auto());
    let listen = h.send(
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
        RequestOptions::new().no_timeout(),
    );
    let other = h.send(
        "subscriptions/listen",
        json!({"notifications": {"promptsListChanged": true}}),
        RequestOptions::new().no_timeout(),
    );
    let id = h.wire_id(listen);
    h.server(json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
        "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": id}, "notifications": {"toolsListChanged": true}}}));
    h.server(
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
        "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": id.to_string()}}}),
    );
    h.server(
        json!({"jsonrpc": "2.0", "method": "notifications/prompts/list_changed",
        "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": h.wire_id(other)}}}),
    );
    h.server(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}));
    let routed: Vec<_> = h
        .events
        .iter()
        .map(|e| match e {
            Event::SubscriptionAcknowledged { handle, honoured } => {
                assert_eq!(honoured.tools_list_changed, Some(true));
                (Some(*handle), "acknowledged".to_owned())
            }
            Event::Subscription {
                handle,
                notification,
            } => (Some(*handle), notification.method.clone()),
            Event::Notification(n) => (None, n.method.clone()),
            e => panic!("{e:?}"),
        })
        .collect();
    assert_eq!(
        routed,
        [
            (Some(listen), "acknowledged".to_owned()),
            (Some(listen), "notifications/tools/list_changed".to_owned()),
            (Some(other), "notifications/prompts/list_changed".to_owned()),
            (None, "notifications/tools/list_changed".to_owned()),
        ]
    );
    let closed: Value = serde_json::from_str(include_str!(
        "../../../tests/data/2026-07-28/SubscriptionsListenResult/listen-closed.json"
    ))
    .unwrap();
    h.respond_ok(listen, closed);
    assert!(h.completions(listen)[0].is_ok());
}

#[test]
fn the_result_cache_honours_ttl_and_list_changed_and_skips_mrtr_retries() {
    let mut cfg = auto();
    cfg.result_cache = true;
    let mut h = Harness::modern(cfg);
    let example: Value = serde_json::from_str(include_str!(
        "../../../tests/data/2026-07-28/ListToolsResult/tools-list-with-cursor-and-ttl.json"
    ))
    .unwrap();
    let a = h.send("tools/list", json!({}), RequestOptions::new());
    h.respond_ok(a, example.clone());
    assert_eq!(h.session.cached_results(), 1);
    // Fresh: answered from the cache, nothing sent.
    let b = h.send("tools/list", json!({}), RequestOptions::new());
    assert_eq!(h.sent.len(), 1);
    assert!(matches!(h.completions(b)[..], [Ok(r)] if r.get().contains("get_weather")));
    // Another page is another key.
    h.send(
        "tools/list",
        json!({"cursor": "next-page-cursor"}),
        RequestOptions::new(),
    );
    assert_eq!(h.sent.len(), 2);
    // The TTL (300 s) runs out.
    h.now += Duration::from_millis(300_000);
    h.send("tools/list", json!({}), RequestOptions::new());
    assert_eq!(h.sent.len(), 3, "stale: sent");
    let c = h.sent.last().unwrap().0.request.unwrap();
    h.respond_ok(c, example.clone());
    h.send("tools/list", json!({}), RequestOptions::new());
    assert_eq!(h.sent.len(), 3, "fresh again");
    // list_changed invalidates.
    h.server(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}));
    h.send("tools/list", json!({}), RequestOptions::new());
    assert_eq!(h.sent.len(), 4);
    // ttlMs 0 is not cached; a read after an MRTR round is not cached.
    let r = h.send(
        "resources/read",
        json!({"uri": "file:///a"}),
        RequestOptions::new(),
    );
    h.respond_ok(
        r,
        json!({"resultType": "input_required", "requestState": "s"}),
    );
    h.respond_ok(
        r,
        json!({"resultType": "complete", "contents": [], "ttlMs": 60000, "cacheScope": "private"}),
    );
    assert!(h.completions(r)[0].is_ok());
    let before = h.sent.len();
    h.send(
        "resources/read",
        json!({"uri": "file:///a"}),
        RequestOptions::new(),
    );
    assert_eq!(
        h.sent.len(),
        before + 1,
        "an MRTR retry's result is never cached"
    );
    let r2 = h.sent.last().unwrap().0.request.unwrap();
    h.respond_ok(
        r2,
        json!({"resultType": "complete", "contents": [], "ttlMs": 60000}),
    );
    h.send(
        "resources/read",
        json!({"uri": "file:///a"}),
        RequestOptions::new(),
    );
    assert_eq!(
        h.sent.len(),
        before + 1,
        "cached (private is fine within a session)"
    );
    h.server(json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "file:///a"}}));
    h.send(
        "resources/read",
        json!({"uri": "file:///a"}),
        RequestOptions::new(),
    );
    assert_eq!(
        h.sent.len(),
        before + 2,
        "resources/updated invalidates the read"
    );
}

#[test]
fn a_probe_and_a_handshake_deadline_due_together_fall_back_then_close() {
    // Both timers at t0 + 5 s: the probe fires first (its order in the timer table), so the
    // fallback is reported, then the handshake timeout closes the session.
    let mut h = Harness::new(auto().with_handshake_timeout(Some(Duration::from_secs(5))));
    assert_eq!(
        h.session.poll_timeout(),
        Some(h.t0 + Duration::from_secs(5))
    );
    h.advance(Duration::from_secs(5));
    assert_eq!(h.fallbacks(), 1);
    let fallback = h
        .events
        .iter()
        .position(|e| matches!(e, Event::Diagnostic(Diagnostic::EraFallback { .. })));
    let closed = h.events.iter().position(|e| {
        matches!(
            e,
            Event::Closed {
                reason: CloseReason::HandshakeTimeout { .. }
            }
        )
    });
    assert!(
        matches!((fallback, closed), (Some(f), Some(c)) if f < c),
        "{:?}",
        h.events
    );
    assert_eq!(
        h.session.poll_timeout(),
        None,
        "nothing is armed once closed"
    );
}
