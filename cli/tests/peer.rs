//! The built `mcp` against a real peer: the FastMCP server of PyPI `mcp` 1.30.0
//! (`tests/peers/py_server.py`) over stdio.
//!
//! The peer's paths come from `.peers/env.sh` (`MCP_PEER_PYTHON`, `MCP_PEER_PY_SERVER`), which
//! `scripts/test` sources. Without them the test fails, naming `scripts/test`, unless
//! `MCP_SKIP_INTEROP=1` is set (then it says it was skipped and passes).

use std::process::{Command, Output, Stdio};

use serde_json::Value;

const MCP: &str = env!("CARGO_BIN_EXE_mcp");

/// `(python, py_server.py)`, or `None` when skipping was asked for.
fn peer() -> Option<(String, String)> {
    let python = std::env::var("MCP_PEER_PYTHON").ok();
    let server = std::env::var("MCP_PEER_PY_SERVER").ok();
    match (python, server) {
        (Some(p), Some(s)) if !p.is_empty() && !s.is_empty() => Some((p, s)),
        _ if std::env::var("MCP_SKIP_INTEROP").as_deref() == Ok("1") => {
            eprintln!("skipped: MCP_SKIP_INTEROP=1 and no MCP_PEER_PYTHON / MCP_PEER_PY_SERVER");
            None
        }
        _ => panic!(
            "MCP_PEER_PYTHON and MCP_PEER_PY_SERVER are not set: run `scripts/test` (it installs \
             the peers and sources .peers/env.sh), or set MCP_SKIP_INTEROP=1 to skip this test"
        ),
    }
}

fn run(peer: &(String, String), args: &[&str]) -> Output {
    let o = Command::new(MCP)
        .args(args)
        .args(["--", &peer.0, &peer.1, "stdio"])
        .env("COLUMNS", "80")
        .stdin(Stdio::null())
        .output()
        .expect("run mcp");
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "mcp {args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).expect("stdout is JSON")
}

#[test]
fn tools_call_resources_prompts_against_the_python_sdk() {
    let Some(peer) = peer() else { return };

    let o = run(&peer, &["tools"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.starts_with("NAME "), "{text}");
    assert!(text.contains("\nadd "), "{text}");
    assert!(
        text.contains("\nadd\n  a: integer (required)")
            || text.contains("\nadd\n  a: number (required)"),
        "{text}"
    );
    let tools = json(&run(&peer, &["tools", "--json"]));
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    for want in ["echo", "add", "slow", "fail"] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }

    let o = run(&peer, &["call", "add", "a=2", "b=3"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).starts_with('5'));
    let v = json(&run(&peer, &["call", "add", "a=2", "b=3", "--json"]));
    assert_eq!(v["structuredContent"]["result"].as_f64(), Some(5.0), "{v}");
    let o = run(&peer, &["call", "fail"]);
    assert_eq!(o.status.code(), Some(1));

    let v = json(&run(&peer, &["resources", "--json"]));
    assert_eq!(v["resources"][0]["uri"], "demo://greeting", "{v}");
    assert_eq!(
        v["resourceTemplates"][0]["uriTemplate"], "demo://item/{id}",
        "{v}"
    );
    let o = run(&peer, &["resources"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("demo://greeting"));

    let v = json(&run(&peer, &["prompts", "--json"]));
    assert_eq!(v["prompts"][0]["name"], "greet", "{v}");
    let o = run(&peer, &["prompts"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("greet  name"));
}

#[test]
fn the_shell_lists_the_tools_again_when_the_server_says_they_changed() {
    let Some(peer) = peer() else { return };
    let mut child = Command::new(MCP)
        .args(["-v", "shell", "--", &peer.0, &peer.1, "stdio"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run mcp shell");
    let input = "call echo text=a\ncall echo text=b\ncall notify_list_changed\ncall echo text=c\n";
    std::io::Write::write_all(&mut child.stdin.take().expect("piped"), input.as_bytes())
        .expect("shell stdin");
    let o = child.wait_with_output().expect("mcp shell output");
    let trace = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{trace}");
    let sent: Vec<String> = trace
        .lines()
        .filter_map(|l| l.strip_prefix("-> "))
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|m| m.get("id").is_some())
        .filter_map(|m| m["method"].as_str().map(str::to_owned))
        .collect();
    let calls: Vec<usize> = (0..sent.len())
        .filter(|&i| sent[i] == "tools/call")
        .collect();
    assert_eq!(calls.len(), 4, "{sent:?}");
    let listed = |from: usize, to: usize| sent[from..to].iter().any(|m| m == "tools/list");
    assert!(listed(0, calls[0]), "listed at the start: {sent:?}");
    assert!(!listed(calls[0], calls[2]), "not listed again: {sent:?}");
    // `notifications/tools/list_changed` came with the third call: the fourth does not use
    // the old listing.
    assert!(
        listed(calls[2], calls[3]),
        "listed after the change: {sent:?}"
    );
}
