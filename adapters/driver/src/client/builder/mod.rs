//! [`ClientBuilder`]: the options of a connection; `connect.rs` starts it.

mod connect;
mod label;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use mcp_proto::session::{EraPolicy, ProtocolVersion};
#[cfg(unix)]
use mcp_proto::stdio::shutdown::ShutdownConfig;
use mcp_proto::types::Implementation;

use super::budget::ListBudget;
// Named by the option docs only.
#[cfg(doc)]
use super::Client;
#[cfg(unix)]
pub use super::command_line::IntoStdioCommand;
#[cfg(doc)]
use crate::error::Error;
use crate::handler::{
    ElicitationHandler, Handlers, RootsHandler, SamplingHandler, TaskQueryHandler,
};
use crate::options::{WireDirection, WireTap};
#[cfg(unix)]
use crate::process::StderrTailConfig;
use crate::runtime::Runtime;
use crate::shared::Phase;

/// The options of a connection; finish with [`connect`](Self::connect) (a configured
/// server), [`stdio`](Self::stdio) (a child process), [`http`](Self::http) (a URL) or
/// [`over`](Self::over) (any byte stream pair).
///
/// On tokio it is `mcp_tokio::ClientBuilder` (this builder with `mcp_tokio::TokioRuntime`):
///
/// ```no_run
/// # async fn f() -> Result<(), mcp_tokio::Error> {
/// use std::time::Duration;
/// use mcp_tokio::ClientBuilder;
///
/// let client = ClientBuilder::new()
///     .name("everything")
///     .request_timeout(Some(Duration::from_secs(60)))
///     .stdio("npx -y @modelcontextprotocol/server-everything")
///     .await?;
/// # Ok(()) }
/// ```
pub struct ClientBuilder<R: Runtime> {
    runtime: Option<R>,
    client_info: Implementation,
    name: Option<Arc<str>>,
    handshake_timeout: Option<Option<Duration>>,
    request_timeout: Option<Option<Duration>>,
    protocol_version: Option<ProtocolVersion>,
    handlers: Handlers,
    #[cfg(unix)]
    shutdown: ShutdownConfig,
    #[cfg(unix)]
    stderr_tail: StderrTailConfig,
    stderr_lines: usize,
    clear_env: bool,
    notification_capacity: usize,
    max_message: Option<usize>,
    era_policy: Option<EraPolicy>,
    wire: Option<WireTap>,
    #[cfg(feature = "http")]
    http_trace: Option<crate::options::HttpTraceTap>,
    list_budget: ListBudget,
    validate_output: bool,
    max_outbound: Option<usize>,
    task_receiver_policy: Option<mcp_proto::task::receiver::ReceiverPolicy>,
    stall_timeout: Option<Option<Duration>>,
    /// Calls in flight and held past them ([`max_in_flight`](Self::max_in_flight)).
    in_flight: Option<(usize, usize)>,
    /// Capabilities declared instead of the handlers' ([`client_capabilities`](Self::client_capabilities)).
    capabilities: Option<mcp_proto::types::ClientCapabilities>,
    /// Filled with the connection's phase as soon as its driver runs, so that the manager can
    /// wait for a cancelled connection's process to be gone.
    pub(crate) phase_slot: Option<PhaseSlot>,
    #[cfg(feature = "http")]
    http: HttpOptions,
}

/// The HTTP options of a builder.
#[cfg(feature = "http")]
#[derive(Clone, Default)]
struct HttpOptions {
    mode: mcp_proto::http::TransportMode,
    headers: Vec<(String, String)>,
    client: crate::http::HttpClientConfig,
    close_timeout: Option<Duration>,
    await_listener: Option<Duration>,
    auth: Option<crate::auth::AuthProvider>,
}

/// Where [`ClientBuilder`] hands out the phase of a connection it started.
pub(crate) type PhaseSlot = Arc<std::sync::Mutex<Option<tokio::sync::watch::Receiver<Phase>>>>;

impl<R: Runtime> fmt::Debug for ClientBuilder<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("name", &self.name)
            .field("client_info", &self.client_info)
            .finish_non_exhaustive()
    }
}

impl<R: Runtime> Default for ClientBuilder<R> {
    fn default() -> Self {
        Self::new()
    }
}

impl<R: Runtime> ClientBuilder<R> {
    /// The defaults: client info `mcp-rs` with this crate's version, the session's default
    /// timeouts (60 s handshake, 30 s per request), no server-request handler (so no client
    /// capability declared), 2 s + 2 s shutdown graces, 20 stderr lines in errors, 1024
    /// buffered notifications per stream, the runtime found by [`Runtime::try_current`].
    #[must_use]
    pub fn new() -> Self {
        ClientBuilder {
            runtime: None,
            client_info: Implementation::new("mcp-rs", env!("CARGO_PKG_VERSION")),
            name: None,
            handshake_timeout: None,
            request_timeout: None,
            protocol_version: None,
            handlers: Handlers::default(),
            #[cfg(unix)]
            shutdown: ShutdownConfig::default(),
            #[cfg(unix)]
            stderr_tail: StderrTailConfig::default(),
            stderr_lines: 20,
            clear_env: false,
            notification_capacity: 1024,
            max_message: None,
            era_policy: None,
            wire: None,
            #[cfg(feature = "http")]
            http_trace: None,
            list_budget: ListBudget::default(),
            validate_output: true,
            max_outbound: None,
            task_receiver_policy: None,
            stall_timeout: None,
            in_flight: None,
            capabilities: None,
            phase_slot: None,
            #[cfg(feature = "http")]
            http: HttpOptions::default(),
        }
    }

    /// Runs the connection on `runtime` instead of the ambient one.
    #[must_use]
    pub fn runtime(mut self, runtime: R) -> Self {
        self.runtime = Some(runtime);
        self
    }

    /// The `clientInfo` sent in `initialize`.
    #[must_use]
    pub fn client_info(mut self, info: Implementation) -> Self {
        self.client_info = info;
        self
    }

    /// The server's name in errors and logs. Default: the configured name
    /// ([`connect`](Self::connect)); for [`stdio`](Self::stdio), the command line
    /// (`mcp demo-server`, the program's directory left out, cut with `…` past 60
    /// characters); for [`http`](Self::http), the URL without its secrets
    /// (`https://example.com:8443/mcp`: no user, password, query or fragment).
    #[must_use]
    pub fn name(mut self, name: impl Into<Arc<str>>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// How long the handshake may take (`None`: unlimited). Overrides a config's
    /// `startupTimeout`.
    #[must_use]
    pub fn handshake_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.handshake_timeout = Some(timeout);
        self
    }

    /// The timeout of calls that do not set their own (`None`: no deadline). Overrides a
    /// config's `timeout`.
    #[must_use]
    pub fn request_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.request_timeout = Some(timeout);
        self
    }

    /// The protocol version requested in `initialize` (default: the newest).
    #[must_use]
    pub fn protocol_version(mut self, version: ProtocolVersion) -> Self {
        self.protocol_version = Some(version);
        self
    }

    /// Whether tool results are checked against the tools' output schemas (default: on), as
    /// the spec asks of a client.
    ///
    /// When on, [`Client::list_tools`] compiles each listed tool's `outputSchema` once and
    /// keeps them until the next listing, or until the server sends
    /// `notifications/tools/list_changed` (which drops them). Then
    /// [`Client::call_tool`] / [`call_tool_with`](Client::call_tool_with) (and a task's
    /// result) fail with [`Error::OutputSchema`] when a tool that declared a schema returns
    /// a result that is not `isError` and whose `structuredContent` is missing or does not
    /// validate. Not checked: a tool the client never listed (call
    /// [`list_tools`](Client::list_tools) first), a tool whose schema does not compile (a
    /// warning is logged; external `$ref`s are never fetched), raw requests
    /// ([`Client::request_raw`]), and calls made with
    /// [`CallOptions::skip_output_check`](crate::CallOptions::skip_output_check).
    #[must_use]
    pub fn validate_output(mut self, enabled: bool) -> Self {
        self.validate_output = enabled;
        self
    }

    /// What one paginated list (`list_tools`, `list_resources`, ... over all pages) may cost
    /// before it fails with [`Error::ListBudget`] (default: [`ListBudget::default`], 64 MiB,
    /// 100 000 items, 10 000 pages).
    #[must_use]
    pub fn list_budget(mut self, budget: ListBudget) -> Self {
        self.list_budget = budget;
        self
    }

    /// How many bytes of messages may wait for the server to read them (default 8 MiB).
    /// Beyond it, the server's own requests (a flood of `ping`s, say) are dropped unanswered,
    /// with a warning, until it reads again; see [`stall_timeout`](Self::stall_timeout).
    #[must_use]
    pub fn max_outbound_bytes(mut self, bytes: usize) -> Self {
        self.max_outbound = Some(bytes);
        self
    }

    /// How long the server may leave a full outbound queue (see
    /// [`max_outbound_bytes`](Self::max_outbound_bytes)) unread before the connection is
    /// closed with [`CloseReason::Stalled`](mcp_proto::session::CloseReason::Stalled)
    /// (`None`: never; default 10 s).
    #[must_use]
    pub fn stall_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.stall_timeout = Some(timeout);
        self
    }

    /// How many calls may be in flight at once (default 65 536), and how many more may wait
    /// for room past them (default 1 048 576). A call past the cap waits its turn, in the order
    /// calls were made, and is sent as soon as one in flight completes; its timeout runs from
    /// the call, so the wait counts toward it, and dropping it while it waits leaves no trace
    /// (the server never hears of it). Past both, a call fails at once with
    /// [`Error::Usage`] (`TooManyInFlight`). A cap below 1 counts as 1.
    #[must_use]
    pub fn max_in_flight(mut self, in_flight: usize, waiting: usize) -> Self {
        // A cap of 0 would hold every call until it timed out: the least is 1.
        self.in_flight = Some((in_flight.max(1), waiting));
        self
    }

    /// Answers `roots/list` and declares the `roots` capability.
    #[must_use]
    pub fn roots_handler(mut self, handler: impl RootsHandler) -> Self {
        self.handlers.roots = Some(Arc::new(handler));
        self
    }

    /// Answers `sampling/createMessage` and declares the `sampling` capability.
    #[must_use]
    pub fn sampling_handler(mut self, handler: impl SamplingHandler) -> Self {
        self.handlers.sampling = Some(Arc::new(handler));
        self
    }

    /// Answers `elicitation/create` and declares the `elicitation` capability.
    #[must_use]
    pub fn elicitation_handler(mut self, handler: impl ElicitationHandler) -> Self {
        self.handlers.elicitation = Some(Arc::new(handler));
        self
    }

    /// How long a stdio server gets after its stdin is closed before `SIGTERM`, and after
    /// `SIGTERM` before `SIGKILL`.
    #[cfg(unix)]
    #[must_use]
    pub fn shutdown_graces(mut self, stdin_grace: Duration, term_grace: Duration) -> Self {
        self.shutdown = ShutdownConfig {
            stdin_grace,
            term_grace,
        };
        self
    }

    /// Limits of the stderr buffer of a stdio server, and how many of its last lines errors
    /// carry.
    #[cfg(unix)]
    #[must_use]
    pub fn stderr_tail(mut self, tail: StderrTailConfig, lines_in_errors: usize) -> Self {
        self.stderr_tail = tail;
        self.stderr_lines = lines_in_errors;
        self
    }

    /// Starts stdio servers with only their configured environment, not ours.
    #[must_use]
    pub fn clear_env(mut self, clear: bool) -> Self {
        self.clear_env = clear;
        self
    }

    /// Declares exactly `capabilities` in `initialize`, instead of those the registered
    /// handlers imply. For a client that speaks for another one (a proxy such as `mcp bridge`
    /// passes on its host's capabilities, `experimental` and unknown fields included, so the
    /// server sees the host as it is). Register a handler for each of sampling, elicitation
    /// and roots that is declared: the core answers a server request of a capability that is
    /// declared but has no handler with `-32601`.
    #[must_use]
    pub fn client_capabilities(
        mut self,
        capabilities: mcp_proto::types::ClientCapabilities,
    ) -> Self {
        self.capabilities = Some(capabilities);
        self
    }

    /// Declares the tasks extension (`io.modelcontextprotocol/tasks`, 2026-07-28): a server
    /// that offers it may then answer `tools/call` with a task. [`Client::call_tool`] waits for
    /// a task's result transparently (polling `tasks/get`, answering its input requests with
    /// the handlers); [`Client::call_tool_task`] hands out the [`TaskHandle`](crate::TaskHandle).
    #[must_use]
    pub fn tasks(mut self, enabled: bool) -> Self {
        self.handlers.tasks = enabled;
        self
    }

    /// Makes the client a task receiver (protocol 2025-11-25): a server may then send
    /// `sampling/createMessage` and `elicitation/create` as tasks, and the client answers it
    /// at once with a task id instead of making it wait for a person or a model.
    ///
    /// The client declares `tasks.requests.sampling.createMessage` (with a sampling handler),
    /// `tasks.requests.elicitation.create` (with an elicitation handler), `tasks.list` and
    /// `tasks.cancel`. A request that arrives with `params.task` is answered with a
    /// `CreateTaskResult` (status `working`; the requested ttl clamped to 1 s ..= 1 h, 10 min
    /// when none is asked; a suggested poll interval of 1 s), the same handler runs, and the
    /// server's `tasks/get`, `tasks/result` (held until the handler answers, then its result
    /// or error), `tasks/list` and `tasks/cancel` (which drops the handler's future) are
    /// answered by the client, which also sends `notifications/tasks/status` when a task
    /// ends. At most 64 tasks are kept; a task is forgotten when its ttl elapses (other bounds:
    /// [`task_receiver_policy`](Self::task_receiver_policy)). Requests without `params.task`
    /// are answered as before.
    ///
    /// Without this (the default), a request with `params.task` is answered directly, its
    /// `task` ignored, as the spec asks of a client that did not declare task support.
    ///
    /// ```no_run
    /// # async fn f(builder: mcp_tokio::ClientBuilder) -> Result<(), mcp_tokio::Error> {
    /// use mcp_tokio::types::ElicitResult;
    ///
    /// let client = builder
    ///     // A person may take minutes: the server polls the task instead of waiting.
    ///     .on_elicitation(|params| async move { Ok(ElicitResult::accept(params.default_content())) })
    ///     .task_receiver(true)
    ///     .stdio("npx -y @modelcontextprotocol/server-everything")
    ///     .await?;
    /// # Ok(()) }
    /// ```
    #[must_use]
    pub fn task_receiver(mut self, enabled: bool) -> Self {
        self.handlers.task_receiver = enabled;
        self
    }

    /// Lets the sampling and elicitation handlers make the client's tasks themselves, for a
    /// client that forwards the server's requests to a host of its own (a bridge whose host
    /// declared `tasks`): a request with `params.task` reaches its handler as it came (the
    /// handler answers with the host's `CreateTaskResult`), and the server's `tasks/get`,
    /// `tasks/result`, `tasks/list` and `tasks/cancel` reach `handler`, whose answers go to
    /// the server as they are. The client keeps no task table then, so each task exists once
    /// (the host's), and its `notifications/tasks/status` is the host's to send (with
    /// [`Client::notify`](crate::Client::notify)). Declares `tasks` as
    /// [`task_receiver`](Self::task_receiver) does, unless
    /// [`client_capabilities`](Self::client_capabilities) says otherwise.
    #[must_use]
    pub fn host_task_queries(mut self, handler: impl TaskQueryHandler) -> Self {
        self.handlers.task_queries = Some(Arc::new(handler));
        self
    }

    /// The bounds of the client's task table when it is a task receiver (see
    /// [`task_receiver`](Self::task_receiver)): how many tasks it keeps, the ttl granted
    /// (default, shortest, longest), the poll interval suggested, the `tasks/list` page size
    /// and how many `tasks/result` may wait for one task.
    ///
    /// ```no_run
    /// # fn f(builder: mcp_tokio::ClientBuilder) -> mcp_tokio::ClientBuilder {
    /// use std::time::Duration;
    /// use mcp_tokio::mcp_proto::task::receiver::ReceiverPolicy;
    ///
    /// let mut policy = ReceiverPolicy::default();
    /// policy.max_tasks = 8;
    /// policy.max_ttl = Duration::from_secs(15 * 60);
    /// builder.task_receiver(true).task_receiver_policy(policy)
    /// # }
    /// ```
    #[must_use]
    pub fn task_receiver_policy(
        mut self,
        policy: mcp_proto::task::receiver::ReceiverPolicy,
    ) -> Self {
        self.task_receiver_policy = Some(policy);
        self
    }

    /// How the protocol era is chosen (default: [`EraPolicy::Initialize`]). Over stdio,
    /// [`EraPolicy::Auto`] works with servers that answer the `server/discover` probe (with a
    /// result or an error), stay silent until the probe timeout, or exit on the probe (the
    /// driver then starts the same command again and goes straight to `initialize`). Over
    /// [`over`](Self::over) a stream that ends on the probe cannot be reopened: the
    /// connection fails.
    ///
    /// Auto is not the default because it costs legacy servers that do not answer the probe
    /// promptly: one that ignores unknown requests before `initialize` costs the whole
    /// `probe_timeout` on every connect (the driver's scripted test servers went from ~1 s to
    /// ~70 s for their suite), and an HTTP server that answers the probe with a 5xx fails the
    /// connection, since the spec forbids falling back on 5xx. Servers that answer with an
    /// error (server-everything, the Python SDK 1.x, both -32601 / -32602) fall back at once;
    /// choose Auto for those, or when the server is known to be 2026-07-28.
    #[must_use]
    pub fn era_policy(mut self, policy: EraPolicy) -> Self {
        self.era_policy = Some(policy);
        self
    }

    /// Calls `tap` with the bytes of every message as they cross the transport (a wire
    /// trace; see [`WireDirection`] for how they are split). It runs on the driver task:
    /// keep it quick and never block in it.
    #[must_use]
    pub fn on_wire(mut self, tap: impl Fn(WireDirection, &[u8]) + Send + Sync + 'static) -> Self {
        self.wire = Some(Arc::new(tap));
        self
    }

    /// Calls `trace` with every step of every HTTP exchange: request (method, URL, headers,
    /// body), response head, body chunks, end, failure or abort (see [`HttpTrace`](crate::HttpTrace)).
    /// For a trace that shows HTTP itself (headers, SSE framing); [`on_wire`](Self::on_wire)
    /// stays the simpler tap. It runs on the driver task: keep it quick and never block in it.
    /// Values are unmasked: mask credentials before printing them.
    #[cfg(feature = "http")]
    #[must_use]
    pub fn on_http_trace(
        mut self,
        trace: impl Fn(crate::options::HttpTrace<'_>) + Send + Sync + 'static,
    ) -> Self {
        self.http_trace = Some(Arc::new(trace));
        self
    }

    /// How many notifications each [`Notifications`](crate::Notifications) stream buffers
    /// before a slow reader is told it lagged.
    #[must_use]
    pub fn notification_capacity(mut self, capacity: usize) -> Self {
        self.notification_capacity = capacity.max(1);
        self
    }

    /// The largest message accepted from the server, in bytes: a stdio line, an HTTP JSON
    /// body, an SSE event (defaults: 16 MiB, 4 MiB and 16 MiB). Bigger ones are never
    /// buffered whole, and the connection goes on: a line or SSE event is skipped with a
    /// diagnostic (a call it would have answered then ends by its timeout); a JSON body fails
    /// its call at once with [`Error::InvalidResponse`](crate::Error::InvalidResponse). Raise
    /// it for servers that return large resources; lower it to bound memory per connection.
    #[must_use]
    pub fn max_message_size(mut self, bytes: usize) -> Self {
        self.max_message = Some(bytes);
        self
    }

    /// Over HTTP: which transport to use (default [`TransportMode::Auto`]: Streamable HTTP,
    /// falling back to legacy HTTP+SSE when the initialize POST is refused with 400, 404 or
    /// 405). A config's `type` sets it too.
    ///
    /// [`TransportMode::Auto`]: mcp_proto::http::TransportMode::Auto
    #[cfg(feature = "http")]
    #[must_use]
    pub fn http_transport(mut self, mode: mcp_proto::http::TransportMode) -> Self {
        self.http.mode = mode;
        self
    }

    /// Over HTTP: a header sent with every request to the server's origin (never to another
    /// origin), for example `Authorization: Bearer ...` or an API key. Values are never
    /// logged. A config's `headers` are added after these.
    #[cfg(feature = "http")]
    #[must_use]
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.http.headers.push((name.into(), value.into()));
        self
    }

    /// Over HTTP: how long establishing a connection (TCP and TLS) may take. There is no
    /// whole-request timeout (it would cut SSE streams): requests have the session's deadlines.
    #[cfg(feature = "http")]
    #[must_use]
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.http.client.connect_timeout = Some(timeout);
        self
    }

    /// Over HTTP: trusts the PEM certificate(s) in `pem` as roots, in addition to the system's.
    #[cfg(feature = "http")]
    #[must_use]
    pub fn root_certificate_pem(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.http.client.root_certificates.push(pem.into());
        self
    }

    /// Over HTTP: how long the `DELETE` that ends the session may take on close (default 5 s).
    #[cfg(feature = "http")]
    #[must_use]
    pub fn close_timeout(mut self, timeout: Duration) -> Self {
        self.http.close_timeout = Some(timeout);
        self
    }

    /// Over Streamable HTTP: the connection is ready (`connect` returns) only once the GET
    /// listener for server-initiated messages is open, refused or failed, waiting at most
    /// `wait`. Use it when messages the server sends on the listener about the first
    /// requests must not be missed (a server sends them there only if the listener is
    /// already open). Costs about one round trip at connect; off by default.
    #[cfg(feature = "http")]
    #[must_use]
    pub fn await_listener(mut self, wait: Duration) -> Self {
        self.http.await_listener = Some(wait);
        self
    }

    /// OAuth 2.1 for the HTTP server: every request carries the provider's bearer token, a
    /// 401 runs the authorization and retries once, a 403 `insufficient_scope` steps up (see
    /// [`crate::auth`]). Without it a 401 is an error ([`Error::http_status`]).
    #[cfg(feature = "http")]
    #[must_use]
    pub fn auth(mut self, provider: crate::auth::AuthProvider) -> Self {
        self.http.auth = Some(provider);
        self
    }
}
