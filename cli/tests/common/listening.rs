//! A Streamable HTTP server of the built binary for a test: `mcp demo-server --listen` or
//! `mcp bridge --listen`, on 127.0.0.1 with a port the OS picks.

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;

use super::bridge_host::{GUARD, MCP};

/// A running `mcp … --listen 127.0.0.1:0` and its URL; killed on drop.
pub struct Listening {
    pub child: Child,
    pub url: String,
    /// Every line of its stderr after the URL (`mcp demo-server: slow: cancelled`, …).
    pub stderr: mpsc::Receiver<String>,
}

impl Listening {
    /// `mcp demo-server --listen 127.0.0.1:0`.
    pub fn demo() -> Self {
        Self::demo_with(&[], &[])
    }

    /// `mcp demo-server --listen 127.0.0.1:0 ARGS` (`--conformance`, `--stateless`, …), with
    /// `env` added to its environment.
    pub fn demo_with(args: &[&str], env: &[(&str, &str)]) -> Self {
        let mut all = vec!["demo-server", "--listen", "127.0.0.1:0"];
        all.extend_from_slice(args);
        Self::spawn(&all, env)
    }

    /// `mcp bridge --listen 127.0.0.1:0 ARGS` (its upstream and options in `args`), with `env`
    /// added to its environment.
    pub fn bridge(args: &[&str], env: &[(&str, &str)]) -> Self {
        let mut all = vec!["bridge", "--listen", "127.0.0.1:0"];
        all.extend_from_slice(args);
        Self::spawn(&all, env)
    }

    /// Starts `mcp ARGS` and waits for the URL it prints as its first line on stderr (both
    /// commands print it, alone, once the port is bound); its stderr is read on from then
    /// on, so the server never blocks on it.
    fn spawn(args: &[&str], env: &[(&str, &str)]) -> Self {
        let mut child = Command::new(MCP)
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn mcp {args:?}: {e}"));
        let stderr = child.stderr.take().expect("piped stderr");
        let (url_tx, url) = mpsc::channel();
        let (lines_tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            let mut stderr = BufReader::new(stderr).lines().map_while(Result::ok);
            let _ = url_tx.send(stderr.next());
            for line in stderr {
                // Read on (and dropped) once the test no longer listens.
                let _ = lines_tx.send(line);
            }
        });
        let first = url
            .recv_timeout(GUARD)
            .expect("the first line on stderr within the guard")
            .unwrap_or_default();
        let url = first.trim().to_owned();
        assert!(
            url.starts_with("http://"),
            "no URL first on stderr: {first:?}"
        );
        Listening {
            child,
            url,
            stderr: lines,
        }
    }

    /// Waits (within the guard) for a stderr line containing `text`.
    pub fn wait_stderr(&self, text: &str) {
        let started = std::time::Instant::now();
        loop {
            let left = GUARD.saturating_sub(started.elapsed());
            match self.stderr.recv_timeout(left) {
                Ok(line) if line.contains(text) => return,
                Ok(_) => {}
                Err(_) => panic!("the server never said {text:?}"),
            }
        }
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `mcp demo-server --listen ADDR` (a port a test freed, to bring a server back), waited for
/// until it prints its URL; killed when dropped.
pub fn demo_listening_on(addr: &str) -> super::bridge_host::Reaped {
    let mut child = Command::new(MCP)
        .args(["demo-server", "--listen", addr])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn mcp demo-server --listen");
    let mut first = String::new();
    BufReader::new(child.stderr.take().expect("piped stderr"))
        .read_line(&mut first)
        .expect("its URL line");
    assert!(first.contains("http://"), "{first}");
    super::bridge_host::Reaped(child)
}
