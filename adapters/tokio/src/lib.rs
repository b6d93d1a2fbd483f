//! `mcp-tokio`: the MCP client on the tokio runtime.
//!
//! This crate only implements [`mcp_driver::Runtime`] for tokio ([`TokioRuntime`]); the
//! driver and the client live in `mcp-driver`.

#![forbid(unsafe_code)]
#![warn(missing_docs, unreachable_pub)]

mod runtime;

pub use mcp_driver;
pub use runtime::TokioRuntime;
