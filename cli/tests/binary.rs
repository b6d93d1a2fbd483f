//! Runs the built `mcp` binary (never whatever `mcp` is on PATH).

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

fn mcp() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mcp"))
}

#[test]
fn demo_server_over_real_stdio() {
    let mut child = mcp()
        .arg("demo-server")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn mcp demo-server");
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let lines = [
        json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } } }),
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
        json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": { "name": "add", "arguments": { "a": 1, "b": 2 } } }),
    ];
    for line in lines {
        writeln!(stdin, "{line}").unwrap();
    }
    writeln!(stdin, "garbage").unwrap();
    stdin.flush().unwrap();
    let mut read = || {
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        serde_json::from_str::<Value>(&line).expect("stdout carries only JSON-RPC")
    };
    let init = read();
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
    let mut rest = [read(), read()];
    rest.sort_by_key(|m| m["id"].is_null());
    assert_eq!(
        rest[0]["result"]["structuredContent"],
        json!({ "sum": 3.0 })
    );
    assert_eq!(rest[1]["error"]["code"], -32700);
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    // The garbage line is logged on stderr, not stdout.
    assert!(String::from_utf8_lossy(&output.stderr).contains("ignored input"));
}

#[test]
fn lint_file_exit_codes_and_json() {
    let dir = std::env::temp_dir().join(format!("mcp-cli-lint-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.json");
    std::fs::write(&bad, r#"{"tools":[{"name":"bad name","description":"d","inputSchema":{"type":"object","additionalProperties":false}}]}"#).unwrap();
    let good = dir.join("good.json");
    std::fs::write(&good, r#"[{"name":"ok","description":"d","inputSchema":{"type":"object","additionalProperties":false}}]"#).unwrap();

    let out = mcp()
        .args(["lint", "--json", "--file"])
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let findings: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(findings[0]["rule"], "tool-name");

    let out = mcp().args(["lint", "--file"]).arg(&good).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "no problems found\n");

    let out = mcp()
        .args(["lint", "--file"])
        .arg(dir.join("missing.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("hint:"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn usage_errors_exit_2() {
    let out = mcp().arg("--definitely-not-an-option").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = mcp().arg("tools").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no server given"));
    let out = mcp().arg("--help").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("Exit codes"));
}
