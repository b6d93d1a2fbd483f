//! The HTTP faults, applied to every `tools/call` of a live session: replies instead of the
//! valid server's (404 with the session forgotten, 500, a stream that stays silent, bodies
//! too large to hold), or the messages the valid server produced framed the faulty way (one
//! huge event first; a stream broken off halfway, resumed or replayed on a `GET` with
//! `Last-Event-ID`). Hand-written on purpose: this is what a valid server never does.

use std::sync::atomic::Ordering;

use mcp_driver::testing::http_server::{RecordedRequest, ReplyOutcome, ScriptedReply};
use mcp_proto::server::http::SessionKey;

use super::{HttpMode, State};
use crate::log::{Log, lock};

/// The reply to a `tools/call` (JSON-RPC id `id`, as JSON text) of the live session `key`.
pub(super) fn tool_call(
    state: &State,
    r: &RecordedRequest,
    key: SessionKey,
    id: &str,
) -> ScriptedReply {
    let log = state.log.clone();
    let id = id.to_owned();
    match state.mode {
        HttpMode::ExpireSession if !state.expired.swap(true, Ordering::SeqCst) => {
            lock(&state.valid).forget(key);
            let session = r.header("mcp-session-id").unwrap_or("-");
            log.event(&format!("session {session} expired at request {id}"));
            ScriptedReply::status(404)
        }
        HttpMode::Status500 => ScriptedReply::status(500)
            .with_header("content-type", "text/plain")
            .with_body(
                format!("fault_server: internal error while handling request {id}").into_bytes(),
            ),
        HttpMode::SilentStream => ScriptedReply::sse(Vec::<String>::new())
            .held_silent()
            .on_done(move |o| {
                log.event(&format!(
                    "silent stream for request {id} ended, client hung up: {}",
                    o.hung_up
                ));
            }),
        HttpMode::HugeBody(mib) => {
            let prefix = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":""#
            );
            ScriptedReply::status(200)
                .with_header("content-type", "application/json")
                .with_generated_body(prefix.as_bytes(), b'a', mib << 20)
                .on_done(move |o| huge_done(&log, "body", &id, o))
        }
        HttpMode::HugeError(mib) => ScriptedReply::status(500)
            .with_header("content-type", "text/plain")
            .with_generated_body(b"fault_server: a huge error body ", b'e', mib << 20)
            .on_done(move |o| huge_done(&log, "error body", &id, o)),
        HttpMode::HugeEvent(mib) => {
            // The valid server's answer, after an event too large for any client to keep.
            let messages = lock(&state.valid).exchange(r).messages();
            let answer = messages.last().map_or("", String::as_str);
            let prefix = r#"data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":""#;
            let suffix = format!("\"}}}}\n\nid: {id}\ndata: {answer}\n\n");
            ScriptedReply::status(200)
                .with_header("content-type", "text/event-stream")
                .with_generated_body_then(prefix.as_bytes(), b'a', mib << 20, suffix.as_bytes())
                .on_done(move |o| huge_done(&log, "event", &id, o))
        }
        HttpMode::SseDrop | HttpMode::SseReplay => broken_stream(state, r, &id),
        // `echo`, and `expire_session` once it expired one: the valid server's reply.
        _ => lock(&state.valid).exchange(r).into_reply(),
    }
}

/// `sse_drop`, `sse_replay`: the valid server's messages (progress, then the answer) as
/// events `s<n>-1`, `s<n>-2`, ... after a priming event `s<n>-0` (retry 100 ms); the
/// connection breaks off after the first half of the progress events. The rest waits for a
/// `GET` with `Last-Event-ID` ([`resume`]).
fn broken_stream(state: &State, r: &RecordedRequest, id: &str) -> ScriptedReply {
    let messages = lock(&state.valid).exchange(r).messages();
    let key = format!("s{}", state.next_stream.fetch_add(1, Ordering::SeqCst));
    let mut events: Vec<String> = messages
        .iter()
        .enumerate()
        .map(|(i, m)| format!("id: {key}-{}\ndata: {m}", i + 1))
        .collect();
    let progress = messages.len().saturating_sub(1);
    let first = progress.div_ceil(2);
    lock(&state.streams).insert(key.clone(), events.clone());
    events.truncate(first);
    // The priming event: an id to resume from, and how soon.
    events.insert(0, format!("id: {key}-0\nretry: 100"));
    state.log.event(&format!(
        "stream {key} for request {id}: {first} events, then broken off"
    ));
    ScriptedReply::sse(events).broken_off()
}

fn huge_done(log: &Log, what: &str, id: &str, o: ReplyOutcome) {
    log.event(&format!(
        "huge {what} for request {id}: {} bytes written, client hung up: {}",
        o.body_bytes, o.hung_up
    ));
}

/// A GET with `Last-Event-ID: <key>-<n>`: the stream's events after `n` (`sse_drop`), or
/// every event from the first (`sse_replay`); 404 for a stream the server does not know.
pub(super) fn resume(state: &State, last: &str) -> ScriptedReply {
    let parsed = last
        .rsplit_once('-')
        .and_then(|(key, n)| Some((key, n.parse::<usize>().ok()?)));
    let events = parsed.and_then(|(key, n)| Some((lock(&state.streams).get(key)?.clone(), n)));
    let Some((events, seen)) = events else {
        state.log.event(&format!("404 unknown stream {last}"));
        return ScriptedReply::status(404);
    };
    let from = if state.mode == HttpMode::SseReplay {
        0
    } else {
        seen.min(events.len())
    };
    state.log.event(&format!(
        "resuming after {last}: {} events from index {from}",
        events.len() - from
    ));
    ScriptedReply::sse(events[from..].to_vec())
}
