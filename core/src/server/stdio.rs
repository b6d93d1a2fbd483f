//! A [`ServerSession`] over newline-delimited JSON: what a stdio server (or one end of a
//! socket or an in-process pipe) needs.
//!
//! Feed it the bytes read from the client with [`handle_bytes`](StdioServerConnection::handle_bytes),
//! write what [`poll_transmit`](StdioServerConnection::poll_transmit) appends, and report the
//! end of input with [`handle_eof`](StdioServerConnection::handle_eof). Everything else
//! (answers, requests, notifications, events, deadlines) is the session's, reached through
//! [`session`](StdioServerConnection::session) and
//! [`session_mut`](StdioServerConnection::session_mut): the same groups and drain rule as the
//! client's [`StdioConnection`](crate::stdio::StdioConnection), and as [`ServerSession`].

use super::{Diagnostic, Outgoing, ServerConfig, ServerSession};
use crate::framing::lines::{Line, LineDecoder, encode_line};
use crate::time::Instant;

/// A [`ServerSession`] over newline-delimited JSON.
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

    /// The session, for commands, `handle_timeout`, `poll_event` and `poll_timeout`.
    pub fn session_mut(&mut self) -> &mut ServerSession {
        &mut self.session
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
