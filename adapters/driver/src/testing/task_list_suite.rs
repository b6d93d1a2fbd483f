//! Test bodies for the tasks of protocol 2025-11-25 by id (`tasks/list`, `tasks/get`,
//! `tasks/result`, `tasks/cancel`) and for `notifications/tasks/status` while a handle
//! waits, over the fake server, generic over the runtime like [`suite`](super::suite).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_proto::types::{ContentBlock, TaskStatus};
use serde_json::{Value, json};

use super::FakeServer;
use super::suite::within;
use crate::{CallOptions, Client, ClientBuilder, Error, Runtime, ToolCall};

const WAIT: Duration = Duration::from_secs(5);

/// A fake server of protocol 2025-11-25 declaring `capabilities.tasks = tasks`, and a client.
async fn connect_with_tasks<R: Runtime>(rt: &R, tasks: Option<Value>) -> (FakeServer, Client<R>) {
    let (server, io) = FakeServer::start(rt);
    let mut init = super::default_initialize_result();
    if let Some(tasks) = tasks {
        init["capabilities"]["tasks"] = tasks;
    }
    server.set_initialize_result(Some(init));
    let client = ClientBuilder::new()
        .runtime(rt.clone())
        .name("fake-tasks")
        .over(io.reader, io.writer)
        .await
        .expect("handshake with the fake server");
    (server, client)
}

fn task(id: &str, status: &str, poll_ms: u64) -> Value {
    json!({
        "taskId": id,
        "status": status,
        "createdAt": "2025-11-25T10:00:00Z",
        "lastUpdatedAt": "2025-11-25T10:00:01Z",
        "ttl": 600_000,
        "pollInterval": poll_ms
    })
}

/// `list_tasks` follows every page, `list_tasks_page` hands out one with its cursor, and
/// `get_task`, `task_result` and `cancel_task` send what their names say.
pub async fn tasks_listed_paged_and_by_id<R: Runtime>(rt: R) {
    let all = json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}});
    let (server, client) = connect_with_tasks(&rt, Some(all)).await;
    server.on_request("tasks/list", |p| {
        Ok(match p.get("cursor").and_then(Value::as_str) {
            None => json!({"tasks": [task("a", "working", 100)], "nextCursor": "p2"}),
            Some("p2") => json!({"tasks": [task("b", "completed", 100)]}),
            Some(other) => return Err((-32602, format!("bad cursor {other}"))),
        })
    });
    server.on_request("tasks/get", |p| {
        Ok(task(p["taskId"].as_str().unwrap_or("?"), "working", 100))
    });
    server.on_request("tasks/cancel", |p| {
        Ok(task(p["taskId"].as_str().unwrap_or("?"), "cancelled", 100))
    });
    server.on_request("tasks/result", |p| match p["taskId"].as_str() {
        Some("b") => Ok(json!({"content": [{"type": "text", "text": "done"}], "isError": false})),
        _ => Err((-32602, "unknown task".into())),
    });
    let tasks = client.list_tasks().await.expect("every page");
    let ids: Vec<&str> = tasks.iter().map(|t| t.task_id.as_str()).collect();
    assert_eq!(ids, ["a", "b"]);
    assert_eq!(tasks[1].status, TaskStatus::Completed);
    let first = client.list_tasks_page(None).await.expect("first page");
    assert_eq!(first.next_cursor.as_deref(), Some("p2"));
    let second = client
        .list_tasks_page(first.next_cursor)
        .await
        .expect("second page");
    assert_eq!(second.tasks[0].task_id, "b");
    assert_eq!(second.next_cursor, None);
    let lists = server.received_method("tasks/list");
    assert_eq!(lists.len(), 4);
    assert_eq!(lists[1]["params"]["cursor"], "p2");

    assert_eq!(
        client.get_task("a").await.expect("get").status,
        TaskStatus::Working
    );
    let cancelled = client.cancel_task("a").await.expect("cancel");
    assert_eq!(cancelled.status, TaskStatus::Cancelled);
    assert_eq!(
        server.received_method("tasks/cancel")[0]["params"]["taskId"],
        "a"
    );
    let payload = client
        .task_result("b", CallOptions::new())
        .await
        .expect("payload");
    let result: mcp_proto::types::CallToolResult = payload.decode().expect("a tool result");
    assert!(matches!(&result.content[0], ContentBlock::Text(t) if t.text == "done"));
    let unknown = client.task_result("zz", CallOptions::new()).await;
    assert!(
        matches!(unknown, Err(Error::Remote { code: -32602, .. })),
        "{unknown:?}"
    );
    client.close().await;
}

/// A server that does not declare `tasks.list` (or `tasks.cancel`, or `tasks` at all) gets
/// [`Error::NotOffered`] naming the method, and nothing is sent.
pub async fn tasks_not_offered_is_a_typed_error<R: Runtime>(rt: R) {
    let (server, client) = connect_with_tasks(&rt, None).await;
    for r in [
        client.list_tasks().await.map(drop),
        client.list_tasks_page(None).await.map(drop),
        client.get_task("a").await.map(drop),
        client.cancel_task("a").await.map(drop),
    ] {
        assert!(
            matches!(&r, Err(Error::NotOffered { method, .. }) if method.starts_with("tasks/")),
            "{r:?}"
        );
    }
    client.close().await;
    let (server2, client2) = connect_with_tasks(&rt, Some(json!({"cancel": {}}))).await;
    let r = client2.list_tasks().await;
    match &r {
        Err(e @ Error::NotOffered { method, reason, .. }) => {
            assert_eq!(method, "tasks/list");
            assert!(reason.contains("tasks.list"), "{reason}");
            assert!(e.to_string().contains("does not offer tasks/list"), "{e}");
        }
        other => panic!("expected NotOffered, got {other:?}"),
    }
    client2.close().await;
    for s in [server, server2] {
        assert!(
            s.received()
                .iter()
                .all(|m| !m["method"].as_str().unwrap_or("").starts_with("tasks/")),
            "nothing sent"
        );
    }
}

/// A handle waiting for its next poll takes in `notifications/tasks/status` at once: with a
/// poll interval of a minute, the status notification (completed) makes it fetch
/// `tasks/result` right away, and the status stream hears of it. Without notifications the
/// poll still comes (a short interval, `tasks/get` answers completed).
pub async fn status_notification_is_used_when_it_comes<R: Runtime>(rt: R) {
    let all = json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}});
    let (server, client) = connect_with_tasks(&rt, Some(all)).await;
    server.on_request("tools/list", |_| {
        Ok(json!({"tools": [
            {"name": "slow", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "required"}},
            {"name": "quick", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "required"}}
        ]}))
    });
    server.on_request("tools/call", |p| {
        let (id, poll) = match p["name"].as_str() {
            Some("slow") => ("s", 60_000),
            _ => ("q", 100),
        };
        Ok(json!({"task": task(id, "working", poll)}))
    });
    server.on_request("tasks/get", |p| {
        Ok(task(p["taskId"].as_str().unwrap_or("?"), "completed", 100))
    });
    server.on_request("tasks/result", |p| {
        let text = format!("result of {}", p["taskId"].as_str().unwrap_or("?"));
        Ok(json!({"content": [{"type": "text", "text": text}], "isError": false}))
    });
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let s = seen.clone();
    let options = CallOptions::new().on_task_status(move |status, _| {
        s.lock()
            .expect("not poisoned")
            .push(status.as_str().to_owned());
    });
    let ToolCall::Task(handle) = client
        .call_tool_task("slow", json!({}), options)
        .await
        .expect("call")
    else {
        panic!("expected a task");
    };
    // Another task's notification, and garbage, are ignored.
    server.notify(
        "notifications/tasks/status",
        task("other", "completed", 100),
    );
    server.notify("notifications/tasks/status", json!({"nonsense": true}));
    server.notify("notifications/tasks/status", task("s", "completed", 100));
    let result = within(&rt, WAIT, handle.wait())
        .await
        .expect("the notification ended the wait long before the minute's poll")
        .expect("the result");
    assert!(matches!(&result.content[0], ContentBlock::Text(t) if t.text == "result of s"));
    assert!(
        server.received_method("tasks/get").is_empty(),
        "no poll was needed"
    );
    assert_eq!(server.received_method("tasks/result").len(), 1);
    assert_eq!(
        *seen.lock().expect("not poisoned"),
        ["working", "completed"]
    );

    let quick = within(&rt, WAIT, client.call_tool("quick", json!({})))
        .await
        .expect("in time")
        .expect("the result");
    assert!(matches!(&quick.content[0], ContentBlock::Text(t) if t.text == "result of q"));
    assert_eq!(
        server.received_method("tasks/get").len(),
        1,
        "polled without a notification"
    );
    client.close().await;
}

/// The call's cancel handle ends a transparent task call at once, not at the next poll (a
/// minute away here), and the task is cancelled at the server (`tasks/cancel`).
pub async fn cancel_handle_ends_the_wait_at_once<R: Runtime>(rt: R) {
    let all = json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}});
    let (server, client) = connect_with_tasks(&rt, Some(all)).await;
    server.on_request("tools/list", |_| {
        Ok(json!({"tools": [
            {"name": "slow", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "required"}}
        ]}))
    });
    server.on_request("tools/call", |_| {
        Ok(json!({"task": task("s", "working", 60_000)}))
    });
    server.on_request("tasks/cancel", |_| Ok(task("s", "cancelled", 60_000)));
    let (options, cancel) = CallOptions::new().cancel_handle();
    let options = options.on_task_status(move |_, _| cancel.cancel("enough"));
    let r = within(&rt, WAIT, client.call_tool_with("slow", json!({}), options))
        .await
        .expect("cancelled long before the minute's poll");
    assert!(matches!(r, Err(Error::Cancelled { .. })), "{r:?}");
    assert!(
        super::suite::eventually(&rt, || !server.received_method("tasks/cancel").is_empty()).await,
        "tasks/cancel sent"
    );
    assert_eq!(
        server.received_method("tasks/cancel")[0]["params"]["taskId"],
        "s"
    );
    assert!(server.received_method("tasks/get").is_empty());
    client.close().await;
}
