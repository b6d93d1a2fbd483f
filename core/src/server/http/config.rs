//! What the host tells an [`HttpServer`](super::HttpServer): the MCP server behind it, its
//! mode, the checks it makes of each request and the bounds of its tables and buffers.

use crate::server::ServerConfig;
use crate::time::Duration;

/// Whether clients get sessions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HttpMode {
    /// `initialize` opens a session whose id (`Mcp-Session-Id`) every later request carries;
    /// GET streams, resumption and DELETE are available.
    Stateful,
    /// No session ids: every POST is served by its own short-lived session, which ends with
    /// the POST's last answer (as the TypeScript SDK's stateless transport). A POST that is not
    /// `initialize` is served as if the client had initialized with the version of its
    /// `MCP-Protocol-Version` header (2025-03-26 without one) and no capabilities, so the
    /// server sends it no requests of its own. GET and DELETE are answered 405.
    Stateless,
}

/// The `Origin` check that protects a local server from DNS rebinding: a web page on another
/// site must not reach it through the user's browser.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum OriginCheck {
    /// Every `Origin` is accepted (a server reachable from other machines, whose clients are
    /// authenticated otherwise).
    Off,
    /// A request with an `Origin` header whose host is not loopback (`localhost`,
    /// `127.0.0.0/8`, `::1`) and which is not in the list gets 403. Requests without `Origin`
    /// (native clients) pass. Entries are whole origins (`https://app.example.com`), compared
    /// without case.
    LoopbackOr(Vec<String>),
}

/// The configuration of an [`HttpServer`](super::HttpServer).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct HttpServerConfig {
    /// The MCP server each session runs.
    pub server: ServerConfig,
    /// Sessions or none.
    pub mode: HttpMode,
    /// Whether a client may open the GET stream for messages unrelated to its requests
    /// (default on; off: GET is answered 405).
    pub get_stream: bool,
    /// The `Origin` check (default [`OriginCheck::LoopbackOr`] with no extra origins: the
    /// right default for a server bound to a loopback address).
    pub origin: OriginCheck,
    /// A token every request must carry as `Authorization: Bearer <token>`; without it or
    /// with another, 401 and `WWW-Authenticate: Bearer` (default none).
    pub bearer_token: Option<String>,
    /// Sessions at once; past it, a new `initialize` gets 503 (default 64).
    pub max_sessions: usize,
    /// The largest POST body accepted, in bytes; a larger one gets 413 (default 4 MiB).
    pub max_body_bytes: usize,
    /// The bytes all the request bodies being received at once may hold, across every
    /// connection; a body whose buffer would take the total past it gets 503 and its
    /// connection closes (many connections trickling large bodies must not hold
    /// `max_connections` times `max_body_bytes`). Never less than one body of
    /// [`max_body_bytes`](Self::max_body_bytes) (and the byte past it that tells a larger
    /// one): a smaller value counts as that. Kept by the host's HTTP library, which reads
    /// bodies, in a [`BodyBudget`](super::BodyBudget) (default 64 MiB).
    pub max_body_bytes_in_flight: usize,
    /// How long a client may take to send a request's body once its head arrived; past it,
    /// 408 and the connection closes (a client that trickles a body must not hold a
    /// connection and its buffer for ever). Enforced by the host's HTTP library, which reads
    /// bodies (default 30 s).
    pub body_timeout: Duration,
    /// Connections open at once; past it, a new connection gets 503 and is closed unread
    /// (connections that stay open, idle or trickling, must not exhaust the process's file
    /// descriptors). Enforced by the host's HTTP library, which accepts connections
    /// (default 512).
    pub max_connections: usize,
    /// Open response streams per session (POSTs waiting for their answers, and the GET
    /// stream); past it, 429 (default 32).
    pub max_streams_per_session: usize,
    /// SSE events each stream keeps for `Last-Event-ID` resumption, and for the GET stream
    /// while no client listens (default 128; the oldest go first).
    pub replay_events: usize,
    /// The bytes each stream keeps for resumption (default 1 MiB; the oldest go first).
    pub replay_bytes: usize,
    /// Streams whose answers are all sent that are still kept for resumption, per session
    /// (default 8; the oldest go first).
    pub ended_streams_kept: usize,
    /// How long a session may go without a request and without an open stream before it
    /// ends (a client that never sends DELETE must not hold a place in the table for ever).
    /// `None`: never (default 30 minutes).
    pub idle_timeout: Option<Duration>,
    /// The SSE `retry` field sent with each priming event (2025-11-25 streams): how long a
    /// client waits before it reconnects when the server closes a stream's connection
    /// ([`HttpServer::close_request_stream`](super::HttpServer::close_request_stream), SEP-1699
    /// polling). `None`: no `retry` field, the client's own delay (default).
    pub retry: Option<Duration>,
}

impl HttpServerConfig {
    /// A stateful server of `server`, with the GET stream, the loopback `Origin` check, no
    /// bearer token and the default bounds.
    #[must_use]
    pub fn new(server: ServerConfig) -> Self {
        HttpServerConfig {
            server,
            mode: HttpMode::Stateful,
            get_stream: true,
            origin: OriginCheck::LoopbackOr(Vec::new()),
            bearer_token: None,
            max_sessions: 64,
            max_body_bytes: 4 << 20,
            max_body_bytes_in_flight: 64 << 20,
            body_timeout: Duration::from_secs(30),
            max_connections: 512,
            max_streams_per_session: 32,
            replay_events: 128,
            replay_bytes: 1 << 20,
            ended_streams_kept: 8,
            idle_timeout: Some(Duration::from_secs(30 * 60)),
            retry: None,
        }
    }

    /// Sets the `retry` field of priming events (see [`retry`](Self::retry)).
    #[must_use]
    pub fn with_retry(mut self, retry: Option<Duration>) -> Self {
        self.retry = retry;
        self
    }

    /// Sets the mode.
    #[must_use]
    pub fn with_mode(mut self, mode: HttpMode) -> Self {
        self.mode = mode;
        self
    }

    /// Enables or disables the GET stream.
    #[must_use]
    pub fn with_get_stream(mut self, enabled: bool) -> Self {
        self.get_stream = enabled;
        self
    }

    /// Sets the `Origin` check.
    #[must_use]
    pub fn with_origin_check(mut self, origin: OriginCheck) -> Self {
        self.origin = origin;
        self
    }

    /// Requires `Authorization: Bearer <token>` of every request.
    #[must_use]
    pub fn with_bearer_token(mut self, token: impl Into<String>) -> Self {
        self.bearer_token = Some(token.into());
        self
    }

    /// Sets the bounds: sessions, body bytes, streams per session.
    #[must_use]
    pub fn with_limits(mut self, sessions: usize, body_bytes: usize, streams: usize) -> Self {
        self.max_sessions = sessions;
        self.max_body_bytes = body_bytes;
        self.max_streams_per_session = streams;
        self
    }

    /// Sets the bytes the request bodies being received may hold at once, across every
    /// connection (see [`max_body_bytes_in_flight`](Self::max_body_bytes_in_flight)).
    #[must_use]
    pub fn with_body_bytes_in_flight(mut self, bytes: usize) -> Self {
        self.max_body_bytes_in_flight = bytes;
        self
    }

    /// Sets the bounds of connections: how many at once, and how long a body may take.
    #[must_use]
    pub fn with_connection_limits(mut self, connections: usize, body_timeout: Duration) -> Self {
        self.max_connections = connections;
        self.body_timeout = body_timeout;
        self
    }

    /// Sets how long an idle session lives (`None`: for ever).
    #[must_use]
    pub fn with_idle_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.idle_timeout = timeout;
        self
    }

    /// Makes the host answer each session's `initialize`
    /// ([`ServerConfig::defer_initialize`]): the POST that carried it is answered (with its
    /// `Mcp-Session-Id`) when the host accepts or refuses it. In stateless mode the implied
    /// handshake of a POST that is not `initialize` is still answered from
    /// [`server`](Self::server).
    #[must_use]
    pub fn with_deferred_initialize(mut self, defer: bool) -> Self {
        self.server.defer_initialize = defer;
        self
    }

    /// Sets what each stream keeps for resumption: events and bytes.
    #[must_use]
    pub fn with_replay(mut self, events: usize, bytes: usize) -> Self {
        self.replay_events = events;
        self.replay_bytes = bytes;
        self
    }
}
