//! The shared client test bodies (`mcp_driver::testing::suite`), each run twice: under
//! async-std's executor with [`AsyncStdRuntime::async_std`], and under `smol::block_on` with
//! [`SmolRuntime::smol`]. Each is bounded by a timeout guard. Without the `async-std`
//! feature only the smol half runs.

use std::future::Future;
use std::path::PathBuf;
use std::time::Duration;

#[cfg(feature = "async-std")]
use mcp_async_std::AsyncStdRuntime;
use mcp_async_std::SmolRuntime;
use mcp_driver::testing::suite;

const GUARD: Duration = Duration::from_secs(30);

/// The Python fixture server of the tokio adapter's tests: one fixture, both runtimes.
fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tokio/tests/fixtures/stdio_server.py")
}

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

macro_rules! fake_tests {
    ($($name:ident),* $(,)?) => {
        #[cfg(feature = "async-std")]
        mod async_std_executor {
            use super::*;
            $(
                #[test]
                fn $name() {
                    on_async_std(stringify!($name), suite::$name(AsyncStdRuntime::async_std()));
                }
            )*
        }
        mod smol_executor {
            use super::*;
            $(
                #[test]
                fn $name() {
                    on_smol(stringify!($name), suite::$name(SmolRuntime::smol()));
                }
            )*
        }
    };
}

macro_rules! stdio_tests {
    ($($name:ident),* $(,)?) => {
        #[cfg(all(target_os = "linux", feature = "async-std"))]
        mod async_std_stdio {
            use super::*;
            $(
                #[test]
                fn $name() {
                    on_async_std(
                        stringify!($name),
                        suite::$name(AsyncStdRuntime::async_std(), &script()),
                    );
                }
            )*
        }
        #[cfg(target_os = "linux")]
        mod smol_stdio {
            use super::*;
            $(
                #[test]
                fn $name() {
                    on_smol(stringify!($name), suite::$name(SmolRuntime::smol(), &script()));
                }
            )*
        }
    };
}

fake_tests!(
    output_schema_is_checked,
    output_schema_opt_out,
    output_schemas_dropped_on_list_changed,
    typed_handlers_answer,
    cancel_handle_cancels_with_reason,
    handshake_and_getters,
    handshake_rejected,
    paging,
    call_tool,
    timeout_sends_cancelled,
    cancel_on_drop,
    progress,
    notifications_and_lag,
    handlers_answer,
    undeclared_requests_refused,
    garbage_is_skipped,
    unreadable_result_is_an_invalid_response,
    max_message_size_bounds_lines,
    eof_fails_pending,
    close_fails_pending,
    subscribe_and_unsubscribe,
    stdio_spawn_error,
    listen_routes_and_ends,
    listen_refused_unacknowledged_closed,
    listen_in_the_initialize_era,
    subscriptions_share_a_uri_in_the_initialize_era,
    task_is_awaited_transparently,
    task_handle_cancel_fail_and_drop,
    task_without_the_extension_is_refused,
    tasks_listed_paged_and_by_id,
    tasks_not_offered_is_a_typed_error,
    status_notification_is_used_when_it_comes,
    cancel_handle_ends_the_wait_at_once,
    calls_past_the_cap_wait_their_turn,
    a_waiting_call_times_out,
    a_dropped_waiting_call_frees_its_place,
);

stdio_tests!(
    stdio_paging_call_banner,
    stdio_crash_mid_request,
    stdio_close_within_bound,
    stdio_drop_without_close,
    stdio_exit_on_the_era_probe_respawns,
    stdio_crash_at_start_is_not_respawned,
);

/// `mcp_async_std::Client::stdio` needs no runtime argument (the default runtime).
#[cfg(target_os = "linux")]
#[async_std::test]
async fn ambient_runtime_constructor() {
    let line = format!("python3 '{}'", script().display());
    let client = async_std::future::timeout(GUARD, mcp_async_std::Client::stdio(line))
        .await
        .expect("hung")
        .expect("connect");
    client.ping().await.expect("ping");
    async_std::future::timeout(GUARD, client.close())
        .await
        .expect("close hung");
}

/// smol alone: `smol::block_on` + `smol::spawn`, a stdio handshake, a call, `close()`, and
/// the server reaped (gone from `/proc`, not a zombie).
#[cfg(target_os = "linux")]
#[test]
fn smol_stdio_handshake_call_close_reaps() {
    on_smol("smol stdio round trip", async {
        let client = mcp_async_std::ClientBuilder::new()
            .runtime(SmolRuntime::smol())
            .name("fixture")
            .stdio(format!("python3 '{}'", script().display()))
            .await
            .expect("connect");
        assert_eq!(client.server_info().name, "py-fixture");
        let r = client
            .call_tool("echo", serde_json::json!({"text": "on smol"}))
            .await
            .expect("echo");
        let text = serde_json::to_value(&r.content[0]).expect("content");
        assert_eq!(text["text"], "on smol");
        let pid = client.call_tool("pid", ()).await.expect("pid");
        let pid: u32 = serde_json::to_value(&pid.content[0]).expect("content")["text"]
            .as_str()
            .expect("text")
            .parse()
            .expect("a pid");
        assert!(std::path::Path::new(&format!("/proc/{pid}")).exists());
        client.close().await;
        assert!(
            !std::path::Path::new(&format!("/proc/{pid}")).exists(),
            "the server was not reaped by close()"
        );
        assert!(matches!(
            client.state(),
            mcp_async_std::ConnectionState::Closed(_)
        ));
    });
}

/// The client as a task receiver (`mcp_driver::testing::task_receiver_suite`), under both
/// executors.
mod task_receiver {
    use super::*;
    use mcp_driver::testing::task_receiver_suite as bodies;

    macro_rules! receiver_tests {
        ($($name:ident),* $(,)?) => {$(
            mod $name {
                use super::*;

                #[cfg(feature = "async-std")]
                #[test]
                fn async_std() {
                    on_async_std(stringify!($name), bodies::$name(AsyncStdRuntime::async_std()));
                }

                #[test]
                fn smol() {
                    on_smol(stringify!($name), bodies::$name(SmolRuntime::smol()));
                }
            }
        )*};
    }

    receiver_tests!(
        task_augmented_sampling_is_answered_through_tasks_result,
        tasks_cancel_drops_the_handler,
        without_the_opt_in_tasks_are_ignored,
        the_policy_bounds_the_task_table,
        host_task_queries_take_the_tasks_of_the_handlers,
    );
}
