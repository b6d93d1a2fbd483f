//! Pure parts of the multi-server manager.

pub mod config;
pub mod discovery;
pub mod naming;
pub mod reconnect;
pub mod tool_cache;
