//! Pure parts of the multi-server manager.
//!
//! - [`config`]: parse configuration files (`mcpServers`, VS Code `servers`, `~/.claude.json`).
//! - [`discovery`]: which files apply to a project, their precedence, and merging them.
//! - [`naming`]: collision-free, reversible `server__tool` names for the model.
//! - [`reconnect`]: per-server status and the reconnect / give-up decisions.
//! - [`tool_cache`]: the one tool cache (start-up fallback and TTL hints), keyed by config.
//! - [`startup`]: which servers to serve from the cache once the start-up deadline passes.
//!
//! The orchestration (spawning, sockets, timers, files) lives in the driver crate.

pub mod config;
pub mod discovery;
pub mod naming;
pub mod reconnect;
pub mod startup;
pub mod tool_cache;
