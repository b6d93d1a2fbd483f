//! The `-v` trace of the host sessions a `--listen` bridge serves, from the bridge's side:
//! `<- {…}` each message a host sent (a POST's body), `-> {…}` each message it was sent (a
//! JSON answer, or each event of an SSE stream), each line marked with its session as the
//! session's [`Ui`] marks it. Fed by the HTTP server's wire tap ([`ServerWire`]).

use std::collections::HashMap;
use std::sync::Mutex;

use mcp_proto::framing::sse::{SseDecoder, SseItem};
use mcp_proto::server::http::{ResponseId, SessionKey};
use mcp_tokio::mcp_driver::WireDirection;
use mcp_tokio::server::http::ServerWire;

use super::{MAX_PENDING, shielded, trace_line};
use crate::app::ui::Ui;

/// The host sessions being traced, and the body of each of their open responses.
#[derive(Default)]
pub struct HostWire {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Each traced session's marked `Ui`.
    sessions: HashMap<SessionKey, Ui>,
    /// Each open response of a session: its session and how its body is read.
    open: HashMap<ResponseId, (SessionKey, Body)>,
    /// The lines of sessions not added yet: a session's `initialize` and its answer come
    /// before the bridge makes its handler (and its `Ui`). Bounded.
    pending: HashMap<SessionKey, Vec<String>>,
}

/// The most sessions whose lines wait for [`HostWire::add`], and the most lines each.
const MAX_PENDING_SESSIONS: usize = 64;
const MAX_PENDING_LINES: usize = 16;

/// How one response body is read.
enum Body {
    /// JSON: one message (or a batch), shown at its end.
    Json(Vec<u8>),
    /// SSE: each `message` event's data shown as it completes.
    Sse(Box<SseDecoder>),
    /// Past [`MAX_PENDING`], or not a body of messages: not shown.
    Skipped,
}

impl HostWire {
    /// Traces `session` on `ui` (marked with the session) until [`remove`](Self::remove).
    pub fn add(&self, session: SessionKey, ui: Ui) {
        let mut state = self.lock();
        if let Some(lines) = state.pending.remove(&session)
            && ui.verbose > 0
        {
            for line in lines {
                ui.note(&line);
            }
        }
        state.sessions.insert(session, ui);
    }

    /// Stops tracing `session` (it closed); its open responses go with it.
    pub fn remove(&self, session: SessionKey) {
        let mut state = self.lock();
        state.sessions.remove(&session);
        state.pending.remove(&session);
        state.open.retain(|_, (of, _)| *of != session);
    }

    /// One step of the server's traffic: its lines written on the session's `Ui` (kept for
    /// it when the session is not added yet).
    pub fn step(&self, step: ServerWire<'_>) {
        let mut state = self.lock();
        let Some((session, lines)) = session_lines(&mut state, step) else {
            return;
        };
        match state.sessions.get(&session) {
            Some(ui) if ui.verbose > 0 => {
                for line in lines {
                    ui.note(&line);
                }
            }
            Some(_) => {}
            None => {
                let room = state.pending.len() < MAX_PENDING_SESSIONS;
                if room || state.pending.contains_key(&session) {
                    let kept = state.pending.entry(session).or_default();
                    let left = MAX_PENDING_LINES.saturating_sub(kept.len());
                    kept.extend(lines.into_iter().take(left));
                }
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A poisoned lock only means a panic on another print; the state is still usable.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The session of `step` and its lines (`None`: a response the trace does not follow).
fn session_lines(state: &mut State, step: ServerWire<'_>) -> Option<(SessionKey, Vec<String>)> {
    let session = match step {
        ServerWire::Request { session, .. } | ServerWire::Head { session, .. } => session,
        ServerWire::Body { response, .. } | ServerWire::End { response } => {
            state.open.get(&response)?.0
        }
        _ => return None,
    };
    let lines = shielded(|| lines_of(state, session, step));
    Some((session, lines))
}

/// The lines of `step`, of `session`.
fn lines_of(state: &mut State, session: SessionKey, step: ServerWire<'_>) -> Vec<String> {
    let mut lines = Vec::new();
    match step {
        ServerWire::Request { body, .. } if body.iter().any(|b| !b.is_ascii_whitespace()) => {
            lines.push(trace_line(WireDirection::Received, body));
        }
        ServerWire::Head {
            response, headers, ..
        } => {
            let kind = headers
                .get("content-type")
                .unwrap_or_default()
                .to_ascii_lowercase();
            let body = if kind.starts_with("text/event-stream") {
                Body::Sse(Box::new(SseDecoder::with_max_event_size(MAX_PENDING)))
            } else if kind.contains("json") {
                Body::Json(Vec::new())
            } else {
                Body::Skipped
            };
            state.open.insert(response, (session, body));
        }
        ServerWire::Body { response, chunk } => {
            if let Some((_, body)) = state.open.get_mut(&response) {
                body_chunk(body, chunk, &mut lines);
            }
        }
        ServerWire::End { response } => {
            if let Some((_, body)) = state.open.remove(&response) {
                body_end(body, &mut lines);
            }
        }
        _ => {}
    }
    lines
}

fn body_chunk(body: &mut Body, chunk: &[u8], lines: &mut Vec<String>) {
    match body {
        Body::Json(buf) => {
            buf.extend_from_slice(chunk);
            if buf.len() > MAX_PENDING {
                lines.push(trace_line(WireDirection::Sent, buf));
                *body = Body::Skipped;
            }
        }
        Body::Sse(decoder) => decoder.decode(chunk, |item| sse_item(item, lines)),
        Body::Skipped => {}
    }
}

fn body_end(body: Body, lines: &mut Vec<String>) {
    match body {
        Body::Json(buf) if buf.iter().any(|b| !b.is_ascii_whitespace()) => {
            lines.push(trace_line(WireDirection::Sent, &buf));
        }
        Body::Sse(mut decoder) => decoder.finish(|item| sse_item(item, lines)),
        _ => {}
    }
}

/// A `message` event is one message sent; other events (priming, empty) are not messages.
fn sse_item(item: SseItem<'_>, lines: &mut Vec<String>) {
    match item {
        SseItem::Event(e) if e.event == "message" && !e.data.trim().is_empty() => {
            lines.push(trace_line(WireDirection::Sent, e.data.as_bytes()));
        }
        SseItem::TooLarge { discarded, .. } => {
            lines.push(format!(
                "-> (an event of {discarded} bytes, over the limit, not shown)"
            ));
        }
        _ => {}
    }
}
