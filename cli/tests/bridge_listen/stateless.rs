//! `--stateless`: every POST shares one upstream.

use serde_json::json;

use crate::common::raw_http::{exchange, start_exchange};
use crate::harness::Listener;

#[test]
fn stateless_posts_share_one_upstream() {
    let bridge = Listener::start("stateless", &["--stateless"], &[]);
    let groups = bridge.wait_groups(1);
    for n in 0..3 {
        let reply = exchange(
            &bridge.url,
            "POST",
            &[("MCP-Protocol-Version", "2025-06-18")],
            Some(&json!({"jsonrpc": "2.0", "id": n, "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": format!("n{n}")}}})),
        );
        assert_eq!(reply.status, 200);
        assert!(reply.header("mcp-session-id").is_none());
        assert_eq!(
            reply.messages.last().expect("an answer")["result"]["content"][0]["text"],
            format!("n{n}")
        );
    }
    assert_eq!(bridge.live_groups(), groups, "one child served every POST");
}

#[test]
fn a_stateless_host_that_disconnects_mid_call_cancels_it_upstream() {
    let bridge = Listener::start("stateless-cancel", &["--stateless"], &[]);
    let running = start_exchange(
        &bridge.url,
        "POST",
        &[("MCP-Protocol-Version", "2025-06-18")],
        Some(&json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
            "params": {"name": "slow", "arguments": {"steps": 100, "delay_ms": 1000}}})),
    );
    let slow = bridge.wait_upstream("the slow call", |m| {
        m["method"] == "tools/call" && m["params"]["name"] == "slow"
    });
    // The host goes away without an answer.
    drop(running);
    let cancelled = bridge.wait_upstream("the cancellation", |m| {
        m["method"] == "notifications/cancelled"
    });
    assert_eq!(cancelled["params"]["requestId"], slow["id"], "{cancelled}");
}
