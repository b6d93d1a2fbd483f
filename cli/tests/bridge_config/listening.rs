//! The harness of the `--listen` tests: `mcp bridge --config FILE --listen 127.0.0.1:0` in a
//! scratch directory of the test's own, and a runtime and helpers for host sessions.

use std::path::{Path, PathBuf};
use std::process::Command;

use mcp_tokio::types::CallToolResult;

use crate::common::listening::Listening;
use crate::host::{GUARD, MCP, test_dir, write_config};

/// Serves [`write_config`]'s servers (`alpha`, `beta`, `broken`) with `extra` options.
pub fn listen_on_config(name: &str, extra: &[&str]) -> Listening {
    listen_on_config_with(name, extra, write_config)
}

/// Serves two npm server-everything servers (`one`, `two`), started by `everything`.
pub fn listen_on_everything(name: &str, everything: &[String]) -> Listening {
    listen_on_config_with(name, &[], |dir| {
        crate::tasks::write_everything_config(dir, everything);
        dir.join("servers.json")
    })
}

/// `mcp bridge --config FILE --listen 127.0.0.1:0 EXTRA` for the config file `write` writes
/// into the test's scratch directory (its path returned), with a tool cache there. The
/// bridge prints its URL once the servers' start is over, after what they wrote on stderr
/// meanwhile (in `before_url`). Dropping it (also when a test fails) kills the bridge, then
/// removes the directory.
pub fn listen_on_config_with(
    name: &str,
    extra: &[&str],
    write: impl FnOnce(&Path) -> PathBuf,
) -> Listening {
    let dir = test_dir(name);
    let config = write(&dir);
    let mut command = Command::new(MCP);
    command
        .args(["bridge", "--listen", "127.0.0.1:0"])
        .args(extra)
        .arg("--config")
        .arg(config)
        .env("XDG_CACHE_HOME", dir.join("cache"));
    Listening::spawn(command).in_dir(dir)
}

/// A test's directory, removed when dropped.
pub struct ScratchDir(pub PathBuf);

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `f`'s output, within the anti-hang guard.
pub async fn within<T>(f: impl Future<Output = T>) -> T {
    tokio::time::timeout(GUARD, f)
        .await
        .expect("an answer before the guard")
}

/// The text of every text item of a tool result's content, one per line.
pub fn tool_text(result: &CallToolResult) -> String {
    serde_json::to_value(&result.content)
        .expect("content")
        .as_array()
        .expect("a list")
        .iter()
        .filter_map(|c| c["text"].as_str().map(str::to_owned))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs `body` on a runtime of its own, for the host sessions' clients.
pub fn on_runtime<T>(body: impl Future<Output = T>) -> T {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime")
        .block_on(body)
}
