//! The era probe's one respawn, as `mcp --config FILE tools --all` (and `mcp tools -- CMD`)
//! meets it over stdio: the client first sends `server/discover`, and a server that exits on
//! it (an old one) is started again and spoken to with `initialize`. A server that crashes
//! at start-up exits too, but it read nothing of what it was sent: it is started once, and
//! its failure reported, not started twice.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::json;

const MCP: &str = env!("CARGO_BIN_EXE_mcp");

/// A fresh directory for one test.
fn dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mcp-cli-era-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temp dir");
    dir
}

/// An old server: it exits (status 1) on `server/discover` after reading it, as servers that
/// know nothing of the probe do; with `initialize` first it serves one tool, `legacy_echo`.
const OLD_SERVER: &str = r#"
import json, sys
for line in sys.stdin:
    if not line.strip():
        continue
    msg = json.loads(line)
    m, i = msg.get("method"), msg.get("id")
    if m == "server/discover":
        sys.stderr.write("unknown method server/discover\n")
        sys.exit(1)
    if i is None:
        continue
    if m == "initialize":
        r = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
             "serverInfo": {"name": "old", "version": "1"}}
    elif m == "tools/list":
        r = {"tools": [{"name": "legacy_echo", "description": "echoes",
                        "inputSchema": {"type": "object"}}]}
    else:
        print(json.dumps({"jsonrpc": "2.0", "id": i, "error": {"code": -32601, "message": "no"}}), flush=True)
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": i, "result": r}), flush=True)
"#;

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
    let config = json!({"mcpServers": {name: {"command": server[0], "args": server[1..]}}});
    let path = dir.join("servers.json");
    std::fs::write(&path, config.to_string()).expect("write config");
    Command::new(MCP)
        .arg("--config")
        .arg(&path)
        .args(["tools", "--all"])
        .env("COLUMNS", "100")
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .stdin(Stdio::null())
        .output()
        .expect("run mcp")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn a_server_that_crashes_at_start_up_is_started_once() {
    let d = dir("crash");
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
    let d = dir("old");
    let script = d.join("old.py");
    std::fs::write(&script, OLD_SERVER).expect("write the server");
    let old = counted(&d, &format!("exec python3 '{}'", script.display()));
    let o = tools_all(&d, "old", &old);
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "{out}\n{err}");
    assert!(out.contains("old__legacy_echo"), "{out}");
    assert!(out.contains("old: ready (1 tool)"), "{out}");
    assert_eq!(starts(&d), 2, "started again after the probe: {err}");
    let _ = std::fs::remove_dir_all(&d);
}
