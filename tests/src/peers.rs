//! Shared rules for tests that talk to real peers (see `tests/peers/README.md`).
//!
//! - The peer paths come from the environment that `.peers/env.sh` sets (`scripts/test` sources
//!   it). When they are missing, [`peers`] panics with a message naming `scripts/test`, unless
//!   `MCP_SKIP_INTEROP=1` is set: then it returns `None` and prints that the test was skipped.
//! - A peer that binds every interface (server-everything's HTTP modes) may only run inside the
//!   loopback-only namespace of `scripts/netns-run`, which exports `MCP_NETNS=1`: check with
//!   [`require_netns`] (same failure rule).
//! - [`PeerProcess`] kills its process group on drop; [`free_port`] and [`wait_for_port`] work
//!   on 127.0.0.1 only.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt as _;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Where the installed peers are.
#[derive(Clone, Debug)]
pub struct Peers {
    /// The virtualenv's python with PyPI `mcp` 1.x (`MCP_PEER_PYTHON`).
    pub python: PathBuf,
    /// `tests/peers/py_server.py` (`MCP_PEER_PY_SERVER`).
    pub py_server: PathBuf,
    /// The server-everything command line, words split (`MCP_PEER_EVERYTHING`).
    pub everything: Vec<String>,
}

fn skipping() -> bool {
    std::env::var("MCP_SKIP_INTEROP").is_ok_and(|v| v == "1")
}

/// The peers, or `None` (after printing why) when `MCP_SKIP_INTEROP=1`.
///
/// # Panics
///
/// When a peer variable is missing and interop is not skipped: run `scripts/test`.
#[must_use]
pub fn peers(test: &str) -> Option<Peers> {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    match (
        var("MCP_PEER_PYTHON"),
        var("MCP_PEER_PY_SERVER"),
        var("MCP_PEER_EVERYTHING"),
    ) {
        (Some(python), Some(py_server), Some(everything)) => Some(Peers {
            python: python.into(),
            py_server: py_server.into(),
            everything: everything.split_whitespace().map(str::to_owned).collect(),
        }),
        _ if skipping() => {
            eprintln!("{test}: skipped (MCP_SKIP_INTEROP=1)");
            None
        }
        _ => panic!(
            "{test}: the interop peers are not configured (MCP_PEER_* unset). Run `scripts/test`, \
             or `bash scripts/install-peers && . .peers/env.sh`; set MCP_SKIP_INTEROP=1 to skip"
        ),
    }
}

/// Whether this process runs in the loopback-only namespace (`MCP_NETNS=1`); `false` (after
/// printing why) when `MCP_SKIP_INTEROP=1`.
///
/// # Panics
///
/// Outside the namespace when interop is not skipped: run `scripts/test` (or
/// `scripts/netns-run cargo test --offline ...`).
#[must_use]
pub fn require_netns(test: &str) -> bool {
    if std::env::var("MCP_NETNS").is_ok_and(|v| v == "1") {
        return true;
    }
    if skipping() {
        eprintln!("{test}: skipped (MCP_SKIP_INTEROP=1; it needs the loopback namespace)");
        return false;
    }
    panic!(
        "{test}: starts a peer that binds every interface, so it runs only inside \
         `scripts/netns-run` (MCP_NETNS=1). Run `scripts/test`; set MCP_SKIP_INTEROP=1 to skip"
    )
}

/// A free TCP port on 127.0.0.1 (free when asked; a race with other processes is possible but
/// unlikely).
///
/// # Panics
///
/// If no port can be bound.
#[must_use]
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("bind 127.0.0.1:0")
}

/// Waits until 127.0.0.1:`port` accepts connections; whether it did within `timeout`.
#[must_use]
pub fn wait_for_port(port: u16, timeout: Duration) -> bool {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let end = Instant::now() + timeout;
    while Instant::now() < end {
        if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

/// A peer process in its own process group; the whole group is killed and reaped on drop.
#[derive(Debug)]
pub struct PeerProcess {
    child: Child,
}

impl PeerProcess {
    /// Starts `program args...` with `env` added, stdin closed, stdout and stderr discarded
    /// unless `MCP_PEER_VERBOSE=1`.
    ///
    /// # Errors
    ///
    /// The spawn error.
    pub fn spawn(program: &str, args: &[&str], env: &[(&str, &str)]) -> std::io::Result<Self> {
        let verbose = std::env::var("MCP_PEER_VERBOSE").is_ok_and(|v| v == "1");
        let out = || {
            if verbose {
                Stdio::inherit()
            } else {
                Stdio::null()
            }
        };
        let child = Command::new(program)
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(out())
            .stderr(out())
            .process_group(0)
            .spawn()?;
        Ok(Self { child })
    }

    /// The process id (also its process group id).
    #[must_use]
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Whether the process is still running.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for PeerProcess {
    fn drop(&mut self) {
        if let Ok(pgid) = i32::try_from(self.child.id()) {
            // SAFETY: kill(2) on our own child's process group; no memory is involved.
            unsafe {
                libc::kill(-pgid, libc::SIGKILL);
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
