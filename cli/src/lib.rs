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
//! - [`suggest`]: "did you mean" among a server's own names;
//! - [`redact`]: the one masking rule for secrets in everything printed outside results.

#![warn(missing_docs)]

pub mod app;
pub mod args;
pub mod demo_server;
pub mod exit;
pub mod lint;
pub mod load_stats;
pub mod redact;
pub mod render;
pub mod suggest;

/// `$COLUMNS` when it holds a sensible width (a user's override, honoured everywhere).
pub fn columns_override() -> Option<usize> {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&w| (render::MIN_WIDTH..=1000).contains(&w))
}

/// The width to render stdout for: `$COLUMNS` when set; else, when stdout is a terminal, the
/// terminal's real width (asked with `terminal_size`); else (a pipe or a file)
/// [`render::UNLIMITED_WIDTH`], so that nothing a script reads is cut or wrapped.
pub fn output_width(stdout_is_terminal: bool) -> usize {
    if let Some(w) = columns_override() {
        return w;
    }
    if stdout_is_terminal {
        return asked_width(&std::io::stdout()).unwrap_or(render::DEFAULT_WIDTH);
    }
    render::UNLIMITED_WIDTH
}

/// The width of the terminal on stderr (progress bars and other redrawn lines): `$COLUMNS`
/// when set, else the terminal's real width, else [`render::DEFAULT_WIDTH`].
pub fn terminal_width() -> usize {
    columns_override()
        .or_else(|| asked_width(&std::io::stderr()))
        .or_else(|| asked_width(&std::io::stdout()))
        .unwrap_or(render::DEFAULT_WIDTH)
}

/// The width of the terminal behind `stream`, when it is one (and not absurdly narrow).
fn asked_width(stream: &impl std::os::fd::AsFd) -> Option<usize> {
    let (terminal_size::Width(w), _) = terminal_size::terminal_size_of(stream)?;
    Some(usize::from(w)).filter(|&w| w >= render::MIN_WIDTH)
}
