//! `fault_server --http`: the same misbehaving server over Streamable HTTP on 127.0.0.1, for
//! the HTTP rows of the fault matrix. The HTTP layer is the driver's test kit
//! ([`ScriptedHttpServer`]: std threads, one exchange per connection). What the server does
//! as a valid one (sessions, the handshake, notifications, `ping`, `tools/list`, the tools in
//! `echo` mode, 404, 405, DELETE) is mcp-proto's [`HttpServer`](mcp_proto::server::http::HttpServer)
//! ([`valid`]); the mode applies to every `tools/call` of a live session ([`faults`]): instead
//! of the core's reply, or re-framing the messages the core produced. See `HELP_HTTP` and
//! `tests/README.md`.

mod faults;
mod valid;

use std::collections::HashMap;
use std::io::Write as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU32};
use std::time::Duration;

use mcp_driver::testing::http_server::{RecordedRequest, ScriptedHttpServer, ScriptedReply};
use mcp_proto::jsonrpc::{self, DecodedRef, MessageRef};

use crate::log::{Log, lock};
use valid::Valid;

/// The HTTP part of `--help`.
pub const HELP_HTTP: &str = "\
HTTP MODES (fault_server --http [--log PATH] <MODE> [ARG]):
    Serves Streamable HTTP at http://127.0.0.1:PORT/mcp on a free port of 127.0.0.1 only,
    prints `listening on <url>` as its first stdout line (and `# listening <url>` to the log),
    and runs until killed. initialize is answered with JSON and an Mcp-Session-Id
    (fault-1, fault-2, ...); notifications get 202; GET without Last-Event-ID gets 405 (no
    listener); DELETE ends the session; a request with an unknown session id gets 404, one
    without a session id (other than initialize) 400.
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
    /// The valid server.
    valid: Mutex<Valid>,
    /// Whether `expire_session` already expired one.
    expired: AtomicBool,
    /// Each broken-off SSE stream's events (framed, without the blank line), by stream key;
    /// the event at index `i` has id `<key>-<i+1>`.
    streams: Mutex<HashMap<String, Vec<String>>>,
    next_stream: AtomicU32,
}

/// Serves until the process is killed.
pub fn run(mode: HttpMode, log: Log) -> ! {
    log.event(&format!(
        "start pid {} http mode {mode:?}",
        std::process::id()
    ));
    let state = std::sync::Arc::new(State {
        mode,
        log: log.clone(),
        valid: Mutex::new(Valid::new(log.clone())),
        expired: AtomicBool::new(false),
        streams: Mutex::new(HashMap::new()),
        next_stream: AtomicU32::new(1),
    });
    let server = {
        let state = std::sync::Arc::clone(&state);
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
fn reply(state: &State, r: &RecordedRequest) -> ScriptedReply {
    let log = &state.log;
    if !r.body.is_empty() {
        // One line per record, whatever the body held.
        log.line(
            String::from_utf8_lossy(&r.body)
                .replace('\n', " ")
                .as_bytes(),
        );
    }
    let session = r.header("mcp-session-id");
    log.event(&format!(
        "{} {} session={} last-event-id={}",
        r.method,
        r.path,
        session.unwrap_or("-"),
        r.header("last-event-id").unwrap_or("-"),
    ));
    let live = session.and_then(|s| lock(&state.valid).session_named(s));
    if r.method.eq_ignore_ascii_case("GET")
        && let Some(last) = r.header("last-event-id")
    {
        // The resumption of the faults' own broken-off streams: their event ids are theirs.
        return match live {
            Some(_) => faults::resume(state, last),
            None => {
                log.event(&format!("404 unknown session {}", session.unwrap_or("-")));
                ScriptedReply::status(404)
            }
        };
    }
    if state.mode != HttpMode::Echo
        && r.method.eq_ignore_ascii_case("POST")
        && let (Some(key), Some(id)) = (live, tool_call_id(&r.body))
    {
        return faults::tool_call(state, r, key, &id);
    }
    lock(&state.valid).exchange(r).into_reply()
}

/// The id of a body that is one `tools/call` request, as JSON text.
fn tool_call_id(body: &[u8]) -> Option<String> {
    match jsonrpc::decode(body) {
        Ok(DecodedRef::Single(MessageRef::Request { id, method, .. }))
            if method == "tools/call" =>
        {
            Some(id.to_string())
        }
        _ => None,
    }
}
