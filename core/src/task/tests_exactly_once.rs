//! Proptest: every task-augmented call completes exactly once, in both eras (the 2026-07-28
//! extension and protocol 2025-11-25 share the poller).
//!
//! A model of the driver's follower ([`TaskHandle::wait`] in `mcp-driver`) runs the poller
//! through any order of `tasks/get` answers (every status, payload-less, another task's,
//! garbage), failed polls, status notifications (taken in between polls, as the follower
//! does), `tasks/result` answers and errors, clock steps over the ttl, a `tasks/cancel` (whose
//! only effect is what the server answers next), and connection loss (the follower returns
//! the connection's error). Then a well-behaved server finishes the task. Checked:
//!
//! - at most one end at any time, and once ended the poller asks for nothing;
//! - an unfinished task always has something to wait for: a poll in flight, `tasks/result`
//!   open, or a deadline (the next poll or the ttl backstop), so it is never lost;
//! - after the well-behaved server's answers, the task has ended exactly once.
//!
//! [`TaskHandle::wait`]: https://docs.rs/mcp-driver

use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Era {
    /// 2026-07-28: the payload comes with `tasks/get`.
    Extension,
    /// 2025-11-25: `CreateTaskResult`, then `tasks/result` for the payload.
    Initialize,
}

#[derive(Clone, Copy, Debug)]
enum Answer {
    Working,
    InputRequired,
    Completed,
    Failed,
    Cancelled,
    /// A status this client does not know.
    Unknown,
    /// `completed` without its result (2026: unusable; 2025-11-25: the normal shape).
    CompletedWithoutPayload,
    /// About task `t2`.
    OtherTask,
    /// Not a task at all.
    Garbage,
}

#[derive(Clone, Copy, Debug)]
enum Op {
    Advance(u64),
    AnswerGet(Answer),
    FailGet,
    Status(Answer),
    AnswerResult(bool),
    /// The caller cancels: `tasks/cancel` goes out; the server says `cancelled` at the next
    /// poll (queued as that poll's answer).
    Cancel,
    ConnectionLost,
}

fn answer() -> impl Strategy<Value = Answer> {
    prop::sample::select(vec![
        Answer::Working,
        Answer::InputRequired,
        Answer::Completed,
        Answer::Failed,
        Answer::Cancelled,
        Answer::Unknown,
        Answer::CompletedWithoutPayload,
        Answer::OtherTask,
        Answer::Garbage,
    ])
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0u64..8000).prop_map(Op::Advance),
        4 => answer().prop_map(Op::AnswerGet),
        1 => Just(Op::FailGet),
        3 => answer().prop_map(Op::Status),
        2 => any::<bool>().prop_map(Op::AnswerResult),
        1 => Just(Op::Cancel),
        1 => Just(Op::ConnectionLost),
    ]
}

fn raw(v: &Value) -> Box<RawValue> {
    serde_json::value::to_raw_value(v).expect("a JSON value")
}

/// A task state as `era`'s server sends it, in a `tasks/get` answer or a notification.
fn state(era: Era, a: Answer) -> Value {
    let (id, status) = match a {
        Answer::Working => ("t1", "working"),
        Answer::InputRequired => ("t1", "input_required"),
        Answer::Completed | Answer::CompletedWithoutPayload => ("t1", "completed"),
        Answer::Failed => ("t1", "failed"),
        Answer::Cancelled => ("t1", "cancelled"),
        Answer::Unknown => ("t1", "paused"),
        Answer::OtherTask => ("t2", "completed"),
        Answer::Garbage => return json!({"nonsense": [1, 2]}),
    };
    let mut v = json!({
        "taskId": id,
        "status": status,
        "createdAt": "2025-11-25T10:00:00Z",
        "lastUpdatedAt": "2025-11-25T10:00:01Z",
    });
    if era == Era::Extension {
        v["resultType"] = json!("complete");
        match a {
            Answer::Completed | Answer::OtherTask => v["result"] = json!({"content": []}),
            Answer::Failed => v["error"] = json!({"code": -32603, "message": "boom"}),
            Answer::InputRequired => {
                v["inputRequests"] = json!({"k": {"method": "elicitation/create", "params": {}}});
            }
            _ => {}
        }
    }
    v
}

/// The answer to the call that made the task, with `ttl` (`None`: unlimited).
fn created(era: Era, ttl: Option<u64>) -> Box<RawValue> {
    match era {
        Era::Extension => raw(&json!({
            "resultType": "task", "taskId": "t1", "status": "working",
            "ttlMs": ttl, "pollIntervalMs": 500
        })),
        Era::Initialize => raw(&json!({"task": {
            "taskId": "t1", "status": "working",
            "createdAt": "2025-11-25T10:00:00Z", "lastUpdatedAt": "2025-11-25T10:00:00Z",
            "ttl": ttl, "pollInterval": 500
        }})),
    }
}

/// The follower: what the driver holds while it waits for one task.
struct Follower {
    poller: TaskPoller,
    now: Instant,
    get_in_flight: bool,
    result_open: bool,
    /// The server answers the next poll with `cancelled` (after a `tasks/cancel`).
    cancel_acknowledged: bool,
    /// How many times the call ended (a terminal step, or the follower gave up).
    ends: usize,
    /// The follower returned (the poller is no longer driven).
    returned: bool,
}

impl Follower {
    fn start(era: Era, ttl: Option<u64>) -> Follower {
        let now = Instant::now();
        let seeded = match era {
            Era::Extension => TaskPoller::new(&created(era, ttl), now, TaskPolicy::default()),
            Era::Initialize => {
                TaskPoller::from_create_task(&created(era, ttl), now, TaskPolicy::default())
            }
        };
        let (poller, step) = seeded.expect("a task");
        let mut f = Follower {
            poller,
            now,
            get_in_flight: false,
            result_open: false,
            cancel_acknowledged: false,
            ends: 0,
            returned: false,
        };
        f.take(step);
        f
    }

    /// Acts on a step as the follower does.
    fn take(&mut self, step: TaskStep) {
        match step {
            TaskStep::ResultReady => {
                assert!(!self.result_open, "tasks/result asked for twice");
                self.result_open = true;
            }
            s if s.is_terminal() => self.end(),
            // Working; Input (2026: answered with tasks/update, the poller unchanged).
            _ => {}
        }
    }

    fn end(&mut self) {
        self.ends += 1;
        self.returned = true;
    }

    /// Between two ops the follower sleeps until the poller has work and does it.
    fn wake(&mut self) {
        if self.returned || self.get_in_flight {
            return;
        }
        if self.result_open {
            // `tasks/result` is bounded by the ttl: its timeout ends the call.
            if self.poller.result_deadline().is_some_and(|t| self.now >= t) {
                self.end();
            }
            return;
        }
        if let Some(step) = self.poller.handle_timeout(self.now) {
            self.take(step);
        } else if self.poller.poll(self.now).is_some() {
            self.get_in_flight = true;
        }
    }

    fn apply(&mut self, era: Era, op: Op) {
        if self.returned {
            // Stray input after the end reaches nobody in the driver; the poller, if fed
            // anyway, must not end again (checked by the caller).
            return;
        }
        match op {
            Op::Advance(ms) => self.now += Duration::from_millis(ms),
            Op::AnswerGet(a) if self.get_in_flight => {
                self.get_in_flight = false;
                let a = if std::mem::take(&mut self.cancel_acknowledged) {
                    Answer::Cancelled
                } else {
                    a
                };
                let step = self.poller.handle_get(self.now, Ok(&raw(&state(era, a))));
                self.take(step);
            }
            Op::FailGet if self.get_in_flight => {
                self.get_in_flight = false;
                let e = ErrorObject::new(ErrorObject::INVALID_PARAMS, "unknown task");
                let step = self.poller.handle_get(self.now, Err(e));
                self.take(step);
            }
            // Notifications are read while the follower sleeps between polls.
            Op::Status(a) if !self.get_in_flight && !self.result_open => {
                if let Some(step) = self.poller.handle_status(self.now, &raw(&state(era, a))) {
                    self.take(step);
                }
            }
            Op::AnswerResult(ok) if self.result_open => {
                self.result_open = false;
                let answer = if ok {
                    Ok(raw(&json!({"content": []})))
                } else {
                    Err(ErrorObject::new(-32603, "the tool failed"))
                };
                let step = self.poller.handle_result(answer);
                self.take(step);
            }
            Op::Cancel => {
                let params = self.poller.cancel_params();
                assert_eq!(params.task_id, "t1");
                self.cancel_acknowledged = true;
            }
            // The pending request fails with the connection's error: the follower returns it.
            Op::ConnectionLost => self.end(),
            _ => {}
        }
        self.wake();
    }

    /// Never lost: an unfinished, still-followed task has something to wait for.
    fn check_waiting(&self) -> Result<(), TestCaseError> {
        if !self.returned {
            prop_assert!(!self.poller.is_finished(), "finished without an end");
            prop_assert!(
                self.get_in_flight || self.result_open || self.poller.poll_timeout().is_some(),
                "nothing to wait for: the call would hang"
            );
        }
        if self.poller.is_finished() {
            prop_assert_eq!(self.poller.poll_timeout(), None);
        }
        Ok(())
    }

    /// A well-behaved server from now on: polls answered `completed`, `tasks/result` with the
    /// payload. The call must end within a bounded number of steps.
    fn finish(&mut self, era: Era) -> Result<(), TestCaseError> {
        for _ in 0..1000 {
            if self.returned {
                return Ok(());
            }
            if self.result_open {
                self.apply(era, Op::AnswerResult(true));
            } else if self.get_in_flight {
                self.apply(era, Op::AnswerGet(Answer::Completed));
            } else {
                let at = self.poller.poll_timeout();
                prop_assert!(at.is_some(), "an unfinished task with no deadline");
                if let Some(at) = at {
                    self.now = self.now.max(at);
                }
                self.wake();
            }
            self.check_waiting()?;
        }
        prop_assert!(false, "the task never ended");
        Ok(())
    }
}

fn run(era: Era, ttl: Option<u64>, ops: Vec<Op>) -> Result<(), TestCaseError> {
    let mut f = Follower::start(era, ttl);
    f.wake();
    for op in ops {
        f.apply(era, op);
        prop_assert!(f.ends <= 1, "ended {} times", f.ends);
        f.check_waiting()?;
    }
    f.finish(era)?;
    prop_assert_eq!(f.ends, 1, "every call ends exactly once");
    // Whatever else arrives for the finished task, the poller does not end it again.
    if f.poller.is_finished() {
        let late = f
            .poller
            .handle_status(f.now, &raw(&state(era, Answer::Completed)));
        prop_assert!(late.is_none(), "{late:?}");
        prop_assert!(f.poller.poll(f.now + Duration::from_secs(3600)).is_none());
        prop_assert!(
            f.poller
                .handle_timeout(f.now + Duration::from_secs(1 << 30))
                .is_none()
        );
    }
    Ok(())
}

fn ttl() -> impl Strategy<Value = Option<u64>> {
    prop_oneof![Just(None), (0u64..30_000).prop_map(Some)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// 2026-07-28 (the tasks extension).
    #[test]
    fn every_extension_task_call_ends_exactly_once(
        ttl in ttl(),
        ops in prop::collection::vec(op(), 0..60),
    ) {
        run(Era::Extension, ttl, ops)?;
    }

    /// 2025-11-25 (task-augmented `tools/call`, `tasks/result`).
    #[test]
    fn every_initialize_era_task_call_ends_exactly_once(
        ttl in ttl(),
        ops in prop::collection::vec(op(), 0..60),
    ) {
        run(Era::Initialize, ttl, ops)?;
    }
}
