//! The vocabulary between [`Connection`](super::Connection) and the adapter that runs its HTTP
//! exchanges: request descriptions, failures, configuration and events.

use std::fmt;

use url::Url;

use super::error::HttpStatusError;
use super::headers::{HeaderList, InvalidSessionId};
use crate::session::{self, MessageKind, RequestHandle};
use crate::time::{Duration, Instant};

/// One HTTP exchange the connection asked for. Unique within a connection; the adapter quotes
/// it back on every input about that exchange.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ExchangeId(pub(crate) u64);

impl ExchangeId {
    /// The id as a number, for logs.
    #[must_use]
    pub fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Display for ExchangeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "x{}", self.0)
    }
}

/// A logical SSE stream: the reply stream of one POST, or the GET listener. A stream outlives
/// its exchanges: a resumption (GET with `Last-Event-ID`) is a new exchange of the same stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StreamId(pub(crate) u64);

impl fmt::Display for StreamId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "s{}", self.0)
    }
}

/// The HTTP method of an exchange.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Method {
    /// `GET`: the listener, a resumption, the legacy SSE stream.
    Get,
    /// `POST`: one JSON-RPC message.
    Post,
    /// `DELETE`: ending the session.
    Delete,
}

impl Method {
    /// The method as it goes on the wire.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Delete => "DELETE",
        }
    }
}

/// Why an exchange exists: what its response means to the connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Purpose {
    /// POST of the session's `initialize`.
    Initialize,
    /// POST of a request; its answer completes `handle`.
    Request(RequestHandle),
    /// POST of a notification or of a response to a server request (202 expected).
    Message(MessageKind),
    /// GET listener for server-initiated messages (also its reconnections).
    Listen,
    /// GET with `Last-Event-ID` resuming the reply stream of a POST.
    Resume(StreamId),
    /// DELETE of the session on close.
    Delete,
    /// GET of the legacy HTTP+SSE stream, which first names the POST endpoint.
    LegacyConnect,
}

/// An HTTP request to perform, from [`Connection::poll_exchange`](super::Connection::poll_exchange).
///
/// The adapter sends exactly this (method, URL, headers, body), follows no redirect itself, and
/// reports the response with the `handle_*` inputs quoting `id`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpRequest {
    /// The exchange this is.
    pub id: ExchangeId,
    /// The method.
    pub method: Method,
    /// The target.
    pub url: Url,
    /// Every header to send (custom headers included when the URL is on the configured origin).
    pub headers: HeaderList,
    /// The body (empty for GET and DELETE).
    pub body: Vec<u8>,
    /// What it is for.
    pub purpose: Purpose,
}

/// What kind of failure below HTTP ended an exchange.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FailureKind {
    /// The connection could not be made (refused, DNS, unreachable).
    Connect,
    /// TLS failed.
    Tls,
    /// The connection was reset or closed mid-response.
    Reset,
    /// The adapter's own I/O timeout fired.
    Timeout,
    /// Anything else.
    Other,
}

/// An exchange that failed without (the rest of) a response, as the adapter reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExchangeFailure {
    /// What failed.
    pub kind: FailureKind,
    /// The HTTP library's description.
    pub message: String,
}

impl ExchangeFailure {
    /// A failure of `kind` described by `message`.
    pub fn new(kind: FailureKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }
}

impl ExchangeFailure {
    /// This failure of an exchange with `url`, classified from what the adapter saw: a
    /// connection failure in a TLS library's words (a handshake answered with something that
    /// is not TLS, a refused certificate, an alert) is [`FailureKind::Tls`]. When an
    /// `https://` URL reached a server that answered the handshake in plain text (rustls:
    /// "received corrupt message of type InvalidContentType"), the message says so and names
    /// the `http://` URL to try instead. Any other failure is returned as it is.
    #[must_use]
    pub fn classified(self, url: &Url) -> Self {
        if self.kind != FailureKind::Connect {
            return self;
        }
        let words = self.message.to_ascii_lowercase();
        let not_tls = words.contains("invalidcontenttype") || words.contains("corrupt message");
        // A server that closed the connection on the TLS ClientHello: many plain-HTTP
        // servers do so with bytes they cannot parse.
        let closed = words.contains("handshake eof");
        let tls = not_tls
            || ["tls", "certificate", "handshake", "alert"]
                .iter()
                .any(|w| words.contains(w));
        if !tls {
            return self;
        }
        if (not_tls || closed) && url.scheme() == "https" {
            let host = url.host_str().unwrap_or_default();
            let port = url.port_or_known_default().unwrap_or(443);
            let mut plain = url.clone();
            // `http` is a special scheme like `https`: setting it cannot fail.
            let _ = plain.set_scheme("http");
            if url.port().is_none() {
                // The default port of https, made explicit (the plain URL's default is 80).
                let _ = plain.set_port(Some(port));
            }
            let what = if not_tls {
                "does not speak TLS (it answered the handshake in plain text)"
            } else {
                "closed the connection during the TLS handshake: it may not speak TLS"
            };
            return ExchangeFailure::new(
                FailureKind::Tls,
                format!("the server at {host}:{port} {what}; try {plain}"),
            );
        }
        ExchangeFailure::new(FailureKind::Tls, self.message)
    }
}

impl fmt::Display for ExchangeFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}: {}", self.kind, self.message)
    }
}

/// Which transport the user asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum TransportMode {
    /// POST `initialize`; on 400, 404 or 405 fall back (once) to legacy HTTP+SSE.
    #[default]
    Auto,
    /// Streamable HTTP only.
    Streamable,
    /// Legacy HTTP+SSE (2024-11-05) only.
    Legacy,
}

/// The transport in use, once known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Transport {
    /// Streamable HTTP (2025-03-26 and later).
    Streamable,
    /// HTTP+SSE (2024-11-05).
    Legacy,
}

/// How a [`Connection`](super::Connection) behaves. Build with [`ConnectionConfig::new`] and
/// adjust the public fields; every limit has a safe default.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ConnectionConfig {
    /// The MCP endpoint (Streamable) or SSE URL (legacy) the user gave.
    pub url: Url,
    /// Which transport to use.
    pub mode: TransportMode,
    /// The user's own headers (`Authorization`, ...), sent only to the origin of `url`.
    pub extra_headers: HeaderList,
    /// The largest JSON response body read, in bytes.
    pub max_body: usize,
    /// The largest SSE event read, in bytes.
    pub max_event: usize,
    /// The deadline of exchanges that are not requests (notification POSTs, DELETE, GET
    /// attempts until their head, the legacy `endpoint` wait). Requests keep the session's.
    pub exchange_timeout: Duration,
    /// The deadline of the DELETE sent on close.
    pub close_timeout: Duration,
    /// Reconnection backoff: first delay.
    pub reconnect_initial: Duration,
    /// Reconnection backoff: largest delay.
    pub reconnect_max: Duration,
    /// Reconnection attempts per stream in a row without anything new.
    pub reconnect_attempts: u32,
    /// The largest server `retry` honoured.
    pub max_retry: Duration,
    /// The largest `Retry-After` honoured on 429 / 503.
    pub max_retry_after: Duration,
    /// How many times one message is re-sent after 429 / 503.
    pub max_status_retries: u8,
    /// Same-origin redirects followed per exchange.
    pub max_redirects: u8,
    /// POST exchanges open at once; more wait in order.
    pub max_concurrent_posts: usize,
    /// Messages waiting for a POST slot; beyond, a message fails at once.
    pub max_queued_posts: usize,
    /// Logical SSE streams kept (POST reply streams and the listener).
    pub max_streams: usize,
    /// Whether to open the GET listener after initialization.
    pub listen: bool,
    /// When set, the session's `Ready` event (and every session event after it) is held back
    /// until the GET listener is open or refused, for at most this long. Set it when the
    /// server-initiated messages that follow the first requests must not be missed: a server
    /// sends them on the listener only if it is already open. Costs one round trip before
    /// `Ready`. `None` (the default): `Ready` at once, the listener opens beside the first
    /// requests.
    pub await_listener: Option<Duration>,
    /// Seed of the reconnection jitter (0: no jitter, exact delays).
    pub jitter_seed: u64,
}

impl ConnectionConfig {
    /// Defaults for `url`: auto mode, 4 MiB JSON bodies, 16 MiB events, 30 s exchange
    /// deadline, 5 s close deadline, backoff 250 ms doubling to 30 s for 5 attempts, `retry`
    /// clamped to 60 s, `Retry-After` to 60 s with 3 retries, 5 redirects, 16 concurrent POSTs.
    pub fn new(url: Url) -> Self {
        Self {
            url,
            mode: TransportMode::Auto,
            extra_headers: HeaderList::new(),
            max_body: 4 * 1024 * 1024,
            max_event: crate::framing::sse::DEFAULT_MAX_EVENT_SIZE,
            exchange_timeout: Duration::from_secs(30),
            close_timeout: Duration::from_secs(5),
            reconnect_initial: Duration::from_millis(250),
            reconnect_max: Duration::from_secs(30),
            reconnect_attempts: 5,
            max_retry: Duration::from_secs(60),
            max_retry_after: Duration::from_secs(60),
            max_status_retries: 3,
            max_redirects: 5,
            max_concurrent_posts: 16,
            max_queued_posts: 1024,
            max_streams: 64,
            listen: true,
            await_listener: None,
            jitter_seed: 0,
        }
    }
}

/// A failure of an exchange that is no request's own (a notification POST, the listener).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ExchangeError {
    /// A non-2xx response.
    Status(HttpStatusError),
    /// A failure below HTTP, a refused redirect, an exchange deadline.
    Transport(String),
}

impl fmt::Display for ExchangeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExchangeError::Status(e) => e.fmt(f),
            ExchangeError::Transport(m) => f.write_str(m),
        }
    }
}

/// What the HTTP layer reports on top of the session's events.
#[derive(Debug)]
#[non_exhaustive]
pub enum HttpEvent {
    /// The transport is known (after the first successful initialize POST, or the legacy
    /// `endpoint` event).
    TransportSelected(Transport),
    /// The server's `Mcp-Session-Id` was refused; it is not used.
    InvalidSessionId(InvalidSessionId),
    /// The server answered 404 to a request carrying this session id, or a 400 whose JSON-RPC
    /// error says the id is not valid (the rule: [`session_gone`](super::session_gone)): the
    /// session is gone.
    SessionExpired {
        /// The id that expired.
        session_id: String,
        /// Whether a fresh session is being set up (false: this was the second such answer in
        /// a row, the connection gives up).
        reinitializing: bool,
    },
    /// A fresh session replaced an expired one: the log level and the resource subscriptions
    /// of the old one were set on it (each restoring request answered, a failed one reported
    /// as [`HttpEvent::RestoreFailed`] before this), then the requests lost with the old
    /// session were re-sent, so they run on a session in the state they were sent for.
    ///
    /// Server notifications may have been missed between `since` and `until`: the server may
    /// have dropped the old session (and its notifications) before the client noticed, and
    /// the subscriptions were not in place until they were restored. A host with subscribers
    /// tells them of the gap here.
    SessionReset {
        /// Requests re-sent.
        resent: usize,
        /// Restoring requests issued (`logging/setLevel`, `resources/subscribe`).
        restored: usize,
        /// When the expiry was noticed (the 404 to the old session id).
        since: Instant,
        /// When the state was restored on the new session.
        until: Instant,
    },
    /// 2026-07-28: the stream of a `subscriptions/listen` broke and the listen was re-issued
    /// (with a new wire id, under the same handle); the server has now acknowledged it again.
    /// Its notifications may have been missed between `since` and `until`: every one after
    /// this event comes from the re-issued listen. A host tells the subscription of the gap.
    ListenResumed {
        /// The listen.
        handle: RequestHandle,
        /// When its stream broke.
        since: Instant,
        /// When the server acknowledged it again.
        until: Instant,
    },
    /// The GET listener is open.
    ListenerOpened,
    /// No GET listener: the server refused it (405, 404, 400: `status`) or it could not be
    /// kept open (`status: None`). Not an error.
    ListenerUnavailable {
        /// The refusing status, if any.
        status: Option<u16>,
    },
    /// A dropped stream was resumed.
    StreamResumed {
        /// The stream.
        stream: StreamId,
        /// The `Last-Event-ID` sent.
        last_event_id: String,
    },
    /// A restoring request after a reset failed. A failed `resources/subscribe` is
    /// forgotten: the resource is not subscribed on the new session (a host ends the
    /// subscriptions that counted on it).
    RestoreFailed {
        /// Its method.
        method: String,
        /// The resource, for `resources/subscribe`.
        uri: Option<String>,
        /// Why.
        error: session::RequestError,
    },
    /// A notification or response POST (or the listener) failed.
    ExchangeFailed {
        /// What the exchange was for.
        purpose: Purpose,
        /// Why.
        error: ExchangeError,
    },
    /// An SSE event larger than the limit was dropped.
    EventTooLarge {
        /// Bytes dropped.
        discarded: usize,
    },
    /// The connection is over: the session closed and the DELETE (if any) finished. Nothing more
    /// will be asked of the adapter.
    Finished,
    /// A tool of a 2026-07-28 `tools/list` result had invalid `x-mcp-header` annotations and
    /// was removed from the result the host got (the spec's rule).
    ToolDropped {
        /// The tool's name.
        name: String,
        /// What is wrong with its annotations.
        reason: String,
    },
}

/// An event from [`Connection::poll_event`](super::Connection::poll_event): a session event,
/// or an HTTP-level one ([`HttpEvent`]).
pub type Event = crate::connection::Event<HttpEvent>;
