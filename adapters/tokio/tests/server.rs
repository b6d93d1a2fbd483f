//! The server driver against the crate's own client over an in-memory pipe pair
//! (`mcp_driver::testing::server_suite`) on tokio, each bounded by an anti-hang guard.

use std::time::Duration;

use mcp_driver::testing::server_suite;
use mcp_tokio::TokioRuntime;

const GUARD: Duration = Duration::from_secs(30);

macro_rules! server_tests {
    ($($name:ident),* $(,)?) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $name() {
            tokio::time::timeout(GUARD, server_suite::$name(TokioRuntime::current()))
                .await
                .expect("the test finished within the guard");
        }
    )*};
}

server_tests!(
    negotiated_handshake_tools_list_and_ping_both_ways,
    call_with_progress,
    sampling_from_a_handler,
    cancellation_reaches_the_handler,
    notifications_both_ways,
    piped_requests_are_answered_before_the_end_of_input,
    progress_is_flushed_apart_from_the_answer,
    the_context_carries_the_2026_envelope,
    deferred_initialize_over_stdio,
);

mod listen {
    use super::*;
    use mcp_driver::testing::server_listen_suite as server_suite;

    server_tests!(listens_receive_the_hosts_notifications);
}
