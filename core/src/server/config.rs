//! What the host tells a [`ServerSession`](super::ServerSession) about itself and its limits.

use crate::session::ProtocolVersion;
use crate::time::Duration;
use crate::types::{Implementation, ServerCapabilities};

/// The server's identity, what it offers, and the bounds of its tables and queues.
///
/// ```
/// # use mcp_proto::server::ServerConfig;
/// # use mcp_proto::types::{Implementation, ServerCapabilities, ToolsCapability};
/// let config = ServerConfig::new(Implementation::new("demo", "1.0"))
///     .with_capabilities(ServerCapabilities {
///         tools: Some(ToolsCapability::default()),
///         ..ServerCapabilities::default()
///     })
///     .with_instructions("Call `echo` to hear yourself.");
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ServerConfig {
    /// The `serverInfo` of the `initialize` result (and of every 2026 result's `_meta`).
    pub server_info: Implementation,
    /// The capabilities of the `initialize` result. They also gate the session's own
    /// behaviour: `tools`, `resources`, `prompts`, `completions` and `tasks` let their methods
    /// through to the host (undeclared, they are answered `-32601`; `resources/subscribe`
    /// needs `subscribe`); `logging` makes it answer `logging/setLevel` and enables
    /// [`log`](super::ServerSession::log); `listChanged` and `subscribe` enable the matching
    /// notifications.
    pub capabilities: ServerCapabilities,
    /// The `instructions` of the `initialize` result.
    pub instructions: Option<String>,
    /// The default deadline of a server-to-client request (30 s; `None`: no deadline).
    pub request_timeout: Option<Duration>,
    /// Client requests handed to the host and not answered yet; past it, a new request is
    /// answered with a JSON-RPC error at once (default 1024).
    pub max_open_client_requests: usize,
    /// Server-to-client requests pending; past it, [`send_request`](super::ServerSession::send_request)
    /// returns [`UsageError::TooManyInFlight`](super::UsageError::TooManyInFlight) (default 256).
    pub max_in_flight: usize,
    /// The bytes queued for the client (estimated). Past it, the host's notifications and
    /// requests are refused with [`UsageError::QueueFull`](super::UsageError::QueueFull), and
    /// the client's new requests get no answer until it reads (default 8 MiB).
    pub max_outbound_bytes: usize,
    /// How long a client may take to send `initialize` after the session started; past it
    /// the session closes with
    /// [`CloseReason::InitializeNotReceived`](crate::session::CloseReason::InitializeNotReceived).
    /// `None`: wait forever (default 60 s).
    pub handshake_timeout: Option<Duration>,
    /// How long the outbound queue may hold [`max_outbound_bytes`](Self::max_outbound_bytes)
    /// or more without the transport taking a message; past it the session closes with
    /// [`CloseReason::ClientStalled`](crate::session::CloseReason::ClientStalled) and drops
    /// what was queued. `None`: never (default 10 s).
    pub stall_timeout: Option<Duration>,
    /// Whether the host answers `initialize` itself: the client's `initialize` comes as
    /// [`Event::InitializeRequested`](super::Event::InitializeRequested) and waits for
    /// [`accept_initialize`](super::ServerSession::accept_initialize) or
    /// [`refuse_initialize`](super::ServerSession::refuse_initialize) (default off: the
    /// session answers from this configuration at once).
    pub defer_initialize: bool,
    /// The protocol versions the server speaks (default: every one this crate knows).
    /// Without an initialize-era version `initialize` is refused; without a 2026-07-28 one
    /// `server/discover` is answered `-32601` and the per-request envelope is not read.
    pub versions: Vec<ProtocolVersion>,
    /// The `ttlMs` of the `server/discover` result: how long a client may cache it (default
    /// 0: re-discover each time).
    pub discover_ttl: Duration,
    /// Open `subscriptions/listen` per session (2026-07-28); past it a new listen is answered
    /// `-32600` (default 16).
    pub max_listens: usize,
    /// Resource URIs one listen may subscribe; past it the listen is answered `-32602`
    /// (default 1024).
    pub max_listen_resources: usize,
    /// `subscriptions/listen` is the host's (2026-07-28): handed over as an
    /// [`Event::Request`](super::Event::Request) and answered by it, and notifications go out
    /// as the host gives them, without fanning them out to listens (default `false`: the
    /// session answers listens itself). For a host that scripts the listen protocol itself,
    /// such as a test's fake server.
    pub listens_by_host: bool,
}

impl ServerConfig {
    /// A server called `server_info`, with no capabilities and the default limits.
    #[must_use]
    pub fn new(server_info: Implementation) -> Self {
        ServerConfig {
            server_info,
            capabilities: ServerCapabilities::default(),
            instructions: None,
            request_timeout: Some(Duration::from_secs(30)),
            max_open_client_requests: 1024,
            max_in_flight: 256,
            max_outbound_bytes: 8 << 20,
            handshake_timeout: Some(Duration::from_secs(60)),
            stall_timeout: Some(Duration::from_secs(10)),
            defer_initialize: false,
            versions: ProtocolVersion::ALL.to_vec(),
            discover_ttl: Duration::ZERO,
            max_listens: 16,
            max_listen_resources: 1024,
            listens_by_host: false,
        }
    }

    /// Sets the capabilities announced in the `initialize` result.
    #[must_use]
    pub fn with_capabilities(mut self, capabilities: ServerCapabilities) -> Self {
        self.capabilities = capabilities;
        self
    }

    /// Sets the `instructions` of the `initialize` result.
    #[must_use]
    pub fn with_instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Sets the default deadline of server-to-client requests.
    #[must_use]
    pub fn with_request_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// Sets how long the client may take to send `initialize` (`None`: forever).
    #[must_use]
    pub fn with_handshake_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.handshake_timeout = timeout;
        self
    }

    /// Sets how long a full outbound queue may go unread before the session closes
    /// (`None`: never).
    #[must_use]
    pub fn with_stall_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.stall_timeout = timeout;
        self
    }

    /// Makes the host answer `initialize` (see [`defer_initialize`](Self::defer_initialize)).
    #[must_use]
    pub fn with_deferred_initialize(mut self, defer: bool) -> Self {
        self.defer_initialize = defer;
        self
    }

    /// Sets the protocol versions the server speaks (see [`versions`](Self::versions)).
    #[must_use]
    pub fn with_versions(mut self, versions: impl IntoIterator<Item = ProtocolVersion>) -> Self {
        self.versions = versions.into_iter().collect();
        self
    }

    /// Sets the `ttlMs` of the `server/discover` result.
    #[must_use]
    pub fn with_discover_ttl(mut self, ttl: Duration) -> Self {
        self.discover_ttl = ttl;
        self
    }

    /// Hands `subscriptions/listen` to the host instead of answering it in the session
    /// ([`listens_by_host`](Self::listens_by_host)).
    #[must_use]
    pub fn with_listens_by_host(mut self, by_host: bool) -> Self {
        self.listens_by_host = by_host;
        self
    }

    /// Sets the bounds of `subscriptions/listen` (2026-07-28): open listens per session, and
    /// resource URIs per listen.
    #[must_use]
    pub fn with_listen_limits(mut self, listens: usize, resources_per_listen: usize) -> Self {
        self.max_listens = listens;
        self.max_listen_resources = resources_per_listen;
        self
    }

    /// Sets the bounds: open client requests, server requests in flight, queued bytes.
    #[must_use]
    pub fn with_limits(
        mut self,
        open_client_requests: usize,
        in_flight: usize,
        outbound_bytes: usize,
    ) -> Self {
        self.max_open_client_requests = open_client_requests;
        self.max_in_flight = in_flight;
        self.max_outbound_bytes = outbound_bytes;
        self
    }
}
