//! Caller misuse, reported synchronously by session commands.

use super::{InboundRequestId, RequestHandle};

/// A command the session cannot carry out because of how it was called.
///
/// These are the host's mistakes (or races it can ignore), never the peer's: peer input only
/// ever produces events.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UsageError {
    /// The session is closed; nothing more can be sent.
    #[error("the session is closed")]
    Closed,
    /// Too many requests are waiting for the handshake to finish.
    #[error("too many requests queued before the handshake finished (limit {limit})")]
    QueueFull {
        /// The configured limit.
        limit: usize,
    },
    /// The peer is not reading fast enough: the outbound queue holds
    /// [`SessionConfig::max_outbound_bytes`](super::SessionConfig::max_outbound_bytes) or
    /// more, and a notification is refused rather than queued without end.
    #[error("the server is not reading fast enough: {limit} bytes wait for it already")]
    OutboundFull {
        /// The configured limit, in bytes.
        limit: usize,
    },
    /// Too many requests are pending: `max_in_flight` in flight and `max_held` more held
    /// past it (see [`SessionConfig::max_held`](super::SessionConfig::max_held)).
    #[error("too many requests pending (limit {limit})")]
    TooManyInFlight {
        /// The limit: in flight and held together.
        limit: usize,
    },
    /// A timeout of zero: it would fail before the request could be answered.
    #[error("a request timeout of zero is not allowed (use no timeout, or a positive one)")]
    ZeroTimeout,
    /// The request already finished (or never existed). Usually a harmless race.
    #[error("request {0} is not pending")]
    UnknownRequest(RequestHandle),
    /// The server request was already answered or cancelled. Usually a harmless race.
    #[error("server request {0} is not open")]
    UnknownServerRequest(InboundRequestId),
    /// The session owns this method (`initialize`, `notifications/initialized`,
    /// `notifications/cancelled`, `notifications/progress` are sent by the session itself).
    #[error("{0} is sent by the session itself")]
    ReservedMethod(String),
    /// The method does not exist in the era the session speaks (the discover era has no
    /// `ping`, `logging/setLevel`, `resources/subscribe`, `resources/unsubscribe`,
    /// `notifications/roots/list_changed`).
    #[error("{method} does not exist in the {era:?} era")]
    NotInEra {
        /// The method.
        method: String,
        /// The era in use.
        era: super::Era,
    },
    /// The params are not usable: not a JSON object where one is required, or not
    /// serializable.
    #[error("invalid params: {0}")]
    InvalidParams(String),
}
