//! An HTTP upstream that restarts and forgets the bridge's session: npm server-everything
//! (TypeScript SDK) answers the old `Mcp-Session-Id` with `400 {"error":{"code":-32000,
//! "message":"Bad Request: No valid session ID provided"}}` rather than the spec's 404. The
//! bridge (`--url`, and an HTTP entry of `--config`) starts a new session as soon as its
//! listener's reconnection (GET) gets that answer, before any call; the host's next call is
//! answered, and stderr says once that the session was re-established.
//!
//! server-everything's `streamableHttp` mode binds every interface: these tests run only
//! inside `scripts/netns-run` (`MCP_NETNS=1`), e.g.
//! `. .peers/env.sh && scripts/netns-run cargo test -p mcp-term --test bridge_upstream_restart`.

use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

mod common;
use common::bridge_host::{BridgeHost, GUARD, MCP, scratch_dir, stderr_file};
use mcp_tests::peers::{PeerProcess, Peers, free_port, peers, require_netns, wait_for_port};

/// What the bridge says on stderr when its upstream session was replaced.
const RE_ESTABLISHED: &str = "the server had forgotten the session; a new session was established";

/// server-everything over Streamable HTTP on 127.0.0.1:`port`.
fn start_everything(peers: &Peers, port: u16) -> PeerProcess {
    let port_s = port.to_string();
    let args: Vec<&str> = peers.everything[1..]
        .iter()
        .map(String::as_str)
        .chain(["streamableHttp"])
        .collect();
    let server = PeerProcess::spawn(&peers.everything[0], &args, &[("PORT", &port_s)])
        .expect("spawn server-everything streamableHttp");
    assert!(
        wait_for_port(port, Duration::from_secs(20)),
        "server-everything: nothing listens on 127.0.0.1:{port}"
    );
    server
}

/// `echo` called through the bridge: its text.
fn echo(host: &mut BridgeHost, tool: &str, message: &str) -> Value {
    let id = host.request(
        "tools/call",
        json!({"name": tool, "arguments": {"message": message}}),
    );
    host.answer(id).0
}

/// The bridge in `args` in front of server-everything on `port`: a call works, the server
/// restarts (a new process on the same port, which knows no session), and the next call
/// works again on a new session, which stderr reports.
fn survives_a_restart(peers: &Peers, name: &str, args: &[String], tool: &str, port: u16) {
    let mut server = start_everything(peers, port);
    let dir = scratch_dir("bridge-restart", name);
    let mut command = Command::new(MCP);
    command.args(args).stderr(stderr_file(&dir));
    let mut host = BridgeHost::spawn(command, dir);
    host.initialize(&json!({}));
    let first = echo(&mut host, tool, "before");
    assert!(first.to_string().contains("before"), "{name}: {first}");

    drop(server);
    server = start_everything(peers, port);
    // Before any call: the listener's reconnection (GET) gets the same 400, and that is
    // enough for the bridge to set up a new session.
    let started = std::time::Instant::now();
    while !host.stderr().contains(RE_ESTABLISHED) {
        assert!(
            started.elapsed() < GUARD,
            "{name}: the listener did not notice the restart: {}",
            host.stderr()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let again = echo(&mut host, tool, "after");
    assert!(
        again.get("error").is_none() && again.to_string().contains("after"),
        "{name}: the call after the restart: {again}\nstderr: {}",
        host.stderr()
    );
    let stderr = host.stderr();
    assert_eq!(
        stderr.matches(RE_ESTABLISHED).count(),
        1,
        "{name}: {stderr}"
    );
    assert_eq!(host.finish(), 0, "{name}: {}", host.stderr());
    drop(server);
}

#[test]
fn the_bridge_reconnects_when_a_typescript_http_server_restarts() {
    if !require_netns() {
        return;
    }
    let Some(peers) = peers() else { return };

    let port = free_port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let args = ["bridge".to_owned(), "--url".to_owned(), url.clone()];
    survives_a_restart(&peers, "url", &args, "echo", port);

    let dir = scratch_dir("bridge-restart", "config-file");
    let config = dir.join("servers.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"evh": {"url": url}}}).to_string(),
    )
    .expect("write the config");
    let args = [
        "bridge".to_owned(),
        "--config".to_owned(),
        config.display().to_string(),
    ];
    survives_a_restart(&peers, "config", &args, "evh__echo", port);
    let _ = std::fs::remove_dir_all(&dir);
}
