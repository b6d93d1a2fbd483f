//! The subcommand tree of `mcp`: every [`Command`] with its help text, and what each needs
//! (a server on the command line, the manager).

use std::path::PathBuf;
use std::time::Duration;

use clap::Subcommand;

use super::bridge::BridgeArgs;
use super::command_args::{
    DemoServerArgs, LogLevel, ServerCommand, TasksArgs, ToolArgs, ToolsArgs, WatchArgs,
};
use super::global::ConnectionArgs;
use super::values::{CompletionRef, parse_duration, parse_reference};

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
    /// Serve a host app (over stdio, or HTTP with --listen) from --url, `-- cmd` or a servers file
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
    /// decides); every progress update the server sends for it restarts its --timeout, as for
    /// `mcp call`, up to --max-time in all (default 10m, or --timeout when that is longer), so
    /// a long job that keeps reporting progress runs to the end while a silent one still times
    /// out. Over HTTP, a server that forgot the session (it restarted: 404, or a 400 saying the
    /// session id is not valid) gets a new session, the lost requests re-sent, and stderr
    /// says so. stdout carries only the protocol; errors (usage errors too) and logs go to
    /// stderr. When the host closes stdin, the requests it already sent get up to 2 s to
    /// be answered; then what still runs upstream is cancelled, the upstream session ends
    /// (HTTP DELETE, or the child's shutdown) and the bridge exits 0. SIGTERM, SIGINT or
    /// SIGHUP cancels what runs upstream (the reason names the signal), ends the upstream
    /// session within a few seconds and exits 143, 130 or 129; a second Ctrl-C stops at once
    /// (a repeated SIGTERM or SIGHUP, as a host that dies sends two, lets the clean stop end).
    /// When the upstream goes away: a `-- cmd` child that exits ends the host session, and
    /// the bridge exits 3 (the host may start it again); a --url server that cannot be
    /// reached is retried, each request getting an error that says why (`could not connect to
    /// URL: connection refused`) until it is back, and the bridge keeps serving (stderr says
    /// when it was lost and when it is back).
    ///
    /// With --listen 127.0.0.1:PORT the bridge serves Streamable HTTP instead of stdio (port
    /// 0 picks one; the URL is the first line on stderr, printed as soon as the port is
    /// bound): each HTTP session gets its own upstream (a child for `-- cmd`, an HTTP session
    /// for --url) made at its `initialize` with that host's protocol version, identity and
    /// capabilities, and the host is answered with the server's own answer (its name,
    /// capabilities, instructions, the version it agreed); the session ends with DELETE or
    /// after --session-idle (default 30m) without a request, its running calls cancelled; an
    /// upstream that dies closes only its session. At most --max-sessions (default 64) are open
    /// at once: past it a new host's `initialize` gets 503 with a JSON-RPC error saying so, and
    /// stderr a line. A request body must arrive within 30 s of its head (else 408), and past
    /// 512 connections open a new one gets 503 and is closed. A server that cannot start fails
    /// that host's `initialize` with the reason (a `-- cmd` program that does not exist exits 3
    /// at once). --stateless serves every POST on its own over one shared upstream, made at
    /// startup as the bridge itself.
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
    /// meanwhile. A lost server (a child that exits, an HTTP server that goes down) is
    /// reconnected with a capped backoff while the others serve (stderr says when it was lost
    /// and when it is ready again); a call to it meanwhile waits for it (at most --timeout, else
    /// 60 s), and a call to a server that is not running (it failed to start, its entry is
    /// broken) gets an error naming the server and its last failure. The host gets
    /// list_changed whenever what it is offered changes. --allow / --deny (globs on the namespaced name, repeatable; deny
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
    ///
    /// A port of --listen that is taken (or not this machine's) exits 3, as an environment
    /// failure. A bridge refuses (exit 2) the global options it would ignore: --root (roots are
    /// the host's), --era other than auto (the host's protocol version is spoken), and --json,
    /// --output and --raw (stdout is the protocol channel).
    // The snippet is help text for a terminal, not a link.
    #[allow(rustdoc::bare_urls)]
    #[command(
        verbatim_doc_comment,
        override_usage = "mcp bridge [LISTEN] --url <URL> [-H <K:V>]... [--timeout <DURATION>]\n       \
                          mcp bridge [LISTEN] [-e <K=V>]... [--timeout <DURATION>] -- <SERVER_CMD>...\n       \
                          mcp bridge [LISTEN] --config <FILE> [--allow <PATTERN>]... [--deny <PATTERN>]...\n\n\
                          LISTEN (serve Streamable HTTP instead of stdio):\n       \
                          --listen <ADDR> [--stateless] [--bearer-token-env <VAR>]\n       \
                          [--allow-origin <ORIGIN>]... [--max-sessions <N>]\n       \
                          [--session-idle <DURATION>]"
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
