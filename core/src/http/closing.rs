//! Closing a [`Connection`]: cancellations first, then the DELETE, all within one deadline.
//!
//! **The ordering rule.** A request cancelled just before the connection closes (a caller
//! dropped its call, then closed: what Ctrl-C does in a command-line client) must still reach
//! the server as `notifications/cancelled`, and before the session's DELETE: a server that
//! sees the DELETE first may end the session without ever stopping the work, and one that
//! sees the cancellation after the DELETE answers it with 404. So when the session closes:
//!
//! 1. every queued or open exchange is dropped, **except** the POSTs that carry
//!    `notifications/cancelled` (queued ones are started at once, open ones are kept);
//! 2. once each of those has been answered (any status) or has failed, the DELETE is sent
//!    (Streamable HTTP with a session id only; otherwise the connection finishes);
//! 3. one deadline (`close_timeout`, from the moment the session closed) bounds both steps:
//!    when it passes, whatever is still open is aborted and the connection finishes.
//!
//! The 2026-07-28 era sends no `notifications/cancelled` over HTTP (the cancel is the abort
//! of the request's exchange), so there step 1 keeps nothing.

use serde::Deserialize;

use super::connection::Connection;
use super::exchange::{ExchangeId, HttpEvent, Method, Purpose};
use super::exchange_table::Exchange;
use super::timers::Timer;
use super::transport_choice::Phase;
use crate::session::MessageKind;
use crate::time::{Instant, saturating_add};

/// The closing steps still to come: the DELETE in flight, and whether the connection waits
/// for its cancellations to be answered (and sends a DELETE after them).
#[derive(Debug, Default)]
pub(crate) struct Shutdown {
    /// The DELETE in flight.
    delete: Option<ExchangeId>,
    /// Closing waits for the POSTs of `notifications/cancelled` to be answered; `true` when a
    /// DELETE follows them.
    cancels_before: Option<bool>,
}

impl Shutdown {
    /// Closing began: wait for the cancellations, then DELETE if `delete`.
    fn wait_for_cancels(&mut self, delete: bool) {
        self.cancels_before = Some(delete);
    }

    /// Nothing more to wait for or to track: the close is over (or gave up).
    fn clear(&mut self) {
        self.delete = None;
        self.cancels_before = None;
    }
}

impl Connection {
    /// The session closed: keep the cancellations (see the module docs), drop everything
    /// else, then DELETE the session once the cancellations are through.
    pub(crate) fn begin_shutdown(&mut self, now: Instant) {
        if self.transport.is_over() {
            return;
        }
        let delete = self.transport.is_streamable() && self.identity.id().is_some();
        let messages_flow = self.transport.is_up();
        // Queued cancellations are issued before the phase changes: the POST URL of the
        // legacy transport depends on it.
        let queued: Vec<_> = self
            .posts
            .take_queued()
            .into_iter()
            .filter(|p| messages_flow && carries_cancel(p.purpose, &p.body))
            .collect();
        for post in queued {
            self.issue_post(now, post);
        }
        self.transport.phase = Phase::Closing;
        self.posts.clear_delayed();
        self.reset.clear_resend();
        self.streams.clear();
        self.streams.set_listener(None);
        self.exchanges
            .keep_only(|x| x.method == Method::Post && carries_cancel(x.purpose, &x.body));
        let deadline = saturating_add(now, self.config.close_timeout);
        self.timers.set(Timer::Close, Some(deadline));
        self.shutdown.wait_for_cancels(delete);
        self.after_cancels(now);
    }

    /// Sends the DELETE (or finishes) once no cancellation is open any more. Called from the
    /// pump, so after every input.
    pub(crate) fn after_cancels(&mut self, _now: Instant) {
        let Some(delete) = self.shutdown.cancels_before else {
            return;
        };
        // While closing, the only exchanges left before the DELETE are the cancellations.
        if !self.exchanges.is_empty() {
            return;
        }
        self.shutdown.cancels_before = None;
        // A cancellation answered 429 / 503 is not retried: the connection is going away.
        self.posts.clear_delayed();
        // A cancellation answered 404 ended the session id: nothing left to DELETE.
        if !delete || self.identity.id().is_none() {
            return self.finish();
        }
        let (url, generation) = (self.config.url.clone(), self.identity.generation());
        let delete = Exchange::new(Method::Delete, url, Vec::new(), Purpose::Delete, generation);
        let id = self.issue(delete);
        self.shutdown.delete = Some(id);
    }

    /// The close deadline passed: abort what is still open (cancellations, the DELETE) and
    /// finish.
    pub(crate) fn close_deadline_passed(&mut self) {
        self.timers.set(Timer::Close, None);
        self.shutdown.clear();
        self.exchanges.abort_all();
        self.finish();
    }

    pub(crate) fn finish(&mut self) {
        if self.transport.phase == Phase::Finished {
            return;
        }
        self.transport.phase = Phase::Finished;
        self.timers.set(Timer::Close, None);
        self.shutdown.clear();
        self.release_ready();
        self.emit(HttpEvent::Finished);
    }

    pub(crate) fn delete_done(&mut self, id: ExchangeId) {
        if self.shutdown.delete == Some(id) {
            self.exchanges.remove(id);
            self.finish();
        }
    }
}

/// Whether a POST carries `notifications/cancelled` (decoded only while closing), or is a
/// detached request (`tasks/cancel` of a dropped call): the messages meant to reach the
/// server on the way out.
fn carries_cancel(purpose: Purpose, body: &[u8]) -> bool {
    #[derive(Deserialize)]
    struct Message {
        method: Option<String>,
    }
    if purpose == Purpose::Message(MessageKind::Request) {
        return true;
    }
    purpose == Purpose::Message(MessageKind::Notification)
        && serde_json::from_slice::<Message>(body)
            .is_ok_and(|m| m.method.as_deref() == Some("notifications/cancelled"))
}
