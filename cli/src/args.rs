//! The command line: every option and subcommand of `mcp`, parsed by clap, plus the parsers
//! for what clap leaves as strings (`key=value` tool arguments, headers, durations).
//!
//! [`Cli::target`] turns the connection options into one [`Target`]; the subcommands that
//! need no server (`demo`, `demo-server`, `lint --file`) never ask for one.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};
use serde_json::{Map, Value};

pub mod typed;

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

/// A server log level for `log-level`, in increasing severity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
#[allow(missing_docs)] // The names are the RFC 5424 levels MCP uses.
pub enum LogLevel {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

impl LogLevel {
    /// The core's level with the same name.
    pub fn to_proto(self) -> mcp_proto::types::LoggingLevel {
        use mcp_proto::types::LoggingLevel as L;
        match self {
            LogLevel::Debug => L::Debug,
            LogLevel::Info => L::Info,
            LogLevel::Notice => L::Notice,
            LogLevel::Warning => L::Warning,
            LogLevel::Error => L::Error,
            LogLevel::Critical => L::Critical,
            LogLevel::Alert => L::Alert,
            LogLevel::Emergency => L::Emergency,
        }
    }
}

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
    /// An HTTP header for every request, `Name: value` (repeatable).
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
    /// Write the result to FILE instead of stdout.
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

/// The server command line given after `--`.
#[derive(Debug, Clone, Default, Args)]
pub struct ServerCommand {
    /// The stdio server to run, after `--` (e.g. `-- npx -y @modelcontextprotocol/server-everything`).
    #[arg(last = true, value_name = "SERVER_CMD")]
    pub argv: Vec<String>,
}

/// The options of `tools`.
#[derive(Debug, Clone, Default, Args)]
pub struct ToolsArgs {
    /// Start every server of --config (without --server) and list all their tools under
    /// namespaced names (`server__tool`), with each server's status.
    // Checked when it runs, not by clap: clap does not see global options given before the
    // subcommand when it checks a subcommand's `requires`.
    #[arg(long)]
    pub all: bool,
    /// The server.
    #[command(flatten)]
    pub server: ServerCommand,
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
    /// With --listen: an `Origin` allowed besides loopback ones, e.g.
    /// `https://app.example.com` (repeatable; browsers on other origins get 403).
    #[arg(long = "allow-origin", value_name = "ORIGIN", requires = "listen")]
    pub allow_origins: Vec<String>,
    /// The stdio server to forward to, instead of --url.
    #[command(flatten)]
    pub server: ServerCommand,
    /// `--allow` / `--deny`, for `--config`.
    #[command(flatten)]
    pub tools: ToolFilterArgs,
}

/// The options of `watch`.
#[derive(Debug, Clone, Default, Args)]
pub struct WatchArgs {
    /// Subscribe to this resource and print its `notifications/resources/updated`
    /// (repeatable); unsubscribed again on Ctrl-C.
    #[arg(long = "subscribe", value_name = "URI")]
    pub subscribe: Vec<String>,
    /// The server.
    #[command(flatten)]
    pub server: ServerCommand,
}

/// The options of `tasks`: without a subcommand it lists the server's tasks.
#[derive(Debug, Clone, Default, Args)]
pub struct TasksArgs {
    /// What to do with one task; without one, list them all.
    #[command(subcommand)]
    pub action: Option<TaskAction>,
    /// The server.
    #[command(flatten)]
    pub server: ServerCommand,
}

/// What `tasks` does with one task (protocol 2025-11-25).
#[derive(Debug, Clone, Subcommand)]
pub enum TaskAction {
    /// Show one task's status, message, times and ttl (`tasks/get`).
    Get {
        /// The task's id (as `mcp tasks` lists it).
        id: String,
        /// The server.
        #[command(flatten)]
        server: ServerCommand,
    },
    /// Print the result of a task's tool call (`tasks/result`; waits while it runs).
    Result {
        /// The task's id (as `mcp tasks` lists it).
        id: String,
        /// The server.
        #[command(flatten)]
        server: ServerCommand,
    },
    /// Ask the server to cancel a task (`tasks/cancel`) and show its status afterwards.
    Cancel {
        /// The task's id (as `mcp tasks` lists it).
        id: String,
        /// The server.
        #[command(flatten)]
        server: ServerCommand,
    },
}

impl TasksArgs {
    /// The `-- <command>` given, after `tasks` or after its subcommand.
    pub fn server(&self) -> &ServerCommand {
        match &self.action {
            Some(
                TaskAction::Get { server, .. }
                | TaskAction::Result { server, .. }
                | TaskAction::Cancel { server, .. },
            ) if !server.argv.is_empty() => server,
            _ => &self.server,
        }
    }
}

/// Tool arguments: a JSON object and/or `key=value` pairs (pairs win).
#[derive(Debug, Clone, Default, Args)]
pub struct ToolArgs {
    /// The arguments as one JSON object: inline, `@FILE` to read it from a file, or `-` to
    /// read it from stdin.
    #[arg(
        id = "args_json",
        long = "args",
        short = 'a',
        value_name = "JSON|@FILE|-"
    )]
    pub json: Option<String>,
    /// `key=value` pairs, typed from the tool's input schema: a string property gets the
    /// text as typed (`message=123` sends "123"), a number, integer, boolean, array or object
    /// property gets the value parsed as JSON (`n=3`, `ok=true`, `tags=["a"]`); without
    /// schema information a value is JSON when it parses as JSON, else a string. `a.b=1`
    /// nests.
    #[arg(id = "tool_pairs", value_name = "KEY=VALUE")]
    pub pairs: Vec<String>,
}

impl ToolArgs {
    /// The arguments object to send without a schema; see [`build_arguments`]. `--args` may
    /// be `@FILE` or `-` (stdin).
    pub fn to_map(&self) -> Result<Map<String, Value>, ArgError> {
        self.typed(None).map_err(|e| ArgError(e.to_string()))
    }

    /// The arguments object to send, typed by the tool's input schema when there is one;
    /// see [`typed`]. Call it before connecting with `None` to report bad syntax early
    /// (stdin is read once and kept), and again with the schema.
    pub fn typed(
        &self,
        schema: Option<&Map<String, Value>>,
    ) -> Result<Map<String, Value>, typed::ArgumentError> {
        typed::build_typed(self.json.as_deref(), &self.pairs, schema)
    }
}

/// The subcommands.
#[derive(Debug, Clone, Subcommand)]
pub enum Command {
    /// Server name, version, protocol, capabilities and instructions.
    Info(ServerCommand),
    /// List the tools with their input schemas (`--all`: every server of --config).
    Tools(ToolsArgs),
    /// Call a tool: `mcp call echo text=hi -- server…`.
    Call {
        /// The tool's name.
        tool: String,
        /// The tool's arguments.
        #[command(flatten)]
        args: ToolArgs,
        /// Show the result even when its `structuredContent` does not match the tool's
        /// `outputSchema` (by default that is an error, exit 4).
        #[arg(long)]
        no_output_check: bool,
        /// The server.
        #[command(flatten)]
        server: ServerCommand,
    },
    /// List the server's tasks (protocol 2025-11-25), or `get`, `result`, `cancel` one by id.
    ///
    /// `mcp tasks -- server…` lists them (id, status, message, created, updated, ttl);
    /// `mcp tasks get ID`, `mcp tasks result ID` and `mcp tasks cancel ID` act on one.
    /// A server keeps its tasks per session: a stdio server started for one command has none
    /// of an earlier command's, so follow a task in `mcp shell` or on an HTTP server. A
    /// server that does not offer tasks is the error `not_offered` (exit 4).
    Tasks(TasksArgs),
    /// List the resources and resource templates.
    Resources(ServerCommand),
    /// Read a resource.
    Read {
        /// The resource's URI.
        uri: String,
        /// The server.
        #[command(flatten)]
        server: ServerCommand,
    },
    /// List the prompts and their arguments.
    Prompts(ServerCommand),
    /// Get a prompt: `mcp prompt summarize text=… style=brief`.
    Prompt {
        /// The prompt's name.
        name: String,
        /// `key=value` string arguments.
        #[arg(value_name = "KEY=VALUE")]
        pairs: Vec<String>,
        /// The server.
        #[command(flatten)]
        server: ServerCommand,
    },
    /// Complete an argument: `mcp complete prompt:summarize style b`.
    Complete {
        /// `prompt:<name>` or `resource:<uri template>` (a bare `x://…` is a resource).
        #[arg(value_parser = parse_reference)]
        reference: CompletionRef,
        /// The argument's name.
        argument: String,
        /// What has been typed so far.
        value: String,
        /// The server.
        #[command(flatten)]
        server: ServerCommand,
    },
    /// Check that the server answers.
    Ping(ServerCommand),
    /// Set the level of the server's log messages.
    LogLevel {
        /// The lowest level to receive.
        #[arg(value_enum)]
        level: LogLevel,
        /// The server.
        #[command(flatten)]
        server: ServerCommand,
    },
    /// Print notifications as they arrive, until Ctrl-C (`--subscribe URI`: resource updates).
    Watch(WatchArgs),
    /// Call one tool repeatedly and print latency percentiles, throughput and errors.
    Load {
        /// The tool's name.
        tool: String,
        /// The tool's arguments.
        #[command(flatten)]
        args: ToolArgs,
        /// Calls in flight at once.
        #[arg(long, short = 'c', default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=10_000))]
        concurrency: u32,
        /// Stop after this many calls (the default is 100 when no --duration is given).
        #[arg(long, short = 'n', conflicts_with = "duration")]
        count: Option<u64>,
        /// Stop after this long (`10s`, `1m`).
        #[arg(long, short = 'd', value_parser = parse_duration)]
        duration: Option<Duration>,
        /// The server.
        #[command(flatten)]
        server: ServerCommand,
    },
    /// Check the tools' input schemas for portability problems.
    Lint {
        /// Lint a saved `tools/list` result (or a bare array of tools) instead of a server.
        #[arg(long, value_name = "FILE")]
        file: Option<PathBuf>,
        /// The server.
        #[command(flatten)]
        server: ServerCommand,
    },
    /// Authorize with an OAuth-protected HTTP server in the browser and store the tokens:
    /// `mcp login --url https://host/mcp`.
    ///
    /// Opens the authorization page with `xdg-open` (`open` on macOS, or the command in
    /// $MCP_BROWSER) and waits for the redirect on `http://127.0.0.1:<port>/callback`; when no
    /// browser can be opened, or with --no-browser, it prints the URL to open. The tokens go
    /// to the token file (see --token-store), never to the terminal. Logging in again
    /// replaces the server's tokens.
    Login {
        /// Print the authorization URL instead of opening a browser.
        #[arg(long)]
        no_browser: bool,
        /// A scope to ask for instead of the server's (repeatable).
        #[arg(long = "scope", value_name = "SCOPE")]
        scopes: Vec<String>,
        /// How long to wait for the browser's redirect.
        #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "5m")]
        wait: Duration,
    },
    /// Remove stored OAuth tokens: of the --url server, or with --all every one.
    Logout {
        /// Remove every stored token.
        #[arg(long)]
        all: bool,
    },
    /// Run a guided tour against the built-in demo server.
    Demo,
    /// Run the built-in demo server on stdin/stdout, or over Streamable HTTP with --listen.
    ///
    /// `mcp demo-server --listen 127.0.0.1:0` serves http://127.0.0.1:PORT/mcp (port 0: the
    /// OS picks one) and prints that URL on stderr as its first line; each client gets its
    /// own session. Ctrl-C (or SIGTERM) ends every session and exits 0.
    DemoServer(DemoServerArgs),
    /// Serve a host app (over stdio, or HTTP with --listen) from --url, `-- cmd` or a servers file.
    ///
    /// `mcp bridge --url https://example.com/mcp` is a stdio MCP server for a host (a desktop
    /// app, an IDE) that cannot reach a remote server itself; `mcp bridge -- cmd args` puts
    /// the stdio server `cmd` behind the bridge (its own process group, shut down and reaped
    /// when the host leaves; --env K=V adds to its environment; it runs in the bridge's
    /// working directory).
    ///
    /// The upstream connection (Streamable HTTP, legacy HTTP+SSE as a fallback, or the child's
    /// stdio) is made when the host sends `initialize`, with the host's protocol version,
    /// client info and capabilities, and the host gets the server's own answer: the same tools,
    /// the same results. Requests, results, errors, notifications, progress, cancellation (with
    /// the host's reason), subscriptions and the server's sampling, elicitation and roots
    /// requests are forwarded both ways. Over HTTP the stored OAuth token is sent and refreshed
    /// (`mcp login --url URL` first), and so is every header given with --header; when the
    /// server answers 401 and no stored token works, the bridge runs the same browser login if
    /// a terminal is present (stderr, or /dev/tty), stores the token and goes on, and without
    /// one it answers the host's initialize with an error saying to run `mcp login --url URL`.
    /// A forwarded request is bounded by the global option --timeout (default: none, the host
    /// decides). stdout carries only the protocol (with --json too: errors go to stderr); logs
    /// go to stderr. When the host closes stdin, the requests it already sent get up to 2 s to
    /// be answered; then what still runs upstream is cancelled, the upstream session ends
    /// (HTTP DELETE, or the child's shutdown) and the bridge exits 0. SIGTERM, SIGINT or
    /// SIGHUP cancels what runs upstream (the reason names the signal), ends the upstream
    /// session within a few seconds and exits 143, 130 or 129; a second signal stops at once.
    /// When the server goes away (the child exits, the connection ends), the bridge ends the
    /// host session and exits 3.
    ///
    /// With --listen 127.0.0.1:PORT the bridge serves Streamable HTTP instead of stdio (port
    /// 0 picks one; the URL is the first line on stderr, printed as soon as the port is
    /// bound): each HTTP session gets its own upstream (a child for `-- cmd`, an HTTP session
    /// for --url) made at its `initialize` with that host's protocol version, identity and
    /// capabilities, and the host is answered with the server's own answer (its name,
    /// capabilities, instructions, the version it agreed); the session ends with DELETE or 30
    /// minutes idle, its running calls cancelled; an upstream that dies closes only its
    /// session. A server that cannot start fails that host's `initialize` with the reason (a
    /// `-- cmd` program that does not exist exits 3 at once). --stateless serves every POST
    /// on its own over one shared upstream, made at startup as the bridge itself.
    /// --bearer-token-env VAR requires `Authorization: Bearer` with the token in $VAR;
    /// browsers from other origins than loopback ones and --allow-origin get 403. Ctrl-C,
    /// SIGTERM or SIGHUP ends every session (its running calls cancelled upstream, its
    /// upstream closed) and exits 0.
    ///
    /// In a host's config (Claude Desktop's claude_desktop_config.json, Cursor's mcp.json):
    ///
    ///   {"mcpServers": {"remote": {"command": "mcp",
    ///     "args": ["bridge", "--url", "https://example.com/mcp"]}}}
    ///
    /// `mcp bridge --config FILE` serves every server of an mcpServers file as one: tools and
    /// prompts as `server__name` (the names `mcp tools --all --config FILE` shows), resources
    /// as `mcp-bridge://SERVER/URI`, each request routed to its server. The servers start
    /// when the host sends `initialize`, which is answered once each is ready or failed, or
    /// at --connect-timeout (default 10s): a slower server's tools come from the tool cache
    /// meanwhile. Lost servers are reconnected; the host gets list_changed whenever what it
    /// is offered changes. --allow / --deny (globs on the namespaced name, repeatable; deny
    /// wins) limit the tools a host sees and may call. A server that cannot start is
    /// reported on stderr; the others serve. Tasks (protocol 2025-11-25) are routed too: a
    /// task-augmented call's task id comes back as SERVER/ID, tasks/get, tasks/result and
    /// tasks/cancel go to that server, tasks/list pages through every server (with --listen,
    /// a session's own tasks only). With --listen
    /// the servers start at once, speaking as the bridge, and every HTTP session shares them:
    /// a server's sampling or elicitation request goes to the one session with requests in
    /// flight to that server; when there is none, or more than one, or that session's client
    /// did not declare the capability, the server gets an error saying why (and so does the
    /// tool's error result); with --stateless there is no session to send them to. Roots are
    /// not offered to the servers with --listen: one host's workspace would bound every
    /// session's calls.
    // The snippet is help text for a terminal, not a link.
    #[allow(rustdoc::bare_urls)]
    #[command(
        verbatim_doc_comment,
        override_usage = "mcp bridge [--listen <ADDR>] --url <URL> [-H <K:V>]... [--timeout <DURATION>]\n       \
                          mcp bridge [--listen <ADDR>] [-e <K=V>]... [--timeout <DURATION>] -- <SERVER_CMD>...\n       \
                          mcp bridge [--listen <ADDR>] --config <FILE> [--allow <PATTERN>]... [--deny <PATTERN>]..."
    )]
    Bridge(BridgeArgs),
    /// Keep one session open and type commands at a prompt: `mcp shell -- server…`.
    ///
    /// The commands are those of `mcp` without the connection options: `tools`,
    /// `call echo text=hi`, `read URI`, `prompt NAME k=v`, `ping`, `log-level debug`, …, plus
    /// `help [COMMAND]` and `exit` (or Ctrl-D). Output options go after a command
    /// (`tools --json`).
    ///
    /// Tab completes commands, options, tool and prompt names, argument names (`name=`, from
    /// the tool's input schema) and resource URIs. History is kept in
    /// $XDG_STATE_HOME/mcp-rs/history, else ~/.local/state/mcp-rs/history ($MCP_HISTORY
    /// overrides; empty for none); a line that starts with a space is not kept.
    ///
    /// Server log messages and list changes are printed as they arrive. Ctrl-C cancels the
    /// running command at the server and returns to the prompt. When the server goes away
    /// the shell ends with exit code 3.
    ///
    /// Without a terminal, commands are read one per line from stdin and the exit code is
    /// that of the last command.
    Shell(ServerCommand),
    /// Print a completion script for bash, zsh, fish, elvish or powershell.
    ///
    /// bash: `mcp completions bash > ~/.local/share/bash-completion/completions/mcp`
    ///
    /// zsh: `mcp completions zsh > ~/.zfunc/_mcp` (with ~/.zfunc in $fpath, before compinit)
    ///
    /// fish: `mcp completions fish > ~/.config/fish/completions/mcp.fish`
    Completions {
        /// The shell to complete for.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the help of `mcp`, of one command, or of the options every command takes
    /// (`mcp help options`).
    Help {
        /// A command, or `options`.
        #[arg(value_name = "COMMAND|options")]
        topic: Option<String>,
    },
}

/// The options of `mcp demo-server`.
#[derive(Debug, Clone, Default, Args)]
pub struct DemoServerArgs {
    /// Serve Streamable HTTP on this address (`127.0.0.1:PORT`, port 0 for any) at the path
    /// /mcp, instead of stdio. Requests whose Origin is not loopback get 403.
    #[arg(long, value_name = "ADDR", value_parser = parse_listen_addr)]
    pub listen: Option<std::net::SocketAddr>,
    /// With --listen: no sessions; each POST is served on its own (no GET stream, no
    /// requests to the client).
    #[arg(long, requires = "listen")]
    pub stateless: bool,
    /// With --listen: require `Authorization: Bearer <token>` of every request, the token
    /// read from this environment variable (never from the command line).
    #[arg(long, value_name = "VAR", requires = "listen")]
    pub bearer_token_env: Option<String>,
    /// With --listen: also accept requests from this browser Origin
    /// (`https://app.example.com`; repeatable).
    #[arg(long = "allow-origin", value_name = "ORIGIN", requires = "listen")]
    pub allow_origins: Vec<String>,
    /// Serve the fixtures of the official conformance suite's server scenarios (the test_*
    /// tools, test:// resources and test_* prompts) instead of the demo's own.
    /// MCP_DEMO_CONFORMANCE=1 does the same.
    #[arg(long)]
    pub conformance: bool,
    /// Also speak protocol 2026-07-28 (`server/discover` and the per-request `_meta`
    /// envelope) beside 2024-11-05 … 2025-11-25. Off by default: a client that prefers 2026
    /// (this one, when its era is auto) then uses it, and that revision has no ping, log levels,
    /// resource subscriptions or server-to-client requests (the ask, model and roots tools).
    #[arg(long)]
    pub modern: bool,
}

impl Command {
    /// The `-- <command>` of this subcommand, when it takes one.
    pub fn server_command(&self) -> Option<&ServerCommand> {
        match self {
            Command::Info(s)
            | Command::Resources(s)
            | Command::Prompts(s)
            | Command::Ping(s)
            | Command::Shell(s) => Some(s),
            Command::Bridge(b) => Some(&b.server),
            Command::Tools(t) => Some(&t.server),
            Command::Watch(w) => Some(&w.server),
            Command::Tasks(t) => Some(t.server()),
            Command::Call { server, .. }
            | Command::Read { server, .. }
            | Command::Prompt { server, .. }
            | Command::Complete { server, .. }
            | Command::LogLevel { server, .. }
            | Command::Load { server, .. }
            | Command::Lint { server, .. } => Some(server),
            Command::Login { .. }
            | Command::Logout { .. }
            | Command::Demo
            | Command::DemoServer(_)
            | Command::Completions { .. }
            | Command::Help { .. } => None,
        }
    }

    /// Whether the subcommand runs every server of `--config` through the manager: `tools
    /// --all`, or `call` with `--config` but no `--server` (the tool is then a namespaced
    /// `server__tool` name).
    pub fn uses_manager(&self, connection: &ConnectionArgs) -> bool {
        let config_only = connection.config.is_some() && connection.server.is_none();
        match self {
            Command::Tools(t) => t.all,
            Command::Call { server, .. } => config_only && server.argv.is_empty(),
            _ => false,
        }
    }

    /// Whether the subcommand talks to a server given on the command line.
    pub fn needs_server(&self) -> bool {
        match self {
            Command::Demo
            | Command::DemoServer(_)
            | Command::Logout { .. }
            | Command::Completions { .. }
            | Command::Help { .. } => false,
            Command::Lint { file, .. } => file.is_none(),
            _ => true,
        }
    }
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

/// An argument clap accepted but that does not make sense; the CLI exits with code 2.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ArgError(pub String);

impl ArgError {
    fn new(message: impl Into<String>) -> Self {
        ArgError(message.into())
    }
}

/// Parses a `key=value` value: JSON when it parses as JSON, else the literal string.
///
/// So `3` is a number, `true` a boolean, `"3"` the string `3`, and `hello` the string `hello`.
pub fn parse_value(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
}

/// Builds a tool's arguments from an optional `--args` JSON object and `key=value` pairs.
///
/// Pairs are applied in order over the JSON object; a dotted key (`a.b=1`) sets a nested
/// field, creating objects on the way. Setting a field inside a value that is not an object
/// is an error, as is a pair without `=` or with an empty key segment.
pub fn build_arguments(
    json: Option<&str>,
    pairs: &[String],
) -> Result<Map<String, Value>, ArgError> {
    let mut map = match json {
        None => Map::new(),
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => map,
            Ok(other) => {
                return Err(ArgError(format!(
                    "--args must be a JSON object, got {}",
                    kind_of(&other)
                )));
            }
            Err(e) => return Err(ArgError(format!("--args is not valid JSON: {e}"))),
        },
    };
    for pair in pairs {
        let (key, value) = split_pair(pair)?;
        insert_path(&mut map, key, parse_value(value))?;
    }
    Ok(map)
}

/// Parses `key=value` pairs as strings (prompt arguments are strings, so nothing is JSON).
pub fn string_pairs(pairs: &[String]) -> Result<BTreeMap<String, String>, ArgError> {
    pairs
        .iter()
        .map(|pair| split_pair(pair).map(|(k, v)| (k.to_owned(), v.to_owned())))
        .collect()
}

fn split_pair(pair: &str) -> Result<(&str, &str), ArgError> {
    match pair.split_once('=') {
        Some((key, value)) if !key.is_empty() => Ok((key, value)),
        _ => Err(ArgError(format!(
            "expected key=value, got {pair:?} (use --args '{{...}}' for a JSON object)"
        ))),
    }
}

fn insert_path(map: &mut Map<String, Value>, key: &str, value: Value) -> Result<(), ArgError> {
    let segments: Vec<&str> = key.split('.').collect();
    if segments.iter().any(|s| s.is_empty()) {
        return Err(ArgError(format!("empty segment in key {key:?}")));
    }
    let (last, parents) = segments
        .split_last()
        .expect("split yields at least one segment");
    let mut current = map;
    for (i, segment) in parents.iter().enumerate() {
        let slot = current
            .entry((*segment).to_owned())
            .or_insert_with(|| Value::Object(Map::new()));
        current = match slot {
            Value::Object(inner) => inner,
            other => {
                return Err(ArgError(format!(
                    "cannot set {key:?}: {:?} is already {}",
                    segments[..=i].join("."),
                    kind_of(other)
                )));
            }
        };
    }
    current.insert((*last).to_owned(), value);
    Ok(())
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Parses `Name: value` (or `Name:value`) into a header pair.
pub fn parse_header(text: &str) -> Result<(String, String), String> {
    match text.split_once(':') {
        Some((name, value)) if is_token(name.trim()) => {
            Ok((name.trim().to_owned(), value.trim().to_owned()))
        }
        _ => Err(format!("expected `Name: value`, got {text:?}")),
    }
}

fn is_token(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// Parses `KEY=VALUE` into an environment variable pair.
pub fn parse_env(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.is_empty() && !key.contains('\0') => {
            Ok((key.to_owned(), value.to_owned()))
        }
        _ => Err(format!("expected KEY=VALUE, got {text:?}")),
    }
}

/// Parses the address of `--listen`: `127.0.0.1:PORT`, `[::1]:PORT`, `0.0.0.0:PORT`, or
/// `localhost:PORT` (served on 127.0.0.1). A bare port or a host name is refused with the
/// form to use instead.
pub fn parse_listen_addr(text: &str) -> Result<std::net::SocketAddr, String> {
    use std::net::{Ipv4Addr, SocketAddr};
    let text = text.trim();
    if let Ok(addr) = text.parse::<SocketAddr>() {
        return Ok(addr);
    }
    if let Some((host, port)) = text.rsplit_once(':')
        && host.eq_ignore_ascii_case("localhost")
        && let Ok(port) = port.parse::<u16>()
    {
        return Ok(SocketAddr::from((Ipv4Addr::LOCALHOST, port)));
    }
    let port = text.rsplit_once(':').map_or(text, |(_, port)| port);
    let example = match port.parse::<u16>() {
        Ok(port) => format!("127.0.0.1:{port}"),
        Err(_) => "127.0.0.1:PORT".to_owned(),
    };
    Err(format!(
        "expected IP:PORT, got {text:?}: use {example} (port 0 picks a free one; 0.0.0.0:PORT \
         serves other machines too)"
    ))
}

/// Parses `250ms`, `10s`, `2m`, `1h` or a bare number of seconds (`1.5`).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let n: f64 = number
        .parse()
        .map_err(|_| format!("expected a duration like 10s or 500ms, got {text:?}"))?;
    let seconds = match unit.trim() {
        "ms" => n / 1000.0,
        "" | "s" => n,
        "m" | "min" => n * 60.0,
        "h" => n * 3600.0,
        other => {
            return Err(format!(
                "unknown duration unit {other:?} (use ms, s, m or h)"
            ));
        }
    };
    Duration::try_from_secs_f64(seconds).map_err(|e| format!("bad duration {text:?}: {e}"))
}

/// What `complete` completes an argument of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompletionRef {
    /// A prompt, by name.
    Prompt(String),
    /// A resource template, by URI template.
    Resource(String),
}

impl CompletionRef {
    /// The core's reference type for `completion/complete`.
    pub fn to_proto(&self) -> mcp_proto::types::Reference {
        use mcp_proto::types::{PromptReference, Reference, ResourceTemplateReference};
        match self {
            CompletionRef::Prompt(name) => Reference::Prompt(PromptReference {
                name: name.clone(),
                ..PromptReference::default()
            }),
            CompletionRef::Resource(uri) => Reference::Resource(ResourceTemplateReference {
                uri: uri.clone(),
                ..ResourceTemplateReference::default()
            }),
        }
    }
}

/// Parses `prompt:<name>`, `resource:<uri>`, a bare URI (`x://…`, a resource) or a bare name.
pub fn parse_reference(text: &str) -> Result<CompletionRef, String> {
    let reference = if let Some(name) = text.strip_prefix("prompt:") {
        CompletionRef::Prompt(name.to_owned())
    } else if let Some(uri) = text.strip_prefix("resource:") {
        CompletionRef::Resource(uri.to_owned())
    } else if text.contains("://") {
        CompletionRef::Resource(text.to_owned())
    } else {
        CompletionRef::Prompt(text.to_owned())
    };
    match &reference {
        CompletionRef::Prompt(s) | CompletionRef::Resource(s) if s.is_empty() => {
            Err(format!("empty reference {text:?}"))
        }
        _ => Ok(reference),
    }
}

pub mod help;

#[cfg(test)]
mod tests;
