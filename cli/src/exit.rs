//! Exit codes that scripts can rely on, errors that say what went wrong and what to try,
//! and the `--json` error object.
//!
//! | code | meaning |
//! | --- | --- |
//! | 0 | success |
//! | 1 | the tool returned `isError: true`, or `lint` found errors |
//! | 2 | usage: bad options or arguments (a URL without `http://` or `https://`, a `key=value` that does not fit the tool's input schema, a missing required argument); nothing was sent, but for a prompt's missing argument (found when the server refused the prompt) |
//! | 3 | connection or handshake failure (refused, reset, an HTTP error status while connecting, the server exited), a transport this build lacks, authorization needed (`mcp login`) or failed, a bearer token refused, a bridge's upstream server down; for `tools --all` and `bridge --config`: no server of the config file came up |
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
//! | `cannot_listen` | 3 | `--listen ADDR` could not be bound: another program holds the port, the address is not this machine's, or the port needs privileges |
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
//! | `auth_failed` | 3 | authorization failed: `mcp login` could not get a token, or the server refused the token sent (it is wrong, not missing) |
//! | `upstream_failed` | 3 | the URL is an `mcp bridge` that answered, but the server it forwards to failed: not reached, not started, or ended (`method`, `upstream`, `upstreamCode`: that failure's code at the bridge) |
//! | `not_mcp` | 3 | the URL answers HTTP, but not as an MCP server: the initialize POST was refused (400, 404, 405) and so was the legacy HTTP+SSE GET tried next, or the POST got 501 |
//! | `no_server_up` | 3 | no server of the config file came up (`tools --all`, `bridge --config`): each one's reason in `servers` (`{"name", "reason"}`) |
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

mod error;
mod hint;
mod json;

pub use error::{ANY_SERVER_OF, CliError, Missing, NetworkFailure, Rejected, strip_rpc_prefix};
pub use json::{print_bridge_error, print_error};

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
    /// 3: the server could not be started or reached, or the handshake failed; or the
    /// `--listen` address could not be bound.
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

#[cfg(test)]
mod tests;
