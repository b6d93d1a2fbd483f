//! Test bodies for the tasks extension (2026-07-28) over the fake server, generic over the
//! runtime like [`suite`](super::suite).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_proto::jsonrpc::ErrorObject;
use serde_json::{Value, json};

use super::listen_suite::connect_modern;
use super::suite::{eventually, within};
use crate::{CallOptions, ClientBuilder, Error, Runtime, ToolCall};

const WAIT: Duration = Duration::from_secs(5);

fn task(id: &str, status: &str, extra: Value) -> Value {
    let mut v = json!({
        "taskId": id,
        "status": status,
        "createdAt": "2026-07-28T10:00:00Z",
        "lastUpdatedAt": "2026-07-28T10:00:00Z",
        "ttlMs": 60000,
        "pollIntervalMs": 100
    });
    if let (Some(base), Some(more)) = (v.as_object_mut(), extra.as_object()) {
        base.extend(more.clone());
    }
    v
}

fn created(id: &str) -> Value {
    let mut v = task(id, "working", json!({}));
    v["resultType"] = json!("task");
    v
}

fn text_of(r: &mcp_proto::types::CallToolResult) -> String {
    match r.content.first() {
        Some(mcp_proto::types::ContentBlock::Text(t)) => t.text.clone(),
        other => panic!("expected text, got {other:?}"),
    }
}

/// `call_tool` with the extension declared: the `tools/call` carries the extension in its
/// envelope; the task the server makes of it is polled (`tasks/get`), its input request is
/// answered by the elicitation handler and sent once in `tasks/update`, and the call returns
/// the completed task's result.
pub async fn task_is_awaited_transparently<R: Runtime>(rt: R) {
    let builder = ClientBuilder::new()
        .tasks(true)
        .elicitation_handler(|_params: Value| async {
            Ok::<_, ErrorObject>(json!({"action": "accept", "content": {"name": "rust"}}))
        });
    let (server, client) = connect_modern(&rt, builder).await;
    server.on_request("tools/call", |_| Ok(created("t1")));
    let gets = Arc::new(AtomicUsize::new(0));
    let answered = Arc::new(AtomicUsize::new(0));
    let (g, a) = (gets.clone(), answered.clone());
    server.on_request("tasks/get", move |p| {
        assert_eq!(p["taskId"], "t1");
        let n = g.fetch_add(1, Ordering::SeqCst);
        let ask = json!({"inputRequests": {"who": {"method": "elicitation/create",
            "params": {"message": "Who?", "requestedSchema": {"type": "object", "properties": {}}}}}});
        Ok(match (n, a.load(Ordering::SeqCst)) {
            (0, _) => task("t1", "working", json!({})),
            // Asked until answered (the client must answer only once).
            (_, 0) | (1..=2, _) => task("t1", "input_required", ask),
            _ => task(
                "t1",
                "completed",
                json!({"result": {"content": [{"type": "text", "text": "hello rust"}], "isError": false}}),
            ),
        })
    });
    let a = answered.clone();
    server.on_request("tasks/update", move |p| {
        assert_eq!(p["taskId"], "t1");
        assert_eq!(p["inputResponses"]["who"]["content"]["name"], "rust");
        a.fetch_add(1, Ordering::SeqCst);
        Ok(json!({"resultType": "complete"}))
    });
    let created = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let seen = created.clone();
    let options = CallOptions::new().on_task_created(move |id| {
        seen.lock().expect("not poisoned").push(id.to_owned());
    });
    let result = within(
        &rt,
        WAIT,
        client.call_tool_with("greet", json!({}), options),
    )
    .await
    .expect("in time")
    .expect("the task's result");
    assert_eq!(text_of(&result), "hello rust");
    assert_eq!(
        *created.lock().expect("not poisoned"),
        ["t1"],
        "told once, with the id"
    );
    let call = &server.received_method("tools/call")[0];
    assert_eq!(
        call["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"],
        json!({"io.modelcontextprotocol/tasks": {}})
    );
    assert_eq!(
        server.received_method("tasks/update").len(),
        1,
        "answered once"
    );
    assert!(gets.load(Ordering::SeqCst) >= 4);
    client.close().await;
}

/// The lower-level handle: id and status, `cancel` sends `tasks/cancel`, and `wait` reports a
/// cancelled task as [`Error::Cancelled`], a failed one as its remote error, an unknown one
/// (`tasks/get` refused) as [`Error::Task`]; dropping a transparent call asks for a cancel.
pub async fn task_handle_cancel_fail_and_drop<R: Runtime>(rt: R) {
    let (server, client) = connect_modern(&rt, ClientBuilder::new().tasks(true)).await;
    server.on_request("tools/call", |p| {
        Ok(created(p["name"].as_str().unwrap_or("?")))
    });
    server.on_request("tasks/cancel", |_| Ok(json!({"resultType": "complete"})));
    server.on_request("tasks/get", |p| {
        let id = p["taskId"].as_str().unwrap_or_default();
        match id {
            "c" => Ok(task(id, "cancelled", json!({}))),
            "f" => Ok(task(
                id,
                "failed",
                json!({"error": {"code": -32603, "message": "boom"}}),
            )),
            "w" => Ok(task(id, "working", json!({}))),
            _ => Err((-32602, "unknown task".into())),
        }
    });
    let ToolCall::Task(handle) = client
        .call_tool_task("c", json!({}), CallOptions::new())
        .await
        .expect("call")
    else {
        panic!("expected a task");
    };
    assert_eq!(handle.id(), "c");
    assert_eq!(handle.status(), &mcp_proto::types::TaskStatus::Working);
    handle.cancel().await.expect("cancel acknowledged");
    assert_eq!(
        server.received_method("tasks/cancel")[0]["params"]["taskId"],
        "c"
    );
    let cancelled = within(&rt, WAIT, handle.wait()).await.expect("in time");
    assert!(
        matches!(cancelled, Err(Error::Cancelled { .. })),
        "{cancelled:?}"
    );
    let failed = within(&rt, WAIT, client.call_tool("f", json!({})))
        .await
        .expect("in time");
    assert!(
        matches!(&failed, Err(Error::Remote { code: -32603, message, .. }) if message == "boom"),
        "{failed:?}"
    );
    let lost = within(&rt, WAIT, client.call_tool("gone", json!({})))
        .await
        .expect("in time");
    assert!(
        matches!(&lost, Err(Error::Task { task_id, .. }) if task_id == "gone"),
        "{lost:?}"
    );
    // A transparent call dropped while the task works: the server is asked to cancel it.
    assert!(
        within(
            &rt,
            Duration::from_millis(300),
            client.call_tool("w", json!({}))
        )
        .await
        .is_none()
    );
    assert!(
        eventually(&rt, || server
            .received_method("tasks/cancel")
            .iter()
            .any(|c| c["params"]["taskId"] == "w"))
        .await
    );
    client.close().await;
}

/// Without the extension declared, no task is accepted: the call fails instead of waiting.
pub async fn task_without_the_extension_is_refused<R: Runtime>(rt: R) {
    let (server, client) = connect_modern(&rt, ClientBuilder::new()).await;
    server.on_request("tools/call", |_| Ok(created("t")));
    let r = within(&rt, WAIT, client.call_tool("x", json!({})))
        .await
        .expect("in time");
    assert!(r.is_err(), "{r:?}");
    let call = &server.received_method("tools/call")[0];
    assert!(
        call["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
            .get("extensions")
            .is_none()
    );
    assert!(server.received_method("tasks/get").is_empty());
    client.close().await;
}
