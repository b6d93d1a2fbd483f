//! Server notifications as bounded streams.

use std::fmt;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures_util::stream::{BoxStream, Stream, StreamExt as _};
use mcp_proto::session::{NotificationKind, RequestOptions, ServerNotification};
use mcp_proto::types::{Request as _, Unsubscribe};
use tokio::sync::broadcast;

use crate::shared::Shared;

/// A slow reader missed this many notifications: they were dropped for it (and only for it)
/// so that the connection never blocks or buffers without bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("missed {0} notifications (the reader was too slow)")]
pub struct Lagged(pub u64);

/// A stream of every server notification (logging messages, list changes, resource updates,
/// task status, ...), from [`Client::notifications`](crate::Client::notifications).
///
/// Bounded: each stream holds at most the client's notification capacity; a reader that falls
/// further behind gets one `Err(Lagged(n))` and continues with the newest. The stream ends
/// when the connection is closed.
pub struct Notifications {
    inner: BoxStream<'static, Result<ServerNotification, Lagged>>,
}

impl fmt::Debug for Notifications {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Notifications").finish_non_exhaustive()
    }
}

impl Notifications {
    pub(crate) fn new(rx: broadcast::Receiver<ServerNotification>) -> Self {
        let inner = futures_util::stream::unfold(rx, |mut rx| async move {
            let item = match rx.recv().await {
                Ok(n) => Ok(n),
                Err(broadcast::error::RecvError::Lagged(n)) => Err(Lagged(n)),
                Err(broadcast::error::RecvError::Closed) => return None,
            };
            Some((item, rx))
        })
        .fuse()
        .boxed();
        Notifications { inner }
    }

    /// The next notification; `None` once the connection is closed (and from then on).
    pub async fn recv(&mut self) -> Option<Result<ServerNotification, Lagged>> {
        self.inner.next().await
    }
}

impl Stream for Notifications {
    type Item = Result<ServerNotification, Lagged>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.inner.poll_next_unpin(cx)
    }
}

/// `notifications/resources/updated` for one subscribed URI, from
/// [`Client::subscribe`](crate::Client::subscribe).
///
/// Dropping it sends `resources/unsubscribe` (if the connection is still open). Lag is
/// reported as for [`Notifications`].
pub struct Subscription {
    uri: String,
    inner: Notifications,
    shared: Arc<Shared>,
    now: Arc<dyn Fn() -> std::time::Instant + Send + Sync>,
}

impl fmt::Debug for Subscription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Subscription")
            .field("uri", &self.uri)
            .finish_non_exhaustive()
    }
}

impl Subscription {
    pub(crate) fn new(
        uri: String,
        inner: Notifications,
        shared: Arc<Shared>,
        now: Arc<dyn Fn() -> std::time::Instant + Send + Sync>,
    ) -> Self {
        Subscription {
            uri,
            inner,
            shared,
            now,
        }
    }

    /// The subscribed URI.
    #[must_use]
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// The next update for this URI; `None` once the connection is closed.
    pub async fn recv(&mut self) -> Option<Result<ServerNotification, Lagged>> {
        self.next().await
    }
}

fn updated_uri(n: &ServerNotification) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Updated {
        uri: String,
    }
    let params = n.params.as_ref()?;
    serde_json::from_str::<Updated>(params.get())
        .ok()
        .map(|u| u.uri)
}

impl Stream for Subscription {
    type Item = Result<ServerNotification, Lagged>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        loop {
            match std::task::ready!(self.inner.poll_next_unpin(cx)) {
                None => return Poll::Ready(None),
                Some(Err(lag)) => return Poll::Ready(Some(Err(lag))),
                Some(Ok(n)) => {
                    if n.kind() == NotificationKind::ResourceUpdated
                        && updated_uri(&n).as_deref() == Some(self.uri.as_str())
                    {
                        return Poll::Ready(Some(Ok(n)));
                    }
                }
            }
        }
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        let mut state = self.shared.lock();
        let now = (self.now)();
        let params = mcp_proto::types::ResourceRequestParams::new(self.uri.clone());
        // Fire and forget: nobody waits for the answer (the driver ignores completions it has
        // no call for). A closed session refuses, which is fine: nothing to unsubscribe from.
        match state
            .core
            .session_mut()
            .request::<Unsubscribe>(now, &params, RequestOptions::new())
        {
            Ok(handle) => {
                tracing::debug!(server = &*self.shared.name, %handle, uri = %self.uri, method = Unsubscribe::METHOD, "unsubscribing");
                state.wake_driver();
            }
            Err(e) => {
                tracing::debug!(server = &*self.shared.name, uri = %self.uri, error = %e, "not unsubscribing");
            }
        }
    }
}
