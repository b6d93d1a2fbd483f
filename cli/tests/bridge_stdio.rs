//! `mcp bridge -- cmd args` as a host runs it: the built binary on piped stdin/stdout, in front
//! of `mcp demo-server` started through `sh`, which records everything the bridge sends
//! upstream (`tee`) and the child's process group id. What the host sees is the demo server
//! (identity, tools, results, progress, sampling); what the server sees is the host (client
//! info, protocol version, the host's cancel reason); the host leaving shuts the child's whole
//! process group down, and the child dying ends the host session with exit 3.

mod common;

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::bridge_host::{
    BridgeHost, GUARD, MCP, group_alive, recorded_demo_server, scratch_dir, stderr_file,
};
use serde_json::{Value, json};

/// A scratch directory of one test.
fn test_dir(name: &str) -> PathBuf {
    scratch_dir("bridge-stdio", name)
}

/// What the bridge sent upstream so far, one JSON value a line.
fn upstream_log(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("upstream.log"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Waits until the bridge sent upstream a message that `pred` accepts, and returns it.
fn wait_upstream(dir: &Path, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
    let started = Instant::now();
    loop {
        if let Some(m) = upstream_log(dir).into_iter().find(|m| pred(m)) {
            return m;
        }
        assert!(
            started.elapsed() < GUARD,
            "the server never got {what}: {:?}",
            upstream_log(dir)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The child's process group id, once `sh` wrote it.
fn child_group(dir: &Path) -> i32 {
    let started = Instant::now();
    loop {
        if let Some(pgid) = std::fs::read_to_string(dir.join("pgid"))
            .ok()
            .and_then(|s| s.trim().parse().ok())
        {
            return pgid;
        }
        assert!(started.elapsed() < GUARD, "the child never started");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `mcp bridge -- <the recorded demo server>` with a host on its stdio, in test `name`'s
/// scratch directory.
fn start(name: &str) -> BridgeHost {
    let dir = test_dir(name);
    let mut command = Command::new(MCP);
    command
        .arg("bridge")
        .arg("--")
        .args(recorded_demo_server(&dir))
        .stderr(Stdio::inherit());
    BridgeHost::spawn(command, dir)
}

#[test]
fn the_host_sees_the_stdio_server_and_the_server_sees_the_host() {
    let mut bridge = start("identity");
    let result = bridge.initialize(&json!({"sampling": {}}));
    assert_eq!(result["serverInfo"]["name"], "mcp-demo", "{result}");
    assert_eq!(result["protocolVersion"], "2025-06-18", "{result}");
    assert!(result["capabilities"]["tools"].is_object(), "{result}");

    let init = wait_upstream(&bridge.dir, "initialize", |m| m["method"] == "initialize");
    assert_eq!(
        init["params"]["clientInfo"],
        json!({"name": "host-app", "version": "3.1"})
    );
    assert_eq!(init["params"]["protocolVersion"], "2025-06-18");
    assert_eq!(init["params"]["capabilities"], json!({"sampling": {}}));

    // The same first page of tools as the demo server gives this host directly, with its
    // cursor for the next.
    bridge.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let (tools, _) = bridge.answer(2);
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .expect("a tool list")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        names.contains(&"echo") && names.contains(&"slow"),
        "{tools}"
    );
    assert!(tools["result"]["nextCursor"].is_string(), "{tools}");

    // A call with progress: the host's token on every update, then the result.
    bridge.send(
        &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "slow", "arguments": {"steps": 2, "delay_ms": 1},
        "_meta": {"progressToken": "host-token"}}}),
    );
    let (done, before) = bridge.answer(3);
    assert_eq!(
        done["result"]["content"][0]["text"], "finished 2 steps",
        "{done}"
    );
    let progress: Vec<&Value> = before
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .collect();
    assert_eq!(progress.len(), 2, "{before:?}");
    assert!(
        progress
            .iter()
            .all(|p| p["params"]["progressToken"] == "host-token"),
        "{progress:?}"
    );

    // The server's sampling request reaches the host, and its answer the server.
    bridge.send(
        &json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {
        "name": "model", "arguments": {"prompt": "hello"}}}),
    );
    let ask = bridge.recv();
    assert_eq!(ask["method"], "sampling/createMessage", "{ask}");
    bridge.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": {
        "role": "assistant", "model": "host-model",
        "content": {"type": "text", "text": "hi from the host"}}}));
    let (sampled, _) = bridge.answer(4);
    assert!(
        sampled["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("hi from the host")),
        "{sampled}"
    );

    // The host leaves: the child's whole process group is shut down, the bridge exits 0.
    let pgid = child_group(&bridge.dir);
    assert_eq!(bridge.finish(), 0);
    assert!(
        !group_alive(pgid),
        "the child's process group outlived the bridge"
    );
}

#[test]
fn a_cancel_from_the_host_carries_its_reason_and_the_host_leaving_cancels_the_rest() {
    let mut bridge = start("cancel");
    bridge.initialize(&json!({}));
    bridge.send(
        &json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "slow", "arguments": {"steps": 100, "delay_ms": 1000}}}),
    );
    let call = wait_upstream(&bridge.dir, "the slow call", |m| {
        m["method"] == "tools/call"
    });
    bridge.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 7, "reason": "user stop"}}),
    );
    let cancelled = wait_upstream(&bridge.dir, "notifications/cancelled", |m| {
        m["method"] == "notifications/cancelled"
    });
    assert_eq!(cancelled["params"]["requestId"], call["id"], "{cancelled}");
    assert_eq!(cancelled["params"]["reason"], "user stop", "{cancelled}");

    // A second call still running when the host closes stdin: cancelled upstream, said why.
    bridge.send(
        &json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {
        "name": "slow", "arguments": {"steps": 100, "delay_ms": 1000}}}),
    );
    let second = wait_upstream(&bridge.dir, "the second call", |m| {
        m["method"] == "tools/call" && m["id"] != call["id"]
    });
    assert_eq!(bridge.finish(), 0);
    let cancels: Vec<Value> = upstream_log(&bridge.dir)
        .into_iter()
        .filter(|m| m["method"] == "notifications/cancelled")
        .collect();
    assert!(
        cancels
            .iter()
            .any(|c| c["params"]["requestId"] == second["id"]
                && c["params"]["reason"] == "the host disconnected"),
        "the call still running was not cancelled upstream: {cancels:?}"
    );
}

#[test]
fn the_child_dying_ends_the_host_session_and_the_bridge_exits_3() {
    let mut bridge = start("dies");
    bridge.initialize(&json!({}));
    bridge.send(
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "slow", "arguments": {"steps": 100, "delay_ms": 1000}}}),
    );
    wait_upstream(&bridge.dir, "the slow call", |m| {
        m["method"] == "tools/call"
    });
    let pgid = child_group(&bridge.dir);
    let killed = Command::new("kill")
        .args(["-KILL", "--", &format!("-{pgid}")])
        .status()
        .expect("run kill");
    assert!(killed.success());
    // The host's open call is answered (with an error), then its stdout ends: the session
    // is over, with stdin still open.
    let (answer, _) = bridge.answer(2);
    assert!(answer["error"].is_object(), "{answer}");
    let started = Instant::now();
    loop {
        match bridge.lines.recv_timeout(GUARD) {
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => panic!("the host session was not ended"),
            Ok(line) => assert!(started.elapsed() < GUARD, "still writing: {line}"),
        }
    }
    assert_eq!(bridge.wait_exit(), 3);
}

/// A server killed from outside by SIGTERM mid-call: the host's open call and the bridge's
/// stderr name the server by its command line and the signal by its name, and say that mcp
/// did not send it (not `server "sh"`, which for `mcp demo-server` would name this program).
#[test]
fn a_server_killed_by_sigterm_is_named_by_its_command_and_the_signal() {
    let dir = test_dir("sigterm");
    let script = format!(
        "echo $$ > {}; exec {MCP} demo-server",
        dir.join("pgid").display()
    );
    let mut command = Command::new(MCP);
    command
        .args(["bridge", "--", "sh", "-c", &script])
        .stderr(stderr_file(&dir));
    let mut bridge = BridgeHost::spawn(command, dir);
    bridge.initialize(&json!({}));
    let id = bridge.request(
        "tools/call",
        json!({"name": "slow", "arguments": {"steps": 100, "delay_ms": 1000}}),
    );
    // `exec`: the pid `sh` wrote is the demo server's.
    let pid = child_group(&bridge.dir);
    let killed = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .expect("run kill");
    assert!(killed.success());
    let (answer, _) = bridge.answer(id);
    let said = "`sh -c 'echo $$ > ";
    let how =
        "demo-server'` was killed by signal 15 (SIGTERM), sent by another process, not by mcp";
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with(&format!("mcp bridge: the server {said}")) && message.ends_with(how),
        "{answer}"
    );
    assert_eq!(bridge.wait_exit(), 3);
    let stderr = bridge.stderr();
    let error = stderr
        .lines()
        .find(|l| l.starts_with("error: "))
        .unwrap_or_default();
    assert!(
        error.starts_with(&format!("error: the server {said}")) && error.ends_with(how),
        "{stderr}"
    );
    assert!(!stderr.contains("server \"sh\""), "{stderr}");
}

#[test]
fn our_own_client_calls_through_the_bridge() {
    let out = Command::new(MCP)
        .args([
            "call",
            "--json",
            "echo",
            "text=through",
            "--",
            MCP,
            "bridge",
            "--",
            MCP,
        ])
        .arg("demo-server")
        .output()
        .expect("run mcp call");
    assert!(out.status.success(), "{out:?}");
    let result: Value = serde_json::from_slice(&out.stdout).expect("JSON output");
    assert_eq!(result["content"][0]["text"], "through", "{result}");
}

#[test]
fn a_bridge_needs_one_server() {
    let none = Command::new(MCP)
        .arg("bridge")
        .stdin(Stdio::null())
        .output()
        .expect("run mcp bridge");
    assert_eq!(none.status.code(), Some(2), "{none:?}");
    assert!(
        String::from_utf8_lossy(&none.stderr).contains("-- <command>"),
        "{none:?}"
    );
    let both = Command::new(MCP)
        .args([
            "bridge",
            "--url",
            "http://127.0.0.1:9/mcp",
            "--",
            MCP,
            "demo-server",
        ])
        .stdin(Stdio::null())
        .output()
        .expect("run mcp bridge");
    assert_eq!(both.status.code(), Some(2), "{both:?}");
}

/// A bridged server's stderr reaches the bridge's stderr as it is written (a host logs it),
/// while the bridge is still running, unprefixed for the single server.
#[test]
fn the_servers_stderr_passes_through_as_it_comes() {
    let seen = stderr_while_bridging(
        &[
            "bridge",
            "--",
            "sh",
            "-c",
            r#"echo "child stderr line" >&2; exec "$0" demo-server"#,
            MCP,
        ],
        &["child stderr line"],
    );
    assert!(!seen.iter().any(|l| l.starts_with('[')), "{seen:?}");
}

/// With a --config of several servers, each passed-through line names its server.
#[test]
fn each_config_servers_stderr_is_prefixed_with_its_name() {
    let dir = test_dir("stderr-config");
    let config = dir.join("servers.json");
    let server = |name: &str| json!({"command": "sh", "args": ["-c", format!("echo {name} says hi >&2; exec \"$0\" demo-server"), MCP]});
    std::fs::write(
        &config,
        json!({"mcpServers": {"alpha": server("alpha"), "beta": server("beta")}}).to_string(),
    )
    .unwrap();
    stderr_while_bridging(
        &["bridge", "--config", config.to_str().unwrap()],
        &["[alpha] alpha says hi", "[beta] beta says hi"],
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs `mcp ARGS` as a host would (initialize, then stdin left open) until every line of
/// `expected` came on its stderr while it runs; then closes stdin and checks it exits 0.
/// Returns the stderr lines seen.
fn stderr_while_bridging(args: &[&str], expected: &[&str]) -> Vec<String> {
    let mut bridge = Command::new(MCP)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run mcp bridge");
    // The bridge starts its server when the host initializes.
    let mut stdin = bridge.stdin.take().expect("stdin is piped");
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "host-app", "version": "3.1"}}})
    )
    .expect("write to the bridge");
    stdin.flush().expect("flush");
    let stderr = bridge.stderr.take().expect("stderr is piped");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut seen = Vec::new();
    let deadline = Instant::now() + GUARD;
    while !expected.iter().all(|e| seen.iter().any(|l| l == e)) {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) => seen.push(line),
            Err(_) => panic!("the servers' stderr lines never came: {seen:?}"),
        }
    }
    // It came while the bridge runs, not in an error message at its end.
    assert!(bridge.try_wait().unwrap().is_none(), "{seen:?}");
    drop(stdin);
    let status = bridge.wait().unwrap();
    assert!(status.success(), "{status}: {seen:?}");
    seen
}
