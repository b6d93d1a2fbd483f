//! Tasks of protocol 2025-11-25 against server-everything: `simulate-research-query`
//! declares `execution.taskSupport: "required"`, so the client must send `params.task`,
//! follow the task with `tasks/get` and fetch the report with `tasks/result`. The server's
//! task list (`tasks/list`, `tasks/get`) is the evidence that a cancel reached it: the task
//! shows `cancelled` there.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_driver::mcp_proto::types::{CallToolResult, TaskStatus};
use mcp_driver::{CallOptions, Client, Error, Runtime, ToolCall, WireDirection};
use serde_json::json;

use super::everything::{full_builder, start_with};
use super::{Transport, sleep, text};
use crate::peers::Peers;

/// How long `close()` may take for server-everything (graces 1 s + 1 s, plus margin).
const CLOSE_BOUND: Duration = Duration::from_secs(5);

/// The statuses a task went through, with their messages.
type StatusLog = Arc<Mutex<Vec<(TaskStatus, Option<String>)>>>;

/// `call_tool` of a task-required tool completes transparently: the statuses seen go
/// `working` ... `completed` and the result is the server's report.
pub async fn everything_task_call<R: Runtime>(rt: R, peers: Peers, transport: Transport) {
    let (builder, _) = full_builder();
    let s = start_with(&rt, builder, &peers, transport).await;
    let seen: StatusLog = Arc::default();
    let sink = seen.clone();
    let options = CallOptions::new().on_task_status(move |status, message| {
        let entry = (status.clone(), message.map(str::to_owned));
        sink.lock().expect("lock").push(entry);
    });
    let r = s
        .client
        .call_tool_with("simulate-research-query", json!({"topic": "rust"}), options)
        .await
        .expect("the task completes");
    assert!(text(&r).contains("# Research Report: rust"), "{}", text(&r));
    let seen = seen.lock().expect("lock").clone();
    assert_eq!(
        seen.first().map(|s| &s.0),
        Some(&TaskStatus::Working),
        "{seen:?}"
    );
    assert_eq!(
        seen.last().map(|s| &s.0),
        Some(&TaskStatus::Completed),
        "{seen:?}"
    );
    assert!(
        seen.iter().any(|(_, m)| m.is_some()),
        "the server's status messages come through: {seen:?}"
    );
    s.finish(&rt, CLOSE_BOUND).await;
}

/// `call_tool_task` hands out the handle; `cancel` sends `tasks/cancel` and the wait ends as
/// cancelled.
pub async fn everything_task_cancel<R: Runtime>(rt: R, peers: Peers, transport: Transport) {
    let (builder, _) = full_builder();
    let s = start_with(&rt, builder, &peers, transport).await;
    let call = s
        .client
        .call_tool_task(
            "simulate-research-query",
            json!({"topic": "cancel me"}),
            CallOptions::new(),
        )
        .await
        .expect("tools/call");
    let task = match call {
        ToolCall::Task(task) => task,
        ToolCall::Complete(r) => panic!("a task-required tool gives a task, got {r:?}"),
        _ => panic!("a task-required tool gives a task"),
    };
    assert!(!task.id().is_empty());
    assert_eq!(task.status(), &TaskStatus::Working);
    let id = task.id().to_owned();
    task.cancel().await.expect("tasks/cancel accepted");
    match task.wait().await {
        Err(Error::Cancelled { .. }) => {}
        other => panic!("expected a cancelled task, got {other:?}"),
    }
    assert_eq!(
        s.client.get_task(id).await.expect("tasks/get").status,
        TaskStatus::Cancelled
    );
    s.finish(&rt, CLOSE_BOUND).await;
}

/// Dropping a transparent `call_tool` while its task runs sends `tasks/cancel` for it (the
/// call is dropped once the first status shows the task exists).
pub async fn everything_task_drop<R: Runtime>(rt: R, peers: Peers, transport: Transport) {
    let sent: Arc<Mutex<Vec<u8>>> = Arc::default();
    let tap = sent.clone();
    let (builder, _) = full_builder();
    let builder = builder.on_wire(move |direction, bytes| {
        if direction == WireDirection::Sent {
            tap.lock().expect("lock").extend_from_slice(bytes);
        }
    });
    let s = start_with(&rt, builder, &peers, transport).await;
    let (created_rx, created_tx) = futures_util::future::abortable(std::future::pending::<()>());
    let created_tx = Mutex::new(Some(created_tx));
    let options = CallOptions::new().on_task_status(move |_, _| {
        if let Some(handle) = created_tx.lock().expect("lock").take() {
            handle.abort();
        }
    });
    {
        let call = s.client.call_tool_with(
            "simulate-research-query",
            json!({"topic": "dropped"}),
            options,
        );
        let call = std::pin::pin!(call);
        if let futures_util::future::Either::Left((r, _)) =
            futures_util::future::select(call, created_rx).await
        {
            panic!("ended before dropped: {r:?}");
        }
        // The task exists; the call future is dropped at the end of this block.
    }
    // The cancel goes out with the next flush; a ping after it proves it was written.
    s.client.ping().await.expect("ping");
    let wire = String::from_utf8_lossy(&sent.lock().expect("lock")).into_owned();
    let cancel = wire
        .lines()
        .find(|l| l.contains("\"tasks/cancel\""))
        .unwrap_or_else(|| panic!("no tasks/cancel sent:\n{wire}"));
    assert!(cancel.contains("taskId"), "{cancel}");
    the_only_task_ends_cancelled(&rt, &s.client).await;
    s.finish(&rt, CLOSE_BOUND).await;
}

/// Cancelling a transparent `call_tool` by its [`CancelHandle`](mcp_driver::CancelHandle)
/// once the task exists: the call ends as [`Error::Cancelled`] and the server is asked to
/// cancel the task (its `tasks/get` then shows `cancelled`).
pub async fn everything_task_cancel_handle<R: Runtime>(rt: R, peers: Peers, transport: Transport) {
    let (builder, _) = full_builder();
    let s = start_with(&rt, builder, &peers, transport).await;
    let (options, cancel) = CallOptions::new().cancel_handle();
    let options = options.on_task_status(move |_, _| cancel.cancel("enough"));
    let r = s
        .client
        .call_tool_with("simulate-research-query", json!({"topic": "stop"}), options)
        .await;
    assert!(matches!(r, Err(Error::Cancelled { .. })), "{r:?}");
    the_only_task_ends_cancelled(&rt, &s.client).await;
    s.finish(&rt, CLOSE_BOUND).await;
}

/// After a task-augmented call completes, the server's task list has the task: one page
/// with `list_tasks_page`, every page with `list_tasks`; `get_task` shows it completed and
/// `task_result` gives the same result again.
pub async fn everything_task_list<R: Runtime>(rt: R, peers: Peers, transport: Transport) {
    let (builder, _) = full_builder();
    let s = start_with(&rt, builder, &peers, transport).await;
    let called = s
        .client
        .call_tool("simulate-research-query", json!({"topic": "listed"}))
        .await
        .expect("the task completes");
    let tasks = s.client.list_tasks().await.expect("tasks/list");
    assert_eq!(tasks.len(), 1, "{tasks:?}");
    let task = &tasks[0];
    assert_eq!(task.status, TaskStatus::Completed, "{task:?}");
    let page = s.client.list_tasks_page(None).await.expect("one page");
    assert_eq!(page.tasks, tasks);
    assert_eq!(page.next_cursor, None);
    let got = s.client.get_task(&task.task_id).await.expect("tasks/get");
    assert_eq!(got.task_id, task.task_id);
    assert_eq!(got.status, TaskStatus::Completed);
    let payload = s
        .client
        .task_result(&task.task_id, CallOptions::new())
        .await
        .expect("tasks/result");
    let again: CallToolResult = payload.decode().expect("a tool result");
    assert_eq!(text(&again), text(&called));
    s.finish(&rt, CLOSE_BOUND).await;
}

/// Waits (bounded) until the server's only task shows `cancelled` in `tasks/list`, and checks
/// `tasks/get` agrees: the evidence that `tasks/cancel` reached the server.
async fn the_only_task_ends_cancelled<R: Runtime>(rt: &R, client: &Client<R>) {
    let mut last = Vec::new();
    for _ in 0..200 {
        last = client.list_tasks().await.expect("tasks/list");
        if let [task] = &last[..]
            && task.status == TaskStatus::Cancelled
        {
            let got = client.get_task(&task.task_id).await.expect("tasks/get");
            assert_eq!(got.status, TaskStatus::Cancelled);
            return;
        }
        sleep(rt, Duration::from_millis(50)).await;
    }
    panic!("the task never showed cancelled: {last:?}");
}
