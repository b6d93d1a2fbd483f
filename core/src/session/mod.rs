//! The MCP client session. Being written.
