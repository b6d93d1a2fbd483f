//! The host sessions' resource subscriptions, shared: one upstream subscription per
//! host-visible URI, however many host sessions subscribed to it.
//!
//! With `--listen` every HTTP session shares the servers, and a server knows one
//! subscription per URI: the bridge subscribes upstream when the first session subscribes
//! to a URI, passes each `notifications/resources/updated` to every session subscribed to
//! it, and unsubscribes upstream only when the last of them unsubscribed or ended. Over stdio
//! there is one session, and this is the same as a subscription per URI.
//!
//! Bounded: at most [`MAX_URIS`] URIs are subscribed at once (a further one is refused with
//! the reason), and each URI's subscribers are sessions (which the HTTP server bounds).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

use futures_util::StreamExt as _;
use mcp_proto::jsonrpc::ErrorObject;
use mcp_tokio::mcp_driver::ManagerError;
use mcp_tokio::server::ServerHandle;
use mcp_tokio::{Manager, Subscription};
use serde_json::Value;

use super::uri;

/// How many host-visible URIs may be subscribed at once, over every session.
pub const MAX_URIS: usize = 1024;

/// Every host session's subscriptions: by host-visible URI, its subscribers and the relay
/// of its one upstream subscription.
#[derive(Default)]
pub struct Subscriptions {
    uris: Mutex<HashMap<String, Upstream>>,
}

/// One host-visible URI's subscription.
#[derive(Default)]
struct Upstream {
    /// The sessions subscribed, by router number: where its updates go.
    subscribers: HashMap<u64, ServerHandle>,
    /// The task relaying the upstream subscription to the subscribers: it owns the
    /// subscription, and aborting it unsubscribes upstream. `None` until subscribed.
    relay: Option<tokio::task::JoinHandle<()>>,
    /// Held while subscribing upstream, so that two sessions subscribing at once make one
    /// upstream subscription.
    gate: Arc<tokio::sync::Mutex<()>>,
}

impl Upstream {
    fn live(&self) -> bool {
        self.relay.as_ref().is_some_and(|r| !r.is_finished())
    }
}

impl Drop for Upstream {
    fn drop(&mut self) {
        if let Some(relay) = self.relay.take() {
            relay.abort();
        }
    }
}

impl Subscriptions {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Upstream>> {
        self.uris.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Subscribes session `session` (whose updates go to `host`) to `host_uri`, which is
    /// `original` of `server`: upstream through `manager` unless a session is subscribed to
    /// it already. Subscribing again is a no-op. Call when `server` is ready.
    ///
    /// # Errors
    ///
    /// The upstream subscription's failure; too many URIs subscribed ([`MAX_URIS`]).
    pub async fn subscribe(
        self: &Arc<Self>,
        manager: &Manager,
        session: u64,
        host: &ServerHandle,
        host_uri: &str,
        (server, original): (&str, &str),
    ) -> Result<(), ErrorObject> {
        let gate = {
            let mut uris = self.lock();
            if !uris.contains_key(host_uri) && uris.len() >= MAX_URIS {
                return Err(ErrorObject::new(
                    ErrorObject::INTERNAL_ERROR,
                    format!(
                        "mcp bridge: {MAX_URIS} resources are subscribed already; \
                         unsubscribe from one first"
                    ),
                ));
            }
            uris.entry(host_uri.to_owned()).or_default().gate.clone()
        };
        let _subscribing = gate.lock().await;
        if let Some(upstream) = self.lock().get_mut(host_uri)
            && upstream.live()
        {
            upstream.subscribers.insert(session, host.clone());
            return Ok(());
        }
        let subscribed = manager.subscribe(server, original).await;
        let mut uris = self.lock();
        let subscription = match subscribed {
            Ok(subscription) => subscription,
            Err(e) => {
                if uris
                    .get(host_uri)
                    .is_some_and(|u| u.subscribers.is_empty() && !u.live())
                {
                    uris.remove(host_uri);
                }
                return Err(manager_error(e));
            }
        };
        let upstream = uris.entry(host_uri.to_owned()).or_default();
        upstream.subscribers.insert(session, host.clone());
        // Not live: the entry (kept while its gate is held) was checked under the gate.
        upstream.relay = Some(tokio::spawn(relay(
            Arc::downgrade(self),
            host_uri.to_owned(),
            server.to_owned(),
            subscription,
        )));
        Ok(())
    }

    /// Unsubscribes session `session` from `host_uri`; upstream too when it was the last
    /// session subscribed. Unsubscribing from a URI not subscribed is a no-op.
    pub fn unsubscribe(&self, session: u64, host_uri: &str) {
        let mut uris = self.lock();
        if let Some(upstream) = uris.get_mut(host_uri) {
            upstream.subscribers.remove(&session);
            if upstream.subscribers.is_empty() && Arc::strong_count(&upstream.gate) == 1 {
                // Dropped: its relay is aborted, which unsubscribes upstream.
                uris.remove(host_uri);
            }
        }
    }

    /// Unsubscribes session `session` from every URI (its session ended).
    pub fn end_session(&self, session: u64) {
        let mut uris = self.lock();
        for upstream in uris.values_mut() {
            upstream.subscribers.remove(&session);
        }
        uris.retain(|_, u| !u.subscribers.is_empty() || Arc::strong_count(&u.gate) > 1);
    }

    /// The sessions subscribed to `host_uri` now, forgetting those whose session is gone;
    /// when none is left, the URI is dropped (its relay, the caller, aborted: unsubscribed
    /// upstream).
    fn subscribers(&self, host_uri: &str) -> Vec<ServerHandle> {
        let mut uris = self.lock();
        let Some(upstream) = uris.get_mut(host_uri) else {
            return Vec::new();
        };
        upstream.subscribers.retain(|_, host| !host.is_closed());
        if upstream.subscribers.is_empty() && Arc::strong_count(&upstream.gate) == 1 {
            uris.remove(host_uri);
            return Vec::new();
        }
        upstream.subscribers.values().cloned().collect()
    }
}

/// Passes `subscription`'s updates (of `server`) to every session subscribed to `host_uri`
/// until it ends or the table is gone.
async fn relay(
    table: Weak<Subscriptions>,
    host_uri: String,
    server: String,
    mut subscription: Subscription,
) {
    while let Some(item) = subscription.next().await {
        let updated = match item {
            Ok(n) if n.method == "notifications/resources/updated" => n
                .params
                .as_deref()
                .and_then(|p| serde_json::from_str::<Value>(p.get()).ok())
                .and_then(|p| p.get("uri").and_then(Value::as_str).map(str::to_owned))
                .map_or_else(|| host_uri.clone(), |u| uri::to_host(&server, &u)),
            Ok(_) => continue,
            // Reconnected (or fell behind): it may have changed meanwhile.
            Err(missed) => {
                tracing::debug!("bridge: subscription to {host_uri}: {missed}");
                host_uri.clone()
            }
        };
        let Some(table) = table.upgrade() else { return };
        for host in table.subscribers(&host_uri) {
            if let Err(e) = host.notify_resource_updated(&updated) {
                tracing::debug!("bridge: {updated} update not forwarded: {e}");
            }
        }
    }
    tracing::debug!("bridge: the subscription to {host_uri} ended upstream");
}

/// The host's error for a manager failure to subscribe.
fn manager_error(e: ManagerError) -> ErrorObject {
    match e {
        ManagerError::Call(e) => crate::app::bridge::forward::error_for_host(e),
        other => ErrorObject::new(ErrorObject::INTERNAL_ERROR, format!("mcp bridge: {other}")),
    }
}
