//! `mcp-driver`: the runtime-neutral half of the MCP client.
//!
//! This crate holds everything that is async but not tied to one runtime: the [`Runtime`]
//! trait the driver is generic over, and (on Unix) the child-process layer for stdio servers:
//! building the command, process-group signalling, the kill-on-drop guard, stderr capture and
//! exit-status descriptions. Runtime crates such as `mcp-tokio` implement [`Runtime`] and
//! re-export the client.
//!
//! It depends on `futures-io` / `futures-util` only, never on a specific runtime.

#![forbid(unsafe_code)]
#![warn(missing_docs, unreachable_pub)]

#[cfg(unix)]
pub mod process;
pub mod runtime;

pub use runtime::{BoxFuture, ChildParts, ChildProcess, Runtime};
