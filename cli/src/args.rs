//! The command line: every option and subcommand of `mcp`, parsed by clap, plus the parsers
//! for what clap leaves as strings (`key=value` tool arguments, headers, durations).
//!
//! [`Cli::target`] turns the connection options into one [`Target`]; the subcommands that
//! need no server (`demo`, `demo-server`, `lint --file`) never ask for one.
//!
//! One module per concern: [`global`] (the options every command takes), [`command`] (the
//! subcommand tree), [`command_args`] (the options of one command), [`bridge`] (the options
//! of `mcp bridge`), [`pairs`] (`key=value` tool and prompt arguments), [`values`] (the
//! parsers of option values), [`typed`] (tool arguments typed by an input schema) and
//! [`help`] (how the tree is presented).

use std::path::PathBuf;

use clap::Parser;

pub mod bridge;
pub mod command;
pub mod command_args;
pub mod global;
pub mod help;
pub mod listen;
pub mod pairs;
pub mod typed;
pub mod values;

pub use bridge::{BridgeArgs, ToolFilterArgs};
pub use command::Command;
pub use command_args::{
    DemoServerArgs, LogLevel, ServerCommand, TaskAction, TasksArgs, ToolArgs, ToolsArgs, WatchArgs,
};
pub use global::{ColorWhen, ConnectionArgs, DEFAULT_MAX_TIME, Era, OutputArgs};
pub use listen::ListenArgs;
pub use pairs::{build_arguments, parse_value, string_pairs};
// The helpers `typed` builds on.
use pairs::{insert_path, kind_of, split_pair};
pub use values::{
    CompletionRef, parse_duration, parse_env, parse_header, parse_listen_addr, parse_origin,
    parse_reference,
};

/// What `--help` prints after the options: the exit codes scripts can rely on.
const AFTER_HELP: &str = "\
Connect with `-- <command> [args]` (stdio), `--url <url>` (Streamable HTTP, legacy SSE fallback)
or `--config <file> --server <name>` (an mcpServers JSON file; a file with one server needs no
--server). With `--config <file>` alone, `tools --all` starts every server of the file and
`call server__tool` calls a namespaced tool.

The client answers the server's questions: elicitation and sampling are asked at the terminal
(declined without one), `roots/list` is answered with the --root directories.

OAuth: `mcp login --url <url>` authorizes in a browser and stores the tokens (default
$XDG_CONFIG_HOME/mcp-rs/tokens.json, else ~/.config/mcp-rs/tokens.json, mode 0600; override with
--token-store or $MCP_TOKEN_STORE). Every HTTP connection then sends the stored token and
refreshes it when it expires; without a usable token a server's 401 exits with code 3 and
a hint to log in (no browser is opened unasked). `mcp logout` removes stored tokens.

Exit codes: 0 ok, 1 tool error (isError) or lint errors, 2 usage (bad options, URL or
arguments), 3 connection or handshake failure, authorization needed or failed
(`tools --all`: no server came up), 4 the server answered with an error (tool, prompt or
resource not found, invalid params, an HTTP error status), 5 timeout, 130 interrupted
(Ctrl-C), 143 SIGTERM, 129 SIGHUP (each signal cancels the running call and shuts the server
down first; Ctrl-C or SIGTERM ends `bridge --listen` and `demo-server --listen` with 0). With --json an error is also one JSON object on stdout: {\"error\": {\"code\":
\"tool_not_found\", \"exit\": 4, \"message\": …, \"hint\": …, \"didYouMean\": […]}}; `code` is
stable (the README lists every code).";

/// `mcp`: a command-line client for MCP servers.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "mcp",
    version,
    about = "Poke at any MCP server from a terminal",
    after_help = AFTER_HELP,
    // `help` is ours (see `Command::Help`): it also knows the topic `options`.
    disable_help_subcommand = true
)]
pub struct Cli {
    /// How to reach the server and how long to wait.
    #[command(flatten)]
    pub connection: ConnectionArgs,
    /// How to print.
    #[command(flatten)]
    pub output: OutputArgs,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Where the server is, once the options are resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// Spawn `program args…` and speak over its stdin/stdout.
    Stdio {
        /// The program.
        program: String,
        /// Its arguments.
        args: Vec<String>,
    },
    /// Connect to a Streamable HTTP (or legacy SSE) endpoint.
    Http {
        /// The endpoint.
        url: String,
    },
    /// Start the entry `server` of the mcpServers file `file`.
    Config {
        /// The mcpServers JSON file.
        file: PathBuf,
        /// The entry's name; `None`: the file's only server (checked once the file is read).
        server: Option<String>,
    },
}

impl Cli {
    /// Resolves where to connect: exactly one of `-- cmd`, `--url` or `--config/--server`.
    pub fn target(&self) -> Result<Target, ArgError> {
        let argv = self
            .command
            .server_command()
            .map(|s| s.argv.as_slice())
            .unwrap_or_default();
        let c = &self.connection;
        let given = usize::from(!argv.is_empty())
            + usize::from(c.url.is_some())
            + usize::from(c.config.is_some());
        if given > 1 {
            return Err(ArgError::new(
                "give only one of `-- <command>`, --url and --config",
            ));
        }
        if let Some((program, args)) = argv.split_first() {
            return Ok(Target::Stdio {
                program: program.clone(),
                args: args.to_vec(),
            });
        }
        if let Some(url) = &c.url {
            return Ok(Target::Http { url: url.clone() });
        }
        match &c.config {
            Some(file) => Ok(Target::Config {
                file: file.clone(),
                server: c.server.clone(),
            }),
            None => Err(ArgError::new(
                "no server given: add `-- <command> [args]`, --url <url> or --config <file> --server <name> \
                 (try `mcp demo` for a server to play with)",
            )),
        }
    }
}

impl Cli {
    /// Refuses what clap accepted but the subcommand would ignore: today, the global
    /// options `mcp bridge` has no use for ([`bridge::refuse_unused_globals`]). Call it once
    /// the line is parsed, before anything is started or written.
    pub fn refuse_ignored_options(&self) -> Result<(), ArgError> {
        match &self.command {
            Command::Bridge(_) => bridge::refuse_unused_globals(&self.connection, &self.output),
            _ => Ok(()),
        }
    }
}

/// An argument clap accepted but that does not make sense; the CLI exits with code 2.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ArgError(pub String);

impl ArgError {
    fn new(message: impl Into<String>) -> Self {
        ArgError(message.into())
    }
}

#[cfg(test)]
mod tests;
