//! `fault_server --http`: the same misbehaving server over Streamable HTTP on 127.0.0.1, for
//! the HTTP rows of the fault matrix. The HTTP layer is the driver's test kit
//! ([`ScriptedHttpServer`]: std threads, one exchange per connection); this file decides the
//! replies. The handshake, notifications, `ping` and `tools/list` are always answered
//! normally; the mode applies to every `tools/call`. See `HELP_HTTP` and `tests/README.md`.

use std::collections::{HashMap, HashSet};
use std::io::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_driver::testing::http_server::{
    RecordedRequest, ReplyOutcome, ScriptedHttpServer, ScriptedReply,
};
use serde_json::{Value, json};

use crate::log::{Log, lock};

/// The HTTP part of `--help`.
pub const HELP_HTTP: &str = "\
HTTP MODES (fault_server --http [--log PATH] <MODE> [ARG]):
    Serves Streamable HTTP at http://127.0.0.1:PORT/mcp on a free port of 127.0.0.1 only,
    prints `listening on <url>` as its first stdout line (and `# listening <url>` to the log),
    and runs until killed. initialize is answered with JSON and an Mcp-Session-Id
    (fault-1, fault-2, ...); notifications get 202; GET without Last-Event-ID gets 405 (no
    listener); DELETE ends the session; a request with an unknown session id gets 404.
    ping and tools/list are always answered; the mode applies to every tools/call.
    echo                   Well-behaved: JSON answers; `progress` answers on an SSE stream.
    expire_session         The first tools/call gets 404 and its session is forgotten; later
                           sessions live (the client must re-initialize and send it again).
    status_500             tools/call gets 500 with a text body naming the request id.
    sse_drop               tools/call answers on an SSE stream: a priming event (id, retry 100)
                           and the first half of the progress events, then the connection is
                           broken off. A GET with Last-Event-ID gets the events after that id.
    sse_replay             Like sse_drop, but the resuming GET replays every event from the
                           first (already seen ones again), then the rest and the answer.
    silent_stream          tools/call gets 200 text/event-stream and then nothing at all, until
                           the client hangs up (`# silent stream ... hung up: true` in the log).
    huge_body <MiB>        tools/call gets 200 application/json of MiB mebibytes (default 1024),
                           made while written (never in memory); the log says how much was
                           written before the client hung up.
    huge_error <MiB>       The same as a 500 text/plain body.
    huge_event <MiB>       tools/call gets 200 text/event-stream: first one SSE event of MiB
                           mebibytes (a log notification whose data never ends before the
                           limit; made while written), then the real answer as a second event.
";

/// The fault applied to `tools/call`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpMode {
    Echo,
    ExpireSession,
    Status500,
    SseDrop,
    SseReplay,
    SilentStream,
    HugeBody(u64),
    HugeError(u64),
    HugeEvent(u64),
}

impl HttpMode {
    /// Parses `<MODE> [ARG]`.
    pub fn parse(name: &str, arg: Option<&str>) -> Result<Self, String> {
        let mib = || -> Result<u64, String> {
            arg.map_or(Ok(1024), |a| {
                a.parse().map_err(|_| format!("{name}: not a number: {a}"))
            })
        };
        Ok(match name {
            "echo" => HttpMode::Echo,
            "expire_session" => HttpMode::ExpireSession,
            "status_500" => HttpMode::Status500,
            "sse_drop" => HttpMode::SseDrop,
            "sse_replay" => HttpMode::SseReplay,
            "silent_stream" => HttpMode::SilentStream,
            "huge_body" => HttpMode::HugeBody(mib()?),
            "huge_error" => HttpMode::HugeError(mib()?),
            "huge_event" => HttpMode::HugeEvent(mib()?),
            other => return Err(format!("unknown HTTP mode {other:?} (see --help)")),
        })
    }
}

/// What the server remembers across exchanges.
struct State {
    mode: HttpMode,
    log: Log,
    /// Live session ids.
    sessions: Mutex<HashSet<String>>,
    next_session: AtomicU32,
    /// Whether `expire_session` already expired one.
    expired: AtomicBool,
    /// Each SSE reply stream's events (framed, without the blank line), by stream key; the
    /// event at index `i` has id `<key>-<i+1>`.
    streams: Mutex<HashMap<String, Vec<String>>>,
    next_stream: AtomicU32,
}

/// Serves until the process is killed.
pub fn run(mode: HttpMode, log: Log) -> ! {
    log.event(&format!(
        "start pid {} http mode {mode:?}",
        std::process::id()
    ));
    let state = Arc::new(State {
        mode,
        log: log.clone(),
        sessions: Mutex::new(HashSet::new()),
        next_session: AtomicU32::new(1),
        expired: AtomicBool::new(false),
        streams: Mutex::new(HashMap::new()),
        next_stream: AtomicU32::new(1),
    });
    let server = {
        let state = Arc::clone(&state);
        ScriptedHttpServer::start(move |r| reply(&state, r))
    };
    let url = server.url("/mcp");
    log.event(&format!("listening {url}"));
    println!("listening on {url}");
    let _ = std::io::stdout().flush();
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}

/// The reply to one exchange; every request is logged first.
fn reply(state: &Arc<State>, r: &RecordedRequest) -> ScriptedReply {
    let log = &state.log;
    if !r.body.is_empty() {
        // One line per record, whatever the body held.
        log.line(
            String::from_utf8_lossy(&r.body)
                .replace('\n', " ")
                .as_bytes(),
        );
    }
    let session = r.header("mcp-session-id").map(str::to_owned);
    log.event(&format!(
        "{} {} session={} last-event-id={}",
        r.method,
        r.path,
        session.as_deref().unwrap_or("-"),
        r.header("last-event-id").unwrap_or("-"),
    ));
    let live = |s: &Option<String>| {
        s.as_ref()
            .is_some_and(|s| lock(&state.sessions).contains(s))
    };
    match r.method.as_str() {
        "DELETE" => {
            if let Some(s) = &session {
                lock(&state.sessions).remove(s);
            }
            ScriptedReply::status(200)
        }
        "GET" => match r.header("last-event-id") {
            None => ScriptedReply::status(405),
            Some(_) if !live(&session) => not_found(log, session.as_deref()),
            Some(last) => resume(state, last),
        },
        "POST" => {
            let Some(body) = r.json() else {
                return ScriptedReply::status(400);
            };
            let method = body.get("method").and_then(Value::as_str);
            if method == Some("initialize") {
                let id = format!(
                    "fault-{}",
                    state.next_session.fetch_add(1, Ordering::SeqCst)
                );
                lock(&state.sessions).insert(id.clone());
                let version = body["params"]["protocolVersion"]
                    .as_str()
                    .unwrap_or("2025-11-25");
                let result = json!({"protocolVersion": version,
                    "capabilities": {"tools": {"listChanged": false}},
                    "serverInfo": {"name": "fault_server", "version": "0.1.0"}});
                return ScriptedReply::json(&rpc_result(&body, result))
                    .with_header("mcp-session-id", &id);
            }
            if !live(&session) {
                return not_found(log, session.as_deref());
            }
            let (Some(method), Some(_)) = (method, body.get("id")) else {
                // A notification, or an answer to a server request.
                return ScriptedReply::status(202);
            };
            match method {
                "ping" => ScriptedReply::json(&rpc_result(&body, json!({}))),
                "tools/list" => ScriptedReply::json(&rpc_result(&body, tool_list())),
                "tools/call" => tool_call(state, &body, session.as_deref().unwrap_or("")),
                other => ScriptedReply::json(&json!({"jsonrpc": "2.0", "id": body["id"],
                    "error": {"code": -32601, "message": format!("method not found: {other}")}})),
            }
        }
        _ => ScriptedReply::status(405),
    }
}

fn not_found(log: &Log, session: Option<&str>) -> ScriptedReply {
    log.event(&format!("404 unknown session {}", session.unwrap_or("-")));
    ScriptedReply::status(404)
}

fn rpc_result(request: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": request["id"], "result": result})
}

fn text(s: impl Into<String>) -> Value {
    json!({"content": [{"type": "text", "text": s.into()}]})
}

fn tool_list() -> Value {
    let n = json!({"type": "integer"});
    json!({"tools": [
        {"name": "echo", "description": "Returns the message",
         "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}}},
        {"name": "add", "description": "Returns a + b",
         "inputSchema": {"type": "object", "properties": {"a": n, "b": n}}},
        {"name": "progress", "description": "Sends progress steps, then answers",
         "inputSchema": {"type": "object", "properties": {"steps": n}}},
    ]})
}

/// What a tool answers: its progress notifications (when the request has a token) and its
/// result (or a JSON-RPC error), as JSON-RPC messages.
fn run_tool(request: &Value) -> (Vec<Value>, Value) {
    let params = &request["params"];
    let args = &params["arguments"];
    let name = params["name"].as_str().unwrap_or("");
    let error = |message: String| {
        json!({"jsonrpc": "2.0", "id": request["id"],
               "error": {"code": -32602, "message": message}})
    };
    match name {
        "echo" => (
            Vec::new(),
            rpc_result(request, text(args["message"].as_str().unwrap_or(""))),
        ),
        "add" => match (args["a"].as_i64(), args["b"].as_i64()) {
            (Some(a), Some(b)) => (
                Vec::new(),
                rpc_result(request, text(a.saturating_add(b).to_string())),
            ),
            _ => (Vec::new(), error("add needs integers a and b".into())),
        },
        "progress" => {
            let steps = args["steps"].as_u64().unwrap_or(3);
            let progress = match params.pointer("/_meta/progressToken") {
                Some(token) => (1..=steps)
                    .map(|i| {
                        json!({"jsonrpc": "2.0", "method": "notifications/progress",
                           "params": {"progressToken": token, "progress": i, "total": steps,
                                      "message": format!("step {i}")}})
                    })
                    .collect(),
                None => Vec::new(),
            };
            (
                progress,
                rpc_result(request, text(format!("{steps} steps done"))),
            )
        }
        other => (Vec::new(), error(format!("unknown tool {other:?}"))),
    }
}

fn tool_call(state: &Arc<State>, request: &Value, session: &str) -> ScriptedReply {
    let log = state.log.clone();
    let id = request["id"].to_string();
    match state.mode {
        HttpMode::ExpireSession if !state.expired.swap(true, Ordering::SeqCst) => {
            lock(&state.sessions).remove(session);
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
        HttpMode::HugeEvent(mib) => {
            let (_, answer) = run_tool(request);
            let prefix = r#"data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":""#;
            let suffix = format!("\"}}}}\n\nid: {id}\ndata: {answer}\n\n");
            ScriptedReply::status(200)
                .with_header("content-type", "text/event-stream")
                .with_generated_body_then(prefix.as_bytes(), b'a', mib << 20, suffix.as_bytes())
                .on_done(move |o| huge_done(&log, "event", &id, o))
        }
        HttpMode::HugeError(mib) => ScriptedReply::status(500)
            .with_header("content-type", "text/plain")
            .with_generated_body(b"fault_server: a huge error body ", b'e', mib << 20)
            .on_done(move |o| huge_done(&log, "error body", &id, o)),
        HttpMode::SseDrop | HttpMode::SseReplay => {
            let (progress, answer) = run_tool(request);
            let key = format!("s{}", state.next_stream.fetch_add(1, Ordering::SeqCst));
            let mut events: Vec<String> = progress
                .iter()
                .chain([&answer])
                .enumerate()
                .map(|(i, m)| format!("id: {key}-{}\ndata: {m}", i + 1))
                .collect();
            let first = progress.len().div_ceil(2);
            lock(&state.streams).insert(key.clone(), events.clone());
            events.truncate(first);
            // The priming event: an id to resume from, and how soon.
            events.insert(0, format!("id: {key}-0\nretry: 100"));
            log.event(&format!(
                "stream {key} for request {id}: {first} events, then broken off"
            ));
            ScriptedReply::sse(events).broken_off()
        }
        _ => {
            let (progress, answer) = run_tool(request);
            if progress.is_empty() {
                return ScriptedReply::json(&answer);
            }
            ScriptedReply::sse(progress.iter().chain([&answer]).map(ScriptedReply::data))
        }
    }
}

fn huge_done(log: &Log, what: &str, id: &str, o: ReplyOutcome) {
    log.event(&format!(
        "huge {what} for request {id}: {} bytes written, client hung up: {}",
        o.body_bytes, o.hung_up
    ));
}

/// A GET with `Last-Event-ID: <key>-<n>`: the stream's events after `n` (`sse_drop`), or
/// every event from the first (`sse_replay`); 404 for a stream the server does not know.
fn resume(state: &State, last: &str) -> ScriptedReply {
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
