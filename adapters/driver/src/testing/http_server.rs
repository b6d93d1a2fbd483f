//! [`ScriptedHttpServer`]: a tiny HTTP/1.1 server on 127.0.0.1 for deterministic HTTP tests.
//!
//! Plain std threads and a `TcpListener`, so it runs under any async runtime. Every request is
//! recorded and handed to the test's script, which returns the reply: a full body, a body
//! generated while it is written (of any length, never held in memory), or an SSE body written
//! in chunked encoding event by event, then ended, held open (with or without keep-alive
//! comments) or broken off. Each connection serves one exchange (`Connection: close`).

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::Duration;

use serde_json::Value;

/// The largest request body the server reads.
const MAX_REQUEST_BODY: usize = 1 << 20;

/// A request the server received.
#[derive(Clone, Debug)]
pub struct RecordedRequest {
    /// `GET`, `POST`, `DELETE`, ...
    pub method: String,
    /// The request target (path and query).
    pub path: String,
    /// The headers, names lower-cased, in order.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl RecordedRequest {
    /// The first value of header `name` (case-insensitive).
    #[must_use]
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON, if it is JSON.
    #[must_use]
    pub fn json(&self) -> Option<Value> {
        serde_json::from_slice(&self.body).ok()
    }

    /// The JSON-RPC `method` of the body, if any.
    #[must_use]
    pub fn rpc_method(&self) -> Option<String> {
        self.json()?.get("method")?.as_str().map(str::to_owned)
    }

    /// The JSON-RPC `id` of the body, if any.
    #[must_use]
    pub fn rpc_id(&self) -> Option<Value> {
        self.json()?.get("id").cloned()
    }
}

/// What the script answers.
#[derive(Clone, Debug)]
pub struct ScriptedReply {
    status: u16,
    headers: Vec<(String, String)>,
    body: ReplyBody,
    report: Option<Report>,
}

#[derive(Clone, Debug)]
enum ReplyBody {
    Full(Vec<u8>),
    /// `prefix`, then `fill` bytes up to `len` bytes in all, made while writing, then
    /// `suffix`.
    Generated {
        prefix: Vec<u8>,
        fill: u8,
        len: u64,
        suffix: Vec<u8>,
    },
    /// SSE events (each already framed, blank line included), with a pause before each.
    Sse {
        events: Vec<String>,
        pause: Duration,
        end: SseEnd,
    },
}

/// What an SSE reply does after its events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SseEnd {
    /// Ends the chunked body.
    Finish,
    /// Stays open with a keep-alive comment every 50 ms.
    Hold,
    /// Stays open sending nothing.
    Silent,
    /// Closes the connection without ending the chunked body.
    Break,
}

/// How the writing of one reply went, for [`ScriptedReply::on_done`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReplyOutcome {
    /// Body bytes written (for SSE: the events' bytes, without chunk framing or keep-alives).
    pub body_bytes: u64,
    /// Whether the client went away before the reply was complete (a write failed, or the
    /// client closed a held stream).
    pub hung_up: bool,
}

/// The callback of [`ScriptedReply::on_done`].
#[derive(Clone)]
struct Report(Arc<dyn Fn(ReplyOutcome) + Send + Sync>);

impl std::fmt::Debug for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Report")
    }
}

impl ScriptedReply {
    /// A reply of `status` with an empty body.
    #[must_use]
    pub fn status(status: u16) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: ReplyBody::Full(Vec::new()),
            report: None,
        }
    }

    /// 200 with `value` as `application/json`.
    #[must_use]
    pub fn json(value: &Value) -> Self {
        Self::status(200)
            .with_header("content-type", "application/json")
            .with_body(value.to_string().into_bytes())
    }

    /// 200 with `text/event-stream`: each item is one event's text (`data: ...` lines and
    /// fields), written in its own chunk; the stream ends after the last one.
    #[must_use]
    pub fn sse<I, S>(events: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let events = events
            .into_iter()
            .map(|e| {
                let mut e = e.into();
                if !e.ends_with('\n') {
                    e.push('\n');
                }
                e.push('\n');
                e
            })
            .collect();
        Self {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            body: ReplyBody::Sse {
                events,
                pause: Duration::ZERO,
                end: SseEnd::Finish,
            },
            report: None,
        }
    }

    /// An SSE data event carrying `message`.
    #[must_use]
    pub fn data(message: &Value) -> String {
        format!("data: {message}")
    }

    /// Adds a header.
    #[must_use]
    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Replaces the body (of a full reply).
    #[must_use]
    pub fn with_body(mut self, body: Vec<u8>) -> Self {
        self.body = ReplyBody::Full(body);
        self
    }

    /// An SSE reply waits `pause` before each event.
    #[must_use]
    pub fn with_pause(mut self, d: Duration) -> Self {
        if let ReplyBody::Sse { pause, .. } = &mut self.body {
            *pause = d;
        }
        self
    }

    /// An SSE reply stays open after its events, with a keep-alive comment every 50 ms,
    /// until the client goes away or the server is dropped.
    #[must_use]
    pub fn held_open(self) -> Self {
        self.sse_end(SseEnd::Hold)
    }

    /// An SSE reply stays open after its events sending nothing at all (not even keep-alive
    /// comments), until the client closes the connection or the server is dropped.
    #[must_use]
    pub fn held_silent(self) -> Self {
        self.sse_end(SseEnd::Silent)
    }

    /// An SSE reply breaks off after its events: the connection is closed without the end of
    /// the chunked body, so the client sees the stream fail rather than end.
    #[must_use]
    pub fn broken_off(self) -> Self {
        self.sse_end(SseEnd::Break)
    }

    fn sse_end(mut self, to: SseEnd) -> Self {
        if let ReplyBody::Sse { end, .. } = &mut self.body {
            *end = to;
        }
        self
    }

    /// Replaces the body with `len` bytes made while they are written: `prefix` (cut at `len`),
    /// then `fill` bytes, in 64 KiB writes. The body is never held in memory, so `len` may be
    /// far larger than the machine's memory; writing stops when the client goes away.
    #[must_use]
    pub fn with_generated_body(mut self, prefix: &[u8], fill: u8, len: u64) -> Self {
        self.body = ReplyBody::Generated {
            prefix: prefix.to_vec(),
            fill,
            len,
            suffix: Vec::new(),
        };
        self
    }

    /// As [`with_generated_body`](Self::with_generated_body), then `suffix` (which the
    /// `content-length` counts too): a huge SSE event followed by ordinary ones, say.
    #[must_use]
    pub fn with_generated_body_then(
        mut self,
        prefix: &[u8],
        fill: u8,
        len: u64,
        suffix: &[u8],
    ) -> Self {
        self.body = ReplyBody::Generated {
            prefix: prefix.to_vec(),
            fill,
            len,
            suffix: suffix.to_vec(),
        };
        self
    }

    /// Calls `report` (on the connection's thread) once the reply is written, or given up
    /// because the client went away: how many body bytes went out, and whether it hung up.
    #[must_use]
    pub fn on_done(mut self, report: impl Fn(ReplyOutcome) + Send + Sync + 'static) -> Self {
        self.report = Some(Report(Arc::new(report)));
        self
    }
}

type Script = dyn Fn(&RecordedRequest) -> ScriptedReply + Send + Sync;

/// A scripted HTTP/1.1 server on 127.0.0.1; stops accepting when dropped.
pub struct ScriptedHttpServer {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<RecordedRequest>>>,
    stop: Arc<AtomicBool>,
}

impl std::fmt::Debug for ScriptedHttpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptedHttpServer")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl ScriptedHttpServer {
    /// Starts a server on a free port of 127.0.0.1 answering with `script`.
    ///
    /// # Panics
    ///
    /// If no port can be bound (a test environment problem).
    pub fn start(
        script: impl Fn(&RecordedRequest) -> ScriptedReply + Send + Sync + 'static,
    ) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let addr = listener
            .local_addr()
            .expect("local address of a bound listener");
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let script: Arc<Script> = Arc::new(script);
        {
            let requests = requests.clone();
            let stop = stop.clone();
            thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(stream) = stream else { continue };
                    let requests = requests.clone();
                    let script = script.clone();
                    let stop = stop.clone();
                    thread::spawn(move || serve(stream, &requests, &*script, &stop));
                }
            });
        }
        Self {
            addr,
            requests,
            stop,
        }
    }

    /// `http://127.0.0.1:PORT{path}`.
    #[must_use]
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Every request received so far, in arrival order.
    #[must_use]
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl Drop for ScriptedHttpServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accept loop so that it sees the flag.
        let _ = TcpStream::connect(self.addr);
    }
}

fn serve(
    stream: TcpStream,
    requests: &Mutex<Vec<RecordedRequest>>,
    script: &Script,
    stop: &AtomicBool,
) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    let Ok(read_half) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(read_half);
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_owned();
    let path = parts.next().unwrap_or_default().to_owned();
    let mut headers = Vec::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        if let Some((n, v)) = l.split_once(':') {
            headers.push((n.trim().to_ascii_lowercase(), v.trim().to_owned()));
        }
    }
    let len = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse::<usize>().ok())
        .unwrap_or(0)
        .min(MAX_REQUEST_BODY);
    let mut body = vec![0; len];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let request = RecordedRequest {
        method,
        path,
        headers,
        body,
    };
    requests
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(request.clone());
    let reply = script(&request);
    write_reply(stream, &reply, stop);
}

/// Writes `reply` and reports how it went (to its `on_done` callback, if any).
fn write_reply(stream: TcpStream, reply: &ScriptedReply, stop: &AtomicBool) {
    let mut written = 0;
    let result = write_body(stream, reply, stop, &mut written);
    if let Some(Report(report)) = &reply.report {
        report(ReplyOutcome {
            body_bytes: written,
            hung_up: result.is_err(),
        });
    }
}

/// The head and body of `reply`; `Err` when the client went away first. `written` counts the
/// body bytes sent.
fn write_body(
    mut stream: TcpStream,
    reply: &ScriptedReply,
    stop: &AtomicBool,
    written: &mut u64,
) -> std::io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {} Scripted\r\nconnection: close\r\n",
        reply.status
    );
    for (n, v) in &reply.headers {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    match &reply.body {
        ReplyBody::Full(body) => {
            head.push_str(&format!("content-length: {}\r\n\r\n", body.len()));
            stream.write_all(head.as_bytes())?;
            stream.write_all(body)?;
            *written = body.len() as u64;
        }
        ReplyBody::Generated {
            prefix,
            fill,
            len,
            suffix,
        } => {
            let total = len + suffix.len() as u64;
            head.push_str(&format!("content-length: {total}\r\n\r\n"));
            stream.write_all(head.as_bytes())?;
            let prefix = &prefix[..prefix
                .len()
                .min(usize::try_from(*len).unwrap_or(usize::MAX))];
            stream.write_all(prefix)?;
            *written = prefix.len() as u64;
            let block = vec![*fill; 64 * 1024];
            while *written < *len {
                let n =
                    usize::try_from(*len - *written).map_or(block.len(), |r| r.min(block.len()));
                stream.write_all(&block[..n])?;
                *written += n as u64;
            }
            stream.write_all(suffix)?;
            *written += suffix.len() as u64;
        }
        ReplyBody::Sse { events, pause, end } => {
            head.push_str("transfer-encoding: chunked\r\ncache-control: no-cache\r\n\r\n");
            stream.write_all(head.as_bytes())?;
            stream.flush()?;
            for e in events {
                if !pause.is_zero() {
                    thread::sleep(*pause);
                }
                write!(stream, "{:x}\r\n{e}\r\n", e.len())?;
                stream.flush()?;
                *written += e.len() as u64;
            }
            match end {
                SseEnd::Finish => {}
                SseEnd::Hold => {
                    // Until the client hangs up (a write fails) or the server is dropped.
                    while !stop.load(Ordering::SeqCst) {
                        thread::sleep(Duration::from_millis(50));
                        write!(
                            stream,
                            "{:x}\r\n: keep-alive\n\n\r\n",
                            ": keep-alive\n\n".len()
                        )?;
                        stream.flush()?;
                    }
                }
                SseEnd::Silent => return wait_for_hang_up(&stream, stop),
                SseEnd::Break => {
                    // The client sees the end of the stream at once; the chunked
                    // body stays unterminated.
                    let _ = stream.shutdown(std::net::Shutdown::Write);
                    return Ok(());
                }
            }
            stream.write_all(b"0\r\n\r\n")?;
        }
    }
    stream.flush()
}

/// Waits, writing nothing, until the client closes the connection (`Err`) or the server is
/// dropped (`Ok`).
fn wait_for_hang_up(mut stream: &TcpStream, stop: &AtomicBool) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_millis(50)))?;
    let mut buf = [0u8; 512];
    while !stop.load(Ordering::SeqCst) {
        match stream.read(&mut buf) {
            Ok(0) => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::ConnectionAborted,
                    "the client closed the connection",
                ));
            }
            // Whatever else the client sends on this connection is not read as a request.
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock
                        | std::io::ErrorKind::TimedOut
                        | std::io::ErrorKind::Interrupted
                ) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
