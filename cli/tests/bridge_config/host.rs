//! The harness: the config file the bridge serves, and the bridge started on it with a host
//! ([`BridgeHost`]) on its stdio.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

pub use crate::common::bridge_host::{BridgeHost, GUARD, MCP, names};
use crate::common::bridge_host::{scratch_dir, stderr_file};

/// A fresh directory for one test: its config file, tool cache and stderr.
pub fn test_dir(name: &str) -> PathBuf {
    scratch_dir("bridge-config", name)
}

/// Writes the config file: `alpha` (a demo server that writes its pid to `alpha.pid`, so a
/// test can kill it), `beta` (a demo server) and `broken` (no such program).
pub fn write_config(dir: &Path) -> PathBuf {
    let pid_file = dir.join("alpha.pid");
    let alpha = format!(
        "echo $$ > '{}'; exec '{MCP}' demo-server",
        pid_file.display()
    );
    let config = json!({"mcpServers": {
        "alpha": {"command": "sh", "args": ["-c", alpha]},
        "beta": {"command": MCP, "args": ["demo-server"]},
        "broken": {"command": dir.join("no-such-server").display().to_string()},
    }});
    let path = dir.join("servers.json");
    std::fs::write(&path, config.to_string()).expect("write config");
    path
}

/// Writes `dir/servers.json` with `servers` as its `mcpServers`.
pub fn write_servers(dir: &Path, servers: Value) {
    let config = json!({ "mcpServers": servers });
    std::fs::write(dir.join("servers.json"), config.to_string()).expect("write config");
}

/// `mcp bridge --config servers.json EXTRA` in `dir`, with a tool cache and token store of
/// the test's own; its stderr goes to `stderr.txt` ([`BridgeHost::stderr`]).
pub fn start_bridge(dir: &Path, extra: &[&str]) -> BridgeHost {
    let mut command = Command::new(MCP);
    command
        .args(["bridge", "--config"])
        .arg(dir.join("servers.json"))
        .args(extra)
        // A tool cache of the test's own.
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .env("MCP_TOKEN_STORE", dir.join("tokens.json"))
        .stderr(stderr_file(dir));
    BridgeHost::spawn(command, dir.to_owned())
}

pub fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}
