//! [`Connection`]: a [`Session`] carried over Streamable HTTP or legacy HTTP+SSE, as a sans-IO
//! state machine that asks for HTTP exchanges and is told how they went.

use super::closing::Shutdown;
use super::exchange::{
    ConnectionConfig, Event, ExchangeError, ExchangeId, HttpEvent, HttpRequest, Purpose, StreamId,
    Transport, TransportMode,
};
use super::exchange_table::ExchangeTable;
use super::identity::SessionIdentity;
use super::modern::ModernRequests;
use super::post_queue::{PostQueue, QueuedPost};
use super::ready_hold::HostEvents;
use super::reset::ResetState;
use super::streams::{Origin, StreamTable};
use super::timers::{Timer, TimerTable};
use super::transport_choice::{Phase, TransportChoice};
use crate::session::{self, MessageKind, RequestError, RequestHandle, Session, SessionConfig};
use crate::time::{Instant, saturating_add};

/// A [`Session`] over Streamable HTTP (or legacy HTTP+SSE), sans IO.
///
/// The connection owns the session and turns its messages into HTTP exchanges that an adapter
/// performs; the adapter reports each response (head, body chunks, end) or failure. Its methods
/// follow the [one connection contract](crate::connection), in four groups:
///
/// - **(A) getters**: [`session`](Self::session), [`is_finished`](Self::is_finished),
///   [`buffered_len`](Self::buffered_len), [`session_id`](Self::session_id),
///   [`transport`](Self::transport), [`config`](Self::config),
///   [`open_exchanges`](Self::open_exchanges).
/// - **(B) inputs**: [`handle_response_head`](Self::handle_response_head),
///   [`handle_body`](Self::handle_body), [`handle_body_end`](Self::handle_body_end),
///   [`handle_failure`](Self::handle_failure), [`handle_timeout`](Self::handle_timeout),
///   [`handle_transport_lost`](Self::handle_transport_lost).
/// - **(C) commands**: requests, notifications, cancellations and responses on
///   [`session_mut`](Self::session_mut); [`close`](Self::close);
///   [`set_authorization`](Self::set_authorization).
/// - **(D) outputs**: [`poll_exchange`](Self::poll_exchange), [`poll_abort`](Self::poll_abort),
///   [`poll_event`](Self::poll_event), [`poll_timeout`](Self::poll_timeout).
///
/// **Drain rule.** After every input or command, drain `poll_exchange` and `poll_abort` until
/// `None`, then `poll_event` until `None`, then read `poll_timeout` and wait for it or the next
/// input. `poll_exchange` takes `now` (as quinn's `poll_transmit` does): a command on
/// `session_mut` has no clock, so the messages it queued become exchanges, with their
/// deadlines, at the `now` of the `poll_exchange` that takes them. (`poll_event` moves them
/// too, at the time of the last input or output call, so an event that a command caused is
/// never missed.)
///
/// **Guarantees.** Every request handle completes exactly once (session guarantee; the HTTP
/// layer fails a request whose exchange failed, never twice). Request deadlines stay the
/// session's; the connection adds deadlines only for exchanges that are not requests. Memory is
/// bounded by the configured limits whatever the server sends.
#[derive(Debug)]
pub struct Connection {
    pub(crate) config: ConnectionConfig,
    pub(crate) session: Session,
    /// The latest instant any input or output call was given (commands have no clock).
    pub(crate) now: Instant,
    /// Streamable or legacy, and where the connection is in choosing.
    pub(crate) transport: TransportChoice,
    /// The session id, its generation, and what goes on every exchange's headers.
    pub(crate) identity: SessionIdentity,
    /// The open exchanges, the requests for the adapter and the exchanges it drops.
    pub(crate) exchanges: ExchangeTable,
    /// The SSE streams, and which one is the GET listener.
    pub(crate) streams: StreamTable,
    /// The POSTs waiting for a slot, and those waiting to be sent again (429 / 503).
    pub(crate) posts: PostQueue,
    /// The connection's own timers (the close deadline lives only here; the others are read
    /// back from the tables that own them). See `timers.rs`.
    pub(crate) timers: TimerTable,
    /// The events for the host, `Ready` held back while the listener opens.
    pub(crate) events: HostEvents,
    /// A session reset under way and what it restores (see `reset.rs`).
    pub(crate) reset: ResetState,
    /// The 2026-07-28 bookkeeping per request (see `modern/hooks.rs`).
    pub(crate) modern: ModernRequests,
    /// The closing steps still to come (see `closing.rs`).
    pub(crate) shutdown: Shutdown,
}

impl Connection {
    /// A connection to `config.url` whose session starts at `now`. In legacy mode the SSE GET
    /// is the first exchange; otherwise the initialize POST is.
    #[must_use]
    pub fn new(config: ConnectionConfig, session_config: SessionConfig, now: Instant) -> Self {
        let legacy = config.mode == TransportMode::Legacy;
        let phase = if legacy {
            Phase::LegacyConnecting
        } else {
            Phase::Probing
        };
        let mut c = Connection {
            session: Session::new(session_config, now),
            config,
            now,
            transport: TransportChoice::new(phase),
            identity: SessionIdentity::default(),
            exchanges: ExchangeTable::default(),
            streams: StreamTable::default(),
            posts: PostQueue::default(),
            timers: TimerTable::default(),
            events: HostEvents::default(),
            reset: ResetState::default(),
            modern: ModernRequests::default(),
            shutdown: Shutdown::default(),
        };
        if legacy {
            c.start_legacy(now);
        }
        c.pump(now);
        c
    }

    // ---- (A) getters -------------------------------------------------------------------

    /// The session (state, negotiated version, server info).
    #[must_use]
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The `Mcp-Session-Id` in use, if the server assigned a valid one.
    #[must_use]
    pub fn session_id(&self) -> Option<&str> {
        self.identity.id()
    }

    /// The transport, once known.
    #[must_use]
    pub fn transport(&self) -> Option<Transport> {
        self.transport.transport()
    }

    /// The configuration.
    #[must_use]
    pub fn config(&self) -> &ConnectionConfig {
        &self.config
    }

    /// Whether the connection is over ([`HttpEvent::Finished`] was emitted).
    #[must_use]
    pub fn is_finished(&self) -> bool {
        self.transport.phase == Phase::Finished
    }

    /// How many exchanges are open (asked for and neither ended nor aborted).
    #[must_use]
    pub fn open_exchanges(&self) -> usize {
        self.exchanges.len()
    }

    /// Bytes the connection holds for peer input (JSON bodies, SSE events, error excerpts):
    /// bounded by the configured limits.
    #[must_use]
    pub fn buffered_len(&self) -> usize {
        self.exchanges.buffered_len() + self.streams.buffered_len()
    }

    // ---- (B) inputs (the HTTP ones are in `response.rs`) -------------------------------

    /// The adapter can carry nothing more (its task is stopping): every pending request
    /// completes with `Closed`, then [`Event::Session`]`(`[`Closed`](session::Event::Closed)`)`
    /// with [`CloseReason::TransportClosed`](session::CloseReason::TransportClosed) carrying
    /// `detail`; the connection then winds down as after a close. No-op once closed.
    pub fn handle_transport_lost(&mut self, now: Instant, detail: Option<String>) {
        self.now = self.now.max(now);
        self.session.handle_transport_closed(now, detail);
        self.pump(self.now);
    }

    // ---- (C) commands ------------------------------------------------------------------

    /// Closes: the session closes (pending requests complete with `Closed`), open exchanges
    /// are aborted except the POSTs of `notifications/cancelled` (queued ones are sent), and
    /// once those are answered a DELETE with the session id is sent (the whole close bounded
    /// by `close_timeout`; any answer, 405 included, ends it). Then [`HttpEvent::Finished`].
    /// Idempotent. A caller that cancels a request and closes at once (Ctrl-C) so has its
    /// cancellation reach the server before the session ends.
    pub fn close(&mut self, now: Instant) {
        self.now = self.now.max(now);
        self.session.close(now);
        self.pump(now);
    }

    /// The session, to issue requests, notifications, cancellations and responses. Drain the
    /// connection's outputs afterwards.
    pub fn session_mut(&mut self) -> &mut Session {
        &mut self.session
    }

    /// Replaces the `Authorization` header of every later exchange to the server's origin
    /// (`Some("Bearer <token>")`), or removes it (`None`): what an OAuth adapter calls after
    /// it obtained or refreshed a token. Exchanges already asked for keep the header they had.
    pub fn set_authorization(&mut self, value: Option<String>) {
        let h = &mut self.config.extra_headers;
        h.remove(super::headers::AUTHORIZATION);
        if let Some(v) = value {
            h.insert(super::headers::AUTHORIZATION, v);
        }
    }

    // ---- (D) outputs -------------------------------------------------------------------

    /// The next HTTP exchange to perform. `now` is when it starts: the messages that commands
    /// queued on [`session_mut`](Self::session_mut) become exchanges here, and an exchange's
    /// deadline counts from it.
    #[must_use]
    pub fn poll_exchange(&mut self, now: Instant) -> Option<HttpRequest> {
        self.now = self.now.max(now);
        self.pump(self.now);
        self.exchanges.poll_ready()
    }

    /// The next exchange to drop (stop reading, close the connection): a stream no longer
    /// needed, a timed-out exchange, a response the connection acted on at its head.
    #[must_use]
    pub fn poll_abort(&mut self) -> Option<ExchangeId> {
        self.exchanges.poll_abort()
    }

    /// The next event: the session's and the connection's own ([`HttpEvent`]), in order.
    /// Drain it after `poll_exchange` and `poll_abort`.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<Event> {
        self.pump(self.now);
        self.events.pop()
    }

    /// When [`handle_timeout`](Self::handle_timeout) next has work: the minimum of the
    /// session's deadline and the connection's timer table (exchange deadlines,
    /// reconnections, delayed retries, the close, the end of a wait for the listener
    /// ([`ConnectionConfig::await_listener`])).
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        if self.transport.phase == Phase::Finished {
            return None;
        }
        match (self.timers.next_timeout(), self.session.poll_timeout()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Fires what is due at `now`: session deadlines, then the connection's timers in a
    /// fixed order (the listener wait, exchange deadlines (the exchange is aborted and counts
    /// as failed), reconnections, delayed retries, the close). Calling it early is a no-op.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.now = self.now.max(now);
        self.session.handle_timeout(now);
        self.pump(now);
        self.fire(Timer::ReadyHold, now);
        self.fire(Timer::Exchange, now);
        self.fire(Timer::Reconnect, now);
        self.fire(Timer::Retry, now);
        // What the retries and reconnections queued moves before the close is looked at.
        self.pump(now);
        self.fire(Timer::Close, now);
        self.refresh_timers();
    }

    /// Fires `timer` if it expired (the table is read back first: an earlier timer's work may
    /// have moved it).
    fn fire(&mut self, timer: Timer, now: Instant) {
        self.refresh_timers();
        if !self.timers.is_expired(timer, now) {
            return;
        }
        match timer {
            Timer::ReadyHold => self.release_ready(),
            Timer::Exchange => {
                for id in self.exchanges.due(now) {
                    self.exchanges.abort(id);
                    self.fail_exchange(now, id, "the exchange timed out".to_owned());
                }
            }
            Timer::Reconnect => {
                for sid in self.streams.due(now) {
                    self.reconnect(now, sid);
                }
            }
            Timer::Retry => {
                for post in self.posts.take_due(now) {
                    self.reissue(now, post);
                }
            }
            Timer::Close => self.close_deadline_passed(),
        }
    }

    /// Reads the deadlines the tables own back into the timer table (the close deadline is
    /// the table's own). Called at the end of every pump and of `handle_timeout`, so the
    /// table is current whenever the host reads `poll_timeout`.
    fn refresh_timers(&mut self) {
        let reconnect = self.streams.next_reconnect();
        let retry = self.posts.next_retry();
        let hold = self.events.hold_deadline();
        self.timers
            .set(Timer::Exchange, self.exchanges.next_deadline());
        self.timers.set(Timer::Reconnect, reconnect);
        self.timers.set(Timer::Retry, retry);
        self.timers.set(Timer::ReadyHold, hold);
    }

    // ---- internals: the pump -------------------------------------------------------------

    /// Moves the session's messages into the POST queue, its events into the connection's
    /// (reacting to them), and starts the exchanges that may start.
    pub(crate) fn pump(&mut self, now: Instant) {
        loop {
            let mut progressed = false;
            loop {
                let mut buf = Vec::new();
                let Some(out) = self.session.poll_transmit(&mut buf) else {
                    break;
                };
                progressed = true;
                self.take_outgoing(now, out, buf);
            }
            while let Some(ev) = self.session.poll_event() {
                progressed = true;
                self.observe(now, ev);
            }
            // Reacting to an event (a reset, a re-send) can queue more: go again.
            if !progressed {
                break;
            }
        }
        self.start_posts(now);
        self.after_cancels(now);
        if self.streams.take_listener_wish() {
            self.open_listener(now);
        }
        if self.streams.listener().is_none() {
            // No listener could be opened (no stream slot): nothing to wait for.
            self.release_ready();
        }
        self.refresh_timers();
    }

    fn take_outgoing(&mut self, now: Instant, out: session::Outgoing, body: Vec<u8>) {
        if self.transport.is_over() {
            return;
        }
        if self.session.speaks_discover() {
            // Cancel is the abort of the exchange (done when the request completed): no
            // `notifications/cancelled` over 2026-07-28 HTTP.
            if out.kind == MessageKind::Notification
                && out.method.as_deref() == Some("notifications/cancelled")
            {
                return;
            }
            if let (Some(h), Some("tools/list")) = (out.request, out.method.as_deref()) {
                self.modern.note_tool_list(h);
            }
        }
        let purpose = match (out.kind, out.request, out.method.as_deref()) {
            (MessageKind::Request, Some(h), _) => Purpose::Request(h),
            (MessageKind::Request, None, Some("initialize" | "server/discover")) => {
                Purpose::Initialize
            }
            // A detached request (`tasks/cancel` of a dropped call): a POST in the session
            // like a notification, whose answer nobody waits for. Not the handshake: it must
            // carry the session id and must not replace the initialize body.
            (kind, _, _) => Purpose::Message(kind),
        };
        if let (Purpose::Request(h), Some(method)) = (purpose, out.method.as_deref()) {
            self.track(h, method, &body);
        }
        if self.posts.len() >= self.config.max_queued_posts && purpose != Purpose::Initialize {
            let message = "too many messages waiting for a POST slot".to_owned();
            self.fail_purpose(now, purpose, None, message);
            return;
        }
        let initialized = out.method.as_deref() == Some("notifications/initialized");
        self.posts.push_back(QueuedPost {
            body,
            purpose,
            retries: 0,
            initialized,
        });
    }

    /// Reacts to a session event and forwards it (except completions of the connection's own
    /// restoring requests).
    fn observe(&mut self, now: Instant, ev: session::Event) {
        let ev = self.observe_modern(now, ev);
        match &ev {
            session::Event::Ready { .. } => self.on_ready(now),
            session::Event::Completed { handle, result } => {
                let handle = *handle;
                if matches!(
                    result,
                    Err(RequestError::Timeout { .. } | RequestError::Cancelled { .. })
                ) {
                    self.drop_request_exchanges(handle);
                }
                if self.restore_on_completed(now, handle, result.as_ref().map(drop)) {
                    return;
                }
                if let Some(method) = self.modern.take_own(handle) {
                    if let Err(error) = result {
                        self.emit(HttpEvent::RestoreFailed {
                            method,
                            uri: None,
                            error: error.clone(),
                        });
                    }
                    return;
                }
            }
            session::Event::Closed { .. } => {
                self.release_ready();
                self.events.push(Event::Session(ev));
                self.begin_shutdown(now);
                return;
            }
            _ => {}
        }
        self.deliver(now, ev);
    }

    /// Queues a session event for the host: behind the hold of [`HostEvents`] while one is on, and
    /// starting one at `Ready` when the host asked to wait for the listener it is about to open.
    fn deliver(&mut self, now: Instant, ev: session::Event) {
        let ready = matches!(ev, session::Event::Ready { .. });
        let hold_until = (ready
            && self.streams.listener_wanted()
            && self.config.listen
            && self.streams.listener().is_none())
        .then_some(self.config.await_listener)
        .flatten()
        .map(|wait| saturating_add(now, wait));
        self.events.deliver(Event::Session(ev), hold_until);
    }

    /// Hands the held events to the host, in order: the listener settled, the wait ran out,
    /// or the connection is going away.
    pub(crate) fn release_ready(&mut self) {
        self.events.release();
    }

    fn on_ready(&mut self, now: Instant) {
        if self.reset.is_under_way() {
            self.begin_restore(now);
        }
        // Opened after the pump posts `notifications/initialized`, so that goes first.
        let streamable = self.transport.phase == Phase::Up(Transport::Streamable);
        self.streams
            .want_listener(streamable && !self.session.speaks_discover());
    }

    pub(crate) fn open_listener(&mut self, now: Instant) {
        if !self.config.listen || self.streams.listener().is_some() {
            return;
        }
        let Some(sid) = self.new_stream(Origin::Listen) else {
            return;
        };
        self.streams.set_listener(Some(sid));
        self.issue_get(now, sid, Purpose::Listen);
    }

    pub(crate) fn new_stream(&mut self, origin: Origin) -> Option<StreamId> {
        self.streams
            .open(origin, &self.config, self.identity.generation())
    }

    /// Aborts the exchanges of a request that finished without them (timeout, cancel).
    fn drop_request_exchanges(&mut self, handle: RequestHandle) {
        self.exchanges.abort_request(handle);
        for sid in self.streams.of_request(handle) {
            self.remove_stream(sid);
        }
        self.posts.forget_request(handle);
        self.reset.forget(handle);
    }

    pub(crate) fn remove_stream(&mut self, sid: StreamId) {
        if let Some(s) = self.streams.remove(sid)
            && let Some(x) = s.exchange
            && self.exchanges.remove(x).is_some()
        {
            self.exchanges.abort(x);
        }
    }

    /// A message that could not be carried: its request fails, or an error event.
    pub(crate) fn fail_purpose(
        &mut self,
        now: Instant,
        purpose: Purpose,
        status: Option<super::error::HttpStatusError>,
        message: String,
    ) {
        match purpose {
            Purpose::Initialize => {
                let reason = match status {
                    Some(e) => session::CloseReason::Http(e),
                    None => session::CloseReason::TransportClosed {
                        detail: Some(message),
                    },
                };
                self.session.close_for_transport(now, reason);
            }
            Purpose::Request(h) => {
                let error = match status {
                    Some(e) => RequestError::Http(e),
                    None => RequestError::Transport(message),
                };
                self.session.fail_request(h, error);
            }
            Purpose::LegacyConnect => {
                let detail = match status {
                    Some(e) => e.to_string(),
                    None => message,
                };
                match self.transport.take_fallback_cause() {
                    // Both transports were tried: say so, with why each failed.
                    Some(post) => self.session.close_for_transport(
                        now,
                        session::CloseReason::NotMcp {
                            post: Box::new(post),
                            legacy: detail,
                        },
                    ),
                    None => self.session.handle_transport_closed(now, Some(detail)),
                }
            }
            Purpose::Delete => {}
            _ => {
                let error = match status {
                    Some(e) => ExchangeError::Status(e),
                    None => ExchangeError::Transport(message),
                };
                self.emit(HttpEvent::ExchangeFailed { purpose, error });
            }
        }
    }

    pub(crate) fn emit(&mut self, ev: HttpEvent) {
        if matches!(
            ev,
            HttpEvent::ListenerOpened
                | HttpEvent::ListenerUnavailable { .. }
                | HttpEvent::ExchangeFailed {
                    purpose: Purpose::Listen,
                    ..
                }
        ) {
            self.release_ready();
        }
        self.events.push(Event::Transport(ev));
    }
}

impl crate::connection::Connection for Connection {
    type TransportEvent = HttpEvent;

    fn session(&self) -> &Session {
        Connection::session(self)
    }

    fn session_mut(&mut self) -> &mut Session {
        Connection::session_mut(self)
    }

    fn is_finished(&self) -> bool {
        Connection::is_finished(self)
    }

    fn handle_timeout(&mut self, now: Instant) {
        Connection::handle_timeout(self, now);
    }

    fn handle_transport_lost(&mut self, now: Instant, detail: Option<String>) {
        Connection::handle_transport_lost(self, now, detail);
    }

    fn close(&mut self, now: Instant) {
        Connection::close(self, now);
    }

    fn poll_event(&mut self) -> Option<Event> {
        Connection::poll_event(self)
    }

    fn poll_timeout(&self) -> Option<Instant> {
        Connection::poll_timeout(self)
    }
}
