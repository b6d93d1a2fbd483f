//! What a failed connection attempt or an ended connection means for the reconnect policy.

use mcp_manager::reconnect::ExitCause;
use mcp_proto::session::CloseReason;

use crate::error::Error;

/// The [`ExitCause`] of a client error: permanent for what retrying cannot fix (the program
/// does not exist, the server refused the handshake, the transport is not supported by this
/// build), transient for a process or session that went away.
pub(crate) fn of_error(e: &Error) -> ExitCause {
    match e {
        Error::Spawn {
            command, source, ..
        } => ExitCause::SpawnFailed {
            program: command.clone(),
            message: source.to_string(),
            not_found: source.kind() == std::io::ErrorKind::NotFound,
        },
        Error::Unsupported { what, .. } => ExitCause::Config {
            message: format!("{what} is not supported"),
        },
        Error::Handshake { reason, .. } | Error::Closed { reason, .. } => of_reason(reason),
        Error::Exited { status, stderr, .. } => of_exit_status(status, stderr),
        other => ExitCause::Io {
            message: other.to_string(),
        },
    }
}

/// The [`ExitCause`] of a closed session.
pub(crate) fn of_reason(reason: &CloseReason) -> ExitCause {
    match reason {
        CloseReason::HandshakeTimeout { .. } => ExitCause::StartupTimeout,
        CloseReason::HandshakeRejected(obj) => ExitCause::HandshakeRejected {
            message: obj.message.clone(),
        },
        CloseReason::InvalidHandshake(detail) => ExitCause::HandshakeRejected {
            message: format!("invalid initialize result: {detail}"),
        },
        CloseReason::UnsupportedVersion { offered, .. } => ExitCause::UnsupportedVersion {
            version: offered.clone(),
        },
        CloseReason::Http(e) => ExitCause::Http { status: e.status },
        other => ExitCause::Io {
            message: other.to_string(),
        },
    }
}

/// The longest stderr line an [`ExitCause`] carries (a status line, not a log).
const MAX_STDERR_LINE: usize = 200;

/// The [`ExitCause`] of a stdio server that ended, from the driver's description
/// (`exited with status 1`, `killed by signal 9 (SIGKILL)`, `closed its stdout`) and the
/// last lines of its stderr (the last non-blank one is kept, cut to [`MAX_STDERR_LINE`]).
fn of_exit_status(status: &str, stderr: &[String]) -> ExitCause {
    let last_stderr = stderr
        .iter()
        .rev()
        .map(|l| l.trim())
        .find(|l| !l.is_empty())
        .map(|l| match l.char_indices().nth(MAX_STDERR_LINE) {
            Some((cut, _)) => format!("{}…", &l[..cut]),
            None => l.to_owned(),
        });
    if let Some(code) = status.strip_prefix("exited with status ") {
        return ExitCause::ProcessExited {
            code: code.trim().parse().ok(),
            last_stderr,
        };
    }
    if status.starts_with("killed by signal") {
        return ExitCause::ProcessExited {
            code: None,
            last_stderr,
        };
    }
    ExitCause::StdoutClosed
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn server() -> Arc<str> {
        "s".into()
    }

    #[test]
    fn missing_program_is_permanent_and_exit_is_not() {
        let spawn = Error::Spawn {
            server: server(),
            command: "nope".into(),
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        };
        assert!(of_error(&spawn).is_permanent(true));
        let exited = Error::Exited {
            server: server(),
            status: "exited with status 3".into(),
            stderr: Vec::new(),
        };
        assert_eq!(
            of_error(&exited),
            ExitCause::ProcessExited {
                code: Some(3),
                last_stderr: None
            }
        );
        let said = Error::Exited {
            server: server(),
            status: "exited with status 2".into(),
            stderr: vec!["starting".into(), "fatal: no API key".into(), " ".into()],
        };
        assert_eq!(
            of_error(&said).describe(),
            "exited with code 2: fatal: no API key"
        );
        assert!(!of_error(&exited).is_permanent(false));
        let unsupported = Error::Unsupported {
            server: server(),
            what: "HTTP".into(),
        };
        assert!(of_error(&unsupported).is_permanent(true));
    }

    #[test]
    fn handshake_reasons() {
        assert_eq!(
            of_reason(&CloseReason::HandshakeTimeout {
                after: std::time::Duration::from_secs(1)
            }),
            ExitCause::StartupTimeout
        );
        assert!(!of_reason(&CloseReason::TransportClosed { detail: None }).is_permanent(true));
    }
}
