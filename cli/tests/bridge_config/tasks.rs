//! Tasks through `mcp bridge --config`, against two npm server-everything servers over stdio
//! (`one`, `two`): `simulate-research-query` is task-required, so a host calls it with a
//! `task` and follows the task by the id the bridge gave it.
//!
//! The peer's command comes from `.peers/env.sh` (`MCP_PEER_EVERYTHING`); without it the
//! test fails naming `scripts/test`, unless `MCP_SKIP_INTEROP=1` is set.

use serde_json::{Value, json};

use crate::common::everything;
use crate::host::{BridgeHost, start_bridge, test_dir, write_servers};

const TOOL: &str = "simulate-research-query";

/// Writes a config file of two server-everything entries, `one` and `two`.
pub fn write_everything_config(dir: &std::path::Path, everything: &[String]) {
    let entry = || {
        let mut args: Vec<String> = everything[1..].to_vec();
        args.push("stdio".into());
        json!({"command": everything[0], "args": args})
    };
    write_servers(dir, json!({"one": entry(), "two": entry()}));
}

/// Every task id of every `tasks/list` page, following `nextCursor` to the end.
fn listed_ids(host: &mut BridgeHost) -> Vec<String> {
    let mut ids = Vec::new();
    let mut params = json!({});
    loop {
        let page = host.call("tasks/list", params);
        for task in page["tasks"].as_array().expect("tasks") {
            ids.push(task["taskId"].as_str().expect("an id").to_owned());
        }
        match page.get("nextCursor") {
            Some(Value::String(next)) => params = json!({"cursor": next}),
            _ => return ids,
        }
    }
}

/// The host sees the servers' tasks capability, calls the task-required tool of each server
/// with a `task`, and gets task ids that name their server (`one/…`, `two/…`); `tasks/list`
/// lists both across the servers, `tasks/get` and `tasks/result` reach the right server (the
/// report, its related-task id the host's, the completed status notification before it),
/// `tasks/cancel` cancels the other task on its server; an id of no server is refused.
#[test]
fn tasks_are_routed_to_their_server_under_host_visible_ids() {
    let Some(everything) = everything() else {
        return;
    };
    let dir = test_dir("tasks");
    write_everything_config(&dir, &everything);
    let mut host = start_bridge(&dir, &[]);
    let init = host.initialize_at("2025-11-25", &json!({}));
    assert_eq!(init["protocolVersion"], "2025-11-25");
    let tasks = &init["capabilities"]["tasks"];
    assert!(
        tasks["list"].is_object() && tasks["cancel"].is_object(),
        "{init}"
    );
    assert!(tasks["requests"]["tools"]["call"].is_object(), "{init}");
    let tools = host.call("tools/list", json!({}));
    let tool = tools["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .find(|t| t["name"] == format!("one__{TOOL}"))
        .unwrap_or_else(|| panic!("one__{TOOL} is offered: {tools}"));
    assert_eq!(tool["execution"]["taskSupport"], "required");

    let mut start = |server: &str, topic: &str| {
        let created = host.call(
            "tools/call",
            json!({"name": format!("{server}__{TOOL}"), "arguments": {"topic": topic},
                "task": {"ttl": 60_000}}),
        );
        let id = created["task"]["taskId"]
            .as_str()
            .expect("a task id")
            .to_owned();
        assert!(id.starts_with(&format!("{server}/")), "{created}");
        assert_eq!(created["task"]["status"], "working", "{created}");
        id
    };
    let one = start("one", "rust");
    let two = start("two", "cancel me");

    let listed = listed_ids(&mut host);
    assert!(listed.contains(&one) && listed.contains(&two), "{listed:?}");
    // Neither server paginates two tasks: the first page holds both servers' tasks.
    let first = host.call("tasks/list", json!({}));
    let first = first["tasks"].as_array().expect("tasks");
    assert!(
        [&one, &two]
            .iter()
            .all(|id| first.iter().any(|t| t["taskId"] == id.as_str())),
        "{first:?}"
    );
    assert!(
        listed
            .iter()
            .all(|id| id.starts_with("one/") || id.starts_with("two/")),
        "{listed:?}"
    );
    let got = host.call("tasks/get", json!({"taskId": one}));
    assert_eq!(got["taskId"], one.as_str(), "{got}");

    // `two`'s task is cancelled on its server.
    let cancelled = host.call("tasks/cancel", json!({"taskId": two}));
    assert_eq!(cancelled["taskId"], two.as_str(), "{cancelled}");
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    let got = host.call("tasks/get", json!({"taskId": two}));
    assert_eq!(got["status"], "cancelled", "{got}");

    // `one`'s result waits for the task's end; its completion is told first.
    let id = host.request("tasks/result", json!({"taskId": one}));
    let (answer, before) = host.answer(id);
    let report = &answer["result"];
    let text = report["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("# Research Report: rust"), "{answer}");
    assert_eq!(
        report["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        one.as_str(),
        "{answer}"
    );
    let statuses: Vec<&Value> = before
        .iter()
        .filter(|l| l["method"] == "notifications/tasks/status")
        .collect();
    assert!(
        statuses
            .iter()
            .any(|n| n["params"]["taskId"] == one.as_str() && n["params"]["status"] == "completed"),
        "{before:?}"
    );
    assert!(
        statuses.iter().all(|n| {
            let id = n["params"]["taskId"].as_str().unwrap_or_default();
            id.starts_with("one/") || id.starts_with("two/")
        }),
        "{statuses:?}"
    );

    // Only an id without the SERVER/ID form is told the form (one with it is not told to
    // prefix it again).
    for (unknown, told_the_form) in [("no-server-part", true), ("three/1", false)] {
        let id = host.request("tasks/get", json!({"taskId": unknown}));
        let (answer, _) = host.answer(id);
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(message.starts_with("unknown task: "), "{answer}");
        assert_eq!(message.contains("SERVER/ID"), told_the_form, "{answer}");
    }
    assert_eq!(host.finish(), 0);
}

/// A task's question (server-everything asks for a clarification of an ambiguous topic,
/// through `tasks/result`) reaches the host with the task's host-visible id in its
/// related-task `_meta`, and the host's answer reaches the task: the report carries it.
#[test]
fn a_tasks_question_reaches_the_host_under_the_host_visible_id() {
    let Some(everything) = everything() else {
        return;
    };
    let dir = test_dir("task-question");
    write_everything_config(&dir, &everything);
    let mut host = start_bridge(&dir, &[]);
    host.initialize_at("2025-11-25", &json!({"elicitation": {}}));
    let created = host.call(
        "tools/call",
        json!({"name": format!("two__{TOOL}"), "arguments": {"topic": "python", "ambiguous": true},
            "task": {"ttl": 60_000}}),
    );
    let task = created["task"]["taskId"]
        .as_str()
        .expect("a task id")
        .to_owned();
    assert!(task.starts_with("two/"), "{created}");
    let result = host.request("tasks/result", json!({"taskId": task}));
    let mut chosen = None;
    let answer = loop {
        let line = host.recv();
        if line["id"] == result && line.get("method").is_none() {
            break line;
        }
        if line["method"] == "elicitation/create" {
            let params = &line["params"];
            assert_eq!(
                params["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
                task.as_str(),
                "{line}"
            );
            let choice =
                params["requestedSchema"]["properties"]["interpretation"]["oneOf"][0]["const"]
                    .as_str()
                    .unwrap_or_else(|| panic!("a choice: {line}"))
                    .to_owned();
            host.send(&json!({"jsonrpc": "2.0", "id": line["id"],
                "result": {"action": "accept", "content": {"interpretation": choice}}}));
            chosen = Some(choice);
        }
    };
    let chosen = chosen.expect("the task asked the host");
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains(&chosen), "{chosen}: {answer}");
    assert_eq!(host.finish(), 0);
}
