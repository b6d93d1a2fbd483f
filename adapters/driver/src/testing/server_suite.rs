//! Test bodies for the server driver ([`crate::server`]) against this crate's own
//! [`Client`] over an in-memory pipe pair, generic over the runtime (each adapter's tests run
//! them; the caller bounds each with a timeout).

use std::sync::{Arc, Mutex};

use mcp_proto::jsonrpc::{ErrorObject, to_raw};
use mcp_proto::server::ServerConfig;
use mcp_proto::session::{CloseReason, EraPolicy, ProtocolVersion, RequestOptions};
use mcp_proto::types::{CreateMessageResult, Implementation, ServerCapabilities, ToolsCapability};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::sync::{Notify, oneshot};

use super::{PipeWriter, pipe};
use crate::server::{ListChanged, RequestContext, RequestOutcome, Server, ServerHandle};
use crate::{CallOptions, CancelHandle, Client, ClientBuilder, Error, Progress, Runtime};

/// What the test server's handler reports to the test.
#[derive(Default)]
struct Seen {
    /// `tools/call` requests whose handler saw the cancellation, with the context's view.
    cancelled: Mutex<Vec<String>>,
    cancelled_notify: Notify,
    /// Notifications the handler received.
    notifications: Mutex<Vec<String>>,
    notification_notify: Notify,
    /// Set by the blocking tool once it started.
    started: Notify,
}

fn ok(value: &Value) -> RequestOutcome {
    to_raw(value).map_err(|e| ErrorObject::new(ErrorObject::INTERNAL_ERROR, e.to_string()))
}

fn text(result: &mcp_proto::types::CallToolResult) -> String {
    serde_json::to_value(&result.content).expect("content serializes")[0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// The tools of the test server: `progress` (three steps, then an answer), `sample` (asks
/// the client's model), `block` (runs until cancelled).
async fn tools_call(
    seen: Arc<Seen>,
    params: Option<Box<RawValue>>,
    cx: RequestContext,
) -> RequestOutcome {
    let params: Value = params.map_or(Value::Null, |p| {
        serde_json::from_str(p.get()).unwrap_or(Value::Null)
    });
    match params["name"].as_str() {
        Some("progress") => {
            for step in 1..=3 {
                let sent = cx
                    .progress(f64::from(step), Some(3.0), Some(&format!("step {step}")))
                    .map_err(|e| ErrorObject::new(ErrorObject::INTERNAL_ERROR, e.to_string()))?;
                assert_eq!(sent, cx.progress_token().is_some(), "sent iff asked for");
            }
            ok(&json!({"content": [{"type": "text", "text": "done"}]}))
        }
        Some("sample") => {
            let ask = json!({
                "messages": [{"role": "user", "content": {"type": "text", "text": "what is 2+2?"}}],
                "maxTokens": 16
            });
            let ask = to_raw(&ask).expect("valid JSON");
            let answer = cx
                .request_raw("sampling/createMessage", Some(&ask), RequestOptions::new())
                .await
                .map_err(|e| ErrorObject::new(ErrorObject::INTERNAL_ERROR, e.to_string()))?;
            let answer: CreateMessageResult = answer.decode().expect("a CreateMessageResult");
            let said = serde_json::to_value(&answer.content).expect("serializes")["text"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            ok(&json!({"content": [{"type": "text", "text": format!("the model said: {said}")}]}))
        }
        Some("whoami") => {
            // The request's own view: its envelope in 2026, the session's otherwise.
            let who = json!({
                "version": cx.protocol_version().map(|v| v.as_str()),
                "client": cx.client_info().map(|i| i.name),
                "enveloped": cx.envelope().is_some(),
                "sampling": cx.client_capabilities().is_some_and(|c| c.sampling.is_some()),
            });
            ok(&json!({"content": [{"type": "text", "text": who.to_string()}]}))
        }
        Some("block") => {
            seen.started.notify_one();
            // Dropped by the driver when the client cancels; `cancelled` wakes work beside it.
            let watcher = cx.clone();
            let seen2 = seen.clone();
            // The future below never completes on its own: only the cancellation ends it.
            cx.cancelled().await;
            seen2.cancelled.lock().expect("not poisoned").push(format!(
                "cancelled={} reason={:?}",
                watcher.is_cancelled(),
                watcher.cancel_reason()
            ));
            seen2.cancelled_notify.notify_one();
            std::future::pending::<RequestOutcome>().await
        }
        other => Err(ErrorObject::new(
            ErrorObject::INVALID_PARAMS,
            format!("unknown tool {other:?}"),
        )),
    }
}

struct TestHandler {
    seen: Arc<Seen>,
}

impl crate::server::ServerHandler for TestHandler {
    fn on_request(
        &self,
        method: String,
        params: Option<Box<RawValue>>,
        context: RequestContext,
    ) -> crate::HandlerFuture<'_, RequestOutcome> {
        let seen = self.seen.clone();
        Box::pin(async move {
            match method.as_str() {
                "tools/list" => ok(&json!({"tools": [
                    {"name": "progress", "inputSchema": {"type": "object"}},
                    {"name": "sample", "inputSchema": {"type": "object"}},
                    {"name": "block", "inputSchema": {"type": "object"}},
                ]})),
                "tools/call" => tools_call(seen, params, context).await,
                other => Err(ErrorObject::method_not_found(other)),
            }
        })
    }

    fn on_notification(&self, method: &str, _params: Option<&RawValue>, _server: &ServerHandle) {
        self.seen
            .notifications
            .lock()
            .expect("not poisoned")
            .push(method.to_owned());
        self.seen.notification_notify.notify_one();
    }
}

/// Starts the test server and connects a client with a sampling handler to it over a pipe
/// pair. Returns the client, the server's handle, what the handler saw, and the driver's
/// outcome.
async fn start<R: Runtime>(
    rt: &R,
) -> (
    Client<R>,
    ServerHandle,
    Arc<Seen>,
    oneshot::Receiver<CloseReason>,
) {
    start_with(rt, EraPolicy::Initialize).await
}

/// The test server's configuration: `tools` with `listChanged`, every protocol version.
fn suite_config() -> ServerConfig {
    ServerConfig::new(Implementation::new("suite-server", "1.0")).with_capabilities(
        ServerCapabilities {
            tools: Some(ToolsCapability {
                list_changed: Some(true),
                ..ToolsCapability::default()
            }),
            ..ServerCapabilities::default()
        },
    )
}

/// [`start`] with the client's era policy.
async fn start_with<R: Runtime>(
    rt: &R,
    era: EraPolicy,
) -> (
    Client<R>,
    ServerHandle,
    Arc<Seen>,
    oneshot::Receiver<CloseReason>,
) {
    start_configured(rt, era, suite_config()).await
}

/// [`start_with`] and the server's configuration.
async fn start_configured<R: Runtime>(
    rt: &R,
    era: EraPolicy,
    config: ServerConfig,
) -> (
    Client<R>,
    ServerHandle,
    Arc<Seen>,
    oneshot::Receiver<CloseReason>,
) {
    let (to_server, server_reads) = pipe(64 * 1024);
    let (to_client, client_reads) = pipe(64 * 1024);
    let seen = Arc::new(Seen::default());
    let handler = TestHandler { seen: seen.clone() };
    let (handle, driver) = Server::new(config).start(rt.clone(), handler, server_reads, to_client);
    let (done_tx, done) = oneshot::channel();
    rt.spawn(Box::pin(async move {
        let _ = done_tx.send(driver.await);
    }));
    let client = ClientBuilder::new()
        .runtime(rt.clone())
        .era_policy(era)
        .name("suite")
        .on_sampling(|params| async move {
            let question = params.last_user_text().unwrap_or_default();
            Ok(CreateMessageResult::text(
                "test-model",
                format!("{question} 4"),
            ))
        })
        .over(client_reads, to_server)
        .await
        .expect("handshake with the server driver");
    (client, handle, seen, done)
}

/// A tool call with progress: every update reaches the client's callback, in order, before
/// the answer; the server session negotiated the handshake.
pub async fn call_with_progress<R: Runtime>(rt: R) {
    let (client, handle, _seen, done) = start(&rt).await;
    assert_eq!(client.server_info().name, "suite-server");
    assert_eq!(handle.protocol_version(), Some(client.protocol_version()));
    assert!(handle.client_info().is_some(), "the client's info is known");
    let tools = client.list_tools().await.expect("tools/list");
    assert_eq!(tools.len(), 3);
    let updates = Arc::new(Mutex::new(Vec::<Progress>::new()));
    let sink = updates.clone();
    let options =
        CallOptions::new().on_progress(move |p| sink.lock().expect("not poisoned").push(p));
    let result = client
        .call_tool_with("progress", json!({}), options)
        .await
        .expect("the call");
    assert_eq!(text(&result), "done");
    let updates = updates.lock().expect("not poisoned").clone();
    let steps: Vec<(f64, Option<f64>, Option<String>)> = updates
        .into_iter()
        .map(|p| (p.progress, p.total, p.message))
        .collect();
    assert_eq!(
        steps,
        (1..=3)
            .map(|s| (f64::from(s), Some(3.0), Some(format!("step {s}"))))
            .collect::<Vec<_>>()
    );
    client.close().await;
    let reason = done.await.expect("the driver finished");
    assert!(
        matches!(reason, CloseReason::TransportClosed { .. }),
        "the client's close ends the server: {reason:?}"
    );
    assert!(handle.is_closed());
}

/// The handshake negotiates down to the newest version the server speaks (the client asked
/// for a newer one), both ends agree on it, `tools/list` carries the server's tools, and
/// `ping` is answered both ways (by each side's session, not its handlers).
pub async fn negotiated_handshake_tools_list_and_ping_both_ways<R: Runtime>(rt: R) {
    let config =
        suite_config().with_versions([ProtocolVersion::V2025_03_26, ProtocolVersion::V2025_06_18]);
    let (client, handle, _seen, done) = start_configured(&rt, EraPolicy::Initialize, config).await;
    assert!(
        ProtocolVersion::LATEST_INITIALIZE > ProtocolVersion::V2025_06_18,
        "the client asks for a newer version than the server speaks"
    );
    assert_eq!(client.protocol_version(), ProtocolVersion::V2025_06_18);
    assert_eq!(
        handle.protocol_version(),
        Some(ProtocolVersion::V2025_06_18)
    );
    assert_eq!(client.server_info().name, "suite-server");
    assert!(
        client
            .capabilities()
            .tools
            .as_ref()
            .is_some_and(|t| t.list_changed == Some(true)),
        "the server's capabilities reach the client"
    );

    let tools = client.list_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["progress", "sample", "block"]);

    client.ping().await.expect("the server answers ping");
    let pong = handle
        .request_raw("ping", None, RequestOptions::new())
        .await
        .expect("the client answers ping");
    assert_eq!(pong.decode::<Value>().expect("JSON"), json!({}));

    client.close().await;
    let reason = done.await.expect("the driver finished");
    assert!(
        matches!(reason, CloseReason::TransportClosed { .. }),
        "{reason:?}"
    );
}

/// A handler asks the client's model (`sampling/createMessage`) mid-call and awaits the
/// answer of the client's sampling handler.
pub async fn sampling_from_a_handler<R: Runtime>(rt: R) {
    let (client, handle, _seen, _done) = start(&rt).await;
    assert!(
        handle
            .client_capabilities()
            .is_some_and(|c| c.sampling.is_some()),
        "the client declared sampling"
    );
    let result = client
        .call_tool("sample", json!({}))
        .await
        .expect("the call");
    assert_eq!(text(&result), "the model said: what is 2+2? 4");
    client.close().await;
}

/// The client cancels a call: the handler's context sees it with the client's reason, the
/// call fails on the client side, and the server answers nothing (the next call still works).
pub async fn cancellation_reaches_the_handler<R: Runtime>(rt: R) {
    let (client, _handle, seen, _done) = start(&rt).await;
    let (options, cancel): (CallOptions, CancelHandle) = CallOptions::new().cancel_handle();
    let started = seen.started.notified();
    let call = client.call_tool_with("block", json!({}), options);
    let mut call = Box::pin(call);
    // Drive the call until the handler runs, then cancel it.
    let outcome = {
        let mut started = Box::pin(started);
        match futures_util::future::select(&mut call, &mut started).await {
            futures_util::future::Either::Left((r, _)) => panic!("block answered: {r:?}"),
            futures_util::future::Either::Right(((), _)) => {
                cancel.cancel("the user gave up");
                call.await
            }
        }
    };
    assert!(
        matches!(outcome, Err(Error::Cancelled { .. })),
        "the call ends cancelled: {outcome:?}"
    );
    let notified = seen.cancelled_notify.notified();
    if seen.cancelled.lock().expect("not poisoned").is_empty() {
        notified.await;
    }
    assert_eq!(
        *seen.cancelled.lock().expect("not poisoned"),
        vec![r#"cancelled=true reason=Some("the user gave up")"#.to_owned()]
    );
    let again = client
        .call_tool("progress", json!({}))
        .await
        .expect("a later call");
    assert_eq!(text(&again), "done");
    client.close().await;
}

/// Notifications both ways: the server's `list_changed` reaches the client's stream, the
/// client's notification reaches the handler; a client disconnect cancels running work.
pub async fn notifications_both_ways<R: Runtime>(rt: R) {
    let (client, handle, seen, done) = start(&rt).await;
    let mut notes = client.notifications();
    handle
        .notify_list_changed(ListChanged::Tools)
        .expect("tools.listChanged is declared");
    let note = notes
        .recv()
        .await
        .expect("a notification")
        .expect("not lagged");
    assert_eq!(note.method, "notifications/tools/list_changed");
    // Not declared: refused at once, nothing sent.
    assert!(handle.notify_list_changed(ListChanged::Prompts).is_err());

    let heard = seen.notification_notify.notified();
    client
        .notify("notifications/roots/list_changed", json!({}))
        .expect("sent");
    heard.await;
    assert_eq!(
        *seen.notifications.lock().expect("not poisoned"),
        vec!["notifications/roots/list_changed".to_owned()]
    );

    // A call left running when the client goes away is cancelled on the server.
    let started = seen.started.notified();
    let client2 = client.clone();
    rt.spawn(Box::pin(async move {
        let _ = client2.call_tool("block", json!({})).await;
    }));
    started.await;
    let cancelled = seen.cancelled_notify.notified();
    client.close().await;
    cancelled.await;
    let reason = done.await.expect("the driver finished");
    assert!(
        matches!(reason, CloseReason::TransportClosed { .. }),
        "{reason:?}"
    );
}

/// A client that writes its requests and closes its end at once (`printf ... | server`)
/// still gets every answer: the session ends only after the running handlers answered and
/// the answers were written.
pub async fn piped_requests_are_answered_before_the_end_of_input<R: Runtime>(rt: R) {
    use futures_util::{AsyncReadExt, AsyncWriteExt};
    let (mut to_server, server_reads) = pipe(64 * 1024);
    let (to_client, mut client_reads) = pipe(64 * 1024);
    let config = ServerConfig::new(Implementation::new("suite-server", "1.0")).with_capabilities(
        ServerCapabilities {
            tools: Some(ToolsCapability::default()),
            ..ServerCapabilities::default()
        },
    );
    let handler = TestHandler {
        seen: Arc::new(Seen::default()),
    };
    let server = Server::new(config).eof_grace(std::time::Duration::from_secs(10));
    let (_handle, driver) = server.start(rt.clone(), handler, server_reads, to_client);
    let (done_tx, done) = oneshot::channel();
    rt.spawn(Box::pin(async move {
        let _ = done_tx.send(driver.await);
    }));
    let input = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"progress","arguments":{},"_meta":{"progressToken":"p"}}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#,
        "\n",
    );
    to_server
        .write_all(input.as_bytes())
        .await
        .expect("written");
    drop(to_server);
    let mut output = String::new();
    client_reads
        .read_to_string(&mut output)
        .await
        .expect("the server's output ends");
    let lines: Vec<Value> = output
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON message per line"))
        .collect();
    let answer = |id: u64| {
        lines
            .iter()
            .position(|m| m["id"] == id && m.get("result").is_some())
            .unwrap_or_else(|| panic!("no answer to {id} in {lines:#?}"))
    };
    let call = answer(2);
    answer(3);
    let progress: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i]["method"] == "notifications/progress")
        .collect();
    assert_eq!(progress.len(), 3, "{lines:#?}");
    assert!(
        progress.iter().all(|&i| i < call),
        "progress before the answer"
    );
    let reason = done.await.expect("the driver finished");
    assert!(
        matches!(reason, CloseReason::TransportClosed { .. }),
        "{reason:?}"
    );
}

/// Records what was written between flushes (the last segment may still be open), and
/// holds writes back while `gate` is set.
struct FlushRecorder {
    inner: PipeWriter,
    gate: Arc<std::sync::atomic::AtomicBool>,
    waker: Arc<Mutex<Option<std::task::Waker>>>,
    /// Whether the last segment of `flushed` was flushed (a write starts a new one).
    closed: bool,
    flushed: Arc<Mutex<Vec<String>>>,
}

impl futures_io::AsyncWrite for FlushRecorder {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        data: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        if self.gate.load(std::sync::atomic::Ordering::SeqCst) {
            *self.waker.lock().expect("not poisoned") = Some(cx.waker().clone());
            return std::task::Poll::Pending;
        }
        let this = &mut *self;
        // Locked across the write, so the reader of the pipe never sees bytes the record
        // lacks.
        let flushed = this.flushed.clone();
        let mut segments = flushed.lock().expect("not poisoned");
        let n = std::task::ready!(std::pin::Pin::new(&mut this.inner).poll_write(cx, data))?;
        if this.closed || segments.is_empty() {
            segments.push(String::new());
            this.closed = false;
        }
        let last = segments.last_mut().expect("pushed above");
        last.push_str(&String::from_utf8_lossy(&data[..n]));
        drop(segments);
        std::task::Poll::Ready(Ok(n))
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let this = &mut *self;
        this.closed = true;
        std::pin::Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_close(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.inner).poll_close(cx)
    }
}

/// Progress queued together with the answer after it still goes out in a flush of its own,
/// before the answer (the TypeScript SDK's client drops progress that arrives in the same
/// read as its answer). The output is held back while the tool reports and answers, so all
/// of it is queued at once.
pub async fn progress_is_flushed_apart_from_the_answer<R: Runtime>(rt: R) {
    use futures_util::{AsyncBufReadExt, AsyncWriteExt, StreamExt};
    let (mut to_server, server_reads) = pipe(64 * 1024);
    let (to_client, client_reads) = pipe(64 * 1024);
    let gate = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let waker = Arc::new(Mutex::new(None::<std::task::Waker>));
    let flushed = Arc::new(Mutex::new(Vec::new()));
    let writer = FlushRecorder {
        inner: to_client,
        gate: gate.clone(),
        waker: waker.clone(),
        closed: true,
        flushed: flushed.clone(),
    };
    let config = ServerConfig::new(Implementation::new("suite-server", "1.0")).with_capabilities(
        ServerCapabilities {
            tools: Some(ToolsCapability::default()),
            ..ServerCapabilities::default()
        },
    );
    let handler = TestHandler {
        seen: Arc::new(Seen::default()),
    };
    let (handle, driver) = Server::new(config).start(rt.clone(), handler, server_reads, writer);
    rt.spawn(Box::pin(async move {
        driver.await;
    }));
    let mut lines = futures_util::io::BufReader::new(client_reads).lines();
    let handshake = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        "\n",
    );
    to_server
        .write_all(handshake.as_bytes())
        .await
        .expect("written");
    lines
        .next()
        .await
        .expect("the initialize answer")
        .expect("read");
    gate.store(true, std::sync::atomic::Ordering::SeqCst);
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"progress","_meta":{"progressToken":"p"}}}"#;
    to_server
        .write_all(format!("{call}\n").as_bytes())
        .await
        .expect("written");
    // Wait until the tool has answered (its answer is queued behind the held output).
    while handle.open_requests() > 0 || handle.protocol_version().is_none() {
        rt.yield_now().await;
    }
    gate.store(false, std::sync::atomic::Ordering::SeqCst);
    if let Some(w) = waker.lock().expect("not poisoned").take() {
        w.wake();
    }
    loop {
        let line = lines.next().await.expect("more output").expect("read");
        if line.contains(r#""id":2"#) {
            break;
        }
    }
    let flushed = flushed.lock().expect("not poisoned").clone();
    let answer = flushed
        .iter()
        .position(|s| s.contains(r#""id":2"#))
        .unwrap_or_else(|| panic!("the answer was written: {flushed:#?}"));
    assert!(
        !flushed[answer].contains("notifications/progress"),
        "progress shares the answer's flush: {flushed:#?}"
    );
    let progress_flushes = flushed[..answer]
        .iter()
        .filter(|s| s.contains("notifications/progress"))
        .count();
    assert!(
        progress_flushes >= 1,
        "progress before the answer: {flushed:#?}"
    );
    handle.close();
}

/// Protocol 2026-07-28 through the driver: a Discover client's call reaches the handler with
/// the request's own envelope in its context (version, client info, capabilities), while the
/// initialize era's context shows the session's.
pub async fn the_context_carries_the_2026_envelope<R: Runtime>(rt: R) {
    // The initialize era: the session's view (what `initialize` said).
    let (client, _handle, _seen, _done) = start(&rt).await;
    let result = client
        .call_tool("whoami", json!({}))
        .await
        .expect("the call");
    let legacy: Value = serde_json::from_str(&text(&result)).expect("JSON");
    assert_eq!(legacy["enveloped"], false);
    assert_eq!(legacy["version"], client.protocol_version().as_str());
    assert!(legacy["client"].is_string(), "{legacy}");
    client.close().await;
    // 2026-07-28: the request's own envelope, with the same client info.
    let (client, _handle, _seen, _done) = start_with(&rt, EraPolicy::Discover).await;
    assert_eq!(
        client.protocol_version(),
        mcp_proto::session::ProtocolVersion::V2026_07_28
    );
    let result = client
        .call_tool("whoami", json!({}))
        .await
        .expect("the call");
    let modern: Value = serde_json::from_str(&text(&result)).expect("JSON");
    assert_eq!(
        modern,
        json!({"version": "2026-07-28", "client": legacy["client"], "enveloped": true, "sampling": true})
    );
    client.close().await;
}

/// Answers a deferred `initialize` from the client's own params.
struct DeferringHandler;

impl crate::server::ServerHandler for DeferringHandler {
    fn on_initialize(
        &self,
        params: mcp_proto::types::InitializeParams,
        _server: ServerHandle,
    ) -> crate::HandlerFuture<'_, crate::server::InitializeOutcome> {
        Box::pin(async move {
            Ok(crate::server::InitializeAnswer::new(Implementation::new(
                format!("for-{}", params.client_info.name),
                "1",
            ))
            .with_instructions(Some(format!("asked {}", params.protocol_version))))
        })
    }
}

/// Over stdio too, a deferred `initialize` is answered by the handler's `on_initialize`
/// with the client's own params; the session takes the answer as its identity. The handler
/// keeps `on_request`'s default, which refuses every request with `-32601`.
pub async fn deferred_initialize_over_stdio<R: Runtime>(rt: R) {
    let (to_server, server_reads) = pipe(64 * 1024);
    let (to_client, client_reads) = pipe(64 * 1024);
    let config =
        ServerConfig::new(Implementation::new("configured", "1")).with_deferred_initialize(true);
    let (handle, driver) =
        Server::new(config).start(rt.clone(), DeferringHandler, server_reads, to_client);
    rt.spawn(Box::pin(async move {
        let _ = driver.await;
    }));
    let client = ClientBuilder::new()
        .runtime(rt.clone())
        .client_info(Implementation::new("stdio-host", "1"))
        .protocol_version(mcp_proto::session::ProtocolVersion::V2025_06_18)
        .over(client_reads, to_server)
        .await
        .expect("handshake with the deferring server");
    assert_eq!(client.server_info().name, "for-stdio-host");
    assert_eq!(client.instructions(), Some("asked 2025-06-18"));
    assert_eq!(
        client.protocol_version(),
        mcp_proto::session::ProtocolVersion::V2025_06_18
    );
    assert_eq!(
        handle.client_info().map(|i| i.name),
        Some("stdio-host".to_owned())
    );
    // The handler answers no request itself: `on_request`'s default refuses each, naming it.
    let refused = client
        .request_raw("vendor/lookup", None, CallOptions::default())
        .await
        .expect_err("the default on_request refuses");
    match refused {
        Error::Remote { code, message, .. } => {
            assert_eq!(code, ErrorObject::METHOD_NOT_FOUND);
            assert!(
                message.contains("Method not found: vendor/lookup"),
                "{message}"
            );
        }
        other => panic!("expected -32601, got {other:?}"),
    }
    client.close().await;
}
