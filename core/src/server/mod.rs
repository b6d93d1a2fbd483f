//! The MCP server session: the other side of [`Session`](crate::session::Session), in the same
//! shape. It answers `initialize`, hands the client's requests and notifications to its host
//! as events and sends the host's answers, sends the host's own requests to the client with
//! deadlines, and closes, all without I/O.
//!
//! [`ServerSession`] takes framed messages; [`stdio::StdioServerConnection`] adds the line
//! framing of a stdio server; [`http::HttpServer`] serves a table of sessions over Streamable
//! HTTP (session ids, JSON or SSE answers, the GET stream, resumption, DELETE, the `Origin`
//! and bearer checks, a stateless mode). Every protocol version the crate knows is spoken
//! (restrict them with [`ServerConfig::versions`]): `initialize` with version negotiation
//! (2024-11-05 to 2025-11-25), and `server/discover` with the per-request `_meta` envelope
//! (2026-07-28; see [`RequestEnvelope`]). A session configured without the 2026 era answers
//! `server/discover` with `-32601`, so a client that probes with it falls back to
//! `initialize`.
//!
//! # Example: a stdio server's loop
//!
//! ```
//! use mcp_proto::server::stdio::StdioServerConnection;
//! use mcp_proto::server::{Event, ServerConfig};
//! use mcp_proto::types::{Implementation, ServerCapabilities, ToolsCapability};
//! use std::time::Instant;
//!
//! let config = ServerConfig::new(Implementation::new("echo", "1.0")).with_capabilities(
//!     ServerCapabilities { tools: Some(ToolsCapability::default()), ..Default::default() },
//! );
//! let now = Instant::now();
//! let mut conn = StdioServerConnection::new(config, now);
//!
//! // What a client writes: the handshake, then a tool call (bytes may be cut anywhere).
//! let input = concat!(
//!     r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#, "\n",
//!     r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#, "\n",
//!     r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}"#, "\n",
//! );
//! conn.handle_bytes(now, input.as_bytes());
//!
//! // The drain rule: events (answered here at once), then what to write.
//! while let Some(event) = conn.poll_event() {
//!     if let Event::Request { id, method, .. } = event {
//!         assert_eq!(method, "tools/call");
//!         let result = serde_json::json!({"content": [{"type": "text", "text": "hi"}]});
//!         let result = mcp_proto::jsonrpc::to_raw(&result).unwrap();
//!         conn.session_mut().respond(now, id, result).unwrap();
//!     }
//! }
//! let mut stdout = Vec::new();
//! while conn.poll_transmit(&mut stdout).is_some() {}
//! let lines: Vec<&str> = std::str::from_utf8(&stdout).unwrap().lines().collect();
//! assert!(lines[0].contains(r#""protocolVersion":"2025-06-18""#));
//! assert_eq!(lines[1], r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"text":"hi","type":"text"}]}}"#);
//! // A real loop would now sleep until `conn.poll_timeout()` or the next input.
//! ```

use std::borrow::Cow;
use std::collections::VecDeque;
use std::fmt;

use serde_json::value::RawValue;

use crate::jsonrpc::{self, ErrorObject, Id};
use crate::rpc::clock::{ActiveClock, DeadlineIndex, nanos};
use crate::session::{
    CloseReason, CounterMap, Deadline, ProtocolVersion, RawParams, RequestError, RequestOptions,
    meta, server_requests,
};
use crate::time::{Duration, Instant};
use crate::types::{ClientCapabilities, Implementation, LoggingLevel};

pub use crate::rpc::{MessageKind, Outgoing, RequestHandle};

mod client_requests;
mod config;
mod deferred;
mod dispatch;
mod error;
mod event;
mod handshake;
pub mod http;
mod limits;
mod listen;
mod meta_presence;
mod modern;
mod notify;
mod outgoing;
mod progress_as_written;
pub mod stdio;

#[cfg(test)]
mod tests;

pub use config::ServerConfig;
pub use deferred::{InitializeAnswer, answered_version};
pub use error::UsageError;
pub use event::{Diagnostic, Event};
pub use handshake::negotiate;
pub use listen::{ListenEnd, honoured_subset};
pub use modern::RequestEnvelope;
pub use notify::ListChanged;

use client_requests::ClientRequests;
use limits::Limits;
use listen::Listens;
use outgoing::{OutboundQueue, Pending, Queued};

/// The host's token for one client request, used to answer it. Not the client's JSON-RPC id
/// (two clients' ids, or an id reused after its answer, never confuse the host).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClientRequestId(pub(crate) u64);

impl ClientRequestId {
    /// The token as a number (unique within a session), for logs and maps.
    #[must_use]
    pub fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Display for ClientRequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "client#{}", self.0)
    }
}

/// Where the server session is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerState {
    /// Waiting for `initialize`: only `ping` is answered, other requests get an error.
    AwaitingInitialize,
    /// `initialize` answered; the client's requests flow, the server's own wait for
    /// `notifications/initialized` (except `ping`).
    Initializing,
    /// `notifications/initialized` received: everything flows.
    Ready,
    /// Protocol version 2026-07-28: a request with a valid per-request envelope arrived, and
    /// every request must carry one ([`Event::Request`]'s `envelope`). There is no handshake;
    /// `initialize` is refused, and the server sends no requests of its own.
    PerRequest,
    /// Over: every server-to-client request has completed; commands return
    /// [`UsageError::Closed`].
    Closed,
}

/// What the session learned from the client's `initialize`.
#[derive(Clone, Debug)]
struct ClientState {
    version: ProtocolVersion,
    info: Implementation,
    capabilities: ClientCapabilities,
}

/// One MCP server session, transport-neutral and deterministic.
///
/// The session is fed framed JSON-RPC messages from one client and clock ticks, and produces
/// messages to send, events for the host, and its next deadline. It never reads a clock,
/// never does I/O and never panics on client input. Its methods fall in four groups, as in
/// quinn-proto and as in the client's [`Session`](crate::session::Session):
///
/// - **(A) getters**: [`state`](Self::state), [`is_closed`](Self::is_closed),
///   [`config`](Self::config), [`era`](Self::era), [`protocol_version`](Self::protocol_version),
///   [`initialize_pending`](Self::initialize_pending),
///   [`client_info`](Self::client_info), [`client_capabilities`](Self::client_capabilities),
///   [`log_level`](Self::log_level), [`open_client_requests`](Self::open_client_requests),
///   [`in_flight`](Self::in_flight), [`wire_id`](Self::wire_id),
///   [`listens`](Self::listens), [`open_listens`](Self::open_listens).
/// - **(B) inputs**: [`handle_message`](Self::handle_message) (one framed message or batch;
///   [`handle_message_str`](Self::handle_message_str) when it is known to be UTF-8),
///   [`handle_timeout`](Self::handle_timeout), [`handle_transport_closed`](Self::handle_transport_closed).
/// - **(C) commands**: a deferred `initialize` ([`accept_initialize`](Self::accept_initialize),
///   [`refuse_initialize`](Self::refuse_initialize)); answers to the client's requests
///   ([`respond`](Self::respond), [`respond_error`](Self::respond_error),
///   [`notify_progress`](Self::notify_progress),
///   [`notify_progress_as_written`](Self::notify_progress_as_written));
///   the server's own requests ([`send_request`](Self::send_request) /
///   [`request`](Self::request) return a [`RequestHandle`], [`cancel`](Self::cancel));
///   notifications ([`notify`](Self::notify), [`notify_list_changed`](Self::notify_list_changed),
///   [`notify_resource_updated`](Self::notify_resource_updated), [`log`](Self::log),
///   [`log_for`](Self::log_for)); 2026-07-28 listens ([`close_listen`](Self::close_listen));
///   [`close`](Self::close). Misuse returns a [`UsageError`] at once.
/// - **(D) outputs**: [`poll_transmit`](Self::poll_transmit), [`poll_event`](Self::poll_event),
///   [`poll_timeout`](Self::poll_timeout).
///
/// **The drain invariant.** After every (B) or (C) call, drain `poll_transmit` until `None`,
/// drain `poll_event` until `None`, then read `poll_timeout` and sleep until that instant (or
/// the next input). `handle_timeout` called early is a no-op; right after it returns,
/// `poll_timeout` is `None` or later than the `now` it was given.
///
/// **Guarantees.** Every client request handed over as [`Event::Request`] is answered at most
/// once (a second answer is a [`UsageError::NotOpen`]); the session answers `initialize`,
/// `ping`, `logging/setLevel` and every request it refuses itself (before `initialize`, past
/// the open-request limit, a method of a capability the server did not declare: `-32601`). Every [`RequestHandle`]
/// completes exactly once with [`Event::Completed`]: a result, a remote error, a timeout, a
/// cancellation, or the close. [`Event::Closed`] comes once, after the last completion. The
/// tables and the outbound queue are bounded by [`ServerConfig`].
///
/// **Listens (2026-07-28).** The session answers `subscriptions/listen` itself (acknowledged
/// first, with the subset the capabilities allow) and keeps it open; the host's
/// `list_changed` and `resources/updated` notifications then go to each listen that asked,
/// tagged with its `subscriptionId`, and nowhere when none did. Every
/// [`Event::ListenOpened`] is followed by exactly one [`Event::ListenClosed`], before
/// [`Event::Closed`]. See the `listen` module's rules in [`ListenEnd`].
#[derive(Debug)]
pub struct ServerSession {
    config: ServerConfig,
    state: ServerState,
    client: Option<ClientState>,
    /// The version of the latest 2026 request (the era has no session-wide version).
    modern_version: Option<ProtocolVersion>,
    log_level: Option<LoggingLevel>,
    /// The counter of server-to-client handles (each one's wire id too).
    next_id: u64,
    pending: CounterMap<RequestHandle, Pending>,
    deadlines: DeadlineIndex,
    clock: ActiveClock,
    client_requests: ClientRequests,
    /// The open 2026-07-28 listens.
    listens: Listens,
    outbound: OutboundQueue,
    events: VecDeque<Event>,
    limits: Limits,
    /// A deferred `initialize` waiting for the host's answer.
    deferred: Option<deferred::PendingInitialize>,
}

impl ServerSession {
    /// Starts a session at `now`, waiting for the client's `initialize`.
    #[must_use]
    pub fn new(config: ServerConfig, now: Instant) -> Self {
        let limits = Limits {
            handshake_deadline: config
                .handshake_timeout
                .map(|after| crate::time::saturating_add(now, after)),
            ..Limits::default()
        };
        ServerSession {
            limits,
            config,
            state: ServerState::AwaitingInitialize,
            client: None,
            modern_version: None,
            log_level: None,
            next_id: 1,
            pending: CounterMap::default(),
            deadlines: DeadlineIndex::default(),
            clock: ActiveClock::new(now),
            client_requests: ClientRequests::default(),
            listens: Listens::default(),
            outbound: OutboundQueue::default(),
            events: VecDeque::new(),
            deferred: None,
        }
    }

    // ---- (A) getters -------------------------------------------------------------------

    /// Where the session is in its life.
    #[must_use]
    pub fn state(&self) -> ServerState {
        self.state
    }

    /// Whether the session is closed.
    #[must_use]
    pub fn is_closed(&self) -> bool {
        self.state == ServerState::Closed
    }

    /// The configuration it was created with.
    #[must_use]
    pub fn config(&self) -> &ServerConfig {
        &self.config
    }

    /// The negotiated protocol version, once `initialize` was answered; in the 2026 era
    /// ([`ServerState::PerRequest`]) the version of the latest request.
    #[must_use]
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        self.client
            .as_ref()
            .map(|c| c.version)
            .or(self.modern_version)
    }

    /// The era the client chose: `Initialize` once `initialize` was answered, `Discover`
    /// once a request with a valid 2026 envelope arrived, `None` before either.
    #[must_use]
    pub fn era(&self) -> Option<crate::session::Era> {
        match self.state {
            ServerState::PerRequest => Some(crate::session::Era::Discover),
            _ => self
                .client
                .as_ref()
                .map(|_| crate::session::Era::Initialize),
        }
    }

    /// The client's `clientInfo`, once `initialize` was answered (in the 2026 era each
    /// request carries its own: see [`RequestEnvelope`]).
    #[must_use]
    pub fn client_info(&self) -> Option<&Implementation> {
        self.client.as_ref().map(|c| &c.info)
    }

    /// The client's capabilities, once `initialize` was answered (in the 2026 era each
    /// request carries its own: see [`RequestEnvelope`]).
    #[must_use]
    pub fn client_capabilities(&self) -> Option<&ClientCapabilities> {
        self.client.as_ref().map(|c| &c.capabilities)
    }

    /// The level the client set with `logging/setLevel`, if it did.
    #[must_use]
    pub fn log_level(&self) -> Option<LoggingLevel> {
        self.log_level
    }

    /// How many client requests the host has not answered yet.
    #[must_use]
    pub fn open_client_requests(&self) -> usize {
        self.client_requests.len()
    }

    /// How many server-to-client requests are pending.
    #[must_use]
    pub fn in_flight(&self) -> usize {
        self.pending.len()
    }

    /// The JSON-RPC id the client sent the open request `id` with: for a host's logs and
    /// messages that must name the request as the client knows it. `None` once it was
    /// answered or cancelled (or was never handed to the host).
    #[must_use]
    pub fn wire_id(&self, id: ClientRequestId) -> Option<&Id> {
        self.client_requests
            .get(id)
            .map(|open| &open.wire)
            .or_else(|| self.listens.wire(id))
    }

    // ---- (B) inputs --------------------------------------------------------------------

    // `handle_message` and `handle_message_str` are with the routing, in `dispatch.rs`.

    /// Completes every server-to-client request whose deadline is due with
    /// [`RequestError::Timeout`] (and tells the client with `notifications/cancelled`), and
    /// closes the session when a limit is due: no `initialize` within
    /// [`ServerConfig::handshake_timeout`]
    /// ([`CloseReason::InitializeNotReceived`]), or a full outbound queue nobody took from
    /// for [`ServerConfig::stall_timeout`] ([`CloseReason::ClientStalled`]). Calling it early
    /// is a no-op.
    pub fn handle_timeout(&mut self, now: Instant) {
        if !self.is_closed() {
            self.fire_deadlines(now);
        }
        if !self.is_closed() {
            self.fire_limits(now);
        }
        self.track_backlog(now);
    }

    /// The transport is gone (stdin closed, the HTTP session deleted). Every pending
    /// server-to-client request completes with [`RequestError::Closed`], then
    /// [`Event::Closed`]; what was queued is dropped.
    pub fn handle_transport_closed(&mut self, _now: Instant, detail: Option<String>) {
        if !self.is_closed() {
            self.outbound.clear();
            self.close_with(CloseReason::TransportClosed { detail });
        }
    }

    // ---- (C) commands ------------------------------------------------------------------

    /// Answers the client request `id` with `result`, exactly once. The answer to a 2026
    /// request gets `"resultType": "complete"` unless `result` has a `resultType` (a host
    /// answering `"input_required"` sets it), the server's info in
    /// `_meta["io.modelcontextprotocol/serverInfo"]`, and on the list methods and
    /// `resources/read` the required cache hints unless the host set them (`ttlMs: 0`,
    /// `cacheScope: "private"`).
    ///
    /// Errors: [`UsageError::NotOpen`] when it was answered already or the client cancelled
    /// it (the answer is dropped, as the spec asks: a race the host can ignore);
    /// [`UsageError::Closed`].
    pub fn respond(
        &mut self,
        now: Instant,
        id: ClientRequestId,
        result: Box<RawValue>,
    ) -> Result<(), UsageError> {
        self.answer(id, Ok(result))?;
        self.track_backlog(now);
        Ok(())
    }

    /// Answers the client request `id` with a JSON-RPC error, exactly once (the same rules as
    /// [`respond`](Self::respond)).
    pub fn respond_error(
        &mut self,
        now: Instant,
        id: ClientRequestId,
        error: ErrorObject,
    ) -> Result<(), UsageError> {
        self.answer(id, Err(error))?;
        self.track_backlog(now);
        Ok(())
    }

    fn answer(
        &mut self,
        id: ClientRequestId,
        result: Result<Box<RawValue>, ErrorObject>,
    ) -> Result<(), UsageError> {
        if self.is_closed() {
            return Err(UsageError::Closed);
        }
        let open = self
            .client_requests
            .remove(id)
            .ok_or(UsageError::NotOpen(id))?;
        let result = match result {
            Ok(raw) if open.modern => Ok(self.complete_modern_result(raw, open.cacheable)),
            other => other,
        };
        // An answer is never refused for a full queue: it ends a request the client waits on,
        // and each open request is answered once (the table bounds them).
        self.outbound.push_back(Queued::Response {
            id: open.wire,
            result,
        });
        Ok(())
    }

    /// Sends `notifications/progress` for the client request `id`, which carried a progress
    /// token. `progress` must be finite and above the last value sent for it.
    ///
    /// Errors: [`UsageError::NotOpen`], [`UsageError::NoProgressToken`],
    /// [`UsageError::ProgressNotIncreasing`], [`UsageError::QueueFull`], [`UsageError::Closed`].
    pub fn notify_progress(
        &mut self,
        now: Instant,
        id: ClientRequestId,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
    ) -> Result<(), UsageError> {
        #[derive(serde::Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Progress<'a> {
            progress_token: &'a Id,
            progress: f64,
            #[serde(skip_serializing_if = "Option::is_none")]
            total: Option<f64>,
            #[serde(skip_serializing_if = "Option::is_none")]
            message: Option<&'a str>,
        }
        self.queue_progress(now, id, progress, total, |token| {
            jsonrpc::to_raw(&Progress {
                progress_token: token,
                progress,
                total,
                message,
            })
            .map_err(|e| UsageError::InvalidParams(e.to_string()))
        })
    }

    /// Queues a `notifications/progress` for the client's request `id` with the params `build`
    /// makes from its token, once the rules of [`notify_progress`](Self::notify_progress) hold
    /// (room in the queue, the request open with a token, `progress` finite and increasing,
    /// `total` finite): the one place both progress entry points check and queue.
    fn queue_progress(
        &mut self,
        now: Instant,
        id: ClientRequestId,
        progress: f64,
        total: Option<f64>,
        build: impl FnOnce(&Id) -> Result<Box<RawValue>, UsageError>,
    ) -> Result<(), UsageError> {
        self.check_room()?;
        let open = self
            .client_requests
            .get_mut(id)
            .ok_or(UsageError::NotOpen(id))?;
        let token = open
            .progress_token
            .as_ref()
            .ok_or(UsageError::NoProgressToken(id))?;
        let increases = open.last_progress.is_none_or(|last| progress > last);
        if !progress.is_finite() || !increases || total.is_some_and(|t| !t.is_finite()) {
            return Err(UsageError::ProgressNotIncreasing { progress });
        }
        let params = build(token)?;
        open.last_progress = Some(progress);
        self.outbound.push_back(Queued::Notification {
            method: Cow::Borrowed("notifications/progress"),
            params: Some(params),
        });
        self.track_backlog(now);
        Ok(())
    }

    /// Sends a request to the client with raw params. Its deadline (from `options`, else
    /// [`ServerConfig::request_timeout`]) starts now; with
    /// [`RequestOptions::progress`] a progress token is added and the client's progress
    /// arrives as [`Event::Progress`]. The request completes exactly once
    /// ([`Event::Completed`]).
    ///
    /// A method of the client's known kinds (`sampling/createMessage`, `elicitation/create`,
    /// `roots/list`, `tasks/*`) needs the client's capability for it; `ping` and methods the
    /// session does not know need none. Before `notifications/initialized`, only `ping` may be
    /// sent. In the 2026 era the server sends no requests (it asks for input with an
    /// `input_required` result instead).
    ///
    /// Errors: [`UsageError::Closed`], [`UsageError::NotReady`], [`UsageError::NotInEra`],
    /// [`UsageError::CapabilityNotDeclared`], [`UsageError::ReservedMethod`] (`initialize`),
    /// [`UsageError::ZeroTimeout`], [`UsageError::TooManyInFlight`], [`UsageError::QueueFull`],
    /// [`UsageError::InvalidParams`] when progress is asked for and params are not an object.
    pub fn send_request(
        &mut self,
        now: Instant,
        method: impl Into<Cow<'static, str>>,
        params: Option<RawParams>,
        options: RequestOptions,
    ) -> Result<RequestHandle, UsageError> {
        let method = method.into();
        self.check_room()?;
        if method == "initialize" || method.starts_with("notifications/") {
            return Err(UsageError::ReservedMethod(method.into_owned()));
        }
        if self.state == ServerState::PerRequest {
            return Err(UsageError::NotInEra {
                method: method.into_owned(),
            });
        }
        if method != "ping" && self.state != ServerState::Ready {
            return Err(UsageError::NotReady {
                method: method.into_owned(),
            });
        }
        let declared = match (
            server_requests::kind_of(&method),
            self.client_capabilities(),
        ) {
            (Some(kind), Some(capabilities)) => (kind.declared)(capabilities),
            (Some(kind), None) => kind.method == "ping",
            (None, _) => true,
        };
        if !declared {
            return Err(UsageError::CapabilityNotDeclared {
                method: method.into_owned(),
            });
        }
        self.check_version(&method)?;
        let timeout = match options.deadline {
            Deadline::SessionDefault => self.config.request_timeout,
            Deadline::Never => None,
            Deadline::After(d) => Some(d),
        };
        if timeout == Some(Duration::ZERO) || options.max_total == Some(Duration::ZERO) {
            return Err(UsageError::ZeroTimeout);
        }
        if self.pending.len() >= self.config.max_in_flight {
            return Err(UsageError::TooManyInFlight {
                limit: self.config.max_in_flight,
            });
        }
        let handle = RequestHandle(self.next_id);
        let params = if options.progress {
            Some(
                meta::with_progress_token(params.as_ref().map(RawParams::get), handle.0)
                    .map_err(UsageError::InvalidParams)?
                    .into(),
            )
        } else {
            params
        };
        self.next_id += 1;
        let active = nanos(self.clock.active(now));
        let pending = Pending {
            method,
            params,
            sent: false,
            progress: options.progress,
            timeout: timeout.and_then(|t| std::num::NonZeroU64::new(nanos(t))),
            max_total: options
                .max_total
                .and_then(|t| std::num::NonZeroU64::new(nanos(t))),
            issued_at: active,
            deadline: None,
        };
        let deadline = pending.deadline_after(active).map(|(at, _)| at);
        self.pending.insert(handle, pending);
        self.arm(handle, deadline);
        self.outbound.push_back(Queued::Request(handle));
        self.track_backlog(now);
        Ok(handle)
    }

    /// Sends a typed request (see [`send_request`](Self::send_request) for the rules); decode
    /// the result in the caller's type: `raw.decode::<R::Result>()`.
    pub fn request<R: crate::types::Request>(
        &mut self,
        now: Instant,
        params: &R::Params,
        options: RequestOptions,
    ) -> Result<RequestHandle, UsageError> {
        let params =
            RawParams::for_request(params).map_err(|e| UsageError::InvalidParams(e.to_string()))?;
        self.send_request(now, R::METHOD, params, options)
    }

    /// Cancels a server-to-client request: it completes with [`RequestError::Cancelled`] and,
    /// if the client has seen it, the client is sent `notifications/cancelled`. A late answer
    /// is reported as a diagnostic.
    ///
    /// Returns [`UsageError::UnknownRequest`] when it already completed (a race the host can
    /// ignore).
    pub fn cancel(
        &mut self,
        now: Instant,
        handle: RequestHandle,
        reason: Option<String>,
    ) -> Result<(), UsageError> {
        if !self.pending.contains_key(&handle) {
            return Err(UsageError::UnknownRequest(handle));
        }
        let notice = reason.clone();
        self.finish(
            handle,
            Err(RequestError::Cancelled { reason }),
            Some(notice.as_deref()),
        );
        self.track_backlog(now);
        Ok(())
    }

    /// Closes the session: every open listen is answered with its `complete` result
    /// ([`Event::ListenClosed`]), every pending server-to-client request completes with
    /// [`RequestError::Closed`]`(`[`CloseReason::Local`]`)`, then [`Event::Closed`] comes.
    /// Messages already queued (answers, say) can still be drained with `poll_transmit`, so a
    /// transport may flush them before it shuts down. Idempotent.
    pub fn close(&mut self, _now: Instant) {
        if !self.is_closed() {
            self.complete_listens();
            self.close_with(CloseReason::Local);
        }
    }

    fn close_with(&mut self, reason: CloseReason) {
        let mut handles: Vec<RequestHandle> = self.pending.keys().copied().collect();
        handles.sort_unstable();
        for handle in handles {
            self.finish(handle, Err(RequestError::Closed(reason.clone())), None);
        }
        self.deadlines.clear();
        self.client_requests.clear();
        self.drop_listens();
        self.deferred = None;
        self.limits = Limits::default();
        self.state = ServerState::Closed;
        self.events.push_back(Event::Closed { reason });
    }

    /// Refuses a host command when closed or when the client is not reading.
    fn check_room(&self) -> Result<(), UsageError> {
        if self.is_closed() {
            return Err(UsageError::Closed);
        }
        if self.outbound_full() {
            return Err(UsageError::QueueFull {
                limit: self.config.max_outbound_bytes,
            });
        }
        Ok(())
    }

    fn outbound_full(&self) -> bool {
        self.outbound.bytes() >= self.config.max_outbound_bytes
    }

    // ---- (D) outputs -------------------------------------------------------------------

    /// The next message to send: its bytes are appended to `buf` (one compact JSON object,
    /// no newline; the stdio framing adds it) and its description is returned.
    pub fn poll_transmit(&mut self, buf: &mut Vec<u8>) -> Option<Outgoing> {
        self.poll_transmit_answering(buf).map(|(out, _)| out)
    }

    /// [`poll_transmit`](Self::poll_transmit), with the id of the client's request an answer
    /// answers (`None` for other messages and for an answer to an unreadable id): the HTTP
    /// server routes answers by it without reading their bytes again.
    pub(crate) fn poll_transmit_answering(
        &mut self,
        buf: &mut Vec<u8>,
    ) -> Option<(Outgoing, Option<Id>)> {
        let out = self.next_transmit(buf)?;
        self.outbound_pulled();
        Some(out)
    }

    fn next_transmit(&mut self, buf: &mut Vec<u8>) -> Option<(Outgoing, Option<Id>)> {
        while let Some(item) = self.outbound.pop_front() {
            match item {
                Queued::Request(handle) => {
                    // A request cancelled or timed out before it was sent is never sent.
                    let Some(p) = self.pending.get_mut(&handle) else {
                        continue;
                    };
                    p.sent = true;
                    let params = p.params.take();
                    jsonrpc::encode_request_text(
                        buf,
                        &Id::from(handle.0),
                        &p.method,
                        params.as_ref().map(RawParams::get),
                    );
                    let out = Outgoing {
                        kind: MessageKind::Request,
                        request: Some(handle),
                        method: Some(p.method.clone()),
                    };
                    return Some((out, None));
                }
                Queued::Notification { method, params } => {
                    return Some((Outgoing::notification(buf, method, params.as_deref()), None));
                }
                Queued::Response { id, result } => {
                    return Some((Outgoing::response(buf, &id, &result), Some(id)));
                }
                Queued::UnidentifiedError(error) => {
                    return Some((Outgoing::unidentified_error(buf, &error), None));
                }
            }
        }
        None
    }

    /// The next event, in the order things happened.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// The earliest instant at which [`handle_timeout`](Self::handle_timeout) has work: the
    /// earliest deadline of a server-to-client request, the handshake deadline, or the stall
    /// deadline. `None` when none is armed or once closed.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        if self.is_closed() {
            return None;
        }
        let request = self
            .deadlines
            .earliest()
            .and_then(|at| self.clock.instant_of(Duration::from_nanos(at)));
        match (request, self.limits_timeout()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}
