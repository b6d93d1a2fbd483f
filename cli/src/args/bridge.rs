//! The options of `mcp bridge`: how it serves its host (stdio, or Streamable HTTP with
//! `--listen`) and which tools of a `--config` file it offers.

use clap::Args;

use super::ArgError;
use super::command_args::ServerCommand;
use super::global::{ConnectionArgs, Era, OutputArgs};
use super::values::{parse_listen_addr, parse_origin};

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
pub struct BridgeArgs {
    /// Serve Streamable HTTP on this address (`127.0.0.1:8080`; port 0 picks one) instead of
    /// stdio: each HTTP session gets its own upstream (with --config, all sessions share the
    /// file's servers). The URL is the first line on stderr, printed once the port is bound.
    #[arg(long, value_name = "ADDR", value_parser = parse_listen_addr)]
    pub listen: Option<std::net::SocketAddr>,
    /// With --listen: no sessions; every POST is served on its own, over one upstream
    /// connection shared by all clients.
    #[arg(long, requires = "listen")]
    pub stateless: bool,
    /// With --listen: require `Authorization: Bearer <token>` of every client, the token read
    /// from the environment variable VAR (never from the command line).
    #[arg(long, value_name = "VAR", requires = "listen")]
    pub bearer_token_env: Option<String>,
    /// With --listen: an `Origin` allowed besides loopback ones, as a browser sends it:
    /// scheme, host and port unless default (`https://app.example.com`,
    /// `http://localhost:3000`; no path, no trailing slash). Repeatable; browsers on other
    /// origins get 403.
    #[arg(long = "allow-origin", value_name = "ORIGIN", requires = "listen", value_parser = parse_origin)]
    pub allow_origins: Vec<String>,
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
