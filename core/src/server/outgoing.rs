//! What the server sends: the outbound queue (bounded in bytes) and the table of its own
//! requests to the client, with their deadlines in the shared [`DeadlineIndex`].

use std::borrow::Cow;
use std::num::NonZeroU64;

use serde_json::value::RawValue;

use super::{Event, ServerSession};
use crate::jsonrpc::{ErrorObject, Id};
use crate::rpc::RequestHandle;
use crate::rpc::clock::nanos;
use crate::rpc::queue::{answer_payload, error_payload};
use crate::session::{RawParams, RawResult, RequestError, meta};
use crate::time::{Duration, Instant};

/// A message waiting to be sent. Requests are encoded from the pending table when polled.
#[derive(Debug)]
pub(super) enum Queued {
    Request(RequestHandle),
    Notification {
        method: Cow<'static, str>,
        params: Option<Box<RawValue>>,
    },
    Response {
        id: Id,
        result: Result<Box<RawValue>, ErrorObject>,
    },
    /// An error answer to input whose id could not be read (`"id": null`).
    UnidentifiedError(ErrorObject),
}

/// The queue of messages to send, with the bytes they hold.
pub(super) type OutboundQueue = crate::rpc::queue::OutboundQueue<Queued>;

impl crate::rpc::queue::Cost for Queued {
    fn cost(&self) -> usize {
        cost(self)
    }
}

/// What one queued message holds: its inline size and the payload it owns. A request's
/// params stay in the pending table until it is pulled, bounded in number by
/// [`ServerConfig::max_in_flight`](super::ServerConfig::max_in_flight), not counted here.
fn cost(item: &Queued) -> usize {
    let payload = match item {
        Queued::Response { id, result } => answer_payload(id, result),
        Queued::UnidentifiedError(e) => error_payload(e),
        Queued::Notification { params, .. } => params.as_ref().map_or(0, |p| p.get().len()),
        Queued::Request(_) => 0,
    };
    size_of::<Queued>() + payload
}

/// One server-to-client request. Its wire id is its handle's number (a stdio stream never
/// re-sends, so the two never part).
#[derive(Debug)]
pub(super) struct Pending {
    pub(super) method: Cow<'static, str>,
    /// The params until they are encoded (then `None`: nothing is kept twice).
    pub(super) params: Option<RawParams>,
    /// Handed to the transport: a cancel or timeout must tell the client.
    pub(super) sent: bool,
    /// Whether progress was asked for (the token is the wire id).
    pub(super) progress: bool,
    /// The timeout, restarted by progress when `max_total` is set (active nanoseconds).
    pub(super) timeout: Option<NonZeroU64>,
    /// The longest the request may run when progress restarts its timeout.
    pub(super) max_total: Option<NonZeroU64>,
    /// Active time when it was issued.
    pub(super) issued_at: u64,
    /// The deadline armed in the index (active nanoseconds).
    pub(super) deadline: Option<NonZeroU64>,
}

impl Pending {
    /// The deadline due after `active`: the timeout from then, never past the total limit;
    /// and whether it is the total limit.
    pub(super) fn deadline_after(&self, active: u64) -> Option<(NonZeroU64, bool)> {
        let timeout = self.timeout.map(|t| active.saturating_add(t.get()));
        let total = self
            .max_total
            .map(|t| self.issued_at.saturating_add(t.get()));
        let (at, is_total) = match (timeout, total) {
            (Some(t), Some(m)) if m <= t => (m, true),
            (Some(t), _) => (t, false),
            (None, Some(m)) => (m, true),
            (None, None) => return None,
        };
        NonZeroU64::new(at.max(1)).map(|at| (at, is_total))
    }
}

impl ServerSession {
    /// Arms (or moves) `handle`'s deadline to `deadline`.
    pub(super) fn arm(&mut self, handle: RequestHandle, deadline: Option<NonZeroU64>) {
        let Some(p) = self.pending.get_mut(&handle) else {
            return;
        };
        if p.deadline == deadline {
            return;
        }
        let had = p.deadline;
        p.deadline = deadline;
        if let Some(at) = deadline {
            self.deadlines.insert(at.get(), handle);
        }
        if let Some(old) = had {
            let pending = &self.pending;
            self.deadlines
                .remove(old.get(), handle, |at, h| is_armed(pending, at, h));
        }
    }

    /// Completes a request once: removes it, disarms its deadline, tells the client when it
    /// saw the request and the answer will not come from it (`notice`), and emits
    /// [`Event::Completed`]. A handle no longer pending is left alone.
    pub(super) fn finish(
        &mut self,
        handle: RequestHandle,
        result: Result<RawResult, RequestError>,
        notice: Option<Option<&str>>,
    ) {
        let Some(p) = self.pending.remove(&handle) else {
            return;
        };
        if let Some(at) = p.deadline {
            let pending = &self.pending;
            self.deadlines
                .remove(at.get(), handle, |at, h| is_armed(pending, at, h));
        }
        if let (true, Some(reason)) = (p.sent, notice) {
            self.outbound.push_back(Queued::Notification {
                method: Cow::Borrowed("notifications/cancelled"),
                params: Some(meta::cancelled_params(handle.0, reason)),
            });
        }
        self.events.push_back(Event::Completed { handle, result });
    }

    /// Completes every request whose deadline is due at `now` with [`RequestError::Timeout`].
    pub(super) fn fire_deadlines(&mut self, now: Instant) {
        let active = nanos(self.clock.active(now));
        loop {
            let pending = &self.pending;
            let Some(handle) = self
                .deadlines
                .pop_due(active, |at, h| is_armed(pending, at, h))
            else {
                return;
            };
            let Some(p) = self.pending.get_mut(&handle) else {
                continue;
            };
            // The index entry is gone: forget it so `finish` does not remove it again.
            let at = p.deadline.take().map_or(0, NonZeroU64::get);
            let total = p
                .max_total
                .is_some_and(|m| p.issued_at.saturating_add(m.get()) <= at);
            let after = if total { p.max_total } else { p.timeout };
            let after = Duration::from_nanos(after.map_or(0, NonZeroU64::get));
            self.finish(
                handle,
                Err(RequestError::Timeout { after, total }),
                Some(Some("timed out")),
            );
        }
    }
}

/// Whether `handle`'s armed deadline is `at`: the deadline index's test of live entries.
pub(super) fn is_armed(
    pending: &crate::session::CounterMap<RequestHandle, Pending>,
    at: u64,
    handle: RequestHandle,
) -> bool {
    pending
        .get(&handle)
        .and_then(|p| p.deadline)
        .is_some_and(|d| d.get() == at)
}
