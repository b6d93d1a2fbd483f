//! Server notifications as bounded streams.

use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_util::stream::{BoxStream, Stream, StreamExt as _};
use mcp_proto::session::ServerNotification;
use tokio::sync::broadcast;

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
