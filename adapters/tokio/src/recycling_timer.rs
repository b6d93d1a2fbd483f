//! hyper's timer for one server connection: one tokio timer, recycled from request to request.
//!
//! hyper arms a header-read deadline each time a connection waits for a request's head and
//! drops it once the head is in. With hyper-util's `TokioTimer` each of those is a new
//! timer-wheel entry, inserted and removed again within the request; and whenever its deadline
//! is earlier than the one the runtime last went to sleep for (the wheel was empty, or held
//! only a later deadline such as a forwarded call's), the insertion wakes the reactor: an
//! eventfd write and one more `epoll_wait` on every request.
//!
//! [`RecyclingTimer`] keeps the tokio timer a dropped sleep leaves behind and hands it to the
//! next sleep of the connection. A timer still armed for an earlier deadline stays armed: when
//! it fires first, the sleep polling it re-arms it for its own deadline. hyper's deadlines only
//! move later (each is "now + the timeout"), so the wheel sees about one insertion per timeout
//! period instead of one per request. hyper-util's `TokioTimer` is the plain path; the tests
//! below hold the two to the same completions.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use hyper::rt::{Sleep, Timer};

/// A tokio timer, boxed so that it moves between sleeps without being re-registered.
type TokioSleep = Pin<Box<tokio::time::Sleep>>;

/// A [`Timer`] for one connection (make one per connection: its sleeps share one spare timer).
#[derive(Clone, Debug, Default)]
pub(crate) struct RecyclingTimer {
    /// The timer the last dropped sleep left, armed or fired, for the next sleep to take.
    spare: Arc<Mutex<Option<TokioSleep>>>,
}

impl RecyclingTimer {
    fn take_spare(&self) -> Option<TokioSleep> {
        // A panic while the lock was held cannot leave the slot half-written: it holds a
        // whole timer or none.
        self.spare
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }
}

impl Timer for RecyclingTimer {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn Sleep>> {
        self.sleep_until(self.now() + duration)
    }

    fn sleep_until(&self, deadline: Instant) -> Pin<Box<dyn Sleep>> {
        Box::pin(RecycledSleep {
            deadline: tokio::time::Instant::from_std(deadline),
            timer: self.take_spare(),
            spare: self.spare.clone(),
        })
    }

    fn reset(&self, sleep: &mut Pin<Box<dyn Sleep>>, new_deadline: Instant) {
        match sleep.as_mut().downcast_mut_pin::<RecycledSleep>() {
            // The timer is re-armed when the sleep is next polled, only if it must be.
            Some(mut recycled) => recycled.deadline = tokio::time::Instant::from_std(new_deadline),
            None => *sleep = self.sleep_until(new_deadline),
        }
    }

    fn now(&self) -> Instant {
        // tokio's clock, which tests can pause, as hyper-util's `TokioTimer` reads it.
        tokio::time::Instant::now().into_std()
    }
}

/// One sleep of a [`RecyclingTimer`]: completes at its deadline, as a tokio sleep would.
struct RecycledSleep {
    deadline: tokio::time::Instant,
    /// The tokio timer this sleep polls: taken from the spare slot, or made at the first poll.
    timer: Option<TokioSleep>,
    spare: Arc<Mutex<Option<TokioSleep>>>,
}

impl Future for RecycledSleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        // Every field is `Unpin` (the tokio timer is boxed).
        let this = self.get_mut();
        let deadline = this.deadline;
        let timer = this
            .timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        loop {
            // Armed for an earlier deadline and not fired yet: kept, it fires first and
            // the loop re-arms it then. Fired, or armed for later than this sleep's
            // deadline: re-armed for it now.
            if timer.is_elapsed() || timer.deadline() > deadline {
                timer.as_mut().reset(deadline);
            }
            match timer.as_mut().poll(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(()) if timer.deadline() == deadline => return Poll::Ready(()),
                // It fired for an earlier deadline between the check above and the poll (a
                // multi-thread runtime's timer thread): the next turn re-arms it.
                Poll::Ready(()) => {}
            }
        }
    }
}

impl Sleep for RecycledSleep {}

impl Drop for RecycledSleep {
    fn drop(&mut self) {
        if let Some(timer) = self.timer.take() {
            *self.spare.lock().unwrap_or_else(PoisonError::into_inner) = Some(timer);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper_util::rt::TokioTimer;
    use proptest::prelude::*;

    /// What a test does to the sleeps of one connection's timer.
    #[derive(Clone, Debug)]
    enum Step {
        /// A new sleep, due this many milliseconds from now.
        Sleep(u64),
        /// The sleep at this index (modulo those alive) moved to this many ms from now.
        Reset(usize, u64),
        /// The sleep at this index (modulo those alive) dropped before it completed.
        Drop(usize),
        /// The clock moved on by this many milliseconds.
        Advance(u64),
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            (0u64..100).prop_map(Step::Sleep),
            (any::<usize>(), 0u64..100).prop_map(|(i, ms)| Step::Reset(i, ms)),
            any::<usize>().prop_map(Step::Drop),
            (0u64..60).prop_map(Step::Advance),
        ]
    }

    /// The sleeps of one timer still pending, each polled after every step.
    struct Sleeps<T> {
        timer: T,
        alive: Vec<Pin<Box<dyn Sleep>>>,
    }

    impl<T: Timer> Sleeps<T> {
        fn apply(&mut self, step: &Step) {
            let now = self.timer.now();
            match *step {
                Step::Sleep(ms) => {
                    let sleep = self.timer.sleep_until(now + Duration::from_millis(ms));
                    self.alive.push(sleep);
                }
                Step::Reset(i, ms) if !self.alive.is_empty() => {
                    let i = i % self.alive.len();
                    let at = now + Duration::from_millis(ms);
                    self.timer.reset(&mut self.alive[i], at);
                }
                Step::Drop(i) if !self.alive.is_empty() => {
                    let i = i % self.alive.len();
                    drop(self.alive.remove(i));
                }
                _ => {}
            }
        }

        /// Polls every pending sleep once: which completed, by their indices before removal.
        fn completed(&mut self) -> Vec<usize> {
            let mut cx = Context::from_waker(std::task::Waker::noop());
            let done: Vec<usize> = (0..self.alive.len())
                .filter(|&i| self.alive[i].as_mut().poll(&mut cx).is_ready())
                .collect();
            for &i in done.iter().rev() {
                self.alive.remove(i);
            }
            done
        }
    }

    /// A current-thread runtime whose clock moves only when a test advances it.
    fn paused_runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .expect("a tokio runtime for the test")
    }

    /// Runs `steps` against both timers on one paused clock: the recycled sleeps must
    /// complete exactly when hyper-util's own do.
    fn same_completions(steps: &[Step]) -> Result<(), TestCaseError> {
        let runtime = paused_runtime();
        runtime.block_on(async {
            let mut plain = Sleeps {
                timer: TokioTimer::new(),
                alive: Vec::new(),
            };
            let mut recycled = Sleeps {
                timer: RecyclingTimer::default(),
                alive: Vec::new(),
            };
            for (n, step) in steps.iter().enumerate() {
                if let Step::Advance(ms) = *step {
                    tokio::time::advance(Duration::from_millis(ms)).await;
                }
                plain.apply(step);
                recycled.apply(step);
                prop_assert_eq!(
                    plain.completed(),
                    recycled.completed(),
                    "after step {} ({:?})",
                    n,
                    step
                );
            }
            Ok(())
        })
    }

    proptest! {
        #[test]
        fn recycled_sleeps_complete_when_tokio_sleeps_do(steps in proptest::collection::vec(step(), 1..60)) {
            same_completions(&steps)?;
        }
    }

    /// hyper's own pattern: a sleep per wait for a head, each due later than the last and
    /// dropped before it is due. The connection's timer stays armed at the first deadline
    /// (one insertion, not one per wait); a wait that outlasts it sees the timer fire, re-arm
    /// and complete only at the wait's own deadline.
    #[test]
    fn a_connection_arms_its_timer_once_across_requests() {
        let runtime = paused_runtime();
        runtime.block_on(async {
            let timer = RecyclingTimer::default();
            let mut cx = Context::from_waker(std::task::Waker::noop());
            let start = tokio::time::Instant::now();
            let timeout = Duration::from_secs(30);
            for _ in 0..5 {
                let mut wait = timer.sleep(timeout);
                assert!(wait.as_mut().poll(&mut cx).is_pending());
                drop(wait);
                tokio::time::advance(Duration::from_secs(1)).await;
            }
            let spare = timer.take_spare().expect("the last wait's timer kept");
            assert_eq!(
                spare.deadline(),
                start + timeout,
                "armed once, for the first wait"
            );
            *timer.spare.lock().unwrap() = Some(spare);

            // Due at start + 35 s; the timer fires at start + 30 s.
            let mut wait = timer.sleep(timeout);
            assert!(wait.as_mut().poll(&mut cx).is_pending());
            tokio::time::advance(Duration::from_secs(29)).await;
            assert!(
                wait.as_mut().poll(&mut cx).is_pending(),
                "not before its deadline"
            );
            tokio::time::advance(Duration::from_secs(1)).await;
            assert!(wait.as_mut().poll(&mut cx).is_ready(), "at its deadline");
        });
    }
}
