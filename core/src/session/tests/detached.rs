//! Detached requests: no handle, no pending entry, and they survive a close that follows.

use serde_json::{Value, json};

use super::harness::Harness;
use super::*;

fn raw(v: Value) -> Box<RawValue> {
    serde_json::value::to_raw_value(&v).unwrap()
}

#[test]
fn a_detached_request_goes_out_even_when_the_session_closes_at_once() {
    let mut h = Harness::ready(config(), "2025-11-25");
    let pending = h.send("tools/call", json!({"name": "slow"}), RequestOptions::new());
    let pending_wire = h.wire_id(pending);
    h.sent.clear();
    h.session
        .send_detached_request(
            Cow::Borrowed("tasks/cancel"),
            Some(raw(json!({"taskId": "t1"}))),
        )
        .expect("queued");
    h.session.close(h.now);
    h.drain();
    assert_eq!(h.sent_methods(), ["tasks/cancel"]);
    let (out, msg) = &h.sent[0];
    assert_eq!(out.kind, MessageKind::Request);
    assert_eq!(msg["params"], json!({"taskId": "t1"}));
    let wire = msg["id"].clone();
    assert_ne!(wire, pending_wire, "its own wire id");
    assert!(
        h.session
            .send_detached_request(Cow::Borrowed("tasks/cancel"), None)
            .is_err(),
        "refused once closed"
    );
}

#[test]
fn the_answer_to_a_detached_request_is_only_a_diagnostic() {
    let mut h = Harness::ready(config(), "2025-11-25");
    h.session
        .send_detached_request(Cow::Borrowed("tasks/cancel"), None)
        .expect("queued");
    h.drain();
    let wire = h.sent[0].1["id"].clone();
    h.events.clear();
    h.server(json!({"jsonrpc": "2.0", "id": wire, "result": {}}));
    assert!(
        h.events.iter().all(|e| matches!(e, Event::Diagnostic(_))),
        "{:?}",
        h.events
    );
    assert!(!h.session.is_closed());
}
