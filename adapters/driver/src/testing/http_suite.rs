//! HTTP client test bodies, generic over the runtime, against a [`ScriptedHttpServer`]
//! (deterministic) — each adapter runs them under its own runtime with a hang guard.
//!
//! Every body panics on failure; none needs a network beyond 127.0.0.1.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_proto::types::ContentBlock;
use serde_json::{Value, json};

use super::http_server::{RecordedRequest, ScriptedHttpServer, ScriptedReply};
use super::suite::within;
use crate::{Client, ClientBuilder, Error, Runtime};

// What survives an expired session, in its own module; run with the bodies here.
pub use super::session_reset_suite::{
    http_listen_stream_broken_yields_gap, http_session_expired_refused_subscription_ends,
    http_session_expired_shared_uri_subscribed_afresh, http_session_expired_subscription_continues,
    http_session_expired_task_polled_again, http_session_expired_unknown_task_fails,
};

/// The session id the scripted server assigns first.
pub const SESSION: &str = "sess-1";

/// A JSON-RPC result answering `request`.
#[must_use]
pub fn rpc_result(request: &RecordedRequest, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": request.rpc_id(), "result": result})
}

/// The initialize result the scripted server sends: tools, logging and subscribable resources.
#[must_use]
pub fn init_result(request: &RecordedRequest) -> Value {
    let version = request
        .json()
        .and_then(|v| v["params"]["protocolVersion"].as_str().map(str::to_owned))
        .unwrap_or_else(|| "2025-06-18".into());
    rpc_result(
        request,
        json!({
            "protocolVersion": version,
            "capabilities": {"tools": {}, "logging": {}, "resources": {"subscribe": true}},
            "serverInfo": {"name": "scripted-http", "version": "1.0.0"}
        }),
    )
}

/// The replies every scripted MCP server gives: `initialize` (with `session` as
/// `Mcp-Session-Id`), 202 for notifications and responses, 405 for the GET listener, 200 for
/// DELETE. `None` for anything else.
#[must_use]
pub fn standard_reply(request: &RecordedRequest, session: &str) -> Option<ScriptedReply> {
    match request.method.as_str() {
        "GET" if request.header("last-event-id").is_none() => Some(ScriptedReply::status(405)),
        "DELETE" => Some(ScriptedReply::status(200)),
        "POST" => {
            let method = request.rpc_method();
            if method.as_deref() == Some("initialize") {
                return Some(
                    ScriptedReply::json(&init_result(request))
                        .with_header("mcp-session-id", session),
                );
            }
            if request.rpc_id().is_none() || method.is_none() {
                return Some(ScriptedReply::status(202));
            }
            None
        }
        _ => None,
    }
}

fn tools_list(request: &RecordedRequest) -> ScriptedReply {
    ScriptedReply::json(&rpc_result(
        request,
        json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}),
    ))
}

fn posts<'a>(requests: &'a [RecordedRequest], method: &str) -> Vec<&'a RecordedRequest> {
    requests
        .iter()
        .filter(|r| r.rpc_method().as_deref() == Some(method))
        .collect()
}

async fn connect<R: Runtime>(rt: &R, builder: ClientBuilder<R>, url: &str) -> Client<R> {
    builder
        .runtime(rt.clone())
        .http(url)
        .await
        .expect("connect over HTTP")
}

/// JSON replies; the session id is echoed and `MCP-Protocol-Version` sent after the
/// handshake; notifications get 202; custom headers reach the server; `close()` sends
/// `DELETE` with the session id and returns quickly.
pub async fn http_json_session_headers_delete<R: Runtime>(rt: R) {
    let server = ScriptedHttpServer::start(|r| {
        standard_reply(r, SESSION).unwrap_or_else(|| match r.rpc_method().as_deref() {
            Some("tools/list") => tools_list(r),
            _ => ScriptedReply::status(500),
        })
    });
    let builder = ClientBuilder::new()
        .header("Authorization", "Bearer s3cret")
        .header("X-Api-Key", "k-123");
    let client = connect(&rt, builder, &server.url("/mcp")).await;
    // Unnamed: errors and logs name it by its URL, port and path included (the label's
    // unit tests show a query token left out).
    assert_eq!(client.server_name(), server.url("/mcp"));
    let tools = client.list_tools().await.expect("tools/list");
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0].name, "echo");
    client
        .notify("notifications/custom", json!({"x": 1}))
        .expect("notify");
    let version = client.protocol_version().to_string();
    assert!(
        super::suite::eventually(&rt, || !posts(&server.requests(), "notifications/custom")
            .is_empty())
        .await,
        "the notification was posted"
    );
    let started = rt.now();
    client.close().await;
    assert!(
        rt.now() - started < Duration::from_secs(5),
        "close took {:?}",
        rt.now() - started
    );
    let requests = server.requests();
    let init = posts(&requests, "initialize");
    assert_eq!(init.len(), 1);
    assert_eq!(init[0].header("mcp-session-id"), None);
    let accept = init[0].header("accept").unwrap_or_default();
    assert!(
        accept.contains("application/json") && accept.contains("text/event-stream"),
        "{accept}"
    );
    for r in posts(&requests, "tools/list")
        .into_iter()
        .chain(posts(&requests, "notifications/initialized"))
        .chain(posts(&requests, "notifications/custom"))
    {
        assert_eq!(r.header("mcp-session-id"), Some(SESSION), "{r:?}");
        assert_eq!(r.header("mcp-protocol-version"), Some(version.as_str()));
        assert_eq!(r.header("authorization"), Some("Bearer s3cret"));
        assert_eq!(r.header("x-api-key"), Some("k-123"));
    }
    let delete: Vec<_> = requests.iter().filter(|r| r.method == "DELETE").collect();
    assert_eq!(delete.len(), 1, "one DELETE on close");
    assert_eq!(delete[0].header("mcp-session-id"), Some(SESSION));
    assert_eq!(delete[0].path, "/mcp");
}

/// An SSE reply delivers the notification sent before the response, then the response.
pub async fn http_sse_notification_before_response<R: Runtime>(rt: R) {
    let server = ScriptedHttpServer::start(|r| {
        standard_reply(r, SESSION).unwrap_or_else(|| match r.rpc_method().as_deref() {
            Some("tools/call") => ScriptedReply::sse([
                ScriptedReply::data(&json!({
                    "jsonrpc": "2.0",
                    "method": "notifications/message",
                    "params": {"level": "info", "data": "working"}
                })),
                ScriptedReply::data(&rpc_result(
                    r,
                    json!({"content": [{"type": "text", "text": "done"}]}),
                )),
            ])
            .with_pause(Duration::from_millis(20)),
            _ => ScriptedReply::status(500),
        })
    });
    let client = connect(&rt, ClientBuilder::new(), &server.url("/mcp")).await;
    let mut notes = client.notifications();
    let r = client.call_tool("echo", json!({})).await.expect("call");
    assert!(matches!(&r.content[0], ContentBlock::Text(t) if t.text == "done"));
    let n = within(&rt, Duration::from_secs(5), notes.recv())
        .await
        .expect("a notification in time")
        .expect("stream open")
        .expect("no lag");
    assert_eq!(n.method, "notifications/message");
    client.close().await;
}

/// `on_http_trace` reports every exchange as its request, then its response head, its body
/// chunks in order and its end (or an abort): the request bodies are what the server
/// received, and a JSON answer's and an SSE answer's bytes are what the server sent.
pub async fn http_trace_reports_every_exchange_step<R: Runtime>(rt: R) {
    use std::collections::BTreeMap;
    use std::sync::Mutex;

    use crate::HttpTrace;

    /// What the trace saw of one exchange.
    #[derive(Default, Debug)]
    struct Seen {
        steps: Vec<&'static str>,
        request_body: Vec<u8>,
        status: u16,
        content_type: String,
        body: Vec<u8>,
    }
    let call_answer =
        |r: &RecordedRequest| rpc_result(r, json!({"content": [{"type": "text", "text": "done"}]}));
    let server = ScriptedHttpServer::start(move |r| {
        standard_reply(r, SESSION).unwrap_or_else(|| match r.rpc_method().as_deref() {
            Some("tools/call") => ScriptedReply::sse([ScriptedReply::data(&call_answer(r))]),
            _ => ScriptedReply::status(500),
        })
    });
    let seen: Arc<Mutex<BTreeMap<u64, Seen>>> = Arc::default();
    let sink = seen.clone();
    let builder = ClientBuilder::new().on_http_trace(move |step| {
        let mut seen = sink
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match step {
            HttpTrace::Request { exchange, body, .. } => {
                let s = seen.entry(exchange).or_default();
                s.steps.push("request");
                s.request_body = body.to_vec();
            }
            HttpTrace::Response {
                exchange,
                status,
                headers,
            } => {
                let s = seen.entry(exchange).or_default();
                s.steps.push("response");
                s.status = status;
                s.content_type = headers.get("content-type").unwrap_or_default().to_owned();
            }
            HttpTrace::Body { exchange, chunk } => {
                let s = seen.entry(exchange).or_default();
                if s.steps.last() != Some(&"body") {
                    s.steps.push("body");
                }
                s.body.extend_from_slice(chunk);
            }
            HttpTrace::End { exchange } => seen.entry(exchange).or_default().steps.push("end"),
            HttpTrace::Failed { exchange, .. } => {
                seen.entry(exchange).or_default().steps.push("failed");
            }
            HttpTrace::Aborted { exchange } => {
                seen.entry(exchange).or_default().steps.push("aborted");
            }
        }
    });
    let client = connect(&rt, builder, &server.url("/mcp")).await;
    let r = client.call_tool("echo", json!({})).await.expect("call");
    assert!(matches!(&r.content[0], ContentBlock::Text(t) if t.text == "done"));
    client.close().await;

    let seen = seen
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let requests = server.requests();
    for (id, s) in seen.iter() {
        assert_eq!(s.steps.first(), Some(&"request"), "exchange {id}: {s:?}");
        // Request, response, body (if any), then how it ended; nothing before or after.
        let shape: Vec<&str> = s.steps.iter().copied().filter(|&k| k != "body").collect();
        assert!(
            matches!(
                shape.as_slice(),
                ["request", "response", "end" | "aborted"] | ["request", "failed" | "aborted"]
            ),
            "exchange {id}: {s:?}"
        );
    }
    // Every POST the server received was traced with its body, once.
    for posted in requests.iter().filter(|r| r.method == "POST") {
        let traced = seen
            .values()
            .filter(|s| s.request_body == posted.body)
            .count();
        assert_eq!(traced, 1, "{:?}", String::from_utf8_lossy(&posted.body));
    }
    // The initialize answer (a JSON body) and the call's answer (SSE) arrived whole.
    let init = seen
        .values()
        .find(|s| s.request_body.windows(10).any(|w| w == b"initialize"))
        .expect("initialize traced");
    assert_eq!(
        (init.status, init.content_type.as_str()),
        (200, "application/json")
    );
    let answer: Value = serde_json::from_slice(&init.body).expect("a whole JSON body");
    assert_eq!(answer["result"]["serverInfo"]["name"], "scripted-http");
    let call = seen
        .values()
        .find(|s| s.request_body.windows(10).any(|w| w == b"tools/call"))
        .expect("tools/call traced");
    assert_eq!(call.content_type, "text/event-stream");
    let body = String::from_utf8_lossy(&call.body);
    assert!(
        body.starts_with("data: {") && body.contains(r#""text":"done""#) && body.ends_with("\n\n"),
        "{body:?}"
    );
    // The connection may close an SSE answer's stream once the answer is in (an abort).
    assert!(
        matches!(call.steps.last(), Some(&("end" | "aborted"))),
        "{call:?}"
    );
}

/// A 404 to a request carrying the session id: the client re-initializes (without the old
/// id) and the request succeeds on the new session.
pub async fn http_session_expired_reinitializes<R: Runtime>(rt: R) {
    session_forgotten_reinitializes(rt, || ScriptedReply::status(404)).await;
}

/// A server that forgot the session and says so the TypeScript SDK's way (400 with a
/// JSON-RPC error "No valid session ID provided", npm server-everything after a restart):
/// re-initialized once, the request re-sent on the new session, as for a 404.
pub async fn http_session_forgotten_400_reinitializes<R: Runtime>(rt: R) {
    session_forgotten_reinitializes(rt, || {
        let body = json!({"jsonrpc": "2.0", "id": null, "error": {
            "code": -32000, "message": "Bad Request: No valid session ID provided"}});
        ScriptedReply::status(400)
            .with_header("content-type", "application/json")
            .with_body(body.to_string().into_bytes())
    })
    .await;
}

/// The first session is forgotten at its first `tools/list` (`forgotten` is the reply to
/// it and to every later use of its id): the client re-initializes once, without the old id,
/// and the list is answered on the new session.
async fn session_forgotten_reinitializes<R: Runtime>(
    rt: R,
    forgotten: impl Fn() -> ScriptedReply + Send + Sync + 'static,
) {
    let inits = Arc::new(AtomicUsize::new(0));
    let counter = inits.clone();
    let server = ScriptedHttpServer::start(move |r| {
        if r.rpc_method().as_deref() == Some("initialize") {
            let n = counter.fetch_add(1, Ordering::SeqCst);
            let session = if n == 0 { "sess-1" } else { "sess-2" };
            return standard_reply(r, session).expect("initialize is standard");
        }
        let current = if counter.load(Ordering::SeqCst) > 1 {
            "sess-2"
        } else {
            "sess-1"
        };
        if r.header("mcp-session-id") != Some(current) {
            return forgotten();
        }
        standard_reply(r, current).unwrap_or_else(|| match r.rpc_method().as_deref() {
            // The first session "expires" at its first tools/list.
            Some("tools/list") if current == "sess-1" => {
                counter.fetch_add(1, Ordering::SeqCst);
                forgotten()
            }
            Some("tools/list") => tools_list(r),
            _ => ScriptedReply::status(500),
        })
    });
    let client = connect(&rt, ClientBuilder::new(), &server.url("/mcp")).await;
    let tools = client
        .list_tools()
        .await
        .expect("tools/list after re-initialize");
    assert_eq!(tools.len(), 1);
    let requests = server.requests();
    let init = posts(&requests, "initialize");
    assert_eq!(init.len(), 2, "re-initialized once");
    assert_eq!(init[1].header("mcp-session-id"), None);
    let lists = posts(&requests, "tools/list");
    assert_eq!(
        lists.last().and_then(|r| r.header("mcp-session-id")),
        Some("sess-2")
    );
    client.close().await;
}

/// A reply stream that drops after an event with an id and `retry` is resumed with a GET
/// carrying `Last-Event-ID`, and the response arrives on it.
pub async fn http_resume_with_last_event_id<R: Runtime>(rt: R) {
    // The call's JSON-RPC id, for the answer on the resumed stream.
    let call_id = Arc::new(std::sync::Mutex::new(Value::Null));
    let seen = call_id.clone();
    let server = ScriptedHttpServer::start(move |r| {
        if r.method == "GET" && r.header("last-event-id") == Some("e1") {
            let id = seen.lock().map(|v| v.clone()).unwrap_or_default();
            return ScriptedReply::sse([format!(
                "id: e2\n{}",
                ScriptedReply::data(&json!({
                    "jsonrpc": "2.0", "id": id,
                    "result": {"content": [{"type": "text", "text": "resumed"}]}
                }))
            )]);
        }
        standard_reply(r, SESSION).unwrap_or_else(|| match r.rpc_method().as_deref() {
            Some("tools/call") => {
                if let Ok(mut v) = seen.lock() {
                    *v = r.rpc_id().unwrap_or_default();
                }
                // A priming event (id, retry, empty data), then the stream ends.
                ScriptedReply::sse(["id: e1\nretry: 100\ndata: "])
            }
            _ => ScriptedReply::status(500),
        })
    });
    let client = connect(&rt, ClientBuilder::new(), &server.url("/mcp")).await;
    let r = client
        .call_tool("echo", json!({}))
        .await
        .expect("resumed call");
    assert!(matches!(&r.content[0], ContentBlock::Text(t) if t.text == "resumed"));
    let requests = server.requests();
    let resume: Vec<_> = requests
        .iter()
        .filter(|r| r.method == "GET" && r.header("last-event-id").is_some())
        .collect();
    assert_eq!(resume.len(), 1);
    assert_eq!(resume[0].header("last-event-id"), Some("e1"));
    assert_eq!(resume[0].header("mcp-session-id"), Some(SESSION));
    client.close().await;
}

/// A 401 to `initialize` is a typed handshake error carrying the parsed Bearer challenge.
pub async fn http_unauthorized_challenge<R: Runtime>(rt: R) {
    let server = ScriptedHttpServer::start(|_| {
        ScriptedReply::status(401).with_header(
            "www-authenticate",
            r#"Bearer resource_metadata="http://127.0.0.1:9/.well-known/oauth-protected-resource", scope="mcp:read", error="invalid_token""#,
        )
    });
    let err = ClientBuilder::new()
        .runtime(rt.clone())
        .http_transport(mcp_proto::http::TransportMode::Streamable)
        .http(&server.url("/mcp"))
        .await
        .expect_err("401 fails the handshake");
    assert!(matches!(err, Error::Handshake { .. }), "{err:?}");
    let status = err.http_status().expect("an HTTP status error");
    assert_eq!(status.status, 401);
    let bearer = status.bearer().expect("a Bearer challenge");
    assert_eq!(
        bearer.resource_metadata(),
        Some("http://127.0.0.1:9/.well-known/oauth-protected-resource")
    );
    assert_eq!(bearer.scope(), Some(vec!["mcp:read"]));
}

/// A URL that is not HTTP is a configuration error; nothing is started.
pub async fn http_bad_url<R: Runtime>(rt: R) {
    let err = ClientBuilder::new()
        .runtime(rt.clone())
        .http("ftp://127.0.0.1/mcp")
        .await
        .expect_err("not http");
    assert!(matches!(err, Error::Config { .. }), "{err:?}");
}

// ---- real peers ------------------------------------------------------------------------------

fn text_of(r: &mcp_proto::types::CallToolResult) -> String {
    match r.content.first() {
        Some(ContentBlock::Text(t)) => t.text.clone(),
        other => panic!("expected text content, got {other:?}"),
    }
}

/// Against `py_server.py http` (PyPI `mcp` FastMCP) at `url`: handshake, `tools/list`, a call,
/// progress. With `stateful`, also session expiry: `expire_session`, then the next request
/// gets 404, the client re-initializes and the request succeeds; the resource subscription
/// (and log level) made before are restored, so a later `notify_resource_updated` still
/// reaches the subscription, after the gap it reports.
pub async fn peer_python<R: Runtime>(rt: R, url: String, stateful: bool) {
    let client = connect(&rt, ClientBuilder::new(), &url).await;
    assert_eq!(client.server_info().name, "py-peer");
    let tools = client.list_tools().await.expect("tools/list");
    for name in ["echo", "slow", "expire_session", "notify_resource_updated"] {
        assert!(tools.iter().any(|t| t.name == name), "missing tool {name}");
    }
    let r = client
        .call_tool("echo", json!({"text": "hi"}))
        .await
        .expect("echo");
    assert_eq!(text_of(&r), "hi");

    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = seen.clone();
    let options = crate::CallOptions::new().on_progress(move |p| {
        if let Ok(mut v) = sink.lock() {
            v.push(p.progress);
        }
    });
    let r = client
        .call_tool_with("slow", json!({"steps": 3, "delay_ms": 20}), options)
        .await
        .expect("slow");
    assert_eq!(text_of(&r), "done 3 steps");
    let progress = seen.lock().map(|v| v.clone()).unwrap_or_default();
    if stateful {
        assert_eq!(progress, [1.0, 2.0, 3.0], "progress in order");
    } else {
        // `--stateless --json`: a JSON body carries only the response, and there is no GET
        // stream, so the server drops its progress notifications (tests/peers/README.md).
        assert!(progress.is_empty(), "{progress:?}");
    }

    if stateful {
        client
            .set_log_level(mcp_proto::types::LoggingLevel::Warning)
            .await
            .expect("setLevel");
        let mut sub = client
            .subscribe("demo://greeting")
            .await
            .expect("subscribe");
        let r = client
            .call_tool("notify_resource_updated", json!({"uri": "demo://greeting"}))
            .await
            .expect("notify before expiry");
        assert_eq!(text_of(&r), "sent update for demo://greeting");
        within(&rt, Duration::from_secs(5), sub.recv())
            .await
            .expect("the update in time")
            .expect("subscription open")
            .expect("no lag");

        let r = client
            .call_tool("expire_session", json!({}))
            .await
            .expect("expire_session");
        assert!(text_of(&r).contains("expired"), "{r:?}");
        // The next request carries the old id: 404, re-initialize, re-sent.
        let tools = client.list_tools().await.expect("tools/list after expiry");
        assert!(!tools.is_empty());
        // The subscription was restored on the new session: the server sends the update only
        // to sessions that subscribed.
        let r = client
            .call_tool("notify_resource_updated", json!({"uri": "demo://greeting"}))
            .await
            .expect("notify after expiry");
        assert_eq!(
            text_of(&r),
            "sent update for demo://greeting",
            "subscription restored"
        );
        // The subscription says it may have missed updates, then goes on.
        let gap = within(&rt, Duration::from_secs(5), sub.recv())
            .await
            .expect("the gap in time")
            .expect("subscription open");
        assert!(
            matches!(&gap, Err(crate::Missed::Gap(g)) if g.cause == crate::GapCause::SessionExpired),
            "{gap:?}"
        );
        let n = within(&rt, Duration::from_secs(5), sub.recv())
            .await
            .expect("the update after the reset in time")
            .expect("subscription open")
            .expect("no lag");
        assert_eq!(n.method, "notifications/resources/updated");
    }
    let started = rt.now();
    client.close().await;
    assert!(
        rt.now() - started < Duration::from_secs(8),
        "close is bounded"
    );
    assert!(client.is_closed());
}

/// Against server-everything at `url` (`streamableHttp` at `/mcp`, or `sse` at `/sse`) with
/// transport `mode`: handshake, `tools/list`, `echo`, close.
pub async fn peer_everything<R: Runtime>(rt: R, url: String, mode: mcp_proto::http::TransportMode) {
    let client = connect(&rt, ClientBuilder::new().http_transport(mode), &url).await;
    assert!(
        client.server_info().name.contains("everything"),
        "{:?}",
        client.server_info()
    );
    let tools = client.list_tools().await.expect("tools/list");
    assert!(tools.iter().any(|t| t.name == "echo"), "{tools:?}");
    let r = client
        .call_tool("echo", json!({"message": "hello"}))
        .await
        .expect("echo");
    assert!(text_of(&r).contains("hello"), "{r:?}");
    let started = rt.now();
    client.close().await;
    assert!(
        rt.now() - started < Duration::from_secs(8),
        "close is bounded"
    );
}
