//! A scripted in-process MCP server for tests: [`FakeServer`] (feature `testing`).
//!
//! ```no_run
//! # async fn f<R: mcp_driver::Runtime>(rt: R) -> Result<(), mcp_driver::Error> {
//! use mcp_driver::testing::FakeServer;
//! use serde_json::json;
//!
//! let (server, io) = FakeServer::start(&rt);
//! server.on_request("tools/list", |_| Ok(json!({"tools": []})));
//! let client = mcp_driver::ClientBuilder::new().runtime(rt).over(io.reader, io.writer).await?;
//! assert!(client.list_tools().await?.is_empty());
//! # Ok(()) }
//! ```

pub mod handler_suite;
#[cfg(feature = "http")]
pub mod http_server;
#[cfg(feature = "http")]
pub mod http_suite;
pub mod listen_suite;
pub mod manager;
pub mod oauth_server;
pub mod output_schema_suite;
pub mod pending_suite;
mod pipe;
#[cfg(target_os = "linux")]
pub mod process;
#[cfg(feature = "http")]
pub mod server_suite;
pub mod session_reset_suite;
mod stdio_suite;
pub mod suite;
pub mod task_list_suite;
pub mod task_receiver_suite;
pub mod task_suite;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use futures_util::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use serde_json::{Value, json};
use tokio::sync::mpsc;

pub use pipe::{PipeReader, PipeWriter, pipe};

use crate::runtime::Runtime;

/// An automatic answer: the params in, a result or a `(code, message)` error out.
pub type AutoHandler = Box<dyn Fn(&Value) -> Result<Value, (i64, String)> + Send + Sync>;

/// The client's ends of a [`FakeServer`]'s pipes, for [`Client::over`](crate::Client::over).
#[derive()]
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

struct FakeState {
    received: Vec<Value>,
    handlers: HashMap<String, AutoHandler>,
    initialize: Option<Value>,
    next_id: u64,
}

/// A scripted MCP server over an in-memory pipe.
///
/// It answers `initialize` and `ping` by itself (`initialize` with [`FakeServer::set_initialize_result`]'s value, or
/// a default that declares tools, resources, prompts, logging and completions), answers the
/// methods given to [`on_request`](Self::on_request) automatically, records every message the
/// client sent ([`received`](Self::received)), and hands every other message to
/// [`recv`](Self::recv), so a test can answer, delay or ignore it.
pub struct FakeServer {
    state: Arc<Mutex<FakeState>>,
    out: mpsc::UnboundedSender<Option<Vec<u8>>>,
    inbox: tokio::sync::Mutex<mpsc::UnboundedReceiver<Value>>,
}

impl std::fmt::Debug for FakeServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeServer").finish_non_exhaustive()
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

impl FakeServer {
    /// Starts the server's tasks on `runtime` and returns it with the client's ends.
    pub fn start<R: Runtime>(runtime: &R) -> (FakeServer, FakeTransport) {
        let (to_server_w, to_server_r) = pipe(64 * 1024);
        let (to_client_w, to_client_r) = pipe(64 * 1024);
        let state = Arc::new(Mutex::new(FakeState {
            received: Vec::new(),
            handlers: HashMap::new(),
            initialize: Some(default_initialize_result()),
            next_id: 1,
        }));
        let (out_tx, mut out_rx) = mpsc::unbounded_channel::<Option<Vec<u8>>>();
        let (inbox_tx, inbox_rx) = mpsc::unbounded_channel();

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
        let out = out_tx.clone();
        runtime.spawn(Box::pin(async move {
            let mut r = BufReader::new(to_server_r);
            let mut line = String::new();
            loop {
                line.clear();
                match r.read_line(&mut line).await {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {}
                }
                let Ok(msg) = serde_json::from_str::<Value>(line.trim_end()) else {
                    continue;
                };
                let reply = {
                    let mut s = st.lock().unwrap_or_else(PoisonError::into_inner);
                    s.received.push(msg.clone());
                    auto_reply(&s, &msg)
                };
                match reply {
                    Some(reply) => {
                        let _ = out.send(Some(line_of(&reply)));
                    }
                    None => {
                        if msg.get("method").and_then(Value::as_str)
                            == Some("notifications/initialized")
                        {
                            continue;
                        }
                        let _ = inbox_tx.send(msg);
                    }
                }
            }
        }));

        let server = FakeServer {
            state,
            out: out_tx,
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

    /// The `initialize` result to give; `None` leaves `initialize` to the test ([`recv`](Self::recv)).
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

    /// Writes one raw line (a newline is added): garbage, a banner, a batch.
    pub fn send_line(&self, line: &str) {
        let mut bytes = line.as_bytes().to_vec();
        bytes.push(b'\n');
        let _ = self.out.send(Some(bytes));
    }

    /// Sends a message.
    pub fn send(&self, msg: &Value) {
        let _ = self.out.send(Some(line_of(msg)));
    }

    /// Answers request `request` (a message from [`recv`](Self::recv)) with `result`.
    pub fn respond(&self, request: &Value, result: Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": result}));
    }

    /// Answers request `request` with a JSON-RPC error.
    pub fn respond_error(&self, request: &Value, code: i64, message: &str) {
        self.send(&json!({"jsonrpc": "2.0", "id": request["id"], "error": {"code": code, "message": message}}));
    }

    /// Sends a notification.
    pub fn notify(&self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request to the client and returns its id; read the answer with
    /// [`recv_response`](Self::recv_response).
    pub fn request(&self, method: &str, params: Value) -> Value {
        let id = {
            let mut s = self.lock();
            s.next_id += 1;
            json!(format!("srv-{}", s.next_id))
        };
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// Closes the server's output: the client sees end of file.
    pub fn hang_up(&self) {
        let _ = self.out.send(None);
    }
}

fn line_of(v: &Value) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(v).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}

fn auto_reply(s: &FakeState, msg: &Value) -> Option<Value> {
    let method = msg.get("method")?.as_str()?;
    let id = msg.get("id")?;
    let result = if method == "initialize" {
        let mut r = s.initialize.clone()?;
        if let Some(v) = msg.pointer("/params/protocolVersion")
            && r.get("protocolVersion").is_none()
        {
            r["protocolVersion"] = v.clone();
        }
        Ok(r)
    } else if method == "ping" && !s.handlers.contains_key("ping") {
        Ok(json!({}))
    } else {
        let h = s.handlers.get(method)?;
        h(msg.get("params").unwrap_or(&Value::Null))
    };
    Some(match result {
        Ok(r) => json!({"jsonrpc": "2.0", "id": id, "result": r}),
        Err((code, message)) => {
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
        }
    })
}
