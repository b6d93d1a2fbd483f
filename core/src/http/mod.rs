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
//! - [`error`]: [`HttpStatusError`](error::HttpStatusError), a failed response as an error value.
//!
//! None of them does I/O or reads a clock; each takes what it needs as arguments.

pub mod backoff;
pub mod challenge;
pub mod error;
pub mod headers;
pub mod origin;
pub mod retry_after;
