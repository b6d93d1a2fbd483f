//! [`FakeServer`]: a scripted MCP server over an in-memory pipe, whose wire handling is the
//! core's server session ([`ServerSession`] behind the core's line framing).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use futures_util::io::{AsyncReadExt as _, AsyncWriteExt as _};
use mcp_proto::framing::lines::{Line, LineDecoder, encode_line};
use mcp_proto::jsonrpc::{ErrorObject, to_raw};
use mcp_proto::server::{
    ClientRequestId, Event, InitializeAnswer, RequestHandle, ServerConfig, ServerSession,
    ServerState, UsageError,
};
use mcp_proto::session::{Era, ProtocolVersion, RawParams, RequestOptions};
use mcp_proto::types::{
    Implementation, InitializeResult, LoggingLevel, ServerCapabilities, TasksCapability,
};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::pipe::{PipeReader, PipeWriter, pipe};
use crate::runtime::Runtime;

/// An automatic answer: the params in, a result or a `(code, message)` error out.
pub type AutoHandler = Box<dyn Fn(&Value) -> Result<Value, (i64, String)> + Send + Sync>;

/// The client's ends of a [`FakeServer`]'s pipes, for [`Client::over`](crate::Client::over).
pub struct FakeTransport {
    /// What the server writes.
    pub reader: PipeReader,
    /// What the server reads.
    pub writer: PipeWriter,
}

impl std::fmt::Debug for FakeTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeTransport").finish_non_exhaustive()
    }
}

/// The `initialize` result a [`FakeServer`] gives by default.
#[must_use]
pub fn default_initialize_result() -> Value {
    json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {
            "tools": {"listChanged": true},
            "resources": {"subscribe": true, "listChanged": true},
            "prompts": {"listChanged": true},
            "logging": {},
            "completions": {}
        },
        "serverInfo": {"name": "fake-server", "version": "1.0.0"},
        "instructions": "A scripted server for tests."
    })
}

struct FakeState {
    session: ServerSession,
    received: Vec<Value>,
    handlers: HashMap<String, AutoHandler>,
    initialize: Option<Value>,
    /// The client's requests handed to the test, by their JSON-RPC id (as JSON text).
    open: HashMap<String, ClientRequestId>,
    /// The same requests by their progress token (as JSON text).
    progress_tokens: HashMap<String, ClientRequestId>,
    /// The id (as JSON text) of the `initialize` held for the test, if any.
    initialize_held: Option<String>,
    /// The fake's requests to the client, by their wire id.
    requests: HashMap<u64, RequestHandle>,
    /// The counter of the ids of requests written as given (`srv-N`).
    next_raw_id: u64,
    out: mpsc::UnboundedSender<Option<Vec<u8>>>,
}

/// A scripted MCP server over an in-memory pipe.
///
/// Its wire is the core's [`ServerSession`] behind the core's line framing. The session
/// answers `initialize` (with [`set_initialize_result`](Self::set_initialize_result)'s
/// value, or a default that declares tools, resources, prompts, logging and completions; its
/// `protocolVersion` is answered when the client asked for it or a newer one, else the
/// session negotiates the client's), `ping` and `logging/setLevel`; it refuses requests
/// before `initialize` (`-32600`), what the declared capabilities do not offer (`-32601`)
/// and garbage (`-32700`), and correlates the ids of the requests both ways. Around it the fake
/// answers the methods given to [`on_request`](Self::on_request) automatically, records
/// every message the client sent ([`received`](Self::received)), and hands every other one
/// (the requests the session passes on, notifications, answers to the fake's own requests)
/// to [`recv`](Self::recv), so a test can answer, delay or ignore it.
///
/// **Deliberate misbehaviour.** A test script may do what a conforming server would not, to
/// check the client's side of it. Where the session refuses a command, the fake writes the
/// message as given instead of bending the session: an answer to a request the client
/// cancelled or that was answered ([`respond`](Self::respond)), a request for a capability
/// the client did not declare or before the handshake ended ([`request`](Self::request):
/// its id is then `"srv-N"`), progress or a cancellation the session would not send
/// ([`notify`](Self::notify)), an `initialize` result the session cannot give (fields it
/// does not know, or a version the client cannot take in an answer the test gives with
/// [`respond`](Self::respond)); the session then stays uninitialized and refuses the
/// client's later requests, as the client should not go on. Raw bytes go out with
/// [`send_line`](Self::send_line) and [`send`](Self::send).
///
/// **Protocol 2026-07-28.** A fake with an `on_request("server/discover", ..)` handler
/// speaks it to a client that sends `server/discover` first: the handler's result describes
/// the server (capabilities, instructions, `_meta` server info; the tasks extension offers
/// the `tasks/*` methods), and the session answers `server/discover`, checks each request's
/// envelope and completes the 2026 results (`resultType`, server info) of the answers.
///
/// The session is given no deadlines (the fake's requests wait for as long as the test
/// does; no handshake or stall timeout), so the fake needs no timer.
pub struct FakeServer {
    state: Arc<Mutex<FakeState>>,
    inbox: tokio::sync::Mutex<mpsc::UnboundedReceiver<Value>>,
}

impl std::fmt::Debug for FakeServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeServer").finish_non_exhaustive()
    }
}

/// The fake's session: initialize-era versions, `initialize` deferred to the fake (its
/// result is the test's), no deadlines.
fn session_config() -> ServerConfig {
    ServerConfig::new(Implementation::new("fake-server", "1.0.0"))
        .with_deferred_initialize(true)
        .with_versions(
            ProtocolVersion::ALL
                .into_iter()
                .filter(|v| v.era() == Era::Initialize),
        )
        .with_request_timeout(None)
        .with_handshake_timeout(None)
        .with_stall_timeout(None)
}

fn key(id: &Value) -> String {
    id.to_string()
}

fn line_of(v: &Value) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(v).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}

fn raw_of(v: &Value) -> Option<Box<serde_json::value::RawValue>> {
    to_raw(v).ok()
}

/// How one message of a line is routed once the session has seen it.
struct Incoming {
    message: Value,
    /// Whether it goes to [`FakeServer::recv`].
    to_inbox: bool,
    /// A request the session handed over (to the test or a handler): matched to its event.
    routed: bool,
}

impl FakeState {
    /// Writes what the session queued, in order, after what was written before.
    fn flush(&mut self) {
        let mut bytes = Vec::new();
        let mut scratch = Vec::new();
        while self.session.poll_transmit(&mut scratch).is_some() {
            encode_line(&mut bytes, &scratch);
            scratch.clear();
        }
        if !bytes.is_empty() {
            let _ = self.out.send(Some(bytes));
        }
    }

    fn write(&mut self, bytes: Vec<u8>) {
        // What the session queued goes first: the order of the script is the order on the wire.
        self.flush();
        let _ = self.out.send(Some(bytes));
    }

    /// One line from the client: recorded, handed to the session,
    /// and what the test must see pushed to the inbox.
    fn handle_line(&mut self, text: &str, inbox: &mpsc::UnboundedSender<Value>) {
        let Ok(parsed) = serde_json::from_str::<Value>(text) else {
            // Not JSON: the session answers it with a parse error; the test never sees it.
            self.session.handle_message_str(Instant::now(), text);
            self.drain_events(&mut []);
            self.flush();
            return;
        };
        self.received.push(parsed.clone());
        let messages = match &parsed {
            Value::Array(items) => items.clone(),
            _ => vec![parsed.clone()],
        };
        if parsed.get("method").and_then(Value::as_str) == Some("server/discover") {
            self.speak_discover(&parsed);
        }
        let mut incoming: Vec<Incoming> = messages
            .into_iter()
            .map(|message| {
                // Requests wait for the session's verdict; the rest goes to the test, as
                // before, except the handshake's `initialized`.
                let to_inbox = message.get("method").is_none()
                    || (message.get("id").is_none() && !is_initialized(&message));
                Incoming {
                    message,
                    to_inbox,
                    routed: false,
                }
            })
            .collect();
        self.session.handle_message_str(Instant::now(), text);
        self.drain_events(&mut incoming);
        self.flush();
        for m in incoming.into_iter().filter(|m| m.to_inbox) {
            let _ = inbox.send(m.message);
        }
    }

    /// Acts on the session's events for the messages of one line.
    fn drain_events(&mut self, incoming: &mut [Incoming]) {
        while let Some(event) = self.session.poll_event() {
            match event {
                Event::InitializeRequested { .. } => {
                    let Some(request) = take_request(incoming, "initialize") else {
                        continue;
                    };
                    match self.initialize.clone() {
                        Some(result) => {
                            self.answer_initialize(&request.message, Ok(result), true);
                        }
                        None => {
                            self.initialize_held = Some(key(&request.message["id"]));
                            request.to_inbox = true;
                        }
                    }
                }
                Event::Request {
                    id,
                    method,
                    progress_token,
                    ..
                } => {
                    let Some(request) = take_request(incoming, &method) else {
                        continue;
                    };
                    if let Some(handler) = self.handlers.get(&method) {
                        let params = request.message.get("params").unwrap_or(&Value::Null);
                        let now = Instant::now();
                        // Open and answered once, here: the session cannot refuse it.
                        let _answered = match handler(params) {
                            Ok(result) => match raw_of(&result) {
                                Some(result) => self.session.respond(now, id, result),
                                None => self.session.respond_error(
                                    now,
                                    id,
                                    ErrorObject::new(
                                        ErrorObject::INTERNAL_ERROR,
                                        "the handler's result is not JSON",
                                    ),
                                ),
                            },
                            Err((code, message)) => {
                                self.session
                                    .respond_error(now, id, ErrorObject::new(code, message))
                            }
                        };
                        continue;
                    }
                    self.open.insert(key(&request.message["id"]), id);
                    if let Some(token) = progress_token {
                        self.progress_tokens
                            .insert(serde_json::to_string(&token).unwrap_or_default(), id);
                    }
                    request.to_inbox = true;
                }
                Event::RequestCancelled { id, .. } => {
                    self.open.retain(|_, open| *open != id);
                    self.progress_tokens.retain(|_, open| *open != id);
                }
                Event::Completed { handle, .. } => {
                    self.requests.remove(&handle.get());
                }
                // The handshake's steps, diagnostics (the session answered what needed it),
                // notifications (they reach the test as recorded) and the close.
                _ => {}
            }
        }
    }

    /// Answers the `initialize` the session holds with the test's result or error; a result
    /// the session cannot give (a version it does not speak, a shape it does not know) is
    /// written as given. With `negotiate` (the automatic answer), a client that asked for an
    /// older version than the result's gets the session's negotiation instead.
    fn answer_initialize(
        &mut self,
        request: &Value,
        answer: Result<Value, ErrorObject>,
        negotiate: bool,
    ) {
        let now = Instant::now();
        self.initialize_held = None;
        let mut result = match answer {
            Ok(result) => result,
            Err(error) => {
                let _refused = self.session.refuse_initialize(now, error);
                return self.flush();
            }
        };
        if result.get("protocolVersion").is_none()
            && let Some(asked) = request.pointer("/params/protocolVersion")
        {
            result["protocolVersion"] = asked.clone();
        }
        let accepted = serde_json::from_value::<InitializeResult>(result.clone())
            .ok()
            .filter(|r| r.extra.is_empty() && r.meta.is_none())
            .and_then(|r| {
                let version = ProtocolVersion::parse(&r.protocol_version)?;
                let answer = InitializeAnswer::new(r.server_info)
                    .with_capabilities(r.capabilities)
                    .with_instructions(r.instructions);
                let exact = answer.clone().with_protocol_version(version);
                match self.session.accept_initialize(now, exact) {
                    Ok(v) => Some(v),
                    Err(UsageError::VersionNotOffered { .. }) if negotiate => {
                        self.session.accept_initialize(now, answer).ok()
                    }
                    Err(_) => None,
                }
            });
        if accepted.is_none() {
            let reply = json!({"jsonrpc": "2.0", "id": request["id"], "result": result});
            self.write(line_of(&reply));
        }
        self.flush();
    }

    /// A client's first `server/discover` when the test scripted one (`on_request`): the
    /// session is started again, before anything else happened on it, speaking protocol
    /// 2026-07-28 as the handler's result describes it (`capabilities`, `instructions`,
    /// `_meta` server info; the tasks extension offers the `tasks/*` methods), and then
    /// answers `server/discover` and checks every request's envelope itself.
    fn speak_discover(&mut self, request: &Value) {
        if self.session.state() != ServerState::AwaitingInitialize
            || self.session.initialize_pending()
        {
            return;
        }
        let Some(handler) = self.handlers.get("server/discover") else {
            return;
        };
        let Ok(result) = handler(request.get("params").unwrap_or(&Value::Null)) else {
            return;
        };
        let mut capabilities: ServerCapabilities =
            serde_json::from_value(result["capabilities"].clone()).unwrap_or_default();
        let tasks_extension = result
            .pointer("/capabilities/extensions")
            .and_then(Value::as_object)
            .is_some_and(|e| e.contains_key("io.modelcontextprotocol/tasks"));
        if tasks_extension && capabilities.tasks.is_none() {
            capabilities.tasks = Some(TasksCapability::default());
        }
        let info = result
            .pointer("/_meta/io.modelcontextprotocol~1serverInfo")
            .and_then(|i| serde_json::from_value::<Implementation>(i.clone()).ok())
            .unwrap_or_else(|| Implementation::new("fake-server", "1.0.0"));
        // The test scripts each listen itself (its acknowledgement and tagged
        // notifications), as a hand-written server would.
        let mut config = session_config()
            .with_versions(ProtocolVersion::ALL)
            .with_capabilities(capabilities)
            .with_listens_by_host(true);
        config.server_info = info;
        if let Some(instructions) = result.get("instructions").and_then(Value::as_str) {
            config = config.with_instructions(instructions);
        }
        self.session = ServerSession::new(config, Instant::now());
    }
}

fn is_initialized(message: &Value) -> bool {
    message.get("method").and_then(Value::as_str) == Some("notifications/initialized")
}

/// The first request of the line with `method` not matched to an event yet (the session
/// hands requests over in the order of the line), marked as matched.
fn take_request<'a>(incoming: &'a mut [Incoming], method: &str) -> Option<&'a mut Incoming> {
    let found = incoming.iter_mut().find(|m| {
        !m.routed
            && m.message.get("id").is_some()
            && m.message.get("method").and_then(Value::as_str) == Some(method)
    })?;
    found.routed = true;
    Some(found)
}

impl FakeServer {
    /// Starts the server's tasks on `runtime` and returns it with the client's ends.
    pub fn start<R: Runtime>(runtime: &R) -> (FakeServer, FakeTransport) {
        let (to_server_w, mut to_server_r) = pipe(64 * 1024);
        let (to_client_w, to_client_r) = pipe(64 * 1024);
        let (out_tx, mut out_rx) = mpsc::unbounded_channel::<Option<Vec<u8>>>();
        let (inbox_tx, inbox_rx) = mpsc::unbounded_channel();
        let state = Arc::new(Mutex::new(FakeState {
            session: ServerSession::new(session_config(), Instant::now()),
            received: Vec::new(),
            handlers: HashMap::new(),
            initialize: Some(default_initialize_result()),
            open: HashMap::new(),
            progress_tokens: HashMap::new(),
            initialize_held: None,
            requests: HashMap::new(),
            next_raw_id: 1,
            out: out_tx,
        }));

        runtime.spawn(Box::pin(async move {
            let mut w = to_client_w;
            while let Some(Some(bytes)) = out_rx.recv().await {
                if w.write_all(&bytes).await.is_err() {
                    return;
                }
            }
            let _ = w.close().await;
        }));

        let st = state.clone();
        runtime.spawn(Box::pin(async move {
            // No line limit beyond the core's default: a test's lines are its own.
            let mut decoder = LineDecoder::new();
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                let n = match to_server_r.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                let mut s = st.lock().unwrap_or_else(PoisonError::into_inner);
                decoder.decode(&buf[..n], |line| {
                    if let Line::Message(text) = line {
                        s.handle_line(text, &inbox_tx);
                    }
                });
            }
            let mut s = st.lock().unwrap_or_else(PoisonError::into_inner);
            decoder.finish(|line| {
                if let Line::Message(text) = line {
                    s.handle_line(text, &inbox_tx);
                }
            });
            // Dropping the inbox's sender ends `recv` with `None`: the client hung up.
        }));

        let server = FakeServer {
            state,
            inbox: tokio::sync::Mutex::new(inbox_rx),
        };
        let transport = FakeTransport {
            reader: to_client_r,
            writer: to_server_w,
        };
        (server, transport)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, FakeState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The `initialize` result to give; `None` leaves `initialize` to the test ([`recv`](Self::recv),
    /// then [`respond`](Self::respond) or [`respond_error`](Self::respond_error)).
    pub fn set_initialize_result(&self, result: Option<Value>) {
        self.lock().initialize = result;
    }

    /// Answers every request for `method` with `handler`'s result.
    pub fn on_request(
        &self,
        method: &str,
        handler: impl Fn(&Value) -> Result<Value, (i64, String)> + Send + Sync + 'static,
    ) {
        self.lock()
            .handlers
            .insert(method.into(), Box::new(handler));
    }

    /// Every message the client sent so far, in order (including the auto-answered ones).
    #[must_use]
    pub fn received(&self) -> Vec<Value> {
        self.lock().received.clone()
    }

    /// The messages the client sent with `method`.
    #[must_use]
    pub fn received_method(&self, method: &str) -> Vec<Value> {
        self.received()
            .into_iter()
            .filter(|m| m.get("method").and_then(Value::as_str) == Some(method))
            .collect()
    }

    /// The next message not answered automatically; `None` once the client hung up.
    pub async fn recv(&self) -> Option<Value> {
        self.inbox.lock().await.recv().await
    }

    /// The next message with `method`, skipping (but recording) the others.
    pub async fn recv_method(&self, method: &str) -> Option<Value> {
        loop {
            let m = self.recv().await?;
            if m.get("method").and_then(Value::as_str) == Some(method) {
                return Some(m);
            }
        }
    }

    /// The next message that is a response (to a request of the server).
    pub async fn recv_response(&self) -> Option<Value> {
        loop {
            let m = self.recv().await?;
            if m.get("method").is_none() {
                return Some(m);
            }
        }
    }

    /// Writes one raw line (a newline is added), past the session: garbage, a banner, a
    /// batch, a hand-made answer.
    pub fn send_line(&self, line: &str) {
        let mut bytes = line.as_bytes().to_vec();
        bytes.push(b'\n');
        self.lock().write(bytes);
    }

    /// Writes a message as given, past the session.
    pub fn send(&self, msg: &Value) {
        self.lock().write(line_of(msg));
    }

    /// Answers request `request` (a message from [`recv`](Self::recv)) with `result`,
    /// through the session; written as given when the session has no such open request (the
    /// client cancelled it, or it was answered: a late or second answer).
    pub fn respond(&self, request: &Value, result: Value) {
        self.answer(request, Ok(result));
    }

    /// Answers request `request` with a JSON-RPC error (the same rules as
    /// [`respond`](Self::respond)).
    pub fn respond_error(&self, request: &Value, code: i64, message: &str) {
        self.answer(request, Err(ErrorObject::new(code, message)));
    }

    fn answer(&self, request: &Value, answer: Result<Value, ErrorObject>) {
        let mut s = self.lock();
        let id = key(&request["id"]);
        if s.initialize_held.as_deref() == Some(id.as_str()) {
            return s.answer_initialize(request, answer, false);
        }
        let now = Instant::now();
        let sent = match s.open.remove(&id) {
            Some(open) => {
                s.progress_tokens.retain(|_, o| *o != open);
                match &answer {
                    Ok(result) => {
                        raw_of(result).is_some_and(|raw| s.session.respond(now, open, raw).is_ok())
                    }
                    Err(error) => s.session.respond_error(now, open, error.clone()).is_ok(),
                }
            }
            None => false,
        };
        if sent {
            return s.flush();
        }
        let reply = match answer {
            Ok(result) => json!({"jsonrpc": "2.0", "id": request["id"], "result": result}),
            Err(e) => json!({"jsonrpc": "2.0", "id": request["id"], "error": e}),
        };
        s.write(line_of(&reply));
    }

    /// Sends a notification through the session when it sends it: progress on an open
    /// request (`notify_progress`), the cancellation of the fake's own request (`cancel`), a
    /// log entry the client's level lets through (`log`), any other method (`notify`). What
    /// the session would not send (progress for no open request or not increasing, a log
    /// entry below the client's level or without `logging` declared, a notification before
    /// `initialize`) is written as given.
    pub fn notify(&self, method: &str, params: Value) {
        let mut s = self.lock();
        let now = Instant::now();
        let sent = match method {
            "notifications/progress" => {
                let open = params
                    .get("progressToken")
                    .and_then(|t| s.progress_tokens.get(&t.to_string()).copied());
                let progress = params.get("progress").and_then(Value::as_f64);
                match (open, progress) {
                    (Some(open), Some(progress)) => s
                        .session
                        .notify_progress(
                            now,
                            open,
                            progress,
                            params.get("total").and_then(Value::as_f64),
                            params.get("message").and_then(Value::as_str),
                        )
                        .is_ok(),
                    _ => false,
                }
            }
            "notifications/cancelled" => {
                let handle = params
                    .get("requestId")
                    .and_then(Value::as_u64)
                    .and_then(|id| s.requests.remove(&id));
                let reason = params
                    .get("reason")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                handle.is_some_and(|h| s.session.cancel(now, h, reason).is_ok())
            }
            "notifications/message" => {
                let level = params
                    .get("level")
                    .and_then(|l| serde_json::from_value::<LoggingLevel>(l.clone()).ok());
                let logger = params.get("logger").and_then(Value::as_str);
                let data = params.get("data").and_then(raw_of);
                match (level, data) {
                    // `Ok(false)`: below the client's level, not sent by the session.
                    (Some(level), Some(data)) => {
                        s.session.log(now, level, logger, &data) == Ok(true)
                    }
                    _ => false,
                }
            }
            _ => s
                .session
                .notify(now, method.to_owned(), raw_of(&params))
                .is_ok(),
        };
        if sent {
            return s.flush();
        }
        s.write(line_of(
            &json!({"jsonrpc": "2.0", "method": method, "params": params}),
        ));
    }

    /// Sends a request to the client and returns its id; read the answer with
    /// [`recv_response`](Self::recv_response). The session sends it and waits for the
    /// answer without a deadline; one the session refuses (a capability the client did
    /// not declare, before `notifications/initialized`) is written as given with the id
    /// `"srv-N"`.
    pub fn request(&self, method: &str, params: Value) -> Value {
        let mut s = self.lock();
        {
            let raw = raw_of(&params).map(RawParams::from);
            let options = RequestOptions::new().no_timeout();
            if let Ok(handle) =
                s.session
                    .send_request(Instant::now(), method.to_owned(), raw, options)
            {
                s.requests.insert(handle.get(), handle);
                s.flush();
                return json!(handle.get());
            }
        }
        s.next_raw_id += 1;
        let id = json!(format!("srv-{}", s.next_raw_id));
        s.write(line_of(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        ));
        id
    }

    /// Closes the server's output: the client sees end of file.
    pub fn hang_up(&self) {
        let s = self.lock();
        let _ = s.out.send(None);
    }
}
