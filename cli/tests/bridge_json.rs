//! A failing `mcp bridge`: stdout carries only the protocol, the CLI's error object nowhere
//! on it (a host reads every stdout line as JSON-RPC); `--json` itself is refused, on stderr.

use std::io::Write as _;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

const MCP: &str = env!("CARGO_BIN_EXE_mcp");

#[test]
fn a_failing_bridge_writes_only_the_protocol_on_stdout() {
    let mut bridge = Command::new(MCP)
        .args(["bridge", "--url", "http://127.0.0.1:9/mcp"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn mcp bridge");
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "host", "version": "1"}}});
    let mut stdin = bridge.stdin.take().expect("piped stdin");
    writeln!(stdin, "{init}").expect("write initialize");
    drop(stdin);
    let out = bridge.wait_with_output().expect("the bridge's output");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 1, "one JSON-RPC line only: {stdout}");
    let answer: Value = serde_json::from_str(lines[0]).expect("a JSON-RPC line");
    assert_eq!(answer["jsonrpc"], "2.0", "{answer}");
    assert_eq!(answer["id"], 1, "{answer}");
    assert!(answer["error"]["message"].is_string(), "{answer}");
    assert_ne!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("error:"), "{stderr}");
}

#[test]
fn json_is_refused_on_stderr_before_anything_starts() {
    let out = Command::new(MCP)
        .args(["--json", "bridge", "--url", "http://127.0.0.1:9/mcp"])
        .stdin(Stdio::null())
        .output()
        .expect("run mcp bridge");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("error: mcp bridge does not take --json"),
        "{stderr}"
    );
}
