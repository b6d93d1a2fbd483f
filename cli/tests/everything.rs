//! The built `mcp` against npm `@modelcontextprotocol/server-everything` over stdio: its
//! `trigger-long-running-operation` (progress every `duration / steps` seconds) runs past
//! `--timeout` because each progress update restarts it, as the 40 s operation with progress
//! every 10 s does under the default 30 s.
//!
//! The peer's command comes from `.peers/env.sh` (`MCP_PEER_EVERYTHING`), which `scripts/test`
//! sources. Without it the test fails, naming `scripts/test`, unless `MCP_SKIP_INTEROP=1` is
//! set (then it says it was skipped and passes). Stdio only: nothing binds a port.

use std::process::{Command, Stdio};

mod common;
use common::everything;

const MCP: &str = env!("CARGO_BIN_EXE_mcp");

#[test]
fn a_long_operation_with_progress_outlives_the_timeout() {
    let Some(server) = everything() else { return };
    // 3 s with progress every 500 ms, under a 1 s timeout.
    let o = Command::new(MCP)
        .args([
            "--timeout",
            "1s",
            "call",
            "trigger-long-running-operation",
            "duration=3",
            "steps=6",
            "--",
        ])
        .args(&server)
        .stdin(Stdio::null())
        .output()
        .expect("run mcp");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        stdout.contains("Long running operation completed"),
        "{stdout}"
    );
}

/// `simulate-research-query` requires a task (`execution.taskSupport: "required"`): `mcp call`
/// sends `params.task`, follows the task and prints the report; with `-v` the task's status
/// changes are lines on stderr; `--json` gives the final result as for a plain call.
#[test]
fn a_task_required_tool_completes_and_shows_its_status() {
    let Some(server) = everything() else { return };
    let o = Command::new(MCP)
        .args(["-v", "call", "simulate-research-query", "topic=rust", "--"])
        .args(&server)
        .stdin(Stdio::null())
        .output()
        .expect("run mcp");
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert!(stdout.contains("# Research Report: rust"), "{stdout}");
    assert!(stderr.contains("task working"), "{stderr}");
    assert!(stderr.contains("task completed"), "{stderr}");

    let o = Command::new(MCP)
        .args([
            "--json",
            "call",
            "simulate-research-query",
            "topic=json",
            "--",
        ])
        .args(&server)
        .stdin(Stdio::null())
        .output()
        .expect("run mcp");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let result: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("# Research Report: json"), "{result}");
}
