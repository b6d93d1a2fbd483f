//! [`CliError`]: everything that ends `mcp` unsuccessfully, its words and its exit status.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use mcp_proto::jsonrpc::ErrorObject;

use super::{Exit, StopSignal};
use crate::load_stats::format_latency;

/// What kind of thing was not found on the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Missing {
    /// A tool (`tools/call`).
    Tool,
    /// A prompt (`prompts/get`).
    Prompt,
    /// A resource (`resources/read`).
    Resource,
}

impl Missing {
    /// `tool`, `prompt`, `resource`.
    pub fn noun(self) -> &'static str {
        match self {
            Missing::Tool => "tool",
            Missing::Prompt => "prompt",
            Missing::Resource => "resource",
        }
    }

    /// The subcommand that lists them.
    pub(super) fn lister(self) -> &'static str {
        match self {
            Missing::Tool => "`mcp tools` lists the server's tools",
            Missing::Prompt => "`mcp prompts` lists the server's prompts",
            Missing::Resource => "`mcp resources` lists the server's resources and templates",
        }
    }
}

/// How a [`CliError::NotFound`] of `call` with `--config` names its "server": this, then the
/// config file (the hint names the command that lists every server's tools).
pub const ANY_SERVER_OF: &str = "any server of ";

/// A failure below HTTP, as far as the HTTP client says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NetworkFailure {
    /// Nothing accepted the TCP connection.
    Refused,
    /// The host name could not be resolved.
    Dns,
    /// The connection could not be made otherwise (unreachable, ...).
    Unreachable,
    /// The connection was reset or closed in the middle of an exchange.
    Reset,
    /// The HTTP client's own I/O timeout fired.
    Timeout,
    /// The TLS handshake failed.
    Tls,
    /// Anything else.
    Other,
}

/// Arguments that the server rejected (-32602) for a tool or prompt it lists, with what the
/// tool or prompt takes.
#[derive(Debug, Clone, PartialEq)]
pub struct Rejected {
    /// `tools/call` or `prompts/get`.
    pub method: String,
    /// The tool or prompt.
    pub name: String,
    /// The server's message.
    pub message: String,
    /// The server's `data`.
    pub data: Option<serde_json::Value>,
    /// Its required arguments.
    pub required: Vec<String>,
    /// Every argument with its type (`a: number, b?: string`).
    pub signature: String,
}

/// Everything that ends `mcp` unsuccessfully, with its exit code and a hint.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CliError {
    /// Options that do not make sense together, or unparsable arguments.
    #[error("{0}")]
    Usage(String),
    /// `--listen ADDR` could not be bound (the port is taken, the address is not this
    /// machine's, a privileged port). Nothing was served.
    #[error("cannot listen on {addr}: {reason}")]
    CannotListen {
        /// The address as parsed.
        addr: std::net::SocketAddr,
        /// The system's reason.
        reason: String,
        /// What kind of failure it was, which picks the hint.
        kind: std::io::ErrorKind,
    },
    /// A URL that cannot be an MCP endpoint. Nothing was contacted.
    #[error("invalid URL {url:?}: {reason}")]
    InvalidUrl {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: String,
        /// The URL that was probably meant (`http://localhost:3000/mcp` for
        /// `localhost:3000/mcp`).
        suggestion: Option<String>,
    },
    /// A tool argument that cannot be used. Nothing was sent.
    #[error("{message}")]
    InvalidArgument {
        /// What is wrong, naming the argument.
        message: String,
        /// The closest argument names of the tool, for an unknown key.
        suggestions: Vec<String>,
    },
    /// Required arguments of a tool (checked before calling: nothing was sent) or of a prompt
    /// (found when the server refused it) were not given.
    #[error(
        "`{tool}`: missing required argument{} {}",
        if missing.len() == 1 { "" } else { "s" },
        backticked(missing)
    )]
    MissingArguments {
        /// The tool or prompt.
        tool: String,
        /// The required arguments not given.
        missing: Vec<String>,
        /// Every required argument.
        required: Vec<String>,
        /// Every argument with its type (`a: number, b?: string`).
        signature: String,
    },
    /// The stdio server could not be started.
    #[error("could not start `{program}`: {reason}")]
    Spawn {
        /// The program as given.
        program: String,
        /// The OS error.
        reason: String,
        /// Whether the program was not found at all.
        not_found: bool,
    },
    /// The HTTP server could not be reached.
    #[error("could not connect to {url}: {reason}")]
    Connect {
        /// The endpoint.
        url: String,
        /// What failed.
        reason: String,
    },
    /// An HTTP exchange failed below HTTP: refused, reset, DNS, TLS, the client's timeout.
    #[error("{}", network_message(*.kind, url, what, detail))]
    Network {
        /// The endpoint (or the server's name in a config file).
        url: String,
        /// What was being done (`connecting`, `tools/call`).
        what: String,
        /// What failed.
        kind: NetworkFailure,
        /// The HTTP client's words.
        detail: String,
    },
    /// The server answered an HTTP request with an error status (401 is
    /// [`CliError::LoginRequired`]).
    #[error("{}{url} answered {text}", doing(if *.connecting { "connecting" } else { what }))]
    Http {
        /// The endpoint (or the server's name in a config file).
        url: String,
        /// The request's method (`tools/call`), or `initialize` while connecting.
        what: String,
        /// The status.
        status: u16,
        /// `HTTP 500 Internal Server Error: <body excerpt>`.
        text: String,
        /// Whether it happened while connecting (exit 3) rather than on a request (exit 4).
        connecting: bool,
    },
    /// The server exited or closed the connection before or during the handshake, or the
    /// handshake failed (no common version, malformed answer).
    #[error("handshake with the server failed: {0}")]
    Handshake(String),
    /// The stdio server process ended (its last stderr lines are in the text).
    #[error("the server {0}")]
    Exited(String),
    /// The connection ended after the handshake; the text says how and who ended it
    /// ([`CliError::closed`], [`CliError::session_closed`]).
    #[error("{0}")]
    Closed(String),
    /// The server answered a request with a JSON-RPC error.
    #[error("{method} failed: {error}")]
    Remote {
        /// The request's method.
        method: String,
        /// The error as the server sent it (its message without a repeated `MCP error
        /// <code>:` prefix).
        error: ErrorObject,
    },
    /// The server has no tool, prompt or resource of that name (by its own list, or by its
    /// error).
    #[error(
        "{} `{name}` not found on {server}{}",
        kind.noun(),
        said.as_deref().map(|s| format!(" (the server said: {s})")).unwrap_or_default()
    )]
    NotFound {
        /// What was looked for.
        kind: Missing,
        /// The name (or URI) as given.
        name: String,
        /// The server's name.
        server: String,
        /// The server's own message, when it sent one.
        said: Option<String>,
        /// The closest names of the server's list, best first.
        suggestions: Vec<String>,
    },
    /// The server rejected the arguments of a tool or prompt it lists (-32602).
    #[error("{} `{}`: the server rejected the arguments: {}", .0.method, .0.name, .0.message)]
    InvalidParams(Box<Rejected>),
    /// A request took longer than `--timeout` (or connecting than `--connect-timeout`, or a
    /// call that kept reporting progress than `--max-time`).
    #[error("{what} timed out after {}{}", format_latency(*.after), if *.total { " (--max-time)" } else { "" })]
    Timeout {
        /// What was waited for (`tools/call echo`, `connecting`).
        what: String,
        /// The limit in force.
        after: Duration,
        /// True for the connect timeout.
        connecting: bool,
        /// True when the total bound (`--max-time`) ended a call whose deadline progress
        /// kept resetting.
        total: bool,
    },
    /// Ctrl-C.
    #[error("interrupted")]
    Interrupted,
    /// SIGTERM or SIGHUP: the same shutdown as Ctrl-C, a different exit code.
    #[error("stopped by {}", .0.name())]
    Stopped(StopSignal),
    /// The tool ran and reported failure (`isError: true`).
    #[error("the tool reported an error: {0}")]
    ToolFailed(String),
    /// `lint` found errors.
    #[error("{0} lint error(s)")]
    LintErrors(usize),
    /// The server sent an answer that does not fit the protocol (a malformed result, a list
    /// whose pages never end).
    #[error("the server sent an invalid answer: {0}")]
    Invalid(String),
    /// The tool's result breaks the `outputSchema` the tool declares: `structuredContent` is
    /// missing or does not match it.
    #[error(
        "tool `{tool}`: the result does not match the tool's outputSchema: {}",
        violations_text(violations, *total)
    )]
    OutputSchema {
        /// The tool.
        tool: String,
        /// The first violations, each as (JSON pointer into `structuredContent`, message).
        violations: Vec<(String, String)>,
        /// How many violations there are in all.
        total: usize,
    },
    /// This build cannot do what was asked (an HTTP server before HTTP support landed).
    #[error("{0}")]
    Unsupported(String),
    /// The server does not offer the method the command needs: it did not declare the
    /// capability (`tasks` against a server without `tasks.list`), or its protocol has no
    /// such method. Nothing was sent.
    #[error("{server} does not offer {method}: {reason}")]
    NotOffered {
        /// The server's name.
        server: String,
        /// The method, e.g. `tasks/list`.
        method: String,
        /// The capability it lacks, or the protocol that has no such method.
        reason: String,
    },
    /// The server wants an OAuth token and none is stored, or the stored one was refused and
    /// could not be refreshed. `mcp` never opens a browser unasked: the hint says to log in.
    #[error("{url} needs authorization{}", if *.refused { " (the token sent was refused)" } else { "" })]
    LoginRequired {
        /// The server's URL (or its name in a config file).
        url: String,
        /// Whether a token was sent (stored, or an `Authorization` header) and refused: code
        /// `auth_failed`, not `login_required`.
        refused: bool,
        /// Whether the server offers OAuth (its challenge names its resource metadata, or it
        /// names its authorization server): then `mcp login` gets a token; otherwise it wants
        /// a token given some other way, sent with `-H 'Authorization: Bearer …'`.
        oauth: bool,
    },
    /// The server wants a bearer token it does not hand out by OAuth, and refused the one
    /// sent (its challenge says `invalid_token`): the token is wrong, not missing.
    #[error(
        "{url} refused the access token sent{}",
        said.as_deref().map(|s| format!(": {s}")).unwrap_or_default()
    )]
    TokenRefused {
        /// The server's URL.
        url: String,
        /// The server's `error_description`, if it sent one.
        said: Option<String>,
    },
    /// `mcp bridge` answered, but the upstream server it forwards to failed: it could not be
    /// reached or started, or it ended (the bridge's error data says so:
    /// [`crate::app::bridge::upstream_failure`]).
    #[error(
        "{}the bridge at {bridge} is up, but its upstream server failed: {reason}",
        doing(method)
    )]
    BridgeUpstream {
        /// The bridge's URL (or command).
        bridge: String,
        /// The request that failed (`initialize` while connecting).
        method: String,
        /// The upstream's URL or command line, as the bridge names it.
        upstream: String,
        /// The upstream failure's `--json` code at the bridge (`connection_refused`,
        /// `server_exited`, …), empty when the bridge did not say.
        failure: String,
        /// What happened, in the bridge's words.
        reason: String,
    },
    /// The URL answers HTTP, but not as an MCP server: both transports were refused, or the
    /// initialize POST got 501 (`said` quotes what it answered, short).
    #[error("{url} does not look like an MCP server: {said}")]
    NotMcp {
        /// The URL.
        url: String,
        /// What each attempt got.
        said: String,
    },
    /// No server of a config file came up (`mcp bridge --config`, `tools --all`): each
    /// server's name and why.
    #[error("no server of the config file came up: {}", failures_text(.0))]
    NoServerUp(Vec<(String, String)>),
    /// `mcp login` could not get a token.
    #[error("OAuth: {0}")]
    AuthFailed(String),
    /// A `--config` file that cannot be used (see `app::config_file`), with its own hint.
    #[error("{message}")]
    Config {
        /// What is wrong, starting with the file (`FILE:LINE:COLUMN: …` for bad JSON).
        message: String,
        /// What to try, when there is something to say.
        hint: Option<String>,
        /// The top-level key a misspelt one is probably meant as.
        did_you_mean: Option<String>,
    },
    /// A local file could not be read or written.
    #[error("{}: {reason}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// The OS error.
        reason: String,
    },
}

/// `at /sum: …; at /n: … (and 3 more)`.
fn violations_text(violations: &[(String, String)], total: usize) -> String {
    let mut text = violations
        .iter()
        .map(|(pointer, message)| match pointer.as_str() {
            "" => format!("at the root: {message}"),
            pointer => format!("at {pointer}: {message}"),
        })
        .collect::<Vec<_>>()
        .join("; ");
    if total > violations.len() {
        text.push_str(&format!(" (and {} more)", total - violations.len()));
    }
    text
}

pub(super) fn backticked(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `server "a": why; server "b": why`.
fn failures_text(failures: &[(String, String)]) -> String {
    if failures.is_empty() {
        return "the file has no server to start".into();
    }
    failures
        .iter()
        .map(|(name, why)| format!("server {name:?}: {why}"))
        .collect::<Vec<_>>()
        .join("; ")
}

/// `tools/call: ` before a message, or nothing when what was being done is not known.
fn doing(what: &str) -> String {
    if what.is_empty() {
        String::new()
    } else {
        format!("{what}: ")
    }
}

fn network_message(kind: NetworkFailure, url: &str, what: &str, detail: &str) -> String {
    let what = doing(what);
    match kind {
        NetworkFailure::Refused => format!("could not connect to {url}: connection refused"),
        NetworkFailure::Dns => format!("could not resolve the host of {url}: {detail}"),
        NetworkFailure::Unreachable => format!("could not connect to {url}: {detail}"),
        // The HTTP client's words when the server ended the connection cleanly mid-response.
        NetworkFailure::Reset if detail.starts_with("the server closed the connection") => {
            format!("{what}the server at {url} closed the connection before the answer came")
        }
        NetworkFailure::Reset => {
            format!("{what}the connection to {url} was reset before the answer came")
        }
        NetworkFailure::Timeout => format!("{what}the HTTP request to {url} timed out"),
        NetworkFailure::Tls => format!("TLS with {url} failed: {detail}"),
        NetworkFailure::Other => format!("{what}HTTP transport error with {url}: {detail}"),
    }
}

/// The server's message without the `MCP error <code>: ` prefix that TypeScript servers put
/// in it (the CLI prints that prefix itself), however often it is repeated.
pub fn strip_rpc_prefix(message: &str, code: i64) -> &str {
    let prefix = format!("MCP error {code}:");
    let mut rest = message.trim_start();
    while let Some(stripped) = rest.strip_prefix(&prefix) {
        rest = stripped.trim_start();
    }
    rest
}

impl CliError {
    /// The error of binding `--listen addr` that failed with `error`.
    pub fn cannot_listen(addr: std::net::SocketAddr, error: &std::io::Error) -> Self {
        CliError::CannotListen {
            addr,
            reason: error.to_string(),
            kind: error.kind(),
        }
    }

    /// The server closed the connection (or its process ended) after the handshake.
    pub fn closed(detail: impl fmt::Display) -> Self {
        CliError::Closed(format!("the server closed the connection: {detail}"))
    }

    /// The session ended for `reason`: the server's doing, except a server that stopped
    /// reading its input, which the client disconnected.
    pub fn session_closed(reason: &mcp_proto::session::CloseReason) -> Self {
        match reason {
            mcp_proto::session::CloseReason::Stalled { .. } => {
                CliError::Closed(format!("the client disconnected: {reason}"))
            }
            _ => CliError::closed(reason),
        }
    }

    /// The exit status this error ends the process with.
    pub fn exit(&self) -> Exit {
        match self {
            CliError::Usage(_)
            | CliError::InvalidUrl { .. }
            | CliError::InvalidArgument { .. }
            | CliError::MissingArguments { .. }
            | CliError::Config { .. }
            | CliError::File { .. } => Exit::Usage,
            CliError::Network {
                kind: NetworkFailure::Timeout,
                ..
            } => Exit::Timeout,
            // The machine, not the command line, refused the address (another program holds
            // the port, the address is not this machine's, the port is privileged): an
            // environment failure, like a server that cannot be started.
            CliError::CannotListen { .. }
            | CliError::Spawn { .. }
            | CliError::Connect { .. }
            | CliError::Network { .. }
            | CliError::Handshake(_)
            | CliError::Exited(_)
            | CliError::Closed(_)
            | CliError::LoginRequired { .. }
            | CliError::TokenRefused { .. }
            | CliError::BridgeUpstream { .. }
            | CliError::NoServerUp(_)
            | CliError::NotMcp { .. }
            | CliError::AuthFailed(_)
            | CliError::Unsupported(_) => Exit::Connection,
            CliError::Http {
                connecting: true, ..
            } => Exit::Connection,
            CliError::Http { .. }
            | CliError::Remote { .. }
            | CliError::NotFound { .. }
            | CliError::InvalidParams(_)
            | CliError::Invalid(_)
            | CliError::NotOffered { .. }
            | CliError::OutputSchema { .. } => Exit::Remote,
            CliError::Timeout { .. } => Exit::Timeout,
            CliError::Interrupted => Exit::Interrupted,
            CliError::Stopped(StopSignal::Terminate) => Exit::Terminated,
            CliError::Stopped(StopSignal::Hangup) => Exit::HungUp,
            CliError::ToolFailed(_) | CliError::LintErrors(_) => Exit::Failed,
        }
    }
}
