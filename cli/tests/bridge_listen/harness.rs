//! The running `mcp bridge --listen` of a test: started in front of `mcp demo-server`
//! through `sh`, which records each child's process group and what the bridge sent it.

use std::io::{BufRead as _, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::bridge_host::group_alive;

/// The anti-hang guard of every wait (never reached when the bridge works).
pub const GUARD: Duration = Duration::from_secs(30);

pub const MCP: &str = env!("CARGO_BIN_EXE_mcp");

fn test_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mcp-bridge-listen-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// The running `mcp bridge --listen`, its URL and its scratch directory.
pub struct Listener {
    pub child: Child,
    pub url: String,
    pub dir: PathBuf,
    /// The reader of stderr after the URL line: it ends with the bridge and returns the lines.
    pub stderr: Option<std::thread::JoinHandle<Vec<String>>>,
}

impl Listener {
    /// Starts `mcp bridge --listen 127.0.0.1:0 [extra] -- sh -c '…demo-server'`; every child
    /// appends its process group id to `groups` and its input to `upstream.log`.
    pub fn start(name: &str, extra: &[&str], env: &[(&str, &str)]) -> Self {
        let dir = test_dir(name);
        let script = format!(
            "echo $$ >> '{groups}'; tee -a '{log}' | '{MCP}' demo-server",
            groups = dir.join("groups").display(),
            log = dir.join("upstream.log").display(),
        );
        let mut child = Command::new(MCP)
            .args(["bridge", "--listen", "127.0.0.1:0"])
            .args(extra)
            .args(["--", "sh", "-c", &script])
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn mcp bridge --listen");
        let mut stderr = BufReader::new(child.stderr.take().expect("piped stderr"));
        let mut line = String::new();
        stderr
            .read_line(&mut line)
            .expect("the bridge's first line");
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no URL in {line:?}"))
            .to_owned();
        // The rest of stderr goes on to the test's own, and is kept for `stop`.
        let stderr = std::thread::spawn(move || {
            let mut lines = Vec::new();
            for line in stderr.lines().map_while(Result::ok) {
                eprintln!("{line}");
                lines.push(line);
            }
            lines
        });
        Listener {
            child,
            url,
            dir,
            stderr: Some(stderr),
        }
    }

    /// The live children's process groups.
    pub fn live_groups(&self) -> Vec<i32> {
        std::fs::read_to_string(self.dir.join("groups"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .filter(|&g| group_alive(g))
            .collect()
    }

    /// Waits until `n` children are alive and returns their groups.
    pub fn wait_groups(&self, n: usize) -> Vec<i32> {
        let started = Instant::now();
        loop {
            let live = self.live_groups();
            if live.len() == n {
                return live;
            }
            assert!(
                started.elapsed() < GUARD,
                "expected {n} live children, have {live:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn upstream_log(&self) -> Vec<Value> {
        std::fs::read_to_string(self.dir.join("upstream.log"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    pub fn wait_upstream(&self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        let started = Instant::now();
        loop {
            if let Some(m) = self.upstream_log().into_iter().find(|m| pred(m)) {
                return m;
            }
            assert!(
                started.elapsed() < GUARD,
                "the server never got {what}: {:?}",
                self.upstream_log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        for g in self.live_groups() {
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{g}")])
                .status();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Listener {
    /// Sends `signal` (`-TERM`, `-INT`) to the bridge and waits for it to exit: its status
    /// and what it printed on stderr after the URL.
    pub fn stop(&mut self, signal: &str) -> (std::process::ExitStatus, Vec<String>) {
        let sent = Command::new("kill")
            .args([signal, &self.child.id().to_string()])
            .status()
            .expect("run kill");
        assert!(sent.success());
        let started = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                break status;
            }
            assert!(
                started.elapsed() < GUARD,
                "the bridge did not exit on {signal}"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        let lines = self
            .stderr
            .take()
            .expect("stopped once")
            .join()
            .expect("the stderr reader");
        (status, lines)
    }
}
