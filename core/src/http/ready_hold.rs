//! [`HostEvents`]: the events a connection has for its host, with `Ready` held back until the
//! GET listener is settled.
//!
//! A Streamable HTTP server may send server-initiated messages only on an open GET stream, and
//! some servers route messages that concern the client's first request there. When the host
//! asks for it ([`ConnectionConfig::await_listener`](super::ConnectionConfig::await_listener)),
//! the connection delays `Ready`, and every session event after it, until the listener is open,
//! refused or failed, or until the wait runs out, so no request of the host's can race the
//! listener's opening.

use std::collections::VecDeque;

use super::exchange::Event;
use crate::time::Instant;

/// Events held back while the listener opens, and until when at most.
#[derive(Debug)]
struct ReadyHold {
    /// When the events are released even if the listener has not settled.
    until: Instant,
    /// The held events, `Ready` first, in arrival order.
    events: VecDeque<Event>,
}

/// The queue behind [`Connection::poll_event`](super::Connection::poll_event), and the
/// session events held back behind a `Ready` (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct HostEvents {
    /// What `poll_event` hands out next, in order.
    queue: VecDeque<Event>,
    /// `Ready` and the session events after it, while a hold is on.
    hold: Option<ReadyHold>,
}

impl HostEvents {
    /// Queues `ev` for the host at once, past any hold: the connection's own reports and the
    /// session's close (which also releases the hold first, see [`release`](Self::release)).
    pub(crate) fn push(&mut self, ev: Event) {
        self.queue.push_back(ev);
    }

    /// Queues a session event behind the hold while one is on; otherwise, with `hold_until`,
    /// starts a hold with `ev` (the `Ready` of a connection about to open its listener).
    pub(crate) fn deliver(&mut self, ev: Event, hold_until: Option<Instant>) {
        if let Some(hold) = &mut self.hold {
            hold.events.push_back(ev);
        } else if let Some(until) = hold_until {
            self.hold = Some(ReadyHold {
                until,
                events: VecDeque::from([ev]),
            });
        } else {
            self.queue.push_back(ev);
        }
    }

    /// Ends the hold, if any: the held events follow the queued ones, in order. Called when
    /// the listener settled, the wait ran out, or the connection is going away.
    pub(crate) fn release(&mut self) {
        if let Some(hold) = self.hold.take() {
            self.queue.extend(hold.events);
        }
    }

    /// When the hold ends at the latest (the `ReadyHold` timer).
    pub(crate) fn hold_deadline(&self) -> Option<Instant> {
        self.hold.as_ref().map(|h| h.until)
    }

    /// The next event for the host.
    pub(crate) fn pop(&mut self) -> Option<Event> {
        self.queue.pop_front()
    }
}
