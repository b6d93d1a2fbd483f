//! Process-group behaviour of stdio children on async-process: drop, SIGTERM, SIGKILL,
//! reaping. The same checks as `mcp-tokio`'s `tests/process_group.rs`.

#![cfg(target_os = "linux")]

mod common;

use std::time::Duration;

use common::*;
use futures_util::io::BufReader;
use mcp_async_std::{AsyncStdRuntime, SmolRuntime};
use mcp_driver::Runtime as _;
use mcp_driver::process::{ProcessGroupGuard, Signal, SignalOutcome, StdioCommand, describe_exit};

/// A child (`sh`) with a grandchild (`sleep`) in the same group; prints the grandchild's pid.
const WITH_GRANDCHILD: &str = "sleep 300 & echo $!; sleep 300";

#[async_std::test]
async fn dropping_the_child_kills_the_group_and_reaps_the_child() {
    let (child, pipes) = spawn_sh(WITH_GRANDCHILD);
    let pid = child.id();
    let mut stdout = BufReader::new(pipes.stdout);
    let grandchild: u32 = read_line(&mut stdout)
        .await
        .parse()
        .expect("grandchild pid");
    assert!(is_alive(pid) && is_alive(grandchild));

    drop(child);
    drop(stdout);
    drop(pipes.stdin);

    assert!(
        eventually(|| is_dead(grandchild)).await,
        "grandchild survived the drop"
    );
    assert!(
        eventually(|| is_reaped(pid)).await,
        "child not reaped: state {:?}",
        proc_state(pid)
    );
}

/// The same under smol alone.
#[test]
fn dropping_the_child_on_smol_kills_the_group_and_reaps_the_child() {
    smol::block_on(async {
        let spec = StdioCommand::new("sh").args(["-c", WITH_GRANDCHILD]);
        let (child, pipes) = mcp_driver::process::StdioChild::spawn(
            &SmolRuntime::smol(),
            &spec,
            "smol-server",
            Default::default(),
        )
        .expect("spawn");
        let pid = child.id();
        let mut stdout = BufReader::new(pipes.stdout);
        let grandchild: u32 = read_line(&mut stdout).await.parse().unwrap();
        drop(child);
        assert!(
            eventually(|| is_dead(grandchild)).await,
            "grandchild survived"
        );
        assert!(eventually(|| is_reaped(pid)).await, "{:?}", proc_state(pid));
    });
}

#[async_std::test]
async fn dropping_the_guard_and_raw_child_kills_the_group() {
    let rt = AsyncStdRuntime::default();
    let parts = rt
        .spawn_child(
            StdioCommand::new("sh")
                .args(["-c", WITH_GRANDCHILD])
                .to_command(),
        )
        .unwrap();
    let pid = parts.process.id().unwrap();
    let guard = ProcessGroupGuard::new(pid).unwrap();
    let mut stdout = BufReader::new(parts.stdout);
    let grandchild: u32 = read_line(&mut stdout).await.parse().unwrap();

    drop(guard);
    drop(parts.process);

    assert!(
        eventually(|| is_dead(grandchild)).await,
        "grandchild survived"
    );
    // async-process's reaper collects the dropped child in the background.
    assert!(
        eventually(|| is_reaped(pid)).await,
        "child not reaped: state {:?}",
        proc_state(pid)
    );
}

/// Why the guard exists: async-process's `kill_on_drop` alone leaves the grandchild running.
#[async_std::test]
async fn kill_on_drop_alone_misses_the_grandchild() {
    let rt = AsyncStdRuntime::default();
    let parts = rt
        .spawn_child(
            StdioCommand::new("sh")
                .args(["-c", WITH_GRANDCHILD])
                .to_command(),
        )
        .unwrap();
    let pid = parts.process.id().unwrap();
    let mut stdout = BufReader::new(parts.stdout);
    let grandchild: u32 = read_line(&mut stdout).await.parse().unwrap();

    drop(parts.process);
    assert!(
        eventually(|| is_dead(pid)).await,
        "kill_on_drop did not kill the child"
    );
    sleep(Duration::from_millis(200)).await;
    let survived = is_alive(grandchild);
    // Clean up before asserting, so a failure leaves nothing behind.
    let _ = ProcessGroupGuard::new(pid).map(drop);
    assert!(survived, "expected the grandchild to outlive kill_on_drop");
    assert!(eventually(|| is_dead(grandchild)).await);
}

#[async_std::test]
async fn sigterm_to_the_group_reaches_the_grandchild() {
    let (mut child, pipes) = spawn_sh("sleep 300 & echo $!; wait");
    let mut stdout = BufReader::new(pipes.stdout);
    let grandchild: u32 = read_line(&mut stdout).await.parse().unwrap();

    assert_eq!(child.signal(Signal::Term).unwrap(), SignalOutcome::Sent);
    let status = bounded(BOUND, "exit after SIGTERM", child.wait())
        .await
        .unwrap();
    assert_eq!(describe_exit(status), "killed by signal 15 (SIGTERM)");
    assert_eq!(child.status(), Some(status));
    assert!(
        eventually(|| is_dead(grandchild)).await,
        "grandchild ignored the group SIGTERM"
    );
    assert!(is_reaped(child.id()));
}

#[async_std::test]
async fn a_child_that_ignores_sigterm_dies_by_sigkill() {
    let (mut child, pipes) = spawn_sh("trap '' TERM; echo ready; while :; do sleep 0.05; done");
    let mut stdout = BufReader::new(pipes.stdout);
    assert_eq!(read_line(&mut stdout).await, "ready");

    assert_eq!(child.signal(Signal::Term).unwrap(), SignalOutcome::Sent);
    let waited = within(Duration::from_millis(500), child.wait()).await;
    assert!(
        waited.is_none(),
        "the child should have ignored SIGTERM: {waited:?}"
    );
    // The abandoned wait must not have lost the exit registration or reaped anything.
    assert_eq!(child.try_wait().unwrap(), None);

    assert_eq!(child.signal(Signal::Kill).unwrap(), SignalOutcome::Sent);
    let status = bounded(BOUND, "exit after SIGKILL", child.wait())
        .await
        .unwrap();
    assert_eq!(describe_exit(status), "killed by signal 9 (SIGKILL)");
    assert!(is_reaped(child.id()));
}

#[async_std::test]
async fn a_normal_exit_is_reaped_and_the_empty_group_is_already_gone() {
    let (mut child, _pipes) = spawn_sh("echo oops >&2; exit 3");
    let status = bounded(BOUND, "exit", child.wait()).await.unwrap();
    assert_eq!(describe_exit(status), "exited with status 3");
    assert!(is_reaped(child.id()));
    assert_eq!(
        child.signal(Signal::Term).unwrap(),
        SignalOutcome::AlreadyGone
    );
    assert!(eventually(|| child.last_stderr_lines(5) == ["oops"]).await);
    // Waiting again returns the recorded status.
    assert_eq!(child.wait().await.unwrap(), status);
    assert_eq!(child.try_wait().unwrap(), Some(status));
}

/// The raw `ChildProcess`: after reaping, `id()` is `None` and the status sticks.
#[async_std::test]
async fn the_raw_child_reports_none_after_reaping() {
    let parts = AsyncStdRuntime::default()
        .spawn_child(StdioCommand::new("sh").args(["-c", "exit 4"]).to_command())
        .unwrap();
    let mut process = parts.process;
    assert!(process.id().is_some());
    let status = bounded(
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

#[test]
fn dropping_on_a_plain_thread_does_not_panic_and_still_reaps() {
    let (child, grandchild, pipes) = async_std::task::block_on(async {
        let (child, pipes) = spawn_sh(WITH_GRANDCHILD);
        let mut stdout = BufReader::new(pipes.stdout);
        let grandchild: u32 = read_line(&mut stdout).await.parse().unwrap();
        (child, grandchild, stdout)
    });
    let pid = child.id();
    // A plain thread, not an executor thread: `Runtime::spawn` must not panic here.
    std::thread::spawn(move || drop(child))
        .join()
        .expect("drop panicked");
    drop(pipes);
    async_std::task::block_on(async {
        assert!(eventually(|| is_dead(grandchild)).await);
        assert!(
            eventually(|| is_reaped(pid)).await,
            "state {:?}",
            proc_state(pid)
        );
    });
}

#[async_std::test]
async fn a_missing_program_is_not_found() {
    let err = mcp_driver::process::StdioChild::spawn(
        &AsyncStdRuntime::default(),
        &StdioCommand::new("mcp-no-such-program-here"),
        "missing",
        Default::default(),
    )
    .unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
}
