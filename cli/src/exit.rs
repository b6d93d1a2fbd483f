//! Exit codes that scripts can rely on, and errors that say what went wrong and what to try.
//!
//! | code | meaning |
//! | --- | --- |
//! | 0 | success |
//! | 1 | the tool returned `isError: true`, or `lint` found errors |
//! | 2 | usage: bad options or arguments |
//! | 3 | connection or handshake failure (or a transport this build lacks), authorization needed (`mcp login`) or failed; for `tools --all`: no server of the config file came up |
//! | 4 | the server answered with a JSON-RPC error, or an invalid answer |
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

/// Everything that ends `mcp` unsuccessfully, with its exit code and a hint.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CliError {
    /// Options that do not make sense together, or unparsable arguments.
    #[error("{0}")]
    Usage(String),
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
    /// The server exited or closed the connection before or during the handshake, or the
    /// handshake failed (no common version, malformed answer).
    #[error("handshake with the server failed: {0}")]
    Handshake(String),
    /// The server closed the connection after the handshake.
    #[error("the server closed the connection: {0}")]
    Closed(String),
    /// The server answered a request with a JSON-RPC error.
    #[error("{method} failed: {error}")]
    Remote {
        /// The request's method.
        method: String,
        /// The error as the server sent it.
        error: ErrorObject,
    },
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
    /// This build cannot do what was asked (an HTTP server before HTTP support landed).
    #[error("{0}")]
    Unsupported(String),
    /// The server wants an OAuth token and none is stored, or the stored one was refused and
    /// could not be refreshed. `mcp` never opens a browser unasked: the hint says to log in.
    #[error("{url} needs authorization{}", if *.refused { " (the stored token was refused)" } else { "" })]
    LoginRequired {
        /// The server's URL (or its name in a config file).
        url: String,
        /// Whether a stored token was sent and refused.
        refused: bool,
    },
    /// `mcp login` could not get a token.
    #[error("OAuth: {0}")]
    AuthFailed(String),
    /// A local file could not be read or written.
    #[error("{}: {reason}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// The OS error.
        reason: String,
    },
}

impl CliError {
    /// The exit status this error ends the process with.
    pub fn exit(&self) -> Exit {
        match self {
            CliError::Usage(_) => Exit::Usage,
            CliError::Spawn { .. }
            | CliError::Connect { .. }
            | CliError::Handshake(_)
            | CliError::Closed(_)
            | CliError::LoginRequired { .. }
            | CliError::AuthFailed(_) => Exit::Connection,
            CliError::Remote { .. } | CliError::Invalid(_) => Exit::Remote,
            CliError::Unsupported(_) => Exit::Connection,
            CliError::Timeout { .. } => Exit::Timeout,
            CliError::Interrupted => Exit::Interrupted,
            CliError::Stopped(StopSignal::Terminate) => Exit::Terminated,
            CliError::Stopped(StopSignal::Hangup) => Exit::HungUp,
            CliError::ToolFailed(_) | CliError::LintErrors(_) => Exit::Failed,
            CliError::File { .. } => Exit::Usage,
        }
    }

    /// What to try next, when there is something useful to say.
    pub fn hint(&self) -> Option<String> {
        Some(match self {
            CliError::Usage(_) => "see `mcp --help`, or `mcp <command> --help`".into(),
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
            CliError::Handshake(_) => {
                "run with -v to see what the server sent; for an older server try --era legacy, \
                 and check that a stdio server prints nothing but JSON-RPC on stdout"
                    .into()
            }
            CliError::Closed(_) => "the server may have crashed: its stderr is shown above; run with -v for the wire trace".into(),
            CliError::Remote { error, .. } => return remote_hint(error.code),
            CliError::Timeout {
                connecting: true, ..
            } => "raise --connect-timeout; a first `npx` run may need to download the server".into(),
            CliError::Timeout { total: true, .. } => {
                "the call kept reporting progress but ran past --max-time; raise --max-time".into()
            }
            CliError::Timeout { .. } => "raise --timeout, or watch progress with -v".into(),
            CliError::Interrupted | CliError::Stopped(_) => return None,
            CliError::ToolFailed(_) => "the tool ran and said it failed: check its arguments with `mcp tools`".into(),
            CliError::LintErrors(_) => "fix the errors listed above; warnings do not change the exit code".into(),
            CliError::File { .. } => "check the path and its permissions".into(),
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

fn remote_hint(code: i64) -> Option<String> {
    Some(
        match code {
            ErrorObject::METHOD_NOT_FOUND => {
                "the server does not implement this method; `mcp info` shows its capabilities"
            }
            ErrorObject::INVALID_PARAMS => {
                "the server rejected the arguments; `mcp tools` shows each tool's input schema"
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
mod tests {
    use super::*;

    fn all() -> Vec<CliError> {
        vec![
            CliError::Usage("bad".into()),
            CliError::Spawn {
                program: "nope".into(),
                reason: "No such file".into(),
                not_found: true,
            },
            CliError::Connect {
                url: "http://127.0.0.1:9/mcp".into(),
                reason: "refused".into(),
            },
            CliError::Handshake("unsupported version".into()),
            CliError::Closed("EOF".into()),
            CliError::Remote {
                method: "tools/call".into(),
                error: ErrorObject::method_not_found("x"),
            },
            CliError::Timeout {
                what: "tools/call slow".into(),
                after: Duration::from_secs(5),
                connecting: false,
                total: false,
            },
            CliError::Interrupted,
            CliError::Stopped(StopSignal::Terminate),
            CliError::Stopped(StopSignal::Hangup),
            CliError::ToolFailed("boom".into()),
            CliError::LintErrors(2),
            CliError::File {
                path: "out.png".into(),
                reason: "denied".into(),
            },
            CliError::Invalid("tools/list: bad".into()),
            CliError::Unsupported("HTTP".into()),
            CliError::LoginRequired {
                url: "http://127.0.0.1:9/mcp".into(),
                refused: false,
            },
            CliError::AuthFailed("denied".into()),
        ]
    }

    #[test]
    fn documented_codes() {
        let codes: Vec<u8> = all().iter().map(|e| e.exit().code()).collect();
        assert_eq!(
            codes,
            [2, 3, 3, 3, 3, 4, 5, 130, 143, 129, 1, 1, 2, 4, 3, 3, 3]
        );
        assert_eq!(Exit::Ok.code(), 0);
    }

    #[test]
    fn every_error_but_a_signal_has_a_hint() {
        for e in all() {
            let signal = matches!(e, CliError::Interrupted | CliError::Stopped(_));
            assert_eq!(e.hint().is_none(), signal, "{e}");
        }
    }

    #[test]
    fn reports_say_what_and_what_to_try() {
        let e = CliError::Spawn {
            program: "uvx".into(),
            reason: "No such file or directory".into(),
            not_found: true,
        };
        assert_eq!(
            e.report(),
            "error: could not start `uvx`: No such file or directory\n\
             hint: is `uvx` installed and on PATH? Give its full path, or check the spelling\n"
        );
        let e = CliError::Timeout {
            what: "tools/call slow".into(),
            after: Duration::from_millis(1500),
            connecting: false,
            total: false,
        };
        assert_eq!(e.to_string(), "tools/call slow timed out after 1.50s");
        let e = CliError::Timeout {
            what: "tools/call".into(),
            after: Duration::from_secs(600),
            connecting: false,
            total: true,
        };
        assert_eq!(
            e.to_string(),
            "tools/call timed out after 600.00s (--max-time)"
        );
        assert!(e.hint().unwrap().contains("raise --max-time"), "{e}");
        assert_eq!(
            CliError::Stopped(StopSignal::Terminate).report(),
            "error: stopped by SIGTERM\n"
        );
        let e = CliError::Remote {
            method: "tools/call".into(),
            error: ErrorObject::new(ErrorObject::INVALID_PARAMS, "unknown tool: x"),
        };
        assert_eq!(
            e.to_string(),
            "tools/call failed: MCP error -32602: unknown tool: x"
        );
        assert!(e.hint().unwrap().contains("mcp tools"));
        let odd = CliError::Remote {
            method: "m".into(),
            error: ErrorObject::new(-1, "custom"),
        };
        assert_eq!(odd.hint(), None);
        assert_eq!(CliError::Interrupted.report(), "error: interrupted\n");
        let e = CliError::LoginRequired {
            url: "https://h/mcp".into(),
            refused: false,
        };
        assert_eq!(
            e.report(),
            "error: https://h/mcp needs authorization\nhint: run: mcp login --url https://h/mcp\n"
        );
    }
}
