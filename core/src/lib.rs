//! `mcp-proto`: the sans-IO core of an MCP (Model Context Protocol) client.
//!
//! (Crate documentation is being written together with the session; see `session`.)

#![forbid(unsafe_code)]
#![warn(missing_docs, unreachable_pub)]

pub mod framing;
#[cfg(any(test, fuzzing))]
pub mod fuzzing;
pub mod http;
pub mod jsonrpc;
pub mod manager;
pub mod session;
pub mod stdio;
pub mod time;
pub mod types;
