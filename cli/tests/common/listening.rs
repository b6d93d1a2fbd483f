//! A Streamable HTTP server of the built binary for a test: `mcp demo-server --listen` or
//! `mcp bridge --listen`, on 127.0.0.1 with a port the OS picks (or an address given).

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::bridge_host::{GUARD, MCP};

/// A running `mcp … --listen`, its URL and its stderr; killed on drop, then its scratch
/// directory (if it was given one) removed.
pub struct Listening {
    pub child: Child,
    /// The URL it printed on stderr once its port was bound.
    pub url: String,
    /// The lines it printed on stderr before its URL.
    pub before_url: Vec<String>,
    /// Every line of its stderr after the URL (`mcp demo-server: slow: cancelled`, …); it
    /// ends when the last writer of that stderr (the process, the children it gave it) ends.
    pub stderr: mpsc::Receiver<String>,
    /// The test's scratch directory ([`in_dir`](Self::in_dir)).
    scratch: Option<PathBuf>,
}

impl Listening {
    /// `mcp demo-server --listen 127.0.0.1:0`.
    pub fn demo() -> Self {
        Self::demo_with(&[], &[])
    }

    /// `mcp demo-server --listen 127.0.0.1:0 ARGS` (`--conformance`, `--stateless`, …), with
    /// `env` added to its environment; its URL is its first line on stderr.
    pub fn demo_with(args: &[&str], env: &[(&str, &str)]) -> Self {
        let mut all = vec!["demo-server", "--listen", "127.0.0.1:0"];
        all.extend_from_slice(args);
        Self::start(&all, env).url_first()
    }

    /// `mcp demo-server --listen ADDR` (a port a test freed, to bring a server back).
    pub fn demo_on(addr: &str) -> Self {
        Self::start(&["demo-server", "--listen", addr], &[]).url_first()
    }

    /// `mcp bridge --listen 127.0.0.1:0 ARGS` (its upstream and options in `args`), with `env`
    /// added to its environment; its URL is its first line on stderr.
    pub fn bridge(args: &[&str], env: &[(&str, &str)]) -> Self {
        let mut all = vec!["bridge", "--listen", "127.0.0.1:0"];
        all.extend_from_slice(args);
        Self::start(&all, env).url_first()
    }

    /// `mcp ARGS` (a `--listen` among them), with `env` added to its environment.
    pub fn start(args: &[&str], env: &[(&str, &str)]) -> Self {
        let mut command = Command::new(MCP);
        command.args(args).envs(env.iter().copied());
        Self::spawn(command)
    }

    /// Spawns `command` (an `mcp … --listen` command line; stdin and stdout null, stderr
    /// piped) and waits (within the guard) for the URL it prints alone on a line of stderr
    /// once the port is bound. Its stderr is read on a thread from the start, so the server
    /// never blocks on it.
    pub fn spawn(mut command: Command) -> Self {
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {command:?}: {e}"));
        let stderr = child.stderr.take().expect("piped stderr");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                // Read on (and dropped) once the test no longer listens.
                let _ = tx.send(line);
            }
        });
        let mut listening = Listening {
            child,
            url: String::new(),
            before_url: Vec::new(),
            stderr: lines,
            scratch: None,
        };
        listening.url = loop {
            let line = listening
                .stderr
                .recv_timeout(GUARD)
                .unwrap_or_else(|_| panic!("no URL on stderr: {:?}", listening.before_url));
            let line = line.trim();
            if line.starts_with("http://") {
                break line.to_owned();
            }
            listening.before_url.push(line.to_owned());
        };
        listening
    }

    /// Gives it the test's scratch directory `dir`, removed once the process is killed.
    pub fn in_dir(mut self, dir: PathBuf) -> Self {
        self.scratch = Some(dir);
        self
    }

    /// The test's scratch directory.
    pub fn dir(&self) -> &Path {
        self.scratch
            .as_deref()
            .expect("started in a scratch directory")
    }

    /// Fails the test unless the URL was the first line on stderr.
    pub fn url_first(self) -> Self {
        assert!(
            self.before_url.is_empty(),
            "lines before the URL on stderr: {:?} (then {})",
            self.before_url,
            self.url
        );
        self
    }

    /// Waits (within the guard) for a stderr line containing `text`.
    pub fn wait_stderr(&self, text: &str) {
        self.until_stderr(text);
    }

    /// Stderr lines until one containing `text` (within the guard); all of them.
    pub fn until_stderr(&self, text: &str) -> Vec<String> {
        let started = Instant::now();
        let mut seen = Vec::new();
        loop {
            let left = GUARD.saturating_sub(started.elapsed());
            let line = self
                .stderr
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("the server never said {text:?}: {seen:#?}"));
            let done = line.contains(text);
            seen.push(line);
            if done {
                return seen;
            }
        }
    }

    /// Sends `signal` (`-TERM`, `-INT`) to the process and waits (within the guard) for its
    /// exit: its status and the stderr lines after the URL that the test has not read, up to
    /// the end of its stderr (its last writer gone, within the guard).
    pub fn stop(&mut self, signal: &str) -> (ExitStatus, Vec<String>) {
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
                "the server did not exit on {signal}"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        let exited = Instant::now();
        let mut rest = Vec::new();
        loop {
            match self
                .stderr
                .recv_timeout(GUARD.saturating_sub(exited.elapsed()))
            {
                Ok(line) => rest.push(line),
                Err(mpsc::RecvTimeoutError::Disconnected) => return (status, rest),
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    panic!("its stderr stayed open after its exit: {rest:#?}")
                }
            }
        }
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(dir) = &self.scratch {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}
