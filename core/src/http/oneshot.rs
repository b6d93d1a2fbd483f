//! One call over HTTP: initialize, the request, DELETE, under one deadline (the reference's
//! `callMCP`, but with a session, so stateful servers of the initialize era accept the call).

use std::collections::VecDeque;

use serde_json::value::RawValue;

use super::connection::Connection;
use super::exchange::{
    ConnectionConfig, Event, ExchangeFailure, ExchangeId, HttpEvent, HttpRequest,
};
use super::headers::HeaderList;
use crate::session::{
    self, RawResult, RequestError, RequestHandle, RequestOptions, SessionConfig, UsageError,
};
use crate::time::{Duration, Instant, saturating_add};

/// The result of the call: the raw result, or why there is none.
pub type Outcome = Result<RawResult, RequestError>;

/// A single request over a fresh [`Connection`]: `initialize`, the call, then `DELETE` of the
/// session, all within `timeout` (plus the connection's `close_timeout` for the DELETE).
///
/// Drive it like a connection (the same inputs and `poll_exchange` / `poll_abort` /
/// `poll_timeout`); [`outcome`](Self::outcome) is set once the call completed, and
/// [`is_done`](Self::is_done) once the DELETE is over too. Events of the connection are kept
/// for [`poll_event`](Self::poll_event) (log messages, progress) but need not be drained.
#[derive(Debug)]
pub struct OneShot {
    conn: Connection,
    handle: RequestHandle,
    outcome: Option<Outcome>,
    deadline: Instant,
    events: VecDeque<Event>,
}

impl OneShot {
    /// Starts the call of `method` with `params` at `now`. The handshake and the request share
    /// the `timeout` budget.
    ///
    /// Errors: the session's [`UsageError`]s (`initialize` as the method, a zero timeout).
    pub fn new(
        config: ConnectionConfig,
        session_config: SessionConfig,
        method: impl Into<std::borrow::Cow<'static, str>>,
        params: Option<Box<RawValue>>,
        timeout: Duration,
        now: Instant,
    ) -> Result<Self, UsageError> {
        if timeout.is_zero() {
            return Err(UsageError::ZeroTimeout);
        }
        let handshake = session_config
            .handshake_timeout
            .map_or(timeout, |t| t.min(timeout));
        let session_config = session_config.with_handshake_timeout(Some(handshake));
        let mut conn = Connection::new(config, session_config, now);
        let opts = RequestOptions::new().timeout(timeout);
        let handle = conn
            .session_mut()
            .send_request(now, method, params.map(Into::into), opts)?;
        let mut shot = OneShot {
            conn,
            handle,
            outcome: None,
            deadline: saturating_add(now, timeout),
            events: VecDeque::new(),
        };
        shot.settle(now);
        Ok(shot)
    }

    /// The connection underneath.
    #[must_use]
    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    /// The call's result, once it completed.
    #[must_use]
    pub fn outcome(&self) -> Option<&Outcome> {
        self.outcome.as_ref()
    }

    /// Takes the result, once it completed.
    pub fn take_outcome(&mut self) -> Option<Outcome> {
        self.outcome.take()
    }

    /// Whether everything is over: the call completed and the connection finished.
    #[must_use]
    pub fn is_done(&self) -> bool {
        self.conn.is_finished()
    }

    /// See [`Connection::handle_response_head`].
    pub fn handle_response_head(
        &mut self,
        now: Instant,
        exchange: ExchangeId,
        status: u16,
        headers: HeaderList,
    ) {
        self.conn
            .handle_response_head(now, exchange, status, headers);
        self.settle(now);
    }

    /// See [`Connection::handle_body`].
    pub fn handle_body(&mut self, now: Instant, exchange: ExchangeId, chunk: &[u8]) {
        self.conn.handle_body(now, exchange, chunk);
        self.settle(now);
    }

    /// See [`Connection::handle_body_end`].
    pub fn handle_body_end(&mut self, now: Instant, exchange: ExchangeId) {
        self.conn.handle_body_end(now, exchange);
        self.settle(now);
    }

    /// See [`Connection::handle_failure`].
    pub fn handle_failure(&mut self, now: Instant, exchange: ExchangeId, failure: ExchangeFailure) {
        self.conn.handle_failure(now, exchange, failure);
        self.settle(now);
    }

    /// See [`Connection::handle_timeout`]; past the overall deadline the connection is closed.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.conn.handle_timeout(now);
        if now >= self.deadline && self.outcome.is_none() {
            self.conn.close(now);
        }
        self.settle(now);
    }

    /// See [`Connection::poll_exchange`].
    #[must_use]
    pub fn poll_exchange(&mut self, now: Instant) -> Option<HttpRequest> {
        self.conn.poll_exchange(now)
    }

    /// See [`Connection::poll_abort`].
    #[must_use]
    pub fn poll_abort(&mut self) -> Option<ExchangeId> {
        self.conn.poll_abort()
    }

    /// The connection's events (the call's completion included), if the host wants them.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// See [`Connection::poll_timeout`], bounded by the overall deadline.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        let conn = self.conn.poll_timeout();
        if self.outcome.is_some() || self.conn.is_finished() {
            return conn;
        }
        Some(conn.map_or(self.deadline, |t| t.min(self.deadline)))
    }

    /// Takes the connection's events; closes once the call completed.
    fn settle(&mut self, now: Instant) {
        while let Some(ev) = self.conn.poll_event() {
            if let Event::Session(session::Event::Completed { handle, result }) = &ev
                && *handle == self.handle
                && self.outcome.is_none()
            {
                self.outcome = Some(result.clone());
                self.conn.close(now);
            }
            if self.events.len() < 1024 || matches!(ev, Event::Transport(HttpEvent::Finished)) {
                self.events.push_back(ev);
            }
        }
    }
}
