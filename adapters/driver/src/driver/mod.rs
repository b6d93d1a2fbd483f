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

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use mcp_proto::session::CloseReason;
use mcp_proto::stdio::StdioAction;
#[cfg(unix)]
use mcp_proto::stdio::shutdown::{ShutdownAction, ShutdownConfig, ShutdownSchedule};

#[cfg(feature = "http")]
pub(crate) use http::{HttpIo, trace_http_event};
#[cfg(unix)]
pub(crate) use io::StdioIo;
pub(crate) use io::{BoxRead, BoxWrite, StreamIo, Transport};

use crate::error::ExitInfo;
use crate::handler::Handlers;
use crate::runtime::{BoxFuture, Runtime};
use crate::shared::{Core, Phase, Shared};

/// Bytes pulled from the core per write batch.
const WRITE_BATCH: usize = 64 * 1024;
/// Bytes read per `poll_read`.
const READ_CHUNK: usize = 64 * 1024;
/// Bytes of input fed to the core per round (cut after a line end). A batch of answers is
/// delivered a slice at a time, with a yield to the callers in between, so that their next
/// requests reach the server while the rest of the batch is decoded: client and server then
/// work at the same time instead of taking turns over whole batches.
const FEED_SLICE: usize = 8 * 1024;
/// Rounds of work per poll before yielding to other tasks.
const MAX_ROUNDS: usize = 32;
/// After the session closed, how long queued messages (a cancellation) may take to flush
/// before the transport is shut down regardless.
pub(crate) const FLUSH_GRACE: Duration = Duration::from_millis(500);
/// After a stdio server's stdout ended (or it exited), how long to wait for the other half
/// so that the error can carry the exit status.
const EXIT_WAIT: Duration = Duration::from_millis(500);
/// Once both stdout EOF and the exit are known, a moment for the last stderr lines to land.
const STDERR_SETTLE: Duration = Duration::from_millis(50);

/// Options the driver executes.
#[derive(Clone)]
pub(crate) struct DriverOptions {
    pub(crate) handlers: Handlers,
    #[cfg(unix)]
    pub(crate) shutdown: ShutdownConfig,
    pub(crate) stderr_lines: usize,
    pub(crate) wire: Option<crate::options::WireTap>,
}

/// Why the transport ended, before the core has been told.
struct Ending {
    /// When the core is told at the latest.
    deadline: Instant,
    detail: String,
}

pub(crate) struct Driver<R: Runtime> {
    shared: Arc<Shared>,
    runtime: R,
    io: Transport<R>,
    options: DriverOptions,
    read_buf: Vec<u8>,
    /// `read_buf[read_pos..read_len]` is read but not yet fed to the core.
    read_pos: usize,
    read_len: usize,
    /// The last read filled `read_buf`: more input is likely waiting.
    read_full: bool,
    out: Vec<u8>,
    out_pos: usize,
    needs_flush: bool,
    /// The stream (or the child) ended; the core is told at `deadline`.
    ending: Option<Ending>,
    stdout_eof: bool,
    flush_deadline: Option<Instant>,
    timer: Option<(Instant, BoxFuture)>,
    /// A cooperative yield in progress ([`Runtime::yield_now`]).
    yielding: Option<BoxFuture>,
    /// Room for the deliveries of one batch of events, kept between batches.
    deliveries: Vec<dispatch::Delivery>,
    finished: bool,
}

impl<R: Runtime> Driver<R> {
    pub(crate) fn new(
        shared: Arc<Shared>,
        runtime: R,
        io: Transport<R>,
        options: DriverOptions,
    ) -> Self {
        Driver {
            shared,
            runtime,
            io,
            options,
            read_buf: vec![0; READ_CHUNK],
            read_pos: 0,
            read_len: 0,
            read_full: false,
            out: Vec::new(),
            out_pos: 0,
            needs_flush: false,
            ending: None,
            stdout_eof: false,
            flush_deadline: None,
            timer: None,
            yielding: None,
            deliveries: Vec::new(),
            finished: false,
        }
    }

    fn server(&self) -> &str {
        &self.shared.name
    }

    /// Feeds the core one slice of the input, reading more once what was read is used up.
    ///
    /// A read takes up to `READ_CHUNK` bytes; they are fed in slices of about `FEED_SLICE`
    /// bytes, cut after a line end, one slice per round, so that the answers of one slice
    /// reach their callers (see [`Driver::poll`]) before the next slice is decoded.
    #[cfg_attr(not(feature = "http"), allow(irrefutable_let_patterns))]
    fn poll_read(&mut self, cx: &mut Context<'_>, now: Instant) -> bool {
        for _ in 0..4 {
            if self.read_pos < self.read_len {
                let end = self.slice_end();
                let mut state = self.shared.lock();
                if let Core::Lines(c) = &mut state.core {
                    c.handle_bytes(now, &self.read_buf[self.read_pos..end]);
                }
                self.read_pos = end;
                return true;
            }
            let Some(Some(reader)) = self.io.reader() else {
                return false;
            };
            match reader.as_mut().poll_read(cx, &mut self.read_buf) {
                Poll::Ready(Ok(0)) => {
                    self.drop_reader();
                    self.stdout_eof = true;
                    self.transport_ending(now, "closed its output".into());
                    return true;
                }
                Poll::Ready(Ok(n)) => {
                    if let Some(tap) = &self.options.wire {
                        tap(crate::options::WireDirection::Received, &self.read_buf[..n]);
                    }
                    self.read_pos = 0;
                    self.read_len = n;
                    self.read_full = n == self.read_buf.len();
                }
                Poll::Ready(Err(e)) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Poll::Ready(Err(e)) => {
                    self.drop_reader();
                    self.stdout_eof = true;
                    self.transport_ending(now, format!("reading failed: {e}"));
                    return true;
                }
                Poll::Pending => return false,
            }
        }
        // Interrupted again and again: come back after the other work.
        cx.waker().wake_by_ref();
        false
    }

    /// Where the next slice of the unfed input ends: after the last line end within
    /// `FEED_SLICE` bytes, or, inside a line longer than that, at the end of that line (no
    /// answer is complete before it).
    fn slice_end(&self) -> usize {
        let rest = &self.read_buf[self.read_pos..self.read_len];
        if rest.len() <= FEED_SLICE {
            return self.read_len;
        }
        let cut = match memchr::memrchr(b'\n', &rest[..FEED_SLICE]) {
            Some(i) => i + 1,
            None => memchr::memchr(b'\n', &rest[FEED_SLICE..])
                .map_or(rest.len(), |i| FEED_SLICE + i + 1),
        };
        self.read_pos + cut
    }

    /// Whether input may be waiting: unfed bytes of the last read, or a read that filled the
    /// whole buffer (the stream likely holds more).
    fn input_waiting(&self) -> bool {
        self.read_pos < self.read_len || self.read_full
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

    fn drop_reader(&mut self) {
        if let Some(r) = self.io.reader() {
            *r = None;
        }
    }

    fn drop_writer(&mut self) {
        if let Some(w) = self.io.writer() {
            *w = None;
        }
    }

    fn has_writer(&mut self) -> bool {
        self.io.writer().is_some_and(|w| w.is_some())
    }

    /// Runs the HTTP exchanges of an HTTP connection.
    #[cfg(feature = "http")]
    fn poll_http(&mut self, cx: &mut Context<'_>, now: Instant) -> bool {
        let Transport::Http(io) = &mut self.io else {
            return false;
        };
        let shared = &self.shared;
        io.poll(cx, now, &shared.name, |f| {
            let mut state = shared.lock();
            if let Core::Http(c) = &mut state.core {
                f(c);
            }
        })
    }

    #[cfg(not(feature = "http"))]
    fn poll_http(&mut self, _cx: &mut Context<'_>, _now: Instant) -> bool {
        false
    }

    /// Notes that the transport is ending; the core is told at once for a byte stream, and
    /// after the exit status is known (or `EXIT_WAIT`) for a child.
    fn transport_ending(&mut self, now: Instant, detail: String) {
        let wait = match &self.io {
            Transport::Stream(_) => Duration::ZERO,
            #[cfg(unix)]
            Transport::Stdio(_) => EXIT_WAIT,
            #[cfg(feature = "http")]
            Transport::Http(_) => Duration::ZERO,
            Transport::_Never(n, _) => match *n {},
        };
        if self.ending.is_none() {
            self.ending = Some(Ending {
                deadline: now + wait,
                detail,
            });
        }
    }

    /// Polls a stdio child for its exit.
    #[cfg(unix)]
    fn poll_child(&mut self, cx: &mut Context<'_>, now: Instant) -> bool {
        let Transport::Stdio(s) = &mut self.io else {
            return false;
        };
        if s.status.is_some() {
            return false;
        }
        match s.child.poll_wait(cx) {
            Poll::Ready(Ok(status)) => {
                s.status = Some(status);
                self.transport_ending(now, crate::process::describe_exit(status));
                true
            }
            Poll::Ready(Err(e)) => {
                tracing::warn!(server = &*self.shared.name, error = %e, "waiting for the server process failed");
                // Nothing more can be learned about the exit; treat the wait as done.
                s.status = Some(std::os::unix::process::ExitStatusExt::from_raw(0));
                self.transport_ending(now, format!("could not be waited for: {e}"));
                true
            }
            Poll::Pending => false,
        }
    }

    #[cfg(not(unix))]
    fn poll_child(&mut self, _cx: &mut Context<'_>, _now: Instant) -> bool {
        false
    }

    /// Tells the core the transport ended, once it is time.
    fn check_ending(&mut self, now: Instant) -> bool {
        let Some(ending) = &mut self.ending else {
            return false;
        };
        if self.shared.lock().core.session().is_closed() {
            return false;
        }
        #[cfg(unix)]
        if let Transport::Stdio(s) = &self.io
            && s.status.is_some()
            && self.stdout_eof
        {
            ending.deadline = ending.deadline.min(now + STDERR_SETTLE);
        }
        if now < ending.deadline {
            return false;
        }
        let mut detail = ending.detail.clone();
        let mut exit = None;
        #[cfg(unix)]
        if let Transport::Stdio(s) = &self.io {
            let status = match s.status {
                Some(st) => crate::process::describe_exit(st),
                None => detail.clone(),
            };
            let stderr = s.child.last_stderr_lines(self.options.stderr_lines);
            detail = if stderr.is_empty() {
                status.clone()
            } else {
                format!("{status}: {}", stderr.join("\n"))
            };
            exit = Some(ExitInfo { status, stderr });
        }
        tracing::debug!(server = self.server(), "transport ended: {detail}");
        let mut state = self.shared.lock();
        state.exit = exit;
        let respawn = match &mut state.core {
            Core::Lines(c) => {
                c.handle_eof(now, Some(detail.clone()));
                matches!(c.poll_action(), Some(StdioAction::Respawn))
            }
            #[cfg(feature = "http")]
            Core::Http(c) => {
                c.session_mut()
                    .handle_transport_closed(now, Some(detail.clone()));
                false
            }
        };
        drop(state);
        if respawn {
            self.respawn(now, detail);
        }
        true
    }

    /// Executes [`StdioAction::Respawn`]: the server exited on the era probe, so the old
    /// child is killed and reaped (its drop does both, as at the end of a shutdown), the same
    /// command is started again, and the core is told to resume on the new pipes.
    fn respawn(&mut self, now: Instant, detail: String) {
        let outcome = match &mut self.io {
            #[cfg(unix)]
            Transport::Stdio(s) => {
                match crate::process::StdioChild::spawn(
                    &self.runtime,
                    &s.spec,
                    self.shared.name.clone(),
                    s.tail,
                ) {
                    Ok((child, pipes)) => {
                        tracing::debug!(
                            server = &*self.shared.name,
                            "the server exited on the era probe ({detail}); started it again"
                        );
                        s.child = child;
                        s.reader = Some(pipes.stdout);
                        s.writer = Some(pipes.stdin);
                        s.status = None;
                        Ok(())
                    }
                    Err(e) => Err(format!(
                        "{detail}; starting it again after the era probe failed: {e}"
                    )),
                }
            }
            // A caller's stream cannot be reopened.
            _ => Err(detail),
        };
        let mut guard = self.shared.lock();
        let state = &mut *guard;
        // Only a line transport asks to respawn; without the `http` feature no other core
        // exists and the pattern cannot fail.
        #[cfg_attr(not(feature = "http"), allow(irrefutable_let_patterns))]
        let Core::Lines(c) = &mut state.core else {
            return;
        };
        match outcome {
            Ok(()) => {
                // Whatever was half-written or not yet fed belonged to the old process.
                self.out.clear();
                self.out_pos = 0;
                self.read_pos = 0;
                self.read_len = 0;
                self.read_full = false;
                self.needs_flush = false;
                self.ending = None;
                self.stdout_eof = false;
                state.exit = None;
                c.handle_respawned(now);
            }
            Err(detail) => {
                c.handle_respawned(now);
                c.session_mut().handle_transport_closed(now, Some(detail));
            }
        }
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

    /// Writes what the core has to send, pulling more only when the last batch is written.
    #[cfg_attr(not(feature = "http"), allow(irrefutable_let_patterns))]
    fn poll_write(&mut self, cx: &mut Context<'_>) -> bool {
        let mut any = false;
        loop {
            if self.out_pos == self.out.len() {
                self.out.clear();
                self.out_pos = 0;
                let mut state = self.shared.lock();
                let Core::Lines(c) = &mut state.core else {
                    break;
                };
                while self.out.len() < WRITE_BATCH {
                    let start = self.out.len();
                    match c.poll_transmit(&mut self.out) {
                        Some(o) => {
                            if let Some(tap) = &self.options.wire {
                                tap(crate::options::WireDirection::Sent, &self.out[start..]);
                            }
                            tracing::trace!(server = &*self.shared.name, kind = ?o.kind, method = o.method.as_deref(), request = ?o.request.map(|h| h.get()), "send");
                        }
                        None => break,
                    }
                }
                drop(state);
                if self.out.is_empty() {
                    break;
                }
                any = true;
            }
            let Some(Some(writer)) = self.io.writer() else {
                // The write side is gone: what the core still sends cannot reach the peer.
                self.out_pos = self.out.len();
                continue;
            };
            match writer.as_mut().poll_write(cx, &self.out[self.out_pos..]) {
                Poll::Ready(Ok(0)) => self.write_failed("the stream accepted no bytes".into()),
                Poll::Ready(Ok(n)) => {
                    self.out_pos += n;
                    self.needs_flush = true;
                    any = true;
                }
                Poll::Ready(Err(e)) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Poll::Ready(Err(e)) => self.write_failed(format!("writing failed: {e}")),
                Poll::Pending => return any,
            }
        }
        if self.needs_flush
            && let Some(Some(writer)) = self.io.writer()
        {
            match writer.as_mut().poll_flush(cx) {
                Poll::Ready(Ok(())) => self.needs_flush = false,
                Poll::Ready(Err(e)) => self.write_failed(format!("flushing failed: {e}")),
                Poll::Pending => {}
            }
        }
        any
    }

    fn write_failed(&mut self, detail: String) {
        self.drop_writer();
        self.out_pos = self.out.len();
        self.needs_flush = false;
        let now = self.runtime.now();
        self.transport_ending(now, detail);
    }

    fn writes_pending(&self) -> bool {
        self.out_pos < self.out.len() || self.needs_flush
    }

    /// After the session closed: flush, then shut the transport down. Returns whether the
    /// driver is done.
    fn poll_shutdown(&mut self, cx: &mut Context<'_>, now: Instant) -> bool {
        if !self.shared.lock().core.session().is_closed() {
            return false;
        }
        let flush_deadline = *self.flush_deadline.get_or_insert(now + FLUSH_GRACE);
        // The session may have closed (on another thread) after this round's write: pull
        // what it queued (cancellations) before deciding that everything is flushed.
        self.poll_write(cx);
        let flushing = self.writes_pending() && self.has_writer();
        if flushing && now < flush_deadline {
            return false;
        }
        match &mut self.io {
            Transport::Stream(s) => {
                if let Some(w) = s.writer.as_mut()
                    && w.as_mut().poll_close(cx).is_pending()
                    && now < flush_deadline + FLUSH_GRACE
                {
                    return false;
                }
                s.writer = None;
                s.reader = None;
                true
            }
            #[cfg(unix)]
            Transport::Stdio(s) => {
                let schedule = s
                    .schedule
                    .get_or_insert_with(|| ShutdownSchedule::new(self.options.shutdown, now));
                loop {
                    if let Some(at) = schedule.poll_timeout()
                        && now >= at
                    {
                        schedule.handle_timeout(now);
                    }
                    if s.status.is_none()
                        && let Poll::Ready(r) = s.child.poll_wait(cx)
                    {
                        s.status = Some(r.unwrap_or_else(|e| {
                            tracing::warn!(server = &*self.shared.name, error = %e, "waiting for the server process failed");
                            std::os::unix::process::ExitStatusExt::from_raw(0)
                        }));
                    }
                    if s.status.is_some() {
                        schedule.handle_child_exited(now);
                    }
                    let mut acted = false;
                    while let Some(action) = schedule.poll_action() {
                        acted = true;
                        tracing::debug!(server = &*self.shared.name, ?action, "shutdown");
                        let signal = match action {
                            ShutdownAction::CloseStdin => {
                                s.writer = None;
                                continue;
                            }
                            ShutdownAction::TerminateGroup => crate::process::Signal::Term,
                            ShutdownAction::KillGroup => crate::process::Signal::Kill,
                            _ => continue,
                        };
                        if let Err(e) = s.child.signal(signal) {
                            tracing::warn!(server = &*self.shared.name, error = %e, ?signal, "could not signal the server's process group");
                        }
                    }
                    if !acted {
                        break;
                    }
                }
                schedule.is_done()
            }
            // The connection sends the DELETE (bounded by its close deadline) and then
            // reports that it is finished.
            #[cfg(feature = "http")]
            Transport::Http(_) => match &self.shared.lock().core {
                Core::Http(c) => c.is_finished(),
                _ => true,
            },
            Transport::_Never(n, _) => match *n {},
        }
    }

    /// The earliest instant something is due.
    fn next_deadline(&self) -> Option<Instant> {
        let state = self.shared.lock();
        let session = state.core.session();
        let mut next = state.core.poll_timeout();
        let mut consider = |t: Option<Instant>| {
            if let Some(t) = t {
                next = Some(next.map_or(t, |n| n.min(t)));
            }
        };
        if !session.is_closed() {
            consider(self.ending.as_ref().map(|e| e.deadline));
        } else {
            consider(self.flush_deadline.map(|f| {
                if self.writes_pending() {
                    f
                } else {
                    f + FLUSH_GRACE
                }
            }));
        }
        #[cfg(unix)]
        if let Transport::Stdio(s) = &self.io {
            consider(s.schedule.as_ref().and_then(ShutdownSchedule::poll_timeout));
        }
        next
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
impl<R: Runtime> Unpin for Driver<R> {}

impl<R: Runtime> Future for Driver<R> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        if let Some(y) = this.yielding.as_mut() {
            if y.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            this.yielding = None;
            // Callers ran: their requests go out before the next slice is decoded.
            this.poll_write(cx);
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
            let mut progress = this.poll_read(cx, now);
            progress |= this.poll_child(cx, now);
            progress |= this.check_ending(now);
            progress |= this.handle_timeouts(now);
            progress |= this.poll_http(cx, now);
            progress |= this.poll_write(cx);
            let delivered = this.dispatch_events();
            if this.poll_shutdown(cx, now) {
                this.finish();
                return Poll::Ready(());
            }
            // More input waits behind what was just delivered: let the callers answer first.
            if delivered && this.input_waiting() && this.yield_to_callers(cx) {
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

impl<R: Runtime> Drop for Driver<R> {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        // The runtime dropped the task (it is shutting down): fail every call instead of
        // leaving it waiting forever. The child process dies with `StdioChild`'s drop.
        let now = self.runtime.now();
        {
            let mut state = self.shared.lock();
            state
                .core
                .session_mut()
                .handle_transport_closed(now, Some("the connection's task was stopped".into()));
        }
        self.finish();
    }
}
