//! Subscriptions in the 2026-07-28 era: `subscriptions/listen`.
//!
//! A listen is one long-lived request. The rules the session applies:
//!
//! - It exists only in the discover era: in the initialize era [`Session::listen`] (and a raw
//!   `subscriptions/listen`) is refused with [`UsageError::NotInEra`], and one that waited for
//!   an Auto handshake that chose `initialize` completes with
//!   [`RequestError::NotInEra`](super::RequestError::NotInEra).
//! - Until the server acknowledges it (`notifications/subscriptions/acknowledged`, the first
//!   message of the subscription) it has the acknowledgement deadline the caller chose; the
//!   acknowledgement disarms it for good, so an open subscription never times out. It never
//!   asks for progress (progress never travels on listen streams).
//! - Notifications whose `_meta["io.modelcontextprotocol/subscriptionId"]` names the wire id
//!   of a pending listen become [`Event::Subscription`] for that listen (the acknowledgement
//!   becomes [`Event::SubscriptionAcknowledged`]); a notification naming anything else is an
//!   ordinary [`Event::Notification`].
//! - It completes exactly once, like every request: `Ok` when the server ends it cleanly (a
//!   result), an error when the transport lost it,
//!   [`RequestError::Cancelled`](super::RequestError::Cancelled) when the caller
//!   cancelled it (the way to end it: over stdio the server is sent `notifications/cancelled`,
//!   over HTTP the stream is closed). Over HTTP a broken stream is re-issued once with a new
//!   wire id under the same handle (the server acknowledges again).
//!
//! [`ServerNotification::matches`] is the same filter applied locally, for the initialize
//! era, where notifications are not routed by the server.

use serde::Deserialize;
use serde_json::value::RawValue;

use super::{
    Deadline, Diagnostic, Event, NotificationKind, RequestHandle, RequestOptions,
    ServerNotification, Session, UsageError,
};
use crate::time::Instant;
use crate::types::Request as _;
use crate::types::v2026::{ListenFilter, SubscriptionsListen, SubscriptionsListenParams};

/// The method of a listen.
pub(crate) const LISTEN: &str = SubscriptionsListen::METHOD;

/// The method of the acknowledgement.
pub(crate) const ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";

/// Methods only the discover era has.
pub(crate) const DISCOVER_ONLY: [&str; 1] = [LISTEN];

impl Session {
    /// Opens a subscription (`subscriptions/listen`, 2026-07-28) for what `filter` asks.
    /// Call it once the session is ready (or while an Auto or Discover handshake runs: it
    /// waits). `ack_timeout` bounds the wait for the server's acknowledgement
    /// ([`Deadline::SessionDefault`] is the session's request timeout); once acknowledged the
    /// subscription has no deadline.
    ///
    /// Guarantees: the returned handle completes exactly once ([`Event::Completed`]); until
    /// then its notifications arrive as [`Event::SubscriptionAcknowledged`] and
    /// [`Event::Subscription`]. End it with [`cancel`](Self::cancel).
    ///
    /// Errors: [`UsageError::NotInEra`] in the initialize era, and those of
    /// [`send_request`](Self::send_request).
    pub fn listen(
        &mut self,
        now: Instant,
        filter: &ListenFilter,
        ack_timeout: Deadline,
    ) -> Result<RequestHandle, UsageError> {
        let params = SubscriptionsListenParams {
            notifications: filter.clone(),
        };
        let mut options = RequestOptions::new();
        options.deadline = ack_timeout;
        self.request::<SubscriptionsListen>(now, &params, options)
    }

    /// The pending listen a notification names, if any.
    pub(super) fn listen_of(&self, params: Option<&RawValue>) -> Option<RequestHandle> {
        let handle = subscription_of(params).and_then(|w| self.pending.by_wire(w))?;
        self.pending
            .get(handle)
            .is_some_and(|p| p.method == LISTEN)
            .then_some(handle)
    }

    /// Routes a notification that names pending listen `handle`.
    pub(super) fn route_to_listen(
        &mut self,
        handle: RequestHandle,
        notification: ServerNotification,
    ) {
        if notification.method != ACKNOWLEDGED {
            self.events.push_back(Event::Subscription {
                handle,
                notification,
            });
            return;
        }
        // Acknowledged: from now on the subscription has no deadline (nor on a re-issue).
        if let Some(p) = self.pending.get_mut(handle) {
            p.timeout = None;
            p.total = None;
            let armed = p.deadline;
            p.set_armed(None);
            if let Some(at) = armed {
                self.disarmed(at, handle);
            }
        }
        #[derive(Deserialize)]
        struct Ack {
            notifications: ListenFilter,
        }
        let raw = notification.params.as_deref().map_or("null", RawValue::get);
        let honoured = match serde_json::from_str::<Ack>(raw) {
            Ok(ack) => ack.notifications,
            Err(e) => {
                self.report(Diagnostic::InvalidNotification {
                    method: notification.method,
                    detail: e.to_string(),
                });
                ListenFilter::default()
            }
        };
        self.events
            .push_back(Event::SubscriptionAcknowledged { handle, honoured });
    }
}

/// `_meta["io.modelcontextprotocol/subscriptionId"]` of a notification, as one of this
/// client's wire ids (a number, or a string of digits from a server that stringifies ids).
fn subscription_of(params: Option<&RawValue>) -> Option<u64> {
    use crate::jsonrpc::Id;
    #[derive(Deserialize)]
    struct Params {
        #[serde(rename = "_meta")]
        meta: Option<Meta>,
    }
    #[derive(Deserialize)]
    struct Meta {
        #[serde(rename = "io.modelcontextprotocol/subscriptionId")]
        id: Option<Id>,
    }
    let p: Params = serde_json::from_str(params?.get()).ok()?;
    match p.meta?.id? {
        Id::String(s) => s.parse().ok(),
        id => id.as_u64(),
    }
}

impl ServerNotification {
    /// Whether a subscription with `filter` wants this notification: a list change it asked
    /// for, or `notifications/resources/updated` for one of its URIs. This is the rule a
    /// 2026-07-28 server applies to a listen; in the initialize era, where every notification
    /// reaches the client, apply it locally. Unreadable params never match.
    #[must_use]
    pub fn matches(&self, filter: &ListenFilter) -> bool {
        let on = |flag: Option<bool>| flag == Some(true);
        match self.kind() {
            NotificationKind::ToolsListChanged => on(filter.tools_list_changed),
            NotificationKind::PromptsListChanged => on(filter.prompts_list_changed),
            NotificationKind::ResourcesListChanged => on(filter.resources_list_changed),
            NotificationKind::ResourceUpdated => {
                let (Some(uris), Some(uri)) = (&filter.resource_subscriptions, self.resource_uri())
                else {
                    return false;
                };
                uris.contains(&uri)
            }
            _ => false,
        }
    }

    /// `params.uri` of a `notifications/resources/updated`, if readable.
    #[must_use]
    pub fn resource_uri(&self) -> Option<String> {
        #[derive(Deserialize)]
        struct Updated {
            uri: String,
        }
        let params = self.params.as_deref()?;
        serde_json::from_str::<Updated>(params.get())
            .ok()
            .map(|u| u.uri)
    }
}
