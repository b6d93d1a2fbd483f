//! What a session reports: events, per-request failures, the fatal close reason, diagnostics.

use std::fmt;

use serde_json::value::RawValue;

use super::config::{Era, ProtocolVersion};
use super::{InboundRequestId, RawResult, RequestHandle};
use crate::jsonrpc::{ErrorObject, Id};
use crate::time::Duration;

/// Something the session reports; drained with [`Session::poll_event`](super::Session::poll_event).
#[derive(Debug)]
#[non_exhaustive]
pub enum Event {
    /// The handshake finished: requests flow. Server info and capabilities are available from
    /// the session's getters from now on.
    Ready {
        /// The handshake family in use.
        era: Era,
        /// The negotiated version.
        version: ProtocolVersion,
    },
    /// A request finished. Emitted exactly once for every [`RequestHandle`].
    Completed {
        /// The request.
        handle: RequestHandle,
        /// Its result's JSON text (checked when read: see [`RawResult`]), or why there is
        /// none.
        result: Result<RawResult, RequestError>,
    },
    /// `notifications/progress` for a request that asked for progress.
    Progress {
        /// The request.
        handle: RequestHandle,
        /// The progress so far (increases; may be a float).
        progress: f64,
        /// The total, when known.
        total: Option<f64>,
        /// A human-readable message (2025-03-26 on).
        message: Option<String>,
        /// The notification's params as the server wrote them (members in their order,
        /// numbers as spelled: `1` stays `1`), for a host that passes the progress on (a
        /// bridge: [`crate::server::ServerSession::notify_progress_as_written`]).
        params: Option<Box<RawValue>>,
    },
    /// The server asks something of the client, for a capability the host declared. Answer it
    /// with [`Session::respond`](super::Session::respond). A request the session accepted as
    /// a task (2025-11-25, `tasks` declared) looks the same: the server already has its
    /// `CreateTaskResult`, and the answer is kept for its `tasks/result`.
    ServerRequest {
        /// The token to answer with.
        id: InboundRequestId,
        /// The method (`roots/list`, `sampling/createMessage`, `elicitation/create`, ...).
        method: String,
        /// The raw params.
        params: Option<Box<RawValue>>,
    },
    /// The server cancelled one of its requests (`notifications/cancelled`, or `tasks/cancel`
    /// and ttl expiry of a request run as a task). The host should stop working on it; a later
    /// answer is dropped.
    ServerRequestCancelled {
        /// The cancelled request.
        id: InboundRequestId,
        /// The server's reason, if given.
        reason: Option<String>,
    },
    /// A server notification other than progress and cancellation.
    Notification(ServerNotification),
    /// A notification on a `subscriptions/listen` stream (2026-07-28), routed by its
    /// `_meta["io.modelcontextprotocol/subscriptionId"]`: `handle` is the listen request,
    /// which completes when the server ends the subscription.
    Subscription {
        /// The listen request.
        handle: RequestHandle,
        /// The notification (the acknowledgement comes as
        /// [`Event::SubscriptionAcknowledged`] instead).
        notification: ServerNotification,
    },
    /// The server acknowledged a `subscriptions/listen` (2026-07-28): from now on it has no
    /// deadline. `honoured` is the part of the request the server will deliver (it may be
    /// less than asked). Comes again after an HTTP re-issue of the listen.
    SubscriptionAcknowledged {
        /// The listen request.
        handle: RequestHandle,
        /// What the server honours (empty when the acknowledgement was unreadable).
        honoured: crate::types::v2026::ListenFilter,
    },
    /// Something odd from the peer that did not stop the session.
    Diagnostic(Diagnostic),
    /// The session is over. Emitted once, after every pending request has completed.
    Closed {
        /// Why.
        reason: CloseReason,
    },
}

/// A notification from the server, with its params kept raw.
#[derive(Clone, Debug)]
pub struct ServerNotification {
    /// The method, e.g. `notifications/message`.
    pub method: String,
    /// The raw params.
    pub params: Option<Box<RawValue>>,
}

impl ServerNotification {
    /// What the notification is, from its method.
    #[must_use]
    pub fn kind(&self) -> NotificationKind {
        NotificationKind::of(&self.method)
    }
}

/// The server notifications a client handles, by method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NotificationKind {
    /// `notifications/message`: a log message.
    LogMessage,
    /// `notifications/tools/list_changed`.
    ToolsListChanged,
    /// `notifications/resources/list_changed`.
    ResourcesListChanged,
    /// `notifications/prompts/list_changed`.
    PromptsListChanged,
    /// `notifications/resources/updated`.
    ResourceUpdated,
    /// `notifications/tasks/status` (2025-11-25).
    TaskStatus,
    /// `notifications/elicitation/complete` (2025-11-25).
    ElicitationComplete,
    /// Any other method.
    Other,
}

impl NotificationKind {
    /// Classifies a method name.
    #[must_use]
    pub fn of(method: &str) -> Self {
        match method {
            "notifications/message" => Self::LogMessage,
            "notifications/tools/list_changed" => Self::ToolsListChanged,
            "notifications/resources/list_changed" => Self::ResourcesListChanged,
            "notifications/prompts/list_changed" => Self::PromptsListChanged,
            "notifications/resources/updated" => Self::ResourceUpdated,
            "notifications/tasks/status" => Self::TaskStatus,
            "notifications/elicitation/complete" => Self::ElicitationComplete,
            _ => Self::Other,
        }
    }
}

impl RequestError {
    /// The failure of a request whose answer is not a valid JSON-RPC response (not JSON,
    /// say), the same however it was found: the frame did not decode and its id was salvaged,
    /// or the answer's result was located and its reader found it is not JSON
    /// ([`RawResult::is_json`]). A client reports this, not a decode error of the result.
    #[must_use]
    pub fn unreadable_answer() -> Self {
        RequestError::InvalidResponse(UNREADABLE_ANSWER.to_owned())
    }
}

/// The detail of [`RequestError::unreadable_answer`].
pub(super) const UNREADABLE_ANSWER: &str = "the answer is not a valid JSON-RPC response";

/// Why a request finished without a result.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RequestError {
    /// The server answered with a JSON-RPC error.
    #[error("{0}")]
    Remote(ErrorObject),
    /// No answer in time. The server was sent `notifications/cancelled`.
    #[error("request timed out after {}ms{}", after.as_millis(), if *total { " (maximum total time)" } else { "" })]
    Timeout {
        /// The timeout that expired.
        after: Duration,
        /// Whether it was the maximum total time of a deadline reset by progress.
        total: bool,
    },
    /// The caller cancelled it. The server was sent `notifications/cancelled` if it had
    /// seen the request.
    #[error("request cancelled{}", reason.as_deref().map(|r| format!(": {r}")).unwrap_or_default())]
    Cancelled {
        /// The reason given by the caller.
        reason: Option<String>,
    },
    /// The session closed before an answer came.
    #[error("connection closed: {0}")]
    Closed(CloseReason),
    /// The HTTP exchange carrying the request failed with this status (the body excerpt and
    /// any authentication challenge are in the error).
    #[error("{0}")]
    Http(crate::transport_error::HttpStatusError),
    /// The reply could not be used: not JSON, too large, an unexpected content type.
    #[error("invalid response: {0}")]
    InvalidResponse(String),
    /// The result is not valid for the 2026-07-28 rules: an unknown `resultType`, `task`
    /// without the tasks extension, a malformed `input_required`.
    #[error("invalid result: {0}")]
    InvalidResult(String),
    /// The server asked for input more times than
    /// [`SessionConfig::max_input_rounds`](super::SessionConfig::max_input_rounds) allows.
    #[error("the server asked for input more than {rounds} times")]
    TooManyInputRounds {
        /// The cap.
        rounds: u32,
    },
    /// The host answered one of the server's input requests with an error, so the request
    /// cannot go on.
    #[error("input {key:?} failed: {error}")]
    InputFailed {
        /// The server's key of the input request.
        key: String,
        /// The host's error.
        error: ErrorObject,
    },
    /// The request waited for the handshake, and the era chosen has no such method
    /// (`ping`, `logging/setLevel`, `resources/subscribe`, `resources/unsubscribe` in the
    /// discover era).
    #[error("{method} does not exist in the protocol era in use")]
    NotInEra {
        /// The method.
        method: String,
    },
    /// The reply ended (its stream closed and could not be resumed) without the answer.
    #[error("no response received")]
    NoResponse,
    /// The exchange failed below HTTP (connection refused or reset, TLS, a refused redirect).
    #[error("transport error: {0}")]
    Transport(String),
}

/// Why a session closed. Cloned into every request that was pending at the time.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CloseReason {
    /// The host called [`Session::close`](super::Session::close).
    #[error("closed by the client")]
    Local,
    /// The transport ended: stdout reached end of file, the process exited, the HTTP session
    /// was lost. The adapter describes it (exit status, last stderr lines).
    #[error("transport closed{}", detail.as_deref().map(|d| format!(": {d}")).unwrap_or_default())]
    TransportClosed {
        /// What the adapter knows about it.
        detail: Option<String>,
    },
    /// The server did not answer `initialize` in time.
    #[error("no answer to initialize within {}ms", after.as_millis())]
    HandshakeTimeout {
        /// The handshake timeout.
        after: Duration,
    },
    /// The server answered the handshake request (`initialize`, or `server/discover` when
    /// only the 2026-07-28 era is allowed) with an error.
    #[error("the server rejected the handshake: {0}")]
    HandshakeRejected(ErrorObject),
    /// The server chose a protocol version this client does not accept.
    #[error("server chose protocol version {offered:?}; this client supports {}", supported.join(", "))]
    UnsupportedVersion {
        /// The version the server answered with.
        offered: String,
        /// The versions the client accepts.
        supported: Vec<&'static str>,
    },
    /// The initialize result could not be understood.
    #[error("invalid initialize result: {0}")]
    InvalidHandshake(String),
    /// The peer stopped reading: messages were queued for it beyond
    /// [`SessionConfig::max_outbound_bytes`](super::SessionConfig::max_outbound_bytes) and none
    /// was taken for [`SessionConfig::stall_timeout`](super::SessionConfig::stall_timeout).
    #[error("the server stopped reading its input: {queued} bytes of messages unsent for {}ms ({dropped} of its requests dropped unanswered)", after.as_millis())]
    Stalled {
        /// The stall timeout.
        after: Duration,
        /// The bytes queued (estimated).
        queued: usize,
        /// The server requests dropped unanswered.
        dropped: u64,
    },
    /// A server session's client did not send `initialize` within
    /// [`ServerConfig::handshake_timeout`](crate::server::ServerConfig::handshake_timeout).
    #[error("the client sent no initialize within {}ms", after.as_millis())]
    InitializeNotReceived {
        /// The handshake timeout.
        after: Duration,
    },
    /// A server session's host held a deferred `initialize`
    /// ([`ServerConfig::defer_initialize`](crate::server::ServerConfig::defer_initialize))
    /// past [`ServerConfig::handshake_timeout`](crate::server::ServerConfig::handshake_timeout):
    /// the client was answered with an error.
    #[error("the server did not answer initialize within {}ms", after.as_millis())]
    InitializeNotAnswered {
        /// The handshake timeout.
        after: Duration,
    },
    /// A server session's client stopped reading: messages were queued for it beyond
    /// [`ServerConfig::max_outbound_bytes`](crate::server::ServerConfig::max_outbound_bytes)
    /// and none was taken for [`ServerConfig::stall_timeout`](crate::server::ServerConfig::stall_timeout).
    #[error("the client stopped reading: {queued} bytes of messages unsent for {}ms", after.as_millis())]
    ClientStalled {
        /// The stall timeout.
        after: Duration,
        /// The bytes queued (estimated).
        queued: usize,
    },
    /// The HTTP transport failed for good with this response (the initialize POST was refused,
    /// the session expired twice in a row).
    #[error("{0}")]
    Http(crate::transport_error::HttpStatusError),
    /// The URL answers HTTP, but as no MCP server: the Streamable HTTP `initialize` POST was
    /// refused with 400, 404 or 405, and the legacy HTTP+SSE GET tried after it (the
    /// fallback of [`TransportMode::Auto`](crate::http::TransportMode::Auto)) failed too.
    #[error(
        "no MCP endpoint there: the initialize POST got {post}, and the legacy HTTP+SSE GET tried next failed: {legacy}"
    )]
    NotMcp {
        /// The answer to the POST (its status; the body is not read before falling back).
        post: Box<crate::transport_error::HttpStatusError>,
        /// How the legacy GET failed (an HTTP status with its body's start, a body that is
        /// not `text/event-stream`, no `endpoint` event in time, a network failure).
        legacy: String,
    },
}

/// Odd input from the peer that the session survived. Reported, never fatal.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Diagnostic {
    /// A line or body that is not JSON (a banner on stdout, for instance). Skipped.
    NotJson {
        /// The start of the input.
        excerpt: String,
    },
    /// JSON that is not a JSON-RPC message. Skipped.
    InvalidMessage {
        /// What is wrong.
        detail: String,
        /// The start of the input.
        excerpt: String,
    },
    /// A line longer than the framing limit was discarded.
    LineTooLong {
        /// Bytes discarded.
        discarded: usize,
        /// The limit.
        limit: usize,
    },
    /// A line that is not UTF-8 was discarded.
    InvalidUtf8 {
        /// Its length in bytes.
        len: usize,
    },
    /// A response to a request that already finished (timed out, cancelled, answered twice).
    StaleResponse {
        /// Its id.
        id: Id,
    },
    /// A response with an id this client never sent.
    UnknownResponse {
        /// Its id.
        id: Id,
    },
    /// An error that names no request (`"id": null` or no id).
    UncorrelatedError(ErrorObject),
    /// A progress notification for no active request.
    UnknownProgress,
    /// A server request the host did not declare a capability for; answered -32601.
    RefusedServerRequest {
        /// Its method.
        method: String,
    },
    /// A server request beyond the open limit (or reusing an open id); answered with an error.
    ServerRequestLimit {
        /// Its method.
        method: String,
    },
    /// The Auto era policy left `server/discover` for `initialize` (or, with a remembered
    /// era, the other way round): why.
    EraFallback {
        /// The signal that decided it.
        reason: String,
    },
    /// The peer does not read what is queued for it: more than
    /// [`SessionConfig::max_outbound_bytes`](super::SessionConfig::max_outbound_bytes) are
    /// queued, so its requests (this one first) are dropped unanswered until it reads; if it
    /// reads nothing for [`SessionConfig::stall_timeout`](super::SessionConfig::stall_timeout),
    /// the session closes with [`CloseReason::Stalled`].
    OutboundQueueFull {
        /// The method of the first request dropped.
        method: String,
        /// The bytes queued (estimated).
        queued: usize,
        /// The limit.
        limit: usize,
    },
    /// The peer read its input again, after this many of its requests were dropped
    /// unanswered ([`Diagnostic::OutboundQueueFull`]).
    ServerRequestsDropped {
        /// How many.
        count: u64,
    },
    /// The server's `Mcp-Session-Id` was refused (empty, too long, or with bytes outside
    /// visible ASCII: see [`InvalidSessionId`](crate::transport_error::InvalidSessionId)): the
    /// connection goes on without a session id.
    InvalidSessionId(crate::transport_error::InvalidSessionId),
    /// A notification whose params could not be read (progress, cancelled). Skipped.
    InvalidNotification {
        /// Its method.
        method: String,
        /// What is wrong.
        detail: String,
    },
}

impl Diagnostic {
    /// Whether this happens in a healthy session and needs no one's attention: the era
    /// negotiation falling back ([`EraFallback`](Self::EraFallback)) and a late answer to a
    /// request that was cancelled or timed out ([`StaleResponse`](Self::StaleResponse)). A host
    /// logs these at a debug level and the others as warnings.
    #[must_use]
    pub fn is_routine(&self) -> bool {
        matches!(
            self,
            Diagnostic::EraFallback { .. } | Diagnostic::StaleResponse { .. }
        )
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Diagnostic::NotJson { excerpt } => write!(f, "skipped a non-JSON message: {excerpt}"),
            Diagnostic::InvalidMessage { detail, excerpt } => {
                write!(
                    f,
                    "skipped an invalid JSON-RPC message ({detail}): {excerpt}"
                )
            }
            Diagnostic::LineTooLong { discarded, limit } => {
                write!(f, "discarded a {discarded}-byte line (limit {limit})")
            }
            Diagnostic::InvalidUtf8 { len } => write!(f, "discarded a {len}-byte non-UTF-8 line"),
            Diagnostic::StaleResponse { id } => {
                write!(f, "ignored a response to finished request {id}")
            }
            Diagnostic::UnknownResponse { id } => {
                write!(f, "ignored a response with unknown id {id}")
            }
            Diagnostic::UncorrelatedError(e) => write!(f, "server reported an error: {e}"),
            Diagnostic::UnknownProgress => write!(f, "ignored progress for no active request"),
            Diagnostic::RefusedServerRequest { method } => {
                write!(
                    f,
                    "refused server request {method}: capability not declared"
                )
            }
            Diagnostic::ServerRequestLimit { method } => {
                write!(f, "refused server request {method}: too many open")
            }
            Diagnostic::EraFallback { reason } => write!(f, "changed protocol era: {reason}"),
            Diagnostic::OutboundQueueFull {
                method,
                queued,
                limit,
            } => write!(
                f,
                "the server is not reading its input ({queued} bytes queued, limit {limit}): dropping its requests unanswered, starting with {method}"
            ),
            Diagnostic::ServerRequestsDropped { count } => {
                write!(
                    f,
                    "the server reads again; {count} of its requests were dropped unanswered"
                )
            }
            Diagnostic::InvalidSessionId(e) => write!(f, "refused the server's session id: {e}"),
            Diagnostic::InvalidNotification { method, detail } => {
                write!(f, "skipped {method}: {detail}")
            }
        }
    }
}
