//! The host's own tasks through `mcp bridge --config`, against two npm server-everything
//! servers over stdio (`one`, `two`): a host that declared `tasks.requests` gets `one`'s
//! task-augmented elicitation and sampling as they came, answers them as its tasks, and
//! `one`'s tool gets the host's answer. The host's `notifications/tasks/status` reaches `one`
//! only (each server runs through `sh`, its input copied into `one.log` / `two.log`).
//!
//! The peer's command comes from `.peers/env.sh` (`MCP_PEER_EVERYTHING`); without it the
//! test fails naming `scripts/test`, unless `MCP_SKIP_INTEROP=1` is set.

use std::path::Path;

use serde_json::{Value, json};

use crate::common::everything;
use crate::common::host_tasks::{
    HOST_TASK, call_through_host_task, initialize_task_host, logged_messages, recorded_server,
};
use crate::host::{start_bridge, test_dir, write_servers};

/// Writes a config file of two server-everything entries, `one` and `two`, each run through
/// `sh` with its input copied into `NAME.log` in `dir`.
fn write_recorded_config(dir: &Path, everything: &[String]) {
    let mut server = everything.to_vec();
    server.push("stdio".into());
    let entry = |name: &str| {
        let command = recorded_server(&server, &dir.join(format!("{name}.log")));
        json!({"command": command[0], "args": command[1..]})
    };
    write_servers(dir, json!({"one": entry("one"), "two": entry("two")}));
}

/// The status notifications of the host's task that server `name` got.
fn statuses_sent_to(dir: &Path, name: &str) -> Vec<Value> {
    logged_messages(&dir.join(format!("{name}.log")))
        .into_iter()
        .filter(|m| {
            m["method"] == "notifications/tasks/status" && m["params"]["taskId"] == HOST_TASK
        })
        .collect()
}

#[test]
fn a_servers_task_augmented_requests_are_the_hosts_tasks() {
    let Some(everything) = everything() else {
        return;
    };
    let dir = test_dir("host-tasks");
    write_recorded_config(&dir, &everything);
    let mut host = start_bridge(&dir, &[]);
    initialize_task_host(&mut host);

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
    // Once for each of the two tasks, to the server that asked for them only.
    assert_eq!(statuses_sent_to(&dir, "one").len(), 2);
    assert_eq!(statuses_sent_to(&dir, "two"), Vec::<Value>::new());
}
