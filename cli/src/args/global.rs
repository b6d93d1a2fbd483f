//! The options every command takes (`global = true`): where the server is and how long to
//! wait ([`ConnectionArgs`]), and how to print ([`OutputArgs`]).

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueEnum};

use super::values::{parse_duration, parse_env, parse_header};

/// Which protocol era to speak (`--era`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum Era {
    /// Only the `initialize` handshake era (2024-11-05 … 2025-11-25).
    Legacy,
    /// Whatever the server supports, newest first.
    #[default]
    Auto,
    /// Only the stateless era (2026-07-28 and later).
    Modern,
}

/// Connection options; all are global, so they may come before or after the subcommand.
#[derive(Debug, Clone, Default, Args)]
pub struct ConnectionArgs {
    /// The server's Streamable HTTP endpoint (falls back to legacy HTTP+SSE).
    #[arg(long, global = true, value_name = "URL", conflicts_with = "config")]
    pub url: Option<String>,
    /// An mcpServers JSON file (Claude Desktop, Cursor, .mcp.json); with --server for one of
    /// its servers (a file with one server needs none), without it for `tools --all` and
    /// `call server__tool`.
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Which server of the --config file to start.
    #[arg(long, global = true, value_name = "NAME", requires = "config")]
    pub server: Option<String>,
    /// An HTTP header for every request, `Name: value` (repeatable). `${VAR}` in the value is
    /// taken from the environment (`-H 'Authorization: Bearer ${API_TOKEN}'` keeps the token
    /// out of the command line); `${VAR:-default}` when it may be unset, `$$` for a literal `$`.
    #[arg(long = "header", short = 'H', global = true, value_name = "K:V", value_parser = parse_header)]
    pub headers: Vec<(String, String)>,
    /// An environment variable for a stdio server, `KEY=VALUE` (repeatable).
    #[arg(long = "env", short = 'e', global = true, value_name = "K=V", value_parser = parse_env)]
    pub env: Vec<(String, String)>,
    /// How long one request may take (`30s`, `500ms`, `2m`; a bare number is seconds). A tool
    /// call's timeout restarts at each progress update it reports (see --max-time).
    #[arg(long, global = true, value_name = "DURATION", value_parser = parse_duration)]
    pub timeout: Option<Duration>,
    /// The longest a tool call may run in all, however often it reports progress (default
    /// 10m, or --timeout when that is longer).
    #[arg(long, global = true, value_name = "DURATION", value_parser = parse_duration)]
    pub max_time: Option<Duration>,
    /// How long connecting and the handshake may take (default 60s; with --config, how long to
    /// wait for slow servers, default 10s).
    #[arg(long, global = true, value_name = "DURATION", value_parser = parse_duration)]
    pub connect_timeout: Option<Duration>,
    /// Which protocol era to speak.
    #[arg(long, global = true, value_enum, default_value_t = Era::Auto)]
    pub era: Era,
    /// A directory the server may work in, offered as a root (`roots/list`; repeatable). Without
    /// it the client declares no roots capability.
    #[arg(long = "root", global = true, value_name = "DIR")]
    pub roots: Vec<PathBuf>,
    /// The OAuth token file (default: $MCP_TOKEN_STORE, else
    /// $XDG_CONFIG_HOME/mcp-rs/tokens.json, else ~/.config/mcp-rs/tokens.json).
    #[arg(long, global = true, value_name = "FILE")]
    pub token_store: Option<PathBuf>,
}

/// A tool call's total bound when `--max-time` is not given.
pub const DEFAULT_MAX_TIME: Duration = Duration::from_secs(600);

impl ConnectionArgs {
    /// Expands `${VAR}` in the `--header` values from the environment (the rules of a config
    /// file's `headers`, except that `$$` is one literal `$`). Call once, right after parsing,
    /// before anything reads the headers (or masks their values).
    ///
    /// # Errors
    ///
    /// What is wrong, naming the header and the variable, never a header's value.
    pub fn expand_header_vars(&mut self) -> Result<(), String> {
        let env = |name: &str| std::env::var(name).ok();
        for (name, value) in &mut self.headers {
            *value = super::values::expand_header(name, value, &env)?;
        }
        Ok(())
    }

    /// The total bound of a tool call whose timeout progress keeps restarting: `--max-time`,
    /// else [`DEFAULT_MAX_TIME`] or `--timeout` when that is longer (so a long `--timeout`
    /// is never cut short by the default).
    pub fn max_time(&self) -> Duration {
        self.max_time.unwrap_or_else(|| {
            self.timeout
                .map_or(DEFAULT_MAX_TIME, |t| t.max(DEFAULT_MAX_TIME))
        })
    }
}

/// Output options; all are global.
#[derive(Debug, Clone, Default, Args)]
pub struct OutputArgs {
    /// Print a wire trace of every message on stderr (secrets masked); twice (-vv) adds the
    /// HTTP requests and responses with their headers and the SSE framing.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// Print nothing but the result (no progress bar, no log messages).
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Print results as JSON, for scripts.
    #[arg(long, global = true)]
    pub json: bool,
    /// Write the result to FILE instead of stdout; a result with an image, audio or blob
    /// item gets its decoded bytes (as --raw writes them).
    #[arg(long, short = 'o', global = true, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Write a result's bare text or decoded image / audio / blob bytes, not a rendering.
    #[arg(long, global = true, conflicts_with = "json")]
    pub raw: bool,
    /// When to use colour: `auto` (on a terminal, unless NO_COLOR is set), `always`, `never`.
    #[arg(long, global = true, value_enum, default_value_t = ColorWhen::Auto, value_name = "WHEN")]
    pub color: ColorWhen,
}

/// `--color`: when to use colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum ColorWhen {
    /// On a terminal, unless NO_COLOR is set.
    #[default]
    Auto,
    /// Always, even in a pipe or with NO_COLOR.
    Always,
    /// Never.
    Never,
}

impl ColorWhen {
    /// The renderer's setting for this choice.
    pub fn to_style(self) -> crate::render::style::When {
        match self {
            ColorWhen::Auto => crate::render::style::When::Auto,
            ColorWhen::Always => crate::render::style::When::Always,
            ColorWhen::Never => crate::render::style::When::Never,
        }
    }
}
