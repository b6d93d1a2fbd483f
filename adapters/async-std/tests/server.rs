//! The server driver against the crate's own client over an in-memory pipe pair
//! (`mcp_driver::testing::server_suite`), on async-std's executor and under `smol::block_on`,
//! each bounded by an anti-hang guard.

use std::future::Future;
use std::time::Duration;

use mcp_async_std::{AsyncStdRuntime, SmolRuntime};
use mcp_driver::testing::server_suite;

const GUARD: Duration = Duration::from_secs(30);

/// Runs `body` under async-std's `block_on`, failing if it takes longer than [`GUARD`].
#[cfg(feature = "async-std")]
fn on_async_std(what: &str, body: impl Future<Output = ()>) {
    async_std::task::block_on(async_std::future::timeout(GUARD, body))
        .unwrap_or_else(|_| panic!("{what} hung on async-std"));
}

/// Runs `body` under `smol::block_on`, failing if it takes longer than [`GUARD`].
fn on_smol(what: &str, body: impl Future<Output = ()>) {
    let guard = async {
        smol::Timer::after(GUARD).await;
        panic!("{what} hung on smol");
    };
    smol::block_on(smol::future::or(body, guard));
}

macro_rules! server_tests {
    ($($name:ident),* $(,)?) => {
        #[cfg(feature = "async-std")]
        mod async_std_executor {
            use super::*;
            $(
                #[test]
                fn $name() {
                    on_async_std(stringify!($name), server_suite::$name(AsyncStdRuntime::async_std()));
                }
            )*
        }
        mod smol_executor {
            use super::*;
            $(
                #[test]
                fn $name() {
                    on_smol(stringify!($name), server_suite::$name(SmolRuntime::smol()));
                }
            )*
        }
    };
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
