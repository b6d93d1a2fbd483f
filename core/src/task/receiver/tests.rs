//! The receiver table over a virtual clock: accept, get, result blocking then completing,
//! cancel, unknown ids, ttl expiry, a full table, pagination, timestamps.

use serde_json::json;

use super::*;

fn raw(v: serde_json::Value) -> Box<RawValue> {
    serde_json::value::to_raw_value(&v).unwrap()
}

fn table(policy: ReceiverPolicy) -> (TaskTable, Instant) {
    let t0 = Instant::now();
    // 2025-11-25T10:30:00Z
    let wall = WallClock::new(t0, 1_764_066_600_000);
    (TaskTable::new(policy, Some(wall)), t0)
}

#[test]
fn accept_gives_a_working_task_with_the_clamped_ttl_and_a_poll_interval() {
    let (mut t, t0) = table(ReceiverPolicy::default());
    let task = t.accept(t0, Some(60_000)).unwrap();
    assert_eq!(task.task_id, "client-task-0");
    assert_eq!(task.status, TaskStatus::Working);
    assert_eq!(task.ttl, Some(60_000));
    assert_eq!(task.poll_interval, Some(1000));
    assert_eq!(task.created_at, "2025-11-25T10:30:00.000Z");
    // Too long: lowered to max_ttl; absent: default_ttl; too short: raised to min_ttl.
    assert_eq!(t.accept(t0, Some(u64::MAX)).unwrap().ttl, Some(3_600_000));
    assert_eq!(t.accept(t0, None).unwrap().ttl, Some(600_000));
    assert_eq!(t.accept(t0, Some(0)).unwrap().ttl, Some(1000));
    assert_eq!(t.len(), 4);
}

#[test]
fn get_while_working_then_result_blocks_until_the_handler_answers() {
    let (mut t, t0) = table(ReceiverPolicy::default());
    let id = t.accept(t0, None).unwrap().task_id;
    assert_eq!(t.get(&id).unwrap().status, TaskStatus::Working);
    assert!(matches!(
        t.result(&id, Id::from(7u64)).unwrap(),
        ResultAnswer::Waiting
    ));
    let later = t0 + Duration::from_secs(2);
    let ended = t
        .finish(later, &id, Ok(raw(json!({"action": "accept"}))))
        .expect("the task was running");
    assert_eq!(ended.task.status, TaskStatus::Completed);
    assert_eq!(ended.task.last_updated_at, "2025-11-25T10:30:02.000Z");
    assert_eq!(
        ended.task.poll_interval, None,
        "a terminal task is not polled"
    );
    assert_eq!(ended.answers.len(), 1);
    let (wire, answer) = &ended.answers[0];
    assert_eq!(wire, &Id::from(7u64));
    assert_eq!(answer.as_ref().unwrap().get(), r#"{"action":"accept"}"#);
    // Later requests get the same result at once, and a second answer changes nothing.
    match t.result(&id, Id::from(8u64)).unwrap() {
        ResultAnswer::Ready(Ok(r)) => assert!(r.get().contains("accept")),
        other => panic!("expected the result, got {other:?}"),
    }
    assert!(t.finish(later, &id, Ok(raw(json!({})))).is_none());
    assert_eq!(t.get(&id).unwrap().status, TaskStatus::Completed);
}

#[test]
fn a_handler_error_fails_the_task_and_is_what_tasks_result_returns() {
    let (mut t, t0) = table(ReceiverPolicy::default());
    let id = t.accept(t0, None).unwrap().task_id;
    let ended = t
        .finish(t0, &id, Err(ErrorObject::new(-1, "user declined")))
        .unwrap();
    assert_eq!(ended.task.status, TaskStatus::Failed);
    assert_eq!(ended.task.status_message.as_deref(), Some("user declined"));
    match t.result(&id, Id::from(1u64)).unwrap() {
        ResultAnswer::Ready(Err(e)) => {
            assert_eq!((e.code, e.message.as_str()), (-1, "user declined"))
        }
        other => panic!("expected the error, got {other:?}"),
    }
}

#[test]
fn cancel_ends_the_task_answers_waiters_and_refuses_a_second_cancel() {
    let (mut t, t0) = table(ReceiverPolicy::default());
    let id = t.accept(t0, None).unwrap().task_id;
    assert!(matches!(
        t.result(&id, Id::from(3u64)).unwrap(),
        ResultAnswer::Waiting
    ));
    let ended = t.cancel(t0, &id).unwrap();
    assert_eq!(ended.task.status, TaskStatus::Cancelled);
    assert_eq!(ended.answers.len(), 1);
    assert!(ended.answers[0].1.is_err());
    let again = t.cancel(t0, &id).unwrap_err();
    assert_eq!(again.code, ErrorObject::INVALID_PARAMS);
    assert!(
        again.message.contains("already cancelled"),
        "{}",
        again.message
    );
    // The handler's late answer is dropped; the result stays an error.
    assert!(t.finish(t0, &id, Ok(raw(json!({})))).is_none());
    assert!(matches!(
        t.result(&id, Id::from(4u64)).unwrap(),
        ResultAnswer::Ready(Err(_))
    ));
    // A completed task cannot be cancelled either.
    let done = t.accept(t0, None).unwrap().task_id;
    let _ = t.finish(t0, &done, Ok(raw(json!({}))));
    assert_eq!(
        t.cancel(t0, &done).unwrap_err().code,
        ErrorObject::INVALID_PARAMS
    );
}

#[test]
fn unknown_ids_and_bad_cursors_are_invalid_params() {
    let (mut t, t0) = table(ReceiverPolicy::default());
    assert_eq!(t.get("nope").unwrap_err().code, ErrorObject::INVALID_PARAMS);
    assert_eq!(
        t.result("nope", Id::from(1u64)).unwrap_err().code,
        ErrorObject::INVALID_PARAMS
    );
    assert_eq!(
        t.cancel(t0, "nope").unwrap_err().code,
        ErrorObject::INVALID_PARAMS
    );
    for cursor in ["x", "-1", "99"] {
        assert_eq!(
            t.list(Some(cursor)).unwrap_err().code,
            ErrorObject::INVALID_PARAMS,
            "{cursor}"
        );
    }
    assert!(t.finish(t0, "nope", Ok(raw(json!({})))).is_none());
}

#[test]
fn ttl_expiry_removes_the_task_whatever_its_status() {
    let (mut t, t0) = table(ReceiverPolicy::default());
    let running = t.accept(t0, Some(5_000)).unwrap().task_id;
    let done = t.accept(t0, Some(10_000)).unwrap().task_id;
    let _ = t.finish(t0, &done, Ok(raw(json!({}))));
    assert!(matches!(
        t.result(&running, Id::from(9u64)).unwrap(),
        ResultAnswer::Waiting
    ));
    assert_eq!(t.next_expiry(), Some(t0 + Duration::from_secs(5)));
    assert!(t.expire(t0 + Duration::from_millis(4_999)).is_empty());
    let gone = t.expire(t0 + Duration::from_secs(5));
    assert_eq!(gone.len(), 1);
    assert_eq!(gone[0].task_id, running);
    assert!(gone[0].was_running);
    assert_eq!(gone[0].waiting, vec![Id::from(9u64)]);
    assert_eq!(gone[0].error().code, ErrorObject::INVALID_PARAMS);
    assert_eq!(
        t.get(&running).unwrap_err().code,
        ErrorObject::INVALID_PARAMS
    );
    assert_eq!(t.next_expiry(), Some(t0 + Duration::from_secs(10)));
    let gone = t.expire(t0 + Duration::from_secs(10));
    assert!(!gone[0].was_running);
    assert!(t.is_empty());
    assert_eq!(t.next_expiry(), None);
}

#[test]
fn a_full_table_refuses_until_a_task_expires() {
    let policy = ReceiverPolicy {
        max_tasks: 2,
        ..ReceiverPolicy::default()
    };
    let (mut t, t0) = table(policy);
    t.accept(t0, Some(1_000)).unwrap();
    t.accept(t0, Some(60_000)).unwrap();
    let full = t.accept(t0, None).unwrap_err();
    assert_eq!(full.code, ErrorObject::INTERNAL_ERROR);
    assert_eq!(t.len(), 2);
    let _ = t.expire(t0 + Duration::from_secs(1));
    assert_eq!(
        t.accept(t0 + Duration::from_secs(1), None).unwrap().task_id,
        "client-task-2"
    );
}

#[test]
fn waiting_results_per_task_are_bounded() {
    let policy = ReceiverPolicy {
        max_waiting_results: 1,
        ..ReceiverPolicy::default()
    };
    let (mut t, t0) = table(policy);
    let id = t.accept(t0, None).unwrap().task_id;
    assert!(matches!(
        t.result(&id, Id::from(1u64)).unwrap(),
        ResultAnswer::Waiting
    ));
    assert_eq!(
        t.result(&id, Id::from(2u64)).unwrap_err().code,
        ErrorObject::INTERNAL_ERROR
    );
}

#[test]
fn list_pages_oldest_first_with_a_cursor() {
    let policy = ReceiverPolicy {
        page_size: 2,
        ..ReceiverPolicy::default()
    };
    let (mut t, t0) = table(policy);
    for _ in 0..5 {
        t.accept(t0, None).unwrap();
    }
    let mut seen = Vec::new();
    let mut cursor = None;
    loop {
        let page = t.list(cursor.as_deref()).unwrap();
        assert!(page.tasks.len() <= 2);
        seen.extend(page.tasks.into_iter().map(|task| task.task_id));
        match page.next_cursor {
            Some(c) => cursor = Some(c),
            None => break,
        }
    }
    let expected: Vec<String> = (0..5).map(|i| format!("client-task-{i}")).collect();
    assert_eq!(seen, expected);
    assert!(t.list(None).unwrap().next_cursor.is_some());
}

#[test]
fn timestamps_are_iso8601_utc() {
    assert_eq!(iso8601_utc(0), "1970-01-01T00:00:00.000Z");
    assert_eq!(iso8601_utc(951_782_400_123), "2000-02-29T00:00:00.123Z");
    assert_eq!(iso8601_utc(1_764_066_600_000), "2025-11-25T10:30:00.000Z");
    let t0 = Instant::now();
    let wall = WallClock::new(t0 + Duration::from_secs(1), 5_000);
    assert_eq!(wall.millis_at(t0), 4_000, "before the anchor counts back");
}

mod invariants {
    use std::collections::HashSet;

    use proptest::prelude::*;

    use super::*;

    #[derive(Clone, Debug)]
    enum Op {
        Accept(Option<u64>),
        Result(u64),
        Finish(u64, bool),
        Cancel(u64),
        Get(u64),
        Advance(u64),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            prop::option::of(0u64..20_000).prop_map(Op::Accept),
            (0u64..8).prop_map(Op::Result),
            (0u64..8, any::<bool>()).prop_map(|(t, ok)| Op::Finish(t, ok)),
            (0u64..8).prop_map(Op::Cancel),
            (0u64..8).prop_map(Op::Get),
            (0u64..6_000).prop_map(Op::Advance),
        ]
    }

    proptest! {
        /// Any order of accepts, results, handler answers, cancels and clock steps: the table
        /// never holds more than its bound, every blocked `tasks/result` is answered exactly
        /// once, and after the longest ttl nothing is left.
        #[test]
        fn every_waiting_result_is_answered_exactly_once(ops in prop::collection::vec(op(), 0..60)) {
            let policy = ReceiverPolicy {
                max_tasks: 3,
                max_ttl: Duration::from_secs(20),
                ..ReceiverPolicy::default()
            };
            let (mut t, mut now) = table(policy);
            let mut wire = 0u64;
            let mut waiting: HashSet<Id> = HashSet::new();
            let mut answered: HashSet<Id> = HashSet::new();
            let mut settle = |ids: Vec<Id>, waiting: &mut HashSet<Id>| -> Result<(), TestCaseError> {
                for id in ids {
                    prop_assert!(waiting.remove(&id), "{id:?} answered but not waiting");
                    prop_assert!(answered.insert(id.clone()), "{id:?} answered twice");
                }
                Ok(())
            };
            for op in ops {
                let name = |n: u64| format!("client-task-{n}");
                match op {
                    Op::Accept(ttl) => {
                        let _ = t.accept(now, ttl);
                    }
                    Op::Result(n) => {
                        wire += 1;
                        if let Ok(ResultAnswer::Waiting) = t.result(&name(n), Id::from(wire)) {
                            waiting.insert(Id::from(wire));
                        }
                    }
                    Op::Finish(n, ok) => {
                        let outcome = if ok { Ok(raw(json!({}))) } else { Err(ErrorObject::new(-1, "no")) };
                        if let Some(ended) = t.finish(now, &name(n), outcome) {
                            settle(ended.answers.into_iter().map(|(id, _)| id).collect(), &mut waiting)?;
                        }
                    }
                    Op::Cancel(n) => {
                        if let Ok(ended) = t.cancel(now, &name(n)) {
                            settle(ended.answers.into_iter().map(|(id, _)| id).collect(), &mut waiting)?;
                        }
                    }
                    Op::Get(n) => {
                        if let Ok(task) = t.get(&name(n)) {
                            prop_assert!(task.ttl.is_some(), "never unlimited");
                        }
                    }
                    Op::Advance(ms) => {
                        now += Duration::from_millis(ms);
                        for gone in t.expire(now) {
                            settle(gone.waiting, &mut waiting)?;
                        }
                    }
                }
                prop_assert!(t.len() <= 3);
            }
            for gone in t.expire(now + Duration::from_secs(20)) {
                settle(gone.waiting, &mut waiting)?;
            }
            prop_assert!(t.is_empty());
            prop_assert!(waiting.is_empty(), "never answered: {waiting:?}");
        }
    }
}
