//! A server whose `tools/list` has malformed entries (no `inputSchema`, no `name`): `mcp
//! tools` lists the valid tools and warns about each dropped one; `mcp call` of a dropped
//! tool says that its arguments go out untyped and its result unchecked, and the valid
//! tools keep their typing and `outputSchema` check. The server is a small Python script on
//! stdio, in the test's temp dir.

mod common;

use std::path::PathBuf;
use std::process::Output;

use common::python_server::{mcp_over_script, tools_server, write_script};
use serde_json::Value;

/// `echo` is valid (an integer `n`, an outputSchema that requires `n`: its results, which
/// carry `got`, break it); `stats` has no inputSchema; the third entry has no name.
const TOOLS: &str = r#"[
            {"name": "echo", "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}},
             "outputSchema": {"type": "object", "required": ["n"]}},
            {"name": "stats", "description": "its schema is missing"},
            {"description": "no name at all", "inputSchema": {"type": "object"}},
        ]"#;

/// A call answers its arguments as JSON text and as `structuredContent.got`.
const CALL_RESULT: &str = r#"{"content": [{"type": "text", "text": json.dumps(msg["params"].get("arguments", {}))}],
             "structuredContent": {"got": msg["params"].get("arguments", {})}}"#;

/// The server script, one file per test (tests run in parallel).
fn server_script(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mcp-cli-malformed-{}", std::process::id()));
    let script = tools_server("broken-tools", TOOLS, Some(CALL_RESULT));
    write_script(&dir, &format!("{test}.py"), &script)
}

/// `mcp ARGS -- python3 TEST.py`, without a terminal.
fn run(test: &str, args: &[&str]) -> Output {
    mcp_over_script(args, &server_script(test))
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn tools_lists_the_valid_tools_and_warns_about_each_dropped_one() {
    let o = run("tools", &["tools", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let listed: Value = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .expect("a tools array")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["echo"]);
    let err = stderr(&o);
    let warnings: Vec<&str> = err.lines().filter(|l| l.starts_with("warning: ")).collect();
    assert_eq!(warnings.len(), 2, "{err}");
    assert!(
        warnings[0].contains("`stats` is malformed and was dropped")
            && warnings[0].contains("inputSchema"),
        "{err}"
    );
    assert!(
        warnings[1].contains("the tool at index 2 is malformed") && warnings[1].contains("name"),
        "{err}"
    );
}

#[test]
fn calling_a_dropped_tool_says_it_goes_out_untyped_and_unchecked() {
    let o = run("call", &["call", "stats", "n=5"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout), r#"{"n": 5}"#);
    assert!(
        stderr(&o).contains(
            "warning: the server's tools/list entry of `stats` is malformed (missing field \
             `inputSchema`): its arguments are sent untyped and its result is not checked"
        ),
        "{}",
        stderr(&o)
    );
    // A valid tool of the same listing keeps its checks: its result breaks its outputSchema.
    let o = run("call", &["call", "echo", "n=5"]);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(stderr(&o).contains("outputSchema"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("sent untyped"), "{}", stderr(&o));
}
