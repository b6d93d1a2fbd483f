//! Test bodies for the client as a task receiver (protocol 2025-11-25,
//! [`ClientBuilder::task_receiver`]), generic over the runtime (each adapter's tests run them;
//! the caller bounds each with a timeout).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use mcp_proto::types::CreateMessageResult;
use serde_json::json;
use tokio::sync::Notify;

use super::suite::{connect_fake, eventually};
use crate::{ClientBuilder, Runtime};

const RELATED: &str = "io.modelcontextprotocol/related-task";

fn sampling_params(text: &str) -> serde_json::Value {
    json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
        "maxTokens": 5,
        "task": {"ttl": 60000}
    })
}

/// A task-augmented `sampling/createMessage` is answered at once with a task; the handler
/// runs meanwhile; `tasks/result` is held until it answers, then carries its result (with the
/// related-task `_meta`); `tasks/get` follows the status; a status notification comes.
pub async fn task_augmented_sampling_is_answered_through_tasks_result<R: Runtime>(rt: R) {
    let release = Arc::new(Notify::new());
    let gate = release.clone();
    let builder = ClientBuilder::new()
        .on_sampling(move |params| {
            let gate = gate.clone();
            async move {
                gate.notified().await;
                let text = params.last_user_text().unwrap_or_default();
                Ok(CreateMessageResult::text(
                    "fake-model",
                    format!("echo {text}"),
                ))
            }
        })
        .task_receiver(true);
    let (server, _client) = connect_fake(&rt, builder).await;
    let caps = &server.received_method("initialize")[0]["params"]["capabilities"];
    assert_eq!(
        caps["tasks"],
        json!({"list": {}, "cancel": {}, "requests": {"sampling": {"createMessage": {}}}}),
        "{caps}"
    );

    let id = server.request("sampling/createMessage", sampling_params("hello"));
    let created = server.recv_response().await.expect("the task");
    assert_eq!(created["id"], id);
    let task = &created["result"]["task"];
    assert_eq!(task["status"], "working", "{created}");
    assert_eq!(task["ttl"], 60000);
    let task_id = task["taskId"].as_str().expect("a task id").to_owned();

    server.request("tasks/get", json!({"taskId": task_id}));
    let got = server.recv_response().await.expect("tasks/get");
    assert_eq!(got["result"]["status"], "working", "{got}");

    // tasks/result is held: the tasks/list sent after it is answered first.
    let result_id = server.request("tasks/result", json!({"taskId": task_id}));
    let list_id = server.request("tasks/list", json!({}));
    let list = server.recv_response().await.expect("tasks/list");
    assert_eq!(list["id"], list_id, "tasks/result must wait: {list}");
    assert_eq!(list["result"]["tasks"][0]["taskId"], task_id.as_str());

    release.notify_one();
    let result = server.recv_response().await.expect("tasks/result");
    assert_eq!(result["id"], result_id);
    assert_eq!(result["result"]["model"], "fake-model", "{result}");
    assert_eq!(result["result"]["content"]["text"], "echo hello");
    assert_eq!(
        result["result"]["_meta"][RELATED]["taskId"],
        task_id.as_str()
    );
    let status = server
        .recv_method("notifications/tasks/status")
        .await
        .expect("a status notification");
    assert_eq!(status["params"]["status"], "completed");

    server.request("tasks/get", json!({"taskId": task_id}));
    let got = server.recv_response().await.expect("tasks/get");
    assert_eq!(got["result"]["status"], "completed");
    server.request("tasks/get", json!({"taskId": "no-such-task"}));
    let unknown = server.recv_response().await.expect("tasks/get");
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
}

/// `tasks/cancel` drops the handler's future; the task reads `cancelled`.
pub async fn tasks_cancel_drops_the_handler<R: Runtime>(rt: R) {
    struct Dropped(Arc<AtomicBool>);
    impl Drop for Dropped {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
    let dropped = Arc::new(AtomicBool::new(false));
    let started = Arc::new(AtomicBool::new(false));
    let (flag, seen) = (dropped.clone(), started.clone());
    let builder = ClientBuilder::new()
        .on_sampling(move |_| {
            let guard = Dropped(flag.clone());
            seen.store(true, Ordering::SeqCst);
            async move {
                let _guard = guard;
                std::future::pending::<()>().await;
                Ok(CreateMessageResult::text("never", "never"))
            }
        })
        .task_receiver(true);
    let (server, _client) = connect_fake(&rt, builder).await;
    server.request("sampling/createMessage", sampling_params("wait"));
    let created = server.recv_response().await.expect("the task");
    let task_id = created["result"]["task"]["taskId"]
        .as_str()
        .expect("a task id")
        .to_owned();
    assert!(eventually(&rt, || started.load(Ordering::SeqCst)).await);
    server.request("tasks/cancel", json!({"taskId": task_id}));
    let cancelled = server.recv_response().await.expect("tasks/cancel");
    assert_eq!(cancelled["result"]["status"], "cancelled", "{cancelled}");
    assert!(
        eventually(&rt, || dropped.load(Ordering::SeqCst)).await,
        "the handler's future is dropped"
    );
    server.request("tasks/result", json!({"taskId": task_id}));
    let result = server.recv_response().await.expect("tasks/result");
    assert_eq!(result["error"]["code"], -32602, "{result}");
}

/// Without the opt-in, a task-augmented request is answered directly (its `task` ignored)
/// and no `tasks` capability is declared.
pub async fn without_the_opt_in_tasks_are_ignored<R: Runtime>(rt: R) {
    let builder = ClientBuilder::new()
        .on_sampling(|_| async { Ok(CreateMessageResult::text("m", "direct")) });
    let (server, _client) = connect_fake(&rt, builder).await;
    let caps = &server.received_method("initialize")[0]["params"]["capabilities"];
    assert!(caps.get("tasks").is_none(), "{caps}");
    server.request("sampling/createMessage", sampling_params("x"));
    let r = server.recv_response().await.expect("the answer");
    assert_eq!(r["result"]["content"]["text"], "direct", "{r}");
    server.request("tasks/list", json!({}));
    let r = server.recv_response().await.expect("tasks/list");
    assert_eq!(r["error"]["code"], -32601, "{r}");
}

/// [`ClientBuilder::task_receiver_policy`] bounds the table: the ttl granted is clamped to
/// its longest, and a task past `max_tasks` is refused with -32603 (no handler runs for it).
pub async fn the_policy_bounds_the_task_table<R: Runtime>(rt: R) {
    let mut policy = mcp_proto::task::receiver::ReceiverPolicy::default();
    policy.max_tasks = 1;
    policy.max_ttl = std::time::Duration::from_secs(2);
    let runs = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = runs.clone();
    let builder = ClientBuilder::new()
        .on_sampling(move |_| {
            counter.fetch_add(1, Ordering::SeqCst);
            async {
                std::future::pending::<()>().await;
                Ok(CreateMessageResult::text("never", "never"))
            }
        })
        .task_receiver(true)
        .task_receiver_policy(policy);
    let (server, _client) = connect_fake(&rt, builder).await;
    server.request("sampling/createMessage", sampling_params("one"));
    let created = server.recv_response().await.expect("the task");
    assert_eq!(created["result"]["task"]["ttl"], 2000, "{created}");
    server.request("sampling/createMessage", sampling_params("two"));
    let refused = server.recv_response().await.expect("the refusal");
    assert_eq!(refused["error"]["code"], -32603, "{refused}");
    assert!(eventually(&rt, || runs.load(Ordering::SeqCst) == 1).await);
    assert_eq!(
        runs.load(Ordering::SeqCst),
        1,
        "no handler for the refused task"
    );
}

/// With [`ClientBuilder::host_task_queries`] the handlers make the tasks: a task-augmented
/// request reaches the sampling handler with its `task`, the handler's `CreateTaskResult` is
/// the answer, and `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel` reach the
/// query handler (method and params as they came) instead of a task table of the client's.
pub async fn host_task_queries_take_the_tasks_of_the_handlers<R: Runtime>(rt: R) {
    let builder = ClientBuilder::new()
        .sampling_handler(|params: serde_json::Value| async move {
            // The task must reach the handler (an error answer fails the test below).
            if params["task"] != json!({"ttl": 60000}) {
                return Err(mcp_proto::jsonrpc::ErrorObject::new(-1, "no task"));
            }
            Ok(json!({"task": {"taskId": "host-1", "status": "working"}}))
        })
        .host_task_queries(|method: String, params: serde_json::Value| async move {
            Ok(json!({"asked": method, "about": params["taskId"]}))
        });
    let (server, _client) = connect_fake(&rt, builder).await;
    let caps = &server.received_method("initialize")[0]["params"]["capabilities"];
    assert_eq!(
        caps["tasks"]["requests"],
        json!({"sampling": {"createMessage": {}}}),
        "{caps}"
    );
    let id = server.request("sampling/createMessage", sampling_params("hello"));
    let created = server.recv_response().await.expect("the host's task");
    assert_eq!(created["id"], id);
    assert_eq!(created["result"]["task"]["taskId"], "host-1", "{created}");
    for method in ["tasks/get", "tasks/result", "tasks/cancel", "tasks/list"] {
        let id = server.request(method, json!({"taskId": "host-1"}));
        let answer = server.recv_response().await.expect("an answer");
        assert_eq!(answer["id"], id);
        assert_eq!(answer["result"]["asked"], method, "{answer}");
        assert_eq!(answer["result"]["about"], "host-1", "{answer}");
    }
}
