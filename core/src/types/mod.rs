//! Typed MCP methods. Being written.
