//! Session ids the host mints itself (`handle_request_with_session_id`), and ids that cannot
//! be used.

use std::cell::Cell;

use serde_json::{Value, json};

use super::http::call;
use super::http_harness::{ACCEPT_BOTH, Http, JSON};
use crate::http::headers::HeaderList;
use crate::server::http::{Refusal, RequestHead, ResponseId};

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "mint-test", "version": "0"}}})
}

/// A POST of `body` (in `session` if given) whose new session, if it opens one, is `minted`;
/// counts the minter's calls in `calls`.
fn post_minted(
    h: &mut Http,
    session: Option<&str>,
    body: &Value,
    minted: &str,
    calls: &Cell<u32>,
) -> ResponseId {
    let mut headers: HeaderList = [ACCEPT_BOTH, JSON].into_iter().collect();
    if let Some(s) = session {
        headers.insert("mcp-session-id", s);
    }
    let head = RequestHead::new("POST", headers);
    let body = body.to_string();
    let r = h
        .server
        .handle_request_with_session_id(h.now, &head, body.as_bytes(), || {
            calls.set(calls.get() + 1);
            minted.to_owned()
        });
    h.seen.entry(r).or_default();
    h.drain();
    r
}

#[test]
fn a_minted_id_names_the_session_and_is_minted_only_when_one_opens() {
    let mut h = Http::new();
    let calls = Cell::new(0);
    let r = post_minted(&mut h, None, &initialize(), "fault-1", &calls);
    assert_eq!(h.status(r), 200);
    assert_eq!(h.seen(r).header("mcp-session-id"), Some("fault-1"));
    assert_eq!(calls.get(), 1);

    // Requests in the session reach it and mint nothing.
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let n = post_minted(&mut h, Some("fault-1"), &note, "unused", &calls);
    assert_eq!(h.status(n), 202);
    let c = post_minted(&mut h, Some("fault-1"), &call(1, "echo"), "unused", &calls);
    assert_eq!(calls.get(), 1, "no session opened, nothing minted");
    let requests = h.host_requests();
    assert_eq!(requests.len(), 1, "{requests:?}");
    assert_eq!(requests[0].2, "tools/call");
    assert!(!h.seen(c).ended, "waits for the host's answer");

    // A second session gets the next id the host mints.
    let r2 = post_minted(&mut h, None, &initialize(), "fault-2", &calls);
    assert_eq!(h.seen(r2).header("mcp-session-id"), Some("fault-2"));
    assert_eq!(h.server.sessions().count(), 2);
}

#[test]
fn an_id_that_is_empty_too_long_not_visible_ascii_or_live_opens_no_session() {
    let mut h = Http::new();
    let calls = Cell::new(0);
    post_minted(&mut h, None, &initialize(), "live", &calls);
    let too_long = "x".repeat(crate::http::headers::MAX_SESSION_ID_LEN + 1);
    for bad in ["", "has space", "caf\u{e9}", "tab\there", "live", &too_long] {
        h.events.clear();
        let r = post_minted(&mut h, None, &initialize(), bad, &calls);
        assert_eq!(h.status(r), 500, "{bad:?}");
        assert!(h.seen(r).ended);
        assert_eq!(h.seen(r).header("mcp-session-id"), None, "{bad:?}");
        assert_eq!(h.refusals(), [Refusal::UnusableSessionId], "{bad:?}");
    }
    assert_eq!(h.server.sessions().count(), 1, "only the first one opened");
}

#[test]
fn repeated_entropy_opens_no_second_session_with_the_same_id() {
    let mut h = Http::new();
    let head = || RequestHead::new("POST", [ACCEPT_BOTH, JSON].into_iter().collect());
    let body = initialize().to_string();
    let first = h
        .server
        .handle_request(h.now, &head(), body.as_bytes(), [9; 16]);
    h.seen.entry(first).or_default();
    h.drain();
    assert_eq!(h.status(first), 200);
    h.events.clear();
    let again = h
        .server
        .handle_request(h.now, &head(), body.as_bytes(), [9; 16]);
    h.seen.entry(again).or_default();
    h.drain();
    assert_eq!(h.status(again), 500);
    assert_eq!(h.refusals(), [Refusal::UnusableSessionId]);
    assert_eq!(h.server.sessions().count(), 1);
}
