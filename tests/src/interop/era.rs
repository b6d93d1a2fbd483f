//! Automatic era selection against real servers of both eras: the 2026-07-28 SDKs (PyPI `mcp`
//! 2.x through `tests/peers/py2_server.py`, npm `@modelcontextprotocol/server` 2.x through
//! `tests/peers/ts2_server.cjs`) must be reached in the discover era, server-everything (legacy
//! only) in the initialize era, over stdio and HTTP, with [`EraPolicy::Auto`].

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mcp_driver::mcp_proto::jsonrpc::ErrorObject;
use mcp_driver::mcp_proto::session::{Era, EraPolicy};
use mcp_driver::mcp_proto::types::v2026::ListenFilter;
use mcp_driver::process::StdioCommand;
use mcp_driver::{Client, ClientBuilder, Runtime};
use serde_json::{Value, json};

use super::{Spawned, bounded, text};
use crate::peers::{Peers, ProcessGuard, free_port, require_netns, wait_for_port};

const CLOSE_BOUND: Duration = Duration::from_secs(5);
/// The probe timeout of these tests: a legacy server answers the probe with an error, so a
/// handshake near this long means the fallback waited for it.
const PROBE: Duration = Duration::from_secs(10);

/// Auto, with an elicitation handler that answers `{name: "rust"}`.
fn builder<R: Runtime>(rt: &R) -> ClientBuilder<R> {
    ClientBuilder::new()
        .runtime(rt.clone())
        .era_policy(EraPolicy::Auto {
            probe_timeout: PROBE,
        })
        .shutdown_graces(Duration::from_secs(1), Duration::from_secs(1))
        .elicitation_handler(|_params: Value| async {
            Ok::<_, ErrorObject>(json!({"action": "accept", "content": {"name": "rust"}}))
        })
}

fn repo_file(rel: &str) -> String {
    format!("{}/{rel}", env!("CARGO_MANIFEST_DIR"))
}

fn py2_command(peers: &Peers, args: &[&str]) -> (String, Vec<String>) {
    let mut a = vec![repo_file("peers/py2_server.py")];
    a.extend(args.iter().map(|s| (*s).to_owned()));
    (peers.python2.clone(), a)
}

fn ts2_command(peers: &Peers, args: &[&str]) -> (String, Vec<String>) {
    let mut a = vec![repo_file("peers/ts2_server.cjs")];
    a.extend(args.iter().map(|s| (*s).to_owned()));
    (peers.node22.clone(), a)
}

/// The checks on a 2026-07-28 server: the discover era at 2026-07-28, tools list and call,
/// and a multi-round call answered by the elicitation handler.
async fn check_modern<R: Runtime>(client: &Client<R>, label: &str) {
    assert_eq!(client.era(), Era::Discover, "{label}");
    assert_eq!(client.protocol_version().as_str(), "2026-07-28", "{label}");
    let tools = client.list_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    for want in ["add", "echo", "confirm"] {
        assert!(names.contains(&want), "{label}: {names:?}");
    }
    let sum = client
        .call_tool("add", json!({"a": 2, "b": 3}))
        .await
        .expect("add");
    assert_eq!(text(&sum), "5", "{label}");
    let echoed = client
        .call_tool("echo", json!({"message": "héllo"}))
        .await
        .expect("echo");
    assert_eq!(text(&echoed), "héllo", "{label}");
    let confirmed = client
        .call_tool("confirm", json!({}))
        .await
        .expect("confirm (multi-round)");
    assert_eq!(text(&confirmed), "confirmed: rust", "{label}");
}

async fn modern_stdio<R: Runtime>(rt: R, label: &str, (program, args): (String, Vec<String>)) {
    let started = Instant::now();
    let spawned = Spawned::start(
        &rt,
        builder(&rt),
        label,
        StdioCommand::new(program).args(args),
    )
    .await;
    assert!(
        started.elapsed() < PROBE,
        "{label}: handshake took {:?}",
        started.elapsed()
    );
    check_modern(&spawned.client, label).await;
    spawned.finish(&rt, CLOSE_BOUND).await;
}

/// Starts an HTTP peer on a free 127.0.0.1 port; the guard kills it.
fn http_peer(program: &str, args: &[String], port: u16, env: &[(&str, &str)]) -> ProcessGuard {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let guard = ProcessGuard::new(cmd.spawn().expect("start the HTTP peer"));
    assert!(
        wait_for_port(port, Duration::from_secs(30)),
        "{program} never listened on {port}"
    );
    guard
}

async fn modern_http<R: Runtime>(rt: R, label: &str, url: String) {
    let started = Instant::now();
    let client = bounded(
        &rt,
        Duration::from_secs(20),
        "connect",
        builder(&rt).name(label).http(&url),
    )
    .await
    .unwrap_or_else(|e| panic!("{label}: connect failed: {e}"));
    assert!(
        started.elapsed() < PROBE,
        "{label}: handshake took {:?}",
        started.elapsed()
    );
    check_modern(&client, label).await;
    bounded(&rt, CLOSE_BOUND, "close()", client.close()).await;
}

/// PyPI `mcp` 2.x over stdio: Auto chooses the discover era at 2026-07-28.
pub async fn era_python2_stdio_auto<R: Runtime>(rt: R, peers: Peers) {
    modern_stdio(rt, "py2-stdio", py2_command(&peers, &["stdio"])).await;
}

/// PyPI `mcp` 2.x over streamable HTTP (127.0.0.1, stateless): the discover era.
pub async fn era_python2_http_auto<R: Runtime>(rt: R, peers: Peers) {
    let port = free_port();
    let (program, args) = py2_command(&peers, &["http", &port.to_string()]);
    let _server = http_peer(&program, &args, port, &[]);
    modern_http(rt, "py2-http", format!("http://127.0.0.1:{port}/mcp")).await;
}

/// Subscriptions against a 2026-07-28 SDK: two listens at once, each acknowledged with what it
/// asked for and fed only its own notifications (the peer's `touch` and `change_tools` tools
/// publish). With `python`, the PyPI peer's `listens` / `end_listens` tools also show that
/// dropping one ends it at the server, and that the server ending the other gracefully ends
/// its stream with `close` reporting a clean end; otherwise the other is closed by the client.
async fn check_listen<R: Runtime>(rt: &R, client: &Client<R>, label: &str, python: bool) {
    let wait = Duration::from_secs(10);
    let call = |tool: &'static str, args: Value| async move {
        let r = client.call_tool(tool, args).await;
        text(&r.unwrap_or_else(|e| panic!("{label}: {tool}: {e}")))
    };
    let mut watched = bounded(rt, wait, "subscribe", client.subscribe("file:///watched"))
        .await
        .unwrap_or_else(|e| panic!("{label}: subscribe: {e}"));
    assert_eq!(
        watched
            .honoured()
            .and_then(|h| h.resource_subscriptions.clone()),
        Some(vec!["file:///watched".to_owned()]),
        "{label}"
    );
    let filter = ListenFilter {
        tools_list_changed: Some(true),
        ..ListenFilter::default()
    };
    let mut tools = bounded(rt, wait, "listen", client.listen(filter))
        .await
        .unwrap_or_else(|e| panic!("{label}: listen: {e}"));
    if python {
        assert_eq!(call("listens", json!({})).await, "2", "{label}");
    }
    call("touch", json!({"uri": "file:///other"})).await;
    call("touch", json!({"uri": "file:///watched"})).await;
    let update = bounded(rt, wait, "a resource update", watched.recv())
        .await
        .expect("stream open")
        .expect("no lag");
    assert_eq!(
        update.resource_uri().as_deref(),
        Some("file:///watched"),
        "{label}"
    );
    call("change_tools", json!({})).await;
    let change = bounded(rt, wait, "a list change", tools.recv())
        .await
        .expect("stream open")
        .expect("no lag");
    assert_eq!(change.method, "notifications/tools/list_changed", "{label}");
    drop(watched);
    if !python {
        // Still served after the other one was dropped.
        call("change_tools", json!({})).await;
        let change = bounded(rt, wait, "a second list change", tools.recv())
            .await
            .expect("stream open")
            .expect("no lag");
        assert_eq!(change.method, "notifications/tools/list_changed", "{label}");
        tools
            .close()
            .await
            .unwrap_or_else(|e| panic!("{label}: closed by the client: {e}"));
        return;
    }
    let mut open = String::new();
    for _ in 0..100 {
        open = call("listens", json!({})).await;
        if open == "1" {
            break;
        }
        super::sleep(rt, Duration::from_millis(50)).await;
    }
    assert_eq!(open, "1", "{label}: the dropped listen ended at the server");
    call("end_listens", json!({})).await;
    assert!(
        bounded(rt, wait, "the end of the stream", tools.recv())
            .await
            .is_none(),
        "{label}"
    );
    tools
        .close()
        .await
        .unwrap_or_else(|e| panic!("{label}: ended cleanly: {e}"));
}

/// PyPI `mcp` 2.x over stdio: subscriptions are `subscriptions/listen` streams.
pub async fn era_python2_stdio_listen<R: Runtime>(rt: R, peers: Peers) {
    let (program, args) = py2_command(&peers, &["stdio"]);
    let spawned = Spawned::start(
        &rt,
        builder(&rt),
        "py2-stdio-listen",
        StdioCommand::new(program).args(args),
    )
    .await;
    check_listen(&rt, &spawned.client, "py2-stdio-listen", true).await;
    spawned.finish(&rt, CLOSE_BOUND).await;
}

/// PyPI `mcp` 2.x over streamable HTTP (127.0.0.1, stateless): each listen is its own POST
/// whose SSE stream carries its notifications; dropping it closes that stream.
pub async fn era_python2_http_listen<R: Runtime>(rt: R, peers: Peers) {
    let port = free_port();
    let (program, args) = py2_command(&peers, &["http", &port.to_string()]);
    let _server = http_peer(&program, &args, port, &[]);
    let url = format!("http://127.0.0.1:{port}/mcp");
    let client = bounded(
        &rt,
        Duration::from_secs(20),
        "connect",
        builder(&rt).name("py2-http-listen").http(&url),
    )
    .await
    .unwrap_or_else(|e| panic!("py2-http-listen: connect failed: {e}"));
    check_listen(&rt, &client, "py2-http-listen", true).await;
    bounded(&rt, CLOSE_BOUND, "close()", client.close()).await;
}

/// npm `@modelcontextprotocol/server` 2.x over stdio (`serveStdio` and its listen router).
pub async fn era_ts2_stdio_listen<R: Runtime>(rt: R, peers: Peers) {
    let (program, args) = ts2_command(&peers, &["stdio"]);
    let spawned = Spawned::start(
        &rt,
        builder(&rt),
        "ts2-stdio-listen",
        StdioCommand::new(program).args(args),
    )
    .await;
    check_listen(&rt, &spawned.client, "ts2-stdio-listen", false).await;
    spawned.finish(&rt, CLOSE_BOUND).await;
}

/// npm `@modelcontextprotocol/server` 2.x over HTTP (`createMcpHandler` on 127.0.0.1): each
/// listen is an SSE stream.
pub async fn era_ts2_http_listen<R: Runtime>(rt: R, peers: Peers) {
    let port = free_port();
    let (program, args) = ts2_command(&peers, &["http", &port.to_string()]);
    let modules = peers
        .ts2_node_modules
        .to_str()
        .expect("utf-8 path")
        .to_owned();
    let _server = http_peer(
        &program,
        &args,
        port,
        &[("MCP_PEER_TS2_NODE_MODULES", modules.as_str())],
    );
    let url = format!("http://127.0.0.1:{port}/mcp");
    let client = bounded(
        &rt,
        Duration::from_secs(20),
        "connect",
        builder(&rt).name("ts2-http-listen").http(&url),
    )
    .await
    .unwrap_or_else(|e| panic!("ts2-http-listen: connect failed: {e}"));
    check_listen(&rt, &client, "ts2-http-listen", false).await;
    bounded(&rt, CLOSE_BOUND, "close()", client.close()).await;
}

/// npm `@modelcontextprotocol/server` 2.x over stdio (`serveStdio`): the discover era.
pub async fn era_ts2_stdio_auto<R: Runtime>(rt: R, peers: Peers) {
    let modules = peers
        .ts2_node_modules
        .to_str()
        .expect("utf-8 path")
        .to_owned();
    let (program, args) = ts2_command(&peers, &["stdio"]);
    let started = Instant::now();
    let command = StdioCommand::new(program)
        .args(args)
        .env("MCP_PEER_TS2_NODE_MODULES", modules);
    let spawned = Spawned::start(&rt, builder(&rt), "ts2-stdio", command).await;
    assert!(
        started.elapsed() < PROBE,
        "handshake took {:?}",
        started.elapsed()
    );
    check_modern(&spawned.client, "ts2-stdio").await;
    spawned.finish(&rt, CLOSE_BOUND).await;
}

/// npm `@modelcontextprotocol/server` 2.x over HTTP (`createMcpHandler`): the discover era.
pub async fn era_ts2_http_auto<R: Runtime>(rt: R, peers: Peers) {
    let port = free_port();
    let modules = peers
        .ts2_node_modules
        .to_str()
        .expect("utf-8 path")
        .to_owned();
    let (program, args) = ts2_command(&peers, &["http", &port.to_string()]);
    let _server = http_peer(
        &program,
        &args,
        port,
        &[("MCP_PEER_TS2_NODE_MODULES", modules.as_str())],
    );
    modern_http(rt, "ts2-http", format!("http://127.0.0.1:{port}/mcp")).await;
}

/// server-everything (legacy only) over stdio: Auto falls back to `initialize` at once (it
/// answers the probe with -32601), one process, tools work.
pub async fn era_everything_stdio_auto<R: Runtime>(rt: R, peers: Peers) {
    let (program, args) = peers
        .everything
        .split_first()
        .expect("MCP_PEER_EVERYTHING is a command");
    let command =
        StdioCommand::new(program.as_str()).args(args.iter().cloned().chain(["stdio".to_owned()]));
    let started = Instant::now();
    let spawned = Spawned::start(&rt, builder(&rt), "everything-auto", command).await;
    let took = started.elapsed();
    assert!(took < Duration::from_secs(5), "handshake took {took:?}");
    assert_eq!(spawned.client.era(), Era::Initialize);
    assert!(
        !spawned
            .client
            .list_tools()
            .await
            .expect("tools/list")
            .is_empty()
    );
    let echoed = spawned
        .client
        .call_tool("echo", json!({"message": "legacy"}))
        .await
        .expect("echo");
    assert!(text(&echoed).contains("legacy"), "{}", text(&echoed));
    spawned.finish(&rt, CLOSE_BOUND).await;
}

/// server-everything over streamable HTTP (inside the namespace: it binds every interface):
/// Auto falls back to `initialize` at once.
pub async fn era_everything_http_auto<R: Runtime>(rt: R, peers: Peers) {
    if !require_netns() {
        return;
    }
    let port = free_port();
    let (program, args) = peers
        .everything
        .split_first()
        .expect("MCP_PEER_EVERYTHING is a command");
    let mut args = args.to_vec();
    args.push("streamableHttp".to_owned());
    let port_s = port.to_string();
    let _server = http_peer(program, &args, port, &[("PORT", port_s.as_str())]);
    let started = Instant::now();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let client = bounded(
        &rt,
        Duration::from_secs(20),
        "connect",
        builder(&rt).http(&url),
    )
    .await
    .unwrap_or_else(|e| panic!("connect failed: {e}"));
    let took = started.elapsed();
    assert!(took < Duration::from_secs(5), "handshake took {took:?}");
    assert_eq!(client.era(), Era::Initialize);
    assert!(!client.list_tools().await.expect("tools/list").is_empty());
    bounded(&rt, CLOSE_BOUND, "close()", client.close()).await;
}
