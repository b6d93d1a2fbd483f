//! A stop signal (SIGTERM, SIGINT, SIGHUP) to the built `mcp bridge` with a call in flight:
//! the call is cancelled upstream with the signal named in the reason, the upstream session
//! is closed (HTTP `DELETE`, the child's shutdown), and the bridge exits with the signal's
//! status (stdio) or 0 (`--listen`).

mod common;

use std::path::PathBuf;
use std::process::{Command, Stdio};

use common::bridge_host::{
    BridgeHost, MCP, Reaped, recorded_demo_server, scratch_dir, stderr_file,
};
use common::listening::Listening;
use common::stopping::{assert_group_gone, send_signal, wait_file, wait_pgid};
use serde_json::{Value, json};

fn test_dir(name: &str) -> PathBuf {
    scratch_dir("bridge-stop", name)
}

/// A `slow` call long enough to be in flight when the bridge is stopped, reporting progress
/// (so the host knows it runs upstream).
fn slow_call(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "slow", "arguments": {"steps": 100, "delay_ms": 300},
        "_meta": {"progressToken": "stop-test"}}})
}

/// `mcp -vv bridge --url URL` with a host on its stdio, the stderr in `stderr.txt`.
fn http_bridge(name: &str, url: &str) -> BridgeHost {
    let dir = test_dir(name);
    let mut command = Command::new(MCP);
    command
        .args(["-vv", "bridge", "--url", url])
        .stderr(stderr_file(&dir));
    BridgeHost::spawn(command, dir)
}

/// The stdio bridge over HTTP, stopped by `signal` with a call in flight: the server's tool
/// sees the cancellation, the trace shows `notifications/cancelled` with the signal named in
/// the reason and then the session's `DELETE`; the exit status is the signal's.
/// `said`: how stderr names the stop (`SIGTERM`, `interrupted` for Ctrl-C); `again`: what
/// stops it at once meanwhile (only Ctrl-C: `Ctrl-C`, or `again` after one).
fn a_stopped_http_bridge_cancels_and_deletes(
    name: &str,
    signal: libc::c_int,
    signame: &str,
    said: &str,
    again: &str,
) {
    let demo = Listening::demo();
    let mut bridge = http_bridge(name, &demo.url);
    bridge.initialize(&json!({}));
    bridge.send(&slow_call(7));
    bridge.until("notifications/progress");
    send_signal(bridge.child.id(), signal);
    let code = bridge.wait_exit();
    demo.wait_stderr("slow: cancelled");
    let stderr = bridge.stderr();
    let expected = 128 + signal;
    assert_eq!(code, expected, "{stderr}");
    let reason = format!("the bridge was stopped by {signame}");
    let cancel = stderr
        .find("notifications/cancelled")
        .unwrap_or_else(|| panic!("no notifications/cancelled upstream: {stderr}"));
    assert!(stderr[cancel..].contains(&reason), "{stderr}");
    let delete = stderr
        .find("DELETE")
        .unwrap_or_else(|| panic!("no DELETE upstream: {stderr}"));
    assert!(
        cancel < delete,
        "the cancel goes out before the DELETE: {stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "{said}: cancelling and closing the connection ({again} to stop at once)"
        )),
        "{stderr}"
    );
}

#[test]
fn sigterm_cancels_the_call_upstream_deletes_the_session_and_exits_143() {
    a_stopped_http_bridge_cancels_and_deletes(
        "term",
        libc::SIGTERM,
        "SIGTERM",
        "SIGTERM",
        "Ctrl-C",
    );
}

#[test]
fn sigint_cancels_the_call_upstream_deletes_the_session_and_exits_130() {
    a_stopped_http_bridge_cancels_and_deletes(
        "int",
        libc::SIGINT,
        "SIGINT",
        "interrupted",
        "again",
    );
}

#[test]
fn sighup_cancels_the_childs_call_with_the_reason_shuts_it_down_and_exits_129() {
    let dir = test_dir("hup");
    let mut command = Command::new(MCP);
    command
        .arg("bridge")
        .arg("--")
        .args(recorded_demo_server(&dir))
        .stderr(stderr_file(&dir));
    let mut bridge = BridgeHost::spawn(command, dir.clone());
    bridge.initialize(&json!({}));
    bridge.send(&slow_call(7));
    bridge.until("notifications/progress");
    let pgid = wait_pgid(&dir);
    send_signal(bridge.child.id(), libc::SIGHUP);
    assert_eq!(bridge.wait_exit(), 129, "{}", bridge.stderr());
    let log = std::fs::read_to_string(dir.join("upstream.log")).expect("the upstream log");
    let cancels: Vec<Value> = log
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|m| m["method"] == "notifications/cancelled")
        .collect();
    assert!(
        cancels
            .iter()
            .any(|c| c["params"]["reason"] == "the bridge was stopped by SIGHUP"),
        "{log}"
    );
    assert_group_gone(pgid);
}

/// A host killed outright: its death sends the bridge SIGTERM twice, unasked (the kernel's
/// parent-death signal and the host's group watchdog), and the bridge still stops cleanly:
/// the call is cancelled upstream with the signal named in the reason (the server's tool sees
/// it), then the session's `DELETE`, and it exits with SIGTERM's status. The second signal is
/// not taken for someone asking to stop at once (which would skip both).
#[test]
fn a_host_killed_outright_still_has_its_call_cancelled_upstream() {
    let demo = Listening::demo();
    let dir = test_dir("host-killed");
    let trace = dir.join("bridge-trace.txt");
    // The bridge's stderr (its `-vv` trace) into a file: the host, which would pass it
    // through, dies. `exec` keeps the bridge the host's direct child, so the kernel's
    // parent-death signal reaches it as it would without the wrapper.
    let bridge = format!("exec \"$0\" \"$@\" 2>'{trace}'", trace = trace.display());
    // The host: `mcp call` with the bridge as its stdio server (in a group of its own, under
    // the host's watchdog).
    let host = Command::new(MCP)
        .args([
            "-vv",
            "call",
            "slow",
            "steps=100",
            "delay_ms=300",
            "--",
            "sh",
            "-c",
            &bridge,
            MCP,
        ])
        .args(["-vv", "bridge", "--url", &demo.url])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr_file(&dir))
        .spawn()
        .expect("spawn the host");
    let mut host = Reaped(host);
    // The call runs upstream once its first progress came back through the bridge.
    wait_file(&dir.join("stderr.txt"), "progress", |t| {
        t.contains("notifications/progress")
    });
    host.0.kill().expect("SIGKILL the host");
    let _ = host.0.wait();
    // The bridge's last line, as it exits.
    let trace = wait_file(&trace, "the bridge's exit", |t| {
        t.contains("error: stopped by SIGTERM")
    });
    demo.wait_stderr("slow: cancelled");
    assert!(!trace.contains("stopping at once"), "{trace}");
    let cancel = trace
        .find("notifications/cancelled")
        .unwrap_or_else(|| panic!("no notifications/cancelled upstream: {trace}"));
    assert!(
        trace[cancel..].contains("the bridge was stopped by SIGTERM"),
        "{trace}"
    );
    let delete = trace
        .find("> DELETE")
        .unwrap_or_else(|| panic!("no DELETE upstream: {trace}"));
    assert!(
        cancel < delete,
        "the cancel goes out before the DELETE: {trace}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sigterm_to_a_listening_bridge_cancels_and_deletes_upstream_and_exits_0() {
    let demo = Listening::demo();
    let mut bridge = Listening::start(
        &[
            "-vv",
            "bridge",
            "--listen",
            "127.0.0.1:0",
            "--url",
            &demo.url,
        ],
        &[],
    )
    .url_first();
    assert!(
        bridge.url.starts_with("http://127.0.0.1:"),
        "{}",
        bridge.url
    );
    let host = Command::new(MCP)
        .args([
            "--url",
            &bridge.url,
            "call",
            "slow",
            "steps=100",
            "delay_ms=300",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn the host");
    let host = Reaped(host);
    // The first progress notification came back from upstream: the call runs there.
    bridge.until_stderr("notifications/progress");
    let (status, rest) = bridge.stop("-TERM");
    let code = status.code().unwrap_or(-1);
    drop(host);
    demo.wait_stderr("slow: cancelled");
    assert_eq!(code, 0, "{rest:#?}");
    assert!(
        rest.iter()
            .any(|l| l.contains("mcp bridge: stopping: closing every session")),
        "{rest:#?}"
    );
    let cancel = rest
        .iter()
        .position(|l| {
            l.contains("notifications/cancelled") && l.contains("the bridge was stopped by SIGTERM")
        })
        .unwrap_or_else(|| panic!("no cancel with the reason upstream: {rest:#?}"));
    let delete = rest
        .iter()
        .position(|l| l.contains("DELETE"))
        .unwrap_or_else(|| panic!("no DELETE upstream: {rest:#?}"));
    assert!(cancel < delete, "{rest:#?}");
}
