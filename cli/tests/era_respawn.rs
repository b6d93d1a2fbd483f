//! The era probe's one respawn, as `mcp --config FILE tools --all` (and `mcp tools -- CMD`)
//! meets it over stdio: the client first sends `server/discover`, and a server that exits on
//! it (an old one) is started again and spoken to with `initialize`. A server that crashes
//! at start-up exits too, but it read nothing of what it was sent: it is started once, and
//! its failure reported, not started twice.

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use common::bridge_host::{MCP, scratch_dir};
use common::python_server::{tools_server_exiting_on, write_script};
use common::run::{mcp_in, text, write_servers};
use serde_json::json;

/// An old server: it exits (status 1) on `server/discover` after reading it, as servers that
/// know nothing of the probe do; with `initialize` first it serves one tool, `legacy_echo`.
fn old_server() -> String {
    tools_server_exiting_on(
        "old",
        r#"[{"name": "legacy_echo", "description": "echoes", "inputSchema": {"type": "object"}}]"#,
        "server/discover",
    )
}

/// `sh -c` that appends a line to `dir/starts` each time it starts, then runs `then`.
fn counted(dir: &Path, then: &str) -> Vec<String> {
    let script = format!("echo start >> '{}'; {then}", dir.join("starts").display());
    vec!["sh".into(), "-c".into(), script]
}

/// How many times the server was started.
fn starts(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("starts"))
        .unwrap_or_default()
        .lines()
        .count()
}

/// `mcp --config dir/servers.json tools --all` with `server` as the file's one entry `name`.
fn tools_all(dir: &Path, name: &str, server: &[String]) -> Output {
    let path = write_servers(
        dir,
        json!({name: {"command": server[0], "args": server[1..]}}),
    );
    let path = path.to_str().expect("a UTF-8 path");
    mcp_in(dir, &["--config", path, "tools", "--all"])
}

#[test]
fn a_server_that_crashes_at_start_up_is_started_once() {
    let d = scratch_dir("cli-era", "crash");
    let crash = counted(&d, "echo boom >&2; exit 1");
    let o = tools_all(&d, "crash", &crash);
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert_eq!(o.status.code(), Some(3), "{out}\n{err}");
    assert!(
        out.contains("crash: failed: exited with code 1: boom"),
        "{out}"
    );
    assert_eq!(starts(&d), 1, "{err}");

    // The same with one server on the command line.
    let o = Command::new(MCP)
        .arg("tools")
        .arg("--")
        .args(&crash)
        .stdin(Stdio::null())
        .output()
        .expect("run mcp");
    assert_ne!(o.status.code(), Some(0));
    assert!(text(&o.stderr).contains("boom"), "{}", text(&o.stderr));
    assert_eq!(starts(&d), 2, "one more start: {}", text(&o.stderr));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn an_old_server_that_exits_on_the_probe_gets_its_initialize_retry() {
    let d = scratch_dir("cli-era", "old");
    let script = write_script(&d, "old.py", &old_server());
    let old = counted(&d, &format!("exec python3 '{}'", script.display()));
    let o = tools_all(&d, "old", &old);
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "{out}\n{err}");
    assert!(out.contains("old__legacy_echo"), "{out}");
    assert!(out.contains("old: ready (1 tool)"), "{out}");
    assert_eq!(starts(&d), 2, "started again after the probe: {err}");
    let _ = std::fs::remove_dir_all(&d);
}
