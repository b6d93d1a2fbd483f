//! A second stop signal to the built `mcp bridge` while it is already stopping, waiting for
//! an upstream whose close hangs: a stdio server that ignores the end of its input and
//! SIGTERM, so closing it would take the whole shutdown schedule (stdin closed, a wait,
//! SIGTERM, a wait, SIGKILL), longer than the bridge's stop grace.
//!
//! - A second Ctrl-C (SIGINT) stops the bridge at once: it says `stopping at once`, never
//!   reaches the end of its grace (no `did not close in time` warning), exits 130, and the
//!   upstream's process group is gone with it.
//! - A second SIGTERM does not (a dying host sends two, neither a repeat): the bridge notes
//!   it is already stopping, keeps waiting until its grace runs out (`did not close in
//!   time`), exits 143, and the upstream's process group is gone with it.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::bridge_host::{BridgeHost, MCP, scratch_dir, stderr_file};
use common::stopping::{assert_group_gone, send_signal, wait_file, wait_pgid};
use serde_json::json;

/// What the bridge says when its grace for closing the upstream runs out.
const GRACE_OVER: &str = "did not close in time";

/// The upstream command: `sh` (the process group leader, its pid written to `pgid`) ignores
/// SIGTERM (and so does everything it starts), runs the demo server until its input ends,
/// then stays: only SIGKILL ends it.
fn hanging_demo_server(dir: &Path) -> Vec<String> {
    let script = format!(
        "echo $$ > '{pid}'; trap '' TERM; '{MCP}' demo-server; while :; do sleep 1; done",
        pid = dir.join("pgid").display(),
    );
    vec!["sh".into(), "-c".into(), script]
}

/// `mcp -vv bridge -- <hanging server>` with an initialized host on its stdio, and the
/// upstream's process group.
fn start(name: &str) -> (BridgeHost, i32, PathBuf) {
    let dir = scratch_dir("bridge-stop-again", name);
    let mut command = Command::new(MCP);
    command
        .args(["-vv", "bridge", "--"])
        .args(hanging_demo_server(&dir))
        .stderr(stderr_file(&dir));
    let mut bridge = BridgeHost::spawn(command, dir.clone());
    bridge.initialize(&json!({}));
    let pgid = wait_pgid(&dir);
    (bridge, pgid, dir)
}

/// Stops the bridge with `signal` and waits until it says it is stopping (`announced`).
fn first_stop(bridge: &BridgeHost, signal: libc::c_int, announced: &str) {
    send_signal(bridge.child.id(), signal);
    wait_file(&bridge.dir.join("stderr.txt"), announced, |t| {
        t.contains(announced)
    });
}

#[test]
fn a_second_ctrl_c_stops_a_bridge_waiting_for_its_upstream_at_once() {
    let (mut bridge, pgid, _dir) = start("sigint");
    first_stop(
        &bridge,
        libc::SIGINT,
        "interrupted: cancelling and closing the connection (again to stop at once)",
    );
    send_signal(bridge.child.id(), libc::SIGINT);
    let code = bridge.wait_exit();
    let stderr = bridge.stderr();
    assert_eq!(code, 130, "{stderr}");
    assert!(stderr.contains("stopping at once"), "{stderr}");
    assert!(
        !stderr.contains(GRACE_OVER),
        "it waited out its grace: {stderr}"
    );
    assert_group_gone(pgid);
}

#[test]
fn a_second_sigterm_does_not_cut_the_clean_stop_short() {
    let (mut bridge, pgid, _dir) = start("sigterm");
    first_stop(
        &bridge,
        libc::SIGTERM,
        "SIGTERM: cancelling and closing the connection (Ctrl-C to stop at once)",
    );
    send_signal(bridge.child.id(), libc::SIGTERM);
    let code = bridge.wait_exit();
    let stderr = bridge.stderr();
    assert_eq!(code, 143, "{stderr}");
    assert!(!stderr.contains("stopping at once"), "{stderr}");
    // The second signal was seen and set aside, then the grace ran out.
    let seen = stderr
        .find("SIGTERM: already stopping")
        .unwrap_or_else(|| panic!("the second SIGTERM was not seen: {stderr}"));
    let grace_over = stderr
        .find(GRACE_OVER)
        .unwrap_or_else(|| panic!("it did not wait for its upstream: {stderr}"));
    assert!(seen < grace_over, "{stderr}");
    assert_group_gone(pgid);
}
