//! The `mcp` command-line client and its embedded demo server.
//!
//! The binary lives in `main.rs`; this library holds the pieces it is made of, so tests can
//! use them directly:
//!
//! - [`app`]: connecting with `mcp_tokio::Client` and running each subcommand, and OAuth
//!   (`login`, `logout`, stored tokens: [`app::auth`]);
//! - [`args`]: the clap command tree and the parsers for `key=value` arguments, headers,
//!   environment pairs and durations;
//! - [`demo_server`]: the server behind `mcp demo-server`;
//! - [`render`]: human output under a given terminal width;
//! - [`lint`]: portability checks of tool input schemas;
//! - [`load_stats`]: the latency histogram of `mcp load`;
//! - [`exit`]: exit codes and error messages with hints, and the `--json` error object;
//! - [`suggest`]: "did you mean" among a server's own names.

#![warn(missing_docs)]

pub mod app;
pub mod args;
pub mod demo_server;
pub mod exit;
pub mod lint;
pub mod load_stats;
pub mod render;
pub mod suggest;

/// The terminal width to render for: `$COLUMNS` when it is a sensible number, else
/// [`render::DEFAULT_WIDTH`].
pub fn terminal_width() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&w| (render::MIN_WIDTH..=1000).contains(&w))
        .unwrap_or(render::DEFAULT_WIDTH)
}
