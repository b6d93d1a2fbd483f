//! The built `mcp` against tiny misbehaving stdio servers (bash scripts): an answer that is
//! not UTF-8, an answer cut off mid-JSON, an error with `"id": null`. Each call fails at once
//! with a clear error (an anti-hang guard of 20 s, far below the 60 s `--timeout` given), and
//! an undecodable answer is an invalid answer (exit 4), not a lost connection.

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::run::stderr;

const MCP: &str = env!("CARGO_BIN_EXE_mcp");

/// A stdio server in bash: answers `initialize` and `tools/list` properly, and every
/// `tools/call` with `$ANSWER` (printf format, `%s` is the request id).
const SERVER: &str = r#"
while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
  case "$line" in
    *'"method":"initialize"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"hostile","version":"1"}}}\n' "$id" ;;
    *'"method":"tools/list"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}}\n' "$id" ;;
    *'"method":"tools/call"'*)
      printf "$ANSWER" "$id" ;;
  esac
done
"#;

fn call_against(answer: &str) -> (Output, Duration) {
    let start = Instant::now();
    let o = Command::new(MCP)
        .args(["--timeout", "60s", "call", "t", "--", "bash", "-c", SERVER])
        .env("ANSWER", answer)
        .stdin(Stdio::null())
        .output()
        .expect("run mcp");
    (o, start.elapsed())
}

#[test]
fn an_answer_that_is_not_utf8_fails_the_call_at_once() {
    let (o, took) = call_against(
        "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"\\377\\376\"}]}}\n",
    );
    assert!(took < Duration::from_secs(20), "took {took:?}");
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("tools/call: the answer is not valid UTF-8"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn an_answer_cut_off_mid_json_fails_the_call_at_once() {
    let (o, took) = call_against("{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"ty\n");
    assert!(took < Duration::from_secs(20), "took {took:?}");
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("the answer is not a valid JSON-RPC response"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn an_error_with_a_null_id_fails_the_one_pending_call() {
    let (o, took) = call_against(
        "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error\"}}\n%.0s",
    );
    assert!(took < Duration::from_secs(20), "took {took:?}");
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(stderr(&o).contains("Parse error"), "{}", stderr(&o));
}
