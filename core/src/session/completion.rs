//! How requests leave the pending table: queueing with a deadline, completion (with or
//! without a cancellation notice to the server) and the close that completes them all.

use std::borrow::Cow;

use super::pending::{Pending, Stage};
use super::{
    CloseReason, Diagnostic, Event, Queued, RawResult, RequestError, RequestHandle, Session,
    SessionState,
};
use super::{meta, mrtr};
use crate::jsonrpc;
use crate::rpc::clock::nanos;
use crate::time::Instant;
use std::num::NonZeroU64;

impl Session {
    /// Puts a pending request in the outbound queue and arms its deadline.
    pub(super) fn queue_request(&mut self, now: Instant, handle: RequestHandle) {
        self.arm_deadline(now, handle);
        let Some(p) = self.pending.get_mut(handle) else {
            return;
        };
        p.stage = Stage::Queued;
        self.outbound.push_back(Queued::Request(handle));
    }

    /// Arms a request's deadline from `now`, unless it has one already (a request held past
    /// the in-flight cap keeps the deadline it got when it was issued).
    pub(super) fn arm_deadline(&mut self, now: Instant, handle: RequestHandle) {
        let active = self.clock.active(now);
        let Some(p) = self.pending.get_mut(handle) else {
            return;
        };
        if p.deadline.is_some() {
            return;
        }
        let active = nanos(active);
        if let Some(total) = &mut p.total {
            total.sent_at = active;
        }
        let deadline = deadline_for(p, active);
        p.set_armed(deadline);
        if let Some((at, _)) = deadline {
            self.deadlines.insert(at.get(), handle);
        }
    }

    /// Completes a request and, if the server has seen it, tells it to stop.
    pub(super) fn finish(
        &mut self,
        handle: RequestHandle,
        result: Result<RawResult, RequestError>,
        notice: Option<&str>,
    ) {
        self.finish_with_notice(handle, result, notice.map(str::to_owned));
    }

    pub(super) fn finish_with_notice(
        &mut self,
        handle: RequestHandle,
        result: Result<RawResult, RequestError>,
        reason: Option<String>,
    ) {
        let Some(p) = self.pending.remove(handle) else {
            return;
        };
        if let Some(at) = p.deadline {
            self.disarmed(at, handle);
        }
        self.forget_modern(handle);
        if p.stage == Stage::Sent {
            self.outbound.push_back(Queued::Notification {
                method: Cow::Borrowed("notifications/cancelled"),
                params: Some(meta::cancelled_params(p.wire, reason.as_deref())),
            });
        }
        self.events.push_back(Event::Completed { handle, result });
        self.released(p.stage);
    }

    /// Completes a request with its answer (no cancellation notice).
    pub(super) fn complete(
        &mut self,
        handle: RequestHandle,
        result: Result<RawResult, RequestError>,
    ) {
        let Some(p) = self.pending.remove(handle) else {
            return;
        };
        if let Some(at) = p.deadline {
            self.disarmed(at, handle);
        }
        self.forget_modern(handle);
        self.events.push_back(Event::Completed { handle, result });
        self.released(p.stage);
    }

    /// Tells the deadline index that `handle` stopped naming its entry armed at `at` (removed
    /// from the table, or its `deadline` taken).
    pub(super) fn disarmed(&mut self, at: NonZeroU64, handle: RequestHandle) {
        let pending = &self.pending;
        self.deadlines
            .remove(at.get(), handle, |at, h| pending.is_armed(at, h));
    }

    /// Re-arms `handle`'s deadline (progress reset it): the index is touched only when the
    /// deadline moved, so a handle never holds two entries with the same instant.
    pub(super) fn rearm(&mut self, handle: RequestHandle, deadline: Option<(NonZeroU64, bool)>) {
        let Some(p) = self.pending.get_mut(handle) else {
            return;
        };
        let old = p.deadline;
        p.set_armed(deadline);
        if old == p.deadline {
            return;
        }
        if let Some(old) = old {
            self.disarmed(old, handle);
        }
        if let Some((at, _)) = deadline {
            self.deadlines.insert(at.get(), handle);
        }
    }

    pub(super) fn close_with(&mut self, reason: CloseReason) {
        self.state = SessionState::Closed;
        self.handshake.finish();
        for (handle, _) in self.pending.drain_sorted() {
            self.events.push_back(Event::Completed {
                handle,
                result: Err(RequestError::Closed(reason.clone())),
            });
        }
        self.deadlines.clear();
        self.waiting.clear();
        self.held.clear();
        self.inbound.clear();
        self.modern = mrtr::ModernRequests::default();
        self.events.push_back(Event::Closed { reason });
    }

    /// Reports something odd about the transport (used by the framing wrappers).
    pub(crate) fn report(&mut self, diagnostic: Diagnostic) {
        if !self.is_closed() {
            self.events.push_back(Event::Diagnostic(diagnostic));
        }
    }

    pub(super) fn report_decode_error(&mut self, e: jsonrpc::DecodeError) {
        self.report(decode_diagnostic(e));
    }

    /// An input that did not decode: reported, and if it answers a pending request, that
    /// request fails at once ([`handle_undecodable`](Self::handle_undecodable)).
    pub(super) fn undecodable_input(&mut self, bytes: &[u8], e: jsonrpc::DecodeError) {
        self.handle_undecodable(bytes, super::Undecodable::Json, decode_diagnostic(e));
    }
}

/// The diagnostic for an input that is not a JSON-RPC message.
fn decode_diagnostic(e: jsonrpc::DecodeError) -> Diagnostic {
    match e {
        jsonrpc::DecodeError::NotJson { excerpt, .. } => Diagnostic::NotJson { excerpt },
        jsonrpc::DecodeError::NotJsonRpc { detail, excerpt } => {
            Diagnostic::InvalidMessage { detail, excerpt }
        }
    }
}

/// The deadline a request gets when sent at active time `now` (nanoseconds): its timeout,
/// capped by the maximum total time when progress resets it.
pub(super) fn deadline_for(p: &Pending, now: u64) -> Option<(NonZeroU64, bool)> {
    let per_attempt = p.timeout.map(|t| t.saturating_add(now));
    let total = p.total.as_ref().map(|t| t.max.saturating_add(t.sent_at));
    match (per_attempt, total) {
        (Some(a), Some(t)) if t <= a => Some((t, true)),
        (Some(a), _) => Some((a, false)),
        (None, Some(t)) => Some((t, true)),
        (None, None) => None,
    }
}
