//! Outside clients against npm server-everything: the TypeScript SDK client and the PyPI `mcp`
//! client (`tests/clients/`), each over stdio and over Streamable HTTP, run their whole
//! scenario (tools, progress, sampling, elicitation, subscription, cancellation) and every
//! step passes. The same runs, pointed at `mcp bridge` instead of the server, are what a
//! bridge test asserts: see `mcp_tests::outside_clients`.
//!
//! Run with `scripts/test`; without the peers every test fails naming the script, unless
//! `MCP_SKIP_INTEROP=1`. The HTTP runs start server-everything's `streamableHttp` mode, which
//! binds every interface: they also need `MCP_NETNS=1` (inside `scripts/netns-run`).

#![cfg(target_os = "linux")]

use mcp_tests::outside_clients::{
    Run, SdkClient, Target, assert_everything_seen, assert_scenario_passed, run,
    start_everything_http,
};
use mcp_tests::peers::{Peers, peers, require_netns};
use serde_json::Value;

/// server-everything over stdio, as the client spawns it.
fn everything_stdio(peers: &Peers) -> Vec<String> {
    let mut program = peers.everything.clone();
    program.push("stdio".to_owned());
    program
}

/// What holds for any run straight against server-everything, beyond what a host sees through
/// a bridge too: the version the client offered, and server-everything finishing the cancelled
/// handler (it only drops the answer).
fn assert_direct_facts(run: &Run, what: &str) {
    assert_everything_seen(run, what);
    let connect = run.detail("connect").expect("connect reported");
    assert_eq!(
        connect["offered_version"], "2025-11-25",
        "{what}: {connect}"
    );
    let cancel = run.detail("cancel").expect("cancel reported");
    assert_eq!(cancel["server_finished_handler"], true, "{what}: {cancel}");
}

/// Over HTTP: one GET stream opened and accepted as SSE, one DELETE at the end, and the
/// negotiated version on the requests after initialize.
fn assert_http_facts(run: &Run, what: &str) {
    let http = &run.detail("close").expect("close reported")["http"];
    let gets = http["gets"].as_array().cloned().unwrap_or_default();
    assert!(
        gets.iter().any(|g| g["status"] == 200
            && g["content_type"]
                .as_str()
                .is_some_and(|c| c.starts_with("text/event-stream"))),
        "{what}: no GET stream: {http}"
    );
    assert_eq!(http["deletes"], 1, "{what}: {http}");
    let versions: Vec<&Value> = http["protocol_version_headers"]
        .as_array()
        .map(|v| v.iter().collect())
        .unwrap_or_default();
    assert!(
        versions.iter().any(|v| *v == "2025-11-25"),
        "{what}: {http}"
    );
}

fn stdio_run(client: SdkClient) {
    let Some(peers) = peers() else { return };
    let program = everything_stdio(&peers);
    let what = format!("{client:?} client, server-everything over stdio");
    let run = run(client, &peers, Target::Stdio(&program));
    assert_scenario_passed(&run, &what);
    assert_direct_facts(&run, &what);
}

fn http_run(client: SdkClient) {
    let Some(peers) = peers() else { return };
    if !require_netns() {
        return;
    }
    let (server, url) = start_everything_http(&peers);
    let what = format!("{client:?} client, server-everything over Streamable HTTP at {url}");
    let run = run(client, &peers, Target::Url(&url));
    drop(server);
    assert_scenario_passed(&run, &what);
    assert_direct_facts(&run, &what);
    assert_http_facts(&run, &what);
}

#[test]
fn ts_sdk_client_stdio() {
    stdio_run(SdkClient::TypeScript);
}

#[test]
fn ts_sdk_client_streamable_http() {
    http_run(SdkClient::TypeScript);
}

#[test]
fn py_sdk_client_stdio() {
    stdio_run(SdkClient::Python);
}

#[test]
fn py_sdk_client_streamable_http() {
    http_run(SdkClient::Python);
}
