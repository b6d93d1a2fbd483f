//! The one contract every connection type keeps: [`Connection`], and its [`Event`].
//!
//! A connection owns a [`Session`] and carries its messages over one transport:
//! [`StdioConnection`](crate::stdio::StdioConnection) over newline-delimited JSON (a child's
//! stdio, a socket, a pipe), [`http::Connection`](crate::http::Connection) over Streamable
//! HTTP or legacy HTTP+SSE. Both sort their methods into the same four groups, in the order
//! quinn-proto documents them:
//!
//! - **(A) getters**: [`session`](Connection::session), [`is_finished`](Connection::is_finished)
//!   and the transport's own (buffered bytes, session id, ...).
//! - **(B) inputs** `handle_*`: what the transport read or saw (bytes and their end; HTTP
//!   response heads, body chunks, ends and failures), [`handle_timeout`](Connection::handle_timeout)
//!   when the instant of `poll_timeout` came, and
//!   [`handle_transport_lost`](Connection::handle_transport_lost) when the adapter can carry
//!   nothing more.
//! - **(C) commands**: requests, notifications, cancellations and responses are issued on
//!   [`session_mut`](Connection::session_mut) (they return a handle or a
//!   [`UsageError`](crate::session::UsageError) at once); [`close`](Connection::close) is the
//!   connection's own, because closing also shuts the transport down.
//! - **(D) outputs** `poll_*`: the transport's transmit output (`poll_transmit` for stdio,
//!   `poll_exchange` and `poll_abort` for HTTP), then [`poll_event`](Connection::poll_event),
//!   then [`poll_timeout`](Connection::poll_timeout).
//!
//! **The drain rule** (str0m's single-mutation invariant): after every input or command, drain
//! the transmit output until `None`, drain `poll_event` until `None`, then read
//! `poll_timeout` and wait for that instant or the next input, whichever comes first. When the
//! instant comes, call `handle_timeout(now)`; calling it early is a no-op.
//!
//! The trait holds the part of the contract that does not depend on the transport, so that a
//! driver can run the session side of any connection with one piece of code; the transport's
//! inputs and transmit output stay inherent methods of each type, called by the code that owns
//! that transport's I/O.

use crate::session::{self, Session};
use crate::time::Instant;

/// An event from a connection's `poll_event`: the session's, or the transport's own.
///
/// `T` is [`StdioEvent`](crate::stdio::StdioEvent) for stdio and
/// [`HttpEvent`](crate::http::HttpEvent) for HTTP.
#[derive(Debug)]
pub enum Event<T> {
    /// A session event (completions, notifications, server requests, diagnostics, close).
    Session(session::Event),
    /// Something about the transport itself: an action for the adapter (stdio's respawn), or
    /// a report (an HTTP session reset, a resumed stream, the end of the DELETE).
    Transport(T),
}

/// The transport-independent part of the contract every connection type keeps (see the
/// [module docs](self) for the four groups and the drain rule).
///
/// Every method here is also an inherent method of the implementing types, documented
/// there; the trait lets a driver be generic over the connection type.
pub trait Connection {
    /// The transport's own events ([`Event::Transport`]).
    type TransportEvent;

    /// (A) The session, for its getters (state, negotiated version, server info).
    fn session(&self) -> &Session;

    /// (C) The session, for commands: requests, notifications, cancellations, responses.
    /// Drain the outputs afterwards.
    fn session_mut(&mut self) -> &mut Session;

    /// (A) Whether the connection has nothing more to do: the session is closed and the
    /// transport's own closing (an HTTP DELETE) is over. What the adapter still does after
    /// that (a child's shutdown schedule) is its own.
    fn is_finished(&self) -> bool;

    /// (B) The instant of [`poll_timeout`](Self::poll_timeout) came (or any later one): fires
    /// what is due. Calling it early is a no-op.
    fn handle_timeout(&mut self, now: Instant);

    /// (B) The adapter can carry nothing more (its task is stopping, the I/O failed for good):
    /// every pending request completes with
    /// [`RequestError::Closed`](crate::session::RequestError::Closed), then one
    /// [`Event::Closed`](crate::session::Event::Closed) with
    /// [`CloseReason::TransportClosed`](crate::session::CloseReason::TransportClosed)
    /// carrying `detail`. Nothing is re-tried or re-spawned. No-op once closed.
    fn handle_transport_lost(&mut self, now: Instant, detail: Option<String>);

    /// (C) Closes: the session closes (pending requests complete with `Closed`), and the
    /// transport starts its own closing. Idempotent.
    fn close(&mut self, now: Instant);

    /// (D) The next event. Drain it after the transmit output, after every input or command.
    fn poll_event(&mut self) -> Option<Event<Self::TransportEvent>>;

    /// (D) When [`handle_timeout`](Self::handle_timeout) next has work: the minimum of every
    /// deadline the connection and its session hold. Read it after draining the events.
    fn poll_timeout(&self) -> Option<Instant>;
}
