//! Tasks of 2025-11-25 through the session: a server's `input_required` task answered
//! through `tasks/result` and related-task `_meta`, and the client as a task receiver.

use serde_json::{Value, json};

use super::*;
use crate::task::{TaskPolicy, TaskPoller, TaskStep};
use crate::types::{
    ClientCapabilities, ElicitParams, ElicitationCapability, SamplingCapability,
    TaskRequestsCapability, TasksCapability,
};

const RELATED: &str = "io.modelcontextprotocol/related-task";

fn caps(receiver: bool) -> ClientCapabilities {
    let mut caps = ClientCapabilities {
        sampling: Some(SamplingCapability::default()),
        elicitation: Some(ElicitationCapability::default()),
        ..ClientCapabilities::default()
    };
    if receiver {
        let mut sampling = serde_json::Map::new();
        sampling.insert("createMessage".into(), json!({}));
        caps.tasks = Some(TasksCapability {
            list: Some(serde_json::Map::new()),
            cancel: Some(serde_json::Map::new()),
            requests: Some(TaskRequestsCapability {
                sampling: Some(sampling),
                ..TaskRequestsCapability::default()
            }),
            ..TasksCapability::default()
        });
    }
    caps
}

fn receiver(policy: crate::task::receiver::ReceiverPolicy) -> Harness {
    let mut h = Harness::ready(
        config()
            .with_capabilities(caps(true))
            .with_task_receiver(policy),
        "2025-11-25",
    );
    h.sent.clear();
    h
}

fn sampling(id: u64, task: Option<Value>) -> Value {
    let mut params = json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
        "maxTokens": 10
    });
    if let Some(task) = task {
        params["task"] = task;
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "sampling/createMessage", "params": params})
}

fn request(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// The response the session sent for server request `id`.
fn answer(h: &Harness, id: u64) -> Value {
    h.sent
        .iter()
        .rev()
        .find(|(o, v)| o.kind == MessageKind::Response && v["id"] == json!(id))
        .map(|(_, v)| v.clone())
        .unwrap_or_else(|| panic!("no answer to {id}: {:?}", h.sent))
}

fn answered(h: &Harness, id: u64) -> bool {
    h.sent
        .iter()
        .any(|(o, v)| o.kind == MessageKind::Response && v["id"] == json!(id))
}

fn last_server_request(h: &Harness) -> (InboundRequestId, String, Option<Box<RawValue>>) {
    h.events
        .iter()
        .rev()
        .find_map(|e| match e {
            Event::ServerRequest { id, method, params } => {
                Some((*id, method.clone(), params.clone()))
            }
            _ => None,
        })
        .expect("a server request event")
}

fn raw(v: Value) -> Box<RawValue> {
    serde_json::value::to_raw_value(&v).unwrap()
}

#[test]
fn an_input_required_task_is_answered_through_tasks_result_and_completes_once() {
    let mut h = Harness::ready(config().with_capabilities(caps(false)), "2025-11-25");
    let call = h.send(
        "tools/call",
        json!({"name": "research", "arguments": {}, "task": {"ttl": 60000}}),
        RequestOptions::new(),
    );
    let task = json!({"taskId": "s1", "status": "working", "createdAt": "a",
        "lastUpdatedAt": "a", "ttl": 60000, "pollInterval": 100});
    h.respond_ok(call, json!({"task": task}));
    let created = match &h.completions(call)[..] {
        [Ok(r)] => r.to_raw().unwrap().to_owned(),
        other => panic!("{other:?}"),
    };
    let (mut poller, step) =
        TaskPoller::from_create_task(&created, h.now, TaskPolicy::default()).unwrap();
    assert!(matches!(step, TaskStep::Working { .. }));

    // The task goes input_required: the poller asks for tasks/result at once.
    h.advance(Duration::from_millis(100));
    let get = poller.poll(h.now).expect("a poll is due");
    let get = h.send(
        "tasks/get",
        serde_json::to_value(get).unwrap(),
        RequestOptions::new(),
    );
    let mut state = task.clone();
    state["status"] = json!("input_required");
    h.respond_ok(get, state.clone());
    let got = match &h.completions(get)[..] {
        [Ok(r)] => r.to_raw().unwrap().to_owned(),
        other => panic!("{other:?}"),
    };
    assert!(matches!(
        poller.handle_get(h.now, Ok(&got)),
        TaskStep::ResultReady
    ));
    let result = h.send(
        "tasks/result",
        serde_json::to_value(poller.result_params()).unwrap(),
        RequestOptions::new().no_timeout(),
    );
    assert_eq!(
        poller.poll_timeout(),
        Some(h.t0 + Duration::from_secs(60)),
        "only the backstop"
    );

    // The server asks for input tied to its task; the host sees which task it is.
    h.server(request(
        41,
        "elicitation/create",
        json!({"message": "which one?", "requestedSchema": {"type": "object", "properties": {}},
            "_meta": {RELATED: {"taskId": "s1"}}}),
    ));
    let (id, method, params) = last_server_request(&h);
    assert_eq!(method, "elicitation/create");
    let params: ElicitParams = serde_json::from_str(params.unwrap().get()).unwrap();
    assert_eq!(params.related_task(), Some("s1"));
    h.session
        .respond(
            h.now,
            id,
            Ok(raw(
                json!({"action": "accept", "content": {}, "_meta": {"k": 1}}),
            )),
        )
        .unwrap();
    h.drain();
    let reply = answer(&h, 41);
    assert_eq!(reply["result"]["action"], "accept");
    assert_eq!(reply["result"]["_meta"][RELATED]["taskId"], "s1", "{reply}");
    assert_eq!(
        reply["result"]["_meta"]["k"], 1,
        "the host's own _meta is kept"
    );

    // A status notification on the way changes nothing; the payload ends the task once.
    state["status"] = json!("working");
    let _ = poller.handle_status(h.now, &raw(state));
    h.respond_ok(
        result,
        json!({"content": [{"type": "text", "text": "report"}]}),
    );
    let payload = match &h.completions(result)[..] {
        [Ok(r)] => r.to_raw().unwrap().to_owned(),
        other => panic!("exactly one completion: {other:?}"),
    };
    let end = poller.handle_result(Ok(payload));
    assert!(matches!(end, TaskStep::Completed(ref r) if r.get().contains("report")));
    assert!(poller.is_finished());
    assert!(matches!(
        poller.handle_result(Ok(raw(json!({})))),
        TaskStep::Lost(_)
    ));
    assert_eq!(poller.poll_timeout(), None);
}

#[test]
fn a_request_of_no_task_is_answered_without_related_task_meta() {
    let mut h = Harness::ready(config().with_capabilities(caps(false)), "2025-11-25");
    h.server(sampling(5, None));
    let (id, _, _) = last_server_request(&h);
    h.session
        .respond(
            h.now,
            id,
            Ok(raw(json!({"role": "assistant", "model": "m",
            "content": {"type": "text", "text": "x"}}))),
        )
        .unwrap();
    h.drain();
    assert!(answer(&h, 5)["result"].get("_meta").is_none());
}

#[test]
fn without_the_opt_in_a_task_augmented_request_is_processed_normally() {
    let mut h = Harness::ready(config().with_capabilities(caps(false)), "2025-11-25");
    h.server(sampling(5, Some(json!({"ttl": 1000}))));
    assert!(!answered(&h, 5), "no CreateTaskResult");
    let (id, method, _) = last_server_request(&h);
    assert_eq!(method, "sampling/createMessage");
    h.session
        .respond(
            h.now,
            id,
            Ok(raw(json!({"role": "assistant", "model": "m",
            "content": {"type": "text", "text": "x"}}))),
        )
        .unwrap();
    h.drain();
    assert_eq!(answer(&h, 5)["result"]["model"], "m");
    // And the tasks methods are not there at all.
    h.server(request(6, "tasks/get", json!({"taskId": "client-task-0"})));
    assert_eq!(answer(&h, 6)["error"]["code"], -32601);
}

#[test]
fn a_task_augmented_sampling_request_is_answered_through_tasks_result() {
    let mut h = receiver(Default::default());
    h.server(sampling(7, Some(json!({"ttl": 30000}))));
    // Answered at once with the task; the handler runs meanwhile.
    let created = answer(&h, 7);
    let task = &created["result"]["task"];
    assert_eq!(task["status"], "working", "{created}");
    assert_eq!(task["ttl"], 30000);
    assert_eq!(task["pollInterval"], 1000);
    let task_id = task["taskId"].as_str().unwrap().to_owned();
    let (id, method, params) = last_server_request(&h);
    assert_eq!(method, "sampling/createMessage");
    assert!(params.unwrap().get().contains("\"task\""));

    h.server(request(8, "tasks/get", json!({"taskId": task_id})));
    assert_eq!(answer(&h, 8)["result"]["status"], "working");
    h.server(request(9, "tasks/result", json!({"taskId": task_id})));
    assert!(!answered(&h, 9), "tasks/result blocks while the task runs");
    h.server(request(10, "tasks/list", json!({})));
    assert_eq!(
        answer(&h, 10)["result"]["tasks"][0]["taskId"],
        task_id.as_str()
    );

    h.session
        .respond(
            h.now,
            id,
            Ok(raw(json!({"role": "assistant", "model": "m",
            "content": {"type": "text", "text": "sampled"}}))),
        )
        .unwrap();
    h.drain();
    let result = answer(&h, 9);
    assert_eq!(result["result"]["model"], "m", "{result}");
    assert_eq!(
        result["result"]["_meta"][RELATED]["taskId"],
        task_id.as_str()
    );
    let status = h
        .sent
        .iter()
        .find(|(_, v)| v["method"] == "notifications/tasks/status")
        .map(|(_, v)| v.clone())
        .expect("a status notification");
    assert_eq!(status["params"]["status"], "completed");
    assert_eq!(
        h.sent.iter().filter(|(_, v)| v["id"] == json!(7)).count(),
        1,
        "the original request is answered once, with the task"
    );
    h.server(request(11, "tasks/get", json!({"taskId": task_id})));
    assert_eq!(answer(&h, 11)["result"]["status"], "completed");
    h.server(request(12, "tasks/result", json!({"taskId": task_id})));
    assert_eq!(answer(&h, 12)["result"]["model"], "m");
}

#[test]
fn a_handler_error_fails_the_task() {
    let mut h = receiver(Default::default());
    h.server(sampling(7, Some(json!({}))));
    let (id, _, _) = last_server_request(&h);
    h.session
        .respond(h.now, id, Err(ErrorObject::new(-1, "the user declined")))
        .unwrap();
    h.drain();
    h.server(request(
        8,
        "tasks/result",
        json!({"taskId": "client-task-0"}),
    ));
    let result = answer(&h, 8);
    assert_eq!(result["error"]["code"], -1, "{result}");
    h.server(request(9, "tasks/get", json!({"taskId": "client-task-0"})));
    assert_eq!(answer(&h, 9)["result"]["status"], "failed");
}

#[test]
fn tasks_cancel_stops_the_handler_and_ends_waiting_results() {
    let mut h = receiver(Default::default());
    h.server(sampling(7, Some(json!({}))));
    let (id, _, _) = last_server_request(&h);
    assert!(h.session.deadlines_paused(), "a person is answering");
    h.server(request(
        8,
        "tasks/result",
        json!({"taskId": "client-task-0"}),
    ));
    h.server(request(
        9,
        "tasks/cancel",
        json!({"taskId": "client-task-0"}),
    ));
    assert_eq!(answer(&h, 9)["result"]["status"], "cancelled");
    assert!(
        answer(&h, 8)["error"]["message"]
            .as_str()
            .unwrap()
            .contains("cancelled")
    );
    assert!(
        h.events
            .iter()
            .any(|e| matches!(e, Event::ServerRequestCancelled { id: c, .. } if *c == id))
    );
    assert!(!h.session.deadlines_paused());
    assert!(matches!(
        h.session.respond(h.now, id, Ok(raw(json!({})))),
        Err(UsageError::UnknownServerRequest(_))
    ));
    h.server(request(
        10,
        "tasks/cancel",
        json!({"taskId": "client-task-0"}),
    ));
    assert_eq!(answer(&h, 10)["error"]["code"], -32602);
}

#[test]
fn unknown_task_ids_and_bad_params_are_invalid_params() {
    let mut h = receiver(Default::default());
    for (n, method) in ["tasks/get", "tasks/result", "tasks/cancel"]
        .iter()
        .enumerate()
    {
        let id = n as u64 + 1;
        h.server(request(id, method, json!({"taskId": "nope"})));
        assert_eq!(answer(&h, id)["error"]["code"], -32602, "{method}");
    }
    h.server(request(20, "tasks/get", json!({"task": 1})));
    assert_eq!(answer(&h, 20)["error"]["code"], -32602);
    h.server(request(21, "tasks/list", json!({"cursor": "bogus"})));
    assert_eq!(answer(&h, 21)["error"]["code"], -32602);
    assert!(
        h.events
            .iter()
            .all(|e| !matches!(e, Event::ServerRequest { .. }))
    );
}

#[test]
fn ttl_expiry_stops_the_handler_and_forgets_the_task() {
    let mut h = receiver(Default::default());
    h.server(sampling(7, Some(json!({"ttl": 5000}))));
    let (id, _, _) = last_server_request(&h);
    h.server(request(
        8,
        "tasks/result",
        json!({"taskId": "client-task-0"}),
    ));
    assert!(
        h.session
            .poll_timeout()
            .is_some_and(|t| t <= h.now + Duration::from_secs(5))
    );
    h.advance(Duration::from_secs(5));
    assert!(
        answer(&h, 8)["error"]["message"]
            .as_str()
            .unwrap()
            .contains("expired")
    );
    assert!(
        h.events
            .iter()
            .any(|e| matches!(e, Event::ServerRequestCancelled { id: c, .. } if *c == id))
    );
    h.server(request(9, "tasks/get", json!({"taskId": "client-task-0"})));
    assert_eq!(answer(&h, 9)["error"]["code"], -32602);
}

#[test]
fn a_full_task_table_refuses_with_an_error_and_runs_no_handler() {
    let policy = crate::task::receiver::ReceiverPolicy {
        max_tasks: 1,
        ..Default::default()
    };
    let mut h = receiver(policy);
    h.server(sampling(7, Some(json!({}))));
    h.events.clear();
    h.server(sampling(8, Some(json!({}))));
    assert_eq!(answer(&h, 8)["error"]["code"], -32603);
    assert!(
        h.events
            .iter()
            .all(|e| !matches!(e, Event::ServerRequest { .. }))
    );
}

#[test]
fn when_the_host_runs_tasks_task_requests_and_queries_go_to_it_as_they_came() {
    let mut h = Harness::ready(
        config()
            .with_capabilities(caps(true))
            .with_host_running_tasks(true),
        "2025-11-25",
    );
    h.sent.clear();
    h.server(sampling(7, Some(json!({"ttl": 30000}))));
    assert!(!answered(&h, 7), "the session made no task of its own");
    let (id, method, params) = last_server_request(&h);
    assert_eq!(method, "sampling/createMessage");
    let params: Value = serde_json::from_str(params.unwrap().get()).unwrap();
    assert_eq!(
        params["task"],
        json!({"ttl": 30000}),
        "the task goes to the host"
    );
    // The host's own task is the answer.
    let task = json!({"taskId": "host-1", "status": "working", "createdAt": "a",
        "lastUpdatedAt": "a", "ttl": 30000});
    h.session
        .respond(h.now, id, Ok(raw(json!({"task": task}))))
        .unwrap();
    h.drain();
    assert_eq!(answer(&h, 7)["result"]["task"]["taskId"], "host-1");
    // Each query about it is the host's to answer, not the table's.
    for (wire, method) in [
        (8, "tasks/get"),
        (9, "tasks/result"),
        (10, "tasks/cancel"),
        (11, "tasks/list"),
    ] {
        h.server(request(wire, method, json!({"taskId": "host-1"})));
        assert!(!answered(&h, wire), "{method} answered by the session");
        let (id, got, params) = last_server_request(&h);
        assert_eq!(got, method);
        assert!(params.unwrap().get().contains("host-1"));
        h.session
            .respond(h.now, id, Ok(raw(json!({"from": "host"}))))
            .unwrap();
        h.drain();
        assert_eq!(answer(&h, wire)["result"]["from"], "host", "{method}");
    }
}
