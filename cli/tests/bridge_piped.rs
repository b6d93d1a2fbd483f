//! `mcp bridge` fed a piped host script whose stdin closes right after the last request (as
//! `printf '%s\n' ... | mcp bridge --url URL` does): every request already written is
//! forwarded and answered before the bridge ends, for both upstream kinds, an HTTP server
//! (`mcp demo-server --listen 127.0.0.1:0`) and a stdio child (`-- mcp demo-server`).

mod common;

use std::io::Write as _;
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use common::listening::Listening;
use serde_json::{Value, json};

/// The anti-hang guard of every wait (never reached when the bridge works).
const GUARD: Duration = Duration::from_secs(60);

const MCP: &str = env!("CARGO_BIN_EXE_mcp");

/// The host script: `initialize`, `initialized`, then requests 2..=5 (a list, two calls, one
/// of them taking a few steps upstream, and a ping).
fn host_script() -> Vec<u8> {
    let messages = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "piped-host", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "piped"}}}),
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
            "params": {"name": "slow", "arguments": {"steps": 3, "delay_ms": 20}}}),
        json!({"jsonrpc": "2.0", "id": 5, "method": "ping"}),
    ];
    let mut script = Vec::new();
    for m in messages {
        script.extend_from_slice(m.to_string().as_bytes());
        script.push(b'\n');
    }
    script
}

/// Runs `mcp bridge <args>`, writes the whole host script and closes stdin at once, and
/// returns what the bridge did (killed at the guard, so a hang fails instead of blocking).
fn pipe_script(args: &[&str]) -> Output {
    let mut child = Command::new(MCP)
        .arg("bridge")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn mcp bridge");
    let mut stdin = child.stdin.take().expect("piped stdin");
    stdin
        .write_all(&host_script())
        .expect("write the host script");
    drop(stdin);
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(GUARD) {
        Ok(output) => output.expect("wait for mcp bridge"),
        Err(_) => {
            // The bridge hung after its stdin closed: end it (this pid only) and fail.
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
            panic!("mcp bridge did not end after the host closed stdin");
        }
    }
}

/// Asserts that the host got an answer (a result) for each of its requests, the right one.
fn assert_every_answer(output: &Output) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        output.status.code(),
        Some(0),
        "exit status; stderr: {stderr}"
    );
    let answers: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("stdout carries only JSON-RPC lines"))
        .filter(|m: &Value| m.get("id").is_some())
        .collect();
    let answer = |id: i64| {
        answers
            .iter()
            .find(|m| m["id"] == json!(id))
            .unwrap_or_else(|| panic!("no answer to request {id}: {answers:?}; stderr: {stderr}"))
    };
    for id in 1..=5 {
        assert!(
            answer(id).get("result").is_some(),
            "request {id} failed: {:?}",
            answer(id)
        );
    }
    assert_eq!(answers.len(), 5, "one answer per request: {answers:?}");
    assert_eq!(answer(1)["result"]["serverInfo"]["name"], "mcp-demo");
    let tools: Vec<&str> = answer(2)["result"]["tools"]
        .as_array()
        .expect("a tool list")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(tools.contains(&"echo"), "{tools:?}");
    assert_eq!(answer(3)["result"]["content"][0]["text"], "piped");
    assert_ne!(
        answer(4)["result"]["isError"],
        json!(true),
        "{:?}",
        answer(4)
    );
}

#[test]
fn a_piped_script_to_an_http_server_gets_every_answer_after_stdin_closes() {
    let server = Listening::demo();
    let output = pipe_script(&["--url", &server.url]);
    assert_every_answer(&output);
}

#[test]
fn a_piped_script_to_a_stdio_server_gets_every_answer_after_stdin_closes() {
    let output = pipe_script(&["--", MCP, "demo-server"]);
    assert_every_answer(&output);
}
