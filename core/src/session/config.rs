//! Session configuration, protocol versions and per-request options.

use std::fmt;

use crate::time::Duration;
use crate::types::{ClientCapabilities, Implementation};

/// A protocol revision this client speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ProtocolVersion {
    /// 2024-11-05: the first revision (HTTP+SSE transport, no `title`s, no structured output).
    V2024_11_05,
    /// 2025-03-26: Streamable HTTP, batches on input, audio content, tool annotations.
    V2025_03_26,
    /// 2025-06-18: structured tool output, elicitation, `MCP-Protocol-Version` header.
    V2025_06_18,
    /// 2025-11-25: tasks, URL elicitation, SSE polling, icons.
    V2025_11_25,
    /// 2026-07-28: no `initialize`; `server/discover`, a `_meta` envelope on every request,
    /// `resultType`, multi-round requests, cache hints, `subscriptions/listen`.
    V2026_07_28,
}

impl ProtocolVersion {
    /// Every version of the initialize era, oldest first.
    pub const INITIALIZE_ERA: [ProtocolVersion; 4] = [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
    ];

    /// The newest version this crate speaks in the initialize era.
    pub const LATEST_INITIALIZE: ProtocolVersion = ProtocolVersion::V2025_11_25;

    /// Every version of the discover era (no `initialize`), oldest first.
    pub const DISCOVER_ERA: [ProtocolVersion; 1] = [ProtocolVersion::V2026_07_28];

    /// The newest version this crate speaks in the discover era.
    pub const LATEST_DISCOVER: ProtocolVersion = ProtocolVersion::V2026_07_28;

    /// Every version this crate speaks, oldest first.
    pub const ALL: [ProtocolVersion; 5] = [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2026_07_28,
    ];

    /// The version string on the wire.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2024_11_05 => "2024-11-05",
            ProtocolVersion::V2025_03_26 => "2025-03-26",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
            ProtocolVersion::V2026_07_28 => "2026-07-28",
        }
    }

    /// Parses a version string; `None` for versions this crate does not know.
    #[must_use]
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.as_str() == s)
    }

    /// The handshake era the version belongs to.
    #[must_use]
    pub const fn era(self) -> Era {
        match self {
            ProtocolVersion::V2026_07_28 => Era::Discover,
            _ => Era::Initialize,
        }
    }

    /// Whether HTTP requests after the handshake carry `MCP-Protocol-Version` (2025-06-18 on).
    #[must_use]
    pub fn sends_version_header(self) -> bool {
        self >= ProtocolVersion::V2025_06_18
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a session establishes the protocol: the handshake family of its version.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Era {
    /// `initialize` -> result -> `notifications/initialized` (2024-11-05 to 2025-11-25).
    Initialize,
    /// `server/discover` (optional) and a `_meta` envelope on every request, no session
    /// (2026-07-28 on).
    Discover,
}

/// How a session chooses its era.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EraPolicy {
    /// Only `initialize` (the servers of 2024-11-05 to 2025-11-25).
    Initialize,
    /// Only `server/discover` and the envelope; a server that does not answer `server/discover`
    /// with a valid result closes the session.
    Discover,
    /// Probe with `server/discover` and fall back to `initialize` on the spec's legacy signals:
    /// an error that is not a recognised modern one (-32020/-32021/-32022), an answer that is
    /// not a valid `DiscoverResult` (`{}`), or no answer within `probe_timeout`. A late
    /// discover answer after the fallback is ignored (reported as a stale response). Over
    /// stdio, a server that exits on the probe is respawned (see
    /// [`StdioConnection`](crate::stdio::StdioConnection)).
    Auto {
        /// How long to wait for the discover answer before falling back.
        probe_timeout: Duration,
    },
}

impl Default for EraPolicy {
    /// Auto with a 10 s probe (the timeout rmcp and the TypeScript SDK use).
    fn default() -> Self {
        EraPolicy::Auto {
            probe_timeout: Duration::from_secs(10),
        }
    }
}

/// What the host remembers about a server's era from an earlier connection (per server
/// process command for stdio, per origin for HTTP). With a hint, an [`EraPolicy::Auto`] session
/// starts in that era at once, without a probe; if that handshake fails (the server was
/// upgraded or downgraded), the session re-probes once instead of closing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum KnownEra {
    /// The server answered `initialize` last time.
    Initialize,
    /// The server answered `server/discover` last time.
    Discover,
}

/// Everything a [`Session`](super::Session) needs to know up front.
///
/// The defaults are what a demanding host wants: the latest version requested, every version
/// of the era accepted, 30 s per request, 60 s for the handshake (a first `npx -y` start can
/// take that long), and no client capability declared. Declare a capability only when the
/// host will answer its requests: the session answers every other server request with -32601.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct SessionConfig {
    /// `clientInfo` sent in `initialize`.
    pub client_info: Implementation,
    /// `capabilities` sent in `initialize`: exactly what the host will answer.
    pub capabilities: ClientCapabilities,
    /// The version requested in `initialize`.
    pub protocol_version: ProtocolVersion,
    /// The versions accepted in the server's answer. An answer outside this list closes the
    /// session with [`CloseReason::UnsupportedVersion`](super::CloseReason::UnsupportedVersion).
    /// Discover-era versions are accepted when listed here too (the default lists all).
    pub supported_versions: Vec<ProtocolVersion>,
    /// How long the handshake may take, from [`Session::new`](super::Session::new) to the
    /// initialize result. `None`: no limit.
    pub handshake_timeout: Option<Duration>,
    /// The timeout of a request whose options do not set one. `None`: no deadline.
    pub request_timeout: Option<Duration>,
    /// How many requests may wait for the handshake to finish; past it, a usage error.
    pub max_queued: usize,
    /// How many requests may be in flight at once (waiting for the handshake, queued or
    /// sent). Past it, requests are held and sent in order of issue as room frees up, their
    /// timeouts running (see [`Session::send_request`](super::Session::send_request)).
    /// Default 65 536.
    pub max_in_flight: usize,
    /// How many requests may be held past [`max_in_flight`](Self::max_in_flight); past it,
    /// [`UsageError::TooManyInFlight`](super::UsageError::TooManyInFlight). `0`: requests
    /// past the cap fail at once. Default 1 048 576 (each held request costs the session
    /// about 200 bytes).
    pub max_held: usize,
    /// How many server-to-client requests may be open at once; past it they are answered
    /// with an error at once.
    pub max_server_requests: usize,
    /// How the era is chosen. Default: [`EraPolicy::Initialize`] (the behaviour of older
    /// releases); hosts that want 2026-07-28 servers set [`EraPolicy::Auto`].
    pub era_policy: EraPolicy,
    /// The era the server used last time, if the host remembers it (Auto only).
    pub known_era: Option<KnownEra>,
    /// The discover-era version sent in the envelope (and asked for first).
    pub discover_version: ProtocolVersion,
    /// How many rounds of `input_required` one request may go through before it fails with
    /// [`RequestError::TooManyInputRounds`](super::RequestError::TooManyInputRounds).
    pub max_input_rounds: u32,
    /// `io.modelcontextprotocol/logLevel` sent in every discover-era request (deprecated in
    /// the spec; absent means the server sends no log messages for the request).
    pub log_level: Option<crate::types::LoggingLevel>,
    /// Whether discover-era list and read results are cached by their `ttlMs` /
    /// `cacheScope` hints: a request with a fresh entry completes at once from it, without
    /// a message. Default off.
    pub result_cache: bool,
    /// How many bytes of messages may wait for the peer to read them (estimated: see
    /// [`Session::poll_transmit`](super::Session::poll_transmit)). Beyond it, server
    /// requests are dropped unanswered with a
    /// [`Diagnostic::OutboundQueueFull`](super::Diagnostic::OutboundQueueFull), and
    /// [`notify`](super::Session::notify) is refused with
    /// [`UsageError::OutboundFull`](super::UsageError::OutboundFull). Default 8 MiB.
    pub max_outbound_bytes: usize,
    /// How long a full outbound queue may go without the transport taking a message before
    /// the session closes with [`CloseReason::Stalled`](super::CloseReason::Stalled).
    /// `None`: never. Default 10 s.
    pub stall_timeout: Option<Duration>,
    /// Bounds of the task table, when the client is a task receiver (it declares `tasks`
    /// in [`capabilities`](Self::capabilities)): how many tasks, their ttl, the suggested
    /// poll interval.
    pub task_receiver: crate::task::receiver::ReceiverPolicy,
    /// A wall-clock reading for the `createdAt` / `lastUpdatedAt` of the client's tasks
    /// (the core reads no clock). `None`: times count from the Unix epoch.
    pub wall_clock: Option<crate::task::receiver::WallClock>,
    /// The host makes the tasks itself instead of the session's task table: a bridge that
    /// declared its own host's `tasks` capability and forwards the server's requests to that
    /// host. A sampling or elicitation request with `params.task` then goes to the host as
    /// it came (the host answers it with its own `CreateTaskResult`), and the server's
    /// `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel` go to the host as server
    /// requests ([`Event::ServerRequest`](super::Event::ServerRequest)), `tasks/result`
    /// pausing the request deadlines as an elicitation does (it waits for the same answer).
    /// Default off: the session is the task receiver.
    pub host_runs_tasks: bool,
}

impl SessionConfig {
    /// A configuration with the defaults described at the type.
    #[must_use]
    pub fn new(client_info: Implementation) -> Self {
        SessionConfig {
            client_info,
            capabilities: ClientCapabilities::default(),
            protocol_version: ProtocolVersion::LATEST_INITIALIZE,
            supported_versions: ProtocolVersion::ALL.to_vec(),
            handshake_timeout: Some(Duration::from_secs(60)),
            request_timeout: Some(Duration::from_secs(30)),
            max_queued: 1024,
            max_in_flight: 65_536,
            max_held: 1 << 20,
            max_server_requests: 64,
            era_policy: EraPolicy::Initialize,
            known_era: None,
            discover_version: ProtocolVersion::LATEST_DISCOVER,
            max_input_rounds: 10,
            max_outbound_bytes: super::outbound::DEFAULT_MAX_OUTBOUND_BYTES,
            stall_timeout: Some(super::outbound::DEFAULT_STALL_TIMEOUT),
            log_level: None,
            result_cache: false,
            task_receiver: crate::task::receiver::ReceiverPolicy::default(),
            wall_clock: None,
            host_runs_tasks: false,
        }
    }

    /// Lets the host make the tasks of task-augmented server requests (see
    /// [`host_runs_tasks`](Self::host_runs_tasks)).
    #[must_use]
    pub fn with_host_running_tasks(mut self, enabled: bool) -> Self {
        self.host_runs_tasks = enabled;
        self
    }

    /// Sets the wall-clock reading that task timestamps are written from (take it once,
    /// together with the instant: `WallClock::new(now, unix_millis)`).
    #[must_use]
    pub fn with_wall_clock(mut self, wall_clock: crate::task::receiver::WallClock) -> Self {
        self.wall_clock = Some(wall_clock);
        self
    }

    /// Sets the bounds of the task table (see [`task_receiver`](Self::task_receiver)).
    #[must_use]
    pub fn with_task_receiver(mut self, policy: crate::task::receiver::ReceiverPolicy) -> Self {
        self.task_receiver = policy;
        self
    }

    /// Sets how the era is chosen.
    #[must_use]
    pub fn with_era_policy(mut self, policy: EraPolicy) -> Self {
        self.era_policy = policy;
        self
    }

    /// Sets the remembered era of the server (see [`KnownEra`]).
    #[must_use]
    pub fn with_known_era(mut self, era: Option<KnownEra>) -> Self {
        self.known_era = era;
        self
    }

    /// Sets the declared client capabilities.
    #[must_use]
    pub fn with_capabilities(mut self, capabilities: ClientCapabilities) -> Self {
        self.capabilities = capabilities;
        self
    }

    /// Sets the version requested in `initialize`.
    #[must_use]
    pub fn with_protocol_version(mut self, version: ProtocolVersion) -> Self {
        self.protocol_version = version;
        self
    }

    /// Sets the handshake timeout (`None`: unlimited).
    #[must_use]
    pub fn with_handshake_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.handshake_timeout = timeout;
        self
    }

    /// Sets the default request timeout (`None`: no deadline).
    #[must_use]
    pub fn with_request_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// Sets [`max_outbound_bytes`](Self::max_outbound_bytes).
    #[must_use]
    pub fn with_max_outbound_bytes(mut self, bytes: usize) -> Self {
        self.max_outbound_bytes = bytes;
        self
    }

    /// Sets [`stall_timeout`](Self::stall_timeout).
    #[must_use]
    pub fn with_stall_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.stall_timeout = timeout;
        self
    }

    /// Sets [`max_in_flight`](Self::max_in_flight) and [`max_held`](Self::max_held).
    #[must_use]
    pub fn with_max_in_flight(mut self, in_flight: usize, held: usize) -> Self {
        self.max_in_flight = in_flight;
        self.max_held = held;
        self
    }
}

/// When a request times out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Deadline {
    /// The session's [`SessionConfig::request_timeout`].
    #[default]
    SessionDefault,
    /// Never: the request waits until it is answered, cancelled or the session closes.
    Never,
    /// This long after it is sent. Zero is a usage error, not an instant failure.
    After(Duration),
}

/// Per-request options: timeout, progress, deadline reset.
///
/// ```
/// # use mcp_proto::session::RequestOptions;
/// # use std::time::Duration;
/// let opts = RequestOptions::new()
///     .timeout(Duration::from_secs(10))
///     .progress()
///     .reset_timeout_on_progress(Duration::from_secs(600));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RequestOptions {
    pub(crate) deadline: Deadline,
    pub(crate) progress: bool,
    pub(crate) max_total: Option<Duration>,
}

impl RequestOptions {
    /// The defaults: the session's timeout, no progress token.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Times out this long after the request is sent.
    #[must_use]
    pub fn timeout(mut self, after: Duration) -> Self {
        self.deadline = Deadline::After(after);
        self
    }

    /// No deadline at all.
    #[must_use]
    pub fn no_timeout(mut self) -> Self {
        self.deadline = Deadline::Never;
        self
    }

    /// Sets the deadline rule directly.
    #[must_use]
    pub fn deadline(mut self, deadline: Deadline) -> Self {
        self.deadline = deadline;
        self
    }

    /// Asks the server for progress: `_meta.progressToken` is added to the params and
    /// `notifications/progress` for it arrive as [`Event::Progress`](super::Event::Progress).
    #[must_use]
    pub fn progress(mut self) -> Self {
        self.progress = true;
        self
    }

    /// Restarts the timeout on every progress notification (implies [`progress`](Self::progress)),
    /// but never lets the request run longer than `max_total` after it was sent, as the spec
    /// asks ("always enforce a maximum total timeout").
    #[must_use]
    pub fn reset_timeout_on_progress(mut self, max_total: Duration) -> Self {
        self.progress = true;
        self.max_total = Some(max_total);
        self
    }
}
