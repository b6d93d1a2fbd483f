//! Outside clients against `mcp demo-server --listen 127.0.0.1:0`: the npm TypeScript SDK
//! client and the PyPI `mcp` client (`tests/clients/`, with `--demo`) run their whole scenario
//! over Streamable HTTP (tools listed, a call with progress, sampling and elicitation answered
//! by the outside client on the call's own stream, the `demo://clock` subscription's updates
//! on the GET stream, a cancelled call, DELETE at the end) and every step passes.
//!
//! The demo server binds 127.0.0.1 only, so no network namespace is needed. Without the peers
//! every test fails naming the script, unless `MCP_SKIP_INTEROP=1`.

#![cfg(target_os = "linux")]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use mcp_tests::outside_clients::{Run, SdkClient, Target, assert_scenario_passed, run};
use mcp_tests::peers::peers;

/// `mcp demo-server --listen 127.0.0.1:0`, killed on drop.
struct Demo(Child);

impl Drop for Demo {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts the demo server and reads its URL from the first line of its stderr.
fn start_demo() -> (Demo, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcp"))
        .args(["demo-server", "--listen", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run mcp demo-server --listen");
    let stderr = child.stderr.take().expect("piped stderr");
    let mut lines = BufReader::new(stderr).lines();
    let url = lines
        .next()
        .and_then(Result::ok)
        .expect("the URL line on stderr");
    // Keep draining stderr so the server never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines.map_while(Result::ok) {});
    (Demo(child), url)
}

/// What the host saw of the demo server.
fn assert_demo_seen(run: &Run, what: &str) {
    let connect = run.detail("connect").expect("connect reported");
    assert_eq!(connect["server"]["name"], "mcp-demo", "{what}: {connect}");
    assert_eq!(
        connect["negotiated_version"], "2025-11-25",
        "{what}: {connect}"
    );
    assert!(connect["session_id"].is_string(), "{what}: {connect}");
    let progress = run.detail("progress").expect("progress reported");
    assert_eq!(
        progress["values"].as_array().map(Vec::len),
        Some(4),
        "{what}: {progress}"
    );
    let subscribe = run.detail("subscribe").expect("subscribe reported");
    assert_eq!(subscribe["uri"], "demo://clock", "{what}: {subscribe}");
    let cancel = run.detail("cancel").expect("cancel reported");
    assert_eq!(
        cancel["cancelled_notification"]["requestId"], cancel["request_id"],
        "{what}: {cancel}"
    );
    assert_eq!(cancel["late_answer"], false, "{what}: {cancel}");
    let http = &run.detail("close").expect("close reported")["http"];
    assert_eq!(http["deletes"], 1, "{what}: {http}");
    assert!(
        http["gets"]
            .as_array()
            .is_some_and(|g| g.iter().any(|g| g["status"] == 200
                && g["content_type"]
                    .as_str()
                    .is_some_and(|c| c.starts_with("text/event-stream")))),
        "{what}: no GET stream: {http}"
    );
}

fn demo_run(client: SdkClient) {
    let Some(peers) = peers() else { return };
    let (demo, url) = start_demo();
    let what = format!("{client:?} client against mcp demo-server at {url}");
    let run = run(client, &peers, Target::DemoUrl(&url));
    drop(demo);
    assert_scenario_passed(&run, &what);
    assert_demo_seen(&run, &what);
}

#[test]
fn ts_sdk_client_against_the_http_demo_server() {
    demo_run(SdkClient::TypeScript);
}

#[test]
fn py_sdk_client_against_the_http_demo_server() {
    demo_run(SdkClient::Python);
}
