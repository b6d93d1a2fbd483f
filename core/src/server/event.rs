//! What the server session tells its host: client requests and notifications to handle, the
//! completions of its own requests, the handshake's progress, odd input, and the close.

use serde_json::value::RawValue;

use super::ClientRequestId;
use crate::jsonrpc::{DecodeError, ErrorObject, Id};
use crate::rpc::RequestHandle;
use crate::session::{CloseReason, ProtocolVersion, RawResult, RequestError};
use crate::types::v2026::ListenFilter;
use crate::types::{InitializeParams, LoggingLevel};

/// Something the host must know or do, from [`ServerSession::poll_event`](super::ServerSession::poll_event).
#[derive(Debug)]
#[non_exhaustive]
pub enum Event {
    /// `initialize` was answered with `version`; the client's info and capabilities are in
    /// the getters. Requests may flow; the server's own requests wait for [`Event::Ready`].
    InitializeAnswered {
        /// The negotiated protocol version.
        version: ProtocolVersion,
    },
    /// The client's `initialize`, held for the host (only with
    /// [`ServerConfig::defer_initialize`](super::ServerConfig::defer_initialize)): answer it
    /// exactly once with [`accept_initialize`](super::ServerSession::accept_initialize) or
    /// [`refuse_initialize`](super::ServerSession::refuse_initialize) before the handshake
    /// deadline. Until then the client's other requests are refused (`-32600`), as before
    /// `initialize`.
    InitializeRequested {
        /// The client's params: the version it asked for, its info and capabilities.
        params: Box<InitializeParams>,
    },
    /// The client sent `notifications/initialized`: the session is fully ready, and the
    /// server may send requests.
    Ready,
    /// A client request for the host to answer, exactly once, with
    /// [`respond`](super::ServerSession::respond) or
    /// [`respond_error`](super::ServerSession::respond_error).
    Request {
        /// The host's token for it (not the JSON-RPC id).
        id: ClientRequestId,
        /// The method.
        method: String,
        /// The raw params.
        params: Option<Box<RawValue>>,
        /// The client's `_meta.progressToken`: progress may be reported with
        /// [`notify_progress`](super::ServerSession::notify_progress).
        progress_token: Option<Id>,
        /// A 2026-07-28 request's own protocol version, client capabilities, client info
        /// and log level; `None` in the initialize era (see the session's getters).
        envelope: Option<Box<super::RequestEnvelope>>,
    },
    /// The client cancelled a request it sent: stop working on it. An answer given later is
    /// dropped (the command returns [`UsageError::NotOpen`](super::UsageError::NotOpen)).
    RequestCancelled {
        /// The request.
        id: ClientRequestId,
        /// The client's reason.
        reason: Option<String>,
    },
    /// A client opened a `subscriptions/listen` (2026-07-28), answered by the session: it
    /// was acknowledged with `honoured`, and the host's notifications of that kind now reach
    /// it ([`notify_list_changed`](super::ServerSession::notify_list_changed),
    /// [`notify_resource_updated`](super::ServerSession::notify_resource_updated)). A host
    /// that produces updates only while someone watches (a resource it polls) starts here.
    /// [`Event::ListenClosed`] comes once for it.
    ListenOpened {
        /// The host's token for it ([`close_listen`](super::ServerSession::close_listen)).
        id: ClientRequestId,
        /// What the client asked for.
        requested: ListenFilter,
        /// What the server's capabilities let it have: what is delivered.
        honoured: ListenFilter,
    },
    /// A listen ended: nothing more is delivered on it.
    ListenClosed {
        /// Its token.
        id: ClientRequestId,
        /// Who ended it.
        end: super::ListenEnd,
    },
    /// A client notification the session does not handle itself
    /// (`notifications/roots/list_changed`, an unknown one).
    Notification {
        /// The method.
        method: String,
        /// The raw params.
        params: Option<Box<RawValue>>,
    },
    /// The client set the log level (`logging/setLevel`, answered by the session):
    /// [`log`](super::ServerSession::log) drops entries below it from now on.
    LogLevel {
        /// The lowest level the client wants.
        level: LoggingLevel,
    },
    /// A server-to-client request finished: exactly once per [`RequestHandle`].
    Completed {
        /// The request.
        handle: RequestHandle,
        /// The client's result, or why there is none.
        result: Result<RawResult, RequestError>,
    },
    /// The client reported progress on a server-to-client request sent with
    /// [`RequestOptions::progress`](crate::session::RequestOptions::progress).
    Progress {
        /// The request.
        handle: RequestHandle,
        /// The progress so far.
        progress: f64,
        /// The total, if known.
        total: Option<f64>,
        /// A human-readable message.
        message: Option<String>,
    },
    /// Odd client input the session survived.
    Diagnostic(Diagnostic),
    /// The session is over: every server-to-client request has completed before it. Comes
    /// once.
    Closed {
        /// Why.
        reason: CloseReason,
    },
}

/// Odd client input that the session survived. Reported, never fatal.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Diagnostic {
    /// Input that is not a JSON-RPC message; answered with `-32700` (not JSON) or `-32600`
    /// (JSON of the wrong shape) and `"id": null`.
    Undecodable(DecodeError),
    /// A line over the length limit was dropped.
    LineTooLong {
        /// Bytes dropped.
        discarded: usize,
        /// The limit.
        limit: usize,
    },
    /// A request or notification before `initialize` (and without a 2026 envelope): the
    /// request is answered with an error, the notification dropped.
    BeforeInitialize {
        /// Its method.
        method: String,
    },
    /// A second `initialize`, answered with an error.
    RepeatedInitialize,
    /// A request while [`ServerConfig::max_open_client_requests`](super::ServerConfig::max_open_client_requests)
    /// are open, or with the id of one still open: answered with an error.
    RequestRefused {
        /// Its method.
        method: String,
        /// Why.
        reason: &'static str,
    },
    /// A response with an id no pending request has (late, after a timeout or a cancel,
    /// or never ours).
    UnknownResponse {
        /// Its id.
        id: Id,
    },
    /// An error response without an id.
    UncorrelatedError(ErrorObject),
    /// Progress for no pending request that asked for it.
    UnknownProgress,
    /// A notification the session reads (`cancelled`, `progress`) with unreadable params.
    InvalidNotification {
        /// Its method.
        method: String,
        /// What was wrong.
        detail: String,
    },
    /// The client is not reading: a message the session would have sent on its own (an
    /// error answer, a pong) was dropped, and so was a new client request.
    OutboundQueueFull {
        /// The method of the request dropped, when it was one.
        method: Option<String>,
    },
}
