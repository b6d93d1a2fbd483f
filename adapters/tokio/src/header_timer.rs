//! hyper's timer on tokio for the HTTP server, made for the header-read timeout: hyper
//! restarts that timeout at every request of a keep-alive connection, and tokio's own
//! `Sleep::reset` takes the timer out of tokio's timer wheel and puts it back each time. When
//! the new deadline is earlier than the one the runtime's driver will wake for (it waited for
//! a slower timer while the request was being answered), putting it back also wakes the
//! driver through its eventfd: a `write` and an `epoll_wait` more on every request.
//!
//! [`HeaderTimer`]'s sleeps move a later deadline in memory only: the tokio timer stays where
//! it is, and when it fires before the deadline it was moved to, it is set again for the rest.
//! A deadline moved earlier resets the tokio timer at once. Either way a sleep completes at
//! its deadline, as with hyper-util's `TokioTimer`.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

/// The timer given to hyper's HTTP/1 server connections (see the module docs).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct HeaderTimer;

/// A sleep of [`HeaderTimer`]: `deadline` is when it completes; `sleep` is the tokio timer,
/// due at `deadline` or earlier.
struct LazySleep {
    deadline: Instant,
    // Boxed so that the sleep is `Unpin` and its deadline can be moved through `Pin<&mut>`.
    sleep: Pin<Box<tokio::time::Sleep>>,
}

impl hyper::rt::Timer for HeaderTimer {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn hyper::rt::Sleep>> {
        self.sleep_until(self.now() + duration)
    }

    /// tokio's clock, as hyper-util's `TokioTimer` reads it.
    fn now(&self) -> Instant {
        tokio::time::Instant::now().into_std()
    }

    fn sleep_until(&self, deadline: Instant) -> Pin<Box<dyn hyper::rt::Sleep>> {
        Box::pin(LazySleep {
            deadline,
            sleep: Box::pin(tokio::time::sleep_until(deadline.into())),
        })
    }

    fn reset(&self, sleep: &mut Pin<Box<dyn hyper::rt::Sleep>>, new_deadline: Instant) {
        match sleep.as_mut().downcast_mut_pin::<LazySleep>() {
            Some(mut lazy) => {
                lazy.deadline = new_deadline;
                if tokio::time::Instant::from_std(new_deadline) < lazy.sleep.deadline() {
                    // Earlier than the tokio timer: it must fire sooner.
                    lazy.sleep.as_mut().reset(new_deadline.into());
                }
            }
            // Not one of ours (hyper only resets the sleeps this timer made).
            None => *sleep = self.sleep_until(new_deadline),
        }
    }
}

impl Future for LazySleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        loop {
            std::task::ready!(self.sleep.as_mut().poll(cx));
            let deadline = self.deadline;
            if tokio::time::Instant::from_std(deadline) <= self.sleep.deadline() {
                return Poll::Ready(());
            }
            // Fired at a deadline since moved later: wait for the rest.
            self.sleep.as_mut().reset(deadline.into());
        }
    }
}

impl hyper::rt::Sleep for LazySleep {}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::rt::Timer as _;

    /// The bound on a sleep that must complete: generous, only against a hang.
    const GUARD: Duration = Duration::from_secs(10);

    #[tokio::test]
    async fn a_sleep_moved_later_completes_at_the_later_deadline_not_before() {
        let timer = HeaderTimer;
        let start = timer.now();
        let mut sleep = timer.sleep(Duration::from_millis(40));
        tokio::time::sleep(Duration::from_millis(20)).await;
        let later = timer.now() + Duration::from_millis(60);
        timer.reset(&mut sleep, later);
        tokio::time::timeout(GUARD, &mut sleep)
            .await
            .expect("the sleep completes");
        assert!(timer.now() >= later, "completed before its deadline");
        assert!(timer.now() - start >= Duration::from_millis(80));
    }

    #[tokio::test]
    async fn a_sleep_moved_earlier_completes_at_the_earlier_deadline() {
        let timer = HeaderTimer;
        let mut sleep = timer.sleep(Duration::from_secs(3600));
        let earlier = timer.now() + Duration::from_millis(20);
        timer.reset(&mut sleep, earlier);
        tokio::time::timeout(GUARD, &mut sleep)
            .await
            .expect("the earlier deadline is kept, not the hour");
        assert!(timer.now() >= earlier, "completed before its deadline");
    }
}
