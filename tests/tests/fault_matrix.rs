//! The stdio rows of the fault matrix (`mcp_tests::interop::faults`) on tokio, against the
//! `fault_server` binary of this crate. Each row asserts its typed outcome within a time
//! bound and that no process of the server is left; the whole row is bounded by a guard.
//! The heap side of the 64 MiB line row lives in `memory_bounded.rs` (its own allocator).

#![cfg(target_os = "linux")]

use std::path::PathBuf;
use std::time::Duration;

use mcp_tests::interop::faults;
use mcp_tokio::TokioRuntime;

const GUARD: Duration = Duration::from_secs(60);

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_fault_server"))
}

macro_rules! fault_rows {
    ($($name:ident),* $(,)?) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $name() {
            tokio::time::timeout(GUARD, faults::$name(TokioRuntime::current(), bin()))
                .await
                .expect(concat!(stringify!($name), " hung"));
        }
    )*};
}

fault_rows!(
    fault_crash_mid_request,
    fault_garbage,
    fault_huge_line,
    fault_silent,
    fault_slow,
    fault_twice,
    fault_unknown_ids,
    fault_close_stdout,
    fault_grandchild_holds_stdout,
    fault_grandchild_stay,
    fault_ignore_sigterm,
    fault_stderr_flood,
    fault_strict_handshake_auto,
    fault_echo_auto,
);
