//! `mcp-driver`: the runtime-neutral async MCP client.
//!
//! [`Client`] is the handle most code uses; it is generic over a [`Runtime`] so that the
//! same driver runs on tokio (`mcp-tokio`) or async-std. Behind each client runs one driver
//! task per connection that feeds the sans-IO core (`mcp-proto`), drains its outputs, writes
//! with backpressure and arms one timer; it makes no protocol decision of its own.
//!
//! - Transports: a stdio server (a child process in its own process group, stderr captured,
//!   shut down by the core's schedule), any `AsyncRead + AsyncWrite` pair ([`Client::over`]),
//!   and (feature `http`, on by default) Streamable HTTP or legacy HTTP+SSE (`Client::http`),
//!   whose exchanges the runtime performs through [`http::HttpClient`]; the core decides every
//!   header, redirect, retry, resumption and session id.
//! - Calls: typed methods (`list_tools`, `call_tool`, resources, prompts, completion,
//!   logging, `ping`), [`Client::request`] for any typed method, [`Client::request_raw`] and
//!   [`Client::notify`] untyped; per-call [`CallOptions`]; a [`CancelHandle`] cancels a call
//!   with a reason the server receives, and dropping a call's future cancels it too.
//! - Server notifications: [`Client::notifications`], bounded, reporting [`Lagged`];
//!   subscriptions ([`Client::subscribe`], [`Client::listen`]) as a [`Subscription`] stream in
//!   both protocol eras (`subscriptions/listen` in 2026-07-28). A subscription survives an
//!   expired HTTP session (re-issued on the new one, with the log level), and one from the
//!   [`Manager`] ([`Manager::subscribe`]) survives the server's reconnect; either way the
//!   stream reports the [`Gap`] ([`Missed::Gap`]) and goes on.
//! - Server requests: typed handlers on the [`ClientBuilder`]
//!   ([`on_sampling`](ClientBuilder::on_sampling), [`on_elicitation`](ClientBuilder::on_elicitation),
//!   [`on_roots`](ClientBuilder::on_roots), [`roots`](ClientBuilder::roots)) with the structs
//!   of `mcp_proto::types` in and out, or the raw-JSON [`RootsHandler`], [`SamplingHandler`],
//!   [`ElicitationHandler`]; exactly what is registered is declared.
//! - The server side ([`server`]): one MCP client served over any byte stream pair by the
//!   same kind of driver over the core's server session, with a handler per request
//!   (progress, cancellation, requests to the client awaited) and a [`server::ServerHandle`].
//! - With the `testing` feature: `testing::FakeServer`, a scripted in-process server.
//!
//! This crate depends on no runtime: only `futures-io`, `futures-util` and tokio's
//! runtime-independent `sync` primitives.

// One audited exception: the pre-exec hook that sets a stdio server's parent-death signal
// (`process::parent_death`, Linux), which std offers only as an unsafe `pre_exec`.
#![deny(unsafe_code)]
#![warn(missing_docs, unreachable_pub)]

#[cfg(feature = "http")]
pub mod auth;
mod client;
mod driver;
mod error;
mod handler;
pub mod http;
pub mod manager;
mod notify;
mod options;
#[cfg(unix)]
pub mod process;
pub mod runtime;
pub mod server;
mod shared;
mod subscription;
#[cfg(feature = "testing")]
pub mod testing;

pub use client::{
    Client, ClientBuilder, ConnectionState, IntoStdioCommand, ListBudget, ListLimit, MAX_PAGES,
    MAX_VIOLATIONS, SchemaViolation, TaskHandle, ToolCall,
};
pub use error::Error;
pub use handler::{
    ElicitationHandler, HandlerFuture, RawAnswer, RawHandler, Root, RootsHandler, SamplingHandler,
    StaticRoots, TaskQueryHandler,
};
pub use manager::{Manager, ManagerBuilder, ManagerError, NamespacedTool};
pub use mcp_manager;
pub use mcp_proto;
pub use notify::{Gap, GapCause, Lagged, Missed, Notifications};
#[cfg(feature = "http")]
pub use options::HttpTrace;
pub use options::{CallOptions, CancelHandle, Progress, ProgressWatch, WireDirection};
pub use runtime::{BoxFuture, ChildParts, ChildProcess, Runtime};
pub use subscription::Subscription;
