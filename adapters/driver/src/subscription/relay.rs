//! The channel between a manager's relay task (which re-issues a subscription on each
//! connection of a server) and the [`Subscription`](super::Subscription) it feeds.

use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use mcp_proto::session::ServerNotification;
use tokio::sync::mpsc;

use crate::error::Error;
use crate::notify::Missed;

/// One item of a subscription's stream.
type Item = Result<ServerNotification, Missed>;

/// Items the relay may hold for a slow reader. Past it the relay waits, and the connection's
/// own bounded stream under it lags instead (the reader then gets [`Missed::Lagged`]).
const RELAY_CAPACITY: usize = 64;

/// How the relay ended, when it ended with an error (set before the sender drops, so a
/// reader that saw the end finds it).
type End = Arc<Mutex<Option<Error>>>;

/// The subscriber's end, inside a [`Subscription`](super::Subscription). Dropping it stops
/// the relay (which then ends the subscription on the connection it is on).
pub(crate) struct Relayed {
    rx: mpsc::Receiver<Item>,
    end: End,
}

impl Relayed {
    pub(super) fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<Item>> {
        self.rx.poll_recv(cx)
    }

    /// Stops the relay; the error it ended with, if it had already ended with one.
    pub(super) fn close(&mut self) -> Result<(), Error> {
        self.rx.close();
        match self
            .end
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// The relay task's end.
pub(crate) struct Relay {
    tx: mpsc::Sender<Item>,
    end: End,
}

impl Relay {
    /// A connected pair.
    pub(crate) fn channel() -> (Relay, Relayed) {
        let (tx, rx) = mpsc::channel(RELAY_CAPACITY);
        let end = End::default();
        (
            Relay {
                tx,
                end: end.clone(),
            },
            Relayed { rx, end },
        )
    }

    /// Hands one item to the subscriber, waiting while its buffer is full. `false` when the
    /// subscriber is gone (the subscription was dropped or closed): stop relaying.
    pub(crate) async fn send(&self, item: Item) -> bool {
        self.tx.send(item).await.is_ok()
    }

    /// Completes when the subscriber is gone.
    pub(crate) async fn gone(&self) {
        self.tx.closed().await;
    }

    /// Ends the stream with `error`, which [`Subscription::close`](super::Subscription::close)
    /// returns.
    pub(crate) fn fail(self, error: Error) {
        *self.end.lock().unwrap_or_else(PoisonError::into_inner) = Some(error);
    }
}
