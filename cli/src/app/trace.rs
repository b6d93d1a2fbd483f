//! The wire trace on stderr, masked by [`crate::redact`].
//!
//! `-v` shows every JSON-RPC message once, whole, in order, one line each: `-> {…}` sent,
//! `<- {…}` received. Over stdio that is every line; over HTTP it is every request body and
//! every message of a response, whether the response is a JSON body or an SSE stream (the
//! `data` of each event, never its framing).
//!
//! `-vv` adds HTTP itself: `> POST url` and the request headers, `< 200` and the response
//! headers, the SSE framing lines as they arrived (`< event: message`, `< id: 7`, …), and
//! exchanges that fail or are dropped. Secret header values are masked; `Mcp-Session-Id`
//! is shown.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use mcp_proto::framing::sse::{SseDecoder, SseItem};
use mcp_tokio::mcp_driver::{HttpTrace, WireDirection};
use serde_json::Value;

use super::ui::Ui;
use crate::redact;

/// How many characters of one message the trace shows.
const MAX_SHOWN: usize = 4000;
/// A received line (or a JSON body) longer than this is shown truncated and dropped.
const MAX_PENDING: usize = 1 << 20;

/// What replaces a secret (the one mask of [`crate::redact`]).
pub const MASK: &str = redact::MASK;

/// The `-v` count of the `mcp shell` line running now (0 between lines). A process runs at
/// most one shell, whose connection has the trace installed whatever its own `-v`: the trace
/// shows what the session's `-v` or this level asks for, whichever is higher.
static LINE_LEVEL: AtomicU8 = AtomicU8::new(0);

/// Traces the messages of one shell line at `level` (its `-v` count) until the guard is
/// dropped: call it when the line starts; dropping the guard (the line ended, failed or was
/// cancelled) turns the line's trace off again.
#[must_use = "the trace stops when the guard is dropped"]
pub fn trace_line_at(level: u8) -> LineTrace {
    LINE_LEVEL.store(level, Ordering::SeqCst);
    LineTrace(())
}

/// Turns a shell line's trace off when dropped ([`trace_line_at`]).
#[derive(Debug)]
pub struct LineTrace(());

impl Drop for LineTrace {
    fn drop(&mut self) {
        LINE_LEVEL.store(0, Ordering::SeqCst);
    }
}

/// The trace level in effect for a tap made with `ui`: its `-v`, or the running shell line's.
fn level(ui: &Ui) -> u8 {
    ui.verbose.max(LINE_LEVEL.load(Ordering::SeqCst))
}

/// One traced message as printed: `-> {…}` sent, `<- {…}` received, masked, shortened.
pub fn trace_line(direction: WireDirection, message: &[u8]) -> String {
    let arrow = match direction {
        WireDirection::Sent => "->",
        _ => "<-",
    };
    let text = String::from_utf8_lossy(message);
    let text = text.trim_end_matches(['\r', '\n']);
    let shown = match serde_json::from_str::<Value>(text) {
        Ok(mut value) => {
            redact::json(&mut value);
            value.to_string()
        }
        Err(_) => redact::text(text).into_owned(),
    };
    // Bytes that are not UTF-8 are not a valid message, whatever they look like once the
    // bad bytes are replaced for display: say so.
    let invalid = if std::str::from_utf8(message).is_err() {
        " (not valid UTF-8; bad bytes shown as \u{FFFD})"
    } else {
        ""
    };
    if shown.chars().count() > MAX_SHOWN {
        let cut: String = shown.chars().take(MAX_SHOWN).collect();
        format!("{arrow} {cut}… ({} bytes){invalid}", message.len())
    } else {
        format!("{arrow} {shown}{invalid}")
    }
}

/// Masks `KEY=VALUE` pairs for the trace of a server's start.
pub fn masked_pairs(pairs: &[(String, String)], sep: &str) -> String {
    pairs
        .iter()
        .map(|(k, _)| format!("{k}{sep}{MASK}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The stdio tap handed to the client: sent bytes are whole lines, received bytes are split
/// into lines here (a line longer than 1 MiB is shown cut).
pub fn tap(ui: &Ui) -> impl Fn(WireDirection, &[u8]) + Send + Sync + 'static {
    let ui = ui.clone();
    let pending = Arc::new(Mutex::new(Vec::<u8>::new()));
    move |direction, bytes| match direction {
        WireDirection::Sent => {
            if level(&ui) == 0 {
                return;
            }
            for line in shielded(|| vec![trace_line(direction, bytes)]) {
                ui.note(&line);
            }
        }
        _ => {
            // Received bytes are split into lines even when nothing is shown, so that a
            // shell line's trace starts at a line's start.
            let shown = level(&ui) > 0;
            // A poisoned lock only means a panic on another print; the buffer is still bytes.
            let mut buf = pending.lock().unwrap_or_else(|e| e.into_inner());
            buf.extend_from_slice(bytes);
            let mut start = 0;
            while let Some(nl) = buf[start..].iter().position(|&b| b == b'\n') {
                let line = &buf[start..start + nl + 1];
                if shown && line.iter().any(|b| !b.is_ascii_whitespace()) {
                    for shown in shielded(|| vec![trace_line(direction, line)]) {
                        ui.note(&shown);
                    }
                }
                start += nl + 1;
            }
            buf.drain(..start);
            if buf.len() > MAX_PENDING {
                if shown {
                    ui.note(&trace_line(direction, &buf));
                }
                buf.clear();
            }
        }
    }
}

/// The HTTP trace handed to the client (`ClientBuilder::on_http_trace`): each exchange's
/// response decoded by its own content type, so every message is printed once and whole.
pub fn http(ui: &Ui) -> impl Fn(HttpTrace<'_>) + Send + Sync + 'static {
    let tracer = Mutex::new(HttpTracer::new(ui.verbose > 1));
    let ui = ui.clone();
    move |step| {
        // A poisoned lock only means a panic on another print; the state is still usable.
        let mut tracer = tracer.lock().unwrap_or_else(|e| e.into_inner());
        // Every step is followed (an exchange's body is decoded from its start), printed
        // only while a trace is asked for; `-vv` adds the heads and framing.
        let level = level(&ui);
        tracer.headers = level > 1;
        let lines = shielded(|| tracer.step(step));
        if level == 0 {
            return;
        }
        for line in lines {
            ui.note(&line);
        }
    }
}

/// How one exchange's response body is being read for the trace.
enum Body {
    /// `application/json` (or anything JSON): printed whole at its end.
    Json(Vec<u8>),
    /// `text/event-stream`: each event's data printed when it is dispatched.
    Sse(Box<SseDecoder>, Vec<u8>),
    /// Anything else (an error page): shown at `-vv`, cut.
    Other(Vec<u8>),
    /// Over [`MAX_PENDING`]: already reported, the rest is not kept.
    Skipped,
}

/// The HTTP trace's state: the body of each open exchange. Pure (lines in, lines out), so it
/// is tested without a server.
pub struct HttpTracer {
    headers: bool,
    open: HashMap<u64, Body>,
}

impl HttpTracer {
    /// A tracer; `headers` (`-vv`) adds HTTP heads, SSE framing and failures.
    pub fn new(headers: bool) -> Self {
        HttpTracer {
            headers,
            open: HashMap::new(),
        }
    }

    /// The trace lines of one step, masked.
    pub fn step(&mut self, step: HttpTrace<'_>) -> Vec<String> {
        let mut lines = Vec::new();
        match step {
            HttpTrace::Request {
                exchange,
                method,
                url,
                headers,
                body,
            } => {
                if self.headers {
                    lines.push(format!(
                        "> {method} {} (exchange {exchange})",
                        redact::url(url.as_str())
                    ));
                    lines.extend(
                        headers
                            .iter()
                            .map(|(n, v)| format!("> {n}: {}", redact::header(n, v))),
                    );
                }
                if !body.is_empty() {
                    lines.push(trace_line(WireDirection::Sent, body));
                }
            }
            HttpTrace::Response {
                exchange,
                status,
                headers,
            } => {
                if self.headers {
                    lines.push(format!("< {status} (exchange {exchange})"));
                    lines.extend(
                        headers
                            .iter()
                            .map(|(n, v)| format!("< {n}: {}", redact::header(n, v))),
                    );
                }
                let kind = headers
                    .get("content-type")
                    .unwrap_or_default()
                    .to_ascii_lowercase();
                let body = if kind.starts_with("text/event-stream") {
                    Body::Sse(
                        Box::new(SseDecoder::with_max_event_size(MAX_PENDING)),
                        Vec::new(),
                    )
                } else if kind.contains("json") {
                    Body::Json(Vec::new())
                } else {
                    Body::Other(Vec::new())
                };
                self.open.insert(exchange, body);
            }
            HttpTrace::Body { exchange, chunk } => {
                let headers = self.headers;
                if let Some(body) = self.open.get_mut(&exchange) {
                    body_chunk(body, chunk, headers, &mut lines);
                }
            }
            HttpTrace::End { exchange } => {
                if let Some(body) = self.open.remove(&exchange) {
                    body_end(body, self.headers, &mut lines);
                }
            }
            HttpTrace::Failed { exchange, failure } => {
                if let Some(body) = self.open.remove(&exchange) {
                    body_end(body, self.headers, &mut lines);
                }
                if self.headers {
                    lines.push(format!(
                        "< exchange {exchange} failed: {}",
                        redact::text(&failure.to_string())
                    ));
                }
            }
            HttpTrace::Aborted { exchange } => {
                if let Some(body) = self.open.remove(&exchange) {
                    body_end(body, self.headers, &mut lines);
                }
                if self.headers {
                    lines.push(format!("< exchange {exchange} closed by the client"));
                }
            }
            // A new kind of step (the enum is non_exhaustive) has nothing to print yet.
            _ => {}
        }
        lines
    }
}

/// Takes one chunk of a body: SSE events are printed as they complete; a JSON body is kept
/// for its end, up to [`MAX_PENDING`].
fn body_chunk(body: &mut Body, chunk: &[u8], headers: bool, lines: &mut Vec<String>) {
    match body {
        Body::Json(buf) | Body::Other(buf) => {
            buf.extend_from_slice(chunk);
            if buf.len() > MAX_PENDING {
                lines.push(trace_line(WireDirection::Received, buf));
                *body = Body::Skipped;
            }
        }
        Body::Sse(decoder, framing) => {
            if headers {
                framing_lines(framing, chunk, lines);
            }
            decoder.decode(chunk, |item| sse_item(item, lines));
        }
        Body::Skipped => {}
    }
}

/// The end of a body: a JSON body is one message (or a batch), printed whole.
fn body_end(body: Body, headers: bool, lines: &mut Vec<String>) {
    match body {
        Body::Json(buf) if buf.iter().any(|b| !b.is_ascii_whitespace()) => {
            lines.push(trace_line(WireDirection::Received, &buf));
        }
        Body::Other(buf) if headers && !buf.is_empty() => {
            lines.push(format!("< body: {}", shown_text(&buf)));
        }
        Body::Sse(mut decoder, framing) => {
            if headers && !framing.is_empty() {
                lines.push(format!("< {}", shown_text(&framing)));
            }
            decoder.finish(|item| sse_item(item, lines));
        }
        _ => {}
    }
}

/// One decoded SSE item: a `message` event's data is a JSON-RPC message; other events
/// (the legacy transport's `endpoint`) are named.
fn sse_item(item: SseItem<'_>, lines: &mut Vec<String>) {
    match item {
        SseItem::Event(e) if e.event == "message" => {
            lines.push(trace_line(WireDirection::Received, e.data.as_bytes()));
        }
        SseItem::Event(e) => lines.push(format!(
            "<- (event {}) {}",
            redact::text(e.event),
            redact::url(e.data)
        )),
        SseItem::TooLarge { discarded, .. } => {
            lines.push(format!(
                "<- (an event of {discarded} bytes, over the limit, dropped)"
            ));
        }
        _ => {}
    }
}

/// `-vv`: the SSE lines of `chunk` as they arrived (`< data: …`), a partial last line kept
/// in `pending` for the next chunk (bounded by [`MAX_PENDING`]).
fn framing_lines(pending: &mut Vec<u8>, chunk: &[u8], lines: &mut Vec<String>) {
    pending.extend_from_slice(chunk);
    let mut start = 0;
    while let Some(nl) = pending[start..]
        .iter()
        .position(|&b| b == b'\n' || b == b'\r')
    {
        let line = &pending[start..start + nl];
        if !line.is_empty() {
            lines.push(format!("< {}", shown_text(line)));
        }
        start += nl + 1;
    }
    pending.drain(..start);
    if pending.len() > MAX_PENDING {
        lines.push(format!("< {}", shown_text(pending)));
        pending.clear();
    }
}

/// Runs a trace step so that a bug in it can never take the connection down: the tap runs
/// on the driver's task, and a panic there would end the session. A step that panics shows
/// one line saying so instead of its own (the default hook has already printed the panic).
fn shielded(step: impl FnOnce() -> Vec<String>) -> Vec<String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(step))
        .unwrap_or_else(|_| vec!["(this trace line could not be shown)".to_owned()])
}

/// Bytes as masked text, cut at [`MAX_SHOWN`] characters.
fn shown_text(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let masked = redact::text(&text);
    if masked.chars().count() > MAX_SHOWN {
        let cut: String = masked.chars().take(MAX_SHOWN).collect();
        format!("{cut}… ({} bytes)", bytes.len())
    } else {
        masked.into_owned()
    }
}

mod host_side;
pub use host_side::HostWire;

#[cfg(test)]
mod tests;
