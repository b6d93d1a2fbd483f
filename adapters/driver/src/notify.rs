//! Server notifications as bounded streams, and what a stream reports when it may have
//! missed some ([`Lagged`], [`Gap`]).

use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use futures_util::stream::{BoxStream, Stream, StreamExt as _};
use mcp_proto::session::{RequestError, ServerNotification};
use tokio::sync::broadcast;

/// What the driver broadcasts to a connection's notification streams: a notification, or
/// the news that some may have been lost (in order with the notifications around it).
#[derive(Debug, Clone)]
pub(crate) enum Item {
    Notification(ServerNotification),
    Gap(Gap),
    /// After a gap: the new session refused to subscribe to `uri` again; the subscriptions
    /// that count on it end with `error`.
    Refused {
        uri: String,
        error: RequestError,
    },
}

/// What a [`Feed`] yields: an item of a subscription's stream, or a refused re-subscription
/// (which the subscription decides about).
pub(crate) enum Fed {
    Item(Result<ServerNotification, Missed>),
    Refused { uri: String, error: RequestError },
}

/// Why a [`Subscription`](crate::Subscription) may have missed notifications.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum GapCause {
    /// The server forgot the HTTP session (404 to its `Mcp-Session-Id`) and the client set up
    /// a fresh one; the subscriptions and the log level were restored on it.
    SessionExpired,
    /// The [`Manager`](crate::Manager) reconnected the server (its process exited or its
    /// connection was lost) and re-issued the subscription on the new connection.
    Reconnected,
    /// 2026-07-28 over HTTP: the stream of the subscription's `subscriptions/listen` broke
    /// and the listen was re-issued (once; a second break ends the subscription).
    StreamBroken,
}

impl fmt::Display for GapCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            GapCause::SessionExpired => "the server's session expired and was re-initialized",
            GapCause::Reconnected => "the server was reconnected",
            GapCause::StreamBroken => "the subscription's stream broke and was re-issued",
        })
    }
}

/// Notifications may have been missed between [`since`](Self::since) and
/// [`until`](Self::until): the subscription was re-issued on a new session or connection and
/// goes on. Everything after this item on the stream comes from the new one.
///
/// `since` is when the client noticed the loss; the server may have stopped sending a little
/// earlier (an expired session, a process that was dying). `until` is when the subscription
/// was in place again. A resource that changed in between is not reported again: read it
/// afresh if its state matters.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("notifications may have been missed for {}: {cause}", humane(until.saturating_duration_since(*since)))]
pub struct Gap {
    /// What happened.
    pub cause: GapCause,
    /// When the loss was noticed.
    pub since: Instant,
    /// When the subscription was in place again.
    pub until: Instant,
}

/// A gap's length for people: `120 ms`, `3.4 s`.
fn humane(d: std::time::Duration) -> String {
    if d < std::time::Duration::from_secs(1) {
        format!("{} ms", d.as_millis())
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

/// The error side of a [`Subscription`](crate::Subscription)'s stream: notifications may have
/// been missed, and the stream goes on. Not an end.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Missed {
    /// The reader fell behind the stream's bound.
    #[error(transparent)]
    Lagged(#[from] Lagged),
    /// The session or connection was replaced; the subscription was re-issued on the new one.
    #[error(transparent)]
    Gap(#[from] Gap),
}

/// The items of one connection's broadcast, gaps included: the stream under a
/// [`Subscription`](crate::Subscription). Ends when the connection is closed.
pub(crate) struct Feed {
    inner: BoxStream<'static, Fed>,
}

impl Feed {
    pub(crate) fn new(rx: broadcast::Receiver<Item>) -> Self {
        let inner = futures_util::stream::unfold(rx, |mut rx| async move {
            let item = match rx.recv().await {
                Ok(Item::Notification(n)) => Fed::Item(Ok(n)),
                Ok(Item::Gap(gap)) => Fed::Item(Err(Missed::Gap(gap))),
                Ok(Item::Refused { uri, error }) => Fed::Refused { uri, error },
                Err(broadcast::error::RecvError::Lagged(n)) => {
                    Fed::Item(Err(Missed::Lagged(Lagged(n))))
                }
                Err(broadcast::error::RecvError::Closed) => return None,
            };
            Some((item, rx))
        })
        .fuse()
        .boxed();
        Feed { inner }
    }
}

impl Stream for Feed {
    type Item = Fed;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.inner.poll_next_unpin(cx)
    }
}

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
/// when the connection is closed. It does not report a re-initialized HTTP session (the
/// notifications simply resume): a [`Subscription`](crate::Subscription) does, with a [`Gap`].
pub struct Notifications {
    inner: BoxStream<'static, Result<ServerNotification, Lagged>>,
}

impl fmt::Debug for Notifications {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Notifications").finish_non_exhaustive()
    }
}

impl Notifications {
    pub(crate) fn new(rx: broadcast::Receiver<Item>) -> Self {
        let inner = futures_util::stream::unfold(rx, |mut rx| async move {
            loop {
                let item = match rx.recv().await {
                    Ok(Item::Notification(n)) => Ok(n),
                    // This stream has no way to say it; a subscription does.
                    Ok(Item::Gap(_) | Item::Refused { .. }) => continue,
                    Err(broadcast::error::RecvError::Lagged(n)) => Err(Lagged(n)),
                    Err(broadcast::error::RecvError::Closed) => return None,
                };
                return Some((item, rx));
            }
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

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::{Gap, GapCause, Missed};

    #[test]
    fn a_gap_says_how_long_and_why() {
        let since = Instant::now();
        let gap = |ms| Gap {
            cause: GapCause::Reconnected,
            since,
            until: since + Duration::from_millis(ms),
        };
        assert_eq!(
            gap(120).to_string(),
            "notifications may have been missed for 120 ms: the server was reconnected"
        );
        assert_eq!(
            Missed::Gap(gap(3400)).to_string(),
            "notifications may have been missed for 3.4 s: the server was reconnected"
        );
    }
}
