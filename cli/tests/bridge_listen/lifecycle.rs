//! Starting the listener (a port in use, `localhost`, a missing program) and stopping it
//! (SIGTERM, Ctrl-C).

use std::process::{Command, Stdio};

use crate::common::listening::Listening;
use crate::common::port_in_use::{assert_port_in_use, taken_address};
use crate::common::raw_http::open_session;
use crate::harness::{Listener, MCP};

/// A bridge asked to stop (SIGTERM by a service manager, Ctrl-C by its user) ends cleanly:
/// every session and its child closed, one line saying so, exit 0.
fn a_stop_signal_ends_every_session_and_its_child_cleanly(name: &str, signal: &str) {
    let mut bridge = Listener::start(name, &[], &[]);
    bridge.wait_groups(0);
    open_session(&bridge.url, "host-one", &[]);
    open_session(&bridge.url, "host-two", &[]);
    bridge.wait_groups(2);
    let (status, stderr) = bridge.stop(signal);
    assert_eq!(status.code(), Some(0), "{signal}: {stderr:?}");
    assert_eq!(
        stderr
            .iter()
            .filter(|l| l.contains("stopping") || l.contains("error"))
            .collect::<Vec<_>>(),
        ["mcp bridge: stopping: closing every session"],
        "{signal}"
    );
    bridge.wait_groups(0);
}

#[test]
fn sigterm_ends_every_session_and_its_child() {
    a_stop_signal_ends_every_session_and_its_child_cleanly("sigterm", "-TERM");
}

#[test]
fn ctrl_c_ends_every_session_and_its_child() {
    a_stop_signal_ends_every_session_and_its_child_cleanly("sigint", "-INT");
}

/// Starts `mcp bridge --listen ADDR -- mcp demo-server` expecting it to fail: its output.
fn failed_listener(addr: &str) -> std::process::Output {
    let out = Command::new(MCP)
        .args(["bridge", "--listen", addr, "--", MCP, "demo-server"])
        .stdin(Stdio::null())
        .output()
        .expect("run mcp bridge");
    assert!(!out.status.success(), "{out:?}");
    out
}

#[test]
fn a_port_in_use_says_so_once_and_hints_another_port() {
    let (_taken, addr) = taken_address();
    let out = failed_listener(&addr);
    let stderr = assert_port_in_use(&out, &addr);
    assert!(!stderr.contains("mcp --help"), "{stderr}");
}

#[test]
fn listen_accepts_localhost_and_says_how_to_write_a_bare_port() {
    // localhost:0 is served on 127.0.0.1.
    let bridge = Listening::start(
        &[
            "bridge",
            "--listen",
            "localhost:0",
            "--",
            MCP,
            "demo-server",
        ],
        &[],
    )
    .url_first();
    let url = bridge.url.clone();
    drop(bridge);
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");

    let out = failed_listener("8080");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("use 127.0.0.1:8080"), "{stderr}");
}

#[test]
fn a_missing_server_program_fails_the_listener_at_once() {
    let out = Command::new(MCP)
        .args([
            "bridge",
            "--listen",
            "127.0.0.1:0",
            "--",
            "mcp-no-such-server-program",
        ])
        .stdin(Stdio::null())
        .output()
        .expect("run mcp bridge --listen");
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("http://"), "no URL: {stderr}");
    assert!(
        stderr.contains("mcp-no-such-server-program"),
        "the program named: {stderr}"
    );
}

/// A bridge stopped while a host's call runs: the host gets an error saying the bridge is
/// stopping (the call cancelled upstream) before its stream closes, so `mcp --url` as the
/// host reports that, not that the connection closed.
#[test]
fn a_stop_answers_a_running_call_that_the_bridge_is_stopping() {
    let mut bridge = Listener::start("stop-answers", &[], &[]);
    let host = Command::new(MCP)
        .args([
            "--url",
            &bridge.url,
            "call",
            "slow",
            "steps=100",
            "delay_ms=200",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn mcp --url");
    bridge.wait_upstream("the call", |m| m["method"] == "tools/call");
    let (status, _) = bridge.stop("-TERM");
    assert_eq!(status.code(), Some(0));
    // The host ends with the bridge (its stream closes at the latest).
    let out = host.wait_with_output().expect("the host ends");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(
        stderr.contains(
            "mcp bridge: the bridge is stopping (the bridge was stopped by SIGTERM); the request \
             was cancelled upstream"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("hint: the bridge this URL serves was stopped"),
        "{stderr}"
    );
    assert!(!stderr.contains("closed the connection"), "{stderr}");
}
