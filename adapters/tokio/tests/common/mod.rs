//! Helpers shared by the process tests: reading `/proc`, bounded polling, spawning.

#![allow(dead_code, unreachable_pub)]

use std::future::Future;
use std::time::Duration;

use futures_util::io::{AsyncBufReadExt as _, BufReader};
use mcp_driver::process::{StderrTailConfig, StdioChild, StdioCommand, StdioPipes};
use mcp_tokio::TokioRuntime;

/// How long any single expectation may take before the test fails.
pub const BOUND: Duration = Duration::from_secs(5);

/// The scheduler state letter of `pid` from `/proc/<pid>/stat` (`R`, `S`, `Z`, ...), or
/// `None` if there is no such process (it has been reaped).
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

/// Dead: gone, or a zombie waiting for a parent that is not us (a grandchild re-parented to
/// an init that may not reap in a container).
pub fn is_dead(pid: u32) -> bool {
    !is_alive(pid)
}

/// Fully gone: dead and reaped.
pub fn is_reaped(pid: u32) -> bool {
    proc_state(pid).is_none()
}

/// Polls `cond` every 20 ms for up to [`BOUND`]; returns whether it became true.
pub async fn eventually(mut cond: impl FnMut() -> bool) -> bool {
    let deadline = tokio::time::Instant::now() + BOUND;
    loop {
        if cond() {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Runs `fut`, failing the test if it takes longer than `limit`.
pub async fn bounded<T>(limit: Duration, what: &str, fut: impl Future<Output = T>) -> T {
    tokio::time::timeout(limit, fut)
        .await
        .unwrap_or_else(|_| panic!("{what} took longer than {limit:?}"))
}

/// `sh -c script` with default stderr limits.
pub fn spawn_sh(script: &str) -> (StdioChild<TokioRuntime>, StdioPipes) {
    spawn(StdioCommand::new("sh").args(["-c", script]))
}

pub fn spawn(spec: StdioCommand) -> (StdioChild<TokioRuntime>, StdioPipes) {
    StdioChild::spawn(
        &TokioRuntime::current(),
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
