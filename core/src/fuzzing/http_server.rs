//! Hostile HTTP request sequences and arbitrary host operations against an
//! [`HttpServer`], with its invariants checked after every step: no panic; every response
//! gets one head first, bodies after it and at most one end; every server-to-client request
//! completes exactly once; a session ends once, after its `Closed`, and says nothing after;
//! the session table and the bytes held stay within their bounds; `handle_timeout(now)`
//! leaves no deadline at or before `now`; with the deferred `initialize`, each one the host
//! holds is answered at most once (a second answer is refused).

use std::collections::{HashMap, HashSet};

use super::ops::Ops;
use crate::http::headers::HeaderList;
use crate::jsonrpc::{ErrorObject, empty_object};
use crate::rpc::RequestHandle;
use crate::server::http::{
    HttpEvent, HttpMode, HttpServer, HttpServerConfig, Output, RequestHead, ResponseId, SessionKey,
};
use crate::server::{ClientRequestId, Event, InitializeAnswer, ServerConfig, UsageError};
use crate::session::ProtocolVersion;
use crate::session::RequestOptions;
use crate::time::{Duration, Instant};
use crate::types::{Implementation, ServerCapabilities, ToolsCapability};

const SESSIONS: usize = 3;
const BODY_LIMIT: usize = 1024;
const STREAMS: usize = 4;
const REPLAY_EVENTS: usize = 6;
const REPLAY_BYTES: usize = 2048;

/// Bodies a fuzzer would take long to find; `{n}` is replaced by a byte of input.
const BODIES: &[&str] = &[
    r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{},"sampling":{},"elicitation":{}},"clientInfo":{"name":"f","version":"0"}}}"#,
    r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{"sampling":{}},"clientInfo":{"name":"f","version":"0"}}}"#,
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    r#"{"jsonrpc":"2.0","id":{n},"method":"tools/call","params":{"name":"t","_meta":{"progressToken":{n}}}}"#,
    r#"{"jsonrpc":"2.0","id":{n},"method":"ping"}"#,
    r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{n}}}"#,
    r#"{"jsonrpc":"2.0","id":{n},"result":{}}"#,
    r#"{"jsonrpc":"2.0","id":{n},"error":{"code":-1,"message":"no"}}"#,
    r#"[{"jsonrpc":"2.0","id":{n},"method":"tools/call","params":{"name":"a"}},{"jsonrpc":"2.0","id":{n},"method":"ping"},7]"#,
    r#"[]"#,
    r#"{"jsonrpc":"2.0"}"#,
    // A 2026-07-28 listen (sent with that revision's headers): a session of its own whose
    // SSE stream stays open.
    r#"{"jsonrpc":"2.0","id":{n},"method":"subscriptions/listen","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"notifications":{"toolsListChanged":true}}}"#,
];

/// What the client saw of one response.
#[derive(Default)]
struct Seen {
    head: bool,
    ended: bool,
}

struct Model {
    server: HttpServer,
    now: Instant,
    responses: HashMap<ResponseId, Seen>,
    /// Session ids handed out (live or not) and a few bogus ones.
    ids: Vec<String>,
    /// Event ids seen on SSE bodies.
    event_ids: Vec<String>,
    /// Server-to-client requests issued, and whether each completed.
    issued: HashMap<(SessionKey, RequestHandle), bool>,
    handles: Vec<(SessionKey, RequestHandle)>,
    /// Client requests open for the host.
    open: Vec<(SessionKey, ClientRequestId)>,
    closed: HashSet<SessionKey>,
    ended: HashSet<SessionKey>,
    entropy: u8,
    /// Server-to-client requests that completed with the client's answer.
    answered: usize,
    /// Sessions whose deferred `initialize` the host holds.
    held: Vec<SessionKey>,
    /// 2026 listens opened (`true`) and closed (`false`).
    listens: HashMap<(SessionKey, ClientRequestId), bool>,
}

impl Model {
    fn drain(&mut self) {
        while let Some(out) = self.server.poll_output() {
            match out {
                Output::Head {
                    response, headers, ..
                } => {
                    let seen = self.responses.entry(response).or_default();
                    assert!(!seen.head, "two heads for {response:?}");
                    seen.head = true;
                    if let Some(id) = headers.get("mcp-session-id")
                        && !self.ids.iter().any(|i| i == id)
                    {
                        self.ids.push(id.to_owned());
                    }
                }
                Output::Body { response, bytes } => {
                    let seen = self.responses.entry(response).or_default();
                    assert!(seen.head && !seen.ended, "a body out of place");
                    let text = String::from_utf8_lossy(&bytes);
                    for line in text.lines() {
                        if let Some(id) = line.strip_prefix("id: ")
                            && self.event_ids.len() < 64
                        {
                            self.event_ids.push(id.to_owned());
                        }
                    }
                }
                Output::End { response } => {
                    let seen = self.responses.entry(response).or_default();
                    assert!(seen.head && !seen.ended, "an end out of place");
                    seen.ended = true;
                }
                #[allow(unreachable_patterns)]
                _ => {}
            }
        }
        while let Some(event) = self.server.poll_event() {
            match event {
                HttpEvent::Session { session, event } => {
                    assert!(!self.ended.contains(&session), "an event after the end");
                    match event {
                        Event::Request { id, .. } => self.open.push((session, id)),
                        Event::InitializeRequested { .. } => self.held.push(session),
                        Event::ListenOpened { id, .. } => {
                            let fresh = self.listens.insert((session, id), true).is_none();
                            assert!(fresh, "a listen token reused");
                        }
                        Event::ListenClosed { id, .. } => {
                            let open = self
                                .listens
                                .get_mut(&(session, id))
                                .expect("a close of an opened listen");
                            assert!(*open, "{id} closed twice");
                            *open = false;
                        }
                        Event::Completed { handle, result } => {
                            self.answered += usize::from(result.is_ok());
                            let done = self
                                .issued
                                .get_mut(&(session, handle))
                                .expect("a completion of an issued request");
                            assert!(!*done, "{handle} completed twice");
                            *done = true;
                        }
                        Event::Closed { .. } => {
                            assert!(self.closed.insert(session), "Closed twice");
                            assert!(
                                self.issued
                                    .iter()
                                    .filter(|((s, _), _)| *s == session)
                                    .all(|(_, d)| *d),
                                "Closed before a completion"
                            );
                            assert!(
                                self.listens
                                    .iter()
                                    .filter(|((s, _), _)| *s == session)
                                    .all(|(_, open)| !*open),
                                "Closed before a listen's close"
                            );
                        }
                        _ => {}
                    }
                }
                HttpEvent::SessionEnded { session, .. } => {
                    assert!(self.closed.contains(&session), "ended before Closed");
                    assert!(self.ended.insert(session), "ended twice");
                    self.open.retain(|(s, _)| *s != session);
                    self.held.retain(|s| *s != session);
                }
                _ => {}
            }
        }
        assert!(self.server.sessions().count() <= SESSIONS);
        let bound = SESSIONS * (STREAMS + 8 + 2) * (REPLAY_BYTES + 4 * BODY_LIMIT) + 64 * 1024;
        assert!(
            self.server.buffered_bytes() <= bound,
            "{} bytes held",
            self.server.buffered_bytes()
        );
    }

    fn request(&mut self, method: &str, headers: HeaderList, body: &[u8]) {
        self.entropy = self.entropy.wrapping_add(1);
        let response = self.server.handle_request(
            self.now,
            &RequestHead::new(method, headers),
            body,
            [self.entropy; 16],
        );
        assert!(
            !self.responses.contains_key(&response),
            "a response token reused"
        );
        self.responses.insert(response, Seen::default());
    }

    /// Headers chosen by `bits`: the session id, `Accept`, the version, `Origin`, the token.
    fn headers(&mut self, bits: u8, pick: u8) -> HeaderList {
        let mut h = HeaderList::new();
        if bits & 1 != 0 && !self.ids.is_empty() {
            h.insert(
                "mcp-session-id",
                self.ids[usize::from(pick) % self.ids.len()].clone(),
            );
        }
        h.insert(
            "accept",
            [
                "application/json, text/event-stream",
                "application/json",
                "text/event-stream",
                "text/html",
            ][usize::from(bits >> 1) & 3],
        );
        match (bits >> 3) & 3 {
            1 => h.insert("mcp-protocol-version", "2025-11-25"),
            2 => h.insert("mcp-protocol-version", "1999-01-01"),
            _ => {}
        }
        if bits & 0x20 != 0 {
            h.insert(
                "origin",
                if pick & 1 == 0 {
                    "http://localhost:1"
                } else {
                    "https://evil.example"
                },
            );
        }
        if bits & 0x40 == 0 {
            h.insert("authorization", "Bearer tok");
        }
        if bits & 0x80 != 0 {
            h.insert("content-type", "text/plain");
        }
        h
    }
}

/// The fuzz body: the first byte picks the mode (bit 0) and the deferred `initialize`
/// (bit 1); then operations.
pub fn http_server_ops(data: &[u8]) {
    run(data);
}

/// What a run reached, for the scripted tests that check the paths are reachable.
pub(super) struct Reached {
    /// Server-to-client requests the client answered.
    pub(super) answered: usize,
    /// 2026 listens opened (each also closed: the run checks it).
    pub(super) listens: usize,
}

/// Runs the body; returns what it reached.
pub(super) fn run(data: &[u8]) -> Reached {
    let mut ops = Ops { data };
    let first = ops.byte();
    let mode = if first & 1 == 0 {
        HttpMode::Stateful
    } else {
        HttpMode::Stateless
    };
    let server = ServerConfig::new(Implementation::new("fuzz", "0"))
        .with_capabilities(ServerCapabilities {
            tools: Some(ToolsCapability {
                list_changed: Some(true),
                ..ToolsCapability::default()
            }),
            ..ServerCapabilities::default()
        })
        .with_limits(8, 8, 4096)
        .with_deferred_initialize(first & 2 != 0);
    let config = HttpServerConfig::new(server)
        .with_mode(mode)
        .with_bearer_token("tok")
        .with_limits(SESSIONS, BODY_LIMIT, STREAMS)
        .with_replay(REPLAY_EVENTS, REPLAY_BYTES);
    let now = Instant::now();
    let mut m = Model {
        server: HttpServer::new(config, now),
        now,
        responses: HashMap::new(),
        ids: vec!["bogus".into(), String::new()],
        event_ids: vec!["0-0".into(), "1-99".into(), "x".into()],
        issued: HashMap::new(),
        handles: Vec::new(),
        open: Vec::new(),
        closed: HashSet::new(),
        ended: HashSet::new(),
        entropy: 0,
        answered: 0,
        held: Vec::new(),
        listens: HashMap::new(),
    };
    while !ops.done() {
        let op = ops.byte() % 13;
        let arg = ops.byte();
        match op {
            0..=2 => {
                let body = BODIES[usize::from(arg) % BODIES.len()];
                let body = body.replace("{n}", &(ops.byte() % 8).to_string());
                let bits = ops.byte() & 0x3f; // no bad origin, token or type on most
                let mut headers = m.headers(bits & 0x1b, ops.byte());
                if body.contains("subscriptions/listen") {
                    headers.insert("mcp-protocol-version", "2026-07-28");
                    headers.insert("mcp-method", "subscriptions/listen");
                }
                m.request("POST", headers, body.as_bytes());
            }
            3 => {
                let bits = ops.byte();
                let headers = m.headers(bits, arg);
                let body = if bits & 0x10 != 0 {
                    vec![b'{'; BODY_LIMIT + 1]
                } else {
                    ops.bytes(96).to_vec()
                };
                m.request("POST", headers, &body);
            }
            4 => {
                let bits = ops.byte();
                let mut headers = m.headers(bits & 0x1f | 1, arg);
                if bits & 0x80 != 0 {
                    let id = m.event_ids[usize::from(arg) % m.event_ids.len()].clone();
                    headers.insert("last-event-id", id);
                }
                m.request("GET", headers, b"");
            }
            5 => {
                let headers = m.headers(1, arg);
                let method = ["DELETE", "PUT", "get", ""][usize::from(ops.byte()) % 4];
                m.request(method, headers, b"");
            }
            6 if !m.open.is_empty() => {
                let (key, id) = m.open.remove(usize::from(arg) % m.open.len());
                let now = m.now;
                if let Some(s) = m.server.session_mut(key) {
                    let _ = if arg & 1 == 0 {
                        s.respond(now, id, empty_object())
                    } else {
                        s.respond_error(now, id, ErrorObject::new(-1, "host error"))
                    };
                    assert!(
                        s.respond(now, id, empty_object()).is_err(),
                        "answered twice"
                    );
                }
            }
            7 => {
                let keys: Vec<SessionKey> = m.server.sessions().collect();
                if keys.is_empty() {
                    continue;
                }
                let key = keys[usize::from(arg) % keys.len()];
                let method = ["ping", "roots/list", "sampling/createMessage"][usize::from(arg) % 3];
                let options = RequestOptions::new()
                    .timeout(Duration::from_millis(u64::from(ops.byte()) * 10 + 1));
                let now = m.now;
                let related = m.open.iter().find(|(s, _)| *s == key).map(|(_, id)| *id);
                let sent = match related {
                    Some(id) if arg & 0x80 != 0 => m
                        .server
                        .related(key, id, |s| s.send_request(now, method, None, options)),
                    _ => m
                        .server
                        .session_mut(key)
                        .map(|s| s.send_request(now, method, None, options)),
                };
                if let Some(Ok(handle)) = sent {
                    assert!(
                        m.issued.insert((key, handle), false).is_none(),
                        "a handle reused"
                    );
                    m.handles.push((key, handle));
                }
            }
            8 if !m.handles.is_empty() => {
                let (key, handle) = m.handles[usize::from(arg) % m.handles.len()];
                let now = m.now;
                if let Some(s) = m.server.session_mut(key) {
                    let _ = s.cancel(now, handle, None);
                }
            }
            9 => {
                m.now += Duration::from_millis(u64::from(arg) * 10);
                let now = m.now;
                m.server.handle_timeout(now);
                if let Some(next) = m.server.poll_timeout() {
                    assert!(next > now, "a due deadline survived handle_timeout");
                }
            }
            10 => {
                let mut live: Vec<ResponseId> = m
                    .responses
                    .iter()
                    .filter(|(_, s)| !s.ended)
                    .map(|(r, _)| *r)
                    .collect();
                live.sort_unstable();
                if let Some(&r) = live.get(usize::from(arg) % live.len().max(1)) {
                    let now = m.now;
                    m.server.handle_response_closed(now, r);
                    // The host stops writing it: what comes after is not checked.
                    m.responses.remove(&r);
                }
            }
            11 => {
                let keys: Vec<SessionKey> = m.server.sessions().collect();
                if let Some(&key) = keys.get(usize::from(arg) % keys.len().max(1)) {
                    let now = m.now;
                    if arg & 1 == 0 {
                        m.server.close_session(now, key);
                    } else if let Some(s) = m.server.session_mut(key) {
                        let _ = s.notify(now, "notifications/tools/list_changed", None);
                        // Now and then the host ends a session's first listen.
                        let first = s.listens().next().map(|(id, _)| id);
                        if let (true, Some(id)) = (arg & 2 != 0, first) {
                            let _ = s.close_listen(now, id);
                        }
                    }
                }
            }
            12 if !m.held.is_empty() => {
                let key = m.held.remove(usize::from(arg) % m.held.len());
                let now = m.now;
                let version = [
                    None,
                    Some(ProtocolVersion::V2024_11_05),
                    Some(ProtocolVersion::V2025_11_25),
                ][usize::from(arg >> 1) % 3];
                let mut answer = InitializeAnswer::new(Implementation::new("upstream", "1"));
                answer.protocol_version = version;
                if let Some(s) = m.server.session_mut(key) {
                    let first = if arg & 1 == 0 {
                        s.accept_initialize(now, answer.clone()).map(|_| ())
                    } else {
                        s.refuse_initialize(now, ErrorObject::new(-32603, "no upstream"))
                    };
                    if first.is_ok() {
                        assert_eq!(
                            s.accept_initialize(now, answer),
                            Err(UsageError::NoInitializePending),
                            "a deferred initialize answered twice"
                        );
                    } else if s.initialize_pending() {
                        // A version refused: the initialize still waits for an answer.
                        m.held.push(key);
                    }
                }
            }
            _ => {}
        }
        m.drain();
    }
    let now = m.now;
    let keys: Vec<SessionKey> = m.server.sessions().collect();
    for key in keys {
        m.server.close_session(now, key);
    }
    m.drain();
    assert_eq!(m.server.sessions().count(), 0);
    assert!(m.issued.values().all(|&d| d), "every request completed");
    for (r, seen) in &m.responses {
        assert!(seen.head, "{r:?} got no head");
    }
    assert!(m.listens.values().all(|&open| !open), "every listen closed");
    Reached {
        answered: m.answered,
        listens: m.listens.len(),
    }
}
