//! The harness: a host on the bridge's stdio, and the config file it serves.

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The anti-hang guard of every wait (never reached when the bridge works).
pub const GUARD: Duration = Duration::from_secs(30);

pub const MCP: &str = env!("CARGO_BIN_EXE_mcp");

/// A fresh directory for one test: its config file, tool cache and stderr.
pub fn test_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mcp-bridge-config-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
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

/// The bridge process with the host's end of its stdio; stderr goes to `stderr.txt`.
pub struct Host {
    pub child: Child,
    pub stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Value>,
    pub dir: PathBuf,
    next_id: i64,
}

impl Host {
    pub fn start(dir: &Path, extra: &[&str]) -> Self {
        let config = dir.join("servers.json");
        let stderr = std::fs::File::create(dir.join("stderr.txt")).expect("stderr file");
        let mut child = Command::new(MCP)
            .args(["bridge", "--config"])
            .arg(&config)
            .args(extra)
            // A tool cache of the test's own.
            .env("XDG_CACHE_HOME", dir.join("cache"))
            .env("MCP_TOKEN_STORE", dir.join("tokens.json"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("spawn mcp bridge");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                let value = serde_json::from_str(&line).unwrap_or_else(|e| {
                    panic!("stdout carries only JSON-RPC lines: {line:?}: {e}")
                });
                if tx.send(value).is_err() {
                    return;
                }
            }
        });
        let stdin = child.stdin.take();
        Host {
            child,
            stdin,
            lines,
            dir: dir.to_owned(),
            next_id: 1,
        }
    }

    pub fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{message}").expect("write to the bridge");
        stdin.flush().expect("flush");
    }

    pub fn recv(&self) -> Value {
        self.lines
            .recv_timeout(GUARD)
            .expect("the bridge wrote a line before the guard")
    }

    /// Sends a request; returns its id.
    pub fn request(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// The answer to `id`, with every line before it.
    pub fn answer(&self, id: i64) -> (Value, Vec<Value>) {
        let mut before = Vec::new();
        loop {
            let line = self.recv();
            if line["id"] == id && line.get("method").is_none() {
                return (line, before);
            }
            before.push(line);
        }
    }

    /// Sends a request and returns its result (panics on an error answer).
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.request(method, params);
        let (answer, _) = self.answer(id);
        assert!(answer.get("error").is_none(), "{method}: {answer}");
        answer["result"].clone()
    }

    /// Lines until one with `method`, which is returned.
    pub fn until(&self, method: &str) -> Value {
        loop {
            let line = self.recv();
            if line["method"] == method {
                return line;
            }
        }
    }

    pub fn initialize(&mut self, capabilities: &Value) -> Value {
        self.initialize_at("2025-06-18", capabilities)
    }

    /// `initialize` asking for protocol `version`.
    pub fn initialize_at(&mut self, version: &str, capabilities: &Value) -> Value {
        let result = self.call(
            "initialize",
            json!({"protocolVersion": version, "capabilities": capabilities,
                "clientInfo": {"name": "host-app", "version": "3.1"}}),
        );
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        result
    }

    pub fn tool_names(&mut self) -> Vec<String> {
        let result = self.call("tools/list", json!({}));
        names(&result["tools"])
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(self.dir.join("stderr.txt")).unwrap_or_default()
    }

    /// Closes stdin and waits for the exit status.
    pub fn finish(mut self) -> i32 {
        drop(self.stdin.take());
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status.code().unwrap_or(-1);
            }
            assert!(
                started.elapsed() < GUARD,
                "the bridge did not exit after stdin closed"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

pub fn names(list: &Value) -> Vec<String> {
    list.as_array()
        .expect("a list")
        .iter()
        .map(|t| t["name"].as_str().expect("a name").to_owned())
        .collect()
}

pub fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}
