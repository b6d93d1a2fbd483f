//! The connection driver: one task per connection that executes what the core decides.
//!
//! Shaped like quinn's `ConnectionDriver`: every wake-up feeds the core what arrived (bytes,
//! the end of the stream, the child's exit, the clock), drains its outputs (bytes to write,
//! events to deliver), and arms one timer at the earliest deadline. The driver makes no
//! protocol decision: deadlines, cancellation notices, refusals of undeclared server requests
//! and the shutdown escalation all come from `mcp-proto`.
//!
//! **Backpressure.** Bytes are pulled from the core only when the previous batch has been
//! written completely, so at most one batch (`WRITE_BATCH` bytes, or one message if larger) is
//! ever buffered here; the rest waits in the core's bounded queues: past the in-flight cap,
//! calls wait their turn in the core (each bounded by its own deadline), and past the held
//! limit callers see `TooManyInFlight` instead of unbounded growth. Reading is polled independently of writing,
//! so a slow writer never stops responses from being read.
//!
//! **Overlap.** A large batch of answers (a server answering many pipelined calls at once) is
//! fed to the core a slice at a time; after a slice whose events were delivered, the driver
//! yields through [`Runtime::yield_now`] so that the callers run and their next requests go
//! out before the rest of the batch is decoded. Client and server then work at the same time
//! instead of taking turns over whole batches (about 1.3x the calls per second at 256 in
//! flight in `BENCHMARKS.md`).

mod dispatch;
#[cfg(feature = "http")]
mod http;
mod io;
mod lines;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use mcp_proto::connection::Connection;
use mcp_proto::session::CloseReason;
#[cfg(unix)]
use mcp_proto::stdio::shutdown::ShutdownConfig;

#[cfg(feature = "http")]
pub(crate) use http::HttpIo;
#[cfg(unix)]
pub(crate) use io::StdioIo;
pub(crate) use io::{BoxRead, BoxWrite, ByteStream, StreamIo};
pub(crate) use lines::LinesIo;

use crate::handler::Handlers;
use crate::runtime::{BoxFuture, Runtime};
use crate::shared::{Notice, Phase, Shared};

/// Rounds of work per poll before yielding to other tasks.
const MAX_ROUNDS: usize = 32;
/// After the session closed, how long queued messages (a cancellation) may take to flush
/// before the transport is shut down regardless.
pub(crate) const FLUSH_GRACE: Duration = Duration::from_millis(500);

/// Options the driver executes.
#[derive(Clone)]
pub(crate) struct DriverOptions {
    pub(crate) handlers: Handlers,
    #[cfg(unix)]
    pub(crate) shutdown: ShutdownConfig,
    pub(crate) stderr_lines: usize,
    pub(crate) wire: Option<crate::options::WireTap>,
}

/// What the transport I/O is given on each call: the shared state (with the connection of its
/// concrete type), the runtime and the options.
pub(crate) struct Link<'a, R, C> {
    pub(crate) shared: &'a Arc<Shared<C>>,
    pub(crate) runtime: &'a R,
    pub(crate) options: &'a DriverOptions,
}

impl<R, C> Link<'_, R, C> {
    pub(crate) fn server(&self) -> &str {
        &self.shared.name
    }
}

/// What a transport event means to the driver, read while the dispatch holds the state.
pub(crate) enum Observed<E> {
    /// Subscribers are told (a gap in the notifications, a refused re-subscription).
    // Only the HTTP transport has notices.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    Notice(Notice),
    /// The transport's I/O acts on it once the state is released ([`TransportIo::act`]).
    Act(E),
    /// A report only (traced by `observe`).
    Seen,
}

/// The I/O of one kind of transport, executing what its connection type asks for: the
/// transport's inputs (`handle_*`) and its transmit output, which only the concrete type has.
/// The [`Driver`] runs the rest of the contract, which every connection shares
/// ([`Connection`]): timeouts, events, the timer, the end.
pub(crate) trait TransportIo<R: Runtime>: Send + 'static {
    /// The connection whose transport this is.
    type Conn: Connection<TransportEvent: Send> + Send + 'static;

    /// The input half of a round, before the connection's timeouts: feeds it what arrived
    /// on its own (bytes, their end, the child's exit). Returns whether anything happened.
    fn poll_input(
        &mut self,
        cx: &mut Context<'_>,
        now: Instant,
        link: &Link<'_, R, Self::Conn>,
    ) -> bool;

    /// The output half of a round, after the timeouts: performs the transmit output (bytes
    /// to write; HTTP exchanges to start or drop, whose responses are fed back as they
    /// come). Returns whether anything happened.
    fn poll_output(
        &mut self,
        cx: &mut Context<'_>,
        now: Instant,
        link: &Link<'_, R, Self::Conn>,
    ) -> bool;

    /// Whether more input is likely waiting behind what was just fed (the driver then lets
    /// the callers run first, so their next requests overlap the rest).
    fn input_waiting(&self) -> bool {
        false
    }

    /// Right after the driver yielded to the callers: send what they issued.
    fn after_yield(&mut self, _cx: &mut Context<'_>, _link: &Link<'_, R, Self::Conn>) {}

    /// Reads one of the connection's own events, with the state locked.
    fn observe(
        server: &str,
        event: <Self::Conn as Connection>::TransportEvent,
    ) -> Observed<<Self::Conn as Connection>::TransportEvent>;

    /// Acts on an event [`observe`](Self::observe) handed on, with the state unlocked.
    fn act(
        &mut self,
        _now: Instant,
        _event: <Self::Conn as Connection>::TransportEvent,
        _link: &Link<'_, R, Self::Conn>,
    ) {
    }

    /// After the session closed: flushes what is left and shuts the transport down. Returns
    /// whether the transport is done (the driver also waits for the connection's
    /// [`is_finished`](Connection::is_finished)).
    fn poll_shutdown(
        &mut self,
        cx: &mut Context<'_>,
        now: Instant,
        link: &Link<'_, R, Self::Conn>,
    ) -> bool;

    /// The earliest instant the I/O itself has something due (not the connection's
    /// deadlines); `closed` tells whether the session is closed.
    fn next_deadline(&self, closed: bool) -> Option<Instant>;
}

/// The driver of one connection: generic over its transport's I/O, and through it over the
/// connection type, so that the hot path (bytes in and out) is static calls.
pub(crate) struct Driver<R: Runtime, T: TransportIo<R>> {
    shared: Arc<Shared<T::Conn>>,
    runtime: R,
    io: T,
    options: DriverOptions,
    timer: Option<(Instant, BoxFuture)>,
    /// A cooperative yield in progress ([`Runtime::yield_now`]).
    yielding: Option<BoxFuture>,
    /// Room for the deliveries of one batch of events, kept between batches.
    deliveries: Vec<dispatch::Delivery>,
    /// Transport events the I/O acts on after the dispatch.
    actions: Vec<<T::Conn as Connection>::TransportEvent>,
    finished: bool,
}

impl<R: Runtime, T: TransportIo<R>> Driver<R, T> {
    pub(crate) fn new(
        shared: Arc<Shared<T::Conn>>,
        runtime: R,
        io: T,
        options: DriverOptions,
    ) -> Self {
        Driver {
            shared,
            runtime,
            io,
            options,
            timer: None,
            yielding: None,
            deliveries: Vec::new(),
            actions: Vec::new(),
            finished: false,
        }
    }

    fn server(&self) -> &str {
        &self.shared.name
    }

    /// The input half of the transport's round.
    fn poll_input(&mut self, cx: &mut Context<'_>, now: Instant) -> bool {
        let link = Link {
            shared: &self.shared,
            runtime: &self.runtime,
            options: &self.options,
        };
        self.io.poll_input(cx, now, &link)
    }

    /// The output half of the transport's round.
    fn poll_output(&mut self, cx: &mut Context<'_>, now: Instant) -> bool {
        let link = Link {
            shared: &self.shared,
            runtime: &self.runtime,
            options: &self.options,
        };
        self.io.poll_output(cx, now, &link)
    }

    /// Lets the runtime's other tasks run before this one carries on: callers woken by the
    /// last deliveries issue their next requests, which the next round writes. Returns
    /// `true` if the driver must return `Pending` now.
    fn yield_to_callers(&mut self, cx: &mut Context<'_>) -> bool {
        let mut y = self.runtime.yield_now();
        if y.as_mut().poll(cx).is_pending() {
            self.yielding = Some(y);
            return true;
        }
        false
    }

    fn handle_timeouts(&mut self, now: Instant) -> bool {
        let mut state = self.shared.lock();
        match state.core.poll_timeout() {
            Some(at) if now >= at => {
                state.core.handle_timeout(now);
                true
            }
            _ => false,
        }
    }

    /// Executes what the dispatch handed on to the transport's I/O.
    fn act(&mut self, now: Instant) {
        if self.actions.is_empty() {
            return;
        }
        let link = Link {
            shared: &self.shared,
            runtime: &self.runtime,
            options: &self.options,
        };
        for event in self.actions.drain(..) {
            self.io.act(now, event, &link);
        }
    }

    /// After the session closed: the transport's shutdown, then the connection's own
    /// closing. Returns whether the driver is done.
    fn poll_shutdown(&mut self, cx: &mut Context<'_>, now: Instant) -> bool {
        if !self.shared.lock().core.session().is_closed() {
            return false;
        }
        let link = Link {
            shared: &self.shared,
            runtime: &self.runtime,
            options: &self.options,
        };
        // The connection sends what its closing needs (an HTTP DELETE, bounded by its close
        // deadline) and then reports that it is finished.
        self.io.poll_shutdown(cx, now, &link) && self.shared.lock().core.is_finished()
    }

    /// The earliest instant something is due.
    fn next_deadline(&self) -> Option<Instant> {
        let state = self.shared.lock();
        let closed = state.core.session().is_closed();
        let next = state.core.poll_timeout();
        drop(state);
        match (next, self.io.next_deadline(closed)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn finish(&mut self) {
        // The session may have closed after this round's dispatch: deliver its last events
        // (the completions of pending calls, `Closed`) before reporting the end.
        self.dispatch_events();
        self.finished = true;
        let reason = self
            .shared
            .phase
            .borrow()
            .reason()
            .cloned()
            .unwrap_or(CloseReason::Local);
        tracing::debug!(server = self.server(), "connection finished");
        self.shared.phase.send_replace(Phase::Finished(reason));
    }
}

// The driver never pins its fields in place (the I/O objects are boxed), so moving it is fine.
impl<R: Runtime, T: TransportIo<R>> Unpin for Driver<R, T> {}

impl<R: Runtime, T: TransportIo<R>> Future for Driver<R, T> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        if let Some(y) = this.yielding.as_mut() {
            if y.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            this.yielding = None;
            // Callers ran: their requests go out before the next slice is decoded.
            let link = Link {
                shared: &this.shared,
                runtime: &this.runtime,
                options: &this.options,
            };
            this.io.after_yield(cx, &link);
        }
        for _ in 0..MAX_ROUNDS {
            let now = this.runtime.now();
            {
                let mut state = this.shared.lock();
                if !state
                    .driver
                    .as_ref()
                    .is_some_and(|w| w.will_wake(cx.waker()))
                {
                    state.driver = Some(cx.waker().clone());
                }
            }
            let mut progress = this.poll_input(cx, now);
            progress |= this.handle_timeouts(now);
            progress |= this.poll_output(cx, now);
            let delivered = this.dispatch_events();
            this.act(now);
            if this.poll_shutdown(cx, now) {
                this.finish();
                return Poll::Ready(());
            }
            // More input waits behind what was just delivered: let the callers answer first.
            if delivered && this.io.input_waiting() && this.yield_to_callers(cx) {
                return Poll::Pending;
            }
            if progress || delivered {
                continue;
            }
            // An armed timer is kept while nothing is due earlier: the earliest deadline moves
            // later with almost every request (each one's timeout starts when it is sent), and
            // a new timer per request costs an allocation, a timer-wheel insertion and, on
            // tokio, a wake-up of the reactor. A timer that fires before the real deadline
            // just makes the loop look again.
            let Some(deadline) = this.next_deadline() else {
                return Poll::Pending;
            };
            if this.runtime.now() >= deadline {
                continue;
            }
            if this.timer.as_ref().is_none_or(|(at, _)| *at > deadline) {
                this.timer = Some((deadline, this.runtime.sleep_until(deadline)));
            }
            if let Some((_, sleep)) = this.timer.as_mut()
                && sleep.as_mut().poll(cx).is_ready()
            {
                this.timer = None;
                continue;
            }
            return Poll::Pending;
        }
        // Busy: let other tasks run, then carry on.
        if !this.yield_to_callers(cx) {
            cx.waker().wake_by_ref();
        }
        Poll::Pending
    }
}

impl<R: Runtime, T: TransportIo<R>> Drop for Driver<R, T> {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        // The runtime dropped the task (it is shutting down): fail every call instead of
        // leaving it waiting forever. The child process dies with `StdioChild`'s drop.
        let now = self.runtime.now();
        self.shared
            .lock()
            .core
            .handle_transport_lost(now, Some("the connection's task was stopped".into()));
        self.finish();
    }
}
