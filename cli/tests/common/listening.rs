//! `mcp demo-server --listen` as an HTTP server for a test.

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;

use super::bridge_host::{GUARD, MCP};

/// A running `mcp demo-server --listen 127.0.0.1:0` and its URL; killed on drop.
pub struct ListeningDemo {
    pub child: Child,
    pub url: String,
    /// Every line of its stderr after the URL (`mcp demo-server: slow: cancelled`, …).
    pub stderr: mpsc::Receiver<String>,
}

impl ListeningDemo {
    /// Starts the server and waits for the URL it prints on stderr; its stderr is read on
    /// (and dropped) from then on, so the server never blocks on it.
    pub fn start() -> Self {
        let mut child = Command::new(MCP)
            .args(["demo-server", "--listen", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn mcp demo-server --listen");
        let stderr = child.stderr.take().expect("piped stderr");
        let (tx, rx) = mpsc::channel();
        let (lines_tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(at) = line.find("http://") {
                    let _ = tx.send(line[at..].trim().to_owned());
                } else {
                    let _ = lines_tx.send(line);
                }
            }
        });
        let url = rx.recv_timeout(GUARD).expect("the URL line on stderr");
        ListeningDemo {
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
                Err(_) => panic!("the demo server never said {text:?}"),
            }
        }
    }
}

impl Drop for ListeningDemo {
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
