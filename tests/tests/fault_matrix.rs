//! The fault matrix on tokio, against the `fault_server` binary of this crate: the stdio rows
//! (`mcp_tests::interop::faults`) and the HTTP rows (`mcp_tests::interop::faults_http`,
//! `fault_server --http` on 127.0.0.1). Each row asserts its typed outcome within a time
//! bound and that no process of the server is left; the whole row is bounded by a guard.
//! The heap side of the 64 MiB line and 1 GiB body rows lives in `memory_bounded.rs` (its own
//! allocator).

#![cfg(target_os = "linux")]

use std::path::PathBuf;
use std::time::Duration;

use mcp_tests::interop::{exhaustion, faults, faults_http};
use mcp_tokio::TokioRuntime;

const GUARD: Duration = Duration::from_secs(60);

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_fault_server"))
}

macro_rules! fault_rows {
    ($module:ident: $($name:ident),* $(,)?) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $name() {
            tokio::time::timeout(GUARD, $module::$name(TokioRuntime::current(), bin()))
                .await
                .expect(concat!(stringify!($name), " hung"));
        }
    )*};
}

fault_rows!(faults:
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

fault_rows!(faults_http:
    fault_http_session_expired,
    fault_http_status_500,
    fault_http_sse_drop,
    fault_http_sse_replay,
    fault_http_silent_stream,
    fault_http_huge_body,
    fault_http_huge_event,
    fault_http_huge_error,
);

fault_rows!(exhaustion:
    exhaust_endless_pages,
    exhaust_undecodable_answers,
    exhaust_null_id_error,
    exhaust_ping_flood,
);
