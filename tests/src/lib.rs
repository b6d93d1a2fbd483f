//! Test support for the MCP client stack: the `fault_server` binary (a stdio MCP server that
//! misbehaves on command, see `tests/README.md`) and a counting allocator for heap bounds.

#![warn(missing_docs)]

pub mod counting_alloc;
pub mod peers;
