//! A host that runs the server's sampling and elicitation requests as tasks of its own
//! (protocol 2025-11-25, `tasks.requests` declared), on the stdio of a bridge: it answers the
//! task-augmented request with its `CreateTaskResult` and the server's `tasks/get` and
//! `tasks/result` about it, as npm server-everything's `trigger-*-request-async` tools ask.

use std::path::Path;

use serde_json::{Value, json};

use super::bridge_host::BridgeHost;

/// The command line (`sh -c …`) that runs `server` with its input appended to `log`, so
/// that a test can read what the bridge sent it ([`logged_messages`]).
pub fn recorded_server(server: &[String], log: &Path) -> Vec<String> {
    let script = format!(
        "tee -a '{log}' | {server}",
        log = log.display(),
        server = server.join(" "),
    );
    vec!["sh".into(), "-c".into(), script]
}

/// The JSON-RPC messages a [`recorded_server`] got, in order (none when it got nothing).
pub fn logged_messages(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Initializes `host` at protocol 2025-11-25 with [`task_host_capabilities`], and checks the
/// bridge agreed to that version.
pub fn initialize_task_host(host: &mut BridgeHost) {
    let result = host.initialize_at("2025-11-25", &task_host_capabilities());
    assert_eq!(result["protocolVersion"], "2025-11-25", "{result}");
}

/// The capabilities of a host that runs sampling and elicitation requests as its own tasks.
pub fn task_host_capabilities() -> Value {
    json!({
        "sampling": {},
        "elicitation": {},
        "tasks": {"list": {}, "cancel": {},
            "requests": {"sampling": {"createMessage": {}}, "elicitation": {"create": {}}}}
    })
}

/// The `_meta` key of a task's related-task id.
pub const RELATED: &str = "io.modelcontextprotocol/related-task";

/// The id of the host's one task.
pub const HOST_TASK: &str = "host-task-7";

/// The host's task, in `status`.
pub fn host_task(status: &str) -> Value {
    json!({"taskId": HOST_TASK, "status": status, "createdAt": "2026-01-01T00:00:00Z",
        "lastUpdatedAt": "2026-01-01T00:00:00Z", "ttl": 60000, "pollInterval": 100})
}

/// Replies `result` to the bridge's request `request`.
pub fn reply(host: &mut BridgeHost, request: &Value, result: Value) {
    host.send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": result}));
}

/// Calls `tool` and plays the host's side of its task: the server's `method` request comes
/// with its `task` and gets the host's `CreateTaskResult`; `tasks/get` learns the task is
/// `completed` (after the host's `notifications/tasks/status` says so); `tasks/result` gets
/// `answer` (with the related-task `_meta` a task's result carries). Returns the tool's text
/// and the methods of every request the bridge sent the host.
pub fn call_through_host_task(
    host: &mut BridgeHost,
    tool: &str,
    arguments: Value,
    method: &str,
    answer: Value,
) -> (String, Vec<String>) {
    let call = host.request("tools/call", json!({"name": tool, "arguments": arguments}));
    let mut asked = Vec::new();
    let result = loop {
        let line = host.recv();
        if line["id"] == call && line.get("method").is_none() {
            break line;
        }
        let Some(m) = line["method"].as_str() else {
            continue;
        };
        if line.get("id").is_none() {
            continue; // a notification (log messages of the server)
        }
        asked.push(m.to_owned());
        match m {
            _ if m == method => {
                assert_eq!(
                    line["params"]["task"]["ttl"].as_u64().map(|t| t > 0),
                    Some(true),
                    "the request reaches the host with its task: {line}"
                );
                reply(host, &line, json!({"task": host_task("working")}));
            }
            "tasks/get" => {
                assert_eq!(line["params"]["taskId"], HOST_TASK, "{line}");
                host.send(
                    &json!({"jsonrpc": "2.0", "method": "notifications/tasks/status",
                    "params": host_task("completed")}),
                );
                reply(host, &line, host_task("completed"));
            }
            "tasks/result" => {
                assert_eq!(line["params"]["taskId"], HOST_TASK, "{line}");
                let mut answer = answer.clone();
                answer["_meta"] = json!({RELATED: {"taskId": HOST_TASK}});
                reply(host, &line, answer);
            }
            other => panic!("the bridge asked the host {other}: {line}"),
        }
    };
    assert!(result.get("error").is_none(), "{result}");
    let text = result["result"]["content"]
        .as_array()
        .expect("content")
        .iter()
        .filter_map(|c| c["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n");
    (text, asked)
}
