//! Interop and fault-matrix test bodies, written once over the public [`Client`] API and
//! generic over the [`Runtime`], so that every runtime adapter runs the same checks
//! (`tests/tests/interop_tokio.rs` and `tests/tests/fault_matrix.rs` call them on tokio).
//!
//! Each body panics on failure, like any test; the caller bounds the whole body with a guard
//! timeout. Bodies that need a peer take the [`Peers`](crate::peers::Peers) (the caller applies
//! the skip rule of [`crate::peers::peers`]); the fault bodies take the path of the
//! `fault_server` binary. Every body ends by closing its client and checking, in `/proc`, that
//! every process of its server is gone.

pub mod era;
pub mod everything;
pub mod everything_task_receiver;
pub mod everything_tasks;
pub mod exhaustion;
pub mod faults;
pub mod faults_http;
pub mod python;

use std::future::Future;
use std::time::{Duration, Instant};

use mcp_driver::mcp_proto::types::{CallToolResult, ContentBlock};
use mcp_driver::process::StdioCommand;
use mcp_driver::{Client, ClientBuilder, ConnectionState, Runtime};
use serde_json::Value;

use crate::peers::{PeerProcess, ProcessTag, assert_gone};

pub use mcp_driver::testing::suite::{eventually, sleep};

/// How long the processes of a closed server may take to disappear.
pub const GONE_BOUND: Duration = Duration::from_secs(5);

/// Runs `f` on the runtime's timer for at most `d`; `None` if it took longer.
pub async fn within<R: Runtime, T>(rt: &R, d: Duration, f: impl Future<Output = T>) -> Option<T> {
    mcp_driver::testing::suite::within(rt, d, f).await
}

/// Runs `f`, failing with `what` if it takes longer than `d`.
///
/// # Panics
///
/// When `f` is too slow.
pub async fn bounded<R: Runtime, T>(
    rt: &R,
    d: Duration,
    what: &str,
    f: impl Future<Output = T>,
) -> T {
    match within(rt, d, f).await {
        Some(v) => v,
        None => panic!("{what} took longer than {d:?}"),
    }
}

/// How a test reaches its server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Transport {
    /// The client spawns the server and talks over its stdin and stdout.
    Stdio,
    /// The test starts the server's HTTP mode; the client uses Streamable HTTP
    /// (`TransportMode::Streamable`).
    StreamableHttp,
    /// The test starts the server's legacy HTTP+SSE mode; the client uses
    /// `TransportMode::Legacy`.
    LegacySse,
    /// The legacy HTTP+SSE server, reached with `TransportMode::Auto`: the initialize POST is
    /// refused and the client falls back to legacy.
    LegacyViaAuto,
}

impl Transport {
    /// Whether the server is an HTTP server the test starts itself.
    #[must_use]
    pub fn is_http(self) -> bool {
        !matches!(self, Transport::Stdio)
    }

    /// Whether the connection is legacy HTTP+SSE.
    #[must_use]
    pub fn is_legacy(self) -> bool {
        matches!(self, Transport::LegacySse | Transport::LegacyViaAuto)
    }
}

/// How long an HTTP peer may take to accept connections (node starts in about a second).
pub const PORT_BOUND: Duration = Duration::from_secs(20);

/// A server started for one test: its client, the pids of every process it had, and for an
/// HTTP server the process the test started (killed with its group in
/// [`finish`](Self::finish), or on drop when the test fails).
pub struct Spawned<R: Runtime> {
    /// The connected client.
    pub client: Client<R>,
    /// The tag in the server's environment.
    pub tag: ProcessTag,
    /// Every process carrying the tag right after the handshake.
    pub pids: Vec<u32>,
    /// The HTTP server process, in its own process group (`None` over stdio: the client owns
    /// the child).
    pub server: Option<PeerProcess>,
}

impl<R: Runtime> Spawned<R> {
    /// Starts `command` through `builder` with a fresh [`ProcessTag`] and records its pids.
    ///
    /// # Panics
    ///
    /// When the connection fails or no tagged process is found.
    pub async fn start(
        rt: &R,
        builder: ClientBuilder<R>,
        label: &str,
        command: StdioCommand,
    ) -> Self {
        let tag = ProcessTag::new(label);
        let (k, v) = tag.env();
        let client = builder
            .runtime(rt.clone())
            .name(label)
            .stdio(command.env(k, v))
            .await
            .unwrap_or_else(|e| panic!("{label}: connect failed: {e}"));
        // A server that exits right after the handshake (the grandchild fault) hands over to
        // its grandchild: look for a moment rather than once.
        let mut pids = tag.pids();
        let started = std::time::Instant::now();
        while pids.is_empty() && started.elapsed() < Duration::from_secs(2) {
            std::thread::sleep(Duration::from_millis(20));
            pids = tag.pids();
        }
        assert!(!pids.is_empty(), "{label}: no process carries the tag");
        Spawned {
            client,
            tag,
            pids,
            server: None,
        }
    }

    /// Starts `program args...` (an HTTP server listening on the port it finds in `PORT`) in
    /// its own process group with a fresh [`ProcessTag`], waits for 127.0.0.1:`port`, and
    /// connects to `http://127.0.0.1:{port}{path}` through `builder` with `mode`.
    ///
    /// Only inside the loopback-only namespace (see [`crate::peers::require_netns`]) when the
    /// server binds every interface.
    ///
    /// # Panics
    ///
    /// When the server does not start, does not listen within [`PORT_BOUND`], or the
    /// connection fails.
    #[allow(clippy::too_many_arguments)]
    pub async fn start_http(
        rt: &R,
        builder: ClientBuilder<R>,
        label: &str,
        program: &[String],
        port: u16,
        path: &str,
        mode: mcp_driver::mcp_proto::http::TransportMode,
    ) -> Self {
        let tag = ProcessTag::new(label);
        let (k, v) = tag.env();
        let port_s = port.to_string();
        let args: Vec<&str> = program[1..].iter().map(String::as_str).collect();
        let mut server = PeerProcess::spawn(&program[0], &args, &[(&k, &v), ("PORT", &port_s)])
            .unwrap_or_else(|e| panic!("{label}: spawn {program:?}: {e}"));
        assert!(
            crate::peers::wait_for_port(port, PORT_BOUND),
            "{label}: nothing listens on 127.0.0.1:{port} after {PORT_BOUND:?} (running: {})",
            server.is_running()
        );
        let url = format!("http://127.0.0.1:{port}{path}");
        let client = builder
            .runtime(rt.clone())
            .name(label)
            .http_transport(mode)
            .http(&url)
            .await
            .unwrap_or_else(|e| panic!("{label}: connect to {url} ({mode:?}) failed: {e}"));
        let pids = tag.pids();
        assert!(
            pids.contains(&server.id()),
            "{label}: the server {} does not carry the tag ({pids:?})",
            server.id()
        );
        Spawned {
            client,
            tag,
            pids,
            server: Some(server),
        }
    }

    /// Records processes that appeared later (a grandchild).
    pub fn rescan(&mut self) {
        for pid in self.tag.pids() {
            if !self.pids.contains(&pid) {
                self.pids.push(pid);
            }
        }
    }

    /// Closes the client within `bound`, checks that it reports itself closed, kills an HTTP
    /// server (with its process group), and checks that every recorded process is gone.
    /// Returns how long `close()` took.
    ///
    /// # Panics
    ///
    /// When close is too slow, the state is not `Closed`, or a process is left.
    pub async fn finish(mut self, rt: &R, bound: Duration) -> Duration {
        self.rescan();
        let started = Instant::now();
        bounded(rt, bound, "close()", self.client.close()).await;
        let took = started.elapsed();
        assert!(
            matches!(self.client.state(), ConnectionState::Closed(_)),
            "after close(): {:?}",
            self.client.state()
        );
        // An HTTP server outlives its sessions: the test ends it (SIGKILL to the group, reaped).
        drop(self.server.take());
        assert_gone(&self.pids, GONE_BOUND, self.client.server_name());
        took
    }
}

/// The concatenated text blocks of a tool result.
#[must_use]
pub fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A notification's params as JSON (`Null` when absent).
#[must_use]
pub fn params_of(n: &mcp_driver::mcp_proto::session::ServerNotification) -> Value {
    n.params
        .as_ref()
        .and_then(|p| serde_json::from_str(p.get()).ok())
        .unwrap_or(Value::Null)
}
