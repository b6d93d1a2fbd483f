//! The options of `mcp bridge`: how it serves its host (stdio, or Streamable HTTP with
//! `--listen`) and which tools of a `--config` file it offers.

use clap::Args;

use super::ArgError;
use super::command_args::ServerCommand;
use super::global::{ConnectionArgs, Era, OutputArgs};
use super::listen::{ListenArgs, more_help};

/// `mcp bridge --config FILE`: which of the namespaced tools the host is offered.
#[derive(Debug, Clone, Default, Args)]
pub struct ToolFilterArgs {
    /// With --config: offer only the tools whose namespaced name matches this glob
    /// (`github__*`); repeatable.
    #[arg(long, value_name = "PATTERN")]
    pub allow: Vec<String>,
    /// With --config: never offer the tools whose namespaced name matches this glob
    /// (`*__delete_*`); repeatable, wins over --allow.
    #[arg(long, value_name = "PATTERN")]
    pub deny: Vec<String>,
}

/// The options of `bridge`.
#[derive(Debug, Clone, Default, Args)]
#[command(
    mut_arg(
        "listen",
        more_help(
            ", and each session its own upstream (the servers of a --config file are shared by all sessions)"
        )
    ),
    mut_arg(
        "stateless",
        more_help(", over one upstream connection shared by all clients")
    )
)]
pub struct BridgeArgs {
    /// `--listen` and its options: Streamable HTTP instead of stdio.
    #[command(flatten)]
    pub http: ListenArgs,
    /// The stdio server to forward to, instead of --url.
    #[command(flatten)]
    pub server: ServerCommand,
    /// `--allow` / `--deny`, for `--config`.
    #[command(flatten)]
    pub tools: ToolFilterArgs,
}

/// Refuses the global options `mcp bridge` has no use for, naming each with the reason,
/// rather than ignoring them: `--root` (the host's roots are forwarded), `--era` other than
/// `auto` (the host's protocol version is spoken), and the output options `--json`,
/// `--output` and `--raw` (stdout is the protocol channel; errors go to stderr as text).
/// `--max-time` is taken: it bounds a forwarded request whose progress keeps restarting its
/// `--timeout`.
///
/// Call it once the command line is parsed, before anything is started.
pub fn refuse_unused_globals(
    connection: &ConnectionArgs,
    output: &OutputArgs,
) -> Result<(), ArgError> {
    let mut refused = Vec::new();
    if !connection.roots.is_empty() {
        refused.push(
            "--root (roots are the host's: a server's roots/list is forwarded to the host; \
             with --config --listen none are offered)",
        );
    }
    if connection.era != Era::Auto {
        refused.push(
            "--era (the bridge speaks the host's protocol version to the server, as the host \
             would directly)",
        );
    }
    if output.json {
        refused.push(
            "--json (stdout carries the protocol only; errors go to stderr as text, and the \
             exit code tells what happened)",
        );
    }
    if output.output.is_some() {
        refused.push("--output (stdout is the protocol channel to the host)");
    }
    if output.raw {
        refused.push("--raw (the bridge forwards results as they are)");
    }
    if refused.is_empty() {
        return Ok(());
    }
    Err(ArgError(format!(
        "mcp bridge does not take {}",
        refused.join("; nor ")
    )))
}
