//! The outbound queue and its budget: what the queued messages hold, the server requests
//! dropped while it is full, and the stall deadline of a peer that stopped reading.
//!
//! A driver pulls messages with [`Session::poll_transmit`] only once it has written what it
//! pulled before (at most one bounded batch is buffered outside the session), so the queue
//! holds exactly what the peer has not read yet, and every pull is write progress. Requests
//! the host makes are bounded by [`SessionConfig::max_in_flight`] (past it they are held
//! outside this queue); answers to the peer's own
//! requests are the one thing a peer can make the client queue without limit (a flood of
//! `ping`s while it never reads its input). So, while the queue holds more than
//! [`SessionConfig::max_outbound_bytes`], server requests are dropped unanswered (one
//! diagnostic when that starts, one with the count when the queue has drained to half the
//! limit), and when no message at all is pulled for [`SessionConfig::stall_timeout`], the
//! session closes with [`CloseReason::Stalled`].
//!
//! [`SessionConfig::max_in_flight`]: super::SessionConfig::max_in_flight
//! [`SessionConfig::max_outbound_bytes`]: super::SessionConfig::max_outbound_bytes
//! [`SessionConfig::stall_timeout`]: super::SessionConfig::stall_timeout

use std::borrow::Cow;

use serde_json::value::RawValue;

use super::{CloseReason, Diagnostic, RequestHandle, Session};
use crate::jsonrpc::{ErrorObject, Id};
use crate::time::{Duration, Instant, saturating_add};

/// A message waiting in the outbound queue. Requests are encoded from the pending table when
/// polled, so their params are never copied twice.
#[derive(Debug)]
pub(super) enum Queued {
    Initialize {
        wire: u64,
    },
    Discover {
        wire: u64,
    },
    Request(RequestHandle),
    /// A request nobody waits for ([`Session::send_detached_request`](super::Session::send_detached_request)).
    Detached {
        wire: u64,
        method: Cow<'static, str>,
        params: Option<Box<RawValue>>,
    },
    Notification {
        method: Cow<'static, str>,
        params: Option<Box<RawValue>>,
    },
    Response {
        id: Id,
        result: Result<Box<RawValue>, ErrorObject>,
    },
}

/// The queue of messages to send, with the bytes they hold.
pub(super) type OutboundQueue = crate::rpc::queue::OutboundQueue<Queued>;

impl crate::rpc::queue::Cost for Queued {
    fn cost(&self) -> usize {
        cost(self)
    }
}

/// What one queued message holds: its inline size and the payload it owns. Requests are
/// encoded from the pending table when pulled; their params are counted there.
fn cost(item: &Queued) -> usize {
    let payload = match item {
        Queued::Response { id, result } => crate::rpc::queue::answer_payload(id, result),
        Queued::Notification { params, .. } | Queued::Detached { params, .. } => {
            params.as_ref().map_or(0, |p| p.get().len())
        }
        _ => 0,
    };
    size_of::<Queued>() + payload
}

/// The state of a full queue: requests dropped since it filled, and the stall deadline.
#[derive(Debug, Default)]
pub(super) struct Backlog {
    /// Server requests dropped since the queue filled (0: it is not full).
    dropped: u64,
    /// When the session is declared stalled unless a message is pulled before.
    deadline: Option<Instant>,
    /// Whether a message was pulled since the deadline was armed.
    progress: bool,
    /// The caller's notifications are refused: the queue reached the limit and has not
    /// drained to half of it since.
    refusing_notifications: bool,
}

impl Session {
    /// Whether server requests must be dropped: the queue holds the limit or more, or it
    /// filled and has not drained to half the limit yet.
    pub(super) fn outbound_full(&self) -> bool {
        let limit = self.config.max_outbound_bytes;
        let bytes = self.outbound.bytes();
        bytes >= limit || (self.backlog.dropped > 0 && bytes > limit / 2)
    }

    /// Whether the caller's notification must be refused: the queue holds the limit or more,
    /// or it did and has not drained to half the limit yet (so that a caller notifying
    /// faster than the peer reads is refused in runs, not every other time).
    pub(super) fn refuses_notification(&mut self) -> bool {
        let limit = self.config.max_outbound_bytes;
        let bytes = self.outbound.bytes();
        let refused = bytes >= limit || (self.backlog.refusing_notifications && bytes > limit / 2);
        self.backlog.refusing_notifications = refused;
        refused
    }

    /// Drops a server request unanswered because the queue is full; the first drop reports
    /// it and arms the stall deadline.
    pub(super) fn drop_server_request(&mut self, now: Instant, method: &str) {
        if self.backlog.dropped == 0 {
            self.report(Diagnostic::OutboundQueueFull {
                method: method.to_owned(),
                queued: self.outbound.bytes(),
                limit: self.config.max_outbound_bytes,
            });
            self.backlog.deadline = self.config.stall_timeout.map(|t| saturating_add(now, t));
            self.backlog.progress = false;
        }
        self.backlog.dropped += 1;
    }

    /// A message was pulled: the peer reads. Once the queue drained to half the limit, the
    /// drops end (reported with their count) and so does the stall deadline.
    pub(super) fn outbound_pulled(&mut self) {
        self.backlog.progress = true;
        if self.backlog.dropped > 0 && !self.outbound_full() {
            let dropped = std::mem::take(&mut self.backlog.dropped);
            self.backlog.deadline = None;
            self.report(Diagnostic::ServerRequestsDropped { count: dropped });
        }
    }

    /// The stall deadline, if armed.
    pub(super) fn stall_deadline(&self) -> Option<Instant> {
        self.backlog.deadline
    }

    /// At the stall deadline: re-armed if a message was pulled since it was armed, else the
    /// session closes with [`CloseReason::Stalled`] (what is queued can never be read, so it
    /// is dropped).
    pub(super) fn check_stall(&mut self, now: Instant) {
        let (Some(deadline), Some(after)) = (self.backlog.deadline, self.config.stall_timeout)
        else {
            return;
        };
        if now < deadline {
            return;
        }
        if std::mem::take(&mut self.backlog.progress) {
            self.backlog.deadline = Some(saturating_add(now, after));
            return;
        }
        let reason = CloseReason::Stalled {
            after,
            queued: self.outbound.bytes(),
            dropped: self.backlog.dropped,
        };
        self.outbound.clear();
        self.backlog = Backlog::default();
        self.close_with(reason);
    }
}

/// The default of [`SessionConfig::max_outbound_bytes`](super::SessionConfig::max_outbound_bytes).
pub(super) const DEFAULT_MAX_OUTBOUND_BYTES: usize = 8 << 20;
/// The default of [`SessionConfig::stall_timeout`](super::SessionConfig::stall_timeout).
/// Shorter than the default request timeout (30 s), so that a call to a peer that stopped
/// reading fails with that reason rather than a timeout.
pub(super) const DEFAULT_STALL_TIMEOUT: Duration = Duration::from_secs(10);
