//! The one error type of the client.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use mcp_proto::http::error::HttpStatusError;
use mcp_proto::session::{CloseReason, UsageError};
use serde_json::value::RawValue;

/// Everything a [`Client`](crate::Client) call can fail with. Every variant names the server
/// ([`ClientBuilder::name`](crate::ClientBuilder::name)): the configured name; for an unnamed
/// stdio server its command line (`mcp demo-server`, cut with `…` when long); for an unnamed
/// HTTP server its URL without secrets (`http://127.0.0.1:3000/mcp`: no user, password or
/// query).
///
/// Remote errors (the server's JSON-RPC error), local deadlines, cancellation, the end of
/// the connection and the caller's own misuse are separate variants, so that a host can tell
/// "the server said no" from "the server is gone" from "I called it wrong".
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The server process could not be started (missing program, permission denied, ...).
    #[error("server {server:?}: could not start {command:?}: {source}")]
    Spawn {
        /// The server.
        server: Arc<str>,
        /// The program that failed to start.
        command: String,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// The handshake failed: the server rejected `initialize`, chose a version this client does
    /// not speak, sent an invalid result, did not answer in time, or the transport ended.
    #[error("server {server:?}: handshake failed: {reason}")]
    Handshake {
        /// The server.
        server: Arc<str>,
        /// Why the session closed during the handshake.
        reason: CloseReason,
    },
    /// The server answered with a JSON-RPC error.
    #[error("server {server:?}: {method}: MCP error {code}: {message}")]
    Remote {
        /// The server.
        server: Arc<str>,
        /// The request's method.
        method: String,
        /// The JSON-RPC error code.
        code: i64,
        /// The server's message.
        message: String,
        /// The server's `data`, raw.
        data: Option<Box<RawValue>>,
    },
    /// No answer in time; the server was told to stop (`notifications/cancelled`).
    #[error("server {server:?}: {method}: no answer within {}ms{}", after.as_millis(), if *total { " (maximum total time)" } else { "" })]
    Timeout {
        /// The server.
        server: Arc<str>,
        /// The request's method.
        method: String,
        /// The timeout that expired.
        after: Duration,
        /// Whether it was the maximum total time of a deadline reset by progress.
        total: bool,
    },
    /// The request was cancelled by the client.
    #[error("server {server:?}: {method}: cancelled")]
    Cancelled {
        /// The server.
        server: Arc<str>,
        /// The request's method.
        method: String,
    },
    /// The stdio server process ended. `stderr` holds its last stderr lines.
    #[error("server {server:?} {status}{}", stderr_suffix(.stderr))]
    Exited {
        /// The server.
        server: Arc<str>,
        /// How it ended ("exited with status 1", "killed by signal 9 (SIGKILL)", or
        /// "closed its stdout" when it had not exited yet).
        status: String,
        /// Its last stderr lines, oldest first.
        stderr: Vec<String>,
    },
    /// The connection is closed (by the client, or the transport ended).
    #[error("server {server:?}: connection closed: {reason}")]
    Closed {
        /// The server.
        server: Arc<str>,
        /// Why.
        reason: CloseReason,
    },
    /// The call was made wrongly (a zero timeout, a reserved method, params that are not an
    /// object, too many requests in flight). Nothing was sent.
    #[error("server {server:?}: {source}")]
    Usage {
        /// The server.
        server: Arc<str>,
        /// What was wrong.
        #[source]
        source: UsageError,
    },
    /// The server's result did not match the method's result type.
    #[error("server {server:?}: {method}: invalid result: {source}")]
    Decode {
        /// The server.
        server: Arc<str>,
        /// The request's method.
        method: String,
        /// The decoding error.
        #[source]
        source: serde_json::Error,
    },
    /// A paginated list did not end: the server repeated a cursor or sent too many pages.
    #[error("server {server:?}: {method}: pagination does not end ({detail})")]
    Pagination {
        /// The server.
        server: Arc<str>,
        /// The list method.
        method: String,
        /// What went wrong.
        detail: String,
    },
    /// A paginated list grew beyond the connection's
    /// [`ListBudget`](crate::ListBudget) (bytes of results, items or pages, over all pages):
    /// the pages so far are dropped and no further page is asked for.
    #[error("server {server:?}: {method}: the list exceeds {limit}")]
    ListBudget {
        /// The server.
        server: Arc<str>,
        /// The list method.
        method: String,
        /// The budget it exceeded.
        limit: crate::ListLimit,
    },
    /// The HTTP exchange carrying the request failed with this status: `source` has the body
    /// excerpt and, on 401 / 403, the parsed `WWW-Authenticate` challenge and
    /// `Mcp-Auth-Server`. (A refused `initialize` is [`Error::Handshake`] with
    /// [`CloseReason::Http`]; [`Error::http_status`] finds both.)
    #[error("server {server:?}: {method}: {source}")]
    Http {
        /// The server.
        server: Arc<str>,
        /// The request's method.
        method: String,
        /// The response.
        #[source]
        source: HttpStatusError,
    },
    /// The reply carrying the request could not be used: larger than the body limit (the
    /// rest was not read), not JSON, or of an unexpected content type. Only this request
    /// failed: the connection goes on ([`Error::is_connection_lost`] is false).
    #[error("server {server:?}: {method}: invalid response: {detail}")]
    InvalidResponse {
        /// The server.
        server: Arc<str>,
        /// The request's method.
        method: String,
        /// What was wrong with the reply.
        detail: String,
    },
    /// OAuth authorization for the server failed (discovery, registration, the user's
    /// authorization, or the token request); the message names the step and never a secret.
    #[error("server {server:?}: authorization failed: {message}")]
    Auth {
        /// The server.
        server: Arc<str>,
        /// What went wrong.
        message: String,
    },
    /// The task the server made of a request (tasks extension, 2026-07-28) can no longer be
    /// followed: `tasks/get` failed or answered something unusable, or the task outlived its
    /// `ttlMs` without finishing.
    #[error("server {server:?}: task {task_id:?}: {detail}")]
    Task {
        /// The server.
        server: Arc<str>,
        /// The task.
        task_id: String,
        /// What happened.
        detail: String,
    },
    /// A tool's result does not match the `outputSchema` the tool declared in the client's
    /// last [`list_tools`](crate::Client::list_tools): its `structuredContent` is missing or
    /// invalid (see [`ClientBuilder::validate_output`](crate::ClientBuilder::validate_output)).
    /// The server answered; the connection goes on.
    #[error("server {server:?}: tool {tool:?}: the result does not match the tool's outputSchema: {}", violations_summary(.violations, *.total))]
    OutputSchema {
        /// The server.
        server: Arc<str>,
        /// The tool.
        tool: String,
        /// The first few violations (at most [`MAX_VIOLATIONS`](crate::MAX_VIOLATIONS)),
        /// each with its JSON pointer.
        violations: Vec<crate::SchemaViolation>,
        /// How many violations there are in all.
        total: usize,
    },
    /// The connection's configuration cannot be used (an invalid URL, a root certificate that
    /// is not PEM). Nothing was sent.
    #[error("server {server:?}: invalid configuration: {message}")]
    Config {
        /// The server.
        server: Arc<str>,
        /// What is wrong.
        message: String,
    },
    /// The client was asked for something this build cannot do yet (for example an HTTP
    /// server, or a runtime that is not running).
    #[error("server {server:?}: {what} is not supported")]
    Unsupported {
        /// The server.
        server: Arc<str>,
        /// What was asked for.
        what: String,
    },
    /// The server does not offer what was asked: it did not declare the capability the
    /// method needs (`tasks/list` without `tasks.list`, say), or the negotiated protocol has
    /// no such method. Nothing was sent.
    #[error("server {server:?} does not offer {method}: {reason}")]
    NotOffered {
        /// The server.
        server: Arc<str>,
        /// The method that was not sent, e.g. `tasks/list`.
        method: String,
        /// Why: the capability it lacks, or the protocol that has no such method.
        reason: String,
    },
}

fn violations_summary(violations: &[crate::SchemaViolation], total: usize) -> String {
    let mut s = violations
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ");
    if total > violations.len() {
        s.push_str(&format!(" (and {} more)", total - violations.len()));
    }
    s
}

fn stderr_suffix(lines: &[String]) -> String {
    if lines.is_empty() {
        String::new()
    } else {
        format!(": {}", lines.join("\n"))
    }
}

impl Error {
    /// The server this error is about.
    #[must_use]
    pub fn server(&self) -> &str {
        match self {
            Error::Spawn { server, .. }
            | Error::Handshake { server, .. }
            | Error::Remote { server, .. }
            | Error::Timeout { server, .. }
            | Error::Cancelled { server, .. }
            | Error::Exited { server, .. }
            | Error::Closed { server, .. }
            | Error::Usage { server, .. }
            | Error::Decode { server, .. }
            | Error::Pagination { server, .. }
            | Error::ListBudget { server, .. }
            | Error::Http { server, .. }
            | Error::InvalidResponse { server, .. }
            | Error::Config { server, .. }
            | Error::Auth { server, .. }
            | Error::Task { server, .. }
            | Error::OutputSchema { server, .. }
            | Error::Unsupported { server, .. }
            | Error::NotOffered { server, .. } => server,
        }
    }

    /// The server's JSON-RPC error as the server sent it, for [`Error::Remote`]; any other
    /// error back as it is (a task's follower hands the first to its poller, which decides).
    pub(crate) fn into_remote(self) -> Result<mcp_proto::jsonrpc::ErrorObject, Error> {
        match self {
            Error::Remote {
                code,
                message,
                data,
                ..
            } => {
                let mut e = mcp_proto::jsonrpc::ErrorObject::new(code, message);
                e.data = data;
                Ok(e)
            }
            other => Err(other),
        }
    }

    /// The JSON-RPC error code, for [`Error::Remote`].
    #[must_use]
    pub fn code(&self) -> Option<i64> {
        match self {
            Error::Remote { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// The HTTP response that caused this error, if one did: a request's failed exchange
    /// ([`Error::Http`]), or the response that ended the connection or refused the handshake
    /// (for example a 401 with its `WWW-Authenticate` challenge).
    #[must_use]
    pub fn http_status(&self) -> Option<&HttpStatusError> {
        match self {
            Error::Http { source, .. } => Some(source),
            Error::Handshake {
                reason: CloseReason::Http(e),
                ..
            }
            | Error::Closed {
                reason: CloseReason::Http(e),
                ..
            } => Some(e),
            _ => None,
        }
    }

    /// Whether the connection is gone (closed, exited, or the handshake failed): no later
    /// call on this client can succeed.
    #[must_use]
    pub fn is_connection_lost(&self) -> bool {
        matches!(
            self,
            Error::Closed { .. } | Error::Exited { .. } | Error::Handshake { .. }
        )
    }
}

/// What a driver knows about a stdio server that ended, for [`Error::Exited`].
#[derive(Debug, Clone)]
pub(crate) struct ExitInfo {
    pub(crate) status: String,
    pub(crate) stderr: Vec<String>,
}
