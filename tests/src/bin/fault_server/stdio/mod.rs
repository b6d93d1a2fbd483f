//! The stdio server: a [`ServerSession`] (the handshake, version negotiation, `ping`,
//! correlation, cancellation, progress tokens) with the tools of [`tools`], and the faults of
//! [`crate::faults`] applied to what it writes.
//!
//! A reader thread reads stdin, logs every line as soon as it is read (so a test sees what
//! arrived even while the main loop is busy with a fault) and hands the framed lines to the
//! main loop, which owns the session: it feeds each line, writes what the session produced
//! (through the fault layer), answers the requests the session hands over, and sleeps until
//! the next timer (a delayed answer, a progress step) or the next line.

mod timers;
mod tools;

use std::io::{self, Read};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use mcp_proto::framing::lines::{Line, LineDecoder, encode_line};
use mcp_proto::jsonrpc::{self, DecodedRef, ErrorObject, MessageRef};
use mcp_proto::server::{ClientRequestId, Event, MessageKind, ServerSession, ServerState};
use serde_json::value::RawValue;

use crate::faults::{Shape, Wire};
use crate::log::Log;
use crate::options::Mode;
use timers::{Due, Timers};

/// What the reader thread hands to the main loop.
enum Input {
    /// One line, without its newline (not checked for UTF-8: the session answers a line that
    /// is not with a parse error).
    Line(Vec<u8>),
    Eof,
}

/// Serves stdio in `mode` until stdin ends; then returns, unless `stay` (sleeps until
/// killed).
pub(crate) fn run(mode: Mode, stay: bool, log: Log) {
    log.event(&format!("start pid {} mode {mode:?}", std::process::id()));
    let stop_reading = Arc::new(AtomicBool::new(false));
    let mut host = Host::new(mode, log.clone(), Arc::clone(&stop_reading));
    if mode == Mode::IgnoreSigterm {
        host.wire.ignore_sigterm();
    }
    if mode == Mode::Garbage {
        host.wire.garbage();
    }
    let (tx, rx) = mpsc::channel();
    {
        let log = log.clone();
        thread::spawn(move || read_stdin(&log, &stop_reading, &tx));
    }
    loop {
        host.fire_due(Instant::now());
        let wake = host.next_wake();
        let input = match wake {
            Some(at) => match rx.recv_timeout(at.saturating_duration_since(Instant::now())) {
                Ok(input) => input,
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => Input::Eof,
            },
            None => rx.recv().unwrap_or(Input::Eof),
        };
        match input {
            Input::Line(line) => host.handle_line(&line),
            Input::Eof => break,
        }
    }
    // Answers still delayed are lost, as the reference says.
    host.session
        .handle_transport_closed(Instant::now(), Some("stdin EOF".into()));
    log.event("stdin EOF");
    if stay {
        loop {
            thread::sleep(Duration::from_secs(3600));
        }
    }
}

/// Reads stdin, logs every line as it arrives and forwards it.
fn read_stdin(log: &Log, stop_reading: &AtomicBool, tx: &mpsc::Sender<Input>) {
    let mut decoder = LineDecoder::with_max_line_len(256 << 20);
    let mut stdin = io::stdin().lock();
    let mut buf = vec![0u8; 64 * 1024];
    let mut lines = Vec::new();
    loop {
        let n = match stdin.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if stop_reading.load(Ordering::SeqCst) {
            // `ping_flood`: what was read after the flood began is ignored, and stdin is never
            // read again (the client's writes back up).
            log.event("stdin reader stopped");
            loop {
                thread::park();
            }
        }
        decoder.decode(&buf[..n], |line| frame(log, &mut lines, line));
        for line in lines.drain(..) {
            if tx.send(Input::Line(line)).is_err() {
                return;
            }
        }
    }
    // A last line without its newline is still a message.
    decoder.finish(|line| frame(log, &mut lines, line));
    for line in lines.drain(..) {
        let _ = tx.send(Input::Line(line));
    }
    let _ = tx.send(Input::Eof);
}

/// Logs one framed line and keeps it for the main loop.
fn frame(log: &Log, lines: &mut Vec<Vec<u8>>, line: Line<'_>) {
    match line {
        Line::Message(text) => {
            log.line(text.as_bytes());
            lines.push(text.as_bytes().to_vec());
        }
        Line::InvalidUtf8 { bytes, .. } => {
            log.line(bytes);
            lines.push(bytes.to_vec());
        }
        other => eprintln!("fault_server: ignoring input: {other:?}"),
    }
}

/// The main loop's state: the session, the fault layer it writes through, the timers.
struct Host {
    mode: Mode,
    session: ServerSession,
    wire: Wire,
    log: Log,
    timers: Timers,
    /// Set by `ping_flood`: the stdin reader stops reading for good.
    stop_reading: Arc<AtomicBool>,
    /// Scratch for the session's output.
    scratch: Vec<u8>,
}

impl Host {
    fn new(mode: Mode, log: Log, stop_reading: Arc<AtomicBool>) -> Self {
        Host {
            mode,
            session: ServerSession::new(crate::tools::server_config(), Instant::now()),
            wire: Wire::new(log.clone()),
            log,
            timers: Timers::default(),
            stop_reading,
            scratch: Vec::new(),
        }
    }

    /// When the loop must wake without input: the next timer or session deadline.
    fn next_wake(&self) -> Option<Instant> {
        match (self.timers.next_at(), self.session.poll_timeout()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Feeds one line to the session and does what follows from it.
    fn handle_line(&mut self, line: &[u8]) {
        let now = Instant::now();
        let before_handshake = self.session.state() == ServerState::AwaitingInitialize;
        if before_handshake && self.mode == Mode::StrictHandshake {
            self.strict_handshake(line);
        }
        self.session.handle_message(now, line);
        let initialized =
            before_handshake && self.session.state() != ServerState::AwaitingInitialize;
        if initialized && matches!(self.mode, Mode::PingFlood(_)) {
            // Before the answer is written, so that no request the client sends after it is
            // read: the reader may already be waiting for the next chunk when the flood begins.
            self.stop_reading.store(true, Ordering::SeqCst);
        }
        // The handshake (and what comes before it) is answered normally: the mode applies
        // after it.
        let shape = if before_handshake {
            Shape::default()
        } else {
            Shape::of_mode(self.mode)
        };
        self.flush(now, shape);
        if initialized {
            self.after_initialize();
        }
        self.handle_events(now);
    }

    /// `strict_handshake`: the oldest servers exit on any request before `initialize`
    /// (`ping` and the 2026 probe `server/discover` included).
    fn strict_handshake(&self, line: &[u8]) {
        if let Ok(DecodedRef::Single(MessageRef::Request { method, .. })) = jsonrpc::decode(line)
            && method != "initialize"
        {
            self.wire.strict_handshake(&method);
        }
    }

    /// The whole-process faults that happen once, right after the initialize answer.
    fn after_initialize(&mut self) {
        match self.mode {
            Mode::HugeLine(mib) => self.wire.huge_line(mib),
            Mode::CloseStdout => self.wire.close_stdout(),
            Mode::Grandchild { stay } => {
                self.wire.grandchild();
                if !stay {
                    self.log.event("exiting, grandchild left behind");
                    std::process::exit(0);
                }
            }
            Mode::StderrFlood(mib) => self.wire.stderr_flood(mib),
            Mode::PingFlood(count) => self.wire.ping_flood(count, &self.stop_reading),
            _ => {}
        }
    }

    /// Handles what the session reported: requests to answer, odd input. (A cancelled request
    /// needs nothing: the session forgets it, and a timer's late answer finds it gone.)
    fn handle_events(&mut self, now: Instant) {
        while let Some(event) = self.session.poll_event() {
            match event {
                Event::Request {
                    id, method, params, ..
                } => self.serve(now, id, &method, params.as_deref()),
                Event::Diagnostic(d) => eprintln!("fault_server: {d:?}"),
                _ => {}
            }
        }
    }

    /// Answers one request the session handed over.
    fn serve(
        &mut self,
        now: Instant,
        id: ClientRequestId,
        method: &str,
        params: Option<&RawValue>,
    ) {
        let shape = Shape::of_mode(self.mode);
        match method {
            "tools/list" => {
                let answer = tools::list(self.mode, params);
                self.answer(now, id, answer, shape);
            }
            "tools/call" => self.call_tool(now, id, params, shape),
            other => {
                let error = ErrorObject::method_not_found(other);
                self.answer(now, id, Err(error), shape);
            }
        }
    }

    /// Answers `id` through the session and writes the answer as `shape` says.
    fn answer(
        &mut self,
        now: Instant,
        id: ClientRequestId,
        answer: Result<Box<RawValue>, ErrorObject>,
        shape: Shape,
    ) {
        let sent = match answer {
            Ok(result) => self.session.respond(now, id, result),
            Err(error) => self.session.respond_error(now, id, error),
        };
        if let Err(e) = sent {
            self.log.event(&format!("{id} not answered: {e}"));
        }
        self.flush(now, shape);
    }

    /// Writes what the session queued: answers through the fault layer as `shape` says,
    /// anything else (progress) as it is.
    fn flush(&mut self, now: Instant, shape: Shape) {
        loop {
            self.scratch.clear();
            let Some(out) = self.session.poll_transmit(&mut self.scratch) else {
                return;
            };
            let mut line = Vec::with_capacity(self.scratch.len() + 1);
            encode_line(&mut line, &self.scratch);
            if out.kind != MessageKind::Response {
                self.wire.write_raw(&line);
            } else if shape.silent {
                // Dropped: the client never hears of it.
            } else if shape.delay > Duration::ZERO {
                // Held back on a timer: the answers after it are not held up behind it.
                let at = now + shape.delay;
                let shape = Shape {
                    delay: Duration::ZERO,
                    ..shape
                };
                self.timers.add(at, Due::Write { line, shape });
            } else {
                self.wire.write_answer(&line, shape);
            }
        }
    }

    /// Runs every timer due at `now`.
    fn fire_due(&mut self, now: Instant) {
        self.session.handle_timeout(now);
        while let Some(due) = self.timers.pop_due(now) {
            match due {
                Due::Write { line, shape } => self.wire.write_answer(&line, shape),
                Due::Answer {
                    id,
                    wire_id,
                    result,
                    shape,
                } => {
                    if self.session.wire_id(id).is_none() {
                        self.log
                            .event(&format!("sleep {wire_id} cancelled, not answered"));
                    } else {
                        self.answer(now, id, Ok(result), shape);
                    }
                }
                Due::Progress {
                    id,
                    step,
                    steps,
                    shape,
                } => self.progress_step(now, id, step, steps, shape),
            }
        }
        self.handle_events(now);
    }
}
