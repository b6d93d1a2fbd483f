//! Test support for the MCP client stack: the `fault_server` binary (a stdio MCP server that
//! misbehaves on command, see `tests/README.md`), a counting allocator for heap bounds, the
//! peer helpers ([`peers`]), the outside SDK clients as test programs ([`outside_clients`]) and the interop and fault-matrix test bodies ([`interop`]), written
//! once over the public client API and generic over the runtime.

#![warn(missing_docs)]

pub mod counting_alloc;
#[cfg(target_os = "linux")]
pub mod interop;
pub use mcp_driver::testing::oauth_server;
#[cfg(target_os = "linux")]
pub mod outside_clients;
pub mod peers;
