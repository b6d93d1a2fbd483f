//! The built `mcp` as a task receiver against npm `@modelcontextprotocol/server-everything`
//! over stdio: the CLI declares `tasks.requests.*`, so the server registers its
//! `trigger-*-request-async` tools, sends its elicitation or sampling request as a task of
//! the client's, polls `tasks/get` and fetches the answer with `tasks/result`. Without a
//! terminal the CLI declines both (as for a plain request), and the server reports how the
//! client's task ended.
//!
//! The peer's command comes from `.peers/env.sh` (`MCP_PEER_EVERYTHING`), which `scripts/test`
//! sources. Without it the test fails, naming `scripts/test`, unless `MCP_SKIP_INTEROP=1` is
//! set (then it says it was skipped and passes). Stdio only: nothing binds a port.

use std::process::{Command, Stdio};

mod common;
use common::everything;

const MCP: &str = env!("CARGO_BIN_EXE_mcp");

/// `mcp --json call <tool> <args> -- server` without a terminal: the tool's text blocks.
fn call(server: &[String], tool: &str, args: &[&str]) -> String {
    let o = Command::new(MCP)
        .args(["--json", "call", tool])
        .args(args)
        .arg("--")
        .args(server)
        .stdin(Stdio::null())
        .output()
        .expect("run mcp");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("--json output");
    let texts: Vec<&str> = v["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["text"].as_str())
        .collect();
    assert!(!texts.is_empty(), "no text content: {v}");
    texts.join("\n")
}

#[test]
fn a_task_augmented_elicitation_is_run_as_a_client_task() {
    let Some(server) = everything() else { return };
    let text = call(&server, "trigger-elicitation-request-async", &[]);
    assert!(text.contains("Task created: client-task-0"), "{text}");
    assert!(text.contains("[DECLINED]"), "{text}");
}

#[test]
fn a_task_augmented_sampling_request_is_run_as_a_client_task() {
    let Some(server) = everything() else { return };
    let text = call(&server, "trigger-sampling-request-async", &["prompt=hello"]);
    assert!(text.contains("Task created: client-task-0"), "{text}");
    // Declined without a terminal: the task fails with the handler's error.
    assert!(text.contains("[FAILED]"), "{text}");
    assert!(text.contains("failed"), "{text}");
}
