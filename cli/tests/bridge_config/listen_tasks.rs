//! `mcp bridge --config FILE --listen` in front of two npm server-everything servers, with the
//! servers' task-augmented sampling and elicitation (protocol 2025-11-25): the bridge tells
//! the servers it takes both as tasks, so they offer their `trigger-*-request-async` tools;
//! each request reaches the HTTP host session calling the tool, and the host's answer gets
//! back to the server through the bridge's task (`tasks/get`, `tasks/result`). A session
//! that declared `tasks.requests` gets the request with its `task` and runs it as its own
//! task; any other gets a plain request.

use mcp_tokio::types::CallToolResult;
use mcp_tokio::{Client, ClientBuilder};
use serde_json::{Value, json};

use crate::common::everything;
use crate::host::GUARD;
use crate::listening::{Listening, on_runtime};

/// What the host session's handlers were asked: the method and its params, in order.
type Asked = tokio::sync::mpsc::UnboundedReceiver<(&'static str, Value)>;

/// A host session that answers elicitations as Ada Lovelace and sampling as its own model,
/// reporting each request it gets; `as_tasks`: it also declares `tasks.requests` for both
/// (its client core then runs them as its own tasks).
async fn host_session(url: &str, as_tasks: bool) -> (Client, Asked) {
    let (tx, asked) = tokio::sync::mpsc::unbounded_channel();
    let for_sampling = tx.clone();
    let client = ClientBuilder::new()
        .elicitation_handler(move |params: Value| {
            let tx = tx.clone();
            async move {
                let _ = tx.send(("elicitation/create", params));
                Ok(json!({"action": "accept", "content": {"name": "Ada Lovelace"}}))
            }
        })
        .sampling_handler(move |params: Value| {
            let tx = for_sampling.clone();
            async move {
                let _ = tx.send(("sampling/createMessage", params));
                Ok(json!({"role": "assistant", "model": "host-model-9",
                    "content": {"type": "text", "text": "the host's own reply"}}))
            }
        })
        .task_receiver(as_tasks)
        .http(url)
        .await
        .expect("a host session");
    (client, asked)
}

fn tool_text(result: &CallToolResult) -> String {
    serde_json::to_value(&result.content)
        .expect("content")
        .as_array()
        .expect("a list")
        .iter()
        .filter_map(|c| c["text"].as_str().map(str::to_owned))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Calls `tool` of `client` within the guard: the tool's text (it must not be an error).
async fn call(client: &Client, tool: &str, arguments: Value) -> String {
    let result = tokio::time::timeout(GUARD, client.call_tool(tool, arguments))
        .await
        .expect("an answer before the guard")
        .expect("a tool result");
    let text = tool_text(&result);
    assert_eq!(result.is_error, None, "{text}");
    text
}

/// Both kinds of host session, one after the other, on the same bridge: the async tools are
/// offered, the elicitation's and the sampling's answers get back to the server as the
/// results of the bridge's tasks; the task-capable session got each request with its `task`,
/// the other without.
#[test]
fn a_servers_task_augmented_requests_reach_the_http_session_calling_it() {
    let Some(everything) = everything() else {
        return;
    };
    let bridge = Listening::start_with("listen-server-tasks", &[], |dir| {
        crate::tasks::write_everything_config(dir, &everything);
        dir.join("servers.json")
    });
    let url = &bridge.url;
    on_runtime(async {
        for as_tasks in [false, true] {
            let (client, mut asked) = host_session(url, as_tasks).await;
            let tools = tokio::time::timeout(GUARD, client.list_tools())
                .await
                .expect("tools before the guard")
                .expect("tools");
            let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
            for tool in [
                "one__trigger-elicitation-request-async",
                "two__trigger-sampling-request-async",
            ] {
                assert!(names.contains(&tool), "{tool} not offered: {names:?}");
            }

            let text = call(&client, "one__trigger-elicitation-request-async", json!({})).await;
            assert!(text.contains("Task created: "), "{text}");
            assert!(text.contains("[COMPLETED] User provided"), "{text}");
            assert!(text.contains("- Name: Ada Lovelace"), "{text}");
            let (method, params) = asked.try_recv().expect("the session was asked");
            assert_eq!(method, "elicitation/create");
            assert_eq!(params["task"].is_object(), as_tasks, "{params}");

            let text = call(
                &client,
                "two__trigger-sampling-request-async",
                json!({"prompt": "hi"}),
            )
            .await;
            assert!(
                text.contains("[COMPLETED] Async sampling completed"),
                "{text}"
            );
            assert!(text.contains("the host's own reply"), "{text}");
            let (method, params) = asked.try_recv().expect("the session was asked");
            assert_eq!(method, "sampling/createMessage");
            assert_eq!(params["task"].is_object(), as_tasks, "{params}");
            assert!(asked.try_recv().is_err(), "asked once per call");
            client.close().await;
        }
    });
}
