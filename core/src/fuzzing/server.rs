//! Hostile client bytes and arbitrary host operations against a
//! [`StdioServerConnection`], with the server session's invariants checked after every step:
//! no panic; every server-to-client request completes exactly once, `Closed` comes once and
//! last; the open-request table, the line buffer and what is queued for a client that does
//! not read stay within their limits; `handle_timeout(now)` leaves no deadline at or before
//! `now`; every 2026 listen that opens closes exactly once, before `Closed`, and no more than
//! the cap are open.

use std::collections::HashMap;

use super::ops::Ops;
use crate::framing::lines::LineDecoder;
use crate::jsonrpc::{ErrorObject, empty_object, to_raw};
use crate::rpc::RequestHandle;
use crate::server::stdio::StdioServerConnection;
use crate::server::{ClientRequestId, Event, ListChanged, ServerConfig, ServerState};
use crate::session::RequestOptions;
use crate::time::{Duration, Instant};
use crate::types::{
    Implementation, LoggingLevel, ResourcesCapability, ServerCapabilities, ToolsCapability,
};

const LINE_LIMIT: usize = 512;
const OPEN_LIMIT: usize = 8;
const IN_FLIGHT_LIMIT: usize = 8;
const OUTBOUND_LIMIT: usize = 4096;

/// Client lines a fuzzer would take long to find; `{n}` is replaced by a byte of input.
const LINES: &[&str] = &[
    r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{},"sampling":{},"elicitation":{}},"clientInfo":{"name":"f","version":"0"}}}"#,
    r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"f","version":"0"}}}"#,
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#,
    r#"{"jsonrpc":"2.0","id":{n},"method":"tools/call","params":{"name":"t","_meta":{"progressToken":{n}}}}"#,
    r#"{"jsonrpc":"2.0","id":{n},"method":"tools/list"}"#,
    r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{n}}}"#,
    r#"{"jsonrpc":"2.0","id":{n},"method":"logging/setLevel","params":{"level":"error"}}"#,
    r#"{"jsonrpc":"2.0","id":{n},"method":"server/discover"}"#,
    r#"{"jsonrpc":"2.0","id":{n},"result":{}}"#,
    r#"{"jsonrpc":"2.0","id":{n},"error":{"code":-1,"message":"no"}}"#,
    r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":{n},"progress":1}}"#,
    r#"[{"jsonrpc":"2.0","id":{n},"method":"ping"},{"jsonrpc":"2.0","id":{n},"result":{}},3]"#,
    r#"{"jsonrpc":"2.0","error":{"code":1,"message":"x"}}"#,
    "Content-Length: 12",
    // Protocol 2026-07-28: discover, requests with the per-request envelope (valid, with
    // progress and a log level, an unknown version, a missing or malformed key), a removed
    // method, and `initialize` after the era was chosen.
    r#"{"jsonrpc":"2.0","id":{n},"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    r#"{"jsonrpc":"2.0","id":{n},"method":"tools/call","params":{"name":"t","_meta":{"progressToken":{n},"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},"io.modelcontextprotocol/clientInfo":{"name":"f","version":"0"},"io.modelcontextprotocol/logLevel":"debug"}}}"#,
    r#"{"jsonrpc":"2.0","id":{n},"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    r#"{"jsonrpc":"2.0","id":{n},"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"1900-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    r#"{"jsonrpc":"2.0","id":{n},"method":"tools/call","params":{"name":"t","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
    r#"{"jsonrpc":"2.0","id":{n},"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":{n},"io.modelcontextprotocol/clientInfo":[]}}}"#,
    r#"{"jsonrpc":"2.0","id":{n},"method":"ping","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    r#"{"jsonrpc":"2.0","id":{n},"method":"tools/list","params":{"_meta":[{n}]}}"#,
    // `subscriptions/listen`: valid, with junk params, without an envelope; its cancel.
    r#"{"jsonrpc":"2.0","id":{n},"method":"subscriptions/listen","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"notifications":{"toolsListChanged":true,"resourceSubscriptions":["a:{n}"]}}}"#,
    r#"{"jsonrpc":"2.0","id":{n},"method":"subscriptions/listen","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"notifications":{n}}}"#,
    r#"{"jsonrpc":"2.0","id":{n},"method":"subscriptions/listen","params":{"notifications":{}}}"#,
    r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{n},"reason":"enough"}}"#,
];

/// Open listens per session in the fuzzed configuration.
const LISTEN_LIMIT: usize = 3;

struct Model {
    conn: StdioServerConnection,
    now: Instant,
    /// Server-to-client handles issued, and whether each completed.
    issued: HashMap<RequestHandle, bool>,
    order: Vec<RequestHandle>,
    /// Client requests the host may answer.
    open: Vec<ClientRequestId>,
    closed: usize,
    /// Requests handed over with a 2026 envelope.
    modern_requests: usize,
    /// Listens opened (`true`) and closed (`false`), by token.
    listens: HashMap<ClientRequestId, bool>,
}

impl Model {
    fn feed(&mut self, bytes: &[u8], chunk: usize) {
        for part in bytes.chunks(chunk.max(1)) {
            self.conn.handle_bytes(self.now, part);
        }
        assert!(
            self.conn.buffered_len() <= LINE_LIMIT + 1,
            "line buffer bounded"
        );
    }

    fn events(&mut self) {
        while let Some(event) = self.conn.poll_event() {
            assert_eq!(self.closed, 0, "an event after Closed: {event:?}");
            match event {
                Event::Request { id, envelope, .. } => {
                    // Only a session in the 2026 era hands requests over with an envelope.
                    let modern = self.conn.session().state() == ServerState::PerRequest;
                    assert_eq!(envelope.is_some(), modern, "an envelope outside the era");
                    self.modern_requests += usize::from(modern);
                    self.open.push(id);
                }
                Event::RequestCancelled { id, .. } => self.open.retain(|&o| o != id),
                Event::Completed { handle, .. } => {
                    let done = self
                        .issued
                        .get_mut(&handle)
                        .expect("a completion for a handle that was issued");
                    assert!(!*done, "{handle} completed twice");
                    *done = true;
                }
                Event::ListenOpened { id, .. } => {
                    assert!(
                        self.listens.insert(id, true).is_none(),
                        "a listen token reused"
                    );
                }
                Event::ListenClosed { id, .. } => {
                    let open = self
                        .listens
                        .get_mut(&id)
                        .expect("a close of an opened listen");
                    assert!(*open, "{id} closed twice");
                    *open = false;
                }
                Event::Closed { .. } => {
                    self.closed += 1;
                    assert!(
                        self.listens.values().all(|&open| !open),
                        "Closed before a listen's close"
                    );
                    assert!(
                        self.issued.values().all(|&d| d),
                        "Closed before a completion"
                    );
                }
                _ => {}
            }
        }
        let session = self.conn.session();
        assert!(session.open_client_requests() <= OPEN_LIMIT);
        assert!(session.in_flight() <= IN_FLIGHT_LIMIT);
        assert!(session.open_listens() <= LISTEN_LIMIT);
        let open = self.listens.values().filter(|&&open| open).count();
        assert_eq!(
            session.open_listens(),
            open,
            "the listens table and its events agree"
        );
    }

    /// Reads what the server queued; it is bounded even when the client reads rarely.
    fn read(&mut self) {
        let mut out = Vec::new();
        while self.conn.poll_transmit(&mut out).is_some() {}
        // The session's own answers and the host's messages stop at the limit; the host's
        // answers are never refused but are one per open request.
        assert!(
            out.len() <= 4 * OUTBOUND_LIMIT + 16 * 1024,
            "{} bytes queued",
            out.len()
        );
        for line in out.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            let value: serde_json::Value =
                serde_json::from_slice(line).expect("the server sends valid JSON lines");
            assert_eq!(value["jsonrpc"], "2.0");
        }
    }
}

/// The fuzz body: hostile client bytes (realistic lines with fuzzer-chosen ids, and raw
/// bytes) interleaved with host operations, in fuzzer-chosen chunks.
pub fn server_ops(data: &[u8]) {
    run(data);
}

/// What a run reached, for the scripted tests that check the paths are reachable.
pub(super) struct Reached {
    /// Requests handed to the host with a 2026 envelope.
    pub(super) modern_requests: usize,
    /// Listens opened (each also closed: the run checks it).
    pub(super) listens: usize,
}

/// [`server_ops`], returning what it reached.
pub(super) fn run(data: &[u8]) -> Reached {
    let config = ServerConfig::new(Implementation::new("fuzz", "0"))
        .with_capabilities(ServerCapabilities {
            tools: Some(ToolsCapability {
                list_changed: Some(true),
                ..ToolsCapability::default()
            }),
            resources: Some(ResourcesCapability {
                subscribe: Some(true),
                ..ResourcesCapability::default()
            }),
            logging: Some(Default::default()),
            ..ServerCapabilities::default()
        })
        .with_limits(OPEN_LIMIT, IN_FLIGHT_LIMIT, OUTBOUND_LIMIT)
        .with_listen_limits(LISTEN_LIMIT, 4);
    let now = Instant::now();
    let mut m = Model {
        conn: StdioServerConnection::with_decoder(
            config,
            LineDecoder::with_max_line_len(LINE_LIMIT),
            now,
        ),
        now,
        issued: HashMap::new(),
        order: Vec::new(),
        open: Vec::new(),
        closed: 0,
        modern_requests: 0,
        listens: HashMap::new(),
    };
    let mut ops = Ops { data };
    while !ops.done() {
        let op = ops.byte() % 13;
        let arg = ops.byte();
        match op {
            0 | 1 => {
                let line = LINES[usize::from(arg) % LINES.len()];
                let n = (ops.byte() % 12).to_string();
                let line = format!("{}\n", line.replace("{n}", &n));
                let chunk = usize::from(ops.byte()) + 1;
                m.feed(line.as_bytes(), chunk);
            }
            2 => {
                let raw = ops.bytes(96).to_vec();
                m.feed(&raw, usize::from(arg) + 1);
            }
            3 | 4 if !m.open.is_empty() => {
                let id = m.open.remove(usize::from(arg) % m.open.len());
                let now = m.now;
                let session = m.conn.session_mut();
                let answered = if op == 3 {
                    session.respond(now, id, empty_object())
                } else {
                    session.respond_error(now, id, ErrorObject::new(-1, "host error"))
                };
                assert!(answered.is_ok() || session.is_closed(), "{answered:?}");
                // A second answer is refused, never sent.
                assert!(session.respond(now, id, empty_object()).is_err());
            }
            5 => {
                let method = [
                    "ping",
                    "roots/list",
                    "sampling/createMessage",
                    "elicitation/create",
                    "x/y",
                ][usize::from(arg) % 5];
                let mut options = RequestOptions::new()
                    .timeout(Duration::from_millis(u64::from(ops.byte()) * 10 + 1));
                if arg & 0x80 != 0 {
                    options = options.progress();
                }
                let now = m.now;
                if let Ok(handle) = m
                    .conn
                    .session_mut()
                    .send_request(now, method, None, options)
                {
                    assert!(m.issued.insert(handle, false).is_none(), "a handle reused");
                    m.order.push(handle);
                }
            }
            6 if !m.order.is_empty() => {
                let handle = m.order[usize::from(arg) % m.order.len()];
                let now = m.now;
                let _ = m.conn.session_mut().cancel(now, handle, None);
            }
            7 => {
                m.now += Duration::from_millis(u64::from(arg) * 10);
                let now = m.now;
                m.conn.handle_timeout(now);
                if let Some(next) = m.conn.poll_timeout() {
                    assert!(next > now, "a due deadline survived handle_timeout");
                }
            }
            8 if !m.open.is_empty() => {
                let id = m.open[usize::from(arg) % m.open.len()];
                let now = m.now;
                let session = m.conn.session_mut();
                let _ = session.notify_progress(now, id, f64::from(ops.byte()), None, None);
                // A log entry about the request (2026: only when its envelope asked).
                // Invariant: a string is JSON.
                let data = to_raw("about it").expect("a string serializes");
                let _ = session.log_for(now, id, LoggingLevel::Warning, None, &data);
            }
            9 => {
                let now = m.now;
                let session = m.conn.session_mut();
                let _ = session.notify_list_changed(now, ListChanged::Tools);
                let _ = session.notify_resource_updated(now, &format!("a:{}", arg % 12));
                // The host ends a listen now and then (a stale token is its race).
                let listens: Vec<ClientRequestId> = m.listens.keys().copied().collect();
                if arg & 1 == 1 && !listens.is_empty() {
                    let id = listens[usize::from(arg) % listens.len()];
                    let _ = m.conn.session_mut().close_listen(now, id);
                }
                let session = m.conn.session_mut();
                // Invariant: a string is JSON.
                let data = to_raw("entry").expect("a string serializes");
                let _ = session.log(now, LoggingLevel::Info, None, &data);
            }
            10 => m.read(),
            11 => {
                let now = m.now;
                m.conn.handle_eof(now, None);
            }
            12 => {
                let now = m.now;
                m.conn.close(now);
            }
            _ => {}
        }
        m.events();
    }
    let now = m.now;
    m.conn.close(now);
    m.events();
    m.read();
    assert_eq!(m.closed, 1, "Closed comes once");
    assert!(
        m.issued.values().all(|&done| done),
        "every request completed"
    );
    assert!(m.listens.values().all(|&open| !open), "every listen closed");
    Reached {
        modern_requests: m.modern_requests,
        listens: m.listens.len(),
    }
}
