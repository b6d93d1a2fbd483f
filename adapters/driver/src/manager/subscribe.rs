//! Subscriptions and the log level through the [`Manager`]: server-side state that the
//! manager sets up again on each new connection of a server.
//!
//! A subscription is a relay task: it forwards the subscription of the current connection to
//! the caller's [`Subscription`]; when that connection is lost it waits for the supervisor's
//! next one, subscribes there with the same filter, and tells the caller of the gap. The log
//! level is the slot's, which the supervisor sets on each new connection before it is ready
//! (so before any relay subscribes again).

use std::sync::Arc;

use futures_util::StreamExt as _;
use futures_util::future::{Either, select};
use mcp_manager::reconnect::ServerStatus;
use mcp_proto::types::LoggingLevel;
use mcp_proto::types::v2026::ListenFilter;

use super::{Inner, Manager, ManagerError};
use crate::client::{Client, closed_error};
use crate::error::Error;
use crate::notify::{Gap, GapCause, Missed};
use crate::runtime::Runtime;
use crate::subscription::{Relay, Subscription};

impl<R: Runtime> Manager<R> {
    /// Subscribes to one resource of `server`; the same as [`listen`](Self::listen) with only
    /// this URI.
    ///
    /// # Errors
    ///
    /// See [`listen`](Self::listen).
    pub async fn subscribe(
        &self,
        server: &str,
        uri: impl Into<String>,
    ) -> Result<Subscription, ManagerError> {
        let filter = ListenFilter {
            resource_subscriptions: Some(vec![uri.into()]),
            ..ListenFilter::default()
        };
        self.listen(server, filter).await
    }

    /// Opens a subscription on `server` (as [`Client::listen`]) that survives reconnects:
    /// when the server's connection is lost (its process exits or is killed, its HTTP session
    /// cannot be recovered) and the manager reconnects it, the subscription is issued again
    /// on the new connection, and the stream yields one
    /// `Err(`[`Missed::Gap`]`)` ([`GapCause::Reconnected`]) and then the new connection's
    /// notifications. Returns once the current connection has taken it.
    ///
    /// [`Subscription::honoured`] is what the first connection acknowledged (2026-07-28).
    ///
    /// The stream ends when the manager gives the server up or stops it (then
    /// [`Subscription::close`] gives the last connection's error), when a new connection
    /// refuses the subscription (that error), or when the server itself ends it. Dropping the
    /// [`Subscription`] ends it on whichever connection it is on.
    ///
    /// # Errors
    ///
    /// [`ManagerError::UnknownServer`], [`ManagerError::NotReady`] at once when the server is
    /// not connected now, [`ManagerError::Call`] for the subscription's own failure.
    pub async fn listen(
        &self,
        server: &str,
        filter: ListenFilter,
    ) -> Result<Subscription, ManagerError> {
        let client = self.ready_client(server)?;
        let first = client.listen(filter.clone()).await?;
        let (relay, relayed) = Relay::channel();
        let subscription = Subscription::relayed(&first, relayed);
        let task = relay_task(
            self.inner.clone(),
            server.to_owned(),
            filter,
            client,
            first,
            relay,
        );
        let span = tracing::debug_span!("mcp_manager_subscription", server);
        self.inner
            .runtime
            .spawn(Box::pin(tracing::Instrument::instrument(task, span)));
        Ok(subscription)
    }

    /// Sets the level of the log messages `server` sends (`logging/setLevel`) and keeps it:
    /// every later connection of the server gets it again before it is ready.
    ///
    /// # Errors
    ///
    /// [`ManagerError::UnknownServer`], [`ManagerError::NotReady`], [`ManagerError::Call`]
    /// (then the level is not kept).
    pub async fn set_log_level(
        &self,
        server: &str,
        level: LoggingLevel,
    ) -> Result<(), ManagerError> {
        let client = self.ready_client(server)?;
        client.set_log_level(level).await?;
        if let Some(slot) = self.inner.lock().slot_mut(server) {
            slot.log_level = Some(level);
        }
        Ok(())
    }

    /// The live client of `server`, or why there is none.
    fn ready_client(&self, server: &str) -> Result<Client<R>, ManagerError> {
        let state = self.inner.lock();
        let slot = state
            .slot(server)
            .ok_or_else(|| ManagerError::UnknownServer(server.to_owned()))?;
        match (&slot.client, slot.policy.status()) {
            (Some(client), ServerStatus::Ready) => Ok(client.clone()),
            (_, status) => Err(ManagerError::NotReady {
                server: server.to_owned(),
                status: status.clone(),
            }),
        }
    }
}

/// What a relay waiting for the next connection found.
enum Next<R: Runtime> {
    /// A new ready connection.
    Connected(Client<R>),
    /// The server will not come back (given up, stopped, removed).
    GaveUp,
    /// The subscriber is gone.
    Gone,
}

/// Relays `sub` (on `client`) to `relay`, and re-subscribes on each new connection.
async fn relay_task<R: Runtime>(
    inner: Arc<Inner<R>>,
    server: String,
    filter: ListenFilter,
    mut client: Client<R>,
    mut sub: Subscription,
    relay: Relay,
) {
    loop {
        if !forward(&mut sub, &relay).await {
            return;
        }
        if !client.is_closed() {
            // The server ended the subscription itself: that is its end.
            tracing::debug!("the server ended the subscription");
            if let Err(e) = sub.close().await {
                relay.fail(e);
            }
            return;
        }
        drop(sub);
        let since = inner.runtime.now();
        let mut lost = closed_error(&client.inner.shared, client.closed().await);
        tracing::debug!(error = %lost, "connection lost: waiting to subscribe again");
        // Wait for a connection that takes the subscription.
        sub = loop {
            match next_client(&inner, &server, &client, &relay).await {
                Next::Gone => return,
                Next::GaveUp => {
                    relay.fail(lost);
                    return;
                }
                Next::Connected(next) => {
                    client = next;
                    match client.listen(filter.clone()).await {
                        Ok(sub) => break sub,
                        // Lost again before it took it: wait for the next one.
                        Err(e) if e.is_connection_lost() => lost = e,
                        Err(e) => {
                            tracing::warn!(error = %e, "the new connection refused the subscription");
                            relay.fail(e);
                            return;
                        }
                    }
                }
            }
        };
        let gap = Gap {
            cause: GapCause::Reconnected,
            since,
            until: inner.runtime.now(),
        };
        tracing::info!("{gap}");
        if !relay.send(Err(Missed::Gap(gap))).await {
            return;
        }
    }
}

/// Forwards `sub`'s items until it ends (`true`) or the subscriber is gone (`false`).
async fn forward(sub: &mut Subscription, relay: &Relay) -> bool {
    loop {
        let next = std::pin::pin!(sub.next());
        match select(next, std::pin::pin!(relay.gone())).await {
            Either::Left((Some(item), _)) => {
                if !relay.send(item).await {
                    return false;
                }
            }
            Either::Left((None, _)) => return true,
            Either::Right(_) => return false,
        }
    }
}

/// Waits until `server` is ready on a connection other than `old` (the supervisor publishes
/// every status change), or will not be.
async fn next_client<R: Runtime>(
    inner: &Inner<R>,
    server: &str,
    old: &Client<R>,
    relay: &Relay,
) -> Next<R> {
    let mut version = inner.version.subscribe();
    loop {
        version.borrow_and_update();
        {
            let state = inner.lock();
            let Some(slot) = state.slot(server) else {
                return Next::GaveUp;
            };
            match slot.policy.status() {
                ServerStatus::Ready => {
                    if let Some(client) = &slot.client
                        && !client.is_closed()
                        && !Arc::ptr_eq(&client.inner.shared, &old.inner.shared)
                    {
                        return Next::Connected(client.clone());
                    }
                }
                ServerStatus::Failed { .. } | ServerStatus::Disabled => return Next::GaveUp,
                _ => {}
            }
        }
        let changed = std::pin::pin!(version.changed());
        match select(changed, std::pin::pin!(relay.gone())).await {
            // The sender lives in `inner`, which we hold: `changed` cannot fail.
            Either::Left(_) => {}
            Either::Right(_) => return Next::Gone,
        }
    }
}

/// Sets the slot's log level on a new connection before it is published ready. A refusal is
/// logged, not fatal: the server runs, with its default level.
pub(super) async fn restore_log_level<R: Runtime>(
    client: &Client<R>,
    level: Option<LoggingLevel>,
) -> Result<(), Error> {
    let Some(level) = level else { return Ok(()) };
    match client.set_log_level(level).await {
        Ok(()) => {
            tracing::debug!(?level, "log level restored");
            Ok(())
        }
        Err(e) if e.is_connection_lost() => Err(e),
        Err(e) => {
            tracing::warn!(error = %e, "restoring the log level failed");
            Ok(())
        }
    }
}
