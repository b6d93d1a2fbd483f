//! Stopping a test's bridge with a signal, and waiting for what it leaves behind: a file it
//! (or its upstream) writes, the upstream's process group gone.

use std::path::Path;
use std::time::{Duration, Instant};

use super::bridge_host::{GUARD, group_alive};

/// Sends `signal` to the process `pid` (a positive pid: that process alone).
pub fn send_signal(pid: u32, signal: libc::c_int) {
    let pid = libc::pid_t::try_from(pid).expect("a pid fits pid_t");
    assert!(pid > 0);
    // SAFETY: kill(2) on one positive pid, a child of this test.
    let sent = unsafe { libc::kill(pid, signal) };
    assert_eq!(sent, 0, "kill {pid}");
}

/// Waits until `pred` holds for the text of `path`, and returns that text.
pub fn wait_file(path: &Path, what: &str, pred: impl Fn(&str) -> bool) -> String {
    let started = Instant::now();
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if pred(&text) {
            return text;
        }
        assert!(started.elapsed() < GUARD, "never {what}: {text}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The process group id an upstream's `sh` wrote to `dir/pgid` as it started (waited for).
pub fn wait_pgid(dir: &Path) -> i32 {
    wait_file(&dir.join("pgid"), "the upstream's pid", |t| {
        t.trim().parse::<i32>().is_ok()
    })
    .trim()
    .parse()
    .expect("a pid")
}

/// Waits (within the guard) until no process of group `pgid` is left.
pub fn assert_group_gone(pgid: i32) {
    let started = Instant::now();
    while group_alive(pgid) {
        assert!(
            started.elapsed() < GUARD,
            "the upstream's group outlived the bridge"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
