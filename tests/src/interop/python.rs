//! Against `tests/peers/py_server.py` (PyPI `mcp` 1.30.0 FastMCP) over stdio.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_driver::mcp_proto::session::NotificationKind;
use mcp_driver::process::StdioCommand;
use mcp_driver::{CallOptions, ClientBuilder, Error, Progress, Runtime};
use serde_json::json;

use super::{Spawned, bounded, params_of, text};
use crate::peers::Peers;

const CLOSE_BOUND: Duration = Duration::from_secs(5);

fn command(peers: &Peers) -> StdioCommand {
    StdioCommand::new(&peers.python).args([
        peers.py_server.to_str().expect("utf-8 path").to_owned(),
        "stdio".to_owned(),
    ])
}

async fn start<R: Runtime>(rt: &R, peers: &Peers) -> Spawned<R> {
    let builder =
        ClientBuilder::new().shutdown_graces(Duration::from_secs(1), Duration::from_secs(1));
    Spawned::start(rt, builder, "py-peer", command(peers)).await
}

/// Concurrent `sleep` calls with decreasing delays are answered out of order; each call gets
/// its own answer.
pub async fn python_stdio_out_of_order<R: Runtime>(rt: R, peers: Peers) {
    let s = start(&rt, &peers).await;
    assert_eq!(s.client.server_info().name, "py-peer");
    const N: u64 = 12;
    let order: Arc<Mutex<Vec<u64>>> = Arc::default();
    let started = Instant::now();
    let calls = (0..N).map(|i| {
        let ms = (N - i) * 40;
        let client = s.client.clone();
        let order = order.clone();
        async move {
            let r = client
                .call_tool("sleep", json!({ "ms": ms }))
                .await
                .unwrap_or_else(|e| panic!("sleep {ms}: {e}"));
            order.lock().expect("lock").push(ms);
            (ms, text(&r))
        }
    });
    let results = bounded(
        &rt,
        Duration::from_secs(10),
        "the concurrent sleeps",
        futures_util::future::join_all(calls),
    )
    .await;
    let took = started.elapsed();
    for (ms, t) in &results {
        assert_eq!(t, &format!("slept {ms} ms"));
    }
    // Run concurrently: far less than the sum (3.1 s) of the delays.
    assert!(took < Duration::from_millis(N * 40 + 1500), "{took:?}");
    // The answers came back roughly in reverse: the shortest sleeps (sent last) first. Only
    // the ends are checked, as answers read in one batch resolve in the join's poll order.
    let order = order.lock().expect("lock").clone();
    assert!(order[0] <= 3 * 40, "first answer: {order:?}");
    assert!(
        order[order.len() - 1] >= (N - 2) * 40,
        "last answer: {order:?}"
    );
    s.client.ping().await.expect("ping");
    s.finish(&rt, CLOSE_BOUND).await;
}

/// Progress values are floats (`1.0`, `total: 3.0`) with messages.
pub async fn python_stdio_progress_floats<R: Runtime>(rt: R, peers: Peers) {
    let s = start(&rt, &peers).await;
    let seen: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let sink = seen.clone();
    let r = s
        .client
        .call_tool_with(
            "slow",
            json!({"steps": 3, "delay_ms": 20}),
            CallOptions::new().on_progress(move |p| sink.lock().expect("lock").push(p)),
        )
        .await
        .expect("slow");
    assert_eq!(text(&r), "done 3 steps");
    let seen = seen.lock().expect("lock").clone();
    let values: Vec<_> = seen.iter().map(|p| (p.progress, p.total)).collect();
    assert_eq!(
        values,
        [(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))]
    );
    assert_eq!(seen[2].message.as_deref(), Some("step 3/3"));
    // The same call without asking for progress gets none and still works.
    let r = s
        .client
        .call_tool("slow", json!({"steps": 2, "delay_ms": 1}))
        .await
        .expect("slow without progress");
    assert_eq!(text(&r), "done 2 steps");
    s.finish(&rt, CLOSE_BOUND).await;
}

/// Tool failures are results with `isError`; protocol errors are `Error::Remote`; a log
/// message tied to a request arrives as a notification.
pub async fn python_stdio_errors<R: Runtime>(rt: R, peers: Peers) {
    let s = start(&rt, &peers).await;
    let c = &s.client;
    let r = c.call_tool("fail", ()).await.expect("fail is a result");
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).contains("fail() was called"), "{}", text(&r));
    let r = c
        .call_tool("no_such_tool", ())
        .await
        .expect("an unknown tool is a result");
    assert_eq!(r.is_error, Some(true));
    let r = c
        .call_tool("add", json!({"a": "x", "b": 1}))
        .await
        .expect("bad arguments are a result");
    assert_eq!(r.is_error, Some(true));
    match c.read_resource("demo://nothing-here").await {
        Err(Error::Remote { method, .. }) => assert_eq!(method, "resources/read"),
        other => panic!("expected a remote error, got {other:?}"),
    }
    let mut notes = c.notifications();
    c.call_tool("log", json!({"level": "warning", "message": "careful"}))
        .await
        .expect("log");
    let n = bounded(&rt, Duration::from_secs(3), "the log message", async {
        loop {
            let n = notes.recv().await.expect("open").expect("no lag");
            if n.kind() == NotificationKind::LogMessage {
                return params_of(&n);
            }
        }
    })
    .await;
    assert_eq!(n["level"], "warning");
    assert_eq!(n["data"], "careful");
    let r = c
        .call_tool("add", json!({"a": 2, "b": 40}))
        .await
        .expect("add");
    assert_eq!(text(&r), "42.0");
    s.finish(&rt, CLOSE_BOUND).await;
}

/// Close: stdin EOF ends the Python server (exit 0) about within the stdin grace; afterwards
/// calls fail with `Closed`.
pub async fn python_stdio_close<R: Runtime>(rt: R, peers: Peers) {
    let s = start(&rt, &peers).await;
    let c = s.client.clone();
    c.ping().await.expect("ping");
    let took = s.finish(&rt, CLOSE_BOUND).await;
    assert!(took < Duration::from_secs(2), "{took:?}");
    assert!(matches!(c.ping().await, Err(Error::Closed { .. })));
}
