//! Stdio child-process checks written once, generic over the runtime: every adapter's
//! `tests/process_*.rs` calls these bodies (and keeps only what is specific to its runtime,
//! such as dropping a child outside any executor).
//!
//! Linux only: the checks read `/proc/<pid>/stat` to tell a live process from a zombie and a
//! reaped one. Each body panics on failure and bounds every wait by [`BOUND`].

use std::future::Future;
use std::path::Path;
use std::time::Duration;

use futures_util::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};

use super::suite::{eventually as eventually_5s, sleep, within};
use crate::Runtime;
use crate::process::{
    ProcessGroupGuard, Signal, SignalOutcome, StderrTailConfig, StdioChild, StdioCommand,
    StdioPipes, describe_exit,
};

/// How long any single expectation may take before the check fails.
pub const BOUND: Duration = Duration::from_secs(5);

/// A child (`sh`) with a grandchild (`sleep`) in the same group; prints the grandchild's pid.
pub const WITH_GRANDCHILD: &str = "sleep 300 & echo $!; sleep 300";

/// The scheduler state letter of `pid` from `/proc/<pid>/stat` (`R`, `S`, `Z`, ...), or
/// `None` if there is no such process (it has been reaped).
#[must_use]
pub fn proc_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may contain spaces: the state follows the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.trim_start().chars().next()
}

/// Alive: exists and is not a zombie.
#[must_use]
pub fn is_alive(pid: u32) -> bool {
    matches!(proc_state(pid), Some(s) if s != 'Z')
}

/// Dead: gone, or a zombie waiting for a parent that is not us (a grandchild re-parented to
/// an init that may not reap in a container).
#[must_use]
pub fn is_dead(pid: u32) -> bool {
    !is_alive(pid)
}

/// Fully gone: dead and reaped.
#[must_use]
pub fn is_reaped(pid: u32) -> bool {
    proc_state(pid).is_none()
}

/// Polls `cond` every 20 ms for up to [`BOUND`]; whether it became true.
pub async fn eventually<R: Runtime>(rt: &R, cond: impl FnMut() -> bool) -> bool {
    eventually_5s(rt, cond).await
}

/// Runs `fut`, panicking if it takes longer than `limit`.
pub async fn bounded<R: Runtime, T>(
    rt: &R,
    limit: Duration,
    what: &str,
    fut: impl Future<Output = T>,
) -> T {
    within(rt, limit, fut)
        .await
        .unwrap_or_else(|| panic!("{what} took longer than {limit:?}"))
}

/// Spawns `spec` as a [`StdioChild`] named `test-server`, with default stderr limits.
///
/// # Panics
/// If the spawn fails.
pub fn spawn<R: Runtime>(rt: &R, spec: &StdioCommand) -> (StdioChild<R>, StdioPipes) {
    StdioChild::spawn(rt, spec, "test-server", StderrTailConfig::default()).expect("spawn")
}

/// `sh -c script`, spawned with [`spawn`].
pub fn spawn_sh<R: Runtime>(rt: &R, script: &str) -> (StdioChild<R>, StdioPipes) {
    spawn(rt, &StdioCommand::new("sh").args(["-c", script]))
}

/// Reads one line, without its newline, within [`BOUND`].
pub async fn read_line<R: Runtime>(
    rt: &R,
    reader: &mut BufReader<impl futures_io::AsyncRead + Unpin>,
) -> String {
    let mut line = String::new();
    bounded(
        rt,
        BOUND,
        "reading a line from the child",
        reader.read_line(&mut line),
    )
    .await
    .expect("read stdout");
    line.trim_end().to_owned()
}

/// Reads the first line of `stdout` as a pid.
async fn read_pid<R: Runtime>(
    rt: &R,
    stdout: &mut BufReader<impl futures_io::AsyncRead + Unpin>,
) -> u32 {
    let line = read_line(rt, stdout).await;
    line.parse()
        .unwrap_or_else(|_| panic!("a pid was expected, got {line:?}"))
}

/// Reads everything up to end of file, each read within [`BOUND`].
pub async fn read_all<R: Runtime>(rt: &R, reader: impl futures_io::AsyncRead + Unpin) -> String {
    let mut out = String::new();
    let mut reader = BufReader::new(reader);
    loop {
        let mut line = String::new();
        let n = bounded(
            rt,
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

// ---- process groups ------------------------------------------------------------------

/// Dropping a [`StdioChild`] kills its whole group (the grandchild too) and reaps the child.
pub async fn dropping_the_child_kills_the_group_and_reaps_it<R: Runtime>(rt: R) {
    let (child, pipes) = spawn_sh(&rt, WITH_GRANDCHILD);
    let pid = child.id();
    let mut stdout = BufReader::new(pipes.stdout);
    let grandchild = read_pid(&rt, &mut stdout).await;
    assert!(is_alive(pid) && is_alive(grandchild));

    drop(child);
    drop(stdout);
    drop(pipes.stdin);

    assert!(
        eventually(&rt, || is_dead(grandchild)).await,
        "grandchild survived the drop"
    );
    assert!(
        eventually(&rt, || is_reaped(pid)).await,
        "child not reaped: state {:?}",
        proc_state(pid)
    );
}

/// A [`ProcessGroupGuard`] and the runtime's raw child: dropping both kills the group, and
/// the runtime's own reaper collects the child.
pub async fn dropping_the_guard_and_raw_child_kills_the_group<R: Runtime>(rt: R) {
    let command = StdioCommand::new("sh").args(["-c", WITH_GRANDCHILD]);
    let parts = rt.spawn_child(command.to_command()).expect("spawn");
    let pid = parts.process.id().expect("a running child has a pid");
    let guard = ProcessGroupGuard::new(pid).expect("the child leads its group");
    let mut stdout = BufReader::new(parts.stdout);
    let grandchild = read_pid(&rt, &mut stdout).await;

    drop(guard);
    drop(parts.process);

    assert!(
        eventually(&rt, || is_dead(grandchild)).await,
        "grandchild survived"
    );
    assert!(
        eventually(&rt, || is_reaped(pid)).await,
        "child not reaped: state {:?}",
        proc_state(pid)
    );
}

/// Why the guard exists: the runtime's `kill_on_drop` alone kills the child but leaves the
/// grandchild running.
pub async fn kill_on_drop_alone_misses_the_grandchild<R: Runtime>(rt: R) {
    let command = StdioCommand::new("sh").args(["-c", WITH_GRANDCHILD]);
    let parts = rt.spawn_child(command.to_command()).expect("spawn");
    let pid = parts.process.id().expect("a running child has a pid");
    let mut stdout = BufReader::new(parts.stdout);
    let grandchild = read_pid(&rt, &mut stdout).await;

    drop(parts.process);
    assert!(
        eventually(&rt, || is_dead(pid)).await,
        "kill_on_drop did not kill the child"
    );
    sleep(&rt, Duration::from_millis(200)).await;
    let survived = is_alive(grandchild);
    // Clean up before asserting, so a failure leaves nothing behind.
    let _ = ProcessGroupGuard::new(pid).map(drop);
    assert!(survived, "expected the grandchild to outlive kill_on_drop");
    assert!(eventually(&rt, || is_dead(grandchild)).await);
}

/// SIGTERM goes to the whole group: the grandchild dies too; the child is reaped.
pub async fn sigterm_to_the_group_reaches_the_grandchild<R: Runtime>(rt: R) {
    let (mut child, pipes) = spawn_sh(&rt, "sleep 300 & echo $!; wait");
    let mut stdout = BufReader::new(pipes.stdout);
    let grandchild = read_pid(&rt, &mut stdout).await;

    assert_eq!(child.signal(Signal::Term).unwrap(), SignalOutcome::Sent);
    let status = bounded(&rt, BOUND, "exit after SIGTERM", child.wait())
        .await
        .unwrap();
    assert_eq!(describe_exit(status), "killed by signal 15 (SIGTERM)");
    assert_eq!(child.status(), Some(status));
    assert!(
        eventually(&rt, || is_dead(grandchild)).await,
        "grandchild ignored the group SIGTERM"
    );
    assert!(is_reaped(child.id()));
}

/// A child that ignores SIGTERM keeps running (an abandoned wait loses nothing) and dies by
/// SIGKILL.
pub async fn a_child_that_ignores_sigterm_dies_by_sigkill<R: Runtime>(rt: R) {
    let (mut child, pipes) = spawn_sh(
        &rt,
        "trap '' TERM; echo ready; while :; do sleep 0.05; done",
    );
    let mut stdout = BufReader::new(pipes.stdout);
    assert_eq!(read_line(&rt, &mut stdout).await, "ready");

    assert_eq!(child.signal(Signal::Term).unwrap(), SignalOutcome::Sent);
    let waited = within(&rt, Duration::from_millis(500), child.wait()).await;
    assert!(
        waited.is_none(),
        "the child should have ignored SIGTERM: {waited:?}"
    );
    // The abandoned wait must not have lost the exit registration or reaped anything.
    assert_eq!(child.try_wait().unwrap(), None);

    assert_eq!(child.signal(Signal::Kill).unwrap(), SignalOutcome::Sent);
    let status = bounded(&rt, BOUND, "exit after SIGKILL", child.wait())
        .await
        .unwrap();
    assert_eq!(describe_exit(status), "killed by signal 9 (SIGKILL)");
    assert!(is_reaped(child.id()));
}

/// A normal exit: status described, child reaped, group gone (a later signal finds nothing),
/// stderr kept, and waiting again returns the recorded status.
pub async fn a_normal_exit_is_reaped_and_the_empty_group_is_gone<R: Runtime>(rt: R) {
    let (mut child, _pipes) = spawn_sh(&rt, "echo oops >&2; exit 3");
    let status = bounded(&rt, BOUND, "exit", child.wait()).await.unwrap();
    assert_eq!(describe_exit(status), "exited with status 3");
    assert!(is_reaped(child.id()));
    assert_eq!(
        child.signal(Signal::Term).unwrap(),
        SignalOutcome::AlreadyGone
    );
    assert!(eventually(&rt, || child.last_stderr_lines(5) == ["oops"]).await);
    assert_eq!(child.wait().await.unwrap(), status);
    assert_eq!(child.try_wait().unwrap(), Some(status));
}

/// The runtime's raw child: after reaping, `id()` is `None` and the status sticks.
pub async fn the_raw_child_reports_no_pid_after_reaping<R: Runtime>(rt: R) {
    let command = StdioCommand::new("sh").args(["-c", "exit 4"]);
    let mut process = rt.spawn_child(command.to_command()).expect("spawn").process;
    assert!(process.id().is_some());
    let status = bounded(
        &rt,
        BOUND,
        "raw exit",
        std::future::poll_fn(|cx| process.poll_wait(cx)),
    )
    .await
    .unwrap();
    assert_eq!(describe_exit(status), "exited with status 4");
    assert_eq!(process.id(), None);
    assert_eq!(process.try_wait().unwrap(), Some(status));
}

/// A program that does not exist: `NotFound`, nothing left behind.
pub fn a_missing_program_is_not_found<R: Runtime>(rt: &R) {
    let err = StdioChild::spawn(
        rt,
        &StdioCommand::new("mcp-no-such-program-here"),
        "missing",
        StderrTailConfig::default(),
    )
    .unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
}

// ---- pipes and environment -----------------------------------------------------------

/// 10 MiB of stderr is drained continuously (the child would block on a full pipe
/// otherwise) and only a bounded tail is kept, ending with the last lines.
pub async fn ten_mib_of_stderr_is_drained_and_only_the_tail_is_kept<R: Runtime>(rt: R) {
    const TOTAL: u64 = 10 * 1024 * 1024;
    // 17-byte lines ("0123456789abcdef\n"), cut at exactly 10 MiB, then a marker line.
    let script =
        format!("yes 0123456789abcdef | head -c {TOTAL} >&2; printf '\\nend-marker\\n' >&2");
    let (mut child, _pipes) = spawn_sh(&rt, &script);

    let limit = Duration::from_secs(30);
    let status = bounded(&rt, limit, "exit of the stderr flood", child.wait())
        .await
        .unwrap();
    assert_eq!(describe_exit(status), "exited with status 0");

    let expected = TOTAL + "\nend-marker\n".len() as u64;
    let tail = child.stderr_tail().clone();
    let total = || tail.lock().expect("tail lock").total_bytes();
    assert!(
        eventually(&rt, || total() == expected).await,
        "drained {} of {expected} bytes",
        total()
    );
    let tail = tail.lock().expect("tail lock");
    let config = tail.config();
    assert!(tail.len() <= config.max_lines, "{} lines held", tail.len());
    assert!(
        tail.held_bytes() <= config.max_bytes,
        "{} bytes held",
        tail.held_bytes()
    );
    // 10 MiB / 17 leaves a partial line, ended by the marker's leading newline.
    assert_eq!(tail.total_lines(), TOTAL / 17 + 2);
    let last = tail.last_lines(3);
    assert_eq!(last[0], "0123456789abcdef");
    assert_eq!(last[1], &"0123456789abcdef"[..(TOTAL % 17) as usize]);
    assert_eq!(last[2], "end-marker");
}

/// `env` entries are merged over the parent's environment; a repeated name keeps the last.
pub async fn env_is_merged_over_the_parents<R: Runtime>(rt: R) {
    let parent_path = std::env::var("PATH").expect("PATH is set for tests");
    let spec = StdioCommand::new("sh")
        .args([
            "-c",
            r#"printf '%s|%s|%s' "$MCP_TEST_A" "$MCP_TEST_B" "$PATH""#,
        ])
        .env("MCP_TEST_A", "one")
        .env("MCP_TEST_B", "x")
        .env("MCP_TEST_B", "two");
    let (mut child, pipes) = spawn(&rt, &spec);
    let out = read_all(&rt, pipes.stdout).await;
    assert_eq!(out, format!("one|two|{parent_path}"));
    bounded(&rt, BOUND, "exit", child.wait()).await.unwrap();
}

/// `clear_env` leaves only the given entries.
pub async fn clear_env_leaves_only_the_given_entries<R: Runtime>(rt: R) {
    let mut spec = StdioCommand::new("/usr/bin/env").env("MCP_TEST_ONLY", "1");
    spec.clear_env = true;
    let (mut child, pipes) = spawn(&rt, &spec);
    assert_eq!(read_all(&rt, pipes.stdout).await, "MCP_TEST_ONLY=1\n");
    let status = bounded(&rt, BOUND, "exit", child.wait()).await.unwrap();
    assert!(status.success());
}

/// `cwd` is applied (`dir` must exist; it is compared canonicalized).
pub async fn cwd_is_applied<R: Runtime>(rt: R, dir: &Path) {
    let dir = dir.canonicalize().expect("the directory exists");
    let mut spec = StdioCommand::new("sh").args(["-c", "pwd -P"]);
    spec.cwd = Some(dir.clone());
    let (mut child, pipes) = spawn(&rt, &spec);
    assert_eq!(
        read_all(&rt, pipes.stdout).await.trim_end(),
        dir.to_str().expect("a UTF-8 test directory")
    );
    bounded(&rt, BOUND, "exit", child.wait()).await.unwrap();
}

/// Bytes written to stdin come back from a `cat`; closing stdin ends it.
pub async fn stdin_and_stdout_carry_bytes_and_closing_stdin_ends_a_cat<R: Runtime>(rt: R) {
    let (mut child, mut pipes) = spawn(&rt, &StdioCommand::new("cat"));
    pipes
        .stdin
        .write_all(b"{\"jsonrpc\":\"2.0\"}\n")
        .await
        .unwrap();
    pipes.stdin.flush().await.unwrap();
    drop(pipes.stdin);
    assert_eq!(read_all(&rt, pipes.stdout).await, "{\"jsonrpc\":\"2.0\"}\n");
    let status = bounded(&rt, BOUND, "cat exit after stdin closed", child.wait())
        .await
        .unwrap();
    assert!(status.success());
}

/// The parent-death signal follows the thread that forks: a raw spawn from a thread that then
/// ends is killed with it, while a [`StdioChild`] spawned from the same thread lives on (every
/// spawn runs on the one long-lived spawner thread).
pub async fn a_server_outlives_the_thread_that_spawned_it<R: Runtime>(rt: R) {
    let spawned = {
        let rt = rt.clone();
        std::thread::spawn(move || {
            let raw = rt
                .spawn_child(StdioCommand::new("sleep").args(["300"]).to_command())
                .expect("spawn");
            let server = spawn_sh(&rt, "exec sleep 300");
            (raw, server)
        })
        .join()
        .expect("the spawning thread")
    };
    let (raw, (mut server, _pipes)) = spawned;
    let raw_pid = raw.process.id().expect("pid");
    assert!(
        eventually(&rt, || is_dead(raw_pid)).await,
        "the raw child outlived its thread: no parent-death signal"
    );
    // The same death signal reached every child of that thread at once; the server is not one.
    assert!(is_alive(server.id()));
    assert_eq!(server.try_wait().unwrap(), None);
    drop(raw);
}
