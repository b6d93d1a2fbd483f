//! The task poller over a virtual clock: intervals (clamped, updated), the TTL backstop,
//! terminal states, input dedup, peer garbage.

use serde_json::{Value, json};

use super::*;

fn raw(v: Value) -> Box<RawValue> {
    serde_json::value::to_raw_value(&v).unwrap()
}

fn created(extra: Value) -> Box<RawValue> {
    let mut v = json!({
        "resultType": "task",
        "taskId": "t1",
        "status": "working",
        "createdAt": "2026-07-28T10:00:00Z",
        "lastUpdatedAt": "2026-07-28T10:00:00Z",
        "ttlMs": 60000,
        "pollIntervalMs": 500
    });
    if let (Some(base), Some(more)) = (v.as_object_mut(), extra.as_object()) {
        base.extend(more.clone());
    }
    raw(v)
}

fn got(status: &str, extra: Value) -> Box<RawValue> {
    let mut v = json!({
        "resultType": "complete",
        "taskId": "t1",
        "status": status,
        "createdAt": "2026-07-28T10:00:00Z",
        "lastUpdatedAt": "2026-07-28T10:00:01Z",
        "ttlMs": 60000
    });
    if let (Some(base), Some(more)) = (v.as_object_mut(), extra.as_object()) {
        base.extend(more.clone());
    }
    raw(v)
}

fn start(extra: Value) -> (TaskPoller, TaskStep, Instant) {
    let t0 = Instant::now();
    let (p, step) = TaskPoller::new(&created(extra), t0, TaskPolicy::default()).expect("a task");
    (p, step, t0)
}

#[test]
fn polls_at_the_servers_interval_one_get_at_a_time_until_completed() {
    let (mut p, step, t0) = start(json!({}));
    assert!(matches!(step, TaskStep::Working { .. }));
    assert_eq!(p.task_id(), "t1");
    let due = t0 + Duration::from_millis(500);
    assert_eq!(p.poll_timeout(), Some(due));
    assert!(
        p.poll(due - Duration::from_millis(1)).is_none(),
        "not before it is due"
    );
    let params = p.poll(due).expect("due");
    assert_eq!(
        serde_json::to_value(&params).unwrap(),
        json!({"taskId": "t1"})
    );
    assert!(p.poll(due).is_none(), "one tasks/get in flight");
    // Only the TTL backstop is armed while the get is in flight.
    assert_eq!(p.poll_timeout(), Some(t0 + Duration::from_secs(60)));
    let t1 = due + Duration::from_millis(30);
    let step = p.handle_get(t1, Ok(&got("working", json!({"pollIntervalMs": 2000}))));
    assert!(matches!(step, TaskStep::Working { .. }));
    assert_eq!(
        p.poll_timeout(),
        Some(t1 + Duration::from_secs(2)),
        "the new interval"
    );
    let t2 = t1 + Duration::from_secs(2);
    let _ = p.poll(t2).expect("due");
    let result = json!({"content": [{"type": "text", "text": "done"}], "isError": false});
    match p.handle_get(t2, Ok(&got("completed", json!({"result": result})))) {
        TaskStep::Completed(r) => {
            assert_eq!(serde_json::from_str::<Value>(r.get()).unwrap(), result);
        }
        other => panic!("{other:?}"),
    }
    assert!(p.is_finished());
    assert_eq!(p.poll_timeout(), None);
    assert!(p.poll(t2 + Duration::from_secs(10)).is_none());
    assert!(p.handle_timeout(t2 + Duration::from_secs(3600)).is_none());
}

#[test]
fn peer_intervals_are_clamped_and_absent_ones_default() {
    let policy = TaskPolicy::default();
    for (given, want) in [
        (json!(0), policy.min_poll),
        (json!(5), policy.min_poll),
        (json!(u64::MAX), policy.max_poll),
        (json!(1e300), policy.max_poll),
        (json!(-4), policy.default_poll),
        (json!("soon"), policy.default_poll),
        (json!(250.9), Duration::from_millis(250)),
    ] {
        let (p, _, t0) = start(json!({"pollIntervalMs": given.clone(), "ttlMs": null}));
        assert_eq!(p.poll_timeout(), Some(t0 + want), "pollIntervalMs {given}");
    }
    let t0 = Instant::now();
    let mut v: Value = serde_json::from_str(created(json!({})).get()).unwrap();
    v.as_object_mut().unwrap().remove("pollIntervalMs");
    let (p, _) = TaskPoller::new(&raw(v), t0, policy).unwrap();
    assert_eq!(p.poll_timeout(), Some(t0 + policy.default_poll));
}

#[test]
fn the_ttl_backstop_expires_an_unfinished_task_once_and_null_means_unlimited() {
    let (mut p, _, t0) = start(json!({"ttlMs": 1000, "pollIntervalMs": 5000}));
    assert_eq!(p.poll_timeout(), Some(t0 + Duration::from_secs(1)));
    assert!(p.handle_timeout(t0 + Duration::from_millis(999)).is_none());
    assert!(matches!(
        p.handle_timeout(t0 + Duration::from_secs(1)),
        Some(TaskStep::Expired)
    ));
    assert!(
        p.handle_timeout(t0 + Duration::from_secs(2)).is_none(),
        "once"
    );
    assert_eq!(p.poll_timeout(), None);
    // A huge TTL is clamped; `null` lifts the backstop.
    let max = TaskPolicy::default().max_ttl.unwrap();
    let (mut p2, _, t2) = start(json!({"ttlMs": null, "pollIntervalMs": 100}));
    assert!(
        p2.handle_timeout(t2 + max + Duration::from_secs(1))
            .is_none()
    );
    let (mut p3, _, t3) = start(json!({"ttlMs": u64::MAX}));
    assert!(
        p3.handle_timeout(t3 + max - Duration::from_secs(1))
            .is_none()
    );
    assert!(matches!(
        p3.handle_timeout(t3 + max),
        Some(TaskStep::Expired)
    ));
    // A later answer may extend the TTL (still counted from when the task was first seen).
    let (mut p4, _, t4) = start(json!({"ttlMs": 1000, "pollIntervalMs": 100}));
    let _ = p4.poll(t4 + Duration::from_millis(100)).unwrap();
    let _ = p4.handle_get(
        t4 + Duration::from_millis(150),
        Ok(&got("working", json!({"ttlMs": 10000}))),
    );
    assert!(p4.handle_timeout(t4 + Duration::from_secs(5)).is_none());
}

#[test]
fn failed_and_cancelled_are_terminal_and_a_failed_get_loses_the_task() {
    let (mut p, _, t0) = start(json!({}));
    let at = t0 + Duration::from_millis(500);
    let _ = p.poll(at).unwrap();
    let error = json!({"code": -32603, "message": "boom"});
    assert!(matches!(
        p.handle_get(at, Ok(&got("failed", json!({"error": error})))),
        TaskStep::Failed(e) if e.code == -32603
    ));
    let (mut p, _, t0) = start(json!({}));
    let at = t0 + Duration::from_millis(500);
    let _ = p.poll(at).unwrap();
    assert!(matches!(
        p.handle_get(at, Ok(&got("cancelled", json!({"statusMessage": "by request"})))),
        TaskStep::Cancelled { message: Some(m) } if m == "by request"
    ));
    let (mut p, _, t0) = start(json!({}));
    let at = t0 + Duration::from_millis(500);
    let _ = p.poll(at).unwrap();
    let step = p.handle_get(at, Err(ErrorObject::new(-32602, "unknown task")));
    assert!(matches!(step, TaskStep::Lost(_)) && step.is_terminal());
    assert!(p.is_finished());
}

#[test]
fn garbage_and_mismatched_answers_never_panic() {
    let t0 = Instant::now();
    for bad in [
        json!({"resultType": "complete", "taskId": "t1", "status": "working"}),
        json!({"resultType": "task"}),
        json!({"resultType": "task", "taskId": 7, "status": "working"}),
        json!([1, 2]),
    ] {
        assert!(TaskPoller::new(&raw(bad), t0, TaskPolicy::default()).is_err());
    }
    for answer in [
        json!({"taskId": "other", "status": "completed", "result": {}}),
        json!({"taskId": "t1"}),
        json!("nope"),
        json!({"taskId": "t1", "status": "completed"}),
        json!({"taskId": "t1", "status": "failed", "error": "not an object"}),
    ] {
        let (mut p, _, t0) = start(json!({}));
        let at = t0 + Duration::from_millis(500);
        let _ = p.poll(at).unwrap();
        assert!(
            matches!(
                p.handle_get(at, Ok(&raw(answer.clone()))),
                TaskStep::Lost(_)
            ),
            "{answer}"
        );
    }
    // An unknown status keeps polling.
    let (mut p, _, t0) = start(json!({}));
    let at = t0 + Duration::from_millis(500);
    let _ = p.poll(at).unwrap();
    assert!(matches!(
        p.handle_get(at, Ok(&got("paused", json!({})))),
        TaskStep::Working { .. }
    ));
}

#[test]
fn input_requests_surface_once_per_key_and_updates_carry_the_answers() {
    let ask = |keys: &[&str]| {
        let mut m = serde_json::Map::new();
        for k in keys {
            m.insert(
                (*k).into(),
                json!({"method": "elicitation/create", "params": {"message": *k}}),
            );
        }
        json!({"inputRequests": m})
    };
    let (mut p, step, t0) = start(
        json!({"status": "input_required", "inputRequests": {"a": {"method": "roots/list"}}}),
    );
    match step {
        TaskStep::Input { requests } => {
            assert_eq!(requests.len(), 1);
            assert_eq!(requests[0].0, "a");
            assert_eq!(requests[0].1.method, "roots/list");
        }
        other => panic!("{other:?}"),
    }
    let at = t0 + Duration::from_millis(500);
    let _ = p.poll(at).unwrap();
    // `a` again (not answered yet on the server's side) and a new `b`: only `b` surfaces.
    match p.handle_get(at, Ok(&got("input_required", ask(&["a", "b"])))) {
        TaskStep::Input { requests } => {
            let keys: Vec<_> = requests.iter().map(|(k, _)| k.as_str()).collect();
            assert_eq!(keys, ["b"]);
        }
        other => panic!("{other:?}"),
    }
    let at = at + Duration::from_millis(500);
    let _ = p.poll(at).unwrap();
    assert!(matches!(
        p.handle_get(at, Ok(&got("input_required", ask(&["a", "b"])))),
        TaskStep::Working { .. }
    ));
    let update = p
        .update_params(&[("b\"q".into(), raw(json!({"action": "accept"})))])
        .unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(update.get()).unwrap(),
        json!({"taskId": "t1", "inputResponses": {"b\"q": {"action": "accept"}}})
    );
    assert_eq!(
        serde_json::to_value(p.cancel_params()).unwrap(),
        json!({"taskId": "t1"})
    );
}

#[test]
fn a_seed_that_is_already_terminal_finishes_at_once() {
    let (p, step, _) = start(json!({"status": "completed", "result": {"content": []}}));
    assert!(matches!(step, TaskStep::Completed(_)));
    assert!(p.is_finished());
    assert_eq!(p.poll_timeout(), None);
}

#[test]
fn a_status_notification_without_the_payload_asks_tasks_get_at_once_instead_of_losing_the_task() {
    let (mut p, _, t0) = start(json!({}));
    let at = t0 + Duration::from_millis(50);
    let hint = got("completed", json!({}));
    let step = p.handle_status(at, &hint).expect("about this task");
    assert!(matches!(step, TaskStep::Working { .. }), "{step:?}");
    assert!(!p.is_finished(), "a hint never ends the task by itself");
    assert_eq!(p.poll_timeout(), Some(at), "tasks/get is due at once");
    assert!(p.poll(at).is_some());
    let done = got("completed", json!({"result": {"content": []}}));
    assert!(matches!(
        p.handle_get(at, Ok(&done)),
        TaskStep::Completed(_)
    ));
    // A working notification with the payload-free shape is taken in as usual.
    let (mut p, _, t0) = start(json!({}));
    let step = p.handle_status(t0, &got("working", json!({"statusMessage": "half"})));
    assert!(matches!(step, Some(TaskStep::Working { message: Some(m) }) if m == "half"));
    assert_eq!(
        p.poll_timeout(),
        Some(t0 + Duration::from_millis(500)),
        "the next poll stays scheduled"
    );
}
