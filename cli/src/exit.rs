//! Exit codes that scripts can rely on, errors that say what went wrong and what to try,
//! and the `--json` error object.
//!
//! | code | meaning |
//! | --- | --- |
//! | 0 | success |
//! | 1 | the tool returned `isError: true`, or `lint` found errors |
//! | 2 | usage: bad options or arguments (a URL without `http://` or `https://`, a `key=value` that does not fit the tool's input schema, a missing required argument); nothing was sent, but for a prompt's missing argument (found when the server refused the prompt) |
//! | 3 | connection or handshake failure (refused, reset, an HTTP error status while connecting, the server exited), a transport this build lacks, authorization needed (`mcp login`) or failed; for `tools --all`: no server of the config file came up |
//! | 4 | the server answered with an error: a JSON-RPC error (tool, prompt or resource not found, invalid params, ...), an HTTP error status on a request, or an invalid answer (a tool result that does not match the tool's `outputSchema` too); or it does not offer what the command needs (a capability it did not declare) |
//! | 5 | timeout |
//! | 129 | stopped by SIGHUP (the terminal went away) |
//! | 130 | interrupted (Ctrl-C, SIGINT) |
//! | 143 | stopped by SIGTERM |
//!
//! SIGINT, SIGTERM and SIGHUP all run the same shutdown: the running call is cancelled at the
//! server (`notifications/cancelled`), the connection is closed (a stdio server gets its
//! shutdown schedule, an HTTP session its DELETE), then `mcp` exits with 128 + the signal's
//! number, as shells report a process killed by that signal.
//!
//! `mcp --config FILE tools --all` exits 0 when at least one server is ready or served from
//! the tool cache, also when others failed: the list is usable, and each failed server is
//! named with its reason in the status lines (stdout), in `servers` of `--json`, and in a
//! warning on stderr. It exits 3 only when no server came up at all.
//!
//! # The `--json` error object
//!
//! With `--json`, an error is also written to stdout as one JSON object (the `error: …` and
//! `hint: …` lines still go to stderr):
//!
//! ```json
//! {"error": {"code": "tool_not_found", "exit": 4, "message": "…", "hint": "…",
//!            "didYouMean": ["echo"]}}
//! ```
//!
//! `code` is stable: scripts may match on it. `message` and `hint` are for people and may be
//! reworded. `hint` is absent when there is nothing to suggest. Other members appear with the
//! codes that have them: `didYouMean` (names from the server's own lists, best first, maybe
//! empty), `required` and `missing` (argument names), `httpStatus`, `rpcCode` and `data` (the
//! server's JSON-RPC error code and data), `method`, `tool`, `violations` (each
//! `{"pointer": "/sum", "message": "…"}`, the first five) and `violationCount` (all of them).
//!
//! | `code` | exit | when |
//! | --- | --- | --- |
//! | `usage` | 2 | bad options or arguments (clap's errors too) |
//! | `invalid_url` | 2 | `--url` (or a config entry's URL) is not an `http://` or `https://` URL with a host |
//! | `invalid_argument` | 2 | a `key=value` or `--args` value that cannot be used or does not fit the tool's input schema, or a key a closed schema lacks (`didYouMean`) |
//! | `missing_argument` | 2 | the tool's schema requires arguments that were not given, checked before calling (`missing`, `required`); or a prompt's, when the server refused it |
//! | `file_error` | 2 | a local file could not be read or written |
//! | `config_error` | 2 | the `--config` file cannot be used: not JSON (the message starts `FILE:LINE:COLUMN:`), no server list (`didYouMean`: the key a misspelt one is meant as), no servers, a broken entry |
//! | `spawn_failed` | 3 | the stdio server could not be started |
//! | `connection_refused` | 3 | nothing accepted the TCP connection |
//! | `connection_reset` | 3 | the connection was reset or closed mid-exchange |
//! | `dns_failed` | 3 | the URL's host could not be resolved |
//! | `tls_failed` | 3 | the TLS handshake failed |
//! | `network_error` | 3 | another failure below HTTP |
//! | `connect_failed` | 3 | connecting failed otherwise |
//! | `http_error` | 3 while connecting, 4 after | the server answered with an HTTP error status (`httpStatus`) |
//! | `handshake_failed` | 3 | the MCP handshake failed (version, malformed answer) |
//! | `server_exited` | 3 | the stdio server exited |
//! | `connection_closed` | 3 | the connection ended before the answer |
//! | `login_required` | 3 | the server needs `mcp login` |
//! | `auth_failed` | 3 | authorization failed |
//! | `unsupported` | 3 | this build cannot do what was asked |
//! | `tool_not_found` | 4 | the server has no such tool (`didYouMean`) |
//! | `prompt_not_found` | 4 | the server has no such prompt (`didYouMean`) |
//! | `resource_not_found` | 4 | the server has no such resource (`didYouMean`) |
//! | `invalid_params` | 4 | the server rejected the arguments, -32602 (`required` when the tool or prompt is listed) |
//! | `method_not_found` | 4 | the server does not implement the method, -32601 |
//! | `server_error` | 4 | any other JSON-RPC error (`rpcCode`, `data`) |
//! | `invalid_response` | 4 | the server's answer does not fit the protocol |
//! | `not_offered` | 4 | the server does not offer the method the command needs: it did not declare the capability (`mcp tasks` without `tasks.list`, `tasks cancel` without `tasks.cancel`) or its protocol lacks it; nothing was sent (`method`) |
//! | `output_schema_mismatch` | 4 | the tool's result has no `structuredContent` or one that does not match the `outputSchema` the tool declares (`tool`, `violations`, `violationCount`) |
//! | `timeout` | 5 | a request (or an HTTP exchange) took too long |
//! | `connect_timeout` | 5 | connecting took longer than `--connect-timeout` |
//! | `interrupted` | 130 | Ctrl-C |
//! | `stopped` | 143 / 129 | SIGTERM / SIGHUP |
//! | `tool_error` | 1 | the tool's result has `isError: true` |
//! | `lint_errors` | 1 | `lint` found errors |
//!
//! `tool_error` and `lint_errors` are never written as an error object: the tool result (with
//! `isError: true`) or the findings are the JSON output then.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use mcp_proto::jsonrpc::ErrorObject;

use crate::load_stats::format_latency;

/// The process exit status of `mcp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Exit {
    /// 0: success.
    Ok,
    /// 1: the tool reported an error (`isError`), or `lint` found errors.
    Failed,
    /// 2: bad options or arguments.
    Usage,
    /// 3: the server could not be started or reached, or the handshake failed.
    Connection,
    /// 4: the server answered with a JSON-RPC error.
    Remote,
    /// 5: a request or the connection timed out.
    Timeout,
    /// 130: interrupted by Ctrl-C (128 + SIGINT, as shells report it).
    Interrupted,
    /// 143: stopped by SIGTERM (128 + 15).
    Terminated,
    /// 129: stopped by SIGHUP (128 + 1).
    HungUp,
}

impl Exit {
    /// The numeric status.
    pub fn code(self) -> u8 {
        match self {
            Exit::Ok => 0,
            Exit::Failed => 1,
            Exit::Usage => 2,
            Exit::Connection => 3,
            Exit::Remote => 4,
            Exit::Timeout => 5,
            Exit::Interrupted => 130,
            Exit::Terminated => 143,
            Exit::HungUp => 129,
        }
    }
}

impl From<Exit> for std::process::ExitCode {
    fn from(exit: Exit) -> Self {
        std::process::ExitCode::from(exit.code())
    }
}

/// A signal other than Ctrl-C that stops `mcp` the way Ctrl-C does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StopSignal {
    /// `SIGTERM` (`kill`, a service manager): exit 143.
    Terminate,
    /// `SIGHUP` (the terminal closed): exit 129.
    Hangup,
}

impl StopSignal {
    /// The signal's name, `SIGTERM` or `SIGHUP`.
    pub fn name(self) -> &'static str {
        match self {
            StopSignal::Terminate => "SIGTERM",
            StopSignal::Hangup => "SIGHUP",
        }
    }
}

impl fmt::Display for Exit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.code())
    }
}

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
    fn lister(self) -> &'static str {
        match self {
            Missing::Tool => "`mcp tools` lists the server's tools",
            Missing::Prompt => "`mcp prompts` lists the server's prompts",
            Missing::Resource => "`mcp resources` lists the server's resources and templates",
        }
    }
}

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
    #[error("{url} needs authorization{}", if *.refused { " (the stored token was refused)" } else { "" })]
    LoginRequired {
        /// The server's URL (or its name in a config file).
        url: String,
        /// Whether a stored token was sent and refused.
        refused: bool,
        /// Whether the server offers OAuth (its challenge names its resource metadata, or it
        /// names its authorization server): then `mcp login` gets a token; otherwise it wants
        /// a token given some other way, sent with `-H 'Authorization: Bearer …'`.
        oauth: bool,
    },
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

fn backticked(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
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
            | CliError::CannotListen { .. }
            | CliError::InvalidUrl { .. }
            | CliError::InvalidArgument { .. }
            | CliError::MissingArguments { .. }
            | CliError::Config { .. }
            | CliError::File { .. } => Exit::Usage,
            CliError::Network {
                kind: NetworkFailure::Timeout,
                ..
            } => Exit::Timeout,
            CliError::Spawn { .. }
            | CliError::Connect { .. }
            | CliError::Network { .. }
            | CliError::Handshake(_)
            | CliError::Exited(_)
            | CliError::Closed(_)
            | CliError::LoginRequired { .. }
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

    /// What to try next, when there is something useful to say.
    pub fn hint(&self) -> Option<String> {
        Some(match self {
            CliError::Usage(_) => "see `mcp --help`, or `mcp <command> --help`".into(),
            CliError::CannotListen { kind, .. } => match kind {
                std::io::ErrorKind::AddrInUse => {
                    "another program listens on this port: pick another, or 127.0.0.1:0 for any free one"
                        .into()
                }
                std::io::ErrorKind::AddrNotAvailable => "that address is not this machine's: use \
                    127.0.0.1:PORT (0.0.0.0:PORT serves other machines too)"
                    .into(),
                std::io::ErrorKind::PermissionDenied => {
                    "ports below 1024 need privileges: pick one above 1023, or 127.0.0.1:0 for any free one"
                        .into()
                }
                _ => return None,
            },
            CliError::InvalidUrl {
                suggestion: Some(url),
                ..
            } => format!("did you mean --url {url} ?"),
            CliError::InvalidUrl { .. } => {
                "an MCP endpoint looks like http://127.0.0.1:3000/mcp or https://host/mcp".into()
            }
            CliError::InvalidArgument { suggestions, .. } => match suggestions.as_slice() {
                [] => "`mcp tools` shows each tool's input schema; --args '{…}' sends JSON as is"
                    .into(),
                names => format!(
                    "did you mean {}? `mcp tools` shows each tool's input schema",
                    or_list(names)
                ),
            },
            CliError::MissingArguments {
                tool, signature, ..
            } => format!("`{tool}` takes: {signature}"),
            CliError::Spawn {
                program,
                not_found: true,
                ..
            } => format!("is `{program}` installed and on PATH? Give its full path, or check the spelling"),
            CliError::Spawn { .. } => "check that the server command runs on its own in a shell".into(),
            CliError::Connect { .. } => {
                "is the server running and is the URL right (scheme, host, port, path such as /mcp)? \
                 Add -v to see the HTTP exchange"
                    .into()
            }
            CliError::Network { kind, .. } => network_hint(*kind).into(),
            CliError::Http {
                status, connecting, ..
            } => http_hint(*status, *connecting),
            CliError::Handshake(_) => {
                "run with -v to see what the server sent; for an older server try --era legacy, \
                 and check that a stdio server prints nothing but JSON-RPC on stdout"
                    .into()
            }
            CliError::Exited(_) => "the server may have crashed: its stderr is shown above; run with -v for the wire trace".into(),
            CliError::Closed(_) => "the connection ended before the answer came; run with -v for the wire trace".into(),
            // A task the server does not know, or one it will not cancel (already ended).
            CliError::Remote { method, error } if method.starts_with("tasks/") && error.code == ErrorObject::INVALID_PARAMS => {
                "`mcp tasks` lists the server's tasks with their ids and status".into()
            }
            // A task's state, not a crash: `tasks/result` of a cancelled or failed task.
            CliError::Remote { method, error }
                if method == "tasks/result" && error.code == ErrorObject::INTERNAL_ERROR =>
            {
                "the task may have ended without a result (cancelled or failed): `mcp tasks get ID` shows its status".into()
            }
            CliError::Remote { error, .. } => return remote_hint(error.code),
            CliError::NotFound {
                kind, suggestions, ..
            } => match suggestions.as_slice() {
                [] => kind.lister().to_owned(),
                names => format!("did you mean {}? {}", or_list(names), kind.lister()),
            },
            CliError::InvalidParams(rejected) => {
                let Rejected {
                    method,
                    name,
                    required,
                    signature,
                    ..
                } = rejected.as_ref();
                let listing = if method.starts_with("prompts/") {
                    "`mcp prompts` lists each prompt's arguments"
                } else {
                    "`mcp tools` shows its input schema"
                };
                match (required.as_slice(), signature.is_empty()) {
                    ([], true) => format!("`{name}` takes no arguments; {listing}"),
                    ([], false) => format!("`{name}` takes: {signature}; {listing}"),
                    (required, _) => format!(
                        "`{name}` requires {} (takes: {signature}); {listing}",
                        backticked(required)
                    ),
                }
            }
            CliError::Timeout {
                connecting: true, ..
            } => "raise --connect-timeout; a first `npx` run may need to download the server".into(),
            CliError::Timeout { total: true, .. } => {
                "the call kept reporting progress but ran past --max-time; raise --max-time".into()
            }
            CliError::Timeout { .. } => "raise --timeout, or watch progress with -v".into(),
            CliError::Interrupted | CliError::Stopped(_) => return None,
            CliError::ToolFailed(_) => "the tool ran and reported a failure in its own words; if it is about the arguments, `mcp tools` shows what the tool takes".into(),
            CliError::LintErrors(_) => "fix the errors listed above; warnings do not change the exit code".into(),
            CliError::File { .. } => "check the path and its permissions".into(),
            CliError::Config { hint, .. } => return hint.clone(),
            CliError::LoginRequired { oauth: false, .. } => {
                // Printed masked (crate::redact): `Bearer ***` is the one spelling left as is.
                "the server wants an access token and offers no OAuth login: send it with \
                 -H 'Authorization: Bearer ***' (*** = your token)"
                    .into()
            }
            CliError::LoginRequired { url, .. } if url.contains("://") => {
                format!("run: mcp login --url {url}")
            }
            CliError::LoginRequired { .. } => "run: mcp login --url <the server's URL>".into(),
            CliError::AuthFailed(_) => {
                "check the URL; without a browser on this machine use --no-browser and open the \
                 printed URL elsewhere (the redirect must reach this machine's 127.0.0.1)"
                    .into()
            }
            CliError::Invalid(_) => "the server may not follow the MCP spec; run with -v to see what it sent".into(),
            CliError::OutputSchema { tool, .. } => format!(
                "the server's result breaks the schema it declares for `{tool}` (a server bug); \
                 `mcp tools --json` shows the schema, --no-output-check shows the result anyway"
            ),
                        CliError::NotOffered { .. } => "`mcp info` shows which capabilities the server declares".into(),
            CliError::Unsupported(_) => "connect to a stdio server instead (`-- <command> [args]`), or use a build with HTTP support".into(),
        })
    }

    /// The full message for stderr: `error: …` and, when there is one, `hint: …`.
    pub fn report(&self) -> String {
        let mut out = format!("error: {self}\n");
        if let Some(hint) = self.hint() {
            out.push_str(&format!("hint: {hint}\n"));
        }
        out
    }
}

/// `` `a` ``, `` `a` or `b` ``, `` `a`, `b` or `c` ``.
fn or_list(names: &[String]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    match quoted.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

fn network_hint(kind: NetworkFailure) -> &'static str {
    match kind {
        NetworkFailure::Refused => {
            "is the server running, on that host and port? Add -v to see the HTTP exchange"
        }
        NetworkFailure::Dns => "check the host name in the URL",
        NetworkFailure::Unreachable => {
            "check the host and port in the URL, and that the network reaches it"
        }
        NetworkFailure::Reset => {
            "the server (or a proxy) dropped the connection: it may have crashed or restarted, \
             its own log may say why; add -v to see the HTTP exchange"
        }
        NetworkFailure::Timeout => {
            "the server did not answer in time; add -v to see the HTTP exchange"
        }
        NetworkFailure::Tls => {
            "check the scheme (http:// or https://) and the server's certificate"
        }
        NetworkFailure::Other => "add -v to see the HTTP exchange",
    }
}

fn http_hint(status: u16, connecting: bool) -> String {
    match status {
        403 => "the server refused access: check the token or --header values".into(),
        404 | 405 if connecting => {
            "is the URL's path right? MCP endpoints are often /mcp (or /sse for old servers)".into()
        }
        404 => "the server no longer knows this request or session; try again".into(),
        429 => "the server is rate-limiting: wait and try again".into(),
        500..=599 => format!(
            "the server failed (HTTP {status}); its own log says why; add -v to see the HTTP exchange"
        ),
        _ => "the server refused the request; add -v to see the HTTP exchange".into(),
    }
}

fn remote_hint(code: i64) -> Option<String> {
    Some(
        match code {
            ErrorObject::METHOD_NOT_FOUND => {
                "the server does not implement this method; `mcp info` shows its capabilities"
            }
            ErrorObject::INVALID_PARAMS => {
                "the server rejected the arguments; `mcp tools` and `mcp prompts` show what each takes"
            }
            ErrorObject::RESOURCE_NOT_FOUND => "no such resource; `mcp resources` lists them",
            ErrorObject::PARSE_ERROR | ErrorObject::INVALID_REQUEST => {
                "the server could not read the request; run with -v to see the wire trace"
            }
            ErrorObject::INTERNAL_ERROR => {
                "the server failed internally; its log (stderr) may say why"
            }
            ErrorObject::URL_ELICITATION_REQUIRED => {
                "the server needs you to open a URL first; it is in the error data (see --json)"
            }
            _ => return None,
        }
        .to_owned(),
    )
}

mod json;

pub use json::print_error;

#[cfg(test)]
mod tests;
