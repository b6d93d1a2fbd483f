//! The stdio transport: line framing around a [`Session`], and the child-process policy.
//!
//! [`StdioConnection`] is all a byte-stream transport needs (a child's stdin/stdout, a socket,
//! an in-process pipe): feed it the bytes read with [`handle_bytes`](StdioConnection::handle_bytes),
//! write what [`poll_transmit`](StdioConnection::poll_transmit) appends, and report the end of
//! the stream with [`handle_eof`](StdioConnection::handle_eof). Everything else (requests,
//! events, deadlines) is the session's, reached through [`session`](StdioConnection::session)
//! and [`session_mut`](StdioConnection::session_mut); the drain invariant of [`Session`] holds
//! unchanged.
//!
//! [`shutdown::ShutdownSchedule`] is the policy for stopping a child process.

pub mod shutdown;

use crate::framing::lines::{Line, LineDecoder, encode_line};
use crate::session::{Diagnostic, Outgoing, Session, SessionConfig};
use crate::time::Instant;

/// A [`Session`] over newline-delimited JSON.
#[derive(Debug)]
pub struct StdioConnection {
    session: Session,
    decoder: LineDecoder,
    scratch: Vec<u8>,
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
        StdioConnection {
            session: Session::new(config, now),
            decoder,
            scratch: Vec::new(),
        }
    }

    /// The session, for its getters.
    #[must_use]
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The session, for commands (requests, notifications, cancels, answers, close) and
    /// `handle_timeout`.
    pub fn session_mut(&mut self) -> &mut Session {
        &mut self.session
    }

    /// Bytes the line decoder holds for an incomplete line (bounded by the line limit).
    #[must_use]
    pub fn buffered_len(&self) -> usize {
        self.decoder.buffered_len()
    }

    /// Feeds bytes read from the peer, cut anywhere. Complete lines go to the session; an
    /// over-long or non-UTF-8 line becomes an [`Event::Diagnostic`](crate::session::Event::Diagnostic).
    pub fn handle_bytes(&mut self, now: Instant, chunk: &[u8]) {
        let session = &mut self.session;
        self.decoder
            .decode(chunk, |line| deliver(session, now, line));
    }

    /// The peer's output ended. A final line without a newline is still delivered; then the
    /// session closes with [`CloseReason::TransportClosed`](crate::session::CloseReason::TransportClosed)
    /// carrying `detail` (the adapter's description: exit status, last stderr lines).
    pub fn handle_eof(&mut self, now: Instant, detail: Option<String>) {
        let session = &mut self.session;
        self.decoder.finish(|line| deliver(session, now, line));
        self.session.handle_transport_closed(now, detail);
    }

    /// The next message to write: one line, `\n` included, appended to `buf`.
    #[must_use]
    pub fn poll_transmit(&mut self, buf: &mut Vec<u8>) -> Option<Outgoing> {
        self.scratch.clear();
        let out = self.session.poll_transmit(&mut self.scratch)?;
        encode_line(buf, &self.scratch);
        Some(out)
    }
}

fn deliver(session: &mut Session, now: Instant, line: Line<'_>) {
    match line {
        Line::Message(text) => session.handle_message_str(now, text),
        Line::TooLong { discarded, limit } => {
            session.report(Diagnostic::LineTooLong { discarded, limit });
        }
        Line::InvalidUtf8 { len, .. } => session.report(Diagnostic::InvalidUtf8 { len }),
        // `Line` is non_exhaustive; a new kind of framing report is not a message.
        #[allow(unreachable_patterns)]
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::{Event, RequestOptions};
    use crate::types::Implementation;

    fn conn() -> (StdioConnection, Instant) {
        let now = Instant::now();
        let c = StdioConnection::new(SessionConfig::new(Implementation::new("t", "1")), now);
        (c, now)
    }

    fn drain(c: &mut StdioConnection) -> (Vec<u8>, Vec<Event>) {
        let mut out = Vec::new();
        while c.poll_transmit(&mut out).is_some() {}
        let mut events = Vec::new();
        while let Some(e) = c.session_mut().poll_event() {
            events.push(e);
        }
        (out, events)
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
        let h = c
            .session_mut()
            .send_request(now, "tools/list", None, RequestOptions::new())
            .unwrap();
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
