//! `mcp-tokio`: the MCP client on the tokio runtime.
//!
//! This crate implements the driver's [`Runtime`](driver::Runtime) for tokio
//! ([`TokioRuntime`]) and re-exports the client under tokio-specific names: [`Client`],
//! [`ClientBuilder`], [`Manager`], [`TaskHandle`], [`ToolCall`]. Everything a program needs is
//! reachable from here, documented in this crate:
//!
//! - [`Client`] (every method: [`driver::Client`]) and [`ClientBuilder`] (every option:
//!   [`driver::ClientBuilder`]);
//! - the error types at the root: [`Error`] for a call, [`ErrorObject`] for what a handler
//!   answers the server with;
//! - the typed protocol structs in [`types`] (`mcp_proto::types`), so handlers and results need
//!   no second import path;
//! - everything else of the runtime-neutral driver (the [`Runtime`](driver::Runtime) trait,
//!   the [`manager`](driver::manager), [`auth`](driver::auth), [`http`](driver::http) and
//!   [`process`](driver::process) modules) in [`driver`], and the sans-IO core in
//!   [`mcp_proto`].
//!
//! ```no_run
//! # async fn f() -> Result<(), mcp_tokio::Error> {
//! let client = mcp_tokio::Client::stdio("mcp demo-server").await?;
//! for tool in client.list_tools().await? {
//!     println!("{}", tool.name);
//! }
//! client.close().await;
//! # Ok(()) }
//! ```
//!
//! # Serving
//!
//! [`server`] serves one MCP client (stdio with [`server::serve_stdio`], or any tokio byte
//! stream pair) with the runtime-neutral server driver over the core's server session.
//!
//! # Tasks
//!
//! A tool call that the server runs as a task (protocol 2025-11-25, or the 2026-07-28 tasks
//! extension) is awaited transparently by [`call_tool`](driver::Client::call_tool);
//! [`call_tool_task`](driver::Client::call_tool_task) hands out the [`TaskHandle`] instead
//! (status stream, cancel, result). The server's tasks by id (2025-11-25):
//! [`list_tasks`](driver::Client::list_tasks) (every page, under the
//! [`ListBudget`](driver::ListBudget)) and [`list_tasks_page`](driver::Client::list_tasks_page)
//! (one page with its cursor), [`get_task`](driver::Client::get_task),
//! [`task_result`](driver::Client::task_result) and
//! [`cancel_task`](driver::Client::cancel_task). A server that does not declare the
//! capability a method needs (`tasks.list`, `tasks.cancel`) gets
//! [`Error::NotOffered`] and nothing is sent.
//!
//! ```no_run
//! # async fn f(client: mcp_tokio::Client) -> Result<(), mcp_tokio::Error> {
//! for task in client.list_tasks().await? {
//!     println!("{} {}", task.task_id, task.status.as_str());
//! }
//! # Ok(()) }
//! ```
//!
//! The crate's `examples/` directory has a program per topic: stdio and HTTP servers, OAuth,
//! many servers through the manager, handlers for server requests, progress and
//! cancellation, a custom runtime, and the sans-IO core in a hand-written loop.
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
//!   - *Linux*: the direct child gets SIGTERM from the kernel (`PR_SET_PDEATHSIG`). Every
//!     server is spawned from one long-lived thread of the driver, because the kernel sends
//!     that signal when the thread that forked exits, not the process (tokio's blocking threads come and go).
//!   - *Every Unix, macOS included*: a small `/bin/sh` watchdog per server, in a group of its
//!     own, waits on a pipe that only the client holds and, when the client's end closes,
//!     sends SIGTERM to the server's whole process group and SIGKILL 2 s later (a server
//!     that handles SIGTERM gets to clean up). This is what ends grandchildren (`npx` ->
//!     `node`, `uv run` -> `python`, `sh -c` wrappers): the parent-death signal reaches the
//!     direct child only. Without `/bin/sh` it is skipped with a warning.
//!
//!   A grandchild that leaves the group on purpose (`setsid`, a daemon) is out of reach by
//!   design.
//!
//! # HTTP
//!
//! With the `http` feature (on by default), [`Client::http`](driver::Client::http) and HTTP entries of
//! [`Client::connect`](driver::Client::connect) speak Streamable HTTP, or the legacy HTTP+SSE transport of 2024-11-05
//! ([`ClientBuilder::http_transport`](driver::ClientBuilder::http_transport): `Auto` tries Streamable HTTP and falls back to legacy
//! when the initialize POST gets 400, 404 or 405). Plain `http://` exchanges that no proxy
//! applies to run on hyper-util's pooled HTTP/1.1 client (the common local server, at about
//! 30% less CPU per call than through reqwest); HTTPS and proxied ones on `reqwest`:
//!
//! - TLS is rustls (ring) with the system's root certificates, plus any CA given with
//!   [`ClientBuilder::root_certificate_pem`](driver::ClientBuilder::root_certificate_pem); no native-tls, no OpenSSL.
//! - Proxies come from the environment (`HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY`,
//!   `NO_PROXY`), for plain HTTP as well.
//! - Neither client follows a redirect: the core follows same-origin 307/308 only and never
//!   carries credentials or custom headers to another origin.
//! - Only a connect timeout ([`ClientBuilder::connect_timeout`](driver::ClientBuilder::connect_timeout)); no whole-request timeout,
//!   which would cut SSE streams. Requests keep the session's deadlines, other exchanges the
//!   core's (30 s), the closing `DELETE` its close timeout ([`ClientBuilder::close_timeout`](driver::ClientBuilder::close_timeout)).
//! - Bodies are streamed chunk by chunk into the core, which bounds their size.
//! - Custom headers ([`ClientBuilder::header`](driver::ClientBuilder::header), a config's `headers`) such as
//!   `Authorization: Bearer ...` are sent to the configured origin only; header values are
//!   never logged.
//! - Sessions: `Mcp-Session-Id` is kept and echoed; a 404 re-initializes once and restores the
//!   log level and resource subscriptions; dropped SSE streams resume with `Last-Event-ID`.
//! - A 401 or 403 is a typed error carrying the parsed `WWW-Authenticate` challenge
//!   ([`Error::http_status`](driver::Error::http_status)).
//!
//! Without the feature (`default-features = false`) neither hyper, reqwest nor rustls is
//! built, and HTTP configs return [`Error::Unsupported`].

#![forbid(unsafe_code)]
#![warn(missing_docs, unreachable_pub)]

#[cfg(feature = "http")]
mod body_hold;
#[cfg(feature = "http")]
mod http;
#[cfg(feature = "http")]
mod http_server;
#[cfg(feature = "http")]
mod recycling_timer;
mod runtime;
pub mod server;
#[cfg(unix)]
pub mod stdio;
#[cfg(feature = "http")]
mod when_woken;

pub use mcp_driver;
pub use mcp_driver::mcp_manager;
pub use mcp_driver::mcp_proto;
#[doc(inline)]
pub use mcp_driver::mcp_proto::jsonrpc::ErrorObject;
#[doc(inline)]
pub use mcp_driver::mcp_proto::types;
pub use mcp_driver::{
    CallOptions, CancelHandle, ConnectionState, ElicitationHandler, Error, Gap, GapCause,
    HandlerFuture, Lagged, Missed, Notifications, Progress, ProgressWatch, Root, RootsHandler,
    SamplingHandler, SchemaViolation, StaticRoots, Subscription, TaskQueryHandler,
};
pub use runtime::TokioRuntime;

/// The runtime-neutral driver (`mcp-driver`), documented here: the generic [`Client`](driver::Client)
/// and [`ClientBuilder`](driver::ClientBuilder) whose methods the tokio aliases at this crate's
/// root have, the [`Runtime`](driver::Runtime) trait, and the manager, auth, HTTP and process
/// modules.
pub mod driver {
    #[doc(inline)]
    pub use mcp_driver::*;
}

/// The MCP client on tokio: [`driver::Client`] with [`TokioRuntime`]; every method is
/// documented there.
///
/// Made by [`Client::stdio`](driver::Client::stdio), [`Client::http`](driver::Client::http),
/// [`Client::connect`](driver::Client::connect), [`Client::over`](driver::Client::over) or a
/// [`ClientBuilder`]; cheap to clone.
pub type Client = mcp_driver::Client<TokioRuntime>;

/// The connection options on tokio: [`driver::ClientBuilder`] with [`TokioRuntime`]; every
/// option is documented there.
pub type ClientBuilder = mcp_driver::ClientBuilder<TokioRuntime>;

/// Many servers from one configuration on tokio: [`driver::Manager`] with [`TokioRuntime`].
pub type Manager = mcp_driver::Manager<TokioRuntime>;

/// A task the server made of a `tools/call` (tasks extension): [`driver::TaskHandle`] on
/// tokio.
pub type TaskHandle = mcp_driver::TaskHandle<TokioRuntime>;

/// What [`Client::call_tool_task`](driver::Client::call_tool_task) gives:
/// [`driver::ToolCall`] on tokio.
pub type ToolCall = mcp_driver::ToolCall<TokioRuntime>;

/// The crate README's code, compiled as doctests so that it stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
