#![cfg(feature = "http")]
//! The HTTP transport on async-std and on smol: the scripted-server bodies of
//! `mcp_driver::testing::http_suite` (the same bodies the tokio adapter runs), each run under
//! async-std's executor and under `smol::block_on`, bounded by a hang guard.

use std::future::Future;
use std::time::Duration;

#[cfg(feature = "async-std")]
use mcp_async_std::AsyncStdRuntime;
use mcp_async_std::SmolRuntime;
use mcp_driver::testing::http_suite;

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

macro_rules! scripted_tests {
    ($($name:ident),* $(,)?) => {
        #[cfg(feature = "async-std")]
        mod async_std_executor {
            use super::*;
            $(
                #[test]
                fn $name() {
                    on_async_std(stringify!($name), http_suite::$name(AsyncStdRuntime::async_std()));
                }
            )*
        }
        mod smol_executor {
            use super::*;
            $(
                #[test]
                fn $name() {
                    on_smol(stringify!($name), http_suite::$name(SmolRuntime::smol()));
                }
            )*
        }
    };
}

scripted_tests!(
    http_json_session_headers_delete,
    http_sse_notification_before_response,
    http_session_expired_reinitializes,
    http_resume_with_last_event_id,
    http_unauthorized_challenge,
    http_bad_url,
);
