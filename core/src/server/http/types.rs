//! The values an [`HttpServer`](super::HttpServer) exchanges with its host: the tokens of
//! responses and sessions, a request's head, what to write, why a request was refused, and
//! the events.

use std::fmt;

use crate::http::headers::HeaderList;
use crate::server::Event;
use crate::session::{CloseReason, ProtocolVersion};

/// The host's token for one HTTP request and its response.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ResponseId(pub(super) u64);

impl ResponseId {
    /// The token as a number (unique within the server), for logs and maps.
    #[must_use]
    pub fn get(self) -> u64 {
        self.0
    }
}

/// The host's token for one session (not its `Mcp-Session-Id`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionKey(pub(super) u64);

impl SessionKey {
    /// The token as a number (unique within the server).
    #[must_use]
    pub fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Display for SessionKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "session#{}", self.0)
    }
}

/// The head of an incoming HTTP request: its method and header fields. The host routes the
/// path (one MCP endpoint) itself.
#[derive(Clone, Debug)]
pub struct RequestHead {
    /// `GET`, `POST`, `DELETE` (others get 405).
    pub method: String,
    /// The header fields.
    pub headers: HeaderList,
}

impl RequestHead {
    /// A head of `method` with `headers`.
    #[must_use]
    pub fn new(method: impl Into<String>, headers: HeaderList) -> Self {
        RequestHead {
            method: method.into(),
            headers,
        }
    }
}

/// What to write for a response.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Output {
    /// The status and headers; comes first, once.
    Head {
        /// The response.
        response: ResponseId,
        /// The status code.
        status: u16,
        /// The header fields.
        headers: HeaderList,
    },
    /// A body chunk (a JSON body, or SSE events).
    Body {
        /// The response.
        response: ResponseId,
        /// The bytes.
        bytes: Vec<u8>,
    },
    /// The response is complete: finish it and close its stream.
    End {
        /// The response.
        response: ResponseId,
    },
}

/// Why a request was refused before it reached a session (the status it got).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// 403: an `Origin` that is neither loopback nor allowed (DNS rebinding protection).
    Origin(String),
    /// 401: the request has no bearer token (no `Authorization: Bearer …`), and the server
    /// requires one. `WWW-Authenticate: Bearer`.
    Unauthorized,
    /// 401: the request's bearer token is not the one the server requires.
    /// `WWW-Authenticate: Bearer error="invalid_token"`. The token is never echoed.
    InvalidToken,
    /// 405: a method other than GET, POST and DELETE, or GET/DELETE where they are disabled.
    MethodNotAllowed(String),
    /// 406: the client accepts neither JSON nor SSE (or not SSE for GET).
    NotAcceptable,
    /// 415: a POST body that is not declared JSON.
    UnsupportedMediaType,
    /// 413: a POST body over [`HttpServerConfig::max_body_bytes`](super::HttpServerConfig::max_body_bytes).
    BodyTooLarge {
        /// Its size.
        len: usize,
    },
    /// 400: an `MCP-Protocol-Version` this server does not speak.
    UnsupportedVersion(String),
    /// 400: no `Mcp-Session-Id` on a request other than `initialize`.
    MissingSessionId,
    /// 404: an `Mcp-Session-Id` of no live session (unknown, deleted, ended).
    UnknownSession,
    /// 400 with JSON-RPC -32600: a POST body that is JSON but not a JSON-RPC message (nor a
    /// batch of them).
    InvalidBody,
    /// 400 with JSON-RPC -32700: a POST body that is not JSON at all.
    NotJson,
    /// 503: [`HttpServerConfig::max_sessions`](super::HttpServerConfig::max_sessions) sessions are open.
    TooManySessions {
        /// The bound.
        limit: usize,
    },
    /// 503, and the connection closed unread: [`HttpServerConfig::max_connections`](super::HttpServerConfig::max_connections)
    /// connections are open. Made by the host's HTTP library, which counts connections.
    TooManyConnections {
        /// The bound.
        limit: usize,
    },
    /// 503, and the connection closed with the rest of the body unread: the request bodies
    /// being received, on every connection, would hold more than
    /// [`HttpServerConfig::max_body_bytes_in_flight`](super::HttpServerConfig::max_body_bytes_in_flight)
    /// with this one's next bytes ([`BodyBudget`](super::BodyBudget)). Made by the host's HTTP
    /// library, which reads bodies.
    TooManyBodyBytesInFlight {
        /// The bound.
        limit: usize,
    },
    /// 408, and the connection closed: the request's body did not arrive within
    /// [`HttpServerConfig::body_timeout`](super::HttpServerConfig::body_timeout) of its head.
    /// Made by the host's HTTP library, which reads bodies.
    BodyTimeout {
        /// The bound.
        after: crate::time::Duration,
    },
    /// 500: the id for a new session could not be used: the host's entropy repeated a live
    /// session's id, or the id it minted
    /// ([`handle_request_with_session_id`](super::HttpServer::handle_request_with_session_id))
    /// is one a client refuses or is in use.
    UnusableSessionId,
    /// 429: [`HttpServerConfig::max_streams_per_session`](super::HttpServerConfig::max_streams_per_session) streams are open.
    TooManyStreams,
    /// 409: the session's GET stream is already open.
    GetStreamTaken,
    /// 400: a `Last-Event-ID` of no stream kept.
    UnknownLastEventId(String),
    /// 400 or 404: a 2026-07-28 POST the spec refuses with a JSON-RPC error (a header that
    /// does not match the body, no envelope, an unsupported version, a removed method).
    Rejected(super::modern::ModernRejection),
}

impl std::fmt::Display for Refusal {
    /// The message the client gets, and the HTTP status: `Session not found (404)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message(), self.status())
    }
}

impl Refusal {
    /// The status code it gets.
    #[must_use]
    pub fn status(&self) -> u16 {
        match self {
            Refusal::Rejected(r) => r.status,
            Refusal::Origin(_) => 403,
            Refusal::Unauthorized | Refusal::InvalidToken => 401,
            Refusal::MethodNotAllowed(_) => 405,
            Refusal::NotAcceptable => 406,
            Refusal::UnsupportedMediaType => 415,
            Refusal::BodyTooLarge { .. } => 413,
            Refusal::UnknownSession => 404,
            Refusal::TooManySessions { .. }
            | Refusal::TooManyConnections { .. }
            | Refusal::TooManyBodyBytesInFlight { .. } => 503,
            Refusal::BodyTimeout { .. } => 408,
            Refusal::UnusableSessionId => 500,
            Refusal::TooManyStreams => 429,
            Refusal::GetStreamTaken => 409,
            Refusal::UnsupportedVersion(_)
            | Refusal::MissingSessionId
            | Refusal::InvalidBody
            | Refusal::NotJson
            | Refusal::UnknownLastEventId(_) => 400,
        }
    }

    /// The JSON-RPC error code of its body: -32700 for a body that is not JSON, -32600 for
    /// JSON that is not JSON-RPC (as JSON-RPC 2.0 says), the error's own code for a
    /// 2026-07-28 rejection, and -32000 (a server error, as the TypeScript SDK answers) for
    /// the refusals of the HTTP layer.
    #[must_use]
    pub fn rpc_code(&self) -> i64 {
        match self {
            Refusal::Rejected(r) => r.error.code,
            Refusal::NotJson => crate::jsonrpc::ErrorObject::PARSE_ERROR,
            Refusal::InvalidBody => crate::jsonrpc::ErrorObject::INVALID_REQUEST,
            _ => -32000,
        }
    }

    /// The body of its answer: a JSON-RPC error with a null id, [`rpc_code`](Self::rpc_code)
    /// and the refusal's message (for a host's HTTP library that answers a refusal itself:
    /// [`TooManyConnections`](Self::TooManyConnections),
    /// [`TooManyBodyBytesInFlight`](Self::TooManyBodyBytesInFlight),
    /// [`BodyTimeout`](Self::BodyTimeout)).
    #[must_use]
    pub fn body(&self) -> Vec<u8> {
        match self {
            Refusal::Rejected(r) => {
                let mut out = Vec::new();
                crate::jsonrpc::encode_error(&mut out, r.id.as_ref(), &r.error);
                out
            }
            _ => super::error_body(self.rpc_code(), &self.message()),
        }
    }

    pub(super) fn message(&self) -> String {
        match self {
            Refusal::Rejected(r) => r.error.message.clone(),
            Refusal::Origin(o) => format!("Forbidden: origin {o} is not allowed"),
            Refusal::Unauthorized => {
                "Unauthorized: this server requires an access token (Authorization: Bearer <token>) and the request has none".into()
            }
            Refusal::InvalidToken => {
                "Unauthorized: the access token sent is not the one this server requires".into()
            }
            Refusal::MethodNotAllowed(m) => format!("Method not allowed: {m}"),
            Refusal::NotAcceptable => {
                "Not Acceptable: the client must accept application/json and text/event-stream"
                    .into()
            }
            Refusal::UnsupportedMediaType => {
                "Unsupported Media Type: the body must be application/json".into()
            }
            Refusal::BodyTooLarge { len } => format!("Payload too large: {len} bytes"),
            Refusal::UnsupportedVersion(v) => {
                let supported: Vec<&str> = ProtocolVersion::INITIALIZE_ERA
                    .iter()
                    .map(|v| v.as_str())
                    .collect();
                format!(
                    "Bad Request: unsupported protocol version {v:?} (supported: {})",
                    supported.join(", ")
                )
            }
            Refusal::MissingSessionId => "Bad Request: Mcp-Session-Id header is required".into(),
            Refusal::UnknownSession => "Session not found".into(),
            Refusal::InvalidBody => {
                "Invalid Request: the body is JSON but not a JSON-RPC message".into()
            }
            Refusal::NotJson => "Parse error: the body is not JSON".into(),
            Refusal::TooManySessions { limit } => format!(
                "Service unavailable: too many sessions (open: {limit}, the most this server \
                 keeps); a session ends with DELETE or when idle: try again later"
            ),
            Refusal::TooManyConnections { limit } => format!(
                "Service unavailable: too many connections (open: {limit}, the most this \
                 server takes): try again later"
            ),
            Refusal::TooManyBodyBytesInFlight { limit } => format!(
                "Service unavailable: too many request body bytes being received (the most \
                 this server holds at once: {limit}): try again later"
            ),
            Refusal::BodyTimeout { after } => format!(
                "Request Timeout: the request body did not arrive within {} s of its head",
                after.as_secs_f64()
            ),
            Refusal::UnusableSessionId => {
                "Internal error: the server could not name a new session".into()
            }
            Refusal::TooManyStreams => "Too many open streams in this session".into(),
            Refusal::GetStreamTaken => "Conflict: the session's GET stream is already open".into(),
            Refusal::UnknownLastEventId(id) => format!("Bad Request: unknown Last-Event-ID {id:?}"),
        }
    }
}

/// What the host must know.
#[derive(Debug)]
#[non_exhaustive]
pub enum HttpEvent {
    /// A client initialized a new session.
    SessionOpened {
        /// The session.
        session: SessionKey,
    },
    /// An event of a session, for the host to act on as with a lone [`ServerSession`](crate::server::ServerSession)
    /// (answer requests through [`HttpServer::session_mut`](super::HttpServer::session_mut)).
    Session {
        /// The session.
        session: SessionKey,
        /// Its event.
        event: Event,
    },
    /// A session is over (DELETE, its close, a limit): its key is no longer valid, its id
    /// gets 404 from now on. Comes after its [`Event::Closed`].
    SessionEnded {
        /// The session.
        session: SessionKey,
        /// Why.
        reason: CloseReason,
    },
    /// A request was refused before reaching a session (for the host's logs).
    Refused {
        /// Its response.
        response: ResponseId,
        /// Why, and with which status.
        refusal: Refusal,
    },
}
