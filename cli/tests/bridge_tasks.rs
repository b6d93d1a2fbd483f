//! `mcp bridge -- <server-everything>` in front of a host that runs the server's sampling and
//! elicitation requests as tasks of its own (protocol 2025-11-25, `tasks.requests` declared):
//! the bridge passes the task-augmented request to the host as it came, the host's
//! `CreateTaskResult` back, and the server's `tasks/get` and `tasks/result` about the host's
//! task to the host; the tool's result carries the host's answer. The bridge makes no task of
//! its own (it used to, and completed it with the host's `CreateTaskResult` as the answer).
//!
//! The peer's command comes from `.peers/env.sh` (`MCP_PEER_EVERYTHING`), which `scripts/test`
//! sources. Without it the test fails, naming `scripts/test`, unless `MCP_SKIP_INTEROP=1` is
//! set (then it says it was skipped and passes). Stdio only: nothing binds a port.

mod common;

use std::process::Command;

use common::bridge_host::{BridgeHost, MCP, scratch_dir, stderr_file};
use common::everything;
use common::host_tasks::{
    HOST_TASK, call_through_host_task, initialize_task_host, logged_messages, recorded_server,
};
use serde_json::{Value, json};

/// `mcp bridge -- <server-everything>` with a host on its stdio that declared sampling,
/// elicitation and task-augmented requests of both, at protocol 2025-11-25. The server runs
/// through `sh`, its input copied into `upstream.log` in the test's directory.
fn start(name: &str, server: &[String]) -> BridgeHost {
    let dir = scratch_dir("bridge-tasks", name);
    let mut command = Command::new(MCP);
    command
        .arg("bridge")
        .arg("--")
        .args(recorded_server(server, &dir.join("upstream.log")))
        .stderr(stderr_file(&dir));
    let mut host = BridgeHost::spawn(command, dir);
    initialize_task_host(&mut host);
    host
}

#[test]
fn a_task_augmented_elicitation_is_the_hosts_task_and_the_tool_gets_its_answer() {
    let Some(server) = everything() else { return };
    let mut host = start("elicitation", &server);
    let answer = json!({"action": "accept",
        "content": {"name": "Ada Lovelace", "favoriteColor": "Blue", "agreeToTerms": true}});
    let (text, asked) = call_through_host_task(
        &mut host,
        "trigger-elicitation-request-async",
        json!({}),
        "elicitation/create",
        answer,
    );
    assert!(
        text.contains(&format!("Task created: {HOST_TASK}")),
        "{text}"
    );
    assert!(text.contains("[COMPLETED] User provided"), "{text}");
    assert!(text.contains("- Name: Ada Lovelace"), "{text}");
    assert!(text.contains("- Favorite Color: Blue"), "{text}");
    assert_eq!(
        asked.first().map(String::as_str),
        Some("elicitation/create")
    );
    assert_eq!(asked.last().map(String::as_str), Some("tasks/result"));
    assert!(asked.iter().any(|m| m == "tasks/get"), "{asked:?}");
    assert_eq!(host.finish(), 0, "{}", host.stderr());
    assert_upstream_saw_only_the_hosts_task(&host);
}

/// What the bridge sent the server: no task of its own (every `task` it answered with is
/// the host's), and the host's `notifications/tasks/status` passed on.
fn assert_upstream_saw_only_the_hosts_task(host: &BridgeHost) {
    let sent = logged_messages(&host.dir.join("upstream.log"));
    let task_ids: Vec<&Value> = sent
        .iter()
        .filter(|m| m["result"]["task"].is_object())
        .map(|m| &m["result"]["task"]["taskId"])
        .collect();
    assert!(
        !task_ids.is_empty() && task_ids.iter().all(|id| **id == HOST_TASK),
        "{sent:?}"
    );
    assert!(
        sent.iter()
            .any(|m| m["method"] == "notifications/tasks/status"
                && m["params"]["taskId"] == HOST_TASK
                && m["params"]["status"] == "completed"),
        "the host's status notification reaches the server: {sent:?}"
    );
}

#[test]
fn a_task_augmented_sampling_request_is_the_hosts_task_and_the_tool_gets_its_answer() {
    let Some(server) = everything() else { return };
    let mut host = start("sampling", &server);
    let answer = json!({"role": "assistant", "model": "host-model-9",
        "content": {"type": "text", "text": "the host's own reply"}, "stopReason": "endTurn"});
    let (text, asked) = call_through_host_task(
        &mut host,
        "trigger-sampling-request-async",
        json!({"prompt": "hi"}),
        "sampling/createMessage",
        answer,
    );
    assert!(
        text.contains("[COMPLETED] Async sampling completed"),
        "{text}"
    );
    assert!(
        text.contains(&format!("Task created: {HOST_TASK}")),
        "{text}"
    );
    assert!(text.contains("host-model-9"), "{text}");
    assert!(text.contains("the host's own reply"), "{text}");
    assert_eq!(
        asked.first().map(String::as_str),
        Some("sampling/createMessage")
    );
    assert_eq!(asked.last().map(String::as_str), Some("tasks/result"));
    assert_eq!(host.finish(), 0, "{}", host.stderr());
    assert_upstream_saw_only_the_hosts_task(&host);
}
