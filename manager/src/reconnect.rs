//! When to (re)connect one server, and when to give up.
//!
//! [`ReconnectPolicy`] is a per-server state machine. The driver feeds it what happened
//! (`handle_connected`, `handle_exit`, `handle_timeout`), then drains [`poll_action`]
//! (`Connect` or `GiveUp`) and arms a timer for [`poll_timeout`].
//!
//! # Rules
//!
//! - A new policy starts [`Connecting`](ServerStatus::Connecting) with a `Connect` action pending.
//! - A permanent cause ([`ExitCause::is_permanent`]) fails the server at once, with a `GiveUp`.
//! - A transient cause schedules a reconnect after the next [`Backoff`] delay (capped exponential,
//!   jitter from the configured seed); when the attempts are used up, the server fails
//!   (not permanently: [`restart`](ReconnectPolicy::restart) may try again).
//! - A connection that stayed up for at least `stable_after` resets the backoff before the
//!   delay is drawn, so a server that crashes once a day reconnects quickly each time.
//! - A process that exits before it was ever ready (a crash at start-up: a missing API key,
//!   a bad argument) is retried with the same backoff, never sooner: with the defaults it is
//!   started again after 0.25–0.5 s, 0.5–1 s, 1–2 s, 2–4 s, ... (each delay drawn from the
//!   upper half of the nominal one, capped at 30 s), 11 starts over 75–150 s, then it fails.
//!   With [`retry_exit_before_ready`](ReconnectConfig::retry_exit_before_ready) `false` it
//!   fails at its first exit instead.
//!
//! [`poll_action`]: ReconnectPolicy::poll_action
//! [`poll_timeout`]: ReconnectPolicy::poll_timeout

use mcp_proto::http::backoff::Backoff;
use mcp_proto::time::{Duration, Instant, saturating_add};

/// What the driver reports about a connection that ended or never came up.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExitCause {
    /// The process could not be started (command not found, not executable). Permanent.
    SpawnFailed {
        /// The program, as configured.
        program: String,
        /// The OS error, for the status line.
        message: String,
        /// Whether the program was not found at all (the OS error is "not found").
        not_found: bool,
    },
    /// The server answered `initialize` with an error. Permanent.
    HandshakeRejected {
        /// The error message.
        message: String,
    },
    /// The server's protocol version is not one this client speaks. Permanent.
    UnsupportedVersion {
        /// The version it offered.
        version: String,
    },
    /// The configuration cannot work (bad URL, missing variable). Permanent.
    Config {
        /// What is wrong.
        message: String,
    },
    /// An HTTP status ended the connection attempt or the session.
    Http {
        /// The status code.
        status: u16,
    },
    /// The child process exited.
    ProcessExited {
        /// Its exit code, if it exited normally.
        code: Option<i32>,
        /// The last line it wrote on stderr, if any: usually why it stopped.
        last_stderr: Option<String>,
    },
    /// The child's stdout closed.
    StdoutClosed,
    /// The HTTP session ended (expired, or the listening stream dropped for good).
    SessionLost,
    /// The TCP connection was refused.
    ConnectionRefused,
    /// Connecting or the handshake took longer than the server's start-up timeout.
    StartupTimeout,
    /// Any other I/O failure.
    Io {
        /// The OS error.
        message: String,
    },
}

impl ExitCause {
    /// Whether retrying cannot help. `initial` says the server has never been ready under this
    /// policy: there, HTTP 4xx other than 408 and 429 (401, 403, 404, ...) means the URL or the
    /// credentials are wrong; once a session existed, a 404 means it expired and the same
    /// statuses are retried.
    pub fn is_permanent(&self, initial: bool) -> bool {
        match self {
            ExitCause::SpawnFailed { .. }
            | ExitCause::HandshakeRejected { .. }
            | ExitCause::UnsupportedVersion { .. }
            | ExitCause::Config { .. } => true,
            ExitCause::Http { status } => {
                initial && (400..500).contains(status) && !matches!(status, 408 | 429)
            }
            ExitCause::ProcessExited { .. }
            | ExitCause::StdoutClosed
            | ExitCause::SessionLost
            | ExitCause::ConnectionRefused
            | ExitCause::StartupTimeout
            | ExitCause::Io { .. } => false,
        }
    }

    /// Whether a connection attempt ending with this cause failed outright (the program
    /// could not start or exited, the connection was refused, the host was not found, an
    /// HTTP error came back), as opposed to being slow ([`StartupTimeout`](Self::StartupTimeout))
    /// or losing a session that existed ([`SessionLost`](Self::SessionLost)). A host may
    /// report a server whose first attempt failed outright at once, rather than wait for it.
    pub fn is_outright(&self) -> bool {
        !matches!(self, ExitCause::StartupTimeout | ExitCause::SessionLost)
    }

    /// Whether the server could not be reached at all: its program could not be started
    /// ([`SpawnFailed`](Self::SpawnFailed)), the connection was refused
    /// ([`ConnectionRefused`](Self::ConnectionRefused)) or failed below HTTP (the host not
    /// found, a TLS or network error: [`Io`](Self::Io)). A process that ran and exited, or an
    /// HTTP server that answered with an error status, was reached: that is a failure of the
    /// server itself, not unreachability.
    pub fn is_unreachable(&self) -> bool {
        matches!(
            self,
            ExitCause::SpawnFailed { .. } | ExitCause::ConnectionRefused | ExitCause::Io { .. }
        )
    }

    /// A one-line description for a status display.
    pub fn describe(&self) -> String {
        match self {
            // Named as a single server's spawn failure is, with the same hint.
            ExitCause::SpawnFailed {
                program,
                message,
                not_found,
            } => {
                let hint = if *not_found {
                    format!(
                        " (is `{program}` installed and on PATH? Give its full path, or check \
                         the spelling)"
                    )
                } else {
                    String::new()
                };
                format!("could not start `{program}`: {message}{hint}")
            }
            ExitCause::HandshakeRejected { message } => format!("initialize rejected: {message}"),
            ExitCause::UnsupportedVersion { version } => {
                format!("unsupported protocol version {version:?}")
            }
            ExitCause::Config { message } => format!("configuration error: {message}"),
            ExitCause::Http { status } => format!("HTTP status {status}"),
            ExitCause::ProcessExited { code, last_stderr } => {
                let status = match code {
                    Some(code) => format!("exited with code {code}"),
                    None => "killed by a signal".to_owned(),
                };
                match last_stderr.as_deref().map(str::trim) {
                    Some(line) if !line.is_empty() => format!("{status}: {line}"),
                    _ => status,
                }
            }
            ExitCause::StdoutClosed => "stdout closed".to_owned(),
            ExitCause::SessionLost => "HTTP session lost".to_owned(),
            ExitCause::ConnectionRefused => "connection refused".to_owned(),
            ExitCause::StartupTimeout => "start-up timed out".to_owned(),
            ExitCause::Io { message } => format!("I/O error: {message}"),
        }
    }
}

/// Where one server is, for a status display and for routing.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerStatus {
    /// A connection attempt is under way.
    Connecting,
    /// Initialized and serving.
    Ready,
    /// Not connected and not retrying.
    Failed {
        /// Why, for the user.
        reason: String,
        /// Whether the cause is permanent (fix the config or the server), as opposed to retries
        /// used up.
        permanent: bool,
    },
    /// Waiting to reconnect.
    Reconnecting {
        /// Which retry this will be, from 1.
        attempt: u32,
        /// When it will start.
        at: Instant,
    },
    /// Switched off by configuration or by the user.
    Disabled,
}

/// What the driver must do next for this server.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReconnectAction {
    /// Start a connection attempt (spawn, or open the HTTP session) and initialize.
    Connect,
    /// Stop trying; the status is now [`ServerStatus::Failed`] with this reason.
    GiveUp(String),
}

/// Tuning for [`ReconnectPolicy`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReconnectConfig {
    /// The first delay (500 ms by default).
    pub initial: Duration,
    /// The cap on delays (30 s by default).
    pub max: Duration,
    /// The growth factor (2 by default).
    pub factor: u32,
    /// Retries before giving up since the last reset (`Some(10)` by default; `None`: never).
    pub max_attempts: Option<u32>,
    /// How long a connection must last to reset the backoff (60 s by default).
    pub stable_after: Duration,
    /// The jitter seed (the adapter passes a different one per server and run).
    pub seed: u64,
    /// Whether a process that exits (or closes its stdout) before it was ever ready is
    /// retried (`true` by default). `false` for a host that must report a server that
    /// cannot start at once, with its exit status, rather than retry it until a deadline.
    pub retry_exit_before_ready: bool,
}

impl Default for ReconnectConfig {
    fn default() -> Self {
        Self {
            initial: Duration::from_millis(500),
            max: Duration::from_secs(30),
            factor: 2,
            max_attempts: Some(10),
            stable_after: Duration::from_secs(60),
            seed: 0,
            retry_exit_before_ready: true,
        }
    }
}

/// The caller fed an input that does not fit the current status.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReconnectUsageError {
    /// `handle_connected` or `handle_exit` without a connection attempt under way or a ready
    /// connection (the status is given).
    #[error("no connection attempt or connection in status {0:?}")]
    NotConnecting(ServerStatus),
}

/// How the last connection attempt or connection ended, as a start-up report groups it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FailureKind {
    /// Not reached at all ([`ExitCause::is_unreachable`]).
    Unreachable,
    /// Reached, and it failed outright: it exited, closed its stdout, answered with an HTTP
    /// error or refused the handshake.
    Failed,
    /// Only slow, or a session that existed was lost.
    Other,
}

impl FailureKind {
    fn of(cause: &ExitCause) -> Self {
        if cause.is_unreachable() {
            FailureKind::Unreachable
        } else if cause.is_outright() {
            FailureKind::Failed
        } else {
            FailureKind::Other
        }
    }
}

/// The reconnect state machine of one server; see the [module rules](self).
#[derive(Debug, Clone)]
pub struct ReconnectPolicy {
    stable_after: Duration,
    backoff: Backoff,
    status: ServerStatus,
    connected_at: Option<Instant>,
    ever_ready: bool,
    retry_exit_before_ready: bool,
    /// Why the last connection attempt failed or the last connection ended, and how.
    last_failure: Option<(String, FailureKind)>,
    pending: Option<ReconnectAction>,
}

impl ReconnectPolicy {
    /// A policy for a server about to be connected: `Connecting`, with `Connect` pending.
    pub fn new(config: &ReconnectConfig) -> Self {
        let backoff = Backoff::new(
            config.initial,
            config.max,
            config.factor,
            config.max_attempts,
        )
        .with_jitter(config.seed);
        Self {
            stable_after: config.stable_after,
            backoff,
            status: ServerStatus::Connecting,
            connected_at: None,
            ever_ready: false,
            retry_exit_before_ready: config.retry_exit_before_ready,
            last_failure: None,
            pending: Some(ReconnectAction::Connect),
        }
    }

    /// A policy for a disabled server: no action until [`restart`](Self::restart).
    pub fn disabled(config: &ReconnectConfig) -> Self {
        let mut policy = Self::new(config);
        policy.status = ServerStatus::Disabled;
        policy.pending = None;
        policy
    }

    // ---- (A) getters ----

    /// The current status.
    pub fn status(&self) -> &ServerStatus {
        &self.status
    }

    /// Why the last connection attempt failed or the last connection ended (the
    /// [`ExitCause::describe`] of its cause), if one did: for a server reconnecting, what it
    /// is recovering from.
    pub fn last_failure(&self) -> Option<&str> {
        self.last_failure.as_ref().map(|(why, _)| why.as_str())
    }

    /// While the server has never been ready and its last connection attempt could not reach
    /// it ([`ExitCause::is_unreachable`]: not started, refused, host not found), why: the
    /// server is unreachable for now (it may still be retrying). `None` once it has been
    /// ready, while its attempts are only slow, or when it was reached and failed
    /// ([`failed_before_ready`](Self::failed_before_ready)).
    pub fn unreachable(&self) -> Option<&str> {
        match &self.last_failure {
            Some((why, FailureKind::Unreachable)) if !self.ever_ready => Some(why),
            _ => None,
        }
    }

    /// While the server has never been ready and its last connection attempt reached it and
    /// failed outright (its process exited or closed its stdout, it answered with an HTTP
    /// error status, it refused the handshake), why: the exit status and last stderr line,
    /// the status code. The server may still be retrying
    /// ([`ReconnectConfig::retry_exit_before_ready`]); [`status`](Self::status) says.
    /// `None` once it has been ready, while its attempts are only slow, or when it could not
    /// be reached ([`unreachable`](Self::unreachable)).
    pub fn failed_before_ready(&self) -> Option<&str> {
        match &self.last_failure {
            Some((why, FailureKind::Failed)) if !self.ever_ready => Some(why),
            _ => None,
        }
    }

    // ---- (B) inputs ----

    /// The connection attempt succeeded (initialized).
    pub fn handle_connected(&mut self, now: Instant) -> Result<(), ReconnectUsageError> {
        if self.status != ServerStatus::Connecting {
            return Err(ReconnectUsageError::NotConnecting(self.status.clone()));
        }
        self.status = ServerStatus::Ready;
        self.connected_at = Some(now);
        self.ever_ready = true;
        Ok(())
    }

    /// The connection attempt failed or the connection ended, because of `cause`.
    pub fn handle_exit(
        &mut self,
        now: Instant,
        cause: &ExitCause,
    ) -> Result<(), ReconnectUsageError> {
        if !matches!(self.status, ServerStatus::Connecting | ServerStatus::Ready) {
            return Err(ReconnectUsageError::NotConnecting(self.status.clone()));
        }
        let reason = cause.describe();
        self.last_failure = Some((reason.clone(), FailureKind::of(cause)));
        if cause.is_permanent(!self.ever_ready) {
            self.fail(reason, true);
            return Ok(());
        }
        let exited = matches!(
            cause,
            ExitCause::ProcessExited { .. } | ExitCause::StdoutClosed
        );
        if exited && !self.ever_ready && !self.retry_exit_before_ready {
            self.fail(reason, false);
            return Ok(());
        }
        if let Some(since) = self.connected_at.take()
            && now.saturating_duration_since(since) >= self.stable_after
        {
            self.backoff.reset();
        }
        match self.backoff.next_delay() {
            Some(delay) => {
                self.status = ServerStatus::Reconnecting {
                    attempt: self.backoff.attempts(),
                    at: saturating_add(now, delay),
                };
            }
            None => {
                let attempts = self.backoff.attempts();
                // `max_attempts: Some(0)` (a one-shot host) never retries: the cause alone
                // is the reason.
                let reason = match attempts {
                    0 => reason,
                    n => format!("{reason} (gave up after {n} retries)"),
                };
                self.fail(reason, false);
            }
        }
        Ok(())
    }

    /// Time has passed; call when [`poll_timeout`](Self::poll_timeout) is reached (earlier calls
    /// do nothing).
    pub fn handle_timeout(&mut self, now: Instant) {
        if let ServerStatus::Reconnecting { at, .. } = self.status
            && now >= at
        {
            self.status = ServerStatus::Connecting;
            self.pending = Some(ReconnectAction::Connect);
        }
    }

    // ---- (C) commands ----

    /// Switches the server off: no further actions. The driver closes any connection itself.
    pub fn disable(&mut self) {
        self.status = ServerStatus::Disabled;
        self.connected_at = None;
        self.pending = None;
    }

    /// Starts over from any status (a user's "retry", or re-enabling): `Connecting` with a
    /// fresh backoff and `Connect` pending. The driver closes any connection first.
    pub fn restart(&mut self) {
        self.backoff.reset();
        self.status = ServerStatus::Connecting;
        self.connected_at = None;
        self.pending = Some(ReconnectAction::Connect);
    }

    // ---- (D) outputs ----

    /// The next thing to do, if any; each action is returned once.
    #[must_use]
    pub fn poll_action(&mut self) -> Option<ReconnectAction> {
        self.pending.take()
    }

    /// When to call [`handle_timeout`](Self::handle_timeout) next.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        match self.status {
            ServerStatus::Reconnecting { at, .. } => Some(at),
            _ => None,
        }
    }

    fn fail(&mut self, reason: String, permanent: bool) {
        self.status = ServerStatus::Failed {
            reason: reason.clone(),
            permanent,
        };
        self.connected_at = None;
        self.pending = Some(ReconnectAction::GiveUp(reason));
    }
}

#[cfg(test)]
mod tests;
