//! Requests past the in-flight cap: held in order until a request in flight leaves.
//!
//! [`SessionConfig::max_in_flight`](super::SessionConfig::max_in_flight) bounds the requests
//! the server is asked to work on at once (waiting for the handshake, queued or sent). A
//! request issued past it is *held*: it gets its handle and its deadline at once, like any
//! request, and waits in a FIFO queue; each time a request in flight leaves the pending table
//! (answered, failed, timed out, cancelled), the oldest request still held takes its place.
//! A held request whose deadline passes fails with the same [`RequestError::Timeout`] as any
//! request; one cancelled (a dropped call) leaves the table at once. Either way the server
//! never hears of it. Its slot in the queue is skipped when it reaches the front, and the
//! queue is compacted when such stale slots outnumber the held requests.
//!
//! [`RequestError::Timeout`]: super::RequestError::Timeout

use std::collections::VecDeque;

use super::pending::{PendingRequests, Stage};
use super::{Queued, RequestHandle, Session, SessionState, Waiting};

/// The queue of held requests.
#[derive(Debug, Default)]
pub(super) struct HeldRequests {
    /// Handles in the order they were issued; some may have left the table since.
    queue: VecDeque<RequestHandle>,
    /// How many pending requests are held (the queue's live slots).
    live: usize,
}

impl HeldRequests {
    /// How many requests are held.
    pub(super) fn len(&self) -> usize {
        self.live
    }

    /// How many slots the queue has, stale ones included (for tests of its bound).
    #[cfg(test)]
    pub(super) fn queue_len(&self) -> usize {
        self.queue.len()
    }

    /// Holds `handle` (already in the table with [`Stage::Held`]) behind the others.
    pub(super) fn push(&mut self, handle: RequestHandle) {
        self.queue.push_back(handle);
        self.live += 1;
    }

    /// A held request left the table without being admitted: its slot goes stale.
    fn forget(&mut self, pending: &PendingRequests) {
        self.live = self.live.saturating_sub(1);
        // Stale slots are 8 bytes each; dropped calls must not grow the queue without
        // bound, so compact once they outnumber the live ones.
        if self.queue.len() > 2 * self.live + 64 {
            self.queue.retain(|&h| is_held(pending, h));
        }
    }

    /// The oldest request still held, taken out of the queue.
    fn pop(&mut self, pending: &PendingRequests) -> Option<RequestHandle> {
        while let Some(h) = self.queue.pop_front() {
            if is_held(pending, h) {
                self.live -= 1;
                return Some(h);
            }
        }
        None
    }

    /// Forgets every held request (the session closed; the table completes them).
    pub(super) fn clear(&mut self) {
        self.queue = VecDeque::new();
        self.live = 0;
    }
}

fn is_held(pending: &PendingRequests, handle: RequestHandle) -> bool {
    pending.get(handle).is_some_and(|p| p.stage == Stage::Held)
}

impl Session {
    /// How many requests are in flight (pending and not held).
    pub(super) fn admitted(&self) -> usize {
        self.pending.len() - self.held.len()
    }

    /// Whether a new request must be held: the cap is reached.
    pub(super) fn must_hold(&self) -> bool {
        self.admitted() >= self.config.max_in_flight
    }

    /// A request left the pending table at `stage`: a held one is forgotten; one in flight
    /// makes room for the oldest held request.
    // Inlined into each completion: with no request held, the first checks are all it costs.
    #[inline(always)]
    pub(super) fn released(&mut self, stage: Stage) {
        if stage == Stage::Held {
            self.held.forget(&self.pending);
            return;
        }
        // Nothing is held (the common case): no room to hand on. Stale slots of held
        // requests that left are skipped by the next `pop` (the queue is bounded by
        // `forget`'s compaction meanwhile).
        if self.held.len() == 0 || self.is_closed() || self.must_hold() {
            return;
        }
        if let Some(handle) = self.held.pop(&self.pending) {
            self.admit(handle);
        }
    }

    /// Sends a held request on its way: behind the handshake if it is not done, else to the
    /// outbound queue. Its deadline, armed when it was issued, keeps running.
    fn admit(&mut self, handle: RequestHandle) {
        let Some(p) = self.pending.get_mut(handle) else {
            return;
        };
        if self.state == SessionState::Handshaking {
            p.stage = Stage::Waiting;
            self.waiting.push_back(Waiting::Request(handle));
        } else {
            p.stage = Stage::Queued;
            self.outbound.push_back(Queued::Request(handle));
        }
    }
}
