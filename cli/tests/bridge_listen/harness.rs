//! The running `mcp bridge --listen` of a test: started in front of `mcp demo-server`
//! through `sh`, which records each child's process group and what the bridge sent it.

use std::ops::{Deref, DerefMut};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

pub use crate::common::bridge_host::{GUARD, MCP};
use crate::common::bridge_host::{group_alive, scratch_dir};
use crate::common::listening::Listening;

/// The running `mcp bridge --listen` (its URL, its stderr, its scratch directory:
/// [`Listening`]); dropping it also kills every child's process group.
pub struct Listener(Listening);

impl Deref for Listener {
    type Target = Listening;

    fn deref(&self) -> &Listening {
        &self.0
    }
}

impl DerefMut for Listener {
    fn deref_mut(&mut self) -> &mut Listening {
        &mut self.0
    }
}

impl Listener {
    /// Starts `mcp bridge --listen 127.0.0.1:0 [extra] -- sh -c '…demo-server'`; every child
    /// appends its process group id to `groups` and its input to `upstream.log`.
    pub fn start(name: &str, extra: &[&str], env: &[(&str, &str)]) -> Self {
        let dir = scratch_dir("bridge-listen", name);
        let script = format!(
            "echo $$ >> '{groups}'; tee -a '{log}' | '{MCP}' demo-server",
            groups = dir.join("groups").display(),
            log = dir.join("upstream.log").display(),
        );
        let mut args = extra.to_vec();
        args.extend(["--", "sh", "-c", &script]);
        Listener(Listening::bridge(&args, env).in_dir(dir))
    }

    /// The live children's process groups.
    pub fn live_groups(&self) -> Vec<i32> {
        std::fs::read_to_string(self.dir().join("groups"))
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
        std::fs::read_to_string(self.dir().join("upstream.log"))
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
        let _ = self.0.child.kill();
        let _ = self.0.child.wait();
        for g in self.live_groups() {
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{g}")])
                .status();
        }
        // The directory goes with the `Listening`.
    }
}
