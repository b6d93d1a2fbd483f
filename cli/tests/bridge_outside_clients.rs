//! Outside clients through `mcp bridge`: the npm TypeScript SDK client and the PyPI `mcp`
//! client (`tests/clients/`) spawn `mcp bridge --url http://127.0.0.1:PORT/mcp` as their stdio
//! server, in front of npm server-everything over Streamable HTTP, and run their whole
//! scenario through it: tools listed, a call with progress, sampling and elicitation answered
//! by the outside client, a resource subscription, a cancelled call. Every step must pass, and
//! the host must see the server as it is (its name, the version it negotiated).
//!
//! server-everything's `streamableHttp` mode binds every interface: these tests run inside
//! `scripts/netns-run` (`MCP_NETNS=1`); without the peers every test fails naming the script,
//! unless `MCP_SKIP_INTEROP=1`.

#![cfg(target_os = "linux")]

use mcp_tests::outside_clients::{
    SdkClient, Target, assert_everything_seen, assert_scenario_passed, run, start_everything_http,
};
use mcp_tests::peers::{peers, require_netns};

fn bridged_run(client: SdkClient) {
    let Some(peers) = peers() else { return };
    if !require_netns() {
        return;
    }
    let (server, url) = start_everything_http(&peers);
    let bridge = vec![
        env!("CARGO_BIN_EXE_mcp").to_owned(),
        "bridge".to_owned(),
        "--url".to_owned(),
        url.clone(),
    ];
    let what = format!("{client:?} client through mcp bridge to server-everything at {url}");
    let run = run(client, &peers, Target::Stdio(&bridge));
    drop(server);
    assert_scenario_passed(&run, &what);
    // What the host sees through the bridge is what it would see directly.
    assert_everything_seen(&run, &what);
}

#[test]
fn ts_sdk_client_through_the_bridge() {
    bridged_run(SdkClient::TypeScript);
}

#[test]
fn py_sdk_client_through_the_bridge() {
    bridged_run(SdkClient::Python);
}
