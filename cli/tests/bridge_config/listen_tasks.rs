//! `mcp bridge --config FILE --listen` in front of two npm server-everything servers, with the
//! servers' task-augmented sampling and elicitation (protocol 2025-11-25): the bridge tells
//! the servers it takes both as tasks, so they offer their `trigger-*-request-async` tools;
//! each request reaches the HTTP host session calling the tool, and the host's answer gets
//! back to the server through the bridge's task (`tasks/get`, `tasks/result`). A session
//! that declared `tasks.requests` gets the request with its `task` and runs it as its own
//! task; any other gets a plain request. When the server cancels the bridge's task, the
//! bridge cancels the session's.

use mcp_tokio::{Client, ClientBuilder};
use serde_json::{Value, json};

use crate::common::everything;
use crate::listening::{
    listen_on_config_with, listen_on_everything, on_runtime, tool_text, within,
};

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

/// Calls `tool` of `client` within the guard: the tool's text (it must not be an error).
async fn call(client: &Client, tool: &str, arguments: Value) -> String {
    let result = within(client.call_tool(tool, arguments))
        .await
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
    let bridge = listen_on_everything("listen-server-tasks", &everything);
    let url = &bridge.url;
    on_runtime(async {
        for as_tasks in [false, true] {
            let (client, mut asked) = host_session(url, as_tasks).await;
            let tools = within(client.list_tools()).await.expect("tools");
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

/// A server (Python, stdio) whose `ask_then_cancel` tool sends a task-augmented elicitation,
/// waits until the host was asked (the file `asked` in its directory), cancels the bridge's
/// task with `tasks/cancel` and answers with that answer's JSON.
const CANCELLING_SERVER: &str = r#"
import json, os, sys, time
here = os.path.dirname(os.path.abspath(__file__))
def send(m):
    print(json.dumps(m), flush=True)
def answer_to(i):
    for line in sys.stdin:
        m = json.loads(line)
        if m.get("id") == i and "method" not in m:
            return m
for line in sys.stdin:
    msg = json.loads(line)
    m, i = msg.get("method"), msg.get("id")
    if i is None:
        continue
    if m == "initialize":
        r = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
             "serverInfo": {"name": "canceller", "version": "1"}}
    elif m == "tools/list":
        r = {"tools": [{"name": "ask_then_cancel", "inputSchema": {"type": "object"}}]}
    elif m == "tools/call":
        send({"jsonrpc": "2.0", "id": "e1", "method": "elicitation/create", "params": {
            "task": {"ttl": 60000}, "message": "?",
            "requestedSchema": {"type": "object", "properties": {}}}})
        created = answer_to("e1")
        while not os.path.exists(os.path.join(here, "asked")):
            time.sleep(0.02)
        send({"jsonrpc": "2.0", "id": "c1", "method": "tasks/cancel",
              "params": {"taskId": created["result"]["task"]["taskId"]}})
        cancelled = answer_to("c1")
        r = {"content": [{"type": "text", "text": json.dumps(cancelled)}]}
    else:
        send({"jsonrpc": "2.0", "id": i, "error": {"code": -32601, "message": "no"}})
        continue
    send({"jsonrpc": "2.0", "id": i, "result": r})
"#;

/// Tells the test when the handler's future is dropped.
struct DropSignal(Option<tokio::sync::oneshot::Sender<()>>);

impl Drop for DropSignal {
    fn drop(&mut self) {
        if let Some(tx) = self.0.take() {
            let _ = tx.send(());
        }
    }
}

/// A server cancels the bridge's task while a task-capable host session runs it as its own:
/// the bridge cancels the session's task (`tasks/cancel`), so the session's handler stops,
/// and the server learns its task was cancelled.
#[test]
fn a_server_cancelling_its_task_cancels_the_sessions_task() {
    let bridge = listen_on_config_with("listen-task-cancel", &[], |dir| {
        let script = dir.join("server.py");
        std::fs::write(&script, CANCELLING_SERVER).expect("write the server");
        crate::host::write_servers(
            dir,
            json!({"py": {"command": "python3", "args": [script.display().to_string()]}}),
        );
        dir.join("servers.json")
    });
    let asked = bridge.dir().join("asked");
    on_runtime(async {
        let (dropped_tx, dropped) = tokio::sync::oneshot::channel();
        let dropped_tx = std::sync::Mutex::new(Some(dropped_tx));
        let client = ClientBuilder::new()
            .elicitation_handler(move |params: Value| {
                let signal = DropSignal(dropped_tx.lock().expect("lock").take());
                let asked = asked.clone();
                async move {
                    let _signal = signal;
                    assert!(params["task"].is_object(), "{params}");
                    std::fs::write(&asked, b"").expect("the asked file");
                    // A person who never answers: only a cancellation ends this.
                    std::future::pending::<
                            Result<Value, mcp_tokio::mcp_proto::jsonrpc::ErrorObject>,
                        >()
                        .await
                }
            })
            .task_receiver(true)
            .http(&bridge.url)
            .await
            .expect("a host session");
        let text = call(&client, "py__ask_then_cancel", json!({})).await;
        let cancelled: Value = serde_json::from_str(&text).expect("the server's JSON");
        assert_eq!(cancelled["result"]["status"], "cancelled", "{cancelled}");
        within(dropped).await.expect("dropped once");
        client.close().await;
    });
}
