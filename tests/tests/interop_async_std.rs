//! The same interop bodies and fault-matrix rows as `interop_tokio.rs` and `fault_matrix.rs`,
//! on the async-std adapter: one test body, both runtimes (`mcp_async_std::AsyncStdRuntime`
//! under async-std's executor). Run with `scripts/test`; without the peers the interop tests
//! fail naming the script, unless `MCP_SKIP_INTEROP=1`.

#![cfg(target_os = "linux")]

use std::future::Future;
use std::path::PathBuf;
use std::time::Duration;

use mcp_async_std::AsyncStdRuntime;
use mcp_tests::interop::{Transport, everything, exhaustion, faults, faults_http, python};
use mcp_tests::peers::{peers, require_netns};

const GUARD: Duration = Duration::from_secs(60);

/// Runs `body` under async-std's `block_on`, bounded by [`GUARD`]. The body is boxed and run
/// on a thread with a roomy stack: the interop futures are large in debug builds, and
/// `block_on` keeps a future on the stack of the test thread.
fn on_async_std(what: &str, body: impl Future<Output = ()> + Send + 'static) {
    let what = what.to_owned();
    std::thread::Builder::new()
        .stack_size(32 * 1024 * 1024)
        .spawn(move || {
            async_std::task::block_on(async_std::future::timeout(GUARD, Box::pin(body)))
                .unwrap_or_else(|_| panic!("{what} hung on async-std"));
        })
        .expect("spawn the test thread")
        .join()
        .unwrap_or_else(|e| std::panic::resume_unwind(e));
}

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_fault_server"))
}

/// The peers, and for an HTTP transport the namespace; `None` when skipping.
fn setup(transport: Transport) -> Option<mcp_tests::peers::Peers> {
    let peers = peers()?;
    if transport.is_http() && !require_netns() {
        return None;
    }
    Some(peers)
}

macro_rules! everything_tests {
    ($($name:ident: $($transport:ident = $variant:ident),+;)*) => {$(
        mod $name {
            use super::*;
            $(
                #[test]
                fn $transport() {
                    let Some(peers) = setup(Transport::$variant) else { return };
                    on_async_std(
                        concat!(stringify!($name), " over ", stringify!($transport)),
                        everything::$name(AsyncStdRuntime::async_std(), peers, Transport::$variant),
                    );
                }
            )+
        }
    )*};
}

everything_tests! {
    everything_handshake: stdio = Stdio, streamable = StreamableHttp, legacy = LegacySse;
    everything_lists: stdio = Stdio, streamable = StreamableHttp, legacy = LegacySse;
    everything_tool_calls: stdio = Stdio, streamable = StreamableHttp, legacy = LegacySse;
    everything_progress: stdio = Stdio, streamable = StreamableHttp, legacy = LegacySse;
    everything_logging: stdio = Stdio, streamable = StreamableHttp, legacy = LegacySse;
    everything_sampling: stdio = Stdio, streamable = StreamableHttp, legacy = LegacySse;
    everything_elicitation: stdio = Stdio, streamable = StreamableHttp, legacy = LegacySse;
    everything_roots: stdio = Stdio, streamable = StreamableHttp, legacy = LegacySse;
    everything_resources: stdio = Stdio, streamable = StreamableHttp, legacy = LegacySse;
    everything_prompts: stdio = Stdio, streamable = StreamableHttp, legacy = LegacySse;
    everything_completion: stdio = Stdio, streamable = StreamableHttp, legacy = LegacySse;
    everything_cancel: stdio = Stdio, streamable = StreamableHttp, legacy = LegacySse;
    everything_close: stdio = Stdio, streamable = StreamableHttp, legacy = LegacySse;
}

/// Tasks of 2025-11-25 over stdio and Streamable HTTP, as `interop_tokio.rs` runs them.
macro_rules! task_tests {
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            use super::*;
            use mcp_tests::interop::everything_tasks;

            fn run(transport: Transport) {
                let Some(peers) = setup(transport) else { return };
                on_async_std(
                    concat!(stringify!($name), " (tasks)"),
                    everything_tasks::$name(AsyncStdRuntime::async_std(), peers, transport),
                );
            }

            #[test]
            fn stdio() {
                run(Transport::Stdio);
            }

            #[test]
            fn streamable() {
                run(Transport::StreamableHttp);
            }
        }
    )*};
}

task_tests!(
    everything_task_call,
    everything_task_drop,
    everything_task_cancel,
    everything_task_cancel_handle,
    everything_task_list,
);

macro_rules! interop_tests {
    ($module:ident: $($name:ident),* $(,)?) => {$(
        #[test]
        fn $name() {
            let Some(peers) = peers() else { return };
            on_async_std(stringify!($name), $module::$name(AsyncStdRuntime::async_std(), peers));
        }
    )*};
}

macro_rules! fault_rows {
    ($module:ident: $($name:ident),* $(,)?) => {$(
        #[test]
        fn $name() {
            on_async_std(stringify!($name), $module::$name(AsyncStdRuntime::async_std(), bin()));
        }
    )*};
}

interop_tests!(python:
    python_stdio_out_of_order,
    python_stdio_progress_floats,
    python_stdio_errors,
    python_stdio_close,
);

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
);

fault_rows!(exhaustion:
    exhaust_endless_pages,
    exhaust_undecodable_answers,
    exhaust_null_id_error,
    exhaust_ping_flood,
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
