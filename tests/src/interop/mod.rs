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
pub mod faults;
pub mod python;

use std::future::Future;
use std::time::{Duration, Instant};

use mcp_driver::mcp_proto::types::{CallToolResult, ContentBlock};
use mcp_driver::process::StdioCommand;
use mcp_driver::{Client, ClientBuilder, ConnectionState, Runtime};
use serde_json::Value;

use crate::peers::{ProcessTag, assert_gone};

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

/// A stdio server started for one test: its client and the pids of every process it had.
pub struct Spawned<R: Runtime> {
    /// The connected client.
    pub client: Client<R>,
    /// The tag in the server's environment.
    pub tag: ProcessTag,
    /// Every process carrying the tag right after the handshake.
    pub pids: Vec<u32>,
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
        let pids = tag.pids();
        assert!(!pids.is_empty(), "{label}: no process carries the tag");
        Spawned { client, tag, pids }
    }

    /// Records processes that appeared later (a grandchild).
    pub fn rescan(&mut self) {
        for pid in self.tag.pids() {
            if !self.pids.contains(&pid) {
                self.pids.push(pid);
            }
        }
    }

    /// Closes the client within `bound`, checks that it reports itself closed, and that every
    /// recorded process is gone. Returns how long `close()` took.
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
