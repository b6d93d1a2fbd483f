//! [`Subscription`]: the stream of one subscription, in either era, on one connection or
//! (from a [`Manager`](crate::Manager)) on each connection of a server in turn.

mod holds;
mod relay;

use std::fmt;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use futures_util::stream::{Stream, StreamExt as _};
use mcp_proto::RawResult;
use mcp_proto::session::{RequestError, RequestHandle, RequestOptions, ServerNotification};
use mcp_proto::types::v2026::ListenFilter;
use mcp_proto::types::{Request as _, ResourceRequestParams, Unsubscribe};
use tokio::sync::oneshot;

use crate::error::Error;
use crate::notify::{Fed, Feed, Missed};
use crate::shared::Shared;

pub(crate) use holds::{Hold, ResourceHolds};
pub(crate) use relay::{Relay, Relayed};

/// What ends the subscription.
enum Kind {
    /// Initialize era: each URI of the filter is held ([`ResourceHolds`]: subscribed
    /// upstream by the first subscription that wanted it); the stream is the connection's
    /// notifications, filtered locally; the end releases each hold, and sends
    /// `resources/unsubscribe` for a URI no other subscription holds.
    Local { holds: Vec<Hold> },
    /// 2026-07-28: one pending `subscriptions/listen`; the stream is its own (the server
    /// filters); `done` receives its one completion (attached once acknowledged).
    Listen {
        handle: RequestHandle,
        done: Option<oneshot::Receiver<Result<RawResult, RequestError>>>,
    },
    /// Ended: nothing left to send.
    Ended,
}

/// The notifications of one subscription, from [`Client::subscribe`](crate::Client::subscribe)
/// or [`Client::listen`](crate::Client::listen) (or [`Manager::subscribe`](crate::Manager::subscribe)
/// and [`Manager::listen`](crate::Manager::listen)): resource updates for its URIs and the
/// list changes it asked for.
///
/// The same type in both protocol eras. In the 2026-07-28 era it is a `subscriptions/listen`
/// request that lives as long as this value: the server filters and tags its notifications,
/// and they reach this stream only. In the initialize era it is `resources/subscribe` per URI,
/// and the connection's notifications are filtered locally with the same rule
/// ([`ServerNotification::matches`]).
///
/// # What survives a reconnect
///
/// - **An expired HTTP session** (the server answers 404 to its `Mcp-Session-Id`): the client
///   sets up a fresh session and the core re-issues every `resources/subscribe` and the last
///   `logging/setLevel` on it. The stream does not end: it yields one
///   `Err(`[`Missed::Gap`]`)` ([`GapCause::SessionExpired`](crate::GapCause::SessionExpired),
///   with when the loss was noticed and when the new session was ready), then the new
///   session's notifications. If the new session refuses to subscribe to one of its URIs
///   again (the resource is gone, say), the subscription ends instead and
///   [`close`](Self::close) gives the server's refusal. A second 404 in a row closes the
///   connection, which ends the stream.
/// - **A broken `subscriptions/listen` stream** (2026-07-28 over HTTP, which has no
///   resumption): the listen is re-issued once; once the server acknowledged it again the
///   stream yields `Err(`[`Missed::Gap`]`)` ([`GapCause::StreamBroken`](crate::GapCause::StreamBroken))
///   and goes on. A second break ends the subscription ([`close`](Self::close) says why).
/// - **A server the [`Manager`](crate::Manager) reconnects** (its process exited or was
///   killed, its connection was lost): a subscription from the manager is issued again on the
///   new connection, the server's log level set through the manager is restored, and the
///   stream yields `Err(`[`Missed::Gap`]`)` ([`GapCause::Reconnected`](crate::GapCause::Reconnected))
///   and then the new connection's notifications. It ends when the manager gives the server up
///   or stops it ([`close`](Self::close) then gives the last connection's error), or when the
///   new connection refuses the subscription (that error).
/// - **A subscription from a [`Client`](crate::Client) whose connection closes** ends: a
///   client never reconnects by itself.
///
/// Notifications sent during a gap are lost (the protocol has no replay of them): read a
/// resource afresh after a gap if its state matters.
///
/// # Ending
///
/// The stream ends when the server ends the subscription, when the connection closes (see
/// above for the manager), or after [`close`](Self::close); [`close`](Self::close) then says
/// why. Dropping it ends the subscription too (2026-07-28: over stdio the server is sent
/// `notifications/cancelled`, over HTTP the stream is closed; initialize era:
/// `resources/unsubscribe` for each URI no other subscription of the connection still
/// holds: subscriptions to one URI share its one upstream subscription, so dropping one never
/// ends another's updates). An open subscription has no deadline. Bounded like
/// [`Notifications`](crate::Notifications): a reader that falls behind gets one
/// `Err(`[`Missed::Lagged`]`)` and continues with the newest.
pub struct Subscription {
    filter: ListenFilter,
    honoured: Option<ListenFilter>,
    source: Source,
}

/// Where the notifications come from.
enum Source {
    /// One connection.
    Connection(OnConnection),
    /// A manager's relay, which re-issues the subscription on each connection of a server.
    Relayed(Relayed),
}

/// A subscription on one connection.
struct OnConnection {
    stream: Feed,
    kind: Kind,
    shared: Arc<Shared>,
    now: Arc<dyn Fn() -> Instant + Send + Sync>,
    /// A new session refused one of the URIs again: the stream ended, and this is why.
    refused: Option<Error>,
    /// The stream ended (it yields `None` from now on).
    over: bool,
}

impl fmt::Debug for Subscription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Subscription")
            .field("filter", &self.filter)
            .field("honoured", &self.honoured)
            .finish_non_exhaustive()
    }
}

impl Subscription {
    /// An initialize-era subscription over the connection's notifications, holding no URI
    /// yet: `filter` has no URIs, each comes with its [`hold`](Self::hold).
    pub(crate) fn local(
        filter: ListenFilter,
        stream: Feed,
        shared: Arc<Shared>,
        now: Arc<dyn Fn() -> Instant + Send + Sync>,
    ) -> Self {
        let kind = Kind::Local { holds: Vec::new() };
        Self::on_connection(filter, kind, stream, shared, now)
    }

    /// A pending listen whose notifications go to `stream`; dropping it from now on ends it.
    pub(crate) fn listen(
        filter: ListenFilter,
        handle: RequestHandle,
        stream: Feed,
        shared: Arc<Shared>,
        now: Arc<dyn Fn() -> Instant + Send + Sync>,
    ) -> Self {
        let kind = Kind::Listen { handle, done: None };
        Self::on_connection(filter, kind, stream, shared, now)
    }

    fn on_connection(
        filter: ListenFilter,
        kind: Kind,
        stream: Feed,
        shared: Arc<Shared>,
        now: Arc<dyn Fn() -> Instant + Send + Sync>,
    ) -> Self {
        Subscription {
            filter,
            honoured: None,
            source: Source::Connection(OnConnection {
                stream,
                kind,
                shared,
                now,
                refused: None,
                over: false,
            }),
        }
    }

    /// A manager's subscription: what the first connection's subscription asked for and was
    /// honoured, and the relay's receiving end.
    pub(crate) fn relayed(first: &Subscription, relayed: Relayed) -> Self {
        Subscription {
            filter: first.filter.clone(),
            honoured: first.honoured.clone(),
            source: Source::Relayed(relayed),
        }
    }

    /// An initialize-era subscription now holds `hold`'s URI: its updates pass the filter,
    /// and the end releases it.
    pub(crate) fn hold(&mut self, hold: Hold) {
        self.filter
            .resource_subscriptions
            .get_or_insert_with(Vec::new)
            .push(hold.uri().to_owned());
        if let Source::Connection(OnConnection {
            kind: Kind::Local { holds },
            ..
        }) = &mut self.source
        {
            holds.push(hold);
        }
    }

    /// The listen was acknowledged: what the server honours, and where its completion goes.
    pub(crate) fn acknowledged(
        &mut self,
        honoured: ListenFilter,
        done: oneshot::Receiver<Result<RawResult, RequestError>>,
    ) {
        self.honoured = Some(honoured);
        if let Source::Connection(OnConnection {
            kind: Kind::Listen { done: slot, .. },
            ..
        }) = &mut self.source
        {
            *slot = Some(done);
        }
    }

    /// The listen completed cleanly before it was acknowledged: nothing is left to end.
    pub(crate) fn ended(&mut self) {
        if let Source::Connection(c) = &mut self.source {
            c.kind = Kind::Ended;
        }
    }

    /// What was asked for.
    #[must_use]
    pub fn filter(&self) -> &ListenFilter {
        &self.filter
    }

    /// What the server said it will deliver (its acknowledgement, 2026-07-28); `None` in the
    /// initialize era, where a successful `resources/subscribe` is the only acknowledgement.
    #[must_use]
    pub fn honoured(&self) -> Option<&ListenFilter> {
        self.honoured.as_ref()
    }

    /// The first subscribed URI (the one given to [`Client::subscribe`](crate::Client::subscribe)).
    #[must_use]
    pub fn uri(&self) -> Option<&str> {
        self.filter
            .resource_subscriptions
            .as_ref()
            .and_then(|u| u.first())
            .map(String::as_str)
    }

    /// The next notification, or `Err` when some may have been missed (a [`Missed::Gap`]
    /// after a reconnect, [`Missed::Lagged`] for a slow reader; the stream goes on after
    /// either); `None` once the subscription ended (and from then on).
    pub async fn recv(&mut self) -> Option<Result<ServerNotification, Missed>> {
        self.next().await
    }

    /// Ends the subscription (if it is still open) and says how it ended: `Ok` when this call
    /// ended it or the server ended it cleanly, the error when it failed (the connection
    /// closed, the server refused or lost it; for a manager's subscription, the manager gave
    /// the server up or the new connection refused it). Call it after the stream ended to
    /// learn why.
    ///
    /// # Errors
    ///
    /// As described; for an initialize-era subscription on one connection, only when a new
    /// session refused to subscribe to one of its URIs again.
    pub async fn close(mut self) -> Result<(), Error> {
        if let Source::Connection(c) = &mut self.source
            && let Some(e) = c.refused.take()
        {
            return Err(e);
        }
        let ended = match &mut self.source {
            Source::Relayed(relayed) => return relayed.close(),
            Source::Connection(OnConnection {
                kind: Kind::Listen {
                    done: Some(done), ..
                },
                ..
            }) => done.try_recv().ok(),
            Source::Connection(_) => None,
        };
        match (ended, &mut self.source) {
            (Some(result), Source::Connection(c)) => {
                c.kind = Kind::Ended;
                result
                    .map(drop)
                    .map_err(|e| crate::client::request_error(&c.shared, "subscriptions/listen", e))
            }
            // Still open: `drop` ends it.
            _ => Ok(()),
        }
    }
}

impl OnConnection {
    /// Ends the subscription now: the listen is cancelled (unless it already completed), or
    /// each URI's hold released and the URIs no other subscription holds unsubscribed.
    /// Nobody waits for an answer.
    fn end(&mut self) {
        let kind = std::mem::replace(&mut self.kind, Kind::Ended);
        let now = (self.now)();
        let mut state = self.shared.lock();
        match kind {
            Kind::Ended => return,
            Kind::Listen { handle, .. } => {
                state.listens.remove(&handle);
                if state.calls.remove(&handle).is_none() {
                    return;
                }
                tracing::debug!(server = &*self.shared.name, %handle, "subscription dropped: ending the listen");
                // Already finished is a harmless race.
                let _ = state.core.session_mut().cancel(
                    now,
                    handle,
                    Some("the client ended the subscription".into()),
                );
            }
            Kind::Local { holds } => {
                for hold in holds {
                    if !state.resource_holds.release(&hold) {
                        // Another subscription still holds it (or it is gone upstream).
                        continue;
                    }
                    let uri = hold.uri();
                    let params = ResourceRequestParams::new(uri.to_owned());
                    // Fire and forget: the driver ignores completions it has no call for. A
                    // closed session refuses, which is fine: nothing to unsubscribe from.
                    match state.core.session_mut().request::<Unsubscribe>(
                        now,
                        &params,
                        RequestOptions::new(),
                    ) {
                        Ok(handle) => {
                            tracing::debug!(server = &*self.shared.name, %handle, %uri, method = Unsubscribe::METHOD, "unsubscribing");
                        }
                        Err(e) => {
                            tracing::debug!(server = &*self.shared.name, %uri, error = %e, "not unsubscribing");
                        }
                    }
                }
            }
        }
        state.wake_driver();
    }
}

impl Stream for Subscription {
    type Item = Result<ServerNotification, Missed>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        match &mut this.source {
            Source::Relayed(relayed) => relayed.poll_recv(cx),
            Source::Connection(c) => loop {
                if c.over {
                    return Poll::Ready(None);
                }
                let Some(fed) = std::task::ready!(c.stream.poll_next_unpin(cx)) else {
                    c.over = true;
                    return Poll::Ready(None);
                };
                let local = matches!(c.kind, Kind::Local { .. });
                match fed {
                    // The server filters a listen; a local subscription filters here.
                    Fed::Item(Ok(n)) if local && !n.matches(&this.filter) => {}
                    Fed::Item(item) => return Poll::Ready(Some(item)),
                    Fed::Refused { uri, error }
                        if local
                            && this
                                .filter
                                .resource_subscriptions
                                .as_ref()
                                .is_some_and(|l| l.contains(&uri)) =>
                    {
                        // It no longer delivers what it promised: end it, saying why.
                        let e =
                            crate::client::request_error(&c.shared, "resources/subscribe", error);
                        c.refused = Some(e);
                        c.over = true;
                        return Poll::Ready(None);
                    }
                    // Another subscription's URI.
                    Fed::Refused { .. } => {}
                }
            },
        }
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        // A relayed subscription ends when its `Relayed` (the relay's stop signal) drops.
        if let Source::Connection(c) = &mut self.source {
            c.end();
        }
    }
}
