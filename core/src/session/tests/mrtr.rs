//! Multi-round requests: rounds, exact `requestState` echo, round cap, cancellation.

use serde_json::{Value, json};

use super::era::auto;
use super::*;

const INPUT_REQUIRED: &str = include_str!(
    "../../../tests/data/2026-07-28/InputRequiredResult/input-required-result-with-elicitation-and-sampling-and-request-state.json"
);
const STATE_ONLY: &str = include_str!(
    "../../../tests/data/2026-07-28/InputRequiredResult/input-required-result-with-request-state-only.json"
);
const RESPONSES: &str = include_str!(
    "../../../tests/data/2026-07-28/InputResponses/elicitation-and-sampling-input-responses.json"
);

fn caps() -> ClientCapabilities {
    ClientCapabilities {
        sampling: Some(crate::types::SamplingCapability::default()),
        ..caps_roots_elicitation()
    }
}

fn server_requests(h: &Harness) -> Vec<(InboundRequestId, String)> {
    h.events
        .iter()
        .filter_map(|e| match e {
            Event::ServerRequest { id, method, .. } => Some((*id, method.clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn input_requests_go_to_the_host_and_the_retry_echoes_state_and_answers() {
    let mut h = Harness::modern(auto().with_capabilities(caps()));
    let call = h.send(
        "tools/call",
        json!({"name": "deploy", "arguments": {"env": "prod"}}),
        RequestOptions::new(),
    );
    let first_id = h.wire_id(call);
    h.server_bytes(
        format!(r#"{{"jsonrpc":"2.0","id":{first_id},"result":{INPUT_REQUIRED}}}"#).as_bytes(),
    );
    assert!(h.completions(call).is_empty());
    let asked = server_requests(&h);
    assert_eq!(
        asked.iter().map(|(_, m)| m.as_str()).collect::<Vec<_>>(),
        ["elicitation/create", "sampling/createMessage"]
    );
    assert!(h.session.deadlines_paused(), "a human answers");
    let answers: Value = serde_json::from_str(RESPONSES).unwrap();
    // Answer out of order: the retry waits for both.
    let raw = |v: &Value| serde_json::value::to_raw_value(v).unwrap();
    h.session
        .respond(h.now, asked[1].0, Ok(raw(&answers["capital_of_france"])))
        .unwrap();
    h.drain();
    assert_eq!(h.sent.len(), 1);
    h.session
        .respond(h.now, asked[0].0, Ok(raw(&answers["github_login"])))
        .unwrap();
    h.drain();
    assert_eq!(h.sent.len(), 2, "the retry");
    let (out, retry) = &h.sent[1];
    assert_eq!(out.request, Some(call), "same handle");
    assert_ne!(retry["id"], first_id, "new wire id");
    assert_eq!(retry["method"], "tools/call");
    let p = &retry["params"];
    assert_eq!(p["name"], "deploy");
    assert_eq!(p["arguments"], json!({"env": "prod"}));
    assert_eq!(p["inputResponses"], answers);
    assert_eq!(p["requestState"], "eyJsb2NhdGlvbiI6Ik5ldyBZb3JrIn0");
    assert_eq!(
        p["_meta"]["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    h.respond_ok(call, json!({"resultType": "complete", "content": []}));
    assert!(h.completions(call)[0].is_ok());
    assert!(!h.session.deadlines_paused());
}

#[test]
fn request_state_is_echoed_byte_for_byte_and_never_invented() {
    let mut h = Harness::modern(auto().with_capabilities(caps()));
    let read = h.send(
        "resources/read",
        json!({"uri": "file:///x"}),
        RequestOptions::new(),
    );
    let id = h.wire_id(read);
    // An escaped state: the retry must carry these exact bytes, not a re-encoding.
    let state = r#""a\u0041\/b""#;
    h.server_bytes(
        format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"resultType":"input_required","requestState":{state}}}}}"#)
            .as_bytes(),
    );
    // Load shedding: retried at once, no host involvement.
    assert!(server_requests(&h).is_empty());
    assert_eq!(h.sent.len(), 2);
    assert_eq!(h.sent[1].1["params"]["requestState"], "aA/b");
    // The raw bytes: take them from a fresh session round that we capture un-parsed.
    let mut h2 = Harness::modern(auto());
    let r = h2.send("prompts/get", json!({"name": "p"}), RequestOptions::new());
    let id = h2.wire_id(r);
    h2.session.handle_message(
        h2.now,
        format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"resultType":"input_required","requestState":{state}}}}}"#).as_bytes(),
    );
    let mut bytes = Vec::new();
    let out = h2.session.poll_transmit(&mut bytes).unwrap();
    assert_eq!(out.request, Some(r));
    let text = String::from_utf8(bytes).unwrap();
    assert!(
        text.contains(&format!(r#""requestState":{state}"#)),
        "{text}"
    );
    assert!(
        !text.contains("inputResponses"),
        "no answers were asked for: {text}"
    );
    // A later round without state carries none.
    let id = serde_json::from_str::<Value>(&text).unwrap()["id"].clone();
    h2.session.handle_message(
        h2.now,
        format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"resultType":"input_required","inputRequests":{{"r":{{"method":"roots/list"}}}}}}}}"#).as_bytes(),
    );
    // roots/list is not declared in this session: the request fails instead.
    let mut done = None;
    while let Some(e) = h2.session.poll_event() {
        if let Event::Completed { handle, result } = e {
            done = Some((handle, result));
        }
    }
    let (handle, result) = done.unwrap();
    assert_eq!(handle, r);
    assert!(matches!(result, Err(RequestError::InvalidResult(_))));
}

#[test]
fn the_example_load_shedding_result_is_retried_at_once() {
    let mut h = Harness::modern(auto());
    let call = h.send("tools/call", json!({"name": "x"}), RequestOptions::new());
    let id = h.wire_id(call);
    h.server_bytes(format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{STATE_ONLY}}}"#).as_bytes());
    assert_eq!(h.sent.len(), 2);
    assert_eq!(
        h.sent[1].1["params"]["requestState"],
        "eyJwcm9ncmVzcyI6IjUwJSIsInN0YXRlIjoicHJvY2Vzc2luZyJ9"
    );
    assert!(h.sent[1].1["params"].get("inputResponses").is_none());
}

#[test]
fn a_round_without_state_sends_no_state() {
    let mut h = Harness::modern(auto().with_capabilities(caps()));
    let call = h.send(
        "tools/call",
        json!({"name": "x", "requestState": "callers"}),
        RequestOptions::new(),
    );
    let id = h.wire_id(call);
    h.server(
        json!({"jsonrpc": "2.0", "id": id, "result": {"resultType": "input_required",
        "inputRequests": {"roots": {"method": "roots/list", "params": {}}}}}),
    );
    let asked = server_requests(&h);
    assert_eq!(asked.len(), 1);
    assert!(!h.session.deadlines_paused(), "roots/list is not a human");
    h.session
        .respond(
            h.now,
            asked[0].0,
            Ok(serde_json::value::to_raw_value(&json!({"roots": []})).unwrap()),
        )
        .unwrap();
    h.drain();
    let p = &h.sent[1].1["params"];
    assert!(p.get("requestState").is_none(), "{p}");
    assert_eq!(p["inputResponses"], json!({"roots": {"roots": []}}));
}

#[test]
fn the_round_cap_fails_the_request() {
    let mut cfg = auto();
    cfg.max_input_rounds = 3;
    let mut h = Harness::modern(cfg);
    let call = h.send("tools/call", json!({"name": "x"}), RequestOptions::new());
    for round in 0..4 {
        let id = h.wire_id(call);
        h.server(json!({"jsonrpc": "2.0", "id": id, "result": {"resultType": "input_required", "requestState": format!("s{round}")}}));
    }
    assert_eq!(h.sent.len(), 4, "the first send and three retries");
    assert_eq!(h.sent[3].1["params"]["requestState"], "s2");
    assert!(matches!(
        h.completions(call)[..],
        [Err(RequestError::TooManyInputRounds { rounds: 3 })]
    ));
}

#[test]
fn cancelling_during_a_round_cancels_the_host_requests_without_a_notice() {
    let mut h = Harness::modern(auto().with_capabilities(caps()));
    let call = h.send("tools/call", json!({"name": "x"}), RequestOptions::new());
    let id = h.wire_id(call);
    h.server_bytes(
        format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{INPUT_REQUIRED}}}"#).as_bytes(),
    );
    let asked = server_requests(&h);
    h.session.cancel(h.now, call, None).unwrap();
    h.drain();
    assert_eq!(
        h.sent.len(),
        1,
        "the server finished its exchange: no notifications/cancelled"
    );
    let cancelled: Vec<_> = h
        .events
        .iter()
        .filter_map(|e| match e {
            Event::ServerRequestCancelled { id, .. } => Some(*id),
            _ => None,
        })
        .collect();
    assert_eq!(cancelled, asked.iter().map(|(i, _)| *i).collect::<Vec<_>>());
    assert!(!h.session.deadlines_paused());
    let late = h
        .session
        .respond(h.now, asked[0].0, Ok(crate::jsonrpc::empty_object()));
    assert!(matches!(late, Err(UsageError::UnknownServerRequest(_))));
}

#[test]
fn a_host_error_on_an_input_fails_the_request() {
    let mut h = Harness::modern(auto().with_capabilities(caps()));
    let call = h.send("tools/call", json!({"name": "x"}), RequestOptions::new());
    let id = h.wire_id(call);
    h.server_bytes(
        format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{INPUT_REQUIRED}}}"#).as_bytes(),
    );
    let asked = server_requests(&h);
    h.session
        .respond(
            h.now,
            asked[0].0,
            Err(crate::jsonrpc::ErrorObject::new(-1, "declined")),
        )
        .unwrap();
    h.drain();
    assert!(matches!(
        &h.completions(call)[..],
        [Err(RequestError::InputFailed { key, .. })] if key == "github_login"
    ));
    assert!(
        h.events
            .iter()
            .any(|e| matches!(e, Event::ServerRequestCancelled { id, .. } if *id == asked[1].0))
    );
}

#[test]
fn undeclared_capabilities_in_input_requests_fail_the_request() {
    let mut h = Harness::modern(auto());
    let call = h.send("tools/call", json!({"name": "x"}), RequestOptions::new());
    let id = h.wire_id(call);
    h.server_bytes(
        format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{INPUT_REQUIRED}}}"#).as_bytes(),
    );
    assert!(server_requests(&h).is_empty());
    assert!(matches!(
        h.completions(call)[..],
        [Err(RequestError::InvalidResult(_))]
    ));
}

/// The round fields belong to multi-round methods: a caller's `inputResponses` on a
/// `tools/call` is dropped (they go only on a retry), but `tasks/update`, whose own payload is
/// `inputResponses`, keeps it.
#[test]
fn round_fields_are_stripped_only_from_multi_round_methods() {
    let mut h = Harness::modern(auto());
    let answers = json!({"k": {"action": "accept"}});
    h.send(
        "tools/call",
        json!({"name": "x", "inputResponses": answers, "requestState": "s"}),
        RequestOptions::new(),
    );
    let call = &h.sent.last().unwrap().1["params"];
    assert!(call.get("inputResponses").is_none() && call.get("requestState").is_none());
    h.send(
        "tasks/update",
        json!({"taskId": "t1", "inputResponses": answers}),
        RequestOptions::new(),
    );
    let update = &h.sent.last().unwrap().1["params"];
    assert_eq!(update["inputResponses"], answers);
    assert_eq!(update["taskId"], "t1");
    assert_eq!(
        update["_meta"]["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
}
