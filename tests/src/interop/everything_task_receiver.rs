//! Tasks in both directions against server-everything (protocol 2025-11-25):
//!
//! - `simulate-research-query` with `ambiguous: true` goes `input_required`; the client is
//!   then in `tasks/result`, the server sends its `elicitation/create` tied to the task
//!   (`_meta` related-task), the elicitation handler answers and the call completes with the
//!   clarification in the report.
//! - `trigger-elicitation-request-async` and `trigger-sampling-request-async` (registered only
//!   for a client that declares `tasks.requests.*`) send their request as a task to the
//!   client, poll the client's `tasks/get` and fetch the answer with `tasks/result`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_driver::mcp_proto::types::{CreateMessageResult, ElicitResult, TaskStatus};
use mcp_driver::{CallOptions, ClientBuilder, Runtime, WireDirection};
use serde_json::{Map, Value, json};

use super::everything::start_with;
use super::{Transport, text};
use crate::peers::Peers;

/// How long `close()` may take for server-everything (graces 1 s + 1 s, plus margin).
const CLOSE_BOUND: Duration = Duration::from_secs(5);

/// The wire messages the client sent, one per line.
type Tap = Arc<Mutex<Vec<u8>>>;

/// The builder with short shutdown graces and a tap of every message the client sends, one
/// per line (a stdio write and an HTTP POST body are each one whole message, without a
/// newline over HTTP).
fn tapped<R: Runtime>(builder: ClientBuilder<R>) -> (ClientBuilder<R>, Tap) {
    let sent: Tap = Arc::default();
    let tap = sent.clone();
    let builder = builder
        .shutdown_graces(Duration::from_secs(1), Duration::from_secs(1))
        .on_wire(move |direction, bytes| {
            if direction == WireDirection::Sent {
                let mut sent = tap.lock().expect("lock");
                sent.extend_from_slice(bytes);
                sent.push(b'\n');
            }
        });
    (builder, sent)
}

fn sent_lines(tap: &Tap) -> Vec<Value> {
    let bytes = tap.lock().expect("lock").clone();
    String::from_utf8_lossy(&bytes)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// A task that goes `input_required`: the server's elicitation names the task, the handler's
/// answer carries the task back, and the call completes (once) with the answer used.
pub async fn everything_task_input_required<R: Runtime>(rt: R, peers: Peers, transport: Transport) {
    let related: Arc<Mutex<Vec<Option<String>>>> = Arc::default();
    let seen = related.clone();
    let (builder, tap) = tapped(ClientBuilder::new().on_elicitation(move |params| {
        seen.lock()
            .expect("lock")
            .push(params.related_task().map(str::to_owned));
        async {
            let mut content = Map::new();
            content.insert("interpretation".into(), json!("historical"));
            Ok(ElicitResult::accept(content))
        }
    }));
    let s = start_with(&rt, builder, &peers, transport).await;
    let statuses: Arc<Mutex<Vec<TaskStatus>>> = Arc::default();
    let sink = statuses.clone();
    let options = CallOptions::new().on_task_status(move |status, _| {
        sink.lock().expect("lock").push(status.clone());
    });
    let r = s
        .client
        .call_tool_with(
            "simulate-research-query",
            json!({"topic": "rust", "ambiguous": true}),
            options,
        )
        .await
        .expect("the task completes after the clarification");
    assert!(text(&r).contains("historical"), "{}", text(&r));
    assert!(
        !text(&r).contains("elicitation unavailable"),
        "{}",
        text(&r)
    );

    let related = related.lock().expect("lock").clone();
    assert_eq!(related.len(), 1, "one elicitation: {related:?}");
    let task_id = related[0].clone().expect("the elicitation names its task");
    let wire = sent_lines(&tap);
    let answer = wire
        .iter()
        .find(|m| m.get("method").is_none() && m["result"]["action"] == "accept")
        .unwrap_or_else(|| panic!("no elicitation answer sent: {wire:?}"));
    assert_eq!(
        answer["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        task_id.as_str(),
        "{answer}"
    );
    let results: Vec<_> = wire
        .iter()
        .filter(|m| m["method"] == "tasks/result")
        .collect();
    assert_eq!(results.len(), 1, "one tasks/result: {results:?}");
    assert_eq!(results[0]["params"]["taskId"], task_id.as_str());
    let statuses = statuses.lock().expect("lock").clone();
    assert_eq!(
        statuses.last(),
        Some(&TaskStatus::Completed),
        "{statuses:?}"
    );
    s.finish(&rt, CLOSE_BOUND).await;
}

/// The client runs a task-augmented elicitation as its own task: the server gets a task,
/// polls it and fetches the answer with `tasks/result`.
pub async fn everything_task_receiver_elicitation<R: Runtime>(
    rt: R,
    peers: Peers,
    transport: Transport,
) {
    let builder = ClientBuilder::new()
        .on_elicitation(|params| async move {
            let mut content = params.default_content();
            content.insert("name".into(), json!("Ada Lovelace"));
            content.insert("favoriteColor".into(), json!("Purple"));
            Ok(ElicitResult::accept(content))
        })
        .task_receiver(true);
    let (builder, tap) = tapped(builder);
    let s = start_with(&rt, builder, &peers, transport).await;
    let r = s
        .client
        .call_tool("trigger-elicitation-request-async", json!({}))
        .await
        .expect("the tool completes");
    let out = text(&r);
    assert!(out.contains("[COMPLETED]"), "{out}");
    assert!(out.contains("Name: Ada Lovelace"), "{out}");
    assert!(out.contains("Favorite Color: Purple"), "{out}");
    let wire = sent_lines(&tap);
    let created = wire
        .iter()
        .find(|m| m["result"]["task"]["taskId"].is_string())
        .unwrap_or_else(|| panic!("no CreateTaskResult sent: {wire:?}"));
    assert_eq!(created["result"]["task"]["status"], "working");
    assert!(
        wire.iter().any(|m| m["result"]["action"] == "accept"
            && m["result"]["_meta"]["io.modelcontextprotocol/related-task"].is_object()),
        "the answer came through tasks/result: {wire:?}"
    );
    s.finish(&rt, CLOSE_BOUND).await;
}

/// The same for a task-augmented `sampling/createMessage`.
pub async fn everything_task_receiver_sampling<R: Runtime>(
    rt: R,
    peers: Peers,
    transport: Transport,
) {
    let builder = ClientBuilder::new()
        .on_sampling(|params| async move {
            let prompt = params.last_user_text().unwrap_or_default();
            Ok(CreateMessageResult::text(
                "interop-task-model",
                format!("task-sampled: {prompt}"),
            ))
        })
        .task_receiver(true);
    let (builder, _) = tapped(builder);
    let s = start_with(&rt, builder, &peers, transport).await;
    let r = s
        .client
        .call_tool(
            "trigger-sampling-request-async",
            json!({"prompt": "tell me about tasks"}),
        )
        .await
        .expect("the tool completes");
    let out = text(&r);
    assert!(out.contains("[COMPLETED]"), "{out}");
    assert!(out.contains("task-sampled: "), "{out}");
    assert!(out.contains("tell me about tasks"), "{out}");
    s.finish(&rt, CLOSE_BOUND).await;
}
