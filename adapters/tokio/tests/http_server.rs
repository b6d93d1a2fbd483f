#![cfg(feature = "http")]
//! The Streamable HTTP server (`mcp_tokio::server::start_http`) on a real TCP listener on
//! 127.0.0.1: driven by the crate's own `Client` over HTTP, and by raw HTTP/1.1 requests for
//! the edge cases (refusals, DELETE, resumption, disconnection). Each test is bounded by an
//! anti-hang guard; none is timed.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_tokio::mcp_proto::http::headers::HeaderList;
use mcp_tokio::mcp_proto::jsonrpc::{ErrorObject, to_raw};
use mcp_tokio::mcp_proto::server::ServerConfig;
use mcp_tokio::mcp_proto::server::http::{HttpMode, HttpServerConfig};
use mcp_tokio::mcp_proto::session::{CloseReason, RequestOptions};
use mcp_tokio::server::http::{ResponseAborted, StreamableHttp};
use mcp_tokio::server::{
    HttpServerHandle, RequestContext, RequestOutcome, ServerHandle, ServerHandler, start_http,
};
use mcp_tokio::types::{CreateMessageResult, Implementation, ServerCapabilities, ToolsCapability};
use mcp_tokio::{CallOptions, ClientBuilder, HandlerFuture, Progress};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{Notify, mpsc};

const GUARD: Duration = Duration::from_secs(30);

/// What the handlers of every session report to the test.
struct Seen {
    /// Sessions made by the factory, by client name once known.
    opened: Mutex<usize>,
    /// Sessions whose handler heard `on_closed`.
    closed: mpsc::UnboundedSender<String>,
    /// Tool calls whose handler saw its cancellation.
    cancelled: mpsc::UnboundedSender<String>,
    /// Lets a `hold` call answer.
    release: Notify,
}

impl Seen {
    fn new() -> (
        Arc<Seen>,
        mpsc::UnboundedReceiver<String>,
        mpsc::UnboundedReceiver<String>,
    ) {
        let (closed, closed_rx) = mpsc::unbounded_channel();
        let (cancelled, cancelled_rx) = mpsc::unbounded_channel();
        let seen = Seen {
            opened: Mutex::new(0),
            closed,
            cancelled,
            release: Notify::new(),
        };
        (Arc::new(seen), closed_rx, cancelled_rx)
    }
}

fn ok(value: &Value) -> RequestOutcome {
    to_raw(value).map_err(|e| ErrorObject::new(ErrorObject::INTERNAL_ERROR, e.to_string()))
}

fn text(s: &str) -> RequestOutcome {
    ok(&json!({"content": [{"type": "text", "text": s}]}))
}

/// One session's handler: the tools `whoami`, `progress`, `sample`, `hold` (progress, then
/// waits for the test's release), `block` (runs until cancelled), `panic`.
struct TestHandler {
    seen: Arc<Seen>,
    server: ServerHandle,
    /// The client's name, kept from `initialize` for `on_closed` (the session is gone then).
    client: Mutex<String>,
}

impl ServerHandler for TestHandler {
    fn on_request(
        &self,
        method: String,
        params: Option<Box<RawValue>>,
        cx: RequestContext,
    ) -> HandlerFuture<'_, RequestOutcome> {
        let seen = self.seen.clone();
        let server = self.server.clone();
        Box::pin(async move {
            if method == "tools/list" {
                return ok(&json!({"tools": [
                    {"name": "whoami", "inputSchema": {"type": "object"}},
                    {"name": "progress", "inputSchema": {"type": "object"}},
                    {"name": "sample", "inputSchema": {"type": "object"}},
                ]}));
            }
            if method != "tools/call" {
                return Err(ErrorObject::method_not_found(&method));
            }
            let params: Value = params.map_or(Value::Null, |p| {
                serde_json::from_str(p.get()).unwrap_or(Value::Null)
            });
            match params["name"].as_str() {
                Some("whoami") => {
                    let name = server.client_info().map(|i| i.name).unwrap_or_default();
                    text(&name)
                }
                Some("progress") => {
                    for step in 1..=3 {
                        cx.progress(f64::from(step), Some(3.0), None)
                            .map_err(|e| ErrorObject::new(-32603, e.to_string()))?;
                    }
                    text("done")
                }
                Some("sample") => {
                    let ask = to_raw(&json!({
                        "messages": [{"role": "user", "content": {"type": "text", "text": "2+2?"}}],
                        "maxTokens": 8
                    }))
                    .expect("valid JSON");
                    let answer = cx
                        .request_raw("sampling/createMessage", Some(&ask), RequestOptions::new())
                        .await
                        .map_err(|e| ErrorObject::new(-32603, e.to_string()))?;
                    let answer: CreateMessageResult = answer.decode().expect("a sampling result");
                    let said = serde_json::to_value(&answer.content).expect("serializes")["text"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned();
                    text(&format!("the model said: {said}"))
                }
                Some("hold") => {
                    cx.progress(1.0, None, Some("holding"))
                        .map_err(|e| ErrorObject::new(-32603, e.to_string()))?;
                    seen.release.notified().await;
                    text("released")
                }
                Some("block") => {
                    cx.progress(1.0, None, Some("blocking"))
                        .map_err(|e| ErrorObject::new(-32603, e.to_string()))?;
                    cx.cancelled().await;
                    let _ = seen.cancelled.send("block".into());
                    std::future::pending::<RequestOutcome>().await
                }
                Some("panic") => panic!("the test tool panics on purpose"),
                other => Err(ErrorObject::new(-32602, format!("unknown tool {other:?}"))),
            }
        })
    }

    fn on_initialized(&self, server: &ServerHandle) {
        let name = server.client_info().map(|i| i.name).unwrap_or_default();
        *self.client.lock().expect("not poisoned") = name;
    }

    fn on_closed(&self, _reason: &CloseReason, _server: &ServerHandle) {
        let name = self.client.lock().expect("not poisoned").clone();
        let _ = self.seen.closed.send(name);
    }
}

fn config() -> HttpServerConfig {
    let server = ServerConfig::new(Implementation::new("http-test", "1.0")).with_capabilities(
        ServerCapabilities {
            tools: Some(ToolsCapability::default()),
            ..ServerCapabilities::default()
        },
    );
    HttpServerConfig::new(server)
}

async fn start(config: HttpServerConfig, seen: &Arc<Seen>) -> HttpServerHandle {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind 127.0.0.1:0");
    let seen = seen.clone();
    start_http(
        listener,
        StreamableHttp::new(config),
        move |server: &ServerHandle| {
            *seen.opened.lock().expect("not poisoned") += 1;
            TestHandler {
                seen: seen.clone(),
                server: server.clone(),
                client: Mutex::new(String::new()),
            }
        },
    )
    .expect("the server starts")
}

/// A client over HTTP with a sampling handler.
async fn client(url: &str, name: &str) -> mcp_tokio::Client {
    ClientBuilder::new()
        .client_info(Implementation::new(name, "1.0"))
        .on_sampling(|params| async move {
            let question = params.last_user_text().unwrap_or_default();
            Ok(CreateMessageResult::text(
                "test-model",
                format!("{question} 4"),
            ))
        })
        .http(url)
        .await
        .expect("the client connects")
}

fn first_text(result: &mcp_tokio::types::CallToolResult) -> String {
    serde_json::to_value(&result.content).expect("serializes")[0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

// ---- raw HTTP ---------------------------------------------------------------------------

/// A raw HTTP/1.1 exchange on its own connection; the response is read by the caller.
struct Raw {
    stream: TcpStream,
    read: Vec<u8>,
}

impl Raw {
    async fn send(
        server: &HttpServerHandle,
        method: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> Raw {
        let mut stream = TcpStream::connect(server.local_addr())
            .await
            .expect("connect");
        let mut head = format!(
            "{method} /mcp HTTP/1.1\r\nhost: {}\r\ncontent-length: {}\r\n",
            server.local_addr(),
            body.len()
        );
        for (n, v) in headers {
            head.push_str(&format!("{n}: {v}\r\n"));
        }
        head.push_str("\r\n");
        stream.write_all(head.as_bytes()).await.expect("write");
        stream.write_all(body.as_bytes()).await.expect("write");
        Raw {
            stream,
            read: Vec::new(),
        }
    }

    /// A POST of `body` in session `sid`, both media types accepted.
    async fn post_in(server: &HttpServerHandle, sid: &str, body: &str) -> Raw {
        Raw::send(
            server,
            "POST",
            &[ACCEPT, JSON, ("mcp-session-id", sid)],
            body,
        )
        .await
    }

    /// The GET stream of session `sid`, resuming after event `last_event_id` if given.
    async fn get_stream(server: &HttpServerHandle, sid: &str, last_event_id: Option<&str>) -> Raw {
        let mut headers = vec![("accept", "text/event-stream"), ("mcp-session-id", sid)];
        headers.extend(last_event_id.map(|id| ("last-event-id", id)));
        Raw::send(server, "GET", &headers, "").await
    }

    /// Reads until `needle` appears in what was read (or the connection ends).
    async fn read_until(&mut self, needle: &str) -> String {
        let mut buf = [0u8; 4096];
        while !String::from_utf8_lossy(&self.read).contains(needle) {
            let n = self.stream.read(&mut buf).await.expect("read");
            if n == 0 {
                break;
            }
            self.read.extend_from_slice(&buf[..n]);
        }
        String::from_utf8_lossy(&self.read).into_owned()
    }

    async fn status(&mut self) -> u16 {
        let text = self.read_until("\r\n").await;
        text.split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("a status line, not {text:?}"))
    }

    async fn header(&mut self, name: &str) -> Option<String> {
        let text = self.read_until("\r\n\r\n").await;
        let head = text.split("\r\n\r\n").next().unwrap_or_default();
        head.lines().find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
        })
    }
}

const ACCEPT: (&str, &str) = ("accept", "application/json, text/event-stream");
const JSON: (&str, &str) = ("content-type", "application/json");
const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// Initializes a session with raw requests; returns its id.
async fn raw_session(server: &HttpServerHandle) -> String {
    let mut init = Raw::send(server, "POST", &[ACCEPT, JSON], INIT).await;
    assert_eq!(init.status().await, 200);
    let sid = init.header("mcp-session-id").await.expect("a session id");
    let mut done = Raw::post_in(server, &sid, INITIALIZED).await;
    assert_eq!(done.status().await, 202);
    sid
}

fn call(id: u64, tool: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": tool, "arguments": {}, "_meta": {"progressToken": id}}})
    .to_string()
}

async fn guarded<F: std::future::Future<Output = ()>>(f: F) {
    tokio::time::timeout(GUARD, f)
        .await
        .expect("the test finished within the guard");
}

// ---- the tests ----------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_client_calls_with_progress_and_sampling_over_http() {
    guarded(async {
        let (seen, _closed, _cancelled) = Seen::new();
        let server = start(config(), &seen).await;
        let client = client(&server.url(), "one").await;
        assert_eq!(client.server_info().name, "http-test");
        assert_eq!(client.list_tools().await.expect("tools/list").len(), 3);
        let updates = Arc::new(Mutex::new(Vec::<Progress>::new()));
        let sink = updates.clone();
        let options =
            CallOptions::new().on_progress(move |p| sink.lock().expect("not poisoned").push(p));
        let result = client
            .call_tool_with("progress", json!({}), options)
            .await
            .expect("the call");
        assert_eq!(first_text(&result), "done");
        let steps: Vec<f64> = updates
            .lock()
            .expect("not poisoned")
            .iter()
            .map(|p| p.progress)
            .collect();
        assert_eq!(
            steps,
            [1.0, 2.0, 3.0],
            "every update, in order, before the answer"
        );
        let result = client
            .call_tool("sample", json!({}))
            .await
            .expect("the call");
        assert_eq!(first_text(&result), "the model said: 2+2? 4");
        client.close().await;
        server.shutdown();
        server.stopped().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_session_has_its_own_handler_and_handle() {
    guarded(async {
        let (seen, mut closed, _cancelled) = Seen::new();
        let server = start(config(), &seen).await;
        let a = client(&server.url(), "alice").await;
        let b = client(&server.url(), "bob").await;
        assert_eq!(*seen.opened.lock().expect("not poisoned"), 2);
        assert_eq!(server.service().sessions(), 2);
        let who_a = a.call_tool("whoami", json!({})).await.expect("call");
        let who_b = b.call_tool("whoami", json!({})).await.expect("call");
        assert_eq!(first_text(&who_a), "alice");
        assert_eq!(first_text(&who_b), "bob");
        // Closing sends DELETE: the session ends and its handler hears it.
        a.close().await;
        assert_eq!(closed.recv().await.as_deref(), Some("alice"));
        assert_eq!(server.service().sessions(), 1);
        server.shutdown();
        assert_eq!(closed.recv().await.as_deref(), Some("bob"));
        server.stopped().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_handler_is_answered_with_an_internal_error() {
    guarded(async {
        let (seen, _closed, _cancelled) = Seen::new();
        let server = start(config(), &seen).await;
        let client = client(&server.url(), "p").await;
        let error = client
            .call_tool("panic", json!({}))
            .await
            .expect_err("an error");
        assert!(error.to_string().contains("panicked"), "{error}");
        // The session lives on.
        assert!(client.call_tool("whoami", json!({})).await.is_ok());
        server.shutdown();
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_sessions_get_404_and_delete_ends_a_session() {
    guarded(async {
        let (seen, mut closed, _cancelled) = Seen::new();
        let server = start(config(), &seen).await;
        let mut unknown = Raw::send(
            &server,
            "POST",
            &[ACCEPT, JSON, ("mcp-session-id", "0123456789abcdef")],
            &call(2, "whoami"),
        )
        .await;
        assert_eq!(unknown.status().await, 404);

        let sid = raw_session(&server).await;
        // A call answered on the session: its handler ran after `on_initialized` (the 202 of
        // `notifications/initialized` is written before the driver dispatches its event, so a
        // DELETE sent right after it could overtake `on_initialized`).
        let mut answered = Raw::post_in(&server, &sid, &call(3, "whoami")).await;
        assert_eq!(answered.status().await, 200);
        let mut delete = Raw::send(&server, "DELETE", &[("mcp-session-id", &sid)], "").await;
        assert_eq!(delete.status().await, 200);
        assert_eq!(
            closed.recv().await.as_deref(),
            Some("raw"),
            "the handler heard the end"
        );
        let mut after = Raw::post_in(&server, &sid, &call(3, "whoami")).await;
        assert_eq!(after.status().await, 404, "a deleted session is gone");

        let mut elsewhere = TcpStream::connect(server.local_addr())
            .await
            .expect("connect");
        elsewhere
            .write_all(b"GET /other HTTP/1.1\r\nhost: x\r\n\r\n")
            .await
            .expect("write");
        let mut raw = Raw {
            stream: elsewhere,
            read: Vec::new(),
        };
        assert_eq!(
            raw.status().await,
            404,
            "only the endpoint's path is served"
        );
        server.shutdown();
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bearer_token_is_required_and_foreign_origins_are_refused() {
    guarded(async {
        let (seen, _closed, _cancelled) = Seen::new();
        let server = start(config().with_bearer_token("s3cret"), &seen).await;
        let mut none = Raw::send(&server, "POST", &[ACCEPT, JSON], INIT).await;
        assert_eq!(none.status().await, 401);
        assert_eq!(
            none.header("www-authenticate").await.as_deref(),
            Some("Bearer")
        );
        let mut wrong = Raw::send(
            &server,
            "POST",
            &[ACCEPT, JSON, ("authorization", "Bearer nope")],
            INIT,
        )
        .await;
        assert_eq!(wrong.status().await, 401);
        let mut right = Raw::send(
            &server,
            "POST",
            &[ACCEPT, JSON, ("authorization", "Bearer s3cret")],
            INIT,
        )
        .await;
        assert_eq!(right.status().await, 200);
        let mut foreign = Raw::send(
            &server,
            "POST",
            &[
                ACCEPT,
                JSON,
                ("authorization", "Bearer s3cret"),
                ("origin", "https://evil.example"),
            ],
            INIT,
        )
        .await;
        assert_eq!(foreign.status().await, 403);
        let mut local = Raw::send(
            &server,
            "POST",
            &[
                ACCEPT,
                JSON,
                ("authorization", "Bearer s3cret"),
                ("origin", "http://localhost:3000"),
            ],
            INIT,
        )
        .await;
        assert_eq!(local.status().await, 200, "a loopback origin passes");
        server.shutdown();
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_sse_stream_is_not_a_cancellation_and_resumes_with_last_event_id() {
    guarded(async {
        let (seen, _closed, mut cancelled) = Seen::new();
        let server = start(config(), &seen).await;
        let sid = raw_session(&server).await;
        let mut post = Raw::post_in(&server, &sid, &call(7, "hold")).await;
        assert_eq!(post.status().await, 200);
        assert_eq!(
            post.header("content-type").await.as_deref(),
            Some("text/event-stream")
        );
        // The progress event arrives before the answer exists: each event is flushed as it
        // comes, not held until the end.
        let text = post.read_until("holding").await;
        let event_id = text
            .split("\n\n")
            .find(|event| event.contains("holding"))
            .and_then(|event| event.lines().find_map(|l| l.strip_prefix("id:")))
            .map(|s| s.trim().to_owned())
            .expect("the progress event has an id");
        drop(post);
        // The handler runs on and answers after the client left.
        seen.release.notify_one();
        let mut resumed = Raw::get_stream(&server, &sid, Some(&event_id)).await;
        assert_eq!(resumed.status().await, 200);
        let text = resumed.read_until("released").await;
        assert!(text.contains(r#""id":7"#), "the answer is replayed: {text}");
        assert!(
            !text.contains("holding"),
            "events before Last-Event-ID are not: {text}"
        );
        assert!(cancelled.try_recv().is_err(), "nothing was cancelled");
        server.shutdown();
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_client_that_disconnects_mid_sse_cancels_the_handler() {
    guarded(async {
        let (seen, mut closed, mut cancelled) = Seen::new();
        let server = start(config().with_mode(HttpMode::Stateless), &seen).await;
        let mut post = Raw::send(
            &server,
            "POST",
            &[ACCEPT, JSON, ("mcp-protocol-version", "2025-06-18")],
            &call(9, "block"),
        )
        .await;
        assert_eq!(post.status().await, 200);
        assert_eq!(post.header("mcp-session-id").await, None, "no sessions");
        post.read_until("blocking").await;
        drop(post);
        assert_eq!(cancelled.recv().await.as_deref(), Some("block"));
        assert!(closed.recv().await.is_some(), "the POST's session ended");
        assert_eq!(server.service().sessions(), 0);
        server.shutdown();
        server.stopped().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_ends_open_streams_and_the_server() {
    guarded(async {
        let (seen, mut closed, mut cancelled) = Seen::new();
        let server = start(config(), &seen).await;
        let sid = raw_session(&server).await;
        let mut get = Raw::get_stream(&server, &sid, None).await;
        assert_eq!(get.status().await, 200);
        let mut post = Raw::post_in(&server, &sid, &call(4, "block")).await;
        post.read_until("blocking").await;
        let addr = server.local_addr();
        server.shutdown();
        assert_eq!(
            cancelled.recv().await.as_deref(),
            Some("block"),
            "running work stops"
        );
        assert_eq!(closed.recv().await.as_deref(), Some("raw"));
        // Both streams end: reading reaches the end of the connection.
        get.read_until("\u{0}never").await;
        post.read_until("\u{0}never").await;
        server.stopped().await;
        assert!(
            TcpStream::connect(addr).await.is_err(),
            "no longer listening"
        );
    })
    .await;
}

/// A server that gives a stream up once 64 KiB wait unread for it (16 events or 16 KiB kept
/// for resumption), and the handles of its sessions as they open.
async fn server_bounding_unread() -> (HttpServerHandle, Arc<Mutex<Vec<ServerHandle>>>) {
    let (seen, _closed, _cancelled) = Seen::new();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind 127.0.0.1:0");
    let handles = Arc::new(Mutex::new(Vec::<ServerHandle>::new()));
    let kept = handles.clone();
    let server = start_http(
        listener,
        StreamableHttp::new(config().with_replay(16, 16 * 1024)).max_unread(64 * 1024),
        move |server: &ServerHandle| {
            kept.lock().expect("not poisoned").push(server.clone());
            TestHandler {
                seen: seen.clone(),
                server: server.clone(),
                client: Mutex::new(String::new()),
            }
        },
    )
    .expect("the server starts");
    (server, handles)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_stops_reading_loses_its_stream_not_the_servers_memory() {
    guarded(async {
        let (server, handles) = server_bounding_unread().await;
        let sid = raw_session(&server).await;
        let mut get = Raw::get_stream(&server, &sid, None).await;
        assert_eq!(get.status().await, 200);
        // The factory runs on the driver's task, after the head of the answer went out.
        let session = loop {
            if let Some(s) = handles.lock().expect("not poisoned").first() {
                break s.clone();
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        };
        // Far more than the socket buffers and the unread bound hold, while the client
        // reads nothing.
        let padding = "x".repeat(1000);
        for i in 0..20_000 {
            session
                .notify(
                    "notifications/test/flood",
                    Some(&json!({"i": i, "padding": padding})),
                )
                .expect("the session takes the notification");
        }
        // The server dropped the stream: reading reaches its end instead of waiting for ever.
        let mut buf = vec![0u8; 1 << 16];
        let mut total = 0usize;
        loop {
            match get.stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => total += n,
            }
        }
        assert!(
            total < 20_000 * 1000,
            "not everything was delivered: {total} bytes"
        );
        // The session lives on, and the client can open its GET stream again.
        assert!(!session.is_closed());
        let mut again = Raw::get_stream(&server, &sid, None).await;
        assert_eq!(again.status().await, 200);
        server.shutdown();
    })
    .await;
}

/// One step the wire tap saw: the session (for a request or a head), the response, and the
/// bytes (a request's body, a response's chunk).
#[derive(Debug, Clone)]
struct Traced {
    session: Option<mcp_tokio::mcp_proto::server::http::SessionKey>,
    response: Option<mcp_tokio::mcp_proto::server::http::ResponseId>,
    bytes: String,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wire_tap_tells_each_sessions_traffic_and_not_the_refused() {
    use mcp_tokio::server::http::ServerWire;
    guarded(async {
        let (seen, _closed, _cancelled) = Seen::new();
        let traced = Arc::new(Mutex::new(Vec::<Traced>::new()));
        let sink = traced.clone();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let handlers = seen.clone();
        let http = StreamableHttp::new(config()).on_wire(move |step| {
            let t = match step {
                ServerWire::Request { session, body } => Traced {
                    session: Some(session),
                    response: None,
                    bytes: String::from_utf8_lossy(body).into_owned(),
                },
                ServerWire::Head {
                    session, response, ..
                } => Traced {
                    session: Some(session),
                    response: Some(response),
                    bytes: String::new(),
                },
                ServerWire::Body { response, chunk } => Traced {
                    session: None,
                    response: Some(response),
                    bytes: String::from_utf8_lossy(chunk).into_owned(),
                },
                _ => return,
            };
            sink.lock().expect("not poisoned").push(t);
        });
        let server = start_http(listener, http, move |server: &ServerHandle| TestHandler {
            seen: handlers.clone(),
            server: server.clone(),
            client: Mutex::new(String::new()),
        })
        .expect("the server starts");
        for name in ["ada", "grace"] {
            let client = client(&server.url(), name).await;
            let result = client
                .call_tool("whoami", json!({}))
                .await
                .expect("the call");
            assert_eq!(first_text(&result), name);
            client.close().await;
        }
        // Refused (an unknown session): not traced.
        let mut refused = Raw::post_in(&server, "no-such-session", &call(9, "whoami")).await;
        assert_eq!(refused.status().await, 404);
        server.shutdown();
        server.stopped().await;

        let traced = traced.lock().expect("not poisoned").clone();
        assert!(
            !traced.iter().any(|t| t.bytes.contains(r#""id":9"#)),
            "{traced:#?}"
        );
        // Each client's initialize and call came in on a session of its own, and the answer
        // naming it went out on a response of that session.
        let session_of = |needle: &str| {
            traced
                .iter()
                .find(|t| t.response.is_none() && t.bytes.contains(needle))
                .and_then(|t| t.session)
                .unwrap_or_else(|| panic!("{needle} traced: {traced:#?}"))
        };
        let ada = session_of(r#""name":"ada""#);
        let grace = session_of(r#""name":"grace""#);
        assert_ne!(ada, grace);
        for (session, name) in [(ada, "ada"), (grace, "grace")] {
            let answered = traced.iter().any(|t| {
                t.bytes.contains(&format!(r#""text":"{name}""#))
                    && traced.iter().any(|h| {
                        h.session == Some(session) && h.response == t.response && h.bytes.is_empty()
                    })
            });
            assert!(answered, "{name}'s answer on its session: {traced:#?}");
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_given_up_on_frees_what_its_client_did_not_read() {
    guarded(async {
        let (server, handles) = server_bounding_unread().await;
        let sid = raw_session(&server).await;
        let headers: HeaderList = [("accept", "text/event-stream"), ("mcp-session-id", &sid)]
            .into_iter()
            .collect();
        let get_stream = || server.service().handle("GET", "/mcp", headers.clone(), b"");
        // A GET stream whose reader (the host's HTTP library, stuck on a client that reads
        // nothing) never asks for its body.
        let mut unread = get_stream();
        assert_eq!(unread.head().await.expect("a head").0, 200);
        let session = handles.lock().expect("not poisoned")[0].clone();
        let padding = "x".repeat(1000);
        for i in 0..1000 {
            session
                .notify(
                    "notifications/test/flood",
                    Some(&json!({"i": i, "padding": padding})),
                )
                .expect("the session takes the notification");
        }
        // Past the unread bound the server gives the stream up: the GET stream is free.
        loop {
            let mut again = get_stream();
            match again.head().await.expect("a head").0 {
                200 => break,
                409 => tokio::time::sleep(Duration::from_millis(5)).await,
                other => panic!("a GET stream answered {other}"),
            }
        }
        // What its reader never read was let go with it: the next read fails at once
        // instead of handing out the megabyte the client would not take.
        assert_eq!(unread.chunk().await, Err(ResponseAborted));
        server.shutdown();
    })
    .await;
}
