//! Server configuration parsing (`mcpServers`). Being written.
