//! The host's own tasks through `mcp bridge --config`, against two npm server-everything
//! servers over stdio (`one`, `two`): a host that declared `tasks.requests` gets `one`'s
//! task-augmented elicitation and sampling as they came, answers them as its tasks, and
//! `one`'s tool gets the host's answer.
//!
//! The peer's command comes from `.peers/env.sh` (`MCP_PEER_EVERYTHING`); without it the
//! test fails naming `scripts/test`, unless `MCP_SKIP_INTEROP=1` is set.

use serde_json::json;

use crate::common::everything;
use crate::common::host_tasks::{HOST_TASK, call_through_host_task, task_host_capabilities};
use crate::host::{start_bridge, test_dir};
use crate::tasks::write_everything_config;

#[test]
fn a_servers_task_augmented_requests_are_the_hosts_tasks() {
    let Some(everything) = everything() else {
        return;
    };
    let dir = test_dir("host-tasks");
    write_everything_config(&dir, &everything);
    let mut host = start_bridge(&dir, &[]);
    let init = host.initialize_at("2025-11-25", &task_host_capabilities());
    assert_eq!(init["protocolVersion"], "2025-11-25", "{init}");

    let answer = json!({"action": "accept", "content": {"name": "Grace Hopper"}});
    let (text, asked) = call_through_host_task(
        &mut host,
        "one__trigger-elicitation-request-async",
        json!({}),
        "elicitation/create",
        answer,
    );
    assert!(
        text.contains(&format!("Task created: {HOST_TASK}")),
        "{text}"
    );
    assert!(text.contains("- Name: Grace Hopper"), "{text}");
    assert_eq!(asked.last().map(String::as_str), Some("tasks/result"));

    let answer = json!({"role": "assistant", "model": "host-model-9",
        "content": {"type": "text", "text": "the host's own reply"}});
    let (text, asked) = call_through_host_task(
        &mut host,
        "one__trigger-sampling-request-async",
        json!({"prompt": "hi"}),
        "sampling/createMessage",
        answer,
    );
    assert!(
        text.contains("[COMPLETED] Async sampling completed"),
        "{text}"
    );
    assert!(text.contains("the host's own reply"), "{text}");
    assert!(asked.iter().any(|m| m == "tasks/get"), "{asked:?}");
    assert_eq!(host.finish(), 0, "{}", host.stderr());
}
