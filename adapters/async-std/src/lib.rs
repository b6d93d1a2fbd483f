//! `mcp-async-std`: the MCP client on async-std and on smol.
//!
//! This crate implements the driver's [`Runtime`](driver::Runtime) ([`AsyncStdRuntime`]) on
//! the runtime-neutral parts of the smol family: `async-io` (reactor and timers) and
//! `async-process` (children, with a background reaper). The client is re-exported under
//! runtime-specific names, exactly as `mcp-tokio` does, and documented in this crate:
//!
//! - [`Client`] (every method: [`driver::Client`]) and [`ClientBuilder`] (every option:
//!   [`driver::ClientBuilder`]), [`Manager`], [`TaskHandle`], [`ToolCall`];
//! - the error types at the root: [`Error`] for a call, [`ErrorObject`] for what a handler
//!   answers the server with;
//! - the typed protocol structs in [`types`] (`mcp_proto::types`);
//! - everything else of the runtime-neutral driver in [`driver`], and the sans-IO core in
//!   [`mcp_proto`].
//!
//! The crate's `examples/` directory has a complete program on smol.
//!
//! # async-std is discontinued; this crate runs on smol
//!
//! async-std is discontinued upstream, and its maintainers point its users to smol. Nothing
//! here needs async-std: async-std itself is built on async-io and async-global-executor, so
//! the same [`AsyncStdRuntime`] value works under `async_std::task::block_on` and under
//! `smol::block_on`. The `async-std` feature (on by default) only adds
//! [`AsyncStdRuntime::async_std`], which spawns the driver's tasks on async-std's executor;
//! [`AsyncStdRuntime::smol`] (alias [`SmolRuntime`]) spawns them with `smol::spawn`. Build
//! with `default-features = false` to leave async-std out entirely.
//!
//! ```no_run
//! # fn main() -> Result<(), mcp_async_std::Error> {
//! smol::block_on(async {
//!     let client = mcp_async_std::ClientBuilder::new()
//!         .runtime(mcp_async_std::SmolRuntime::smol())
//!         .stdio("npx -y @modelcontextprotocol/server-everything")
//!         .await?;
//!     for tool in client.list_tools().await? {
//!         println!("{}", tool.name);
//!     }
//!     client.close().await;
//!     Ok(())
//! })
//! # }
//! ```
//!
//! [`Client::stdio`](driver::Client::stdio) without a runtime argument uses
//! [`AsyncStdRuntime::default`].
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
//!   Listen for them (`async-signal` or `signal-hook`), drop the running calls (each sends
//!   `notifications/cancelled`) and `close().await`, then exit: the graceful schedule runs.
//!   `mcp` does this for all three.
//! - **The client killed outright** (SIGKILL, a crash, an abort):
//!   - *Linux*: the direct child gets SIGTERM from the kernel (`PR_SET_PDEATHSIG`). Every
//!     server is spawned from one long-lived thread of the driver, because the kernel sends
//!     that signal when the thread that forked exits, not the process (async-std's and blocking threads come and go).
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
//! With the `http` feature (on by default), [`AsyncStdRuntime`] implements
//! [`Runtime::http_client`](driver::Runtime::http_client) with hyper 1 (HTTP/1.1 only)
//! over smol's TCP (async-io) and futures-rustls (rustls with the ring provider, the system's
//! roots plus any configured CA): no redirects, no retries (but a request never written to a
//! pooled connection the server had closed goes out on a new one), a connect timeout (30 s unless
//! configured), response bodies streamed as they arrive. Connections are kept alive and
//! reused per origin (a response read to its end returns its connection to the client's pool;
//! at most 8 idle per origin, each for at most 30 s); there is no proxy
//! support (the tokio adapter's reqwest reads proxies from the environment; this one does not).
//!
//! No tokio runtime or reactor is involved: the driver and hyper use tokio's `sync`
//! primitives only, which need no runtime.

#![forbid(unsafe_code)]
#![warn(missing_docs, unreachable_pub)]

#[cfg(feature = "http")]
mod http;
#[cfg(feature = "http")]
mod http_pool;
#[cfg(feature = "http")]
mod hyper_io;
mod runtime;
pub mod server;

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
pub use runtime::{AsyncStdRuntime, SmolRuntime};

/// The runtime-neutral driver (`mcp-driver`), documented here: the generic [`Client`](driver::Client)
/// and [`ClientBuilder`](driver::ClientBuilder) whose methods the aliases at this crate's root
/// have, the [`Runtime`](driver::Runtime) trait, and the manager, auth, HTTP and process
/// modules.
pub mod driver {
    #[doc(inline)]
    pub use mcp_driver::*;
}

/// The MCP client on async-std or smol: [`driver::Client`] with [`AsyncStdRuntime`]; every
/// method is documented there.
pub type Client = mcp_driver::Client<AsyncStdRuntime>;

/// The connection options on async-std or smol: [`driver::ClientBuilder`] with
/// [`AsyncStdRuntime`]; every option is documented there.
pub type ClientBuilder = mcp_driver::ClientBuilder<AsyncStdRuntime>;

/// Many servers from one configuration on async-std or smol: [`driver::Manager`] with
/// [`AsyncStdRuntime`].
pub type Manager = mcp_driver::Manager<AsyncStdRuntime>;

/// A task the server made of a `tools/call` (tasks extension): [`driver::TaskHandle`] on
/// async-std or smol.
pub type TaskHandle = mcp_driver::TaskHandle<AsyncStdRuntime>;

/// What [`Client::call_tool_task`](driver::Client::call_tool_task) gives:
/// [`driver::ToolCall`] on async-std or smol.
pub type ToolCall = mcp_driver::ToolCall<AsyncStdRuntime>;

/// The crate README's code, compiled as doctests so that it stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
