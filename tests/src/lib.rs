//! Test support for the MCP client stack: the `fault_server` binary (a stdio MCP server that
//! misbehaves on command, see `tests/README.md`), a counting allocator for heap bounds, the
//! peer helpers ([`peers`]) and the interop and fault-matrix test bodies ([`interop`]), written
//! once over the public client API and generic over the runtime.

#![warn(missing_docs)]

pub mod counting_alloc;
#[cfg(target_os = "linux")]
pub mod interop;
pub use mcp_driver::testing::oauth_server;
pub mod peers;
