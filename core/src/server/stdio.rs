//! A [`ServerSession`] over newline-delimited JSON: what a stdio server (or one end of a
//! socket or an in-process pipe) needs.
//!
//! [`StdioServerConnection`] keeps the same groups and drain rule as the client's
//! [`StdioConnection`](crate::stdio::StdioConnection) (listed on the type).

use super::{Diagnostic, Event, Outgoing, ServerConfig, ServerSession};
use crate::framing::lines::{Line, LineDecoder, encode_line};
use crate::time::Instant;

/// A [`ServerSession`] over newline-delimited JSON.
///
/// Its methods fall in the four groups of the client's
/// [`StdioConnection`](crate::stdio::StdioConnection):
///
/// - **(A) getters**: [`session`](Self::session), [`is_closed`](Self::is_closed),
///   [`buffered_len`](Self::buffered_len).
/// - **(B) inputs**: [`handle_bytes`](Self::handle_bytes) (bytes read from the client, cut
///   anywhere), [`handle_eof`](Self::handle_eof), [`handle_timeout`](Self::handle_timeout).
/// - **(C) commands**: on the session through [`session_mut`](Self::session_mut) (answers,
///   requests to the client, notifications, progress, cancellations), and
///   [`close`](Self::close).
/// - **(D) outputs**: [`poll_transmit`](Self::poll_transmit) (one line to write),
///   [`poll_event`](Self::poll_event), [`poll_timeout`](Self::poll_timeout).
///
/// **Drain rule.** After every input or command, drain `poll_transmit` until `None`, then
/// `poll_event` until `None`, then wait until `poll_timeout` or the next input.
#[derive(Debug)]
pub struct StdioServerConnection {
    session: ServerSession,
    decoder: LineDecoder,
    scratch: Vec<u8>,
}

impl StdioServerConnection {
    /// Starts a server session over a byte stream with the default 16 MiB line limit.
    #[must_use]
    pub fn new(config: ServerConfig, now: Instant) -> Self {
        Self::with_decoder(config, LineDecoder::new(), now)
    }

    /// Starts a server session with a configured line decoder (another maximum line length).
    #[must_use]
    pub fn with_decoder(config: ServerConfig, decoder: LineDecoder, now: Instant) -> Self {
        StdioServerConnection {
            session: ServerSession::new(config, now),
            decoder,
            scratch: Vec::new(),
        }
    }

    /// The session, for its getters.
    #[must_use]
    pub fn session(&self) -> &ServerSession {
        &self.session
    }

    /// The session, for its commands (answers, requests to the client, notifications).
    pub fn session_mut(&mut self) -> &mut ServerSession {
        &mut self.session
    }

    /// Whether the session is closed (its `Closed` event may still be waiting in
    /// [`poll_event`](Self::poll_event)).
    #[must_use]
    pub fn is_closed(&self) -> bool {
        self.session.is_closed()
    }

    /// The clock reached [`poll_timeout`](Self::poll_timeout): fires what is due (see
    /// [`ServerSession::handle_timeout`]). Calling it early is a no-op.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.session.handle_timeout(now);
    }

    /// Closes the session (see [`ServerSession::close`]): pending requests to the client
    /// complete with `Closed`, then one `Closed` event.
    pub fn close(&mut self, now: Instant) {
        self.session.close(now);
    }

    /// The next event for the host (see [`ServerSession::poll_event`]).
    #[must_use]
    pub fn poll_event(&mut self) -> Option<Event> {
        self.session.poll_event()
    }

    /// When [`handle_timeout`](Self::handle_timeout) next has work.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.session.poll_timeout()
    }

    /// Bytes the line decoder holds for an incomplete line (bounded by the line limit).
    #[must_use]
    pub fn buffered_len(&self) -> usize {
        self.decoder.buffered_len()
    }

    /// Feeds bytes read from the client, cut anywhere. Complete lines go to the session; an
    /// over-long line becomes a [`Diagnostic::LineTooLong`], a line that is not UTF-8 is
    /// answered as a parse error.
    pub fn handle_bytes(&mut self, now: Instant, chunk: &[u8]) {
        let session = &mut self.session;
        self.decoder
            .decode(chunk, |line| deliver(session, now, line));
    }

    /// The client's input ended (stdin closed). A final line without a newline is still
    /// delivered; then the session closes with
    /// [`CloseReason::TransportClosed`](crate::session::CloseReason::TransportClosed).
    pub fn handle_eof(&mut self, now: Instant, detail: Option<String>) {
        let session = &mut self.session;
        self.decoder.finish(|line| deliver(session, now, line));
        self.session.handle_transport_closed(now, detail);
    }

    /// The next message to write: one line, `\n` included, appended to `buf`.
    pub fn poll_transmit(&mut self, buf: &mut Vec<u8>) -> Option<Outgoing> {
        self.scratch.clear();
        let out = self.session.poll_transmit(&mut self.scratch)?;
        encode_line(buf, &self.scratch);
        Some(out)
    }
}

fn deliver(session: &mut ServerSession, now: Instant, line: Line<'_>) {
    match line {
        Line::Message(text) => session.handle_message_str(now, text),
        Line::TooLong { discarded, limit } if !session.is_closed() => {
            session.report(Diagnostic::LineTooLong { discarded, limit });
        }
        // Not UTF-8, hence not JSON: the session answers it as a parse error.
        Line::InvalidUtf8 { bytes, .. } => session.handle_message(now, bytes),
        // `Line` is non_exhaustive; a new kind of framing report is not a message.
        #[allow(unreachable_patterns)]
        _ => {}
    }
}
