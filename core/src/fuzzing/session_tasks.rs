//! Task messages of protocol 2025-11-25 in the session fuzz body: `CreateTaskResult` answers,
//! task requests (`tools/call` with `params.task`, `tasks/get`, `tasks/result`, `tasks/list`,
//! `tasks/cancel`), `notifications/tasks/status`, task-augmented server requests, detached
//! `tasks/cancel` requests and their answers; and a [`TaskPoller`] seeded from each task a
//! `tools/call` created, fed `tasks/get` answers, status notifications, `tasks/result` answers
//! and the clock.
//!
//! Invariants, beyond the session's: each poller ends at most once (one terminal step), asks
//! for `tasks/result` at most once, and asks for nothing once ended; peer input never panics.

use std::borrow::Cow;
use std::collections::HashSet;

use serde_json::value::RawValue;

use super::ops::Ops;
use crate::jsonrpc::ErrorObject;
use crate::session::{RequestHandle, RequestOptions, Session};
use crate::task::{TaskPolicy, TaskPoller, TaskStep};
use crate::time::{Duration, Instant};

/// Statuses as a server may send them: the five of the spec, one unknown, one empty.
const STATUSES: [&str; 7] = [
    "working",
    "input_required",
    "completed",
    "failed",
    "cancelled",
    "paused",
    "",
];

/// At most this many tasks are followed at once (a bound on the harness, not the client).
const MAX_FOLLOWED: usize = 4;
/// At most this many detached requests are remembered for answers.
const MAX_DETACHED: usize = 8;

/// The `initialize` result of a server of 2025-11-25 that runs tasks.
pub(super) const TASKS_INITIALIZE: &[u8] = br#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}},"serverInfo":{"name":"f","version":"1"}}}"#;

/// One task followed by a poller, with what the harness expects of it.
struct Followed {
    poller: TaskPoller,
    ended: bool,
    result_open: bool,
}

impl Followed {
    fn take(&mut self, step: TaskStep) {
        match step {
            TaskStep::ResultReady => {
                assert!(!self.ended, "tasks/result asked for after the end");
                assert!(!self.result_open, "tasks/result asked for twice");
                self.result_open = true;
            }
            s if s.is_terminal() => {
                assert!(!self.ended, "a task ended twice: {s:?}");
                self.ended = true;
                self.result_open = false;
            }
            _ => {}
        }
        if self.ended {
            assert!(self.poller.is_finished());
            assert_eq!(
                self.poller.poll_timeout(),
                None,
                "an ended task asks for more"
            );
        }
    }
}

/// The harness's task state: which calls were task-augmented, the tasks followed, the wire
/// ids of detached requests.
#[derive(Default)]
pub(super) struct Tasks {
    calls: HashSet<RequestHandle>,
    followed: Vec<Followed>,
    pub(super) detached: Vec<serde_json::Value>,
}

impl Tasks {
    /// A request completed: when it was a task-augmented `tools/call` answered with a
    /// `CreateTaskResult`, a poller starts following the task.
    pub(super) fn completed(&mut self, handle: RequestHandle, result: &RawValue, now: Instant) {
        if !self.calls.remove(&handle) || self.followed.len() >= MAX_FOLLOWED {
            return;
        }
        if let Ok((poller, step)) = TaskPoller::from_create_task(result, now, TaskPolicy::default())
        {
            let mut f = Followed {
                poller,
                ended: false,
                result_open: false,
            };
            f.take(step);
            self.followed.push(f);
        }
    }

    /// Sends a task request (`tools/call` with `params.task` is remembered as a task call);
    /// its handle, when the session took it.
    pub(super) fn send_request(
        &mut self,
        ops: &mut Ops,
        session: &mut Session,
        now: Instant,
    ) -> Option<RequestHandle> {
        let method = [
            "tools/call",
            "tasks/get",
            "tasks/result",
            "tasks/list",
            "tasks/cancel",
        ][ops.byte() as usize % 5];
        let params = match method {
            "tools/call" => format!(
                r#"{{"name":"slow","arguments":{{}},"task":{{"ttl":{}}}}}"#,
                ops.u16()
            ),
            "tasks/list" => "{}".to_owned(),
            _ => format!(r#"{{"taskId":"t{}"}}"#, ops.byte() % 3),
        };
        let params = RawValue::from_string(params).ok()?;
        let opts = if ops.byte().is_multiple_of(2) {
            RequestOptions::new()
        } else {
            RequestOptions::new().timeout(Duration::from_millis(u64::from(ops.u16())))
        };
        let h = session
            .send_request(now, method, Some(params.into()), opts)
            .ok()?;
        if method == "tools/call" {
            self.calls.insert(h);
        }
        Some(h)
    }

    /// Queues a detached `tasks/cancel` (its wire id is noted when it is sent).
    pub(super) fn send_detached(ops: &mut Ops, session: &mut Session) {
        let params = format!(r#"{{"taskId":"t{}"}}"#, ops.byte() % 3);
        if let Ok(params) = RawValue::from_string(params) {
            let _ = session.send_detached_request(Cow::Borrowed("tasks/cancel"), Some(params));
        }
    }

    /// Notes a detached request seen on the wire (an id and no handle).
    pub(super) fn note_detached(&mut self, id: serde_json::Value) {
        if self.detached.len() < MAX_DETACHED {
            self.detached.push(id);
        }
    }

    /// A status notification's params reach every follower (each keeps only its own task).
    pub(super) fn status(&mut self, params: &RawValue, now: Instant) {
        for f in self.followed.iter_mut().filter(|f| !f.ended) {
            // Between polls, as the driver takes them in.
            if let Some(step) = f.poller.handle_status(now, params) {
                f.take(step);
            }
        }
    }

    /// One step of one follower: a poll and its answer, the clock, or `tasks/result`'s answer.
    pub(super) fn step(&mut self, ops: &mut Ops, now: Instant) {
        if self.followed.is_empty() {
            return;
        }
        let i = ops.byte() as usize % self.followed.len();
        let choice = ops.byte();
        let answer = task_json(ops);
        let f = &mut self.followed[i];
        if f.ended {
            // Asks for nothing, whatever the time.
            assert!(f.poller.poll(now + Duration::from_secs(3600)).is_none());
            assert!(f.poller.handle_timeout(now).is_none());
            return;
        }
        match choice % 4 {
            0 if f.poller.poll(now).is_some() => {
                let step = match RawValue::from_string(answer) {
                    Ok(raw) if choice & 0x10 == 0 => f.poller.handle_get(now, Ok(&raw)),
                    _ => f
                        .poller
                        .handle_get(now, Err(ErrorObject::new(-32602, "no"))),
                };
                f.take(step);
            }
            1 => {
                if let Some(step) = f.poller.handle_timeout(now) {
                    f.take(step);
                }
            }
            2 if f.result_open => {
                f.result_open = false;
                let answer = if choice & 0x10 == 0 {
                    RawValue::from_string(r#"{"content":[]}"#.to_owned())
                        .map_err(|e| ErrorObject::new(-32603, e.to_string()))
                } else {
                    Err(ErrorObject::new(-32603, "the tool failed"))
                };
                let step = f.poller.handle_result(answer);
                f.take(step);
            }
            _ => {}
        }
    }
}

/// A task as a server may send it (in a `CreateTaskResult`, a `tasks/get` answer or a status
/// notification), odd values included: unknown statuses, negative, fractional, huge or
/// non-numeric ttl and pollInterval, another task's id, or not a task at all.
pub(super) fn task_json(ops: &mut Ops) -> String {
    let b = ops.byte();
    if b == 0xff {
        return r#"{"nonsense":[1,2]}"#.to_owned();
    }
    let status = STATUSES[b as usize % STATUSES.len()];
    let id = ops.byte() % 3;
    let ttl = match ops.byte() % 6 {
        0 => "null".to_owned(),
        1 => "-5".to_owned(),
        2 => "1e300".to_owned(),
        3 => "\"soon\"".to_owned(),
        _ => ops.u16().to_string(),
    };
    let poll = match ops.byte() % 5 {
        0 => String::new(),
        1 => r#","pollInterval":-1"#.to_owned(),
        2 => r#","pollInterval":2.5"#.to_owned(),
        _ => format!(r#","pollInterval":{}"#, ops.u16()),
    };
    format!(
        r#"{{"taskId":"t{id}","status":"{status}","statusMessage":"m","createdAt":"x","lastUpdatedAt":"y","ttl":{ttl}{poll}}}"#
    )
}

/// A server request of 2025-11-25 that is task-augmented (sampling, elicitation) or asks the
/// client about its own tasks, with server id `sid`.
pub(super) fn server_request(ops: &mut Ops, sid: u64) -> String {
    let method = [
        "sampling/createMessage",
        "elicitation/create",
        "tasks/get",
        "tasks/result",
        "tasks/list",
        "tasks/cancel",
    ][ops.byte() as usize % 6];
    let task = ops.byte() % 3;
    let params = match method {
        "sampling/createMessage" => format!(
            r#"{{"messages":[],"maxTokens":1,"task":{{"ttl":{}}},"_meta":{{"io.modelcontextprotocol/related-task":{{"taskId":"t{task}"}}}}}}"#,
            ops.u16()
        ),
        "elicitation/create" => format!(
            r#"{{"message":"x","requestedSchema":{{"type":"object"}},"task":{{}},"_meta":{{"io.modelcontextprotocol/related-task":{{"taskId":"t{task}"}}}}}}"#
        ),
        "tasks/list" => "{}".to_owned(),
        _ => format!(r#"{{"taskId":"t{task}"}}"#),
    };
    format!(r#"{{"jsonrpc":"2.0","id":"s{sid}","method":"{method}","params":{params}}}"#)
}
