//! The shared client test bodies (`mcp_driver::testing::suite`) on tokio, each bounded by a
//! timeout guard.

use std::path::PathBuf;
use std::time::Duration;

use mcp_driver::testing::suite;
use mcp_tokio::TokioRuntime;

const GUARD: Duration = Duration::from_secs(30);

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/stdio_server.py")
}

macro_rules! fake_tests {
    ($($name:ident),* $(,)?) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $name() {
            tokio::time::timeout(GUARD, suite::$name(TokioRuntime::current()))
                .await
                .expect(concat!(stringify!($name), " hung"));
        }
    )*};
}

macro_rules! stdio_tests {
    ($($name:ident),* $(,)?) => {$(
        #[cfg(target_os = "linux")]
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $name() {
            tokio::time::timeout(GUARD, suite::$name(TokioRuntime::current(), &script()))
                .await
                .expect(concat!(stringify!($name), " hung"));
        }
    )*};
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
);

/// Subscriptions in both eras (`mcp_driver::testing::listen_suite`).
mod listen {
    use super::GUARD;
    use mcp_driver::testing::listen_suite;
    use mcp_tokio::TokioRuntime;

    macro_rules! listen_tests {
        ($($name:ident),* $(,)?) => {$(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                tokio::time::timeout(GUARD, listen_suite::$name(TokioRuntime::current()))
                    .await
                    .expect(concat!(stringify!($name), " hung"));
            }
        )*};
    }

    listen_tests!(
        listen_routes_and_ends,
        listen_refused_unacknowledged_closed,
        listen_in_the_initialize_era,
        subscriptions_share_a_uri_in_the_initialize_era,
    );
}

/// The tasks extension (`mcp_driver::testing::task_suite`).
mod tasks {
    use super::GUARD;
    use mcp_driver::testing::task_suite;
    use mcp_tokio::TokioRuntime;

    macro_rules! task_tests {
        ($($name:ident),* $(,)?) => {$(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                tokio::time::timeout(GUARD, task_suite::$name(TokioRuntime::current()))
                    .await
                    .expect(concat!(stringify!($name), " hung"));
            }
        )*};
    }

    task_tests!(
        task_is_awaited_transparently,
        task_handle_cancel_fail_and_drop,
        task_without_the_extension_is_refused,
    );

    /// Tasks by id and status notifications (`mcp_driver::testing::task_list_suite`).
    mod by_id {
        use super::GUARD;
        use mcp_driver::testing::task_list_suite;
        use mcp_tokio::TokioRuntime;

        macro_rules! task_list_tests {
            ($($name:ident),* $(,)?) => {$(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    tokio::time::timeout(GUARD, task_list_suite::$name(TokioRuntime::current()))
                        .await
                        .expect(concat!(stringify!($name), " hung"));
                }
            )*};
        }

        task_list_tests!(
            tasks_listed_paged_and_by_id,
            tasks_not_offered_is_a_typed_error,
            status_notification_is_used_when_it_comes,
            cancel_handle_ends_the_wait_at_once,
        );
    }
}

/// The client as a task receiver (`mcp_driver::testing::task_receiver_suite`).
mod task_receiver {
    use super::GUARD;
    use mcp_driver::testing::task_receiver_suite;
    use mcp_tokio::TokioRuntime;

    macro_rules! receiver_tests {
        ($($name:ident),* $(,)?) => {$(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                tokio::time::timeout(GUARD, task_receiver_suite::$name(TokioRuntime::current()))
                    .await
                    .expect(concat!(stringify!($name), " hung"));
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

stdio_tests!(
    stdio_paging_call_banner,
    stdio_crash_mid_request,
    stdio_close_within_bound,
    stdio_drop_without_close,
    stdio_exit_on_the_era_probe_respawns,
    stdio_crash_at_start_is_not_respawned,
);

/// `mcp_tokio::Client::stdio` finds the runtime by itself.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn ambient_runtime_constructor() {
    let line = format!("python3 '{}'", script().display());
    let client = tokio::time::timeout(GUARD, mcp_tokio::Client::stdio(line))
        .await
        .expect("hung")
        .expect("connect");
    client.ping().await.expect("ping");
    tokio::time::timeout(GUARD, client.close())
        .await
        .expect("close hung");
}

/// A batch of answers that arrives in one read reaches its callers a slice at a time: on a
/// current-thread runtime the caller of the first answer runs (and could issue its next
/// request) while the last answers of the batch are still undecoded, and every call still
/// gets its own answer exactly once.
#[tokio::test]
async fn a_batch_of_answers_reaches_callers_a_slice_at_a_time() {
    use mcp_driver::testing::FakeServer;
    use mcp_tokio::mcp_proto::types::{CallToolResult, ContentBlock};
    use serde_json::json;
    use std::future::Future;
    use std::task::Poll;

    /// Polls `f` once with the test's own waker.
    async fn poll_once<F: Future + Unpin>(f: &mut F) -> Poll<F::Output> {
        std::future::poll_fn(|cx| Poll::Ready(std::pin::Pin::new(&mut *f).poll(cx))).await
    }

    const N: usize = 256;
    tokio::time::timeout(GUARD, async {
        let rt = TokioRuntime::current();
        let (server, io) = FakeServer::start(&rt);
        let client = mcp_tokio::ClientBuilder::new()
            .runtime(rt)
            .over(io.reader, io.writer)
            .await
            .expect("connect");
        let mut calls: Vec<_> = (0..N)
            .map(|i| Box::pin(client.call_tool("echo", json!({ "i": i }))))
            .collect();
        for c in &mut calls {
            assert!(poll_once(c).await.is_pending());
        }
        let mut answers = Vec::with_capacity(N);
        for _ in 0..N {
            let r = server.recv_method("tools/call").await.expect("a request");
            let text = r["params"]["arguments"]["i"].to_string();
            let answer = json!({"jsonrpc": "2.0", "id": r["id"], "result": {
                "content": [{"type": "text", "text": text}]
            }});
            answers.push(answer.to_string());
        }
        // ~25 KB in one write: the driver reads it whole.
        server.send_line(&answers.join("\n"));
        let text = |r: CallToolResult| match r.content.first() {
            Some(ContentBlock::Text(t)) => t.text.clone(),
            other => panic!("not a text block: {other:?}"),
        };
        assert_eq!(text(calls[0].as_mut().await.expect("call 0")), "0");
        assert!(
            poll_once(&mut calls[N - 1]).await.is_pending(),
            "the whole batch was decoded before the first caller ran"
        );
        for (i, c) in calls.iter_mut().enumerate().skip(1) {
            assert_eq!(text(c.as_mut().await.expect("a call")), i.to_string());
        }
        client.close().await;
    })
    .await
    .expect("hung");
}

/// Calls past the in-flight cap (`mcp_driver::testing::pending_suite`).
mod past_the_cap {
    use super::GUARD;
    use mcp_driver::testing::pending_suite;
    use mcp_tokio::TokioRuntime;

    macro_rules! pending_tests {
        ($($name:ident),* $(,)?) => {$(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                tokio::time::timeout(GUARD, pending_suite::$name(TokioRuntime::current()))
                    .await
                    .expect(concat!(stringify!($name), " hung"));
            }
        )*};
    }

    pending_tests!(
        calls_past_the_cap_wait_their_turn,
        a_waiting_call_times_out,
        a_dropped_waiting_call_frees_its_place,
    );
}
