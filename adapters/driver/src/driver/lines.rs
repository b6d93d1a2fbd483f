//! The I/O of a line connection ([`StdioConnection`]): a byte stream read and written, or a
//! child process, whose end, exit, respawn and shutdown schedule it executes.
//!
//! **Backpressure.** Bytes are pulled from the core only when the previous batch has been
//! written completely, so at most one batch (`WRITE_BATCH` bytes, or one message if larger) is
//! ever buffered here; the rest waits in the core's bounded queues. Reading is polled
//! independently of writing, so a slow writer never stops responses from being read.
//!
//! **Overlap.** Input is fed to the core a slice at a time (`FEED_SLICE`, cut after a line
//! end); [`TransportIo::input_waiting`] tells the driver to yield to the callers between
//! slices.

use std::task::{Context, Poll};
use std::time::{Duration, Instant};

#[cfg(unix)]
use mcp_proto::stdio::shutdown::{ShutdownAction, ShutdownSchedule};
use mcp_proto::stdio::{StdioConnection, StdioEvent};

use super::io::ByteStream;
use super::{FLUSH_GRACE, Link, Observed, TransportIo};
use crate::error::ExitInfo;
use crate::runtime::Runtime;

/// Bytes pulled from the core per write batch.
const WRITE_BATCH: usize = 64 * 1024;
/// Bytes read per `poll_read`.
const READ_CHUNK: usize = 64 * 1024;
/// Bytes of input fed to the core per round (cut after a line end). A batch of answers is
/// delivered a slice at a time, with a yield to the callers in between, so that their next
/// requests reach the server while the rest of the batch is decoded: client and server then
/// work at the same time instead of taking turns over whole batches.
const FEED_SLICE: usize = 8 * 1024;
/// After a stdio server's stdout ended (or it exited), how long to wait for the other half
/// so that the error can carry the exit status.
const EXIT_WAIT: Duration = Duration::from_millis(500);
/// Once both stdout EOF and the exit are known, a moment for the last stderr lines to land.
const STDERR_SETTLE: Duration = Duration::from_millis(50);

/// Why the transport ended, before the core has been told.
struct Ending {
    /// When the core is told at the latest.
    deadline: Instant,
    detail: String,
}

type Lines<'a, R> = Link<'a, R, StdioConnection>;

/// The byte stream of a line connection and its buffers.
pub(crate) struct LinesIo<R: Runtime> {
    stream: ByteStream<R>,
    read_buf: Vec<u8>,
    /// `read_buf[read_pos..read_len]` is read but not yet fed to the core.
    read_pos: usize,
    read_len: usize,
    /// The last read filled `read_buf`: more input is likely waiting.
    read_full: bool,
    out: Vec<u8>,
    out_pos: usize,
    /// Bytes written to the stream (to the current process of a child: a respawn restarts
    /// the count), to tell whether a child that exited read any of them.
    written: u64,
    needs_flush: bool,
    /// The stream (or the child) ended; the core is told at `deadline`.
    ending: Option<Ending>,
    stdout_eof: bool,
    /// What the core was told of the last end (for the log line of a respawn).
    ended: Option<String>,
    flush_deadline: Option<Instant>,
}

impl<R: Runtime> LinesIo<R> {
    pub(crate) fn new(stream: ByteStream<R>) -> Self {
        LinesIo {
            stream,
            read_buf: vec![0; READ_CHUNK],
            read_pos: 0,
            read_len: 0,
            read_full: false,
            out: Vec::new(),
            out_pos: 0,
            written: 0,
            needs_flush: false,
            ending: None,
            stdout_eof: false,
            ended: None,
            flush_deadline: None,
        }
    }

    /// Feeds the core one slice of the input, reading more once what was read is used up.
    ///
    /// A read takes up to `READ_CHUNK` bytes; they are fed in slices of about `FEED_SLICE`
    /// bytes, cut after a line end, one slice per round, so that the answers of one slice
    /// reach their callers (see the driver's `poll`) before the next slice is decoded.
    fn poll_read(&mut self, cx: &mut Context<'_>, now: Instant, link: &Lines<'_, R>) -> bool {
        for _ in 0..4 {
            if self.read_pos < self.read_len {
                let end = self.slice_end();
                link.shared
                    .lock()
                    .core
                    .handle_bytes(now, &self.read_buf[self.read_pos..end]);
                self.read_pos = end;
                return true;
            }
            let Some(reader) = self.stream.reader() else {
                return false;
            };
            match reader.as_mut().poll_read(cx, &mut self.read_buf) {
                Poll::Ready(Ok(0)) => {
                    *self.stream.reader() = None;
                    self.stdout_eof = true;
                    self.transport_ending(now, "closed its output".into());
                    return true;
                }
                Poll::Ready(Ok(n)) => {
                    if let Some(tap) = &link.options.wire {
                        tap(crate::options::WireDirection::Received, &self.read_buf[..n]);
                    }
                    self.read_pos = 0;
                    self.read_len = n;
                    self.read_full = n == self.read_buf.len();
                }
                Poll::Ready(Err(e)) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Poll::Ready(Err(e)) => {
                    *self.stream.reader() = None;
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

    /// Notes that the transport is ending; the core is told at once for a byte stream, and
    /// after the exit status is known (or `EXIT_WAIT`) for a child.
    fn transport_ending(&mut self, now: Instant, detail: String) {
        let wait = match &self.stream {
            ByteStream::Stream(_) => Duration::ZERO,
            #[cfg(unix)]
            ByteStream::Stdio(_) => EXIT_WAIT,
            ByteStream::_Never(n, _) => match *n {},
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
    fn poll_child(&mut self, cx: &mut Context<'_>, now: Instant, link: &Lines<'_, R>) -> bool {
        let ByteStream::Stdio(s) = &mut self.stream else {
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
                tracing::warn!(server = link.server(), error = %e, "waiting for the server process failed");
                // Nothing more can be learned about the exit; treat the wait as done.
                s.status = Some(std::os::unix::process::ExitStatusExt::from_raw(0));
                self.transport_ending(now, format!("could not be waited for: {e}"));
                true
            }
            Poll::Pending => false,
        }
    }

    #[cfg(not(unix))]
    fn poll_child(&mut self, _cx: &mut Context<'_>, _now: Instant, _link: &Lines<'_, R>) -> bool {
        false
    }

    /// Tells the core the transport ended, once it is time. A respawn it asks for in return
    /// comes out of its events ([`StdioEvent::Respawn`]) and is executed by `act`.
    fn check_ending(&mut self, now: Instant, link: &Lines<'_, R>) -> bool {
        let Some(ending) = &mut self.ending else {
            return false;
        };
        if link.shared.lock().core.session().is_closed() {
            return false;
        }
        #[cfg(unix)]
        if let ByteStream::Stdio(s) = &self.stream
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
        let read_nothing = self.read_nothing();
        #[cfg(unix)]
        if let ByteStream::Stdio(s) = &self.stream {
            let status = match s.status {
                Some(st) => crate::process::describe_exit(st),
                None => detail.clone(),
            };
            let stderr = s.child.last_stderr_lines(link.options.stderr_lines);
            detail = if stderr.is_empty() {
                status.clone()
            } else {
                format!("{status}: {}", stderr.join("\n"))
            };
            exit = Some(ExitInfo { status, stderr });
        }
        tracing::debug!(server = link.server(), "transport ended: {detail}");
        // Told once: a respawn starts a fresh ending for the new process.
        self.ending = None;
        let mut state = link.shared.lock();
        state.exit = exit;
        if read_nothing {
            state.core.handle_eof_unread(now, Some(detail.clone()));
        } else {
            state.core.handle_eof(now, Some(detail.clone()));
        }
        self.ended = Some(detail);
        true
    }

    /// Whether the child that ended read none of its input: nothing was written to it (it
    /// exited first, or every write failed), or all that was written is still in the pipe.
    /// Never for a caller's stream, nor when the pipe cannot tell (its stdin closed after a
    /// failed write, a runtime without the duplicate, a system without `FIONREAD` on a
    /// write end): the child is then taken to have read its input.
    fn read_nothing(&self) -> bool {
        match &self.stream {
            #[cfg(unix)]
            ByteStream::Stdio(s) => self.written == 0 || s.unread.bytes() == Some(self.written),
            _ => false,
        }
    }

    /// Executes [`StdioEvent::Respawn`]: the server exited on the era probe, so the old
    /// child is killed and reaped (its drop does both, as at the end of a shutdown), the same
    /// command is started again, and the core is told to resume on the new pipes.
    fn respawn(&mut self, now: Instant, link: &Lines<'_, R>) {
        let detail = self
            .ended
            .take()
            .unwrap_or_else(|| "the server exited".to_owned());
        let outcome = match &mut self.stream {
            #[cfg(unix)]
            ByteStream::Stdio(s) => {
                match crate::process::StdioChild::spawn(
                    link.runtime,
                    &s.spec,
                    link.shared.name.clone(),
                    s.tail,
                ) {
                    Ok((child, pipes)) => {
                        tracing::debug!(
                            server = link.server(),
                            "the server exited on the era probe ({detail}); started it again"
                        );
                        s.child = child;
                        s.reader = Some(pipes.stdout);
                        s.writer = Some(pipes.stdin);
                        s.unread = pipes.unread;
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
        let mut state = link.shared.lock();
        match outcome {
            Ok(()) => {
                // Whatever was half-written or not yet fed belonged to the old process.
                self.out.clear();
                self.out_pos = 0;
                self.written = 0;
                self.read_pos = 0;
                self.read_len = 0;
                self.read_full = false;
                self.needs_flush = false;
                self.ending = None;
                self.stdout_eof = false;
                state.exit = None;
                state.core.handle_respawned(now);
            }
            Err(detail) => state.core.handle_transport_lost(now, Some(detail)),
        }
    }

    /// Writes what the core has to send, pulling more only when the last batch is written.
    fn poll_write(&mut self, cx: &mut Context<'_>, link: &Lines<'_, R>) -> bool {
        let mut any = false;
        loop {
            if self.out_pos == self.out.len() {
                self.out.clear();
                self.out_pos = 0;
                let mut state = link.shared.lock();
                while self.out.len() < WRITE_BATCH {
                    let start = self.out.len();
                    match state.core.poll_transmit(&mut self.out) {
                        Some(o) => {
                            if let Some(tap) = &link.options.wire {
                                tap(crate::options::WireDirection::Sent, &self.out[start..]);
                            }
                            tracing::trace!(server = link.server(), kind = ?o.kind, method = o.method.as_deref(), request = ?o.request.map(|h| h.get()), "send");
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
            let Some(writer) = self.stream.writer() else {
                // The write side is gone: what the core still sends cannot reach the peer.
                self.out_pos = self.out.len();
                continue;
            };
            match writer.as_mut().poll_write(cx, &self.out[self.out_pos..]) {
                Poll::Ready(Ok(0)) => {
                    self.write_failed(link, "the stream accepted no bytes".into());
                }
                Poll::Ready(Ok(n)) => {
                    self.out_pos += n;
                    self.written += n as u64;
                    self.needs_flush = true;
                    any = true;
                }
                Poll::Ready(Err(e)) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Poll::Ready(Err(e)) => self.write_failed(link, format!("writing failed: {e}")),
                Poll::Pending => return any,
            }
        }
        if self.needs_flush
            && let Some(writer) = self.stream.writer()
        {
            match writer.as_mut().poll_flush(cx) {
                Poll::Ready(Ok(())) => self.needs_flush = false,
                Poll::Ready(Err(e)) => self.write_failed(link, format!("flushing failed: {e}")),
                Poll::Pending => {}
            }
        }
        any
    }

    fn write_failed(&mut self, link: &Lines<'_, R>, detail: String) {
        *self.stream.writer() = None;
        self.out_pos = self.out.len();
        self.needs_flush = false;
        let now = link.runtime.now();
        self.transport_ending(now, detail);
    }

    fn writes_pending(&self) -> bool {
        self.out_pos < self.out.len() || self.needs_flush
    }
}

impl<R: Runtime> TransportIo<R> for LinesIo<R> {
    type Conn = StdioConnection;

    fn poll_input(&mut self, cx: &mut Context<'_>, now: Instant, link: &Lines<'_, R>) -> bool {
        let mut progress = self.poll_read(cx, now, link);
        progress |= self.poll_child(cx, now, link);
        progress |= self.check_ending(now, link);
        progress
    }

    fn poll_output(&mut self, cx: &mut Context<'_>, _now: Instant, link: &Lines<'_, R>) -> bool {
        self.poll_write(cx, link)
    }

    /// Whether input may be waiting: unfed bytes of the last read, or a read that filled the
    /// whole buffer (the stream likely holds more).
    fn input_waiting(&self) -> bool {
        self.read_pos < self.read_len || self.read_full
    }

    fn after_yield(&mut self, cx: &mut Context<'_>, link: &Lines<'_, R>) {
        self.poll_write(cx, link);
    }

    fn observe(server: &str, event: StdioEvent) -> Observed<StdioEvent> {
        tracing::trace!(server, ?event, "stdio event");
        match event {
            StdioEvent::Respawn => Observed::Act(event),
            // `StdioEvent` is non_exhaustive: a new kind is a report until acted on.
            #[allow(unreachable_patterns)]
            _ => Observed::Seen,
        }
    }

    fn act(&mut self, now: Instant, event: StdioEvent, link: &Lines<'_, R>) {
        if event == StdioEvent::Respawn {
            self.respawn(now, link);
        }
    }

    /// Flushes, then shuts the transport down: closes a caller's stream, or runs a child's
    /// shutdown schedule until it exited.
    fn poll_shutdown(&mut self, cx: &mut Context<'_>, now: Instant, link: &Lines<'_, R>) -> bool {
        let flush_deadline = *self.flush_deadline.get_or_insert(now + FLUSH_GRACE);
        // The session may have closed (on another thread) after this round's write: pull
        // what it queued (cancellations) before deciding that everything is flushed.
        self.poll_write(cx, link);
        let flushing = self.writes_pending() && self.stream.writer().is_some();
        if flushing && now < flush_deadline {
            return false;
        }
        match &mut self.stream {
            ByteStream::Stream(s) => {
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
            ByteStream::Stdio(s) => {
                let schedule = s
                    .schedule
                    .get_or_insert_with(|| ShutdownSchedule::new(link.options.shutdown, now));
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
                            tracing::warn!(server = link.server(), error = %e, "waiting for the server process failed");
                            std::os::unix::process::ExitStatusExt::from_raw(0)
                        }));
                    }
                    if s.status.is_some() {
                        schedule.handle_child_exited(now);
                    }
                    let mut acted = false;
                    while let Some(action) = schedule.poll_action() {
                        acted = true;
                        tracing::debug!(server = link.server(), ?action, "shutdown");
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
                            tracing::warn!(server = link.server(), error = %e, ?signal, "could not signal the server's process group");
                        }
                    }
                    if !acted {
                        break;
                    }
                }
                schedule.is_done()
            }
            ByteStream::_Never(n, _) => match *n {},
        }
    }

    fn next_deadline(&self, closed: bool) -> Option<Instant> {
        let mut next: Option<Instant> = None;
        let mut consider = |t: Option<Instant>| {
            if let Some(t) = t {
                next = Some(next.map_or(t, |n| n.min(t)));
            }
        };
        if !closed {
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
        if let ByteStream::Stdio(s) = &self.stream {
            consider(s.schedule.as_ref().and_then(ShutdownSchedule::poll_timeout));
        }
        next
    }
}
