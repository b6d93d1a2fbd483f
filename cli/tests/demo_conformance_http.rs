//! `mcp demo-server --listen 127.0.0.1:0 --conformance` (the built binary) over raw HTTP/1.1:
//! `test_reconnection` closes its POST's SSE stream after a priming event that carries
//! `retry`, and the answer comes on the GET that resumes the stream with `Last-Event-ID`
//! (SEP-1699 polling, what the conformance suite's `server-sse-polling` checks).

mod common;

use common::listening::Listening;
use common::raw_http::exchange;
use serde_json::json;

/// Initializes a 2025-11-25 session with the server at `url`; returns its id.
fn initialize(url: &str) -> String {
    let init = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": { "name": "test", "version": "1" } } });
    let r = exchange(url, "POST", &[], Some(&init));
    assert_eq!(r.status, 200, "{}", r.body);
    let session = r.header("mcp-session-id").expect("a session id").to_owned();
    let initialized = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
    let r = exchange(
        url,
        "POST",
        &[("mcp-session-id", &session)],
        Some(&initialized),
    );
    assert_eq!(r.status, 202, "{}", r.body);
    session
}

#[test]
fn test_reconnection_closes_its_stream_and_the_answer_comes_on_the_resumed_get() {
    let server = Listening::demo_with(&["--conformance"], &[]);
    let session = initialize(&server.url);
    let headers = [
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let call = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": { "name": "test_reconnection", "arguments": {} } });
    let closed = exchange(&server.url, "POST", &headers, Some(&call));
    assert_eq!(closed.status, 200);
    assert_eq!(closed.header("content-type"), Some("text/event-stream"));
    // Only the priming event: its id, the retry delay, empty data; no answer.
    let priming_id = closed
        .body
        .strip_prefix("id: ")
        .and_then(|rest| rest.strip_suffix("\nretry: 500\ndata: \n\n"))
        .unwrap_or_else(|| panic!("only a priming event with retry: {:?}", closed.body))
        .to_owned();

    let resume = [
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
        ("last-event-id", priming_id.as_str()),
    ];
    let resumed = exchange(&server.url, "GET", &resume, None);
    assert_eq!(resumed.status, 200, "{}", resumed.body);
    // The answer's event (the priming event's empty data is no message).
    let events = &resumed.messages;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["id"], 2);
    assert_eq!(
        events[0]["result"]["content"][0]["text"],
        "Reconnection test completed successfully (after the stream was closed)"
    );
}

#[test]
fn without_conformance_the_http_demo_has_no_fixtures() {
    let server = Listening::demo();
    let session = initialize(&server.url);
    let list = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list" });
    let r = exchange(
        &server.url,
        "POST",
        &[("mcp-session-id", &session)],
        Some(&list),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    let body = r.json();
    let first = &body["result"]["tools"][0]["name"];
    assert_eq!(first, "echo", "{body}");
}
