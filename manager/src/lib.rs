//! `mcp-manager`: the policy of a host that talks to many MCP servers, without I/O.
//!
//! Everything here is a pure function or a state machine fed the time (`now`) by its caller,
//! like the protocol core ([`mcp_proto`]) it builds on: the same inputs give the same
//! decisions, so each is tested without processes, sockets or clocks.
//!
//! - [`config`]: parse configuration files (`mcpServers`, VS Code `servers`, `~/.claude.json`).
//! - [`discovery`]: which files apply to a project, their precedence, and merging them.
//! - [`naming`]: collision-free, reversible `server__tool` names for the model.
//! - [`reconnect`]: per-server status and the reconnect / give-up decisions.
//! - [`tool_cache`]: the one tool cache (start-up fallback and TTL hints), keyed by config.
//! - [`startup`]: which servers to serve from the cache once the start-up deadline passes.
//!
//! The orchestration (spawning, sockets, timers, files) is the driver's async `Manager`
//! (`mcp_driver::Manager`, re-exported by `mcp-tokio` and `mcp-async-std`).

pub mod config;
pub mod discovery;
pub mod naming;
pub mod reconnect;
pub mod startup;
pub mod tool_cache;
