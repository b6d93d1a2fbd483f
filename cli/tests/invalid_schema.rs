//! A server whose tool has an input schema that is not valid JSON Schema (`x` of `"type":
//! "nonsense"`): `mcp tools` still lists it (`x: nonsense`) but warns on stderr, naming the
//! tool and the property, as `mcp lint` flags it (`invalid-schema`); `mcp call` of that tool
//! warns the same way, and a tool with a valid schema is called without a word. The server is
//! a small Python script on stdio, in the test's temp dir.

mod common;

use std::path::PathBuf;
use std::process::Output;

use common::python_server::{mcp_over_script, tools_server, write_script};
use serde_json::Value;

/// `weird` takes `x` of an unknown type and `n` (an integer); `fine` is valid.
const TOOLS: &str = r#"[
            {"name": "weird", "description": "x has no real type",
             "inputSchema": {"type": "object", "properties": {
                 "x": {"type": "nonsense"}, "n": {"type": "integer"}}}},
            {"name": "fine", "description": "valid",
             "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}}},
        ]"#;

/// A call answers its arguments as JSON text.
const CALL_RESULT: &str = r#"{"content": [{"type": "text",
             "text": json.dumps(msg["params"].get("arguments", {}), sort_keys=True)}]}"#;

/// The server script, one file per test (tests run in parallel).
fn server_script(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mcp-cli-invalid-schema-{}", std::process::id()));
    let script = tools_server("odd-schemas", TOOLS, Some(CALL_RESULT));
    write_script(&dir, &format!("{test}.py"), &script)
}

/// `mcp ARGS -- python3 TEST.py`, without a terminal.
fn run(test: &str, args: &[&str]) -> Output {
    mcp_over_script(args, &server_script(test))
}

/// The `warning:` lines of `o`'s stderr.
fn warnings(o: &Output) -> Vec<String> {
    String::from_utf8_lossy(&o.stderr)
        .lines()
        .filter(|l| l.starts_with("warning: "))
        .map(str::to_owned)
        .collect()
}

/// The one warning about `weird`'s `x`, as `tools` and `call` both say it.
fn assert_names_weird_and_x(warnings: &[String]) {
    assert_eq!(warnings.len(), 1, "{warnings:#?}");
    let w = &warnings[0];
    assert!(w.contains("`weird`"), "{w}");
    assert!(w.contains("property `x`"), "{w}");
    assert!(w.contains("\"nonsense\" is not a JSON Schema type"), "{w}");
    assert!(w.contains("mcp lint"), "{w}");
}

#[test]
fn tools_lists_the_tool_and_warns_about_its_invalid_property() {
    let o = run("tools", &["tools"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let listed = String::from_utf8_lossy(&o.stdout);
    assert!(listed.contains("x: nonsense"), "{listed}");
    assert_names_weird_and_x(&warnings(&o));
    // The same with --json: stdout stays the listing, the warning goes to stderr.
    let o = run("tools-json", &["--json", "tools"]);
    assert_eq!(o.status.code(), Some(0));
    let listed: Value = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
    assert_eq!(
        listed["tools"].as_array().map(Vec::len),
        Some(2),
        "{listed}"
    );
    assert_names_weird_and_x(&warnings(&o));
}

#[test]
fn calling_the_tool_warns_and_a_valid_one_says_nothing() {
    let o = run("call", &["call", "weird", "x=5", "n=7"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&o.stdout), r#"{"n": 7, "x": 5}"#);
    assert_names_weird_and_x(&warnings(&o));
    let o = run("call-fine", &["call", "fine", "n=7"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(warnings(&o), Vec::<String>::new());
}
