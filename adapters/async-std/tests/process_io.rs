//! Stdio children's pipes and environment on async-process: stderr draining, env merge,
//! clear_env, cwd. The same checks as `mcp-tokio`'s `tests/process_io.rs`.

#![cfg(target_os = "linux")]

mod common;

use std::time::Duration;

use common::*;
use mcp_driver::process::{StdioCommand, describe_exit};

#[async_std::test]
async fn ten_mib_of_stderr_is_drained_and_only_the_tail_is_kept() {
    const TOTAL: u64 = 10 * 1024 * 1024;
    // 17-byte lines ("0123456789abcdef\n"), cut at exactly 10 MiB, then a marker line.
    let script =
        format!("yes 0123456789abcdef | head -c {TOTAL} >&2; printf '\\nend-marker\\n' >&2");
    let (mut child, _pipes) = spawn_sh(&script);

    // Without continuous draining the child would block on the full pipe and never exit.
    let status = bounded(
        Duration::from_secs(30),
        "exit of the stderr flood",
        child.wait(),
    )
    .await
    .unwrap();
    assert_eq!(describe_exit(status), "exited with status 0");

    let expected = TOTAL + "\nend-marker\n".len() as u64;
    let tail = child.stderr_tail().clone();
    assert!(
        eventually(|| tail.lock().unwrap().total_bytes() == expected).await,
        "drained {} of {expected} bytes",
        tail.lock().unwrap().total_bytes()
    );
    let tail = tail.lock().unwrap();
    let config = tail.config();
    assert!(tail.len() <= config.max_lines, "{} lines held", tail.len());
    assert!(
        tail.held_bytes() <= config.max_bytes,
        "{} bytes held",
        tail.held_bytes()
    );
    // 10 MiB / 17 leaves a partial line, ended by the marker's leading newline.
    assert_eq!(tail.total_lines(), TOTAL / 17 + 2);
    let last = tail.last_lines(3);
    assert_eq!(last[0], "0123456789abcdef");
    assert_eq!(last[1], &"0123456789abcdef"[..(TOTAL % 17) as usize]);
    assert_eq!(last[2], "end-marker");
}

#[async_std::test]
async fn env_is_merged_over_the_parents() {
    let parent_path = std::env::var("PATH").expect("PATH is set for tests");
    let spec = StdioCommand::new("sh")
        .args([
            "-c",
            r#"printf '%s|%s|%s' "$MCP_TEST_A" "$MCP_TEST_B" "$PATH""#,
        ])
        .env("MCP_TEST_A", "one")
        .env("MCP_TEST_B", "x")
        .env("MCP_TEST_B", "two");
    let (mut child, pipes) = spawn(spec);
    let out = read_all(pipes.stdout).await;
    assert_eq!(out, format!("one|two|{parent_path}"));
    bounded(BOUND, "exit", child.wait()).await.unwrap();
}

#[async_std::test]
async fn clear_env_leaves_only_the_given_entries() {
    let mut spec = StdioCommand::new("/usr/bin/env").env("MCP_TEST_ONLY", "1");
    spec.clear_env = true;
    let (mut child, pipes) = spawn(spec);
    assert_eq!(read_all(pipes.stdout).await, "MCP_TEST_ONLY=1\n");
    let status = bounded(BOUND, "exit", child.wait()).await.unwrap();
    assert!(status.success());
}

#[async_std::test]
async fn cwd_is_applied() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("mcp-async-std-cwd-test");
    std::fs::create_dir_all(&dir).unwrap();
    let dir = dir.canonicalize().unwrap();
    let mut spec = StdioCommand::new("sh").args(["-c", "pwd -P"]);
    spec.cwd = Some(dir.clone());
    let (mut child, pipes) = spawn(spec);
    assert_eq!(
        read_all(pipes.stdout).await.trim_end(),
        dir.to_str().unwrap()
    );
    bounded(BOUND, "exit", child.wait()).await.unwrap();
}

#[async_std::test]
async fn stdin_and_stdout_carry_bytes_and_closing_stdin_ends_a_cat() {
    use futures_util::AsyncWriteExt as _;
    let (mut child, mut pipes) = spawn(StdioCommand::new("cat"));
    pipes
        .stdin
        .write_all(b"{\"jsonrpc\":\"2.0\"}\n")
        .await
        .unwrap();
    pipes.stdin.flush().await.unwrap();
    drop(pipes.stdin);
    assert_eq!(read_all(pipes.stdout).await, "{\"jsonrpc\":\"2.0\"}\n");
    let status = bounded(BOUND, "cat exit after stdin closed", child.wait())
        .await
        .unwrap();
    assert!(status.success());
}
