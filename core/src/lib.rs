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
//! - [`connection`]: the one contract both connection types keep, and their event shape.
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
//! - [`http`]: Streamable HTTP and legacy HTTP+SSE decisions; [`http::Connection`] is a
//!   session over them.
//! - [`transport_error`]: what a transport reports about a failure (an HTTP status with its
//!   challenges, a refused session id), as plain data the session's events carry.
//! - [`cache_hint`]: the result cache hints of 2026-07-28 (`ttlMs`, `cacheScope`), read once.
//!
//! # One connection contract
//!
//! A host drives a session through a *connection*, which owns the [`Session`] and carries its
//! messages over one transport. Both connection types keep one contract
//! ([`connection::Connection`], written on each type as quinn-proto does): the same four method
//! groups and the same drain rule; only the transport's own inputs and transmit output differ.
//!
//! | group | [`stdio::StdioConnection`] | [`http::Connection`] |
//! |---|---|---|
//! | **(A) getters** | [`session`](stdio::StdioConnection::session), [`is_finished`](stdio::StdioConnection::is_finished), [`buffered_len`](stdio::StdioConnection::buffered_len), [`awaiting_respawn`](stdio::StdioConnection::awaiting_respawn) | [`session`](http::Connection::session), [`is_finished`](http::Connection::is_finished), [`buffered_len`](http::Connection::buffered_len), [`session_id`](http::Connection::session_id), [`transport`](http::Connection::transport), [`config`](http::Connection::config), [`open_exchanges`](http::Connection::open_exchanges) |
//! | **(B) inputs** `handle_*` | [`handle_bytes`](stdio::StdioConnection::handle_bytes), [`handle_eof`](stdio::StdioConnection::handle_eof), [`handle_eof_unread`](stdio::StdioConnection::handle_eof_unread), [`handle_respawned`](stdio::StdioConnection::handle_respawned), [`handle_timeout`](stdio::StdioConnection::handle_timeout), [`handle_transport_lost`](stdio::StdioConnection::handle_transport_lost) | [`handle_response_head`](http::Connection::handle_response_head), [`handle_body`](http::Connection::handle_body), [`handle_body_end`](http::Connection::handle_body_end), [`handle_failure`](http::Connection::handle_failure), [`handle_timeout`](http::Connection::handle_timeout), [`handle_transport_lost`](http::Connection::handle_transport_lost) |
//! | **(C) commands** | [`session_mut`](stdio::StdioConnection::session_mut) (requests, notifications, cancellations, responses: see [`Session`]), [`close`](stdio::StdioConnection::close) | [`session_mut`](http::Connection::session_mut) (the same), [`close`](http::Connection::close), [`set_authorization`](http::Connection::set_authorization) |
//! | **(D) outputs** `poll_*` | [`poll_transmit`](stdio::StdioConnection::poll_transmit), [`poll_event`](stdio::StdioConnection::poll_event), [`poll_timeout`](stdio::StdioConnection::poll_timeout) | [`poll_exchange`](http::Connection::poll_exchange), [`poll_abort`](http::Connection::poll_abort), [`poll_event`](http::Connection::poll_event), [`poll_timeout`](http::Connection::poll_timeout) |
//!
//! The sessions ([`Session`], [`server::ServerSession`]) and the server's connections
//! ([`server::stdio::StdioServerConnection`], [`server::http::HttpServer`]) list their public
//! methods in the same four groups on each type. A test (`tests/method_groups.rs`) keeps every
//! list, this table included, equal to the methods the code has.
//!
//! Events are one shape for both: [`connection::Event`] is either a session event
//! ([`Event::Session`](connection::Event::Session)) or the transport's own
//! ([`Event::Transport`](connection::Event::Transport): [`stdio::StdioEvent`] asks the adapter
//! to respawn a server that exited on the era probe; [`http::HttpEvent`] reports session
//! resets, resumed streams, the end of the DELETE).
//!
//! # The run loop
//!
//! The one rule, str0m's *single-mutation invariant*: **after every input or command, drain
//! the transmit output (`poll_transmit`; `poll_exchange` and `poll_abort`) until `None`, drain
//! `poll_event` until `None`, then read `poll_timeout` and wait until that instant or the next
//! input**, whichever comes first. When the instant comes, call `handle_timeout(now)`; calling
//! it early is a no-op. Every other state machine here ([`session::Session`] on its own,
//! [`stdio::shutdown::ShutdownSchedule`], [`http::oneshot::OneShot`]) has the same groups.
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
//! # Example: the run loop over stdio and over HTTP
//!
//! The same hand-written loop drives both connection types, each against a tiny scripted
//! in-memory server; only step 1, the transport's transmit output, differs. The crate's
//! `hand_loop` example runs the same loop against a real server, over a child process or a
//! plain `http://` URL, with nothing but blocking `std` I/O
//! (`cargo run -p mcp-proto --example hand_loop -- stdio my-mcp-server`).
//!
//! ```
//! use mcp_proto::connection::Event;
//! use mcp_proto::http::headers::HeaderList;
//! use mcp_proto::http::{self, ConnectionConfig};
//! use mcp_proto::jsonrpc::{self, Message};
//! use mcp_proto::session::{self, RequestHandle, RequestOptions, SessionConfig};
//! use mcp_proto::stdio::StdioConnection;
//! use mcp_proto::types::{CallTool, CallToolParams, CallToolResult, Implementation};
//! use std::time::Instant;
//!
//! // The scripted server: answers initialize and tools/call; `None` for notifications.
//! fn server(message: &[u8]) -> Option<Vec<u8>> {
//!     let jsonrpc::Decoded::Single(Message::Request { id, method, .. }) =
//!         jsonrpc::decode_owned(message).ok()?
//!     else {
//!         return None;
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
//!     Some(out)
//! }
//!
//! // What the loop does with an event: the call's answer is the one this host waits for.
//! fn on_event<T>(event: Event<T>, call: RequestHandle, answer: &mut Option<String>) {
//!     match event {
//!         Event::Session(session::Event::Completed { handle, result }) if handle == call => {
//!             let result: CallToolResult = result.expect("the call succeeds").decode().unwrap();
//!             *answer = result.content[0].as_text().map(str::to_owned);
//!         }
//!         Event::Session(_) | Event::Transport(_) => {} // Ready, notifications, HTTP reports
//!     }
//! }
//!
//! let now = Instant::now();
//! let config = || SessionConfig::new(Implementation::new("example", "0.1"));
//! let params = CallToolParams::new("say_hi", Default::default());
//!
//! // ---- over stdio ----
//! let mut conn = StdioConnection::new(config(), now);
//! // (C) a command, issued before the handshake finished: it waits, then goes out.
//! let call = conn.session_mut().request::<CallTool>(now, &params, RequestOptions::new()).unwrap();
//! let mut answer = None;
//! for _ in 0..10 {
//!     // (D) 1. the transmit output, into the server; its answers are inputs (B).
//!     let mut wire = Vec::new();
//!     while conn.poll_transmit(&mut wire).is_some() {}
//!     for line in wire.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
//!         if let Some(mut reply) = server(line) {
//!             reply.push(b'\n');
//!             conn.handle_bytes(now, &reply); // bytes may be cut anywhere
//!         }
//!     }
//!     // (D) 2. the events.
//!     while let Some(event) = conn.poll_event() {
//!         on_event(event, call, &mut answer);
//!     }
//!     // (D) 3. the deadline: a real driver sleeps until it, then calls `handle_timeout`.
//!     if conn.poll_timeout().is_some_and(|at| at <= now) {
//!         conn.handle_timeout(now);
//!     }
//! }
//! assert_eq!(answer.as_deref(), Some("hi"));
//! assert_eq!(conn.session().server_info().unwrap().name, "echo");
//!
//! // ---- over Streamable HTTP ----
//! let url = "http://127.0.0.1:3000/mcp".parse().unwrap();
//! let mut conn = http::Connection::new(ConnectionConfig::new(url), config(), now);
//! let call = conn.session_mut().request::<CallTool>(now, &params, RequestOptions::new()).unwrap();
//! let mut answer = None;
//! for _ in 0..10 {
//!     // (D) 1. the transmit output, into the server; its answers are inputs (B).
//!     while let Some(exchange) = conn.poll_exchange(now) {
//!         let (status, body) = match exchange.method {
//!             http::Method::Post => server(&exchange.body).map_or((202, None), |b| (200, Some(b))),
//!             _ => (405, None), // no listener stream; DELETE is refused too
//!         };
//!         let mut headers = HeaderList::new();
//!         if body.is_some() {
//!             headers.insert("content-type", "application/json");
//!         }
//!         conn.handle_response_head(now, exchange.id, status, headers);
//!         conn.handle_body(now, exchange.id, body.as_deref().unwrap_or_default());
//!         conn.handle_body_end(now, exchange.id);
//!     }
//!     while conn.poll_abort().is_some() {} // nothing to stop: every exchange ended
//!     // (D) 2. the events.
//!     while let Some(event) = conn.poll_event() {
//!         on_event(event, call, &mut answer);
//!     }
//!     // (D) 3. the deadline: a real driver sleeps until it, then calls `handle_timeout`.
//!     if conn.poll_timeout().is_some_and(|at| at <= now) {
//!         conn.handle_timeout(now);
//!     }
//! }
//! assert_eq!(answer.as_deref(), Some("hi"));
//! assert_eq!(conn.session().server_info().unwrap().name, "echo");
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs, unreachable_pub)]

pub mod auth;
pub mod cache_hint;
pub mod connection;
pub mod framing;
#[cfg(any(test, fuzzing))]
pub mod fuzzing;
pub mod http;
pub mod jsonrpc;
#[cfg(test)]
mod progress_spellings;
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
