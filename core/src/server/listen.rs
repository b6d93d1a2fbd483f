//! `subscriptions/listen` (2026-07-28), the server's side: the session answers a listen
//! itself, and delivers the host's `list_changed` and `resources/updated` notifications on
//! the listens that asked for them.
//!
//! The rules, from the 2026-07-28 specification and schema:
//!
//! - A listen names what it wants (`params.notifications`: `toolsListChanged`,
//!   `promptsListChanged`, `resourcesListChanged`, `resourceSubscriptions`). The session
//!   honours the subset the server's capabilities allow (`listChanged` of tools, prompts,
//!   resources; `resources.subscribe` for resource URIs) and sends
//!   `notifications/subscriptions/acknowledged {notifications: <honoured>}` as the listen's
//!   first message. The listen stays open; the host hears of it
//!   ([`Event::ListenOpened`](super::Event::ListenOpened)).
//! - Every notification on a listen carries `_meta["io.modelcontextprotocol/subscriptionId"]`
//!   = the listen's JSON-RPC id, so a stdio client can tell the listens apart. A notification
//!   goes to every open listen that asked for it, and to none when none did (the era has no
//!   other channel for them). Progress and log messages never travel on a listen.
//! - A listen ends when the client cancels it (`notifications/cancelled`; over HTTP the close
//!   of its stream, which ends its one-request session), when the host closes it
//!   ([`close_listen`](ServerSession::close_listen)), or with the session. A clean end by the
//!   server (the host's close, the session's [`close`](ServerSession::close)) answers the
//!   listen with `{resultType: "complete", _meta: {subscriptionId}}`; the client's
//!   cancellation and a lost transport answer nothing. The host hears of each end once
//!   ([`Event::ListenClosed`](super::Event::ListenClosed)).
//! - Bounded: at most [`ServerConfig::max_listens`](super::ServerConfig::max_listens) open
//!   listens per session and
//!   [`ServerConfig::max_listen_resources`](super::ServerConfig::max_listen_resources) URIs
//!   per listen; past either the listen is refused with a JSON-RPC error.
//!
//! In the initialize era the method does not exist: a listen there is answered `-32601`,
//! and notifications go out as before, to the one client.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::outgoing::Queued;
use super::{ClientRequestId, Diagnostic, Event, ListChanged, ServerSession, UsageError};
use crate::jsonrpc::{ErrorObject, Id, to_raw};
use crate::rpc::peer_keys::PeerMap;
use crate::session::meta;
use crate::time::Instant;
use crate::types::ServerCapabilities;
use crate::types::v2026::{ListenFilter, META_SUBSCRIPTION_ID};

/// The method of a listen.
pub(super) const LISTEN: &str = "subscriptions/listen";

/// The method of a listen's first message.
pub(super) const ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";

/// Why a listen ended, in [`Event::ListenClosed`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ListenEnd {
    /// The client cancelled it (`notifications/cancelled`, or over HTTP the close of its
    /// stream); nothing was answered.
    Cancelled {
        /// The client's reason.
        reason: Option<String>,
    },
    /// The host closed it with [`close_listen`](ServerSession::close_listen): the client was
    /// sent the `complete` result.
    Closed,
    /// The session ended. A [`close`](ServerSession::close) by the host sent the `complete`
    /// result first; a lost transport or a timeout could not.
    SessionClosed,
}

/// One open listen.
#[derive(Debug)]
struct OpenListen {
    /// The client's id of the listen request: the `subscriptionId` of its notifications.
    wire: Id,
    /// What the session agreed to deliver on it.
    honoured: ListenFilter,
}

/// The open listens of a session, keyed by the host's token. Bounded by the caller
/// ([`ServerConfig::max_listens`](super::ServerConfig::max_listens)).
#[derive(Debug, Default)]
pub(super) struct Listens {
    open: BTreeMap<ClientRequestId, OpenListen>,
    /// Peer-chosen keys: a randomly seeded hasher, so a client cannot choose ids that collide.
    by_wire: PeerMap<Id, ClientRequestId>,
}

impl Listens {
    pub(super) fn len(&self) -> usize {
        self.open.len()
    }

    pub(super) fn contains_wire(&self, wire: &Id) -> bool {
        self.by_wire.contains_key(wire)
    }

    pub(super) fn wire(&self, id: ClientRequestId) -> Option<&Id> {
        self.open.get(&id).map(|l| &l.wire)
    }

    fn insert(&mut self, id: ClientRequestId, wire: Id, honoured: ListenFilter) {
        self.by_wire.insert(wire.clone(), id);
        self.open.insert(id, OpenListen { wire, honoured });
    }

    fn remove(&mut self, id: ClientRequestId) -> Option<OpenListen> {
        let open = self.open.remove(&id)?;
        self.by_wire.remove(&open.wire);
        Some(open)
    }

    pub(super) fn remove_wire(&mut self, wire: &Id) -> Option<ClientRequestId> {
        let id = self.by_wire.remove(wire)?;
        self.open.remove(&id);
        Some(id)
    }

    fn take_all(&mut self) -> Vec<(ClientRequestId, OpenListen)> {
        self.by_wire.clear();
        std::mem::take(&mut self.open).into_iter().collect()
    }
}

/// The params of a listen.
#[derive(Deserialize)]
struct ListenParams {
    notifications: ListenFilter,
}

#[derive(Serialize)]
struct SubscriptionMeta<'a> {
    #[serde(rename = "io.modelcontextprotocol/subscriptionId")]
    id: &'a Id,
}

/// `notifications/subscriptions/acknowledged`'s params.
#[derive(Serialize)]
struct Acknowledged<'a> {
    #[serde(rename = "_meta")]
    meta: SubscriptionMeta<'a>,
    notifications: &'a ListenFilter,
}

/// The result that ends a listen cleanly (`SubscriptionsListenResult`).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Complete<'a> {
    result_type: &'static str,
    #[serde(rename = "_meta")]
    meta: SubscriptionMeta<'a>,
}

/// What of `asked` a server of `capabilities` delivers: each list flag the matching
/// `listChanged` allows, and the resource URIs when it declared `resources.subscribe`.
/// Flags not granted are left out (not `false`), as the schema's examples do.
#[must_use]
pub fn honoured_subset(asked: &ListenFilter, capabilities: &ServerCapabilities) -> ListenFilter {
    let grant = |asked: Option<bool>, declared: Option<bool>| {
        (asked == Some(true) && declared == Some(true)).then_some(true)
    };
    let resources = capabilities.resources.as_ref();
    let subscribe = resources.and_then(|r| r.subscribe) == Some(true);
    ListenFilter {
        tools_list_changed: grant(
            asked.tools_list_changed,
            capabilities.tools.as_ref().and_then(|t| t.list_changed),
        ),
        prompts_list_changed: grant(
            asked.prompts_list_changed,
            capabilities.prompts.as_ref().and_then(|p| p.list_changed),
        ),
        resources_list_changed: grant(
            asked.resources_list_changed,
            resources.and_then(|r| r.list_changed),
        ),
        resource_subscriptions: asked
            .resource_subscriptions
            .clone()
            .filter(|uris| subscribe && !uris.is_empty()),
    }
}

/// Whether a listen that subscribed `subscribed` wants the update of `updated`: the same URI,
/// or a sub-resource of it (the schema allows an update to name one).
fn covers(subscribed: &str, updated: &str) -> bool {
    match updated.strip_prefix(subscribed) {
        Some("") => true,
        Some(rest) => subscribed.ends_with('/') || rest.starts_with('/'),
        None => false,
    }
}

/// Which listens a notification goes to.
#[derive(Clone, Debug)]
pub(super) enum Wanted {
    /// A list change: the listens that asked for it.
    List(ListChanged),
    /// `resources/updated` of this URI: the listens that subscribed it (or a parent of it).
    Resource(String),
}

impl Wanted {
    fn by(&self, filter: &ListenFilter) -> bool {
        match self {
            Wanted::List(ListChanged::Tools) => filter.tools_list_changed == Some(true),
            Wanted::List(ListChanged::Prompts) => filter.prompts_list_changed == Some(true),
            Wanted::List(ListChanged::Resources) => filter.resources_list_changed == Some(true),
            Wanted::Resource(uri) => filter
                .resource_subscriptions
                .iter()
                .flatten()
                .any(|s| covers(s, uri)),
        }
    }
}

/// The listen methods a host may send with [`ServerSession::notify`], and who wants them
/// (`None`: not one of them). `Err`: a `resources/updated` without a string `uri`.
pub(super) fn wanted_by(
    method: &str,
    params: Option<&RawValue>,
) -> Option<Result<Wanted, UsageError>> {
    #[derive(Deserialize)]
    struct Updated {
        uri: String,
    }
    let list = match method {
        "notifications/tools/list_changed" => ListChanged::Tools,
        "notifications/prompts/list_changed" => ListChanged::Prompts,
        "notifications/resources/list_changed" => ListChanged::Resources,
        "notifications/resources/updated" => {
            let uri = params.and_then(|p| serde_json::from_str::<Updated>(p.get()).ok());
            return Some(uri.map(|u| Wanted::Resource(u.uri)).ok_or_else(|| {
                UsageError::InvalidParams(
                    "notifications/resources/updated needs params with a string uri".into(),
                )
            }));
        }
        _ => return None,
    };
    Some(Ok(Wanted::List(list)))
}

impl ServerSession {
    // ---- (A) getters -------------------------------------------------------------------

    /// The open listens (2026-07-28) and what each was granted, in the order they opened.
    pub fn listens(&self) -> impl Iterator<Item = (ClientRequestId, &ListenFilter)> + '_ {
        self.listens.open.iter().map(|(id, l)| (*id, &l.honoured))
    }

    /// How many listens are open.
    #[must_use]
    pub fn open_listens(&self) -> usize {
        self.listens.len()
    }

    // ---- (C) commands ------------------------------------------------------------------

    /// Ends the listen `id` cleanly: the client is sent its `complete` result
    /// (`{resultType: "complete", _meta: {subscriptionId}}`) and nothing more is delivered on
    /// it; [`Event::ListenClosed`] follows with [`ListenEnd::Closed`].
    ///
    /// Errors: [`UsageError::NotOpen`] when it is not open (ended already, or cancelled by
    /// the client: a race the host can ignore), [`UsageError::Closed`].
    pub fn close_listen(&mut self, now: Instant, id: ClientRequestId) -> Result<(), UsageError> {
        if self.is_closed() {
            return Err(UsageError::Closed);
        }
        let listen = self.listens.remove(id).ok_or(UsageError::NotOpen(id))?;
        self.complete_listen(&listen);
        self.events.push_back(Event::ListenClosed {
            id,
            end: ListenEnd::Closed,
        });
        self.track_backlog(now);
        Ok(())
    }

    // ---- inside the session ------------------------------------------------------------

    /// Answers a client's `subscriptions/listen`. `modern`: it carried a valid 2026
    /// envelope (the caller checked the session's state and the envelope already).
    pub(super) fn handle_listen(&mut self, wire: Id, params: Option<&RawValue>, modern: bool) {
        let requested = match self.admit_listen(&wire, params, modern) {
            Ok(requested) => requested,
            Err(error) => return self.answer_by_session(wire, Err(error), Some(LISTEN)),
        };
        let honoured = honoured_subset(&requested, &self.config.capabilities);
        let ack = to_raw(&Acknowledged {
            meta: SubscriptionMeta { id: &wire },
            notifications: &honoured,
        });
        let ack = match ack {
            Ok(ack) => ack,
            Err(e) => {
                let error = ErrorObject::new(ErrorObject::INTERNAL_ERROR, e.to_string());
                return self.answer_by_session(wire, Err(error), Some(LISTEN));
            }
        };
        let id = self.client_requests.mint();
        // The acknowledgement is the listen's first message (nothing else is queued for it
        // before this point, and it is queued before the host can notify).
        self.outbound.push_back(Queued::Notification {
            method: Cow::Borrowed(ACKNOWLEDGED),
            params: Some(ack),
        });
        self.listens.insert(id, wire, honoured.clone());
        self.events.push_back(Event::ListenOpened {
            id,
            requested,
            honoured,
        });
    }

    /// What a listen asks for, or the error it is refused with: `-32601` outside the 2026
    /// era, `-32600` for an id still open or past the cap, `-32602` for params that are not
    /// a `SubscriptionsListenRequestParams` or hold too many URIs.
    fn admit_listen(
        &mut self,
        wire: &Id,
        params: Option<&RawValue>,
        modern: bool,
    ) -> Result<ListenFilter, ErrorObject> {
        if !modern {
            return Err(ErrorObject::new(
                ErrorObject::METHOD_NOT_FOUND,
                format!(
                    "Method not found: {LISTEN} is part of protocol version 2026-07-28, not of the version this session negotiated"
                ),
            ));
        }
        if self.client_requests.contains_wire(wire) || self.listens.contains_wire(wire) {
            let reason = "a request with this id is still open";
            self.refused_listen(reason);
            return Err(ErrorObject::new(ErrorObject::INVALID_REQUEST, reason));
        }
        let limit = self.config.max_listens;
        if self.listens.len() >= limit {
            self.refused_listen("too many open listens");
            return Err(ErrorObject::new(
                ErrorObject::INVALID_REQUEST,
                format!(
                    "too many open subscriptions/listen on this session (limit {limit}): end one first"
                ),
            ));
        }
        let invalid = |message: String| ErrorObject::new(ErrorObject::INVALID_PARAMS, message);
        let p = serde_json::from_str::<ListenParams>(params.map_or("null", RawValue::get))
            .map_err(|e| invalid(format!("{LISTEN}: invalid params: {e}")))?;
        let count = p
            .notifications
            .resource_subscriptions
            .as_ref()
            .map_or(0, Vec::len);
        let most = self.config.max_listen_resources;
        if count > most {
            return Err(invalid(format!(
                "{LISTEN}: {count} resourceSubscriptions, more than this server takes on one listen ({most})"
            )));
        }
        Ok(p.notifications)
    }

    fn refused_listen(&mut self, reason: &'static str) {
        self.report(Diagnostic::RequestRefused {
            method: LISTEN.to_owned(),
            reason,
        });
    }

    /// The client cancelled the listen `wire`, if it is one: it ends without an answer.
    /// Returns whether it was.
    pub(super) fn cancel_listen(&mut self, wire: &Id, reason: Option<String>) -> bool {
        let Some(id) = self.listens.remove_wire(wire) else {
            return false;
        };
        self.events.push_back(Event::ListenClosed {
            id,
            end: ListenEnd::Cancelled { reason },
        });
        true
    }

    /// Over HTTP the client closed the stream of a 2026 request's session: that is how it
    /// ends a listen (the revision's cancellation), so its listens end as cancelled, before
    /// the session closes.
    pub(super) fn listens_cancelled_by_stream_close(&mut self) {
        for (id, _) in self.listens.take_all() {
            self.events.push_back(Event::ListenClosed {
                id,
                end: ListenEnd::Cancelled { reason: None },
            });
        }
    }

    /// Delivers a notification on every open listen that `wanted` names, each copy with its
    /// listen's `subscriptionId` spliced into `params._meta`; nothing when no listen wants
    /// it. Refused whole when the client is not reading.
    pub(super) fn deliver_to_listens(
        &mut self,
        now: Instant,
        method: Cow<'static, str>,
        params: Option<&RawValue>,
        wanted: &Wanted,
    ) -> Result<(), UsageError> {
        self.check_room()?;
        let mut copies = Vec::new();
        for listen in self.listens.open.values() {
            if !wanted.by(&listen.honoured) {
                continue;
            }
            let id = to_raw(&listen.wire).map_err(|e| UsageError::InvalidParams(e.to_string()))?;
            let params = meta::splice(
                params.map(RawValue::get),
                &[],
                &[(META_SUBSCRIPTION_ID, &id)],
            )
            .map_err(UsageError::InvalidParams)?;
            copies.push(params);
        }
        for params in copies {
            self.outbound.push_back(Queued::Notification {
                method: method.clone(),
                params: Some(params),
            });
        }
        self.track_backlog(now);
        Ok(())
    }

    /// Queues the `complete` result of a listen the server ends.
    fn complete_listen(&mut self, listen: &OpenListen) {
        let result = to_raw(&Complete {
            result_type: "complete",
            meta: SubscriptionMeta { id: &listen.wire },
        });
        // An id and a string always serialize; the server's info is added as on every 2026
        // result.
        let result = result.map(|r| self.complete_modern_result(r, false));
        self.outbound.push_back(Queued::Response {
            id: listen.wire.clone(),
            result: result
                .map_err(|e| ErrorObject::new(ErrorObject::INTERNAL_ERROR, e.to_string())),
        });
    }

    /// The host closes the session: every open listen gets its `complete` result.
    pub(super) fn complete_listens(&mut self) {
        for (id, listen) in self.listens.take_all() {
            self.complete_listen(&listen);
            self.events.push_back(Event::ListenClosed {
                id,
                end: ListenEnd::SessionClosed,
            });
        }
    }

    /// The session ends without a clean close: the listens end unanswered.
    pub(super) fn drop_listens(&mut self) {
        for (id, _) in self.listens.take_all() {
            self.events.push_back(Event::ListenClosed {
                id,
                end: ListenEnd::SessionClosed,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{PromptsCapability, ResourcesCapability, ToolsCapability};

    #[test]
    fn only_what_the_capabilities_allow_is_honoured() {
        let caps = ServerCapabilities {
            tools: Some(ToolsCapability {
                list_changed: Some(true),
                ..ToolsCapability::default()
            }),
            prompts: Some(PromptsCapability {
                list_changed: Some(false),
                ..PromptsCapability::default()
            }),
            resources: Some(ResourcesCapability {
                subscribe: Some(true),
                ..ResourcesCapability::default()
            }),
            ..ServerCapabilities::default()
        };
        let asked = ListenFilter {
            tools_list_changed: Some(true),
            prompts_list_changed: Some(true),
            resources_list_changed: Some(true),
            resource_subscriptions: Some(vec!["file:///a".into()]),
        };
        let got = honoured_subset(&asked, &caps);
        assert_eq!(
            got,
            ListenFilter {
                tools_list_changed: Some(true),
                resource_subscriptions: Some(vec!["file:///a".into()]),
                ..ListenFilter::default()
            }
        );
        // Nothing declared: nothing honoured, and `false` flags are never granted.
        assert_eq!(
            honoured_subset(&asked, &ServerCapabilities::default()),
            ListenFilter::default()
        );
        let declined = ListenFilter {
            tools_list_changed: Some(false),
            resource_subscriptions: Some(vec![]),
            ..ListenFilter::default()
        };
        assert_eq!(honoured_subset(&declined, &caps), ListenFilter::default());
    }

    #[test]
    fn an_update_reaches_the_uri_and_its_sub_resources() {
        assert!(covers("file:///p", "file:///p"));
        assert!(covers("file:///p", "file:///p/a.txt"));
        assert!(covers("file:///p/", "file:///p/a.txt"));
        assert!(!covers("file:///p", "file:///pa"));
        assert!(!covers("file:///p/a", "file:///p"));
    }
}
