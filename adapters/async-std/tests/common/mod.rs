//! Helpers shared by the process tests: reading `/proc`, bounded polling, spawning. Timers
//! are async-io's (through smol), so the helpers work under either executor.

#![allow(dead_code, unreachable_pub)]

use std::future::Future;
use std::time::{Duration, Instant};

use futures_util::io::{AsyncBufReadExt as _, BufReader};
use mcp_async_std::AsyncStdRuntime;
use mcp_driver::process::{StderrTailConfig, StdioChild, StdioCommand, StdioPipes};

/// How long any single expectation may take before the test fails.
pub const BOUND: Duration = Duration::from_secs(5);

/// The scheduler state letter of `pid` from `/proc/<pid>/stat`, or `None` once reaped.
pub fn proc_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may contain spaces: the state follows the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.trim_start().chars().next()
}

/// Alive: exists and is not a zombie.
pub fn is_alive(pid: u32) -> bool {
    matches!(proc_state(pid), Some(s) if s != 'Z')
}

/// Dead: gone, or a zombie waiting for a parent that is not us (a re-parented grandchild).
pub fn is_dead(pid: u32) -> bool {
    !is_alive(pid)
}

/// Fully gone: dead and reaped.
pub fn is_reaped(pid: u32) -> bool {
    proc_state(pid).is_none()
}

/// Sleeps on async-io's timer.
pub async fn sleep(d: Duration) {
    smol::Timer::after(d).await;
}

/// Polls `cond` every 20 ms for up to [`BOUND`]; returns whether it became true.
pub async fn eventually(mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + BOUND;
    loop {
        if cond() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        sleep(Duration::from_millis(20)).await;
    }
}

/// Runs `fut` for at most `limit`; `None` if it took longer.
pub async fn within<T>(limit: Duration, fut: impl Future<Output = T>) -> Option<T> {
    smol::future::or(async { Some(fut.await) }, async {
        sleep(limit).await;
        None
    })
    .await
}

/// Runs `fut`, failing the test if it takes longer than `limit`.
pub async fn bounded<T>(limit: Duration, what: &str, fut: impl Future<Output = T>) -> T {
    within(limit, fut)
        .await
        .unwrap_or_else(|| panic!("{what} took longer than {limit:?}"))
}

/// `sh -c script` with default stderr limits.
pub fn spawn_sh(script: &str) -> (StdioChild<AsyncStdRuntime>, StdioPipes) {
    spawn(StdioCommand::new("sh").args(["-c", script]))
}

pub fn spawn(spec: StdioCommand) -> (StdioChild<AsyncStdRuntime>, StdioPipes) {
    StdioChild::spawn(
        &AsyncStdRuntime::default(),
        &spec,
        "test-server",
        StderrTailConfig::default(),
    )
    .expect("spawn")
}

/// Reads one line from the child's stdout, without the newline.
pub async fn read_line(reader: &mut BufReader<impl futures_io::AsyncRead + Unpin>) -> String {
    let mut line = String::new();
    bounded(
        BOUND,
        "reading a line from the child",
        reader.read_line(&mut line),
    )
    .await
    .expect("read stdout");
    line.trim_end().to_owned()
}

/// Reads all of the child's stdout.
pub async fn read_all(reader: impl futures_io::AsyncRead + Unpin) -> String {
    let mut out = String::new();
    let mut reader = BufReader::new(reader);
    loop {
        let mut line = String::new();
        let n = bounded(
            BOUND,
            "reading the child's stdout",
            reader.read_line(&mut line),
        )
        .await
        .expect("read stdout");
        if n == 0 {
            return out;
        }
        out.push_str(&line);
    }
}
