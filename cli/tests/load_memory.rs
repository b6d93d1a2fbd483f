//! `mcp load -c N` keeps memory per worker independent of the latency histogram: the peak
//! resident set of `mcp load -c 2000` (measured by `wait4`, for that process alone) stays far
//! below what one histogram per worker cost (~190 KB each, 390 MB at `-c 2000`).

use std::process::{Command, Stdio};

const MCP: &str = env!("CARGO_BIN_EXE_mcp");

/// Runs `mcp ARGS -- mcp demo-server` to the end; returns its exit code and peak RSS in KiB.
fn run_measured(args: &[&str]) -> (i32, u64) {
    let child = Command::new(MCP)
        .args(args)
        .args(["--", MCP, "demo-server"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn mcp");
    let pid = libc::pid_t::try_from(child.id()).expect("a pid fits pid_t");
    let mut status = 0;
    // SAFETY: an all-zero `rusage` is a valid value (plain integers and timevals).
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our own unwaited child; both out-pointers are valid for the call.
    let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(rc, pid, "wait4: {}", std::io::Error::last_os_error());
    // `child` was reaped by wait4: forget it so that nothing waits for it again.
    std::mem::forget(child);
    assert!(
        libc::WIFEXITED(status),
        "mcp did not exit normally: {status}"
    );
    (
        libc::WEXITSTATUS(status),
        u64::try_from(usage.ru_maxrss).unwrap_or(0),
    )
}

#[test]
fn load_with_2000_workers_stays_small() {
    let (code, one) = run_measured(&["load", "echo", "text=x", "-n", "2000", "-c", "1"]);
    assert_eq!(code, 0, "mcp load -c 1 failed");
    let (code, many) = run_measured(&["load", "echo", "text=x", "-n", "4000", "-c", "2000"]);
    assert_eq!(code, 0, "mcp load -c 2000 failed");
    eprintln!("peak RSS: -c 1 {one} KiB, -c 2000 {many} KiB");
    // Measured: about 15 MB at -c 1 and 20 MB at -c 2000 (394 MB with a histogram per
    // worker). Allow 40 KiB per worker over the single-worker run: generous for a task, a
    // client handle and a pending request each, and still a tenth of a histogram.
    let budget = one + 2000 * 40;
    assert!(
        many < budget,
        "mcp load -c 2000 peaked at {many} KiB, over {budget} KiB (-c 1: {one} KiB)"
    );
}
