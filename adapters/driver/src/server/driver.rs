//! The server's driver: one future per client connection that executes what the server
//! session decides, in the client driver's shape: feed the input, drain what to write, deliver
//! the events, arm one timer at `poll_timeout`.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use mcp_proto::server::{Event, MessageKind};
use mcp_proto::session::CloseReason;

use super::context::ServerHandle;
use super::handler::ServerHandler;
use super::state::Shared;
use super::tasks;
use crate::driver::{BoxRead, BoxWrite};
use crate::runtime::{BoxFuture, Runtime};

/// Bytes read per `poll_read`.
const READ_CHUNK: usize = 64 * 1024;
/// Bytes pulled from the session per write batch.
const WRITE_BATCH: usize = 64 * 1024;
/// Rounds of work per poll before yielding to other tasks.
const MAX_ROUNDS: usize = 32;
/// After the session closed, how long queued answers may take to flush.
const FLUSH_GRACE: Duration = Duration::from_millis(500);

/// Runs one server connection: poll (await) it until the client leaves or the server is
/// closed. Made by [`Server::start`](super::Server::start).
///
/// Its output is why the session closed. Dropping it before then closes the session: pending
/// requests to the client complete with a close and running handlers are cancelled.
#[must_use = "the server does nothing unless the driver is polled"]
pub struct ServerDriver<R: Runtime> {
    shared: Arc<Shared>,
    runtime: R,
    handler: Arc<dyn ServerHandler>,
    handle: ServerHandle,
    reader: Option<BoxRead>,
    writer: Option<BoxWrite>,
    read_buf: Vec<u8>,
    out: Vec<u8>,
    out_pos: usize,
    needs_flush: bool,
    /// The input ended at a time when handlers were running: the session is told once they
    /// are done or at this deadline, so their answers still go out.
    eof: Option<(Instant, String)>,
    eof_grace: Duration,
    flush_deadline: Option<Instant>,
    timer: Option<(Instant, BoxFuture)>,
    finished: bool,
}

impl<R: Runtime> ServerDriver<R> {
    pub(crate) fn new(
        shared: Arc<Shared>,
        runtime: R,
        handler: Arc<dyn ServerHandler>,
        reader: BoxRead,
        writer: BoxWrite,
        eof_grace: Duration,
    ) -> Self {
        let handle = ServerHandle {
            shared: shared.clone(),
            slot: None,
        };
        ServerDriver {
            shared,
            runtime,
            handler,
            handle,
            reader: Some(reader),
            writer: Some(writer),
            read_buf: vec![0; READ_CHUNK],
            out: Vec::new(),
            out_pos: 0,
            needs_flush: false,
            eof: None,
            eof_grace,
            flush_deadline: None,
            timer: None,
            finished: false,
        }
    }

    /// The handle on this server (the same one [`Server::start`](super::Server::start) gave).
    #[must_use]
    pub fn handle(&self) -> &ServerHandle {
        &self.handle
    }

    /// Reads once and feeds the session. Returns whether anything happened.
    fn poll_read(&mut self, cx: &mut Context<'_>, now: Instant) -> bool {
        let Some(reader) = self.reader.as_mut() else {
            return false;
        };
        match reader.as_mut().poll_read(cx, &mut self.read_buf) {
            Poll::Ready(Ok(0)) => self.input_ended(now, "the client closed its output".into()),
            Poll::Ready(Ok(n)) => {
                let mut state = self.shared.lock();
                state.stdio().handle_bytes(now, &self.read_buf[..n]);
            }
            Poll::Ready(Err(e)) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Poll::Ready(Err(e)) => self.input_ended(now, format!("reading failed: {e}")),
            Poll::Pending => return false,
        }
        true
    }

    fn input_ended(&mut self, now: Instant, detail: String) {
        self.reader = None;
        let deadline = now.checked_add(self.eof_grace).unwrap_or(now);
        self.eof = Some((deadline, detail));
    }

    /// Tells the session the input ended, once the running handlers are done or the grace
    /// period is over (a client that pipes requests and closes its end still gets answers).
    fn check_eof(&mut self, now: Instant) -> bool {
        let Some((deadline, _)) = &self.eof else {
            return false;
        };
        // Closing the session drops what it still queues: the answers of the handlers that
        // finished must be written first (`poll_write` returns with everything written and
        // flushed only once the session's queue is empty).
        let unwritten = self.out_pos < self.out.len() || self.needs_flush;
        let mut state = self.shared.lock();
        if !unwritten && self.writer.is_some() {
            // A handler may have answered since the write: pull it under this lock, so the
            // check below cannot miss it.
            self.out.clear();
            self.out_pos = 0;
            // One message is enough to know: `poll_write` takes the rest by its own rules.
            let _ = state.stdio().poll_transmit(&mut self.out);
        }
        let pulled = !unwritten && !self.out.is_empty();
        let running = state.tasks(None).is_some_and(|t| !t.running.is_empty());
        let waiting = (running || unwritten || pulled) && self.writer.is_some();
        if waiting && now < *deadline {
            // Pulled bytes are new work for `poll_write`; otherwise wait for a wake-up.
            return pulled;
        }
        // Set just above; taken once.
        let (_, detail) = self.eof.take().expect("checked above");
        state.stdio().handle_eof(now, Some(detail));
        true
    }

    fn handle_timeouts(&mut self, now: Instant) -> bool {
        let mut state = self.shared.lock();
        match state.stdio().poll_timeout() {
            Some(at) if now >= at => {
                state.stdio().handle_timeout(now);
                true
            }
            _ => false,
        }
    }

    /// Writes what the session has to send. A batch ends after a progress notification and
    /// is flushed before the next is pulled, so progress never shares a flush with the answer
    /// queued after it (the TypeScript SDK's client drops progress that arrives in the same
    /// read as its request's answer).
    fn poll_write(&mut self, cx: &mut Context<'_>) -> bool {
        let mut any = false;
        loop {
            if self.out_pos == self.out.len() {
                if self.needs_flush {
                    let Some(writer) = self.writer.as_mut() else {
                        self.needs_flush = false;
                        continue;
                    };
                    match writer.as_mut().poll_flush(cx) {
                        Poll::Ready(Ok(())) => self.needs_flush = false,
                        Poll::Ready(Err(e)) => self.write_failed(&e),
                        Poll::Pending => return any,
                    }
                }
                self.out.clear();
                self.out_pos = 0;
                let mut state = self.shared.lock();
                while self.out.len() < WRITE_BATCH {
                    match state.stdio().poll_transmit(&mut self.out) {
                        Some(o) => {
                            tracing::trace!(kind = ?o.kind, method = o.method.as_deref(), "send");
                            if o.kind == MessageKind::Notification
                                && o.method.as_deref() == Some("notifications/progress")
                            {
                                break;
                            }
                        }
                        None => break,
                    }
                }
                drop(state);
                if self.out.is_empty() {
                    return any;
                }
                any = true;
            }
            let Some(writer) = self.writer.as_mut() else {
                // The client's input is gone: nothing more can reach it.
                self.out_pos = self.out.len();
                continue;
            };
            match writer.as_mut().poll_write(cx, &self.out[self.out_pos..]) {
                Poll::Ready(Ok(0)) => {
                    self.write_failed(&std::io::Error::from(std::io::ErrorKind::WriteZero));
                }
                Poll::Ready(Ok(n)) => {
                    self.out_pos += n;
                    self.needs_flush = true;
                    any = true;
                }
                Poll::Ready(Err(e)) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Poll::Ready(Err(e)) => self.write_failed(&e),
                Poll::Pending => return any,
            }
        }
    }

    /// The client stopped reading: nobody can receive an answer, so the session ends now
    /// (running handlers are cancelled).
    fn write_failed(&mut self, error: &std::io::Error) {
        self.writer = None;
        self.out_pos = self.out.len();
        self.needs_flush = false;
        let now = self.runtime.now();
        let mut state = self.shared.lock();
        if !state.stdio().is_closed() {
            state
                .stdio()
                .session_mut()
                .handle_transport_closed(now, Some(format!("writing failed: {error}")));
        }
    }

    /// Delivers the session's events: requests to handler tasks, cancellations to them,
    /// completions to the waiting callers.
    fn dispatch_events(&mut self) -> bool {
        let mut events = Vec::new();
        {
            let mut state = self.shared.lock();
            while let Some(event) = state.stdio().poll_event() {
                events.push(event);
            }
        }
        let any = !events.is_empty();
        for event in events {
            tasks::dispatch(&self.runtime, &self.handler, &self.handle, event);
        }
        any
    }

    /// After the session closed: flush what was queued (bounded by [`FLUSH_GRACE`]), close
    /// the output. Returns whether the driver is done.
    fn poll_shutdown(&mut self, cx: &mut Context<'_>, now: Instant) -> bool {
        if self
            .shared
            .lock()
            .tasks(None)
            .is_some_and(|t| t.closed.is_none())
        {
            return false;
        }
        let deadline = *self.flush_deadline.get_or_insert(now + FLUSH_GRACE);
        self.poll_write(cx);
        let pending = self.out_pos < self.out.len() || self.needs_flush;
        if pending && self.writer.is_some() && now < deadline {
            return false;
        }
        if let Some(w) = self.writer.as_mut()
            && w.as_mut().poll_close(cx).is_pending()
            && now < deadline
        {
            return false;
        }
        self.writer = None;
        self.reader = None;
        true
    }

    fn next_deadline(&self) -> Option<Instant> {
        let mut state = self.shared.lock();
        [
            state.stdio().poll_timeout(),
            self.eof.as_ref().map(|(at, _)| *at),
            self.flush_deadline,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    fn register_waker(&mut self, cx: &Context<'_>) {
        let mut state = self.shared.lock();
        if !state
            .driver
            .as_ref()
            .is_some_and(|w| w.will_wake(cx.waker()))
        {
            state.driver = Some(cx.waker().clone());
        }
    }
}

// The driver never pins its fields in place (the I/O objects are boxed), so moving it is fine.
impl<R: Runtime> Unpin for ServerDriver<R> {}

impl<R: Runtime> Future for ServerDriver<R> {
    type Output = CloseReason;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<CloseReason> {
        let this = self.get_mut();
        for _ in 0..MAX_ROUNDS {
            let now = this.runtime.now();
            this.register_waker(cx);
            let mut progress = this.poll_read(cx, now);
            progress |= this.handle_timeouts(now);
            progress |= this.dispatch_events();
            progress |= this.poll_write(cx);
            // After the write: what finished handlers answered is out before the session ends.
            progress |= this.check_eof(now);
            progress |= this.dispatch_events();
            if this.poll_shutdown(cx, now) {
                this.finished = true;
                let reason = this
                    .shared
                    .lock()
                    .tasks(None)
                    .and_then(|t| t.closed.clone());
                // `poll_shutdown` returns true only once `closed` is set.
                return Poll::Ready(reason.unwrap_or(CloseReason::Local));
            }
            if progress {
                continue;
            }
            let Some(deadline) = this.next_deadline() else {
                return Poll::Pending;
            };
            if this.runtime.now() >= deadline {
                continue;
            }
            // An armed timer is kept while nothing is due earlier: the earliest deadline
            // moves later with almost every request (an idle timeout restarts after each
            // exchange), and a new timer per request costs an allocation and a timer-wheel
            // insertion. A timer that fires before the real deadline just makes the loop
            // look again.
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
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

impl<R: Runtime> Drop for ServerDriver<R> {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        // Stopped before the end: complete every pending request and stop every handler
        // rather than leave them waiting forever.
        let now = self.runtime.now();
        let mut state = self.shared.lock();
        state.stdio().close(now);
        let mut completed = Vec::new();
        while let Some(event) = state.stdio().poll_event() {
            if let Event::Completed { handle, result } = event {
                completed.push((handle, result));
            }
        }
        if let Some(tasks) = state.tasks(None) {
            for (handle, result) in completed {
                if let Some(tx) = tasks.waiters.remove(&handle) {
                    let _ = tx.send(result);
                }
            }
            tasks.close(CloseReason::Local);
        }
    }
}
