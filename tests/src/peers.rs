//! Shared helpers for tests that need independent peers (server-everything, the Python `mcp`
//! server): where they are, the skip rule, loopback ports, process guards and `/proc` checks.
//!
//! The peers are installed by `scripts/install-peers` and found through the variables of
//! `.peers/env.sh`, which `scripts/test` sources. The rule (the same for every interop test):
//! when the variables are missing the test **fails** with a message naming `scripts/test`,
//! unless `MCP_SKIP_INTEROP=1` is set, in which case [`peers`] returns `None` and says on
//! stderr that the test was skipped. A test that starts a peer binding every interface also
//! needs `MCP_NETNS=1` (set by `scripts/test` inside `scripts/netns-run`): see [`require_netns`].

use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt as _;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Where the installed peers are (from `.peers/env.sh`).
#[derive(Debug, Clone)]
pub struct Peers {
    /// `node .../server-everything/dist/index.js`, to be followed by `stdio`,
    /// `streamableHttp` or `sse`.
    pub everything: Vec<String>,
    /// The Python with PyPI `mcp` 1.x.
    pub python: String,
    /// `tests/peers/py_server.py`.
    pub py_server: PathBuf,
    /// The Python with PyPI `mcp` 2.x (2026-07-28), for `tests/peers/py2_server.py`.
    pub python2: String,
    /// Node 22, for `tests/peers/ts2_server.cjs`.
    pub node22: String,
    /// The `node_modules` holding npm `@modelcontextprotocol/server` 2.x.
    pub ts2_node_modules: PathBuf,
}

const SKIP_VAR: &str = "MCP_SKIP_INTEROP";

fn skipping(what: &str) -> bool {
    if std::env::var_os(SKIP_VAR).is_some_and(|v| v == "1") {
        eprintln!("SKIPPED ({SKIP_VAR}=1): {what}");
        true
    } else {
        false
    }
}

/// The installed peers, or `None` when `MCP_SKIP_INTEROP=1` and they are missing.
///
/// # Panics
///
/// When a variable is missing and `MCP_SKIP_INTEROP=1` is not set: interop tests must not pass
/// silently without their peers.
#[must_use]
pub fn peers() -> Option<Peers> {
    let get = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    match (
        get("MCP_PEER_EVERYTHING"),
        get("MCP_PEER_PYTHON"),
        get("MCP_PEER_PY_SERVER"),
        get("MCP_PEER_PYTHON2"),
        get("MCP_PEER_NODE22"),
        get("MCP_PEER_TS2_NODE_MODULES"),
    ) {
        (
            Some(everything),
            Some(python),
            Some(py_server),
            Some(python2),
            Some(node22),
            Some(ts2),
        ) => Some(Peers {
            everything: everything.split_whitespace().map(str::to_owned).collect(),
            python,
            py_server: py_server.into(),
            python2,
            node22,
            ts2_node_modules: ts2.into(),
        }),
        _ if skipping("the interop peers are not installed") => None,
        _ => panic!(
            "the interop peers are not set up (MCP_PEER_EVERYTHING, MCP_PEER_PYTHON, \
             MCP_PEER_PY_SERVER, MCP_PEER_PYTHON2, MCP_PEER_NODE22, MCP_PEER_TS2_NODE_MODULES \
             missing): run the tests with `scripts/test` (it installs the \
             peers and sources .peers/env.sh), or set {SKIP_VAR}=1 to skip the interop tests"
        ),
    }
}

/// Whether a test that starts a peer binding every interface may run: `true` inside the
/// loopback-only namespace (`MCP_NETNS=1`), `false` when skipping (`MCP_SKIP_INTEROP=1`).
///
/// # Panics
///
/// Outside the namespace without `MCP_SKIP_INTEROP=1`.
#[must_use]
pub fn require_netns() -> bool {
    if std::env::var_os("MCP_NETNS").is_some_and(|v| v == "1") {
        return true;
    }
    if skipping("this peer binds every interface and runs only inside scripts/netns-run") {
        return false;
    }
    panic!(
        "this test starts a peer that binds every interface: run it with `scripts/test` (inside \
         scripts/netns-run, MCP_NETNS=1), or set {SKIP_VAR}=1 to skip the interop tests"
    )
}

/// A free TCP port on 127.0.0.1 (bound, then released: a small race, fine for tests).
///
/// # Panics
///
/// If no port can be bound.
#[must_use]
pub fn free_port() -> u16 {
    let listener =
        TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("bind 127.0.0.1:0 for a free port");
    listener.local_addr().expect("local addr").port()
}

/// Waits until 127.0.0.1:`port` accepts connections; whether it did within `timeout`.
#[must_use]
pub fn wait_for_port(port: u16, timeout: Duration) -> bool {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let end = Instant::now() + timeout;
    while Instant::now() < end {
        if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    false
}

/// A child process (started by the test itself, e.g. an HTTP peer) killed with its whole
/// process group and reaped on drop. Start it with `process_group(0)`.
#[derive(Debug)]
pub struct ProcessGuard {
    child: Child,
}

impl ProcessGuard {
    /// Guards `child`, which leads its own process group.
    #[must_use]
    pub fn new(child: Child) -> Self {
        Self { child }
    }

    /// The child's pid (its process group id).
    #[must_use]
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for ProcessGuard {
    fn drop(&mut self) {
        if let Ok(pid) = i32::try_from(self.child.id()) {
            // SAFETY: kill(2) with a negative pid signals that process group; no memory is
            // involved. The group is the child's own (it was started with process_group(0)).
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The scheduler state of `pid` (`R`, `S`, `Z`, ...) and its parent, or `None` once reaped.
#[must_use]
pub fn proc_state(pid: u32) -> Option<(char, u32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may contain anything: fields follow the last ')'.
    let mut fields = stat[stat.rfind(')')? + 1..].split_whitespace();
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    Some((state, ppid))
}

/// Gone for good: reaped, or a zombie that is not ours to reap (a grandchild re-parented to
/// an init that may be slow to reap in a container). A zombie child of this test process
/// counts as left behind: nobody reaped it.
#[must_use]
pub fn pid_gone(pid: u32) -> bool {
    match proc_state(pid) {
        None | Some(('X', _)) => true,
        Some(('Z', ppid)) => ppid != std::process::id(),
        Some(_) => false,
    }
}

/// Polls `cond` every 20 ms (blocking the thread) for up to `timeout`.
pub fn wait_until(timeout: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + timeout;
    while Instant::now() < end {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    cond()
}

/// A unique marker put into a server's environment, so that the test can find every process
/// of that server (children and grandchildren inherit it) in `/proc` and check that they are
/// all gone afterwards.
#[derive(Debug, Clone)]
pub struct ProcessTag {
    value: String,
}

/// The environment variable a [`ProcessTag`] sets.
pub const TAG_VAR: &str = "MCP_TEST_PROCESS_TAG";

impl ProcessTag {
    /// A tag unique to this test process and call.
    #[must_use]
    pub fn new(label: &str) -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        Self {
            value: format!("{label}-{}-{n}", std::process::id()),
        }
    }

    /// The `(name, value)` environment entry to give the server.
    #[must_use]
    pub fn env(&self) -> (String, String) {
        (TAG_VAR.to_owned(), self.value.clone())
    }

    /// The pids of the live processes carrying this tag (zombies have no readable environment
    /// and are not listed: record the pids while the server runs).
    #[must_use]
    pub fn pids(&self) -> Vec<u32> {
        let needle = format!("{TAG_VAR}={}", self.value);
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        let mut pids: Vec<u32> = dir
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
            .filter(|pid: &u32| {
                std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|env| {
                    env.split(|b| *b == 0)
                        .any(|entry| entry == needle.as_bytes())
                })
            })
            .collect();
        pids.sort_unstable();
        pids
    }
}

/// Asserts that every pid in `pids` is gone within `timeout` (see [`pid_gone`]).
///
/// # Panics
///
/// Naming the pids still there and their states.
pub fn assert_gone(pids: &[u32], timeout: Duration, what: &str) {
    if !wait_until(timeout, || pids.iter().all(|p| pid_gone(*p))) {
        let left: Vec<_> = pids
            .iter()
            .filter(|p| !pid_gone(**p))
            .map(|p| (p, proc_state(*p)))
            .collect();
        panic!("{what}: processes left behind after {timeout:?}: {left:?}");
    }
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
