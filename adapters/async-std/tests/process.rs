//! Stdio children on async-process (async-std and smol): process groups (drop, SIGTERM,
//! SIGKILL, reaping), pipes and environment. The bodies are
//! `mcp_driver::testing::process`'s, shared with every runtime; what is this adapter's own
//! (smol alone, dropping a child on a plain thread) is written here.

#![cfg(target_os = "linux")]

use futures_util::io::BufReader;
use mcp_async_std::{AsyncStdRuntime, SmolRuntime};
use mcp_driver::testing::process::{
    self as checks, WITH_GRANDCHILD, eventually, is_dead, is_reaped, proc_state, read_line,
    spawn_sh,
};

macro_rules! on_async_std {
    ($($name:ident),* $(,)?) => {$(
        #[async_std::test]
        async fn $name() {
            checks::$name(AsyncStdRuntime::default()).await;
        }
    )*};
}

on_async_std!(
    dropping_the_child_kills_the_group_and_reaps_it,
    dropping_the_guard_and_raw_child_kills_the_group,
    kill_on_drop_alone_misses_the_grandchild,
    sigterm_to_the_group_reaches_the_grandchild,
    a_child_that_ignores_sigterm_dies_by_sigkill,
    a_normal_exit_is_reaped_and_the_empty_group_is_gone,
    the_raw_child_reports_no_pid_after_reaping,
    ten_mib_of_stderr_is_drained_and_only_the_tail_is_kept,
    env_is_merged_over_the_parents,
    clear_env_leaves_only_the_given_entries,
    stdin_and_stdout_carry_bytes_and_closing_stdin_ends_a_cat,
    a_server_outlives_the_thread_that_spawned_it,
);

#[async_std::test]
async fn a_missing_program_is_not_found() {
    checks::a_missing_program_is_not_found(&AsyncStdRuntime::default());
}

#[async_std::test]
async fn cwd_is_applied() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("mcp-async-std-cwd-test");
    std::fs::create_dir_all(&dir).unwrap();
    checks::cwd_is_applied(AsyncStdRuntime::default(), &dir).await;
}

/// Under smol alone (no async-std executor).
#[test]
fn dropping_the_child_on_smol_kills_the_group_and_reaps_it() {
    smol::block_on(checks::dropping_the_child_kills_the_group_and_reaps_it(
        SmolRuntime::smol(),
    ));
}

#[test]
fn dropping_on_a_plain_thread_does_not_panic_and_still_reaps() {
    let rt = AsyncStdRuntime::default();
    let (child, grandchild, pipes) = async_std::task::block_on(async {
        let (child, pipes) = spawn_sh(&rt, WITH_GRANDCHILD);
        let mut stdout = BufReader::new(pipes.stdout);
        let grandchild: u32 = read_line(&rt, &mut stdout).await.parse().unwrap();
        (child, grandchild, stdout)
    });
    let pid = child.id();
    // A plain thread, not an executor thread: `Runtime::spawn` must not panic here.
    std::thread::spawn(move || drop(child))
        .join()
        .expect("drop panicked");
    drop(pipes);
    async_std::task::block_on(async {
        assert!(eventually(&rt, || is_dead(grandchild)).await);
        assert!(
            eventually(&rt, || is_reaped(pid)).await,
            "state {:?}",
            proc_state(pid)
        );
    });
}
