//! Subscriptions on [`Client`]: one API for both protocol eras.

use futures_util::future::{Either, select};
use mcp_proto::session::{Deadline, Era, RequestError};
use mcp_proto::types::v2026::ListenFilter;
use mcp_proto::types::{ResourceRequestParams, Subscribe};
use tokio::sync::{broadcast, oneshot};

use super::Client;
use crate::error::Error;
use crate::notify::Feed;
use crate::runtime::Runtime;
use crate::shared::{Call, ListenSink, Reply};
use crate::subscription::Subscription;

const LISTEN: &str = "subscriptions/listen";

impl<R: Runtime> Client<R> {
    /// Subscribes to one resource: the stream yields its `notifications/resources/updated`.
    /// The same as [`listen`](Self::listen) with only this URI.
    ///
    /// # Errors
    ///
    /// See [`listen`](Self::listen).
    pub async fn subscribe(&self, uri: impl Into<String>) -> Result<Subscription, Error> {
        self.listen(ListenFilter {
            resource_subscriptions: Some(vec![uri.into()]),
            ..ListenFilter::default()
        })
        .await
    }

    /// Opens a subscription to what `filter` asks for: updates of the listed resource URIs,
    /// and the list changes whose flags are `Some(true)`. Returns once the server has taken
    /// it: in the 2026-07-28 era when it acknowledged the `subscriptions/listen` (within the
    /// client's request timeout; what it honours is [`Subscription::honoured`]), in the
    /// initialize era when every `resources/subscribe` succeeded (list changes need no
    /// request there: the server sends them to every client). Notifications sent from then
    /// on are on the stream. Dropping the future before it returns ends the subscription.
    ///
    /// Several subscriptions may be open at once; each gets its own notifications. In the
    /// initialize era, subscriptions to the same URI share one upstream `resources/subscribe`
    /// (sent by the first), and `resources/unsubscribe` goes only when the last of them ends.
    ///
    /// It lives as long as this connection: an expired HTTP session is not the end (the
    /// subscription is re-issued on the new session and the stream yields a
    /// [`Gap`](crate::Gap) first), a closed connection is. For a subscription that also
    /// survives the server's restart, subscribe through a [`Manager`](crate::Manager)
    /// ([`Manager::listen`](crate::Manager::listen)). See [`Subscription`] for the details.
    ///
    /// # Errors
    ///
    /// See [`Error`]: the server's refusal, [`Error::Timeout`] when a 2026-07-28 server does
    /// not acknowledge in time, [`Error::Closed`].
    pub async fn listen(&self, filter: ListenFilter) -> Result<Subscription, Error> {
        if self.era() == Era::Discover {
            self.listen_modern(filter).await
        } else {
            self.listen_local(filter).await
        }
    }

    async fn listen_modern(&self, filter: ListenFilter) -> Result<Subscription, Error> {
        // A token about to expire is refreshed first, as for any call (a 401 on the listen
        // itself is not recovered: it fails the subscription).
        #[cfg(feature = "http")]
        if let Some(auth) = &self.inner.auth
            && let Some(h) = auth.before_request().await
        {
            self.set_authorization(h);
        }
        let shared = &self.inner.shared;
        let (done_tx, done_rx) = oneshot::channel();
        let (ack_tx, ack_rx) = oneshot::channel();
        let (handle, stream) = {
            let now = self.inner.runtime.now();
            let mut state = shared.lock();
            let sent = state
                .core
                .session_mut()
                .listen(now, &filter, Deadline::SessionDefault);
            let handle = match sent {
                Ok(handle) => handle,
                Err(e) => {
                    // `usage` may lock the state itself.
                    drop(state);
                    return Err(self.usage(e));
                }
            };
            let (tx, rx) = broadcast::channel(shared.notification_capacity);
            state.calls.insert(
                handle,
                Call {
                    reply: Reply::Channel(done_tx),
                    progress: None,
                },
            );
            state.listens.insert(
                handle,
                ListenSink {
                    acknowledged: Some(ack_tx),
                    tx,
                },
            );
            state.wake_driver();
            (handle, Feed::new(rx))
        };
        // From here on, dropping `sub` (this future dropped, or an error) ends the listen.
        let mut sub = Subscription::listen(filter, handle, stream, shared.clone(), self.now_fn());
        match select(ack_rx, done_rx).await {
            Either::Left((Ok(honoured), done)) => {
                sub.acknowledged(honoured, done);
                Ok(sub)
            }
            // The listen completed before any acknowledgement (the sink, and with it the
            // acknowledgement sender, is dropped right after the result is delivered).
            Either::Left((Err(_), done)) => self.unacknowledged(sub, done.await),
            Either::Right((result, _)) => self.unacknowledged(sub, result),
        }
    }

    /// The listen completed without an acknowledgement: its error, or (ended cleanly) a
    /// subscription whose stream is over.
    fn unacknowledged(
        &self,
        mut sub: Subscription,
        result: Result<Result<mcp_proto::RawResult, RequestError>, oneshot::error::RecvError>,
    ) -> Result<Subscription, Error> {
        match result {
            Ok(Ok(_)) => {
                sub.ended();
                Ok(sub)
            }
            Ok(Err(e)) => Err(super::request_error(&self.inner.shared, LISTEN, e)),
            Err(_) => Err(self.gone()),
        }
    }

    /// The initialize era: `resources/subscribe` per URI no other subscription of this
    /// connection holds, the connection's notifications filtered locally.
    async fn listen_local(&self, filter: ListenFilter) -> Result<Subscription, Error> {
        // Listen first, so that no update sent right after an answer is missed.
        let uris = filter.resource_subscriptions.clone().unwrap_or_default();
        let mut sub = Subscription::local(
            ListenFilter {
                resource_subscriptions: (!uris.is_empty()).then(Vec::new),
                ..filter
            },
            Feed::new(self.inner.shared.subscribe()),
            self.inner.shared.clone(),
            self.now_fn(),
        );
        for uri in uris {
            // A URI another subscription of this connection holds is subscribed already:
            // this one shares it (see `ResourceHolds`).
            let joined = self.inner.shared.lock().resource_holds.join(&uri);
            let hold = match joined {
                Some(hold) => hold,
                None => {
                    // On an error `sub` is dropped, which releases the URIs held so far.
                    self.request::<Subscribe>(&ResourceRequestParams::new(uri.clone()))
                        .await?;
                    self.inner.shared.lock().resource_holds.subscribed(&uri)
                }
            };
            sub.hold(hold);
        }
        Ok(sub)
    }

    /// The driver went away without completing (it only does so once closed).
    fn gone(&self) -> Error {
        super::closed_error(
            &self.inner.shared,
            mcp_proto::session::CloseReason::TransportClosed { detail: None },
        )
    }
}
