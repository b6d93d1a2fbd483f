//! A future polled only after its own waker fired.
//!
//! A connection races its requests against the server's stop signal; a plain select polls the
//! stop on each of the connection's wake-ups (several a request), each a look at a watch
//! channel. [`WhenWoken`] gives its future a waker of its own and polls it again only once
//! that waker fired (and on the first poll), so the connection's wake-ups cost a flag.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Wake, Waker};

use futures_util::task::AtomicWaker;

/// `fut`, polled on the first poll and after each wake-up of its own (see the module docs).
pub(crate) struct WhenWoken<F> {
    fut: F,
    signal: Arc<Signal>,
}

struct Signal {
    /// Whether the inner future's waker fired since its last poll.
    woken: AtomicBool,
    /// The task polling the [`WhenWoken`], woken with the inner future.
    task: AtomicWaker,
}

impl Wake for Signal {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::Release);
        self.task.wake();
    }
}

impl<F> WhenWoken<F> {
    pub(crate) fn new(fut: F) -> Self {
        WhenWoken {
            fut,
            signal: Arc::new(Signal {
                woken: AtomicBool::new(true),
                task: AtomicWaker::new(),
            }),
        }
    }
}

impl<F: Future + Unpin> Future for WhenWoken<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        // Registered before the flag is read: a wake-up after the read wakes this task.
        self.signal.task.register(cx.waker());
        if !self.signal.woken.swap(false, Ordering::AcqRel) {
            return Poll::Pending;
        }
        let waker = Waker::from(self.signal.clone());
        Pin::new(&mut self.fut).poll(&mut Context::from_waker(&waker))
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::future::Future;
    use std::pin::pin;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::task::{Context, Poll, Wake, Waker};

    use super::WhenWoken;

    #[derive(Default)]
    struct Woken(AtomicBool);

    impl Wake for Woken {
        fn wake(self: Arc<Self>) {
            self.0.store(true, Ordering::SeqCst);
        }
    }

    /// The inner future is polled first, not again on the outer task's other wake-ups, and
    /// again once its own waker fired, which wakes the outer task too.
    #[test]
    fn polled_first_then_only_after_its_own_wake_up() {
        let polls = Cell::new(0);
        let inner_waker: Cell<Option<Waker>> = Cell::new(None);
        let ready = Cell::new(false);
        let inner = std::future::poll_fn(|cx| {
            polls.set(polls.get() + 1);
            inner_waker.set(Some(cx.waker().clone()));
            if ready.get() {
                Poll::Ready(7)
            } else {
                Poll::Pending
            }
        });
        let outer_woken = Arc::new(Woken::default());
        let waker = Waker::from(outer_woken.clone());
        let mut cx = Context::from_waker(&waker);
        let mut gated = pin!(WhenWoken::new(inner));
        assert!(gated.as_mut().poll(&mut cx).is_pending());
        assert_eq!(polls.get(), 1, "the first poll reaches the inner future");
        assert!(gated.as_mut().poll(&mut cx).is_pending());
        assert!(gated.as_mut().poll(&mut cx).is_pending());
        assert_eq!(polls.get(), 1, "other wake-ups do not reach it");
        ready.set(true);
        inner_waker
            .take()
            .expect("the inner future kept its waker")
            .wake();
        assert!(
            outer_woken.0.load(Ordering::SeqCst),
            "the outer task is woken"
        );
        assert_eq!(gated.as_mut().poll(&mut cx), Poll::Ready(7));
        assert_eq!(polls.get(), 2);
    }
}
