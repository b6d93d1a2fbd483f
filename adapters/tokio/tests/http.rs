#![cfg(feature = "http")]
//! The HTTP transport on tokio: the scripted-server bodies of
//! `mcp_driver::testing::http_suite`, each bounded by a hang guard.

use std::time::Duration;

use mcp_driver::testing::http_suite;
use mcp_tokio::TokioRuntime;

const GUARD: Duration = Duration::from_secs(30);

macro_rules! scripted_tests {
    ($($name:ident),* $(,)?) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $name() {
            tokio::time::timeout(GUARD, http_suite::$name(TokioRuntime::current()))
                .await
                .expect(concat!(stringify!($name), " hung"));
        }
    )*};
}

scripted_tests!(
    http_json_session_headers_delete,
    http_sse_notification_before_response,
    http_session_expired_reinitializes,
    http_session_forgotten_400_reinitializes,
    http_listen_stream_broken_yields_gap,
    http_session_expired_refused_subscription_ends,
    http_session_expired_shared_uri_subscribed_afresh,
    http_session_expired_subscription_continues,
    http_session_expired_task_polled_again,
    http_session_expired_unknown_task_fails,
    http_resume_with_last_event_id,
    http_unauthorized_challenge,
    http_bad_url,
    http_trace_reports_every_exchange_step,
);

// ---- real peers (see tests/src/peers.rs for the env and namespace rules) -----------------------

use mcp_driver::mcp_proto::http::TransportMode;
use mcp_tests::peers::{PeerProcess, free_port, peers, require_netns, wait_for_port};

const PEER_GUARD: Duration = Duration::from_secs(60);

/// Starts `py_server.py http` on a free port of 127.0.0.1; the URL of its endpoint.
fn start_python(extra: &[&str]) -> Option<(PeerProcess, String)> {
    let p = peers()?;
    let port = free_port().to_string();
    let script = p.py_server.to_string_lossy().into_owned();
    let mut args = vec![script.as_str(), "http", "--port", port.as_str()];
    args.extend_from_slice(extra);
    let python = p.python.clone();
    let process = PeerProcess::spawn(&python, &args, &[]).expect("start py_server.py");
    assert!(
        wait_for_port(
            port.parse().expect("a port number"),
            Duration::from_secs(20)
        ),
        "py_server.py never listened on {port}"
    );
    Some((process, format!("http://127.0.0.1:{port}/mcp")))
}

/// Starts server-everything in `mode` (`streamableHttp` or `sse`); only inside the namespace.
fn start_everything(mode: &str) -> Option<(PeerProcess, u16)> {
    let p = peers()?;
    if !require_netns() {
        return None;
    }
    let port = free_port();
    let (program, args) = p
        .everything
        .split_first()
        .expect("MCP_PEER_EVERYTHING is a command");
    let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
    args.push(mode);
    let port_s = port.to_string();
    let process =
        PeerProcess::spawn(program, &args, &[("PORT", &port_s)]).expect("start server-everything");
    assert!(
        wait_for_port(port, Duration::from_secs(30)),
        "server-everything never listened on {port}"
    );
    Some((process, port))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn peer_python_stateful() {
    let Some((_server, url)) = start_python(&[]) else {
        return;
    };
    tokio::time::timeout(
        PEER_GUARD,
        http_suite::peer_python(TokioRuntime::current(), url, true),
    )
    .await
    .expect("peer_python_stateful hung");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn peer_python_stateless_json() {
    let Some((_server, url)) = start_python(&["--stateless", "--json"]) else {
        return;
    };
    tokio::time::timeout(
        PEER_GUARD,
        http_suite::peer_python(TokioRuntime::current(), url, false),
    )
    .await
    .expect("peer_python_stateless_json hung");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn peer_everything_streamable() {
    let Some((_server, port)) = start_everything("streamableHttp") else {
        return;
    };
    let url = format!("http://127.0.0.1:{port}/mcp");
    tokio::time::timeout(
        PEER_GUARD,
        http_suite::peer_everything(TokioRuntime::current(), url, TransportMode::Streamable),
    )
    .await
    .expect("peer_everything_streamable hung");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn peer_everything_sse_auto_fallback() {
    let Some((_server, port)) = start_everything("sse") else {
        return;
    };
    let url = format!("http://127.0.0.1:{port}/sse");
    tokio::time::timeout(
        PEER_GUARD,
        http_suite::peer_everything(TokioRuntime::current(), url, TransportMode::Auto),
    )
    .await
    .expect("peer_everything_sse_auto_fallback hung");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn peer_everything_sse_legacy() {
    let Some((_server, port)) = start_everything("sse") else {
        return;
    };
    let url = format!("http://127.0.0.1:{port}/sse");
    tokio::time::timeout(
        PEER_GUARD,
        http_suite::peer_everything(TokioRuntime::current(), url, TransportMode::Legacy),
    )
    .await
    .expect("peer_everything_sse_legacy hung");
}
