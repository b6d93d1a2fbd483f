//! [`ReadyHold`]: the session's `Ready` event held back until the GET listener is settled.
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
pub(crate) struct ReadyHold {
    /// When the events are released even if the listener has not settled.
    pub(crate) until: Instant,
    /// The held events, `Ready` first, in arrival order.
    pub(crate) events: VecDeque<Event>,
}

impl ReadyHold {
    /// A hold that starts with `ready` and lasts until `until` at most.
    pub(crate) fn new(ready: Event, until: Instant) -> Self {
        ReadyHold {
            until,
            events: VecDeque::from([ready]),
        }
    }
}
