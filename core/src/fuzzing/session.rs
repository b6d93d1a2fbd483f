//! Arbitrary operation sequences against a [`StdioConnection`], with the session's invariants
//! checked after every step.

use std::collections::HashMap;

use super::ops::Ops;
use super::session_tasks::{self, Tasks};
use crate::framing::lines::LineDecoder;
use crate::session::{Event, RequestHandle, RequestOptions, SessionConfig};
use crate::stdio::StdioConnection;
use crate::time::{Duration, Instant};
use crate::types::{
    ClientCapabilities, ElicitationCapability, Implementation, RootsCapability,
    TaskRequestsCapability, TasksCapability,
};

const LINE_LIMIT: usize = 512;
const VERSIONS: [&str; 6] = [
    "2025-11-25",
    "2025-06-18",
    "2025-03-26",
    "2024-11-05",
    "2099-01-01",
    "",
];

/// The harness state: what the model expects of the session.
struct Model {
    conn: StdioConnection,
    now: Instant,
    /// Handles issued and whether they completed.
    issued: HashMap<RequestHandle, bool>,
    /// Wire ids seen on the wire, per handle (the server answers these).
    wire: Vec<(RequestHandle, serde_json::Value, bool)>,
    server_requests: Vec<crate::session::InboundRequestId>,
    closed_events: usize,
    next_server_id: u64,
    /// Task calls, the tasks they created (each followed by a poller), detached requests.
    tasks: Tasks,
}

impl Model {
    fn drain(&mut self) {
        let mut buf = Vec::new();
        while let Some(out) = self.conn.poll_transmit(&mut buf) {
            // Invariant: one message, one line, valid JSON.
            let line = buf
                .strip_suffix(b"\n")
                .expect("every message ends with a newline");
            assert!(!line.contains(&b'\n'), "a message spans one line");
            let value: serde_json::Value =
                serde_json::from_slice(line).expect("the session sends valid JSON");
            if let (Some(h), Some(id)) = (out.request, value.get("id")) {
                let progress = value.pointer("/params/_meta/progressToken").is_some();
                self.wire.push((h, id.clone(), progress));
            } else if let (None, Some(id), Some("tasks/cancel")) =
                (out.request, value.get("id"), out.method.as_deref())
            {
                // A detached request: a wire id, no handle.
                self.tasks.note_detached(id.clone());
            }
            buf.clear();
        }
        while let Some(e) = self.conn.poll_event() {
            // The connection's own events (a respawn) need no bookkeeping here.
            let crate::connection::Event::Session(e) = e else {
                continue;
            };
            match e {
                Event::Completed { handle, result } => {
                    if let Ok(raw) = &result {
                        // A result may be located but not parsed (checked when read): reading
                        // it, whatever it holds, gives a value or an error.
                        let _ = raw.decode::<serde_json::Value>();
                        if let Ok(checked) = raw.to_raw() {
                            assert_eq!(checked.get(), raw.get().trim(), "{raw:?}");
                            self.tasks.completed(handle, checked, self.now);
                        }
                    }
                    let done = self
                        .issued
                        .get_mut(&handle)
                        .expect("completion for a handle that was issued");
                    assert!(!*done, "request {handle} completed twice");
                    *done = true;
                }
                Event::ServerRequest { id, .. } => self.server_requests.push(id),
                Event::Closed { .. } => {
                    assert_eq!(self.closed_events, 0, "Closed is emitted once");
                    assert!(
                        self.issued.values().all(|&d| d),
                        "Closed comes after every completion"
                    );
                    self.closed_events += 1;
                }
                _ => {}
            }
        }
        assert!(self.conn.buffered_len() <= LINE_LIMIT + 1);
    }

    fn feed(&mut self, line: &[u8], split: u8) {
        // Cut the line at a fuzzer-chosen point: the framing must not care.
        let cut = (split as usize).min(line.len());
        self.conn.handle_bytes(self.now, &line[..cut]);
        self.conn.handle_bytes(self.now, &line[cut..]);
        self.conn.handle_bytes(self.now, b"\n");
    }

    fn pick_wire(&self, n: u8) -> Option<&(RequestHandle, serde_json::Value, bool)> {
        if self.wire.is_empty() {
            None
        } else {
            self.wire.get(n as usize % self.wire.len())
        }
    }
}

/// Runs the operation sequence encoded in `data` and checks, after every step: every request
/// completes at most once and, by the end, exactly once; `Closed` comes once, after the
/// completions; right after `handle_timeout(now)`, `poll_timeout()` is `None` or later than
/// `now`; the line buffer stays within its limit; every message sent is one line of JSON.
/// Panics on a violated invariant (that is the finding).
pub fn session_ops(data: &[u8]) {
    let mut ops = Ops { data };
    let mut config = SessionConfig::new(Implementation::new("fuzz", "0"));
    let declared = |key: &str| {
        let mut m = serde_json::Map::new();
        m.insert(key.to_owned(), serde_json::json!({}));
        Some(m)
    };
    config.capabilities = ClientCapabilities {
        roots: Some(RootsCapability::default()),
        elicitation: Some(ElicitationCapability::default()),
        // A task receiver for sampling and elicitation, so task-augmented server requests
        // take that path.
        tasks: Some(TasksCapability {
            list: Some(serde_json::Map::new()),
            cancel: Some(serde_json::Map::new()),
            requests: Some(TaskRequestsCapability {
                sampling: declared("createMessage"),
                elicitation: declared("create"),
                ..TaskRequestsCapability::default()
            }),
            ..TasksCapability::default()
        }),
        ..ClientCapabilities::default()
    };
    config.max_queued = 8;
    config.max_in_flight = 16;
    config.max_server_requests = 4;
    let t0 = Instant::now();
    let mut m = Model {
        conn: StdioConnection::with_decoder(config, LineDecoder::with_max_line_len(LINE_LIMIT), t0),
        now: t0,
        issued: HashMap::new(),
        wire: Vec::new(),
        server_requests: Vec::new(),
        closed_events: 0,
        next_server_id: 0,
        tasks: Tasks::default(),
    };
    m.drain();
    // Most runs start with a good handshake, so that the rest of the ops reach a ready session;
    // a quarter with a server of 2025-11-25 that runs tasks.
    let handshake = ops.byte() % 4;
    if handshake != 0 {
        let line: &[u8] = if handshake == 1 {
            session_tasks::TASKS_INITIALIZE
        } else {
            br#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"f","version":"1"}}}"#
        };
        let split = ops.byte();
        m.feed(line, split);
        m.drain();
    }
    let mut steps = 0;
    while !ops.done() && steps < 256 {
        steps += 1;
        match ops.byte() % 20 {
            0 => {
                let version = VERSIONS[ops.byte() as usize % VERSIONS.len()];
                let line = format!(
                    r#"{{"jsonrpc":"2.0","id":0,"result":{{"protocolVersion":"{version}","capabilities":{{}},"serverInfo":{{"name":"f","version":"1"}}}}}}"#
                );
                let split = ops.byte();
                m.feed(line.as_bytes(), split);
            }
            1 | 2 => {
                let flags = ops.byte();
                let mut opts = RequestOptions::new();
                match flags % 4 {
                    0 => {}
                    1 => opts = opts.no_timeout(),
                    _ => opts = opts.timeout(Duration::from_millis(u64::from(ops.u16()))),
                }
                if flags & 4 != 0 {
                    opts = opts.progress();
                }
                if flags & 8 != 0 {
                    opts =
                        opts.reset_timeout_on_progress(Duration::from_millis(u64::from(ops.u16())));
                }
                let method = ["tools/call", "ping", "tools/list"][(flags >> 4) as usize % 3];
                let now = m.now;
                if let Ok(h) = m.conn.session_mut().send_request(now, method, None, opts) {
                    assert!(m.issued.insert(h, false).is_none(), "handles are unique");
                }
            }
            3 => {
                if let Some((_, id, _)) = m.pick_wire(ops.byte()).cloned() {
                    let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"ok":true}}}}"#);
                    let split = ops.byte();
                    m.feed(line.as_bytes(), split);
                }
            }
            4 => {
                if let Some((_, id, _)) = m.pick_wire(ops.byte()).cloned() {
                    let line = format!(
                        r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32000,"message":"no"}}}}"#
                    );
                    let split = ops.byte();
                    m.feed(line.as_bytes(), split);
                }
            }
            5 => {
                if let Some((h, _, _)) = m.pick_wire(ops.byte()).cloned() {
                    let progress = ops.byte();
                    let params =
                        format!(r#"{{"progressToken":{},"progress":{progress}}}"#, h.get());
                    // The canonical member order or `jsonrpc` last (the TypeScript SDK's):
                    // both compact, so both read by `jsonrpc::compact`.
                    let line = if ops.byte().is_multiple_of(2) {
                        format!(
                            r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{params}}}"#
                        )
                    } else {
                        format!(
                            r#"{{"method":"notifications/progress","params":{params},"jsonrpc":"2.0"}}"#
                        )
                    };
                    m.feed(line.as_bytes(), 0);
                }
            }
            6 => {
                let handles: Vec<_> = m.issued.keys().copied().collect();
                if !handles.is_empty() {
                    let h = handles[ops.byte() as usize % handles.len()];
                    let now = m.now;
                    let _ = m.conn.session_mut().cancel(now, h, None);
                }
            }
            7 => {
                // Every kind of the session's descriptor table, and one it does not know; the
                // first four in the order the scripted sequences (`fuzzing::tests`) rely on.
                let first = [
                    "roots/list",
                    "elicitation/create",
                    "sampling/createMessage",
                    "ping",
                ];
                let rest =
                    crate::session::server_requests::methods().filter(|m| !first.contains(m));
                let methods: Vec<_> = first.into_iter().chain(rest).chain(["no/such"]).collect();
                let method = methods[ops.byte() as usize % methods.len()];
                m.next_server_id += 1;
                let line = format!(
                    r#"{{"jsonrpc":"2.0","id":"s{}","method":"{method}","params":{{}}}}"#,
                    m.next_server_id % 6
                );
                m.feed(line.as_bytes(), ops.byte());
            }
            8 if !m.server_requests.is_empty() => {
                let i = ops.byte() as usize % m.server_requests.len();
                let id = m.server_requests.swap_remove(i);
                let now = m.now;
                let _ = m
                    .conn
                    .session_mut()
                    .respond(now, id, Ok(crate::jsonrpc::empty_object()));
            }
            9 => {
                let line = format!(
                    r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":"s{}"}}}}"#,
                    ops.byte() % 6
                );
                m.feed(line.as_bytes(), 0);
            }
            10 => {
                // Raw peer bytes: garbage, partial JSON, huge lines, batches.
                let raw = ops.bytes(255).to_vec();
                let now = m.now;
                m.conn.handle_bytes(now, &raw);
            }
            11 => {
                let ms = u64::from(ops.u16()) * u64::from(ops.byte() % 8 + 1);
                m.now += Duration::from_millis(ms);
                let now = m.now;
                m.conn.handle_timeout(now);
                if let Some(t) = m.conn.poll_timeout() {
                    assert!(t > now, "deadline {t:?} is not after now {now:?}");
                }
            }
            // Ending the session is rare, so that long sequences stay interesting.
            12 if ops.byte() < 8 => {
                let now = m.now;
                m.conn.session_mut().close(now);
            }
            13 if ops.byte() < 8 => {
                let now = m.now;
                m.conn.handle_eof(now, Some("fuzz eof".into()));
            }
            // Tasks (2025-11-25): see `session_tasks`.
            14 => {
                // A `CreateTaskResult` (or an odd one) as the answer to a request on the wire.
                if let Some((_, id, _)) = m.pick_wire(ops.byte()).cloned() {
                    let task = session_tasks::task_json(&mut ops);
                    let line =
                        format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"task":{task}}}}}"#);
                    let split = ops.byte();
                    m.feed(line.as_bytes(), split);
                }
            }
            15 => {
                let now = m.now;
                if let Some(h) = m.tasks.send_request(&mut ops, m.conn.session_mut(), now) {
                    assert!(m.issued.insert(h, false).is_none(), "handles are unique");
                }
            }
            16 => {
                let task = session_tasks::task_json(&mut ops);
                let line = format!(
                    r#"{{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{task}}}"#
                );
                m.feed(line.as_bytes(), ops.byte());
                if let Ok(params) = serde_json::value::RawValue::from_string(task) {
                    let now = m.now;
                    m.tasks.status(&params, now);
                }
            }
            17 => {
                let now = m.now;
                m.tasks.step(&mut ops, now);
            }
            18 => {
                if ops.byte().is_multiple_of(2) || m.tasks.detached.is_empty() {
                    Tasks::send_detached(&mut ops, m.conn.session_mut());
                } else {
                    // The answer to a detached request: nobody waits for it.
                    let i = ops.byte() as usize % m.tasks.detached.len();
                    let id = m.tasks.detached.swap_remove(i);
                    let line = format!(
                        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"taskId":"t0","status":"cancelled","createdAt":"x","lastUpdatedAt":"y","ttl":null}}}}"#
                    );
                    m.feed(line.as_bytes(), ops.byte());
                }
            }
            19 => {
                m.next_server_id += 1;
                let line = session_tasks::server_request(&mut ops, m.next_server_id % 6);
                m.feed(line.as_bytes(), ops.byte());
            }
            _ => {}
        }
        m.drain();
    }
    // The end: close, then every request must have completed exactly once.
    let now = m.now;
    m.conn.session_mut().close(now);
    m.drain();
    assert!(m.issued.values().all(|&d| d), "every request completed");
    assert_eq!(m.closed_events, 1, "Closed came exactly once");
}
