//! Host misuse, reported synchronously by server session commands.

use super::ClientRequestId;
use crate::rpc::RequestHandle;
use crate::session::ProtocolVersion;

/// A command the server session cannot carry out because of how the host called it.
///
/// These are the host's mistakes (or races it can ignore), never the client's: client input
/// only ever produces events.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum UsageError {
    /// The session is closed; nothing more can be sent.
    #[error("the session is closed")]
    Closed,
    /// The client has not sent `initialize` yet: there is no one to notify.
    #[error("the client has not initialized the session yet")]
    NotInitialized,
    /// The client has not sent `notifications/initialized` yet: only `ping` may be asked of it
    /// before that.
    #[error("{method} must wait until the client sent notifications/initialized")]
    NotReady {
        /// The method refused.
        method: String,
    },
    /// The client did not declare the capability this request needs (`sampling` for
    /// `sampling/createMessage`, `elicitation`, `roots`, `tasks`), or the server did not
    /// declare the one this notification needs (`logging`, `listChanged`, `subscribe`).
    #[error("{method} needs a capability that was not declared")]
    CapabilityNotDeclared {
        /// The method refused.
        method: String,
    },
    /// The session sends this method itself (`initialize` is the client's; the session
    /// sends `notifications/cancelled` and `notifications/progress` through
    /// [`cancel`](super::ServerSession::cancel) and
    /// [`notify_progress`](super::ServerSession::notify_progress), and
    /// `notifications/message` through [`log`](super::ServerSession::log)).
    #[error("{0} is sent through its own command")]
    ReservedMethod(String),
    /// The negotiated protocol version predates this method (`elicitation/create` needs
    /// 2025-06-18, the `tasks/*` requests and their notifications 2025-11-25): a client of
    /// that version would not understand it.
    #[error("{method} needs protocol version {needs} or later; the client speaks {negotiated}")]
    VersionTooOld {
        /// The method refused.
        method: String,
        /// The first version that has it.
        needs: ProtocolVersion,
        /// The version negotiated with this client.
        negotiated: ProtocolVersion,
    },
    /// The client speaks protocol version 2026-07-28, which has no server-to-client requests
    /// (answer the client's request with an `input_required` result to ask it for input).
    #[error(
        "{method} cannot be sent in protocol version 2026-07-28: the server sends no requests there"
    )]
    NotInEra {
        /// The method refused.
        method: String,
    },
    /// Too many server-to-client requests are pending.
    #[error("too many requests pending (limit {limit})")]
    TooManyInFlight {
        /// The configured limit.
        limit: usize,
    },
    /// The client is not reading: the outbound queue holds its limit.
    #[error("the outbound queue is full (limit {limit} bytes)")]
    QueueFull {
        /// The configured limit.
        limit: usize,
    },
    /// A timeout of zero: it would fail before the request could be answered.
    #[error("a request timeout of zero is not allowed (use no timeout, or a positive one)")]
    ZeroTimeout,
    /// The server-to-client request already completed (or never existed). Usually a race.
    #[error("request {0} is not pending")]
    UnknownRequest(RequestHandle),
    /// The client request was already answered, or the client cancelled it (its late
    /// answer is dropped, as the spec asks). Usually a race the host can ignore: nothing is
    /// sent.
    #[error("client request {0} is not open")]
    NotOpen(ClientRequestId),
    /// The client request carries no progress token: the client did not ask for progress.
    #[error("client request {0} did not ask for progress")]
    NoProgressToken(ClientRequestId),
    /// A progress value that does not increase (the spec requires it to) or is not finite.
    #[error("progress {progress} must be finite and above the last one sent")]
    ProgressNotIncreasing {
        /// The value refused.
        progress: f64,
    },
    /// The params are not usable: not a JSON object where one is required, or not
    /// serializable.
    #[error("invalid params: {0}")]
    InvalidParams(String),
    /// No deferred `initialize` waits for an answer: none came, or it was answered already.
    #[error("no initialize waits for an answer")]
    NoInitializePending,
    /// The version given for a deferred `initialize` is not one the session speaks, or is
    /// newer than the one the client asked for (it cannot take it).
    #[error("protocol version {answered} cannot answer a client that asked for {requested:?}")]
    VersionNotOffered {
        /// The version the host gave.
        answered: ProtocolVersion,
        /// The version the client asked for.
        requested: String,
    },
}
