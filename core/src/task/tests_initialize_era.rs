//! The poller following a 2025-11-25 task over a virtual clock: `CreateTaskResult`,
//! `tasks/get` polls, `tasks/result`, status notifications, the TTL, exactly-once ends.

use serde_json::{Value, json};

use super::*;

fn raw(v: Value) -> Box<RawValue> {
    serde_json::value::to_raw_value(&v).unwrap()
}

fn task(status: &str, extra: Value) -> Value {
    let mut v = json!({
        "taskId": "t1",
        "status": status,
        "createdAt": "2025-11-25T10:00:00Z",
        "lastUpdatedAt": "2025-11-25T10:00:00Z",
        "ttl": 60000,
        "pollInterval": 500
    });
    if let (Some(base), Some(more)) = (v.as_object_mut(), extra.as_object()) {
        base.extend(more.clone());
    }
    v
}

fn start(extra: Value) -> (TaskPoller, TaskStep, Instant) {
    let t0 = Instant::now();
    let created = raw(json!({ "task": task("working", extra) }));
    let (p, step) =
        TaskPoller::from_create_task(&created, t0, TaskPolicy::default()).expect("a task");
    (p, step, t0)
}

/// Polls once at the due time and answers with `answer`.
fn poll_with(p: &mut TaskPoller, answer: Value) -> TaskStep {
    let at = p.poll_timeout().expect("a poll is due");
    let params = p.poll(at).expect("due");
    assert_eq!(params.task_id, "t1");
    p.handle_get(at, Ok(&raw(answer)))
}

#[test]
fn create_poll_working_then_completed_then_the_payload_from_tasks_result() {
    let (mut p, step, t0) = start(json!({}));
    assert!(matches!(step, TaskStep::Working { .. }));
    assert_eq!(p.poll_timeout(), Some(t0 + Duration::from_millis(500)));
    let step = poll_with(&mut p, task("working", json!({"statusMessage": "half"})));
    assert!(matches!(step, TaskStep::Working { message: Some(ref m) } if m == "half"));
    let step = poll_with(&mut p, task("completed", json!({})));
    assert!(matches!(step, TaskStep::ResultReady));
    assert!(!step.is_terminal());
    assert_eq!(p.result_params().task_id, "t1");
    // While tasks/result is open nothing is polled; only the TTL backstop stays.
    assert!(p.poll(t0 + Duration::from_secs(30)).is_none());
    assert_eq!(p.poll_timeout(), Some(t0 + Duration::from_secs(60)));
    let payload = raw(json!({"content": [{"type": "text", "text": "done"}]}));
    match p.handle_result(Ok(payload)) {
        TaskStep::Completed(r) => assert!(r.get().contains("done")),
        other => panic!("expected the payload, got {other:?}"),
    }
    assert!(p.is_finished());
    assert_eq!(p.poll_timeout(), None);
    assert!(
        matches!(p.handle_result(Ok(raw(json!({})))), TaskStep::Lost(_)),
        "a second end is never reported as an end"
    );
}

#[test]
fn a_failed_task_ends_with_the_error_of_tasks_result() {
    let (mut p, _, _) = start(json!({}));
    assert!(matches!(
        poll_with(&mut p, task("failed", json!({"statusMessage": "boom"}))),
        TaskStep::ResultReady
    ));
    let step = p.handle_result(Err(ErrorObject::new(-32603, "tool crashed")));
    assert!(matches!(step, TaskStep::Failed(ref e) if e.message == "tool crashed"));
    assert_eq!(p.status(), &TaskStatus::Failed);
}

#[test]
fn a_cancelled_task_ends_without_tasks_result() {
    let (mut p, _, _) = start(json!({}));
    let step = poll_with(&mut p, task("cancelled", json!({"statusMessage": "stop"})));
    assert!(matches!(step, TaskStep::Cancelled { message: Some(ref m) } if m == "stop"));
    assert!(p.is_finished());
    assert_eq!(p.poll_timeout(), None);
}

#[test]
fn input_required_opens_tasks_result_which_carries_the_servers_requests() {
    let (mut p, _, _) = start(json!({}));
    assert!(matches!(
        poll_with(&mut p, task("input_required", json!({}))),
        TaskStep::ResultReady
    ));
}

#[test]
fn the_ttl_is_a_backstop_counted_from_creation() {
    let (mut p, _, t0) = start(json!({"ttl": 2000, "pollInterval": 1500}));
    let step = poll_with(
        &mut p,
        task("working", json!({"ttl": 2000, "pollInterval": 1500})),
    );
    assert!(matches!(step, TaskStep::Working { .. }));
    // The next poll (3000 ms) is after the TTL (2000 ms): the backstop fires first.
    assert_eq!(p.poll_timeout(), Some(t0 + Duration::from_secs(2)));
    assert!(p.handle_timeout(t0 + Duration::from_millis(1999)).is_none());
    assert!(matches!(
        p.handle_timeout(t0 + Duration::from_secs(2)),
        Some(TaskStep::Expired)
    ));
    assert!(
        p.handle_timeout(t0 + Duration::from_secs(3)).is_none(),
        "once"
    );
    assert_eq!(p.poll_timeout(), None);
}

#[test]
fn a_null_ttl_is_unlimited_and_the_poll_interval_is_clamped() {
    let (p, _, t0) = start(json!({"ttl": null, "pollInterval": 1}));
    assert_eq!(p.poll_timeout(), Some(t0 + TaskPolicy::default().min_poll));
    let (p, _, t0) = start(json!({"ttl": null, "pollInterval": u64::MAX}));
    assert_eq!(p.poll_timeout(), Some(t0 + TaskPolicy::default().max_poll));
}

#[test]
fn a_status_notification_is_used_when_it_comes_but_never_needed() {
    let (mut p, _, t0) = start(json!({}));
    let other = raw(task("completed", json!({"taskId": "t2"})));
    assert!(
        p.handle_status(t0, &other).is_none(),
        "another task's status"
    );
    assert!(p.handle_status(t0, &raw(json!({"nonsense": 1}))).is_none());
    let done = raw(task("completed", json!({})));
    assert!(matches!(
        p.handle_status(t0, &done),
        Some(TaskStep::ResultReady)
    ));
    assert!(p.handle_status(t0, &done).is_none(), "reported once");
    // A poll that was in flight when the notification came changes nothing.
    let late = p.handle_get(t0, Ok(&raw(task("working", json!({})))));
    assert!(matches!(late, TaskStep::Working { .. }));
    assert!(p.poll(t0 + Duration::from_secs(10)).is_none());
}

#[test]
fn garbage_from_the_server_is_a_typed_loss_never_a_panic() {
    let t0 = Instant::now();
    for bad in [
        json!({}),
        json!({"task": 1}),
        json!({"task": {"status": "working"}}),
    ] {
        assert!(TaskPoller::from_create_task(&raw(bad), t0, TaskPolicy::default()).is_err());
    }
    let (mut p, _, _) = start(json!({}));
    let at = p.poll_timeout().unwrap();
    let _ = p.poll(at);
    assert!(matches!(
        p.handle_get(at, Err(ErrorObject::new(-32602, "unknown task"))),
        TaskStep::Lost(_)
    ));
    assert!(p.is_finished());
}

mod exactly_once {
    use proptest::prelude::*;

    use super::*;

    #[derive(Clone, Debug)]
    enum Op {
        Get(&'static str),
        GetError,
        Status(&'static str),
        Result(bool),
        Advance(u64),
    }

    fn op() -> impl Strategy<Value = Op> {
        let status = prop::sample::select(vec![
            "working",
            "input_required",
            "completed",
            "failed",
            "cancelled",
            "paused",
        ]);
        prop_oneof![
            status.clone().prop_map(Op::Get),
            Just(Op::GetError),
            status.prop_map(Op::Status),
            any::<bool>().prop_map(Op::Result),
            (0u64..5000).prop_map(Op::Advance),
        ]
    }

    proptest! {
        /// Any order of polls, answers, notifications, results and clock steps: at most one
        /// terminal step, and after it the poller asks for nothing.
        #[test]
        fn every_task_ends_at_most_once(ops in prop::collection::vec(op(), 0..40)) {
            let (mut p, first, mut now) = start(json!({"ttl": 20000}));
            let mut ends = usize::from(first.is_terminal());
            let mut result_open = false;
            for op in ops {
                let step = match op {
                    Op::Get(s) => p.poll(now).map(|_| p.handle_get(now, Ok(&raw(task(s, json!({})))))),
                    Op::GetError => p.poll(now).map(|_| p.handle_get(now, Err(ErrorObject::new(-1, "x")))),
                    Op::Status(s) => p.handle_status(now, &raw(task(s, json!({})))),
                    Op::Result(ok) if result_open && !p.is_finished() => {
                        result_open = false;
                        Some(p.handle_result(if ok { Ok(raw(json!({}))) } else { Err(ErrorObject::new(-1, "x")) }))
                    }
                    Op::Result(_) => None,
                    Op::Advance(ms) => {
                        now += Duration::from_millis(ms);
                        p.handle_timeout(now)
                    }
                };
                match step {
                    Some(TaskStep::ResultReady) => {
                        prop_assert!(!result_open, "tasks/result asked for twice");
                        result_open = true;
                    }
                    // A late answer after the end is reported as a loss by design; it is
                    // only possible when a poll was in flight, which `poll` prevents here.
                    Some(s) if s.is_terminal() => ends += 1,
                    _ => {}
                }
                prop_assert!(ends <= 1, "ended {ends} times");
                if p.is_finished() {
                    prop_assert_eq!(p.poll_timeout(), None);
                    prop_assert!(p.poll(now + Duration::from_secs(3600)).is_none());
                }
            }
        }
    }
}
