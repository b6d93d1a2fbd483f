//! The interop bodies (`mcp_tests::interop::{everything, python}`) on tokio, against the real
//! peers of `scripts/install-peers` over stdio. Run with `scripts/test`; without the peers
//! every test fails naming the script, unless `MCP_SKIP_INTEROP=1` (then each says it skipped).

#![cfg(target_os = "linux")]

use std::time::Duration;

use mcp_tests::interop::{era, everything, python};
use mcp_tests::peers::peers;
use mcp_tokio::TokioRuntime;

/// No test may take longer than this (server-everything starts in about a second).
const GUARD: Duration = Duration::from_secs(60);

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

interop_tests!(everything:
    everything_stdio_handshake,
    everything_stdio_lists,
    everything_stdio_tool_calls,
    everything_stdio_progress,
    everything_stdio_logging,
    everything_stdio_sampling,
    everything_stdio_elicitation,
    everything_stdio_roots,
    everything_stdio_resources,
    everything_stdio_prompts,
    everything_stdio_completion,
    everything_stdio_cancel,
    everything_stdio_close,
);

interop_tests!(python:
    python_stdio_out_of_order,
    python_stdio_progress_floats,
    python_stdio_errors,
    python_stdio_close,
);

interop_tests!(era:
    era_python2_stdio_auto,
    era_python2_http_auto,
    era_ts2_stdio_auto,
    era_ts2_http_auto,
    era_everything_stdio_auto,
    era_everything_http_auto,
);
