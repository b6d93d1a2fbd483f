//! `mcp-proto`: the sans-IO core of a Model Context Protocol (MCP) client, and the server
//! session beside it.
//!
//! This crate decides everything MCP asks of a client and does none of the I/O. It is fed
//! bytes and clock ticks, and it emits bytes, events and its next deadline. It never reads a
//! clock, never spawns a thread, never touches a socket or a process, and draws no random
//! numbers, so the same inputs always give the same outputs: it can be embedded in any
//! runtime (tokio, async-std, smol, a hand-written poll loop, a simulator) and tested with a
//! virtual clock.
//!
//! # The pieces
//!
//! - [`session::Session`]: the client session. Handshake (`initialize` → result →
//!   `notifications/initialized`), version negotiation, pending requests and their deadlines,
//!   cancellation, progress, server-to-client requests, close.
//! - [`stdio::StdioConnection`]: a session over newline-delimited JSON (a child's stdio, a
//!   socket, a pipe). [`stdio::shutdown::ShutdownSchedule`] is the policy for stopping a child.
//! - [`server::ServerSession`]: the server side in the same shape: answers `initialize`
//!   (2024-11-05 to 2025-11-25), hands client requests to its host as events, sends the host's
//!   requests to the client with deadlines; [`server::stdio::StdioServerConnection`] adds the
//!   line framing; [`server::http::HttpServer`] serves sessions over Streamable HTTP. It
//!   does not speak the 2026-07-28 era: `server/discover` is answered
//!   `-32601`, so a probing client falls back to `initialize`. [`rpc`] holds what both sides
//!   share.
//! - [`framing`]: the line decoder and the EventSource (SSE) decoder, chunk-boundary safe and
//!   bounded in memory.
//! - [`jsonrpc`]: envelopes, parsed once, with payloads kept raw until the caller decodes them.
//! - [`types`]: typed MCP methods in the `lsp-types` style (`Request::METHOD`, `Params`,
//!   `Result`), for both sides.
//! - [`http`]: Streamable HTTP and legacy HTTP+SSE decisions.
//! - [`transport_error`]: what a transport reports about a failure (an HTTP status with its
//!   challenges, a refused session id), as plain data the session's events carry.
//! - [`cache_hint`]: the result cache hints of 2026-07-28 (`ttlMs`, `cacheScope`), read once.
//!
//! # The run loop
//!
//! Every state machine here has the same four method groups (as in quinn-proto): getters,
//! inputs (`handle_*`), commands that return a handle or a [`session::UsageError`], and outputs
//! (`poll_*`). The one rule, str0m's *single-mutation invariant*: **after every input or
//! command, drain `poll_transmit` until `None`, drain `poll_event` until `None`, then read
//! `poll_timeout` and wait until that instant or the next input**, whichever comes first.
//! When the instant comes, call `handle_timeout(now)`; calling it early is a no-op.
//!
//! # Errors, in three tiers
//!
//! 1. [`session::UsageError`]: the caller's misuse (a zero timeout, a full queue, a closed
//!    session), returned at once by the command.
//! 2. [`session::RequestError`]: one request failed (a remote JSON-RPC error, a timeout, a
//!    cancellation, the close), delivered in that request's [`session::Event::Completed`].
//!    **Every request completes exactly once.**
//! 3. [`session::CloseReason`]: the connection is over, in one [`session::Event::Closed`]
//!    after the last completion.
//!
//! Peer input never panics and never returns an error from a `handle_*` method: a banner line,
//! a malformed message, an unknown id, a duplicate response or an over-long line becomes an
//! [`session::Event::Diagnostic`] and the session carries on. Every peer-supplied duration is
//! clamped and added with checked arithmetic. A panic in this crate is a bug.
//!
//! # Example: a session against an in-memory server
//!
//! ```
//! use mcp_proto::session::{Event, RequestOptions, SessionConfig};
//! use mcp_proto::stdio::StdioConnection;
//! use mcp_proto::types::{CallTool, CallToolParams, CallToolResult, Implementation};
//! use mcp_proto::jsonrpc::{self, Message};
//! use std::time::Instant;
//!
//! // A tiny scripted server: answers initialize and tools/call, one line in, one line out.
//! fn server(line: &[u8]) -> Option<Vec<u8>> {
//!     let jsonrpc::Decoded::Single(Message::Request { id, method, .. }) =
//!         jsonrpc::decode(line).ok()?.into_owned()
//!     else {
//!         return None; // notifications get no answer
//!     };
//!     let result = match method.as_str() {
//!         "initialize" => serde_json::json!({
//!             "protocolVersion": "2025-11-25",
//!             "capabilities": {"tools": {}},
//!             "serverInfo": {"name": "echo", "version": "1.0"}
//!         }),
//!         "tools/call" => serde_json::json!({"content": [{"type": "text", "text": "hi"}]}),
//!         _ => return None,
//!     };
//!     let mut out = Vec::new();
//!     jsonrpc::encode_response(&mut out, &id, &jsonrpc::to_raw(&result).unwrap());
//!     out.push(b'\n');
//!     Some(out)
//! }
//!
//! let now = Instant::now();
//! let config = SessionConfig::new(Implementation::new("example", "0.1"));
//! let mut conn = StdioConnection::new(config, now);
//!
//! // Issued before the handshake finished: it waits, then goes out after `initialized`.
//! let call = conn
//!     .session_mut()
//!     .request::<CallTool>(now, &CallToolParams::new("say_hi", Default::default()), RequestOptions::new())
//!     .unwrap();
//!
//! let mut answer = None;
//! let mut wire = Vec::new();
//! // The drive loop: drain transmits (here: straight into the server), then events.
//! for _ in 0..10 {
//!     wire.clear();
//!     while conn.poll_transmit(&mut wire).is_some() {}
//!     for line in wire.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
//!         if let Some(reply) = server(line) {
//!             conn.handle_bytes(now, &reply); // bytes may be cut anywhere
//!         }
//!     }
//!     while let Some(event) = conn.session_mut().poll_event() {
//!         match event {
//!             Event::Ready { version, .. } => assert_eq!(version.as_str(), "2025-11-25"),
//!             Event::Completed { handle, result } if handle == call => {
//!                 let raw = result.expect("the call succeeds");
//!                 let result: CallToolResult = raw.decode().unwrap(); // checks the text
//!                 answer = result.content[0].as_text().map(str::to_owned);
//!             }
//!             _ => {}
//!         }
//!     }
//!     // A real driver would now sleep until `conn.session().poll_timeout()`.
//! }
//! assert_eq!(answer.as_deref(), Some("hi"));
//! assert_eq!(conn.session().server_info().unwrap().name, "echo");
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs, unreachable_pub)]

pub mod auth;
pub mod cache_hint;
pub mod framing;
#[cfg(any(test, fuzzing))]
pub mod fuzzing;
pub mod http;
pub mod jsonrpc;
pub mod rpc;
pub mod server;
pub mod session;
pub mod stdio;
pub mod task;
pub mod time;
pub mod transport_error;
pub mod types;

pub use session::{
    Event, RawParams, RawResult, RequestHandle, RequestOptions, Session, SessionConfig,
};
pub use stdio::StdioConnection;
