//! What a [`Connection`] gives a fresh session after the old one expired (404 to its
//! `Mcp-Session-Id`): the server-side state the host set up (the last `logging/setLevel`, the
//! resource subscriptions) is set again first, then the requests lost with the old session
//! are re-sent, and the host learns of the gap ([`HttpEvent::SessionReset`]).
//!
//! Restoring before re-sending means a lost request runs on a session in the state it was
//! sent for: a re-sent call that changes a subscribed resource is seen by the restored
//! subscription.

use serde_json::value::RawValue;

use super::connection::Connection;
use super::exchange::HttpEvent;
use crate::session::{CounterMap, RequestError, RequestHandle, RequestOptions};
use crate::time::Instant;

/// Resource subscriptions remembered for a reset.
const MAX_SUBSCRIPTIONS: usize = 4096;

/// What the connection remembers of a request to restore it after a reset.
#[derive(Debug)]
enum Tracked {
    SetLevel(Box<RawValue>),
    Subscribe(String),
    Unsubscribe(String),
}

/// A session reset (a 404 to the session id) from start to end, and what it restores: the
/// server-side state of the session as the host's requests set it, the requests lost with the
/// old session, and when the gap began.
#[derive(Debug, Default)]
pub(crate) struct ResetState {
    /// Requests in flight that set state, until they succeed.
    tracked: CounterMap<RequestHandle, Tracked>,
    log_level: Option<Box<RawValue>>,
    subscriptions: Vec<String>,
    /// Restoring requests in flight; the URI of a `resources/subscribe`.
    pending: CounterMap<RequestHandle, Option<String>>,
    /// Restoring requests issued by the reset under way.
    issued: usize,
    /// Requests lost with the expired session, re-sent after the new handshake.
    resend: Vec<RequestHandle>,
    /// A reset is under way: from the 404 until the lost requests are re-sent.
    under_way: bool,
    /// When the expired session was noticed (the 404), or its listener lost its stream if
    /// that came first: the start of the gap that [`HttpEvent::SessionReset`] reports.
    expired_at: Option<Instant>,
}

impl ResetState {
    /// Whether a reset is under way (requests lost now wait for its end).
    pub(crate) fn is_under_way(&self) -> bool {
        self.under_way
    }

    /// A reset begins: the old session was noticed gone at `expired_at`.
    pub(crate) fn begin(&mut self, expired_at: Instant) {
        self.under_way = true;
        self.expired_at = Some(expired_at);
    }

    /// Request `handle` was lost with the old session: re-sent when the reset ends.
    pub(crate) fn lose(&mut self, handle: RequestHandle) {
        self.resend.push(handle);
    }

    /// Like [`lose`](Self::lose), unless `handle` is already waiting.
    pub(crate) fn lose_once(&mut self, handle: RequestHandle) {
        if !self.resend.contains(&handle) {
            self.resend.push(handle);
        }
    }

    /// Request `handle` finished without its exchanges (timeout, cancel): not re-sent.
    pub(crate) fn forget(&mut self, handle: RequestHandle) {
        self.resend.retain(|h| *h != handle);
    }

    /// The connection is going away: nothing is re-sent.
    pub(crate) fn clear_resend(&mut self) {
        self.resend.clear();
    }
}

impl Connection {
    /// Notes a request of the host that sets server-side state (`logging/setLevel`,
    /// `resources/subscribe`, `resources/unsubscribe`); it counts once it succeeded.
    pub(crate) fn track(&mut self, handle: RequestHandle, method: &str, body: &[u8]) {
        #[derive(serde::Deserialize)]
        struct Msg {
            params: Option<Box<RawValue>>,
        }
        #[derive(serde::Deserialize)]
        struct Uri {
            uri: String,
        }
        if !matches!(
            method,
            "logging/setLevel" | "resources/subscribe" | "resources/unsubscribe"
        ) {
            return;
        }
        let Ok(Msg {
            params: Some(params),
        }) = serde_json::from_slice::<Msg>(body)
        else {
            return;
        };
        let uri = || {
            serde_json::from_str::<Uri>(params.get())
                .ok()
                .map(|u| u.uri)
        };
        let tracked = match method {
            "logging/setLevel" => Some(Tracked::SetLevel(params.clone())),
            "resources/subscribe" => uri().map(Tracked::Subscribe),
            _ => uri().map(Tracked::Unsubscribe),
        };
        if let Some(t) = tracked {
            self.reset.tracked.insert(handle, t);
        }
    }

    /// A request completed: a tracked one that succeeded changes the state to restore; a
    /// restoring one is the connection's own (`true`: not for the host), its failure reported
    /// as [`HttpEvent::RestoreFailed`], and the last one lets the reset finish.
    pub(crate) fn restore_on_completed(
        &mut self,
        now: Instant,
        handle: RequestHandle,
        result: Result<(), &RequestError>,
    ) -> bool {
        let r = &mut self.reset;
        if let Some(t) = r.tracked.remove(&handle)
            && result.is_ok()
        {
            match t {
                Tracked::SetLevel(level) => r.log_level = Some(level),
                Tracked::Subscribe(uri) => {
                    if !r.subscriptions.contains(&uri) && r.subscriptions.len() < MAX_SUBSCRIPTIONS
                    {
                        r.subscriptions.push(uri);
                    }
                }
                Tracked::Unsubscribe(uri) => r.subscriptions.retain(|u| *u != uri),
            }
        }
        let Some(uri) = r.pending.remove(&handle) else {
            return false;
        };
        if let Err(error) = result {
            let method = if uri.is_some() {
                "resources/subscribe"
            } else {
                "logging/setLevel"
            };
            if let Some(uri) = &uri {
                // Not subscribed on this session: nothing to restore next time.
                r.subscriptions.retain(|u| u != uri);
            }
            self.emit(HttpEvent::RestoreFailed {
                method: method.to_owned(),
                uri,
                error: error.clone(),
            });
        }
        if self.reset.pending.is_empty() && self.reset.under_way {
            self.finish_reset(now);
        }
        true
    }

    /// The new session is ready: restore the state, then (once that is answered) re-send.
    pub(crate) fn begin_restore(&mut self, now: Instant) {
        let opts = RequestOptions::new;
        let r = &mut self.reset;
        r.issued = 0;
        if let Some(level) = r.log_level.clone()
            && let Ok(h) =
                self.session
                    .send_request(now, "logging/setLevel", Some(level.into()), opts())
        {
            r.pending.insert(h, None);
            r.issued += 1;
        }
        for uri in r.subscriptions.clone() {
            let params = serde_json::json!({ "uri": uri });
            let Ok(raw) = serde_json::value::to_raw_value(&params) else {
                continue;
            };
            if let Ok(h) =
                self.session
                    .send_request(now, "resources/subscribe", Some(raw.into()), opts())
            {
                r.pending.insert(h, Some(uri));
                r.issued += 1;
            }
        }
        if r.pending.is_empty() {
            self.finish_reset(now);
        }
    }

    /// The state is back: re-send what the old session lost and report the gap.
    fn finish_reset(&mut self, now: Instant) {
        self.reset.under_way = false;
        if self.session.is_closed() {
            // Lost again while restoring: the connection is going away, nothing to re-send.
            self.reset.resend.clear();
            return;
        }
        let mut resent = 0;
        for h in std::mem::take(&mut self.reset.resend) {
            if self.session.resend_request(h) {
                resent += 1;
            }
        }
        // The gap runs from the 404 to now: the new session's notifications reach the
        // restored subscriptions from here on; the old one's stopped at the latest when it
        // expired.
        let since = self.reset.expired_at.take().unwrap_or(now);
        self.emit(HttpEvent::SessionReset {
            resent,
            restored: self.reset.issued,
            since,
            until: now,
        });
    }
}
