//! The client's errors as [`CliError`]s: the failure to connect ([`connect_error`], with the
//! login a 401 asks for) and the failure of a request ([`call_error`]), each with the exit
//! code and the words a person needs.

use std::time::Duration;

use mcp_proto::jsonrpc::ErrorObject;
use mcp_proto::session::{CloseReason, Era, UsageError};
use mcp_tokio::Error;

use super::super::bridge::upstream_failure;
use crate::exit::{CliError, NetworkFailure, strip_rpc_prefix};

/// How the errors name the protocol of the discover era (the versions from 2026-07-28 on),
/// whose sessions have no `ping`, `logging/setLevel` or `resources/subscribe`. The hint of
/// such a [`CliError::NotOffered`] recognises it.
pub(crate) const DISCOVER_ERA: &str = "2026-07-28";

/// Whether a 401's server offers an OAuth login: its Bearer challenge names its protected
/// resource metadata (RFC 9728), or it names its authorization server (`Mcp-Auth-Server`).
/// A bare `Bearer` challenge is a server that wants a token handed out some other way.
fn offers_oauth(status: &mcp_proto::transport_error::HttpStatusError) -> bool {
    status.auth_server.is_some()
        || status
            .bearer()
            .is_some_and(|b| b.resource_metadata().is_some())
}

/// A 401 (or a 403 `insufficient_scope`) that only logging in can fix.
pub(super) fn login_required(e: &Error, url: &str, refused: bool) -> Option<CliError> {
    let status = e.http_status()?;
    let insufficient = || status.bearer().and_then(|b| b.error()) == Some("insufficient_scope");
    (status.status == 401 || (status.status == 403 && insufficient())).then(|| {
        let bearer = status.bearer();
        if bearer.and_then(|b| b.error()) == Some("invalid_token") && !offers_oauth(status) {
            let said = bearer
                .and_then(|b| b.error_description())
                .map(str::to_owned);
            return CliError::TokenRefused {
                url: url.to_owned(),
                said,
            };
        }
        CliError::LoginRequired {
            url: url.to_owned(),
            refused,
            oauth: offers_oauth(status),
        }
    })
}

/// Maps a failure to connect. `http` says whether `what` is an HTTP endpoint.
pub(super) fn connect_error(
    e: Error,
    what: &str,
    http: bool,
    connect_timeout: Option<Duration>,
) -> CliError {
    // `mcp bridge` answered; the server behind it failed.
    if let Error::Handshake {
        reason: CloseReason::HandshakeRejected(error),
        ..
    } = &e
        && let Some(bridge) = upstream_failure::from_bridge(what, "initialize", error)
    {
        return bridge;
    }
    if let Some(not_mcp) = super::super::not_mcp::classify(&e, what) {
        return not_mcp;
    }
    match e {
        Error::Spawn {
            command, source, ..
        } => spawn_failed(command, &source),
        Error::Handshake {
            reason: CloseReason::HandshakeTimeout { after },
            ..
        } => CliError::Timeout {
            what: "connecting".into(),
            after: connect_timeout.unwrap_or(after),
            connecting: true,
            total: false,
        },
        Error::Handshake {
            reason: CloseReason::Http(status),
            ..
        } => CliError::Http {
            url: what.to_owned(),
            what: "initialize".into(),
            status: status.status,
            text: status.to_string(),
            connecting: true,
        },
        Error::Handshake {
            reason:
                CloseReason::TransportClosed {
                    detail: Some(detail),
                },
            ..
        } if http => match network_failure(&detail) {
            Some(kind) => CliError::Network {
                url: what.to_owned(),
                what: "connecting".into(),
                kind,
                detail: client_words(&detail).to_owned(),
            },
            None => CliError::Connect {
                url: what.to_owned(),
                reason: detail,
            },
        },
        Error::Handshake { reason, .. } if http => CliError::Connect {
            url: what.to_owned(),
            reason: reason.to_string(),
        },
        Error::Handshake { reason, .. } => CliError::Handshake(reason.to_string()),
        // A crash while starting (a missing API key, a bad flag) is the server's exit, with
        // its last words, not a protocol problem.
        Error::Exited {
            server,
            status,
            stderr,
        } => CliError::Exited(exited_detail(&server, &status, &stderr)),
        Error::Unsupported { what: detail, .. } => CliError::Unsupported(format!(
            "{detail} is not supported by this build (connecting to {what})"
        )),
        other => call_error(other),
    }
}

/// The server named as a person knows it (`the server at URL`, `` the server `cmd args` ``)
/// closed the connection, and how if the transport said.
fn closed_by(server: &str, detail: Option<&str>) -> String {
    let who = if server.starts_with("http://") || server.starts_with("https://") {
        format!("the server at {server}")
    } else {
        format!("the server `{server}`")
    };
    match detail {
        Some(detail) => format!("{who} closed the connection: {detail}"),
        None => format!("{who} closed the connection"),
    }
}

/// Signals that another process sends (a fault such as SIGSEGV is the server's own doing).
const SENT_SIGNALS: [&str; 7] = [
    "(SIGTERM", "(SIGKILL", "(SIGINT", "(SIGHUP", "(SIGQUIT", "(SIGUSR1", "(SIGUSR2",
];

/// What follows "the server " for stdio server `server` that ended with `status` (the
/// driver's words): `` `cmd args` exited with status 1; its last stderr lines: … ``,
/// `` `cmd args` was killed by signal 15 (SIGTERM), sent by another process, not by mcp ``.
fn exited_detail(server: &str, status: &str, stderr: &[String]) -> String {
    let mut status = if status.starts_with("killed") || status.starts_with("stopped") {
        format!("`{server}` was {status}")
    } else {
        format!("`{server}` {status}")
    };
    // The driver reports an exit only for a server that ended by itself (when mcp stops a
    // server, the call fails as closed): a sent signal came from someone else.
    if SENT_SIGNALS.iter().any(|s| status.contains(s)) {
        status.push_str(", sent by another process, not by mcp");
    }
    if stderr.is_empty() {
        status
    } else {
        format!(
            "{status}; its last stderr lines:\n  {}",
            stderr.join("\n  ")
        )
    }
}

/// What kind of failure below HTTP the HTTP client described.
///
/// The driver hands request and connect failures over as text, `[transport error: ]<Kind>:
/// <message>` with `Kind` the name of the core's `http::FailureKind`; the message is the HTTP
/// client's, so refusals and name resolution are told apart by its words.
pub fn network_failure(detail: &str) -> Option<NetworkFailure> {
    let detail = detail.strip_prefix("transport error: ").unwrap_or(detail);
    let (kind, message) = detail.split_once(": ")?;
    let message = message.to_ascii_lowercase();
    Some(match kind {
        "Connect" if message.contains("refused") => NetworkFailure::Refused,
        "Connect"
            if ["dns", "lookup", "resolve", "name or service not known"]
                .iter()
                .any(|w| message.contains(w)) =>
        {
            NetworkFailure::Dns
        }
        "Connect" => NetworkFailure::Unreachable,
        "Reset" => NetworkFailure::Reset,
        "Timeout" => NetworkFailure::Timeout,
        "Tls" => NetworkFailure::Tls,
        "Other" => NetworkFailure::Other,
        _ => return None,
    })
}

/// The HTTP client's own words in a failure's detail, without the driver's `transport
/// error: <Kind>: ` in front.
pub(crate) fn client_words(detail: &str) -> &str {
    let detail = detail.strip_prefix("transport error: ").unwrap_or(detail);
    detail.split_once(": ").map_or(detail, |(_, words)| words)
}

/// Maps the failure of a request.
pub fn call_error(e: Error) -> CliError {
    if let Some(login) = login_required(&e, e.server(), true) {
        return login;
    }
    let server = e.server().to_owned();
    match e {
        Error::Remote {
            method,
            code,
            message,
            data,
            ..
        } => {
            let error = ErrorObject {
                data,
                ..ErrorObject::new(code, strip_rpc_prefix(&message, code))
            };
            // `mcp bridge` answered; the server behind it failed.
            upstream_failure::from_bridge(&server, &method, &error)
                .unwrap_or(CliError::Remote { method, error })
        }
        Error::Timeout {
            method,
            after,
            total,
            ..
        } => CliError::Timeout {
            what: method,
            after,
            connecting: false,
            total,
        },
        Error::Cancelled { .. } => CliError::Interrupted,
        Error::Exited {
            server,
            status,
            stderr,
        } => CliError::Exited(exited_detail(&server, &status, &stderr)),
        Error::Http { method, source, .. } => CliError::Http {
            url: server,
            what: method,
            status: source.status,
            text: source.to_string(),
            connecting: false,
        },
        Error::Closed {
            reason: CloseReason::Http(source),
            ..
        } => CliError::Http {
            url: server,
            what: String::new(),
            status: source.status,
            text: source.to_string(),
            connecting: false,
        },
        Error::Closed {
            reason:
                CloseReason::TransportClosed {
                    detail: Some(detail),
                },
            ..
        } if network_failure(&detail).is_some() => CliError::Network {
            url: server,
            what: String::new(),
            kind: network_failure(&detail).unwrap_or(NetworkFailure::Other),
            detail: client_words(&detail).to_owned(),
        },
        Error::Closed {
            reason: CloseReason::TransportClosed { detail },
            ..
        } => CliError::Closed(closed_by(&server, detail.as_deref())),
        Error::Closed { reason, .. } => CliError::session_closed(&reason),
        Error::Handshake { reason, .. } => CliError::Handshake(reason.to_string()),
        // The user typed nothing wrong: the protocol the server chose lacks the method.
        Error::Usage {
            source:
                UsageError::NotInEra {
                    method,
                    era: Era::Discover,
                },
            ..
        } => CliError::NotOffered {
            server,
            reason: format!("it speaks protocol {DISCOVER_ERA}, which has no {method}"),
            method,
        },
        Error::Usage { source, .. } => CliError::Usage(source.to_string()),
        Error::Config { message, .. } => {
            CliError::Usage(format!("invalid connection settings: {message}"))
        }
        Error::Decode { method, source, .. } => CliError::Invalid(format!(
            "{method}: the server's result is malformed: {source}"
        )),
        Error::InvalidResponse { method, detail, .. } => {
            CliError::Invalid(format!("{method}: {detail}"))
        }
        Error::Pagination { method, detail, .. } => {
            CliError::Invalid(format!("{method}: {detail}"))
        }
        Error::ListBudget { method, limit, .. } => {
            CliError::Invalid(format!("{method}: the list exceeds {limit}"))
        }
        Error::Unsupported { what, .. } => {
            CliError::Unsupported(format!("{what} is not supported by this build"))
        }
        Error::NotOffered {
            server,
            method,
            reason,
        } => CliError::NotOffered {
            server: server.to_string(),
            method,
            reason,
        },
        Error::Auth { message, .. } => CliError::AuthFailed(message),
        Error::OutputSchema {
            tool,
            violations,
            total,
            ..
        } => CliError::OutputSchema {
            tool,
            violations: violations
                .into_iter()
                .map(|v| (v.pointer, v.message))
                .collect(),
            total,
        },
        Error::Spawn {
            command, source, ..
        } => spawn_failed(command, &source),
        other => CliError::closed(other),
    }
}

/// A stdio server's program that could not be started: not found, or the OS's reason.
fn spawn_failed(command: String, source: &std::io::Error) -> CliError {
    CliError::Spawn {
        program: command,
        not_found: source.kind() == std::io::ErrorKind::NotFound,
        reason: source.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_failures_by_class() {
        use mcp_proto::http::error::HttpStatusError;
        use mcp_proto::http::headers::HeaderList;
        let server: std::sync::Arc<str> = "http://127.0.0.1:9/mcp".into();
        let e = call_error(Error::Remote {
            server: server.clone(),
            method: "tools/call".into(),
            code: -32602,
            message: "MCP error -32602: Tool x not found".into(),
            data: None,
        });
        assert_eq!(
            e.to_string(),
            "tools/call failed: MCP error -32602: Tool x not found"
        );
        let e = call_error(Error::Http {
            server: server.clone(),
            method: "tools/call".into(),
            source: HttpStatusError::from_response(502, &HeaderList::new(), b"bad gateway"),
        });
        assert_eq!(
            e.to_string(),
            "tools/call: http://127.0.0.1:9/mcp answered HTTP 502 Bad Gateway: bad gateway"
        );
        assert_eq!((e.exit().code(), e.code()), (4, "http_error"));
        let e = call_error(Error::Closed {
            server: server.clone(),
            reason: CloseReason::TransportClosed {
                detail: Some(
                    "transport error: Reset: connection error: Connection reset by peer".into(),
                ),
            },
        });
        assert_eq!(
            e,
            CliError::Network {
                url: server.to_string(),
                what: String::new(),
                kind: NetworkFailure::Reset,
                detail: "connection error: Connection reset by peer".into(),
            }
        );
        assert!(!e.report().contains("stderr"), "{}", e.report());
        let e = call_error(Error::Exited {
            server: "demo".into(),
            status: "exited with status 3".into(),
            stderr: vec!["boom".into()],
        });
        assert_eq!(
            e.to_string(),
            "the server `demo` exited with status 3; its last stderr lines:\n  boom"
        );
        assert!(e.report().contains("its stderr is shown above"));
        let killed = |status: &str| {
            call_error(Error::Exited {
                server: "sh -c 'kill -TERM $$'".into(),
                status: status.into(),
                stderr: Vec::new(),
            })
            .to_string()
        };
        assert_eq!(
            killed("killed by signal 15 (SIGTERM)"),
            "the server `sh -c 'kill -TERM $$'` was killed by signal 15 (SIGTERM), \
             sent by another process, not by mcp"
        );
        // A fault is the server's own: no sender named.
        assert_eq!(
            killed("killed by signal 11 (SIGSEGV, core dumped)"),
            "the server `sh -c 'kill -TERM $$'` was killed by signal 11 (SIGSEGV, core dumped)"
        );
    }

    #[test]
    fn network_failures_from_the_http_clients_words() {
        let cases = [
            (
                "Connect: tcp connect error: Connection refused (os error 111)",
                Some(NetworkFailure::Refused),
            ),
            (
                "transport error: Reset: connection error: Connection reset by peer (os error 104)",
                Some(NetworkFailure::Reset),
            ),
            (
                "Connect: dns error: failed to lookup address information",
                Some(NetworkFailure::Dns),
            ),
            (
                "Connect: tcp connect error: Network is unreachable (os error 101)",
                Some(NetworkFailure::Unreachable),
            ),
            (
                "transport error: Timeout: operation timed out",
                Some(NetworkFailure::Timeout),
            ),
            ("Tls: invalid peer certificate", Some(NetworkFailure::Tls)),
            ("the server exited", None),
            ("no response received", None),
        ];
        for (detail, kind) in cases {
            assert_eq!(network_failure(detail), kind, "{detail}");
        }
    }
}
