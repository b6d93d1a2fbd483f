//! `mcp-tokio`: the MCP client on the tokio runtime.
//!
//! This crate only implements [`mcp_driver::Runtime`] for tokio ([`TokioRuntime`]); the
//! driver and the client live in `mcp-driver` and are re-exported here under tokio-specific
//! names:
//!
//! ```no_run
//! # async fn f() -> Result<(), mcp_tokio::Error> {
//! let client = mcp_tokio::Client::stdio("npx -y @modelcontextprotocol/server-everything").await?;
//! for tool in client.list_tools().await? {
//!     println!("{}", tool.name);
//! }
//! client.close().await;
//! # Ok(()) }
//! ```
//!
//! # Stdio servers die with the client
//!
//! A stdio server runs in its own process group (a terminal's Ctrl-C reaches only the client),
//! and what ends it depends on how the client ends:
//!
//! - **`close().await`, or the last `Client` dropped**: the graceful schedule (stdin closed,
//!   SIGTERM to the group after 2 s, SIGKILL after 2 s more), every process of the group
//!   included, the child reaped.
//! - **SIGINT, SIGTERM, SIGHUP to the client**: the runtime does not handle them for you.
//!   Listen for them (`tokio::signal::unix::signal`), drop the running calls (each sends
//!   `notifications/cancelled`) and `close().await`, then exit: the graceful schedule runs.
//!   `mcp` does this for all three.
//! - **The client killed outright** (SIGKILL, a crash, an abort):
//!   - *Linux*: the direct child gets SIGKILL from the kernel (`PR_SET_PDEATHSIG`). Every
//!     server is spawned from one long-lived thread of the driver, because the kernel sends
//!     that signal when the thread that forked exits, not the process (tokio's blocking threads come and go).
//!   - *Every Unix, macOS included*: a small `/bin/sh` watchdog per server, in a group of its
//!     own, waits on a pipe that only the client holds and SIGKILLs the server's whole
//!     process group when the client's end closes. This is what ends grandchildren (`npx` ->
//!     `node`, `uv run` -> `python`, `sh -c` wrappers): the parent-death signal reaches the
//!     direct child only. Without `/bin/sh` it is skipped with a warning.
//!
//!   A grandchild that leaves the group on purpose (`setsid`, a daemon) is out of reach by
//!   design.
//!
//! # HTTP
//!
//! With the `http` feature (on by default), [`Client::http`] and HTTP entries of
//! [`Client::connect`] speak Streamable HTTP, or the legacy HTTP+SSE transport of 2024-11-05
//! ([`ClientBuilder::http_transport`]: `Auto` tries Streamable HTTP and falls back to legacy
//! when the initialize POST gets 400, 404 or 405). Plain `http://` exchanges that no proxy
//! applies to run on hyper-util's pooled HTTP/1.1 client (the common local server, at about
//! 30% less CPU per call than through reqwest); HTTPS and proxied ones on `reqwest`:
//!
//! - TLS is rustls (ring) with the system's root certificates, plus any CA given with
//!   [`ClientBuilder::root_certificate_pem`]; no native-tls, no OpenSSL.
//! - Proxies come from the environment (`HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY`,
//!   `NO_PROXY`), for plain HTTP as well.
//! - Neither client follows a redirect: the core follows same-origin 307/308 only and never
//!   carries credentials or custom headers to another origin.
//! - Only a connect timeout ([`ClientBuilder::connect_timeout`]); no whole-request timeout,
//!   which would cut SSE streams. Requests keep the session's deadlines, other exchanges the
//!   core's (30 s), the closing `DELETE` its close timeout ([`ClientBuilder::close_timeout`]).
//! - Bodies are streamed chunk by chunk into the core, which bounds their size.
//! - Custom headers ([`ClientBuilder::header`], a config's `headers`) such as
//!   `Authorization: Bearer ...` are sent to the configured origin only; header values are
//!   never logged.
//! - Sessions: `Mcp-Session-Id` is kept and echoed; a 404 re-initializes once and restores the
//!   log level and resource subscriptions; dropped SSE streams resume with `Last-Event-ID`.
//! - A 401 or 403 is a typed error carrying the parsed `WWW-Authenticate` challenge
//!   ([`Error::http_status`]).
//!
//! Without the feature (`default-features = false`) neither hyper, reqwest nor rustls is
//! built, and HTTP configs return [`Error::Unsupported`].

#![forbid(unsafe_code)]
#![warn(missing_docs, unreachable_pub)]

#[cfg(feature = "http")]
mod http;
mod runtime;

pub use mcp_driver;
pub use mcp_driver::mcp_proto;
pub use mcp_driver::{
    CallOptions, ConnectionState, ElicitationHandler, Error, HandlerFuture, Lagged, Notifications,
    Progress, ProgressWatch, Root, RootsHandler, SamplingHandler, StaticRoots, Subscription,
};
pub use runtime::TokioRuntime;

/// The MCP client on tokio. See [`mcp_driver::Client`].
pub type Client = mcp_driver::Client<TokioRuntime>;

/// The connection options on tokio. See [`mcp_driver::ClientBuilder`].
pub type ClientBuilder = mcp_driver::ClientBuilder<TokioRuntime>;

/// A task the server made of a `tools/call` (tasks extension). See [`mcp_driver::TaskHandle`].
pub type TaskHandle = mcp_driver::TaskHandle<TokioRuntime>;

/// What [`Client::call_tool_task`](mcp_driver::Client::call_tool_task) gives. See
/// [`mcp_driver::ToolCall`].
pub type ToolCall = mcp_driver::ToolCall<TokioRuntime>;
