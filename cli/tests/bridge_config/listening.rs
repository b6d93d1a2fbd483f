//! The harness of the `--listen` tests: `mcp bridge --config FILE --listen 127.0.0.1:0` in a
//! scratch directory of the test's own ([`Listening`]), and a runtime for host sessions.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::host::{GUARD, MCP, test_dir, write_config};

/// A test's `mcp bridge --config --listen 127.0.0.1:0` in a scratch directory of its own.
/// Dropping it (also when a test fails) stops the bridge, then removes the directory.
pub struct Listening {
    /// Declared before `dir`: the bridge stops before its directory goes.
    pub bridge: Bridge,
    /// The URL the bridge printed.
    pub url: String,
    /// The lines the bridge printed on stderr before its URL.
    pub before_url: Vec<String>,
    /// Its stderr lines after the URL.
    pub stderr: mpsc::Receiver<String>,
    pub dir: ScratchDir,
}

impl Listening {
    /// Serves [`write_config`]'s servers (`alpha`, `beta`, `broken`) with `extra` options.
    pub fn start(name: &str, extra: &[&str]) -> Self {
        Self::start_with(name, extra, write_config)
    }

    /// Serves the config file `write` writes into the test's directory (its path returned).
    pub fn start_with(name: &str, extra: &[&str], write: impl FnOnce(&Path) -> PathBuf) -> Self {
        let dir = ScratchDir(test_dir(name));
        let config = write(&dir.0);
        let (bridge, before_url, url, stderr) = spawn_listening(&dir.0, &config, extra);
        Listening {
            bridge,
            url,
            before_url,
            stderr,
            dir,
        }
    }

    /// Asks the bridge to stop (SIGTERM, as a service manager does) and waits for its exit.
    pub fn stop(&mut self) -> std::process::ExitStatus {
        let child = &mut self.bridge.0;
        let stopped = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .expect("run kill");
        assert!(stopped.success());
        let started = Instant::now();
        loop {
            if let Some(status) = child.try_wait().expect("wait") {
                return status;
            }
            assert!(
                started.elapsed() < GUARD,
                "the bridge did not stop on SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// A test's directory, removed when dropped.
pub struct ScratchDir(pub PathBuf);

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
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

/// Starts `mcp bridge --listen 127.0.0.1:0 [extra] --config CONFIG` with a tool cache in
/// `dir`: the bridge, its stderr lines before the URL, the URL, and a receiver of its stderr
/// lines after it.
pub fn spawn_listening(
    dir: &Path,
    config: &Path,
    extra: &[&str],
) -> (Bridge, Vec<String>, String, mpsc::Receiver<String>) {
    let mut bridge = Command::new(MCP)
        .args(["bridge", "--listen", "127.0.0.1:0"])
        .args(extra)
        .arg("--config")
        .arg(config)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn mcp bridge --listen");
    let (tx, rx) = mpsc::channel();
    let stderr = bridge.stderr.take().expect("piped stderr");
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    // Printed once the servers' start is over (after what they wrote on stderr meanwhile).
    let mut before_url = Vec::new();
    let url = loop {
        let line = rx.recv_timeout(GUARD).expect("the bridge printed its URL");
        if line.starts_with("http://") {
            break line;
        }
        before_url.push(line);
    };
    (Bridge(bridge), before_url, url, rx)
}

/// A running `mcp bridge --listen`: stopped with SIGTERM when dropped (also when a test
/// fails), killed if it does not stop within the guard.
pub struct Bridge(std::process::Child);

impl Drop for Bridge {
    fn drop(&mut self) {
        if !matches!(self.0.try_wait(), Ok(None)) {
            // Exited (and reaped) already: its pid may be another process's by now.
            return;
        }
        let _ = Command::new("kill")
            .args(["-TERM", &self.0.id().to_string()])
            .status();
        let started = Instant::now();
        while matches!(self.0.try_wait(), Ok(None)) {
            if started.elapsed() > GUARD {
                let _ = self.0.kill();
                let _ = self.0.wait();
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
