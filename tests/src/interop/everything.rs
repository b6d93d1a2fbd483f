//! Against `@modelcontextprotocol/server-everything` over stdio, Streamable HTTP and legacy
//! HTTP+SSE (behaviour and tool names in `tests/peers/README.md` and
//! `tests/peers/everything-tools.json`). Every body takes the [`Transport`]; the HTTP ones
//! start the server's `streamableHttp` / `sse` mode on a free port, which binds every
//! interface: the caller runs them only inside the loopback-only namespace
//! ([`crate::peers::require_netns`]).
//!
//! Over HTTP the server-to-client requests (`roots/list`, `sampling/createMessage`,
//! `elicitation/create`) arrive on the SSE stream of the pending POST (sampling, elicitation,
//! Streamable HTTP), on the GET listener (`roots/list` after `initialized`, Streamable HTTP)
//! or on the one GET stream (legacy); the handlers' answers go back as POSTs.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_driver::mcp_proto::jsonrpc::ErrorObject;
use mcp_driver::mcp_proto::session::NotificationKind;
use mcp_driver::mcp_proto::types::{CompleteParams, ContentBlock, LoggingLevel, ResourceContents};
use mcp_driver::process::StdioCommand;
use mcp_driver::{
    CallOptions, ClientBuilder, Error, HandlerFuture, Progress, Root, RootsHandler, Runtime,
    WireDirection,
};
use serde_json::{Value, json};

use mcp_driver::mcp_proto::http::TransportMode;

use super::{Spawned, Transport, bounded, eventually, params_of, sleep, text, within};
use crate::peers::Peers;

/// How long `close()` may take for server-everything (graces 1 s + 1 s, plus margin).
const CLOSE_BOUND: Duration = Duration::from_secs(5);

/// The text this client's sampling handler answers with.
pub const SAMPLED: &str = "sampled by mcp-rs interop";

/// Roots that count how often the server asked for them.
#[derive(Debug, Default, Clone)]
pub struct CountingRoots {
    /// How many `roots/list` requests were answered.
    pub calls: Arc<AtomicUsize>,
}

impl RootsHandler for CountingRoots {
    fn list_roots(&self) -> HandlerFuture<'_, Result<Vec<Root>, ErrorObject>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Box::pin(async {
            Ok(vec![
                Root::new("file:///tmp/interop-root-a").with_name("root-a"),
                Root::new("file:///tmp/interop-root-b"),
            ])
        })
    }
}

/// What the handlers of [`full_builder`] saw.
#[derive(Debug, Default, Clone)]
pub struct Seen {
    /// `roots/list` requests answered.
    pub roots: CountingRoots,
    /// Params of every `sampling/createMessage`.
    pub sampling: Arc<Mutex<Vec<Value>>>,
    /// Params of every `elicitation/create`.
    pub elicitation: Arc<Mutex<Vec<Value>>>,
}

/// A builder with every server-request handler registered (so server-everything registers its
/// capability-dependent tools), short shutdown graces, and what the handlers saw.
#[must_use]
pub fn full_builder<R: Runtime>() -> (ClientBuilder<R>, Seen) {
    let seen = Seen::default();
    let sampling = seen.sampling.clone();
    let elicitation = seen.elicitation.clone();
    let builder = ClientBuilder::new()
        .shutdown_graces(Duration::from_secs(1), Duration::from_secs(1))
        .roots_handler(seen.roots.clone())
        .sampling_handler(move |params: Value| {
            sampling.lock().expect("lock").push(params);
            async {
                Ok(json!({
                    "role": "assistant",
                    "content": {"type": "text", "text": SAMPLED},
                    "model": "interop-test-model",
                    "stopReason": "endTurn"
                }))
            }
        })
        .elicitation_handler(move |params: Value| {
            elicitation.lock().expect("lock").push(params);
            async {
                Ok(json!({
                    "action": "accept",
                    "content": {"name": "Ada Lovelace", "check": true, "email": "ada@example.com"}
                }))
            }
        });
    (builder, seen)
}

fn command(peers: &Peers) -> StdioCommand {
    StdioCommand::new(&peers.everything[0])
        .args(&peers.everything[1..])
        .args(["stdio"])
}

/// Starts server-everything over `transport` with `builder`.
pub(crate) async fn start_with<R: Runtime>(
    rt: &R,
    builder: ClientBuilder<R>,
    peers: &Peers,
    transport: Transport,
) -> Spawned<R> {
    let (mode_arg, path, mode) = match transport {
        Transport::Stdio => {
            return Spawned::start(rt, builder, "everything", command(peers)).await;
        }
        Transport::StreamableHttp => ("streamableHttp", "/mcp", TransportMode::Streamable),
        Transport::LegacySse => ("sse", "/sse", TransportMode::Legacy),
        Transport::LegacyViaAuto => ("sse", "/sse", TransportMode::Auto),
    };
    let mut program = peers.everything.clone();
    program.push(mode_arg.to_owned());
    let port = crate::peers::free_port();
    Spawned::start_http(rt, builder, "everything", &program, port, path, mode).await
}

async fn start<R: Runtime>(rt: &R, peers: &Peers, transport: Transport) -> (Spawned<R>, Seen) {
    let (builder, seen) = full_builder();
    (start_with(rt, builder, peers, transport).await, seen)
}

/// The handshake: server info, instructions, capabilities, version; ping.
pub async fn everything_handshake<R: Runtime>(rt: R, peers: Peers, transport: Transport) {
    let (s, _) = start(&rt, &peers, transport).await;
    let c = &s.client;
    assert_eq!(c.server_info().name, "mcp-servers/everything");
    assert!(
        c.instructions()
            .is_some_and(|i| i.contains("Everything Server")),
        "instructions: {:?}",
        c.instructions()
    );
    assert_eq!(c.protocol_version().as_str(), "2025-11-25");
    let caps = serde_json::to_value(c.capabilities()).expect("caps");
    for cap in ["tools", "prompts", "resources", "logging", "completions"] {
        assert!(caps.get(cap).is_some(), "capability {cap} missing: {caps}");
    }
    assert_eq!(caps["resources"]["subscribe"], true);
    c.ping().await.expect("ping");
    s.finish(&rt, CLOSE_BOUND).await;
}

/// Walks a list method page by page with raw requests; the items and the page count.
async fn raw_pages<R: Runtime>(
    s: &Spawned<R>,
    method: &'static str,
    key: &str,
) -> (Vec<Value>, usize) {
    let mut items = Vec::new();
    let mut cursor: Option<String> = None;
    for page in 1..=100 {
        let params = cursor
            .as_ref()
            .map(|c| serde_json::value::to_raw_value(&json!({ "cursor": c })).expect("raw"));
        let raw = s
            .client
            .request_raw(method, params, CallOptions::new())
            .await
            .unwrap_or_else(|e| panic!("{method}: {e}"));
        let v: Value = serde_json::from_str(raw.get()).expect("json");
        items.extend(v[key].as_array().cloned().unwrap_or_default());
        match v.get("nextCursor").and_then(Value::as_str) {
            Some(next) => cursor = Some(next.to_owned()),
            None => return (items, page),
        }
    }
    panic!("{method}: more than 100 pages");
}

/// Every list, following every page: the typed lists agree with a raw page-by-page walk.
/// (server-everything 2026.8.31 returns everything in one page; paging over several pages is
/// covered by the fake-server suite.)
pub async fn everything_lists<R: Runtime>(rt: R, peers: Peers, transport: Transport) {
    let (s, _) = start(&rt, &peers, transport).await;
    let c = &s.client;
    // The capability-dependent tools are registered after `initialized`: wait for them.
    let mut tools = Vec::new();
    for _ in 0..50 {
        tools = c.list_tools().await.expect("tools/list");
        if tools
            .iter()
            .any(|t| t.name == "trigger-elicitation-request")
        {
            break;
        }
        sleep(&rt, Duration::from_millis(50)).await;
    }
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    for expected in [
        "echo",
        "get-sum",
        "trigger-long-running-operation",
        "toggle-simulated-logging",
        "toggle-subscriber-updates",
        "get-roots-list",
        "trigger-sampling-request",
        "trigger-elicitation-request",
    ] {
        assert!(names.contains(&expected), "{expected} not in {names:?}");
    }
    let (raw_tools, _) = raw_pages(&s, "tools/list", "tools").await;
    assert_eq!(raw_tools.len(), tools.len());

    let resources = c.list_resources().await.expect("resources/list");
    let (raw, pages) = raw_pages(&s, "resources/list", "resources").await;
    assert!(pages >= 1);
    assert_eq!(resources.len(), raw.len(), "typed list = every page");
    assert!(resources.len() >= 7, "{} resources", resources.len());
    assert!(
        resources
            .iter()
            .any(|r| r.uri == "demo://resource/static/document/features.md")
    );

    let templates = c.list_resource_templates().await.expect("templates");
    let uris: Vec<&str> = templates.iter().map(|t| t.uri_template.as_str()).collect();
    assert!(
        uris.contains(&"demo://resource/dynamic/text/{resourceId}"),
        "{uris:?}"
    );
    let (raw, _) = raw_pages(&s, "resources/templates/list", "resourceTemplates").await;
    assert_eq!(raw.len(), templates.len());

    let prompts = c.list_prompts().await.expect("prompts");
    let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
    for p in [
        "simple-prompt",
        "args-prompt",
        "completable-prompt",
        "resource-prompt",
    ] {
        assert!(names.contains(&p), "{p} not in {names:?}");
    }
    s.finish(&rt, CLOSE_BOUND).await;
}

/// Tool calls: echo, get-sum, an image, structured content, and a tool error result.
pub async fn everything_tool_calls<R: Runtime>(rt: R, peers: Peers, transport: Transport) {
    let (s, _) = start(&rt, &peers, transport).await;
    let c = &s.client;
    let r = c
        .call_tool("echo", json!({"message": "hello interop"}))
        .await
        .expect("echo");
    assert_eq!(text(&r), "Echo: hello interop");
    let r = c
        .call_tool("get-sum", json!({"a": 19, "b": 23}))
        .await
        .expect("get-sum");
    assert!(text(&r).contains("42"), "{}", text(&r));
    let r = c.call_tool("get-tiny-image", ()).await.expect("image");
    assert!(
        r.content
            .iter()
            .any(|b| matches!(b, ContentBlock::Image(i) if i.mime_type == "image/png"))
    );
    let r = c
        .call_tool("get-structured-content", json!({"location": "Chicago"}))
        .await
        .expect("structured");
    assert!(
        r.structured_content
            .as_ref()
            .is_some_and(|v| v.get("temperature").is_some()),
        "{:?}",
        r.structured_content
    );
    let r = c
        .call_tool("no-such-tool", ())
        .await
        .expect("an unknown tool is a result with isError");
    assert_eq!(r.is_error, Some(true));
    s.finish(&rt, CLOSE_BOUND).await;
}

/// A long-running tool reports progress (increasing, with the total) before its result.
pub async fn everything_progress<R: Runtime>(rt: R, peers: Peers, transport: Transport) {
    let (s, _) = start(&rt, &peers, transport).await;
    let seen: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let sink = seen.clone();
    let options = CallOptions::new()
        .timeout(Duration::from_secs(20))
        .on_progress(move |p| sink.lock().expect("lock").push(p));
    let r = s
        .client
        .call_tool_with(
            "trigger-long-running-operation",
            json!({"duration": 1, "steps": 4}),
            options,
        )
        .await
        .expect("long-running");
    assert!(text(&r).contains("completed"), "{}", text(&r));
    let seen = seen.lock().expect("lock").clone();
    assert_eq!(seen.len(), 4, "{seen:?}");
    for (i, p) in seen.iter().enumerate() {
        assert_eq!(p.progress, (i + 1) as f64);
        assert_eq!(p.total, Some(4.0));
    }
    s.finish(&rt, CLOSE_BOUND).await;
}

/// `logging/setLevel` and `notifications/message` from simulated logging.
pub async fn everything_logging<R: Runtime>(rt: R, peers: Peers, transport: Transport) {
    let (s, _) = start(&rt, &peers, transport).await;
    let c = &s.client;
    let mut notes = c.notifications();
    c.set_log_level(LoggingLevel::Debug)
        .await
        .expect("setLevel");
    let r = c
        .call_tool("toggle-simulated-logging", ())
        .await
        .expect("toggle");
    assert!(text(&r).starts_with("Started"), "{}", text(&r));
    // One message is sent at once (random level, all levels let through), then every 5 s.
    // Other log messages may come first (over Streamable HTTP, "Roots updated" from the
    // server's `roots/list` round arrives on the GET listener after the level is set): the
    // simulated ones are recognised by their text, which is "Debug-level message" and the like
    // except for the alert level's "Alert level-message" (sic): missing that one failed this
    // test whenever the first two picks were both alert.
    let message = bounded(
        &rt,
        Duration::from_secs(8),
        "a simulated log message",
        async {
            loop {
                let n = notes.recv().await.expect("stream open").expect("no lag");
                let p = params_of(&n);
                if n.kind() == NotificationKind::LogMessage
                    && p["data"].as_str().is_some_and(|d| {
                        d.contains("-level message") || d.contains(" level-message")
                    })
                {
                    return p;
                }
            }
        },
    )
    .await;
    assert!(message["level"].is_string(), "{message}");
    // Over HTTP the server names the session it logs for; over stdio there is none.
    let data = message["data"].as_str().unwrap_or_default();
    assert_eq!(data.contains("SessionId"), transport.is_http(), "{message}");
    let r = c
        .call_tool("toggle-simulated-logging", ())
        .await
        .expect("toggle off");
    assert!(text(&r).starts_with("Stopped"), "{}", text(&r));
    s.finish(&rt, CLOSE_BOUND).await;
}

/// The server's `sampling/createMessage` is answered by the registered handler.
pub async fn everything_sampling<R: Runtime>(rt: R, peers: Peers, transport: Transport) {
    let (s, seen) = start(&rt, &peers, transport).await;
    let r = s
        .client
        .call_tool(
            "trigger-sampling-request",
            json!({"prompt": "say hi", "maxTokens": 10}),
        )
        .await
        .expect("sampling tool");
    assert!(text(&r).contains(SAMPLED), "{}", text(&r));
    let params = seen.sampling.lock().expect("lock").clone();
    assert_eq!(params.len(), 1);
    assert_eq!(params[0]["maxTokens"], 10);
    assert!(
        params[0]["messages"][0]["content"]["text"]
            .as_str()
            .is_some_and(|t| t.contains("say hi")),
        "{}",
        params[0]
    );
    s.finish(&rt, CLOSE_BOUND).await;
}

/// The server's `elicitation/create` is answered by the registered handler.
pub async fn everything_elicitation<R: Runtime>(rt: R, peers: Peers, transport: Transport) {
    let (s, seen) = start(&rt, &peers, transport).await;
    let r = s
        .client
        .call_tool("trigger-elicitation-request", ())
        .await
        .expect("elicitation tool");
    let t = text(&r);
    assert!(t.contains("Ada Lovelace"), "{t}");
    assert!(t.contains("\"accept\""), "{t}");
    let params = seen.elicitation.lock().expect("lock").clone();
    assert_eq!(params.len(), 1);
    assert!(params[0]["requestedSchema"]["properties"]["name"].is_object());
    s.finish(&rt, CLOSE_BOUND).await;
}

/// `roots/list`, sent by the server after `initialized`, is answered by the roots handler;
/// `get-roots-list` shows the roots the server got.
pub async fn everything_roots<R: Runtime>(rt: R, peers: Peers, transport: Transport) {
    let (s, seen) = start(&rt, &peers, transport).await;
    let calls = seen.roots.calls.clone();
    assert!(
        eventually(&rt, || calls.load(Ordering::SeqCst) >= 1).await,
        "the server never asked for roots"
    );
    let r = s
        .client
        .call_tool("get-roots-list", ())
        .await
        .expect("get-roots-list");
    let t = text(&r);
    assert!(t.contains("2 total"), "{t}");
    assert!(
        t.contains("root-a") && t.contains("file:///tmp/interop-root-b"),
        "{t}"
    );
    s.finish(&rt, CLOSE_BOUND).await;
}

/// Reading text, blob and static resources; subscribing: updates arrive, and dropping the
/// subscription sends `resources/unsubscribe` (the server acknowledges it in a log message).
pub async fn everything_resources<R: Runtime>(rt: R, peers: Peers, transport: Transport) {
    let (s, _) = start(&rt, &peers, transport).await;
    let c = &s.client;
    let uri = "demo://resource/dynamic/text/1";
    let r = c.read_resource(uri).await.expect("read text");
    match &r.contents[..] {
        [ResourceContents::Text(t)] => {
            assert_eq!(t.uri, uri);
            assert!(!t.text.is_empty());
        }
        other => panic!("expected one text content, got {other:?}"),
    }
    let r = c
        .read_resource("demo://resource/dynamic/blob/2")
        .await
        .expect("read blob");
    assert!(matches!(&r.contents[..], [ResourceContents::Blob(b)] if !b.blob.is_empty()));
    let r = c
        .read_resource("demo://resource/static/document/features.md")
        .await
        .expect("read static");
    assert!(
        matches!(&r.contents[..], [ResourceContents::Text(t)] if t.text.contains("Everything Server"))
    );
    match c.read_resource("demo://resource/dynamic/text/none").await {
        Err(e @ Error::Remote { .. }) => assert!(e.to_string().contains("Unknown resource"), "{e}"),
        other => panic!("expected a remote error, got {other:?}"),
    }

    c.set_log_level(LoggingLevel::Debug)
        .await
        .expect("setLevel");
    let mut notes = c.notifications();
    let mut sub = c.subscribe(uri).await.expect("subscribe");
    assert_eq!(sub.uri(), Some(uri));
    let r = c
        .call_tool("toggle-subscriber-updates", ())
        .await
        .expect("toggle updates");
    assert!(text(&r).contains("Started"), "{}", text(&r));
    // One update at once, then every 5 s.
    let update = bounded(&rt, Duration::from_secs(8), "a resource update", sub.recv())
        .await
        .expect("stream open")
        .expect("no lag");
    assert_eq!(params_of(&update)["uri"], uri);
    c.call_tool("toggle-subscriber-updates", ())
        .await
        .expect("toggle off");
    drop(sub);
    bounded(
        &rt,
        Duration::from_secs(5),
        "the unsubscribe acknowledgement",
        async {
            loop {
                let n = notes.recv().await.expect("open").expect("no lag");
                if n.kind() == NotificationKind::LogMessage
                    && params_of(&n)["data"]
                        .as_str()
                        .is_some_and(|d| d.contains("Unsubscribe") && d.contains(uri))
                {
                    return;
                }
            }
        },
    )
    .await;
    s.finish(&rt, CLOSE_BOUND).await;
}

/// Prompts: one without arguments, one with.
pub async fn everything_prompts<R: Runtime>(rt: R, peers: Peers, transport: Transport) {
    let (s, _) = start(&rt, &peers, transport).await;
    let c = &s.client;
    let r = c
        .get_prompt("simple-prompt", BTreeMap::new())
        .await
        .expect("simple");
    assert_eq!(r.messages.len(), 1);
    let args = BTreeMap::from([("city".to_owned(), "Lisbon".to_owned())]);
    let r = c.get_prompt("args-prompt", args).await.expect("args");
    let v = serde_json::to_value(&r.messages).expect("json");
    assert!(v.to_string().contains("Lisbon"), "{v}");
    match c.get_prompt("no-such-prompt", BTreeMap::new()).await {
        Err(Error::Remote { code, .. }) => assert_eq!(code, -32602),
        other => panic!("expected a remote error, got {other:?}"),
    }
    s.finish(&rt, CLOSE_BOUND).await;
}

/// Completion of a prompt argument, with and without context.
pub async fn everything_completion<R: Runtime>(rt: R, peers: Peers, transport: Transport) {
    let (s, _) = start(&rt, &peers, transport).await;
    let c = &s.client;
    let params = |v: Value| -> CompleteParams { serde_json::from_value(v).expect("params") };
    let r = c
        .complete(params(json!({
            "ref": {"type": "ref/prompt", "name": "completable-prompt"},
            "argument": {"name": "department", "value": "S"}
        })))
        .await
        .expect("complete");
    assert_eq!(r.completion.values, ["Sales", "Support"]);
    let r = c
        .complete(params(json!({
            "ref": {"type": "ref/prompt", "name": "completable-prompt"},
            "argument": {"name": "name", "value": ""},
            "context": {"arguments": {"department": "Engineering"}}
        })))
        .await
        .expect("complete with context");
    assert_eq!(r.completion.values, ["Alice", "Bob", "Charlie"]);
    s.finish(&rt, CLOSE_BOUND).await;
}

/// Cancelling a running call by dropping its future: the client returns at once, the server
/// gets `notifications/cancelled` for it, and the connection keeps working. Over stdio the
/// notification is seen on the wire through a `tee` in front of the server; over HTTP through
/// the builder's wire tap (the request bodies as POSTed, which the server acknowledged: a
/// refused POST would surface as a connection error).
pub async fn everything_cancel<R: Runtime>(rt: R, peers: Peers, transport: Transport) {
    let unique = crate::peers::ProcessTag::new("cancel").env().1;
    let log = std::env::temp_dir().join(format!("mcp-interop-{unique}.jsonl"));
    let _ = std::fs::remove_file(&log);
    let (builder, _) = full_builder();
    let s = if transport == Transport::Stdio {
        let log_s = log.to_str().expect("utf-8 temp path").to_owned();
        let mut args = vec![
            "-c".to_owned(),
            r#"log="$1"; shift; tee -a "$log" | "$@""#.to_owned(),
            "sh".to_owned(),
            log_s,
        ];
        args.extend(peers.everything.iter().cloned());
        args.push("stdio".into());
        Spawned::start(
            &rt,
            builder,
            "everything",
            StdioCommand::new("sh").args(args),
        )
        .await
    } else {
        let sink = log.clone();
        let builder = builder.on_wire(move |direction, bytes| {
            if direction == WireDirection::Sent {
                use std::io::Write as _;
                let mut f = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&sink)
                    .expect("open the wire log");
                f.write_all(bytes).expect("write the wire log");
                f.write_all(b"\n").expect("write the wire log");
            }
        });
        start_with(&rt, builder, &peers, transport).await
    };
    let c = &s.client;

    let (options, mut progress) = CallOptions::new().no_timeout().progress_watch();
    let call = c.call_tool_with(
        "trigger-long-running-operation",
        json!({"duration": 30, "steps": 30}),
        options,
    );
    // Run until the first progress update proves the call is running, then drop it.
    let outcome = within(&rt, Duration::from_secs(10), async {
        let call = std::pin::pin!(call);
        let first = std::pin::pin!(progress.changed());
        match futures_util::future::select(call, first).await {
            futures_util::future::Either::Left((r, _)) => panic!("finished early: {r:?}"),
            futures_util::future::Either::Right((p, _)) => p,
        }
    })
    .await;
    let p = outcome.expect("a first progress update within 10 s");
    assert!(p.is_some_and(|p| p.progress >= 1.0));
    let dropped_at = Instant::now();

    // The connection keeps working, promptly.
    let r = bounded(
        &rt,
        Duration::from_secs(3),
        "echo after cancel",
        c.call_tool("echo", json!({"message": "still here"})),
    )
    .await
    .expect("echo");
    assert_eq!(text(&r), "Echo: still here");
    let found = eventually(&rt, || {
        std::fs::read_to_string(&log).is_ok_and(|l| {
            l.lines().any(|line| {
                serde_json::from_str::<Value>(line).is_ok_and(|m| {
                    m["method"] == "notifications/cancelled"
                        && m["params"]["reason"]
                            .as_str()
                            .is_some_and(|r| r.contains("dropped"))
                })
            })
        })
    })
    .await;
    assert!(found, "no notifications/cancelled on the wire");
    assert!(dropped_at.elapsed() < Duration::from_secs(5));
    s.finish(&rt, CLOSE_BOUND).await;
    let _ = std::fs::remove_file(&log);
}

/// Close: bounded, calls fail afterwards with `Closed`, the process is gone, close is
/// idempotent. Over stdio server-everything exits by itself once stdin is closed; over HTTP
/// `close()` ends the session (a `DELETE` over Streamable HTTP, dropping the GET stream over
/// legacy) while the server keeps running (checked), and the test then kills it.
pub async fn everything_close<R: Runtime>(rt: R, peers: Peers, transport: Transport) {
    let (mut s, _) = start(&rt, &peers, transport).await;
    let c = s.client.clone();
    c.ping().await.expect("ping");
    let took = if let Some(server) = s.server.as_mut() {
        let started = Instant::now();
        bounded(&rt, CLOSE_BOUND, "close() over HTTP", c.close()).await;
        let took = started.elapsed();
        assert!(
            server.is_running(),
            "closing a session ended the HTTP server"
        );
        s.finish(&rt, CLOSE_BOUND).await;
        took
    } else {
        s.finish(&rt, CLOSE_BOUND).await
    };
    // Nothing pending: stdin closed and server-everything exits by itself, before SIGTERM;
    // over HTTP the DELETE is answered at once.
    assert!(
        took < Duration::from_secs(1) + Duration::from_millis(500),
        "{took:?}"
    );
    match c.ping().await {
        Err(e @ Error::Closed { .. }) => assert!(e.is_connection_lost()),
        other => panic!("expected Closed, got {other:?}"),
    }
    bounded(&rt, Duration::from_secs(1), "a second close()", c.close()).await;
}
