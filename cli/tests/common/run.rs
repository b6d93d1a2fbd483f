//! The built `mcp` run once (with the server its arguments name, or against `mcp
//! demo-server`, which it spawns over stdio), and its output read as text.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

const MCP: &str = env!("CARGO_BIN_EXE_mcp");

/// `mcp ARGS` (any server it needs is in ARGS), without a terminal, stdin closed: its exit
/// status and output.
pub fn mcp(args: &[&str]) -> Output {
    Command::new(MCP)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run mcp")
}

/// `mcp ARGS` in the test directory `dir` (a `--config` run, say): 100 columns, a tool
/// cache of the test's own (`dir/cache`), stdin closed.
pub fn mcp_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(MCP)
        .args(args)
        .env("COLUMNS", "100")
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .stdin(Stdio::null())
        .output()
        .expect("run mcp")
}

/// Writes `{"mcpServers": servers}` as `dir/servers.json` and returns its path.
pub fn write_servers(dir: &Path, servers: Value) -> PathBuf {
    let path = dir.join("servers.json");
    let config = json!({ "mcpServers": servers });
    std::fs::write(&path, config.to_string()).expect("write config");
    path
}

/// `mcp ARGS -- <mcp> demo-server`, without a terminal: its exit status and output.
pub fn demo(args: &[&str]) -> Output {
    Command::new(MCP)
        .args(args)
        .args(["--", MCP, "demo-server"])
        .stdin(Stdio::null())
        .output()
        .expect("run mcp")
}

/// Output bytes as text (invalid UTF-8 replaced).
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Its standard output as text.
pub fn stdout(o: &Output) -> String {
    text(&o.stdout)
}

/// Its standard error as text.
pub fn stderr(o: &Output) -> String {
    text(&o.stderr)
}

/// The whole of stdout as one JSON value (a test failure naming stdout and stderr when it
/// is not).
pub fn json_out(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not one JSON value ({e}): {}\nstderr: {}",
            stdout(o),
            stderr(o)
        )
    })
}
