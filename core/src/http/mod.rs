//! Streamable HTTP and legacy HTTP+SSE decisions.
//!
//! The pure helpers the HTTP transport is built from, one concern per module:
//!
//! - [`headers`]: header names, [`HeaderList`](headers::HeaderList), session id validation and
//!   `Content-Type` classification;
//! - [`challenge`]: `WWW-Authenticate` challenges and the Bearer parameters of MCP authorization;
//! - [`retry_after`]: `Retry-After` as a clamped delay;
//! - [`origin`]: same-origin checks for the legacy `endpoint` event and for redirects;
//! - [`backoff`]: capped exponential reconnection delays with seeded jitter;
//! - [`error`]: [`HttpStatusError`](error::HttpStatusError), a failed response as an error value;
//! - [`session_gone`]: which responses say the server forgot the session (404, and the 400 of
//!   the TypeScript SDK's servers), so a fresh one is started.
//!
//! On top of them, [`Connection`] is the sans-IO state machine carrying a session over
//! Streamable HTTP or legacy HTTP+SSE, and [`oneshot`] performs one call with it.
//!
//! None of them does I/O or reads a clock; each takes what it needs as arguments.

pub mod backoff;
pub mod challenge;
mod closing;
mod connection;
pub mod error;
mod exchange;
mod exchange_table;
pub mod headers;
mod identity;
mod issue;
pub mod modern;
pub mod oneshot;
pub mod origin;
mod post_queue;
mod ready_hold;
mod reset;
mod response;
pub mod retry_after;
pub mod session_gone;
mod streams;
mod timers;
mod transport_choice;

#[cfg(test)]
mod tests;

pub use connection::Connection;
pub use exchange::{
    ConnectionConfig, Event, ExchangeError, ExchangeFailure, ExchangeId, FailureKind, HttpEvent,
    HttpRequest, Method, Purpose, StreamId, Transport, TransportMode,
};
