//! Outside clients through `mcp bridge`: the npm TypeScript SDK client and the PyPI `mcp`
//! client (`tests/clients/`) run their whole scenario through the bridge to npm
//! server-everything: tools listed, a call with progress, sampling and elicitation answered
//! by the outside client, a resource subscription, a cancelled call. Every step must pass, and
//! the host must see the server as it is (its name, the version it negotiated). Two ways:
//!
//! - over stdio: the client spawns `mcp bridge --url http://127.0.0.1:PORT/mcp`, in front of
//!   server-everything over Streamable HTTP;
//! - over stdio to a stdio child: the client spawns `mcp bridge -- <server-everything stdio>`;
//! - over HTTP: the client connects to `mcp bridge --listen 127.0.0.1:0 -- <server-everything
//!   stdio>` (its own child per session).
//!
//! server-everything's `streamableHttp` mode binds every interface: the `--url` tests run
//! inside `scripts/netns-run` (`MCP_NETNS=1`); the `--listen` ones bind 127.0.0.1 only and
//! need no namespace. Without the peers every test fails naming the script, unless
//! `MCP_SKIP_INTEROP=1`.

#![cfg(target_os = "linux")]

use mcp_tests::outside_clients::{
    SdkClient, Target, assert_everything_seen, assert_scenario_passed, run, start_everything_http,
};
use mcp_tests::peers::{ProcessTag, peers, require_netns};

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

/// `mcp bridge --listen 127.0.0.1:0 -- <server-everything stdio>`, killed when dropped.
struct ListenBridge {
    child: std::process::Child,
    url: String,
}

impl ListenBridge {
    fn start(everything: &[String]) -> Self {
        use std::io::BufRead as _;
        let tag = ProcessTag::new("bridge-listen");
        let (key, value) = tag.env();
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_mcp"))
            .args(["bridge", "--listen", "127.0.0.1:0", "--"])
            .args(everything)
            .env(key, value)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn mcp bridge --listen");
        let stderr = child.stderr.take().expect("piped stderr");
        let mut lines = std::io::BufReader::new(stderr).lines();
        // The URL line comes once the startup probe of server-everything is done.
        let url = lines
            .by_ref()
            .map_while(Result::ok)
            .find_map(|l| {
                l.split_whitespace()
                    .find(|w| w.starts_with("http://"))
                    .map(str::to_owned)
            })
            .expect("the bridge printed its URL");
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                eprintln!("{line}");
            }
        });
        ListenBridge { child, url }
    }
}

impl Drop for ListenBridge {
    fn drop(&mut self) {
        // SIGTERM: the bridge ends every session and shuts each child down.
        let _ = std::process::Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }
}

fn listen_run(client: SdkClient) {
    let Some(peers) = peers() else { return };
    let bridge = ListenBridge::start(&peers.everything);
    let what = format!(
        "{client:?} client over HTTP to mcp bridge --listen ({}) in front of server-everything over stdio",
        bridge.url
    );
    let run = run(client, &peers, Target::Url(&bridge.url));
    drop(bridge);
    assert_scenario_passed(&run, &what);
    assert_everything_seen(&run, &what);
}

#[test]
fn ts_sdk_client_over_http_through_bridge_listen() {
    listen_run(SdkClient::TypeScript);
}

#[test]
fn py_sdk_client_over_http_through_bridge_listen() {
    listen_run(SdkClient::Python);
}

fn stdio_child_run(client: SdkClient) {
    let Some(peers) = peers() else { return };
    let mut bridge = vec![
        env!("CARGO_BIN_EXE_mcp").to_owned(),
        "bridge".to_owned(),
        "--".to_owned(),
    ];
    bridge.extend(peers.everything.iter().cloned());
    let what = format!("{client:?} client through mcp bridge -- <server-everything stdio>");
    let run = run(client, &peers, Target::Stdio(&bridge));
    assert_scenario_passed(&run, &what);
    assert_everything_seen(&run, &what);
}

#[test]
fn ts_sdk_client_through_the_bridge_to_a_stdio_child() {
    stdio_child_run(SdkClient::TypeScript);
}

#[test]
fn py_sdk_client_through_the_bridge_to_a_stdio_child() {
    stdio_child_run(SdkClient::Python);
}
