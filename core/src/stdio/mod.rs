//! The stdio transport: line framing around a [`Session`], and the child-process policy.
//!
//! [`StdioConnection`] is all a byte-stream transport needs (a child's stdin/stdout, a socket,
//! an in-process pipe). It keeps the [one connection contract](crate::connection): feed it the
//! bytes read with [`handle_bytes`](StdioConnection::handle_bytes), write what
//! [`poll_transmit`](StdioConnection::poll_transmit) appends, then drain
//! [`poll_event`](StdioConnection::poll_event) and read
//! [`poll_timeout`](StdioConnection::poll_timeout).
//!
//! [`shutdown::ShutdownSchedule`] is the policy for stopping a child process.

pub mod shutdown;

use crate::connection::{self, Connection};
use crate::framing::lines::{Line, LineDecoder, encode_line};
use crate::session::{Diagnostic, Outgoing, Session, SessionConfig, Undecodable};
use crate::time::Instant;

/// Something the stdio connection itself reports, in [`Event::Transport`](connection::Event::Transport):
/// an action the adapter executes on the child process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StdioEvent {
    /// The server exited on the Auto probe (`server/discover`), as old servers do on any
    /// request before `initialize`. Start the same command again, then call
    /// [`StdioConnection::handle_respawned`]: the session goes straight to `initialize` on the
    /// new pipes, and the requests issued meanwhile are sent after it, under the same handles.
    /// Until then [`StdioConnection::poll_transmit`] yields nothing (there is no process to
    /// write to). If the command cannot be started again, report that with
    /// [`StdioConnection::handle_transport_lost`].
    Respawn,
}

/// An event from [`StdioConnection::poll_event`].
pub type Event = connection::Event<StdioEvent>;

/// A [`Session`] over newline-delimited JSON.
///
/// Its methods follow the [one connection contract](crate::connection), in four groups:
///
/// - **(A) getters**: [`session`](Self::session), [`is_finished`](Self::is_finished),
///   [`buffered_len`](Self::buffered_len), [`awaiting_respawn`](Self::awaiting_respawn).
/// - **(B) inputs**: [`handle_bytes`](Self::handle_bytes), [`handle_eof`](Self::handle_eof),
///   [`handle_eof_unread`](Self::handle_eof_unread), [`handle_respawned`](Self::handle_respawned), [`handle_timeout`](Self::handle_timeout),
///   [`handle_transport_lost`](Self::handle_transport_lost).
/// - **(C) commands**: requests, notifications, cancellations and responses on
///   [`session_mut`](Self::session_mut); [`close`](Self::close).
/// - **(D) outputs**: [`poll_transmit`](Self::poll_transmit), [`poll_event`](Self::poll_event),
///   [`poll_timeout`](Self::poll_timeout).
///
/// **Drain rule.** After every input or command, drain `poll_transmit` until `None`, then
/// `poll_event` until `None`, then read `poll_timeout` and wait for it or the next input.
///
/// **Guarantees.** Every request handle completes exactly once; memory for peer input is
/// bounded by the line limit; peer input never panics, it becomes an event.
#[derive(Debug)]
pub struct StdioConnection {
    session: Session,
    decoder: LineDecoder,
    scratch: Vec<u8>,
    /// The max line length, to build a fresh decoder for a respawned process.
    max_line_len: usize,
    /// A respawn was asked for and not yet reported done.
    awaiting_respawn: bool,
    /// Whether a respawn happened already (at most one per connection).
    respawned: bool,
    /// The connection's own events, handed out after the session's (at most one respawn).
    events: std::collections::VecDeque<StdioEvent>,
}

impl StdioConnection {
    /// Starts a session over a byte stream with the default 16 MiB line limit.
    #[must_use]
    pub fn new(config: SessionConfig, now: Instant) -> Self {
        Self::with_decoder(config, LineDecoder::new(), now)
    }

    /// Starts a session with a configured line decoder (a different maximum line length).
    #[must_use]
    pub fn with_decoder(config: SessionConfig, decoder: LineDecoder, now: Instant) -> Self {
        let mut session = Session::new(config, now);
        // Lines over one byte stream are never re-sent: a lost stream ends the session.
        session.forget_sent_params();
        StdioConnection {
            session,
            max_line_len: decoder.max_line_len(),
            decoder,
            scratch: Vec::new(),
            awaiting_respawn: false,
            respawned: false,
            events: std::collections::VecDeque::new(),
        }
    }

    // ---- (A) getters -------------------------------------------------------------------

    /// The session, for its getters (state, negotiated version, server info).
    #[must_use]
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// Whether the session is closed. Its last messages (a cancellation) may still be in
    /// [`poll_transmit`](Self::poll_transmit); stopping the child is the adapter's, by
    /// [`shutdown::ShutdownSchedule`].
    #[must_use]
    pub fn is_finished(&self) -> bool {
        self.session.is_closed()
    }

    /// Bytes the line decoder holds for an incomplete line (bounded by the line limit).
    #[must_use]
    pub fn buffered_len(&self) -> usize {
        self.decoder.buffered_len()
    }

    /// Whether a [`StdioEvent::Respawn`] is waiting for [`handle_respawned`](Self::handle_respawned).
    #[must_use]
    pub fn awaiting_respawn(&self) -> bool {
        self.awaiting_respawn
    }

    // ---- (B) inputs --------------------------------------------------------------------

    /// Feeds bytes read from the peer, cut anywhere. Complete lines go to the session; an
    /// over-long or non-UTF-8 line becomes an [`Event::Diagnostic`](crate::session::Event::Diagnostic).
    pub fn handle_bytes(&mut self, now: Instant, chunk: &[u8]) {
        if self.awaiting_respawn {
            return; // the old process's leftovers
        }
        let session = &mut self.session;
        self.decoder
            .decode(chunk, |line| deliver(session, now, line));
    }

    /// The peer's output ended. A final line without a newline is still delivered; then the
    /// session closes with [`CloseReason::TransportClosed`](crate::session::CloseReason::TransportClosed)
    /// carrying `detail` (the adapter's description: exit status, last stderr lines).
    ///
    /// Exception: when the output ends while an Auto probe waits for its `server/discover`
    /// answer, or right after the probe fell back and before `initialize` was answered (the
    /// first time only), the session is kept and [`StdioEvent::Respawn`] is queued instead.
    /// An adapter that knows the process read none of its input calls
    /// [`handle_eof_unread`](Self::handle_eof_unread) instead: no respawn then.
    pub fn handle_eof(&mut self, now: Instant, detail: Option<String>) {
        self.handle_end(now, detail, true);
    }

    /// The peer's output ended and the adapter knows that the process read none of its
    /// input (nothing was written to it before it exited, or all of it is still unread in
    /// the pipe): it crashed at start-up, whatever it was sent, so it did not exit on the
    /// Auto probe. As [`handle_eof`](Self::handle_eof), except that no respawn is ever asked
    /// for: the session closes with the exit's `detail`. An adapter that cannot tell calls
    /// `handle_eof`.
    pub fn handle_eof_unread(&mut self, now: Instant, detail: Option<String>) {
        self.handle_end(now, detail, false);
    }

    /// The end of the peer's output; `may_respawn`: the process may have exited on the probe.
    fn handle_end(&mut self, now: Instant, detail: Option<String>, may_respawn: bool) {
        let session = &mut self.session;
        self.decoder.finish(|line| deliver(session, now, line));
        if self.awaiting_respawn {
            return;
        }
        if may_respawn && !self.respawned && self.session.restart_after_respawn(now) {
            self.respawned = true;
            self.awaiting_respawn = true;
            self.decoder = LineDecoder::with_max_line_len(self.max_line_len);
            self.events.push_back(StdioEvent::Respawn);
            return;
        }
        self.session.handle_transport_closed(now, detail);
    }

    /// The adapter started the server again after [`StdioEvent::Respawn`]: output resumes
    /// (`initialize` first). Bytes from the old process must not be fed any more. A call
    /// without a pending respawn does nothing.
    pub fn handle_respawned(&mut self, _now: Instant) {
        self.awaiting_respawn = false;
    }

    /// The instant of [`poll_timeout`](Self::poll_timeout) came: fires the session's due
    /// deadlines (handshake, probe, requests, stall). Calling it early is a no-op.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.session.handle_timeout(now);
    }

    /// The adapter can carry nothing more (its task stops, a respawn could not start the
    /// server): every pending request completes with `Closed`, then one
    /// [`Event::Closed`](crate::session::Event::Closed) carrying `detail`. No respawn is
    /// asked for, and a pending one is dropped. No-op once closed.
    pub fn handle_transport_lost(&mut self, now: Instant, detail: Option<String>) {
        self.awaiting_respawn = false;
        self.session.handle_transport_closed(now, detail);
    }

    // ---- (C) commands ------------------------------------------------------------------

    /// The session, for commands: requests, notifications, cancellations, responses. Drain
    /// the outputs afterwards.
    pub fn session_mut(&mut self) -> &mut Session {
        &mut self.session
    }

    /// Closes the session: pending requests complete with `Closed`, then
    /// [`Event::Closed`](crate::session::Event::Closed). Messages already queued (a
    /// cancellation) still come out of [`poll_transmit`](Self::poll_transmit), so the adapter
    /// can flush them before it stops the child. Idempotent.
    pub fn close(&mut self, now: Instant) {
        self.session.close(now);
    }

    // ---- (D) outputs -------------------------------------------------------------------

    /// The next message to write: one line, `\n` included, appended to `buf`.
    #[must_use]
    pub fn poll_transmit(&mut self, buf: &mut Vec<u8>) -> Option<Outgoing> {
        if self.awaiting_respawn {
            return None;
        }
        self.scratch.clear();
        let out = self.session.poll_transmit(&mut self.scratch)?;
        encode_line(buf, &self.scratch);
        Some(out)
    }

    /// The next event: the session's, in order, then the connection's own
    /// ([`StdioEvent::Respawn`]). Drain it after `poll_transmit`.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<Event> {
        if let Some(e) = self.session.poll_event() {
            return Some(connection::Event::Session(e));
        }
        self.events.pop_front().map(connection::Event::Transport)
    }

    /// When [`handle_timeout`](Self::handle_timeout) next has work: the session's earliest
    /// deadline.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.session.poll_timeout()
    }
}

impl Connection for StdioConnection {
    type TransportEvent = StdioEvent;

    fn session(&self) -> &Session {
        StdioConnection::session(self)
    }

    fn session_mut(&mut self) -> &mut Session {
        StdioConnection::session_mut(self)
    }

    fn is_finished(&self) -> bool {
        StdioConnection::is_finished(self)
    }

    fn handle_timeout(&mut self, now: Instant) {
        StdioConnection::handle_timeout(self, now);
    }

    fn handle_transport_lost(&mut self, now: Instant, detail: Option<String>) {
        StdioConnection::handle_transport_lost(self, now, detail);
    }

    fn close(&mut self, now: Instant) {
        StdioConnection::close(self, now);
    }

    fn poll_event(&mut self) -> Option<Event> {
        StdioConnection::poll_event(self)
    }

    fn poll_timeout(&self) -> Option<Instant> {
        StdioConnection::poll_timeout(self)
    }
}

fn deliver(session: &mut Session, now: Instant, line: Line<'_>) {
    match line {
        Line::Message(text) => session.handle_message_str(now, text),
        Line::TooLong { discarded, limit } => {
            session.report(Diagnostic::LineTooLong { discarded, limit });
        }
        Line::InvalidUtf8 {
            len,
            valid_up_to,
            bytes,
        } => session.handle_undecodable(
            bytes,
            Undecodable::Utf8 { valid_up_to },
            Diagnostic::InvalidUtf8 { len },
        ),
        // `Line` is non_exhaustive; a new kind of framing report is not a message.
        #[allow(unreachable_patterns)]
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::{Event, RequestHandle, RequestOptions};
    use crate::types::Implementation;

    fn conn() -> (StdioConnection, Instant) {
        let now = Instant::now();
        let c = StdioConnection::new(SessionConfig::new(Implementation::new("t", "1")), now);
        (c, now)
    }

    /// Drains the outputs by the drain rule: the bytes written, the session's events and the
    /// connection's own.
    fn drain_all(c: &mut StdioConnection) -> (Vec<u8>, Vec<Event>, Vec<StdioEvent>) {
        let mut out = Vec::new();
        while c.poll_transmit(&mut out).is_some() {}
        let mut events = Vec::new();
        let mut actions = Vec::new();
        while let Some(e) = c.poll_event() {
            match e {
                connection::Event::Session(e) => events.push(e),
                connection::Event::Transport(a) => actions.push(a),
            }
        }
        (out, events, actions)
    }

    /// [`drain_all`], where the connection asks for no action.
    fn drain(c: &mut StdioConnection) -> (Vec<u8>, Vec<Event>) {
        let (out, events, actions) = drain_all(c);
        assert_eq!(actions, [], "no action was expected");
        (out, events)
    }

    fn auto_conn(probe: u64) -> (StdioConnection, Instant) {
        let now = Instant::now();
        let cfg = SessionConfig::new(Implementation::new("t", "1")).with_era_policy(
            crate::session::EraPolicy::Auto {
                probe_timeout: std::time::Duration::from_secs(probe),
            },
        );
        (StdioConnection::new(cfg, now), now)
    }

    /// Asks the session for `tools/list` (held until the session is ready).
    fn list_tools(c: &mut StdioConnection, now: Instant) -> RequestHandle {
        c.session_mut()
            .send_request(now, "tools/list", None, RequestOptions::new())
            .expect("a request is accepted before the handshake is over")
    }

    /// A connection probing the era (`auto_conn(5)`, its `server/discover` written) with a
    /// `tools/list` of the host's waiting for the handshake.
    fn probing_with_a_request() -> (StdioConnection, Instant, RequestHandle) {
        let (mut c, now) = auto_conn(5);
        drain(&mut c);
        let h = list_tools(&mut c, now);
        (c, now, h)
    }

    fn lines(out: &[u8]) -> Vec<serde_json::Value> {
        out.split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).unwrap())
            .collect()
    }

    #[test]
    fn a_modern_server_answers_the_probe() {
        let (mut c, now) = auto_conn(5);
        let (out, _) = drain(&mut c);
        let sent = lines(&out);
        assert_eq!(sent[0]["method"], "server/discover");
        let answer = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":{}}}\n",
            sent[0]["id"],
            include_str!(
                "../../tests/data/2026-07-28/DiscoverResult/server-capabilities-discovery.json"
            )
            .replace('\n', "")
        );
        c.handle_bytes(now, answer.as_bytes());
        let (out, events, actions) = drain_all(&mut c);
        assert!(out.is_empty());
        assert!(matches!(
            events[..],
            [Event::Ready {
                era: crate::session::Era::Discover,
                ..
            }]
        ));
        assert_eq!(actions, []);
    }

    #[test]
    fn a_server_that_read_nothing_crashed_and_is_not_respawned() {
        let (mut c, now, h) = probing_with_a_request();
        c.handle_eof_unread(now, Some("exited with status 1: boom".into()));
        assert!(!c.awaiting_respawn());
        let (_, events, actions) = drain_all(&mut c);
        assert_eq!(actions, []);
        assert!(
            events
                .iter()
                .any(|e| matches!(e, Event::Completed { handle, .. } if *handle == h)),
            "{events:?}"
        );
        match events.last() {
            Some(Event::Closed { reason }) => {
                assert!(format!("{reason:?}").contains("boom"), "{reason:?}");
            }
            other => panic!("expected Closed, got {other:?}"),
        }
        assert!(c.is_finished());
    }

    #[test]
    fn a_server_that_exits_on_the_probe_is_respawned_and_initialized() {
        let (mut c, now, h) = probing_with_a_request();
        c.handle_bytes(now, b"Error: unknown method server/discover\n");
        c.handle_eof(now, Some("exited with status 1".into()));
        assert!(c.awaiting_respawn());
        let (out, events, actions) = drain_all(&mut c);
        assert_eq!(actions, [StdioEvent::Respawn]);
        assert!(
            out.is_empty(),
            "nothing is written before the new process exists"
        );
        assert!(
            !events
                .iter()
                .any(|e| matches!(e, Event::Closed { .. } | Event::Completed { .. }))
        );
        c.handle_bytes(now, b"{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}}\n"); // old leftovers
        c.handle_respawned(now);
        let (out, _) = drain(&mut c);
        let sent = lines(&out);
        assert_eq!(sent.len(), 1);
        assert_eq!(sent[0]["method"], "initialize");
        let init = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":{{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{{}},\"serverInfo\":{{\"name\":\"s\",\"version\":\"1\"}}}}}}\n",
            sent[0]["id"]
        );
        c.handle_bytes(now, init.as_bytes());
        let (out, events) = drain(&mut c);
        let sent = lines(&out);
        assert_eq!(sent[0]["method"], "notifications/initialized");
        assert_eq!(sent[1]["method"], "tools/list");
        assert_eq!(sent[1]["id"], h.get(), "same handle, its request survived");
        assert!(matches!(events.last(), Some(Event::Ready { .. })));
        // A second exit is a real close: no second respawn.
        c.handle_eof(now, None);
        let (_, events, actions) = drain_all(&mut c);
        assert_eq!(actions, []);
        assert!(matches!(events.last(), Some(Event::Closed { .. })));
    }

    #[test]
    fn a_server_that_answers_the_probe_with_an_error_and_exits_is_respawned() {
        let (mut c, now) = auto_conn(5);
        let (out, _) = drain(&mut c);
        let id = lines(&out)[0]["id"].clone();
        let err = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"error\":{{\"code\":-32601,\"message\":\"Method not found\"}}}}\n"
        );
        c.handle_bytes(now, err.as_bytes());
        let (out, _) = drain(&mut c);
        assert_eq!(
            lines(&out)[0]["method"],
            "initialize",
            "written to the dying process"
        );
        c.handle_eof(now, None);
        let (_, _, actions) = drain_all(&mut c);
        assert_eq!(actions, [StdioEvent::Respawn]);
        c.handle_respawned(now);
        let (out, events) = drain(&mut c);
        let sent = lines(&out);
        assert_eq!(sent.len(), 1);
        assert_eq!(sent[0]["method"], "initialize");
        assert!(!events.iter().any(|e| matches!(e, Event::Closed { .. })));
    }

    #[test]
    fn a_probe_timeout_falls_back_on_the_same_process() {
        let (mut c, now) = auto_conn(5);
        drain(&mut c);
        let later = now + std::time::Duration::from_secs(5);
        c.handle_timeout(later);
        let (out, _, actions) = drain_all(&mut c);
        assert_eq!(lines(&out)[0]["method"], "initialize");
        assert_eq!(actions, []);
    }

    #[test]
    fn an_exit_after_the_era_is_known_is_a_close() {
        let (mut c, now) = conn();
        drain(&mut c);
        c.handle_eof(now, None);
        let (_, events, actions) = drain_all(&mut c);
        assert_eq!(actions, []);
        assert!(matches!(events.last(), Some(Event::Closed { .. })));
    }

    #[test]
    fn a_lost_transport_while_a_respawn_waits_closes_without_respawning() {
        let (mut c, now, h) = probing_with_a_request();
        c.handle_eof(now, None);
        let (_, _, actions) = drain_all(&mut c);
        assert_eq!(actions, [StdioEvent::Respawn]);
        // The adapter could not start the server again.
        c.handle_transport_lost(now, Some("could not start it again".into()));
        assert!(!c.awaiting_respawn());
        assert!(c.is_finished());
        let (out, events, actions) = drain_all(&mut c);
        assert!(out.is_empty());
        assert_eq!(actions, []);
        assert!(events.iter().any(|e| matches!(
            e,
            Event::Completed { handle, result: Err(crate::session::RequestError::Closed(_)) }
                if *handle == h
        )));
        assert!(matches!(
            events.last(),
            Some(Event::Closed {
                reason: crate::session::CloseReason::TransportClosed { detail: Some(d) }
            }) if d == "could not start it again"
        ));
        assert_eq!(c.poll_timeout(), None);
    }

    const INIT_OK: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"serverInfo\":{\"name\":\"s\",\"version\":\"1\"}}}\n";

    #[test]
    fn writes_one_line_per_message_and_reads_lines() {
        let (mut c, now) = conn();
        let (out, _) = drain(&mut c);
        assert!(out.ends_with(b"\n") && out.iter().filter(|&&b| b == b'\n').count() == 1);
        c.handle_bytes(now, b"banner: starting up\r\n");
        c.handle_bytes(now, INIT_OK);
        let (out, events) = drain(&mut c);
        assert_eq!(
            out,
            b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
        );
        assert!(matches!(
            events[0],
            Event::Diagnostic(Diagnostic::NotJson { .. })
        ));
        assert!(matches!(events[1], Event::Ready { .. }));
    }

    #[test]
    fn over_long_lines_are_reported_and_the_connection_survives() {
        let now = Instant::now();
        let mut c = StdioConnection::with_decoder(
            SessionConfig::new(Implementation::new("t", "1")),
            LineDecoder::with_max_line_len(64),
            now,
        );
        drain(&mut c);
        let mut huge = vec![b'x'; 10_000];
        huge.push(b'\n');
        c.handle_bytes(now, &huge);
        assert!(c.buffered_len() <= 65);
        c.handle_bytes(now, b"\xff\xfe\n");
        let (_, events) = drain(&mut c);
        assert!(matches!(
            events[..],
            [
                Event::Diagnostic(Diagnostic::LineTooLong {
                    discarded: 10_000,
                    limit: 64
                }),
                Event::Diagnostic(Diagnostic::InvalidUtf8 { len: 2 })
            ]
        ));
    }

    #[test]
    fn eof_delivers_the_last_line_then_closes() {
        let (mut c, now) = conn();
        drain(&mut c);
        c.handle_bytes(now, &INIT_OK[..INIT_OK.len() - 1]);
        let h = list_tools(&mut c, now);
        c.handle_eof(now, Some("exited with status 1".into()));
        let (_, events) = drain(&mut c);
        assert!(matches!(events[0], Event::Ready { .. }));
        assert!(
            events
                .iter()
                .any(|e| matches!(e, Event::Completed { handle, result: Err(_) } if *handle == h))
        );
        assert!(matches!(events.last(), Some(Event::Closed { .. })));
    }
}
