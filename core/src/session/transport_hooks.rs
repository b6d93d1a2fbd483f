//! The session's transport hooks: what the core's own connections (the HTTP layer) need from
//! the session beyond framed messages: fail one request from outside, tell whether a request
//! is still pending, re-send a request under a fresh wire id, and go back to the handshake
//! when the server forgot the session (HTTP 404).
//!
//! Crate-private: a host drives a session through a connection
//! ([`crate::connection::Connection`]), whose inputs call these.

use super::{
    CloseReason, Queued, RequestError, RequestHandle, Session, SessionState, Waiting,
    pending::Stage,
};
use crate::time::Instant;

impl Session {
    /// Whether `handle` is still pending (no [`Event::Completed`](super::Event::Completed)
    /// yet).
    #[must_use]
    pub(crate) fn is_pending(&self, handle: RequestHandle) -> bool {
        self.pending.get(handle).is_some()
    }

    /// Whether `handle` is pending and its last sending still waits for an answer: false
    /// once a reply started a multi-round step (the request waits for the host's input, or
    /// is queued to be sent again under a new wire id). A transport uses it to tell an
    /// exchange that ended without its answer from one that was answered.
    #[must_use]
    pub(crate) fn awaits_reply(&self, handle: RequestHandle) -> bool {
        self.pending
            .get(handle)
            .is_some_and(|p| matches!(p.stage, Stage::Sent))
    }

    /// The method of a pending request.
    #[must_use]
    pub(crate) fn pending_method(&self, handle: RequestHandle) -> Option<&str> {
        self.pending.get(handle).map(|p| &*p.method)
    }

    /// Completes one pending request with a transport error (an HTTP status, a stream that
    /// ended without the answer). No `notifications/cancelled` is sent: the transport lost the
    /// exchange, the server may never have seen it. Returns whether the request was pending.
    pub(crate) fn fail_request(&mut self, handle: RequestHandle, error: RequestError) -> bool {
        if !self.is_pending(handle) {
            return false;
        }
        self.complete(handle, Err(error));
        true
    }

    /// Closes the session for a transport-level reason the HTTP layer found (the initialize
    /// POST failed, the legacy stream dropped). Every pending request completes with
    /// [`RequestError::Closed`]`(reason)`, then [`Event::Closed`](super::Event::Closed).
    pub(crate) fn close_for_transport(&mut self, _now: Instant, reason: CloseReason) {
        if self.is_closed() {
            return;
        }
        self.outbound.clear();
        self.close_with(reason);
    }

    /// Re-sends a request that was sent but lost by the transport (the HTTP session expired):
    /// it gets a fresh wire id under the same handle and goes back to the outbound queue. Its
    /// deadline is unchanged. Only valid once the session is ready again; returns whether the
    /// request was re-queued.
    pub(crate) fn resend_request(&mut self, handle: RequestHandle) -> bool {
        if self.state != SessionState::Ready {
            return false;
        }
        let wire = self.next_id;
        let Some(p) = self.pending.get_mut(handle) else {
            return false;
        };
        if p.stage != Stage::Sent {
            return false;
        }
        p.stage = Stage::Queued;
        self.next_id += 1;
        self.pending.rewire(handle, wire);
        self.outbound.push_back(Queued::Request(handle));
        true
    }

    /// Goes back to the handshake because the server no longer knows the session: a fresh
    /// `initialize` (fresh wire id) is queued first, the handshake deadline is re-armed, what the
    /// server knew of the old session is forgotten (negotiated version, open server requests,
    /// queued notifications and responses), and requests queued but not yet sent wait for the
    /// new handshake. Requests already sent stay pending: re-send the lost ones with
    /// [`resend_request`](Self::resend_request) after the new
    /// [`Event::Ready`](super::Event::Ready). Returns `false` (and does nothing) when closed.
    pub(crate) fn restart_handshake(&mut self, now: Instant) -> bool {
        if self.is_closed() {
            return false;
        }
        let mut requeue = Vec::new();
        for item in self.outbound.take_all() {
            if let Queued::Request(handle) = item {
                requeue.push(handle);
            }
        }
        for handle in requeue.into_iter().rev() {
            if let Some(p) = self.pending.get_mut(handle)
                && p.stage == Stage::Queued
            {
                p.stage = Stage::Waiting;
                self.waiting.push_front(Waiting::Request(handle));
            }
        }
        self.inbound.clear();
        // Open human-answered requests paused the clock (possibly nested); they are gone.
        while self.clock.is_paused() {
            self.clock.resume(now);
        }
        self.state = SessionState::Handshaking;
        self.server = None;
        let request = self.handshake.restart(now, self.next_id);
        self.next_id += 1;
        self.outbound.push_back(request);
        true
    }
}
