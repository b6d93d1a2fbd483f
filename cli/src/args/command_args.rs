//! The options of one subcommand (except `bridge`, see [`super::bridge`]): the server
//! command after `--`, tool arguments, `tasks` actions, `demo-server`'s options.

use clap::{Args, Subcommand, ValueEnum};
use serde_json::{Map, Value};

use super::listen::ListenArgs;
use super::{ArgError, typed};

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
    /// The arguments object to send without a schema; see [`build_arguments`](super::build_arguments). `--args` may
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

/// The options of `mcp demo-server`.
#[derive(Debug, Clone, Default, Args)]
pub struct DemoServerArgs {
    /// `--listen` and its options: Streamable HTTP instead of stdio.
    #[command(flatten)]
    pub http: ListenArgs,
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
