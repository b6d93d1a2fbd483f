//! A client request's stop signal. The driver holds the sender while the request's handler
//! runs: it cancels it (the client's `notifications/cancelled`, the session's close) or drops
//! it (the request is over: answered, or forgotten). The handler's context and the task that
//! runs the handler hold receivers.
//!
//! The state is one atomic and the wake-up one [`Notify`]: a request that is answered (the
//! common end) costs a store and a look at an empty waiter list (a watch channel would wake
//! each of its eight waiter lists on every drop).

use std::future::poll_fn;
use std::pin::pin;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::Poll;

use tokio::sync::Notify;

/// The handler runs.
const RUNNING: u8 = 0;
/// The client cancelled the request, or the session closed.
const CANCELLED: u8 = 1;
/// The sender went away without a cancellation: the request is over.
const OVER: u8 = 2;

struct Signal {
    state: AtomicU8,
    /// The reason the client gave, set before the state turns [`CANCELLED`].
    reason: OnceLock<Arc<str>>,
    notify: Notify,
}

/// A new signal: the driver's sender and the first receiver.
pub(crate) fn stop_signal() -> (StopSender, StopReceiver) {
    let signal = Arc::new(Signal {
        state: AtomicU8::new(RUNNING),
        reason: OnceLock::new(),
        notify: Notify::new(),
    });
    (StopSender(signal.clone()), StopReceiver(signal))
}

/// The driver's end: [`cancel`](Self::cancel) it, or drop it when the request is over. Either
/// stops the receivers, once.
pub(crate) struct StopSender(Arc<Signal>);

impl StopSender {
    /// Cancels the request, with the client's reason if it gave one.
    pub(crate) fn cancel(self, reason: Option<Arc<str>>) {
        if let Some(reason) = reason {
            // The sender is consumed here: nothing set the reason before.
            let _ = self.0.reason.set(reason);
        }
        self.0.state.store(CANCELLED, Ordering::Release);
        // Dropping `self` wakes the receivers.
    }
}

impl Drop for StopSender {
    fn drop(&mut self) {
        // Not cancelled: the request is over. The state is set before anyone is woken, so a
        // receiver that looks (woken or not) sees it.
        let _ = self
            .0
            .state
            .compare_exchange(RUNNING, OVER, Ordering::Release, Ordering::Relaxed);
        self.0.notify.notify_waiters();
    }
}

/// A look at the signal (cheap to clone).
#[derive(Clone)]
pub(crate) struct StopReceiver(Arc<Signal>);

impl StopReceiver {
    /// Whether the request was cancelled or is over.
    pub(crate) fn is_stopped(&self) -> bool {
        self.0.state.load(Ordering::Acquire) != RUNNING
    }

    /// The client's reason, once the request was cancelled with one.
    pub(crate) fn reason(&self) -> Option<&str> {
        if self.0.state.load(Ordering::Acquire) == CANCELLED {
            self.0.reason.get().map(|r| &**r)
        } else {
            None
        }
    }

    /// Completes once the request is stopped (at once if it is). The state is read on every
    /// poll, not only on this future's own wake-up: a poll of the task for another reason
    /// (the driver's harness woken first) sees the stop too.
    pub(crate) async fn stopped(&self) {
        // Made before the first look: a wake-up sent after its creation reaches it, so a stop
        // between the look and the wait is not lost.
        let mut notified = pin!(self.0.notify.notified());
        poll_fn(|cx| {
            if self.is_stopped() {
                return Poll::Ready(());
            }
            // Ready only once the sender went away, after it set the state.
            notified.as_mut().poll(cx)
        })
        .await;
    }
}

#[cfg(test)]
mod tests {
    use std::future::Future;
    use std::pin::pin;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::task::{Context, Poll, Wake, Waker};

    use super::stop_signal;

    fn poll_once<F: Future>(f: std::pin::Pin<&mut F>) -> Poll<F::Output> {
        f.poll(&mut Context::from_waker(Waker::noop()))
    }

    #[test]
    fn a_cancellation_stops_every_receiver_with_its_reason() {
        let (tx, rx) = stop_signal();
        let other = rx.clone();
        let mut waiting = pin!(other.stopped());
        assert!(poll_once(waiting.as_mut()).is_pending());
        assert!(!rx.is_stopped());
        assert_eq!(rx.reason(), None);
        tx.cancel(Some(Arc::from("the user pressed stop")));
        assert!(rx.is_stopped());
        assert_eq!(rx.reason(), Some("the user pressed stop"));
        assert_eq!(poll_once(waiting.as_mut()), Poll::Ready(()));
    }

    #[test]
    fn a_cancellation_without_a_reason_has_none() {
        let (tx, rx) = stop_signal();
        tx.cancel(None);
        assert!(rx.is_stopped());
        assert_eq!(rx.reason(), None);
        assert_eq!(poll_once(pin!(rx.stopped())), Poll::Ready(()));
    }

    /// The request is over (answered): receivers stop, with no reason.
    #[test]
    fn dropping_the_sender_stops_without_a_reason() {
        let (tx, rx) = stop_signal();
        let mut waiting = pin!(rx.stopped());
        assert!(poll_once(waiting.as_mut()).is_pending());
        drop(tx);
        assert!(rx.is_stopped());
        assert_eq!(rx.reason(), None);
        assert_eq!(poll_once(waiting.as_mut()), Poll::Ready(()));
    }

    /// A waiter first polled after the stop completes at once.
    #[test]
    fn a_waiter_polled_after_the_stop_completes() {
        let (tx, rx) = stop_signal();
        let mut waiting = pin!(rx.stopped());
        drop(tx);
        assert_eq!(poll_once(waiting.as_mut()), Poll::Ready(()));
    }

    /// A waiter that returned `Pending` is woken by the cancellation, and by the drop.
    #[test]
    fn a_parked_waiter_is_woken() {
        for cancel in [true, false] {
            let (tx, rx) = stop_signal();
            let woken = Arc::new(Woken::default());
            let waker = Waker::from(woken.clone());
            let mut waiting = pin!(rx.stopped());
            let mut cx = Context::from_waker(&waker);
            assert!(waiting.as_mut().poll(&mut cx).is_pending());
            assert!(!woken.0.load(Ordering::SeqCst));
            if cancel {
                tx.cancel(None);
            } else {
                drop(tx);
            }
            assert!(woken.0.load(Ordering::SeqCst), "woken (cancel: {cancel})");
            assert_eq!(waiting.as_mut().poll(&mut cx), Poll::Ready(()));
        }
    }

    #[derive(Default)]
    struct Woken(AtomicBool);

    impl Wake for Woken {
        fn wake(self: Arc<Self>) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
}
