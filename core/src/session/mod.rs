//! The MCP client session: handshake, pending requests, deadlines, cancellation, progress,
//! server-to-client requests and close, independent of any transport.
//!
//! See [`Session`] for the method groups and the run loop.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::fmt;

use serde_json::value::RawValue;

use crate::jsonrpc::{self, ErrorObject, Id};
use crate::time::{Duration, Instant};
use crate::types::{Implementation, ServerCapabilities};

mod admission;
mod cache;
mod completion;
mod config;
mod detached;
mod dispatch;
mod envelope;
mod error;
mod event;
mod handshake;
mod inbound;
mod listen;
pub(crate) mod meta;
mod mrtr;
mod outbound;
mod pending;
mod raw_params;
mod raw_result;
mod salvage;
pub(crate) mod server_requests;
mod task_receiver;
mod timer;
pub(crate) use pending::{CounterMap, CounterSet};
pub(crate) use salvage::Undecodable;
mod transport_hooks;

#[cfg(test)]
mod tests;

pub use crate::rpc::{MessageKind, Outgoing, RequestHandle};
pub use config::{
    Deadline, Era, EraPolicy, KnownEra, ProtocolVersion, RequestOptions, SessionConfig,
};
pub use error::UsageError;
pub use event::{
    CloseReason, Diagnostic, Event, NotificationKind, RequestError, ServerNotification,
};
pub use raw_params::RawParams;
pub use raw_result::RawResult;

use crate::rpc::clock::{ActiveClock, DeadlineIndex};
use crate::rpc::route;
use completion::deadline_for;
use handshake::Handshake;
use inbound::{InboundRequests, Reply};
use outbound::Queued;
use pending::{Pending, PendingRequests, Stage, TotalLimit};

/// The token for one request from the server, used to answer it with [`Session::respond`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InboundRequestId(pub(crate) u64);

impl fmt::Display for InboundRequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "server#{}", self.0)
    }
}

/// Where the session is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SessionState {
    /// `initialize` sent (or about to be); requests other than `ping` wait.
    Handshaking,
    /// Requests flow.
    Ready,
    /// Over; every request has completed and commands return [`UsageError::Closed`].
    Closed,
}

/// What the session learned from the server in the handshake.
#[derive(Clone, Debug)]
pub(crate) struct ServerState {
    version: ProtocolVersion,
    info: Implementation,
    capabilities: ServerCapabilities,
    instructions: Option<String>,
}

/// What waits for the handshake to finish, in the order the host issued it.
#[derive(Debug)]
enum Waiting {
    Request(RequestHandle),
    Notification {
        method: Cow<'static, str>,
        params: Option<Box<RawValue>>,
    },
}

/// One MCP client session, transport-neutral and deterministic.
///
/// The session is fed framed JSON-RPC messages and clock ticks, and produces messages to
/// send, events and its next deadline. It never reads a clock, never does I/O and never
/// panics on peer input. Its methods fall in four groups, as in quinn-proto:
///
/// - **(A) getters**: [`state`](Self::state), [`is_closed`](Self::is_closed),
///   [`config`](Self::config), [`era`](Self::era),
///   [`protocol_version`](Self::protocol_version),
///   [`server_info`](Self::server_info), [`server_capabilities`](Self::server_capabilities),
///   [`instructions`](Self::instructions), [`in_flight`](Self::in_flight),
///   [`held`](Self::held), [`open_server_requests`](Self::open_server_requests),
///   [`deadlines_paused`](Self::deadlines_paused), [`cached_results`](Self::cached_results);
///   what a transport reads of the handshake era: [`is_probing`](Self::is_probing),
///   [`speaks_discover`](Self::speaks_discover),
///   [`envelope_protocol_version`](Self::envelope_protocol_version).
/// - **(B) inputs**: [`handle_message`](Self::handle_message) (one framed message or batch;
///   [`handle_message_str`](Self::handle_message_str) when it is known to be UTF-8),
///   [`handle_timeout`](Self::handle_timeout). The end of the transport is the connection's
///   input ([`Connection::handle_transport_lost`](crate::connection::Connection::handle_transport_lost));
///   what the core's connections need beyond that (failing, re-sending or re-initializing
///   for a transport) is crate-private.
/// - **(C) commands**: [`send_request`](Self::send_request) / [`request`](Self::request)
///   return a [`RequestHandle`], [`listen`](Self::listen) one for a subscription stream;
///   [`send_detached_request`](Self::send_detached_request) (a request whose answer nobody
///   waits for), [`notify`](Self::notify), [`cancel`](Self::cancel),
///   [`respond`](Self::respond), [`close`](Self::close). Misuse returns a [`UsageError`] at once.
/// - **(D) outputs**: [`poll_transmit`](Self::poll_transmit), [`poll_event`](Self::poll_event),
///   [`poll_timeout`](Self::poll_timeout).
///
/// **The drain invariant.** After every (B) or (C) call, drain `poll_transmit` until `None`,
/// drain `poll_event` until `None`, then read `poll_timeout` and sleep until that instant (or
/// the next input). `handle_timeout` called early is a no-op; right after it returns,
/// `poll_timeout` is `None` or later than the `now` it was given.
///
/// **Guarantees.** Every [`RequestHandle`] completes exactly once with [`Event::Completed`]:
/// a result, a remote error, a timeout, a cancellation, or the close. [`Event::Closed`] comes
/// once, after the last completion.
#[derive(Debug)]
pub struct Session {
    config: SessionConfig,
    state: SessionState,
    /// One counter for handles and wire ids: they never collide.
    next_id: u64,
    /// The handshake sub-machine: which handshake runs, hence which era the session speaks.
    handshake: Handshake,
    modern: mrtr::ModernRequests,
    cache: cache::ResultCache,
    /// The latest instant an input carried (for clock resumes inside completions).
    clock_now: Instant,
    server: Option<ServerState>,
    pending: PendingRequests,
    deadlines: DeadlineIndex,
    clock: ActiveClock,
    waiting: VecDeque<Waiting>,
    /// Requests issued past the in-flight cap, in order.
    held: admission::HeldRequests,
    /// Whether a request keeps its params once sent (`forget_sent_params`).
    keeps_sent_params: bool,
    outbound: outbound::OutboundQueue,
    /// Server requests dropped while the outbound queue is full, and the stall deadline.
    backlog: outbound::Backlog,
    inbound: InboundRequests,
    /// The tasks the client runs for the server (2025-11-25, when `tasks` is declared).
    receiver: crate::task::receiver::TaskTable,
    events: VecDeque<Event>,
}

impl Session {
    /// Starts a session at `now`: `initialize` is queued for [`poll_transmit`](Self::poll_transmit)
    /// and the handshake deadline is armed.
    #[must_use]
    pub fn new(config: SessionConfig, now: Instant) -> Self {
        let handshake = Handshake::new(&config, now);
        let receiver =
            crate::task::receiver::TaskTable::new(config.task_receiver, config.wall_clock);
        let mut outbound = outbound::OutboundQueue::default();
        outbound.push_back(handshake.request());
        Session {
            config,
            state: SessionState::Handshaking,
            next_id: 1,
            handshake,
            modern: mrtr::ModernRequests::default(),
            cache: cache::ResultCache::default(),
            clock_now: now,
            server: None,
            pending: PendingRequests::default(),
            deadlines: DeadlineIndex::default(),
            clock: ActiveClock::new(now),
            waiting: VecDeque::new(),
            held: admission::HeldRequests::default(),
            keeps_sent_params: true,
            outbound,
            backlog: outbound::Backlog::default(),
            inbound: InboundRequests::default(),
            receiver,
            events: VecDeque::new(),
        }
    }

    // ---- (A) getters -------------------------------------------------------------------

    /// Where the session is in its life.
    #[must_use]
    pub fn state(&self) -> SessionState {
        self.state
    }

    /// Whether the session is closed.
    #[must_use]
    pub fn is_closed(&self) -> bool {
        self.state == SessionState::Closed
    }

    /// The configuration it was created with.
    #[must_use]
    pub fn config(&self) -> &SessionConfig {
        &self.config
    }

    /// The negotiated protocol version, once the handshake finished.
    #[must_use]
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        self.server.as_ref().map(|s| s.version)
    }

    /// The handshake era in use, once the handshake finished.
    #[must_use]
    pub fn era(&self) -> Option<Era> {
        self.protocol_version().map(ProtocolVersion::era)
    }

    /// The server's `serverInfo`, once the handshake finished.
    #[must_use]
    pub fn server_info(&self) -> Option<&Implementation> {
        self.server.as_ref().map(|s| &s.info)
    }

    /// The server's capabilities, once the handshake finished.
    #[must_use]
    pub fn server_capabilities(&self) -> Option<&ServerCapabilities> {
        self.server.as_ref().map(|s| &s.capabilities)
    }

    /// The server's `instructions`, if it gave any.
    #[must_use]
    pub fn instructions(&self) -> Option<&str> {
        self.server.as_ref().and_then(|s| s.instructions.as_deref())
    }

    /// How many requests are pending (waiting for the handshake, queued, sent, or held past
    /// [`SessionConfig::max_in_flight`]).
    #[must_use]
    pub fn in_flight(&self) -> usize {
        self.pending.len()
    }

    /// How many of the pending requests are held past [`SessionConfig::max_in_flight`],
    /// waiting for room (see [`send_request`](Self::send_request)).
    #[must_use]
    pub fn held(&self) -> usize {
        self.held.len()
    }

    /// How many server requests the host has not answered yet.
    #[must_use]
    pub fn open_server_requests(&self) -> usize {
        self.inbound.len()
    }

    /// Whether request deadlines are paused (a server request that a human answers is open).
    #[must_use]
    pub fn deadlines_paused(&self) -> bool {
        self.clock.is_paused()
    }

    // ---- (B) inputs --------------------------------------------------------------------

    /// Feeds one framed input: a line from stdio, an SSE event's data, an HTTP JSON body.
    /// A JSON array is a batch. Input that is not JSON-RPC becomes an [`Event::Diagnostic`];
    /// the answer it carries, if its id can be read, completes that request with
    /// [`RequestError::InvalidResponse`] at once (see `salvage`); the session carries on.
    /// Ignored once closed.
    pub fn handle_message(&mut self, now: Instant, bytes: &[u8]) {
        self.handle_input(now, jsonrpc::Input::Bytes(bytes));
    }

    /// [`handle_message`](Self::handle_message) for input already known to be UTF-8 (a line
    /// from [`LineDecoder`](crate::framing::lines::LineDecoder), an SSE event's data): the same
    /// behaviour, without checking the UTF-8 a second time.
    pub fn handle_message_str(&mut self, now: Instant, text: &str) {
        self.handle_input(now, jsonrpc::Input::Text(text));
    }

    /// [`handle_message`](Self::handle_message) decoding with the general parse only: the
    /// reference the routing of compactly written input is held equal to.
    #[cfg(test)]
    pub(crate) fn handle_message_general(&mut self, now: Instant, bytes: &[u8]) {
        if self.is_closed() {
            return;
        }
        self.clock_now = self.clock_now.max(now);
        let input = jsonrpc::Input::Bytes(bytes);
        route::route_decoded(self, now, input, (jsonrpc::decode_general(input), None));
    }

    fn handle_input(&mut self, now: Instant, input: jsonrpc::Input<'_>) {
        if self.is_closed() {
            return;
        }
        self.clock_now = self.clock_now.max(now);
        // Progress params are read in the decoder's pass where it can (they are read anyway).
        route::route_input(self, now, input);
    }

    /// Fires every timer due at `now`, in a fixed order: the Auto probe falls back to
    /// `initialize`; the handshake timeout closes the session, and so does the stall deadline
    /// of a full outbound queue nobody pulls from; tasks past their ttl end; a request
    /// timeout completes that request with [`RequestError::Timeout`] and tells the server
    /// (`notifications/cancelled`). Calling it early is a no-op.
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.is_closed() {
            return;
        }
        self.clock_now = self.clock_now.max(now);
        let table = self.timers();
        self.fire_due(&table, now);
    }

    /// The transport is gone (stdout closed, the process exited, the HTTP session is lost for
    /// good). Every pending request completes with [`RequestError::Closed`], then
    /// [`Event::Closed`]. `detail` is what the adapter knows (exit status, stderr lines).
    pub(crate) fn handle_transport_closed(&mut self, _now: Instant, detail: Option<String>) {
        if self.is_closed() {
            return;
        }
        self.outbound.clear();
        self.close_with(CloseReason::TransportClosed { detail });
    }

    // ---- (C) commands ------------------------------------------------------------------

    /// Sends a request with raw params ([`RawParams`]: serialized by the caller, or from a
    /// `RawValue` with `.into()`). Before the handshake finishes it waits (except `ping`,
    /// which the spec allows at once); its timeout starts when it is sent.
    ///
    /// With [`SessionConfig::max_in_flight`] requests in flight, a new request is *held*: it
    /// waits for room in order of issue (the oldest held request is sent as soon as one in
    /// flight completes), and its timeout starts at once, so the wait counts toward it. A
    /// held request that times out or is cancelled completes like any other; the server
    /// never hears of it.
    ///
    /// Errors: [`UsageError::Closed`], [`UsageError::ReservedMethod`] for `initialize`,
    /// [`UsageError::ZeroTimeout`], [`UsageError::QueueFull`], [`UsageError::TooManyInFlight`]
    /// (when [`SessionConfig::max_held`] requests are held already),
    /// [`UsageError::InvalidParams`] when progress is asked for and params are not an object.
    pub fn send_request(
        &mut self,
        now: Instant,
        method: impl Into<Cow<'static, str>>,
        params: Option<RawParams>,
        options: RequestOptions,
    ) -> Result<RequestHandle, UsageError> {
        let method = method.into();
        if self.is_closed() {
            return Err(UsageError::Closed);
        }
        if method == "initialize" || method == "server/discover" {
            return Err(UsageError::ReservedMethod(method.into_owned()));
        }
        self.clock_now = self.clock_now.max(now);
        if let Some(era) = self.handshake.era_lacking(&method) {
            return Err(UsageError::NotInEra {
                method: method.into_owned(),
                era,
            });
        }
        if self.handshake.may_carry_envelope()
            && !envelope::takes_envelope(params.as_ref().map(RawParams::get))
        {
            return Err(UsageError::InvalidParams(
                "params must be a JSON object to carry the request envelope".into(),
            ));
        }
        let timeout = match options.deadline {
            Deadline::SessionDefault => self.config.request_timeout,
            Deadline::Never => None,
            Deadline::After(d) => Some(d),
        };
        if timeout == Some(Duration::ZERO) || options.max_total == Some(Duration::ZERO) {
            return Err(UsageError::ZeroTimeout);
        }
        let hold = self.must_hold();
        if hold && self.held.len() >= self.config.max_held {
            return Err(UsageError::TooManyInFlight {
                limit: self
                    .config
                    .max_in_flight
                    .saturating_add(self.config.max_held),
            });
        }
        let waits = !hold
            && self.state == SessionState::Handshaking
            && (method != "ping" || self.handshake.ping_waits());
        if waits && self.waiting.len() >= self.config.max_queued {
            return Err(UsageError::QueueFull {
                limit: self.config.max_queued,
            });
        }
        let handle = RequestHandle(self.next_id);
        if self.answer_from_cache(now, handle, &method, params.as_ref().map(RawParams::get)) {
            self.next_id += 1;
            return Ok(handle);
        }
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
        self.pending.insert(
            handle,
            Pending {
                method,
                params,
                wire: handle.0,
                timeout: timeout.and_then(pending::nonzero_nanos),
                deadline: None,
                total: options
                    .max_total
                    .and_then(pending::nonzero_nanos)
                    .map(|max| Box::new(TotalLimit { max, sent_at: 0 })),
                stage: Stage::Waiting,
                progress: options.progress,
                deadline_is_total: false,
            },
        );
        if hold {
            self.arm_deadline(now, handle);
            if let Some(p) = self.pending.get_mut(handle) {
                p.stage = Stage::Held;
            }
            self.held.push(handle);
        } else if waits {
            self.waiting.push_back(Waiting::Request(handle));
        } else {
            self.queue_request(now, handle);
        }
        Ok(handle)
    }

    /// Sends a typed request: `R::Params` is serialized once into raw JSON (see
    /// [`send_request`](Self::send_request) for the rules). Decode the result in the
    /// caller's type: `serde_json::from_str::<R::Result>(raw.get())`.
    pub fn request<R: crate::types::Request>(
        &mut self,
        now: Instant,
        params: &R::Params,
        options: RequestOptions,
    ) -> Result<RequestHandle, UsageError> {
        let params = RawParams::for_request(params)?;
        self.send_request(now, R::METHOD, params, options)
    }

    /// Sends a notification with raw params (queued behind the handshake if it is not done).
    ///
    /// The session sends `notifications/initialized`, `notifications/cancelled` and
    /// `notifications/progress` itself: those return [`UsageError::ReservedMethod`]. Once
    /// [`SessionConfig::max_outbound_bytes`] or more wait for the peer to read them,
    /// notifications are refused with [`UsageError::OutboundFull`] until the queue drained to
    /// half of it (a caller that notifies faster than the peer reads must not grow the queue
    /// without end).
    pub fn notify(
        &mut self,
        _now: Instant,
        method: impl Into<Cow<'static, str>>,
        params: Option<Box<RawValue>>,
    ) -> Result<(), UsageError> {
        let method = method.into();
        if self.is_closed() {
            return Err(UsageError::Closed);
        }
        if matches!(
            &*method,
            "notifications/initialized" | "notifications/cancelled" | "notifications/progress"
        ) {
            return Err(UsageError::ReservedMethod(method.into_owned()));
        }
        if self.era() == Some(Era::Discover) && method == "notifications/roots/list_changed" {
            return Err(UsageError::NotInEra {
                method: method.into_owned(),
                era: Era::Discover,
            });
        }
        if self.state == SessionState::Handshaking {
            if self.waiting.len() >= self.config.max_queued {
                return Err(UsageError::QueueFull {
                    limit: self.config.max_queued,
                });
            }
            self.waiting
                .push_back(Waiting::Notification { method, params });
        } else {
            if self.refuses_notification() {
                return Err(UsageError::OutboundFull {
                    limit: self.config.max_outbound_bytes,
                });
            }
            self.outbound
                .push_back(Queued::Notification { method, params });
        }
        Ok(())
    }

    /// Cancels a pending request: it completes with [`RequestError::Cancelled`] and, if the
    /// server has seen it, the server is sent `notifications/cancelled`. A response that
    /// arrives later is ignored (reported as a diagnostic).
    ///
    /// Returns [`UsageError::UnknownRequest`] when the request already finished: a race the
    /// caller can ignore.
    pub fn cancel(
        &mut self,
        _now: Instant,
        handle: RequestHandle,
        reason: Option<String>,
    ) -> Result<(), UsageError> {
        if self.pending.get(handle).is_none() {
            return Err(UsageError::UnknownRequest(handle));
        }
        let notice = reason.clone();
        self.finish_with_notice(handle, Err(RequestError::Cancelled { reason }), notice);
        Ok(())
    }

    /// Answers a server request announced by [`Event::ServerRequest`]. A request tied to a
    /// server task (`_meta` related-task) is answered with the same related-task `_meta`; the
    /// answer to a request run as a task goes to the task table (for `tasks/result`).
    ///
    /// Returns [`UsageError::UnknownServerRequest`] when it was already answered or the server
    /// cancelled it (a race the caller can ignore: nothing is sent).
    pub fn respond(
        &mut self,
        now: Instant,
        id: InboundRequestId,
        result: Result<Box<RawValue>, ErrorObject>,
    ) -> Result<(), UsageError> {
        if self.is_closed() {
            return Err(UsageError::Closed);
        }
        self.clock_now = self.clock_now.max(now);
        let inbound = self
            .inbound
            .remove(id)
            .ok_or(UsageError::UnknownServerRequest(id))?;
        if inbound.pauses {
            self.clock.resume(now);
        }
        match inbound.reply {
            Reply::Wire(wire) => {
                let result = match &inbound.related_task {
                    Some(task) => result.map(|r| task_receiver::with_related_task(r, task)),
                    None => result,
                };
                self.outbound
                    .push_back(Queued::Response { id: wire, result });
            }
            Reply::Input { handle, index } => self.answer_input(id, handle, index, result),
            Reply::Task(task) => self.finish_task(now, &task, result),
        }
        Ok(())
    }

    /// Closes the session: every pending request completes with
    /// [`RequestError::Closed`]`(`[`CloseReason::Local`]`)`, then [`Event::Closed`] comes.
    /// Messages already queued (a cancellation, say) can still be drained with
    /// `poll_transmit`, so a transport may flush them before it shuts down. Idempotent.
    pub fn close(&mut self, _now: Instant) {
        if !self.is_closed() {
            self.close_with(CloseReason::Local);
        }
    }

    // ---- (D) outputs -------------------------------------------------------------------

    /// The next message to send: its bytes are appended to `buf` (one compact JSON object,
    /// no newline; the stdio framing adds it) and its description is returned.
    #[must_use]
    ///
    /// Pull the next message only once what was pulled before is written (or buffered within
    /// a bounded batch): every pull counts as the peer reading, and a queue that is not
    /// pulled from while full ends in [`CloseReason::Stalled`] (see
    /// [`SessionConfig::stall_timeout`]).
    pub fn poll_transmit(&mut self, buf: &mut Vec<u8>) -> Option<Outgoing> {
        while let Some(item) = self.outbound.pop_front() {
            self.outbound_pulled();
            match item {
                Queued::Discover { wire } => {
                    let params = self.discover_params();
                    handshake::encode_discover(buf, wire, &params);
                    return Some(Outgoing {
                        kind: MessageKind::Request,
                        request: None,
                        method: Some(Cow::Borrowed("server/discover")),
                    });
                }
                Queued::Initialize { wire } => {
                    let params = self.initialize_params();
                    jsonrpc::encode_request(buf, &Id::from(wire), "initialize", Some(&params));
                    return Some(Outgoing {
                        kind: MessageKind::Request,
                        request: None,
                        method: Some(Cow::Borrowed("initialize")),
                    });
                }
                Queued::Request(handle) => {
                    if let Some(out) = self.transmit_request(handle, buf) {
                        return Some(out);
                    }
                }
                Queued::Detached {
                    wire,
                    method,
                    params,
                } => {
                    jsonrpc::encode_request(buf, &Id::from(wire), &method, params.as_deref());
                    return Some(Outgoing {
                        kind: MessageKind::Request,
                        request: None,
                        method: Some(method),
                    });
                }
                Queued::Notification { method, params } => {
                    return Some(Outgoing::notification(buf, method, params.as_deref()));
                }
                Queued::Response { id, result } => {
                    return Some(Outgoing::response(buf, &id, &result));
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
    /// minimum of the session's timer table (the handshake's and the probe's deadlines, the
    /// stall deadline, the next task expiry, the earliest request deadline). `None` when
    /// nothing is armed (request deadlines do not count while paused) or once closed.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.timers().earliest()
    }
}
