//! The interop bodies (`mcp_tests::interop::{everything, python}`) on tokio, against the real
//! peers of `scripts/install-peers`: server-everything over stdio, Streamable HTTP and legacy
//! HTTP+SSE (one module per body, one test per transport: `everything_roots::legacy`), the
//! Python server over stdio. Run with `scripts/test`; without the peers every test fails
//! naming the script, unless `MCP_SKIP_INTEROP=1` (then each says it skipped). The HTTP tests
//! start server-everything's HTTP modes, which bind every interface: they also need
//! `MCP_NETNS=1` (inside `scripts/netns-run`).

#![cfg(target_os = "linux")]

use std::time::Duration;

use mcp_tests::interop::{Transport, era, everything, python};
use mcp_tests::peers::{peers, require_netns};
use mcp_tokio::TokioRuntime;

/// No test may take longer than this (server-everything starts in about a second).
const GUARD: Duration = Duration::from_secs(60);

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
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $transport() {
                    let Some(peers) = setup(Transport::$variant) else { return };
                    tokio::time::timeout(
                        GUARD,
                        everything::$name(TokioRuntime::current(), peers, Transport::$variant),
                    )
                    .await
                    .expect(concat!(stringify!($name), " over ", stringify!($transport), " hung"));
                }
            )+
        }
    )*};
}

everything_tests! {
    everything_handshake: stdio = Stdio, streamable = StreamableHttp, legacy = LegacySse,
        legacy_via_auto = LegacyViaAuto;
    everything_lists: stdio = Stdio, streamable = StreamableHttp, legacy = LegacySse;
    everything_tool_calls: stdio = Stdio, streamable = StreamableHttp, legacy = LegacySse;
    everything_progress: stdio = Stdio, streamable = StreamableHttp, legacy = LegacySse;
    everything_logging: stdio = Stdio, streamable = StreamableHttp, legacy = LegacySse;
    everything_sampling: stdio = Stdio, streamable = StreamableHttp, legacy = LegacySse,
        legacy_via_auto = LegacyViaAuto;
    everything_elicitation: stdio = Stdio, streamable = StreamableHttp, legacy = LegacySse;
    everything_roots: stdio = Stdio, streamable = StreamableHttp, legacy = LegacySse;
    everything_resources: stdio = Stdio, streamable = StreamableHttp, legacy = LegacySse;
    everything_prompts: stdio = Stdio, streamable = StreamableHttp, legacy = LegacySse;
    everything_completion: stdio = Stdio, streamable = StreamableHttp, legacy = LegacySse;
    everything_cancel: stdio = Stdio, streamable = StreamableHttp, legacy = LegacySse;
    everything_close: stdio = Stdio, streamable = StreamableHttp, legacy = LegacySse;
}

macro_rules! interop_tests {
    ($module:ident: $($name:ident),* $(,)?) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $name() {
            let Some(peers) = peers() else { return };
            tokio::time::timeout(GUARD, $module::$name(TokioRuntime::current(), peers))
                .await
                .expect(concat!(stringify!($name), " hung"));
        }
    )*};
}

interop_tests!(python:
    python_stdio_out_of_order,
    python_stdio_progress_floats,
    python_stdio_errors,
    python_stdio_close,
);

interop_tests!(era:
    era_python2_stdio_auto,
    era_python2_http_auto,
    era_python2_stdio_listen,
    era_python2_http_listen,
    era_ts2_stdio_listen,
    era_ts2_http_listen,
    era_ts2_stdio_auto,
    era_ts2_http_auto,
    era_everything_stdio_auto,
    era_everything_http_auto,
);

/// Tasks of 2025-11-25 over stdio and Streamable HTTP (`simulate-research-query` requires a
/// task): one module per body, one test per transport.
macro_rules! task_tests {
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            use super::*;
            use mcp_tests::interop::everything_tasks;

            async fn run(transport: Transport) {
                let Some(peers) = setup(transport) else { return };
                tokio::time::timeout(
                    GUARD,
                    everything_tasks::$name(TokioRuntime::current(), peers, transport),
                )
                .await
                .expect(concat!(stringify!($name), " hung"));
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn stdio() {
                run(Transport::Stdio).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn streamable() {
                run(Transport::StreamableHttp).await;
            }
        }
    )*};
}

/// Tasks in both directions over stdio and Streamable HTTP: a server task that needs input,
/// and the client running the server's task-augmented elicitation and sampling as its own
/// tasks.
mod everything_task_receiver {
    use super::*;
    use mcp_tests::interop::everything_task_receiver as bodies;

    macro_rules! task_tests {
        ($($name:ident),* $(,)?) => {$(
            mod $name {
                use super::*;

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn stdio() {
                    run(Transport::Stdio).await;
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn streamable() {
                    run(Transport::StreamableHttp).await;
                }

                async fn run(transport: Transport) {
                    let Some(peers) = setup(transport) else {
                        return;
                    };
                    tokio::time::timeout(
                        GUARD,
                        bodies::$name(TokioRuntime::current(), peers, transport),
                    )
                    .await
                    .expect(concat!(stringify!($name), " hung"));
                }
            }
        )*};
    }

    task_tests!(
        everything_task_input_required,
        everything_task_receiver_elicitation,
        everything_task_receiver_sampling,
    );
}
task_tests!(
    everything_task_call,
    everything_task_drop,
    everything_task_cancel,
    everything_task_cancel_handle,
    everything_task_list,
);
