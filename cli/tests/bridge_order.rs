//! A stdio bridge keeps the upstream server's order: a notification the server wrote before a
//! call's answer reaches the host before that answer, with many calls in flight.
//!
//! The demo server logs `tools/call NAME` (at debug level) before it answers each call, so at
//! every point of what the host reads there are at least as many of those log lines as
//! answers.

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

const MCP: &str = env!("CARGO_BIN_EXE_mcp");

/// Calls sent at once.
const CALLS: i64 = 64;

#[test]
fn each_answer_comes_after_the_log_lines_the_server_wrote_before_it() {
    let mut bridge = Command::new(MCP)
        .args(["bridge", "--", MCP, "demo-server"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("mcp bridge starts");
    let mut stdin = bridge.stdin.take().expect("piped");
    let stdout = bridge.stdout.take().expect("piped");
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { return };
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    let mut send = |m: Value| {
        writeln!(stdin, "{m}").expect("the bridge reads");
    };
    let next = || -> Value {
        let line = lines
            .recv_timeout(Duration::from_secs(30))
            .expect("the bridge answers (anti-hang guard)");
        serde_json::from_str(&line).expect("one JSON message a line")
    };
    send(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "order-test", "version": "1"}}}),
    );
    assert!(next()["result"]["serverInfo"].is_object());
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "logging/setLevel",
        "params": {"level": "debug"}}),
    );
    while next()["id"] != 1 {}

    // Every call in flight at once.
    for id in 0..CALLS {
        send(
            json!({"jsonrpc": "2.0", "id": 100 + id, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": format!("call {id}")}}}),
        );
    }
    let (mut logged, mut answered) = (0, 0);
    while answered < CALLS {
        let m = next();
        if m["method"] == "notifications/message" && m["params"]["data"] == "tools/call echo" {
            logged += 1;
        } else if m["id"].as_i64().is_some_and(|id| id >= 100) {
            answered += 1;
            assert_eq!(
                m["result"]["content"][0]["text"],
                format!("call {}", m["id"].as_i64().unwrap_or_default() - 100),
                "{m}"
            );
            assert!(
                logged >= answered,
                "answer {answered} ({m}) reached the host before the log line the server \
                 wrote before it ({logged} log lines so far)"
            );
        }
    }
    // End of input: the bridge shuts the server down and exits.
    drop(stdin);
    let status = bridge.wait().expect("the bridge exits");
    assert!(status.success(), "{status}");
}
