//! The tasks extension of 2026-07-28 (`io.modelcontextprotocol/tasks`): what a client does
//! with a `resultType: "task"` answer, as pure decisions.
//!
//! A server that negotiated the extension may answer `tools/call` with a task
//! (`CreateTaskResult`: `taskId`, `status`, `ttlMs`, `pollIntervalMs`). The client then polls
//! `tasks/get` until the task is terminal (`completed` carries the `result`, `failed` the
//! JSON-RPC `error`, `cancelled` nothing), answers `input_required` tasks through
//! `tasks/update` (each input key at most once), and may ask `tasks/cancel`.
//!
//! [`TaskPoller`] holds one task's polling state. The rules:
//!
//! - The next `tasks/get` is due `pollIntervalMs` after the last answer (the latest value the
//!   server sent), clamped into [`TaskPolicy::min_poll`]..=[`TaskPolicy::max_poll`];
//!   [`TaskPolicy::default_poll`] when the server gave none. Only one `tasks/get` is in flight.
//! - `ttlMs` (the latest value; `null` for unlimited) is a backstop counted from when the task
//!   was first seen, clamped to [`TaskPolicy::max_ttl`]: a task still not terminal when it
//!   elapses is [`TaskStep::Expired`] (the spec lets a client consider it unusable).
//! - Peer durations are clamped and added with `checked_add`; an unrepresentable deadline is
//!   "never".
//! - Input requests surface once per key over the task's life (the spec makes keys unique per
//!   task), so an answer is never sent twice even though every poll repeats them.
//! - A terminal step is reported once; after it the poller asks for nothing more.
//!
//! The poller never reads a clock and does no I/O: the adapter sleeps until
//! [`poll_timeout`](TaskPoller::poll_timeout), sends what [`poll`](TaskPoller::poll) returns,
//! and feeds the answer to [`handle_get`](TaskPoller::handle_get).
//!
//! The same poller follows a task of protocol 2025-11-25 (the initialize era), where the rules
//! agree except for three points, so a caller sees one model in both eras:
//!
//! - The task arrives as a `CreateTaskResult` (`{"task": {...}}`, durations `ttl` and
//!   `pollInterval` in milliseconds): [`TaskPoller::from_create_task`].
//! - `tasks/get` carries the status only. When it turns `completed` or `failed` (or
//!   `input_required`, whose requests the server sends while `tasks/result` is open) the step
//!   is [`TaskStep::ResultReady`]: send `tasks/result` with
//!   [`result_params`](TaskPoller::result_params) and feed its answer to
//!   [`handle_result`](TaskPoller::handle_result), which gives the terminal step (the
//!   payload, or the JSON-RPC error the original request failed with). No `tasks/get` is due
//!   while `tasks/result` is open.
//! - `notifications/tasks/status` may come: [`handle_status`](TaskPoller::handle_status)
//!   takes it in like a `tasks/get` answer, but polling never waits for one.
//!
//! [`augment`] decides whether a `tools/call` of that era carries `params.task` at all.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::jsonrpc::ErrorObject;
use crate::time::{Duration, Instant};
use crate::types::TaskStatus;
use crate::types::v2026::{InputRequest, ResultType};

/// `tasks/get`.
pub const TASKS_GET: &str = "tasks/get";
/// `tasks/update`.
pub const TASKS_UPDATE: &str = "tasks/update";
/// `tasks/cancel`.
pub const TASKS_CANCEL: &str = "tasks/cancel";
/// `tasks/result` (2025-11-25): the payload of a terminal task.
pub const TASKS_RESULT: &str = "tasks/result";
/// `notifications/tasks/status` (2025-11-25).
pub const TASKS_STATUS_NOTIFICATION: &str = "notifications/tasks/status";

pub mod augment;
pub mod receiver;

/// Bounds on what a server may ask of the poller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct TaskPolicy {
    /// The interval when the server suggests none.
    pub default_poll: Duration,
    /// The shortest interval honoured (a server asking for less is polled this often).
    pub min_poll: Duration,
    /// The longest interval honoured.
    pub max_poll: Duration,
    /// The longest lifetime honoured; `None`: a task's `ttlMs` is not a backstop at all.
    pub max_ttl: Option<Duration>,
}

impl Default for TaskPolicy {
    fn default() -> Self {
        TaskPolicy {
            default_poll: Duration::from_secs(1),
            min_poll: Duration::from_millis(100),
            max_poll: Duration::from_secs(60),
            max_ttl: Some(Duration::from_secs(7 * 24 * 3600)),
        }
    }
}

/// The params of `tasks/get` and `tasks/cancel`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskIdParams {
    /// The task.
    pub task_id: String,
}

/// The task fields the poller reads (of a `CreateTaskResult` or a `tasks/get` result).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TaskView {
    task_id: String,
    status: TaskStatus,
    #[serde(default)]
    status_message: Option<String>,
    /// Absent, `null` (unlimited) or a number of milliseconds (`ttl` in 2025-11-25).
    #[serde(default, alias = "ttl")]
    ttl_ms: Option<serde_json::Value>,
    /// `pollInterval` in 2025-11-25.
    #[serde(default, alias = "pollInterval")]
    poll_interval_ms: Option<serde_json::Value>,
    #[serde(default)]
    result: Option<Box<RawValue>>,
    #[serde(default)]
    error: Option<ErrorObject>,
    #[serde(default, deserialize_with = "crate::types::v2026::ordered_map")]
    input_requests: Option<Vec<(String, InputRequest)>>,
}

/// What a `tasks/get` answer (or the clock) means for the caller.
#[derive(Debug)]
#[non_exhaustive]
pub enum TaskStep {
    /// Still running (`working`, or `input_required` with nothing new to answer); poll again
    /// at [`TaskPoller::poll_timeout`].
    Working {
        /// The server's status message, if any.
        message: Option<String>,
    },
    /// The task needs input: answer each request (the same way as a server request of that
    /// method) and send the answers with [`TaskPoller::update_params`]. Only keys not
    /// surfaced before are listed.
    Input {
        /// `(key, request)` in the server's order.
        requests: Vec<(String, InputRequest)>,
    },
    /// Terminal: the result of the original request (for `tools/call`, a `CallToolResult`).
    Completed(Box<RawValue>),
    /// Terminal: the request failed with this JSON-RPC error.
    Failed(ErrorObject),
    /// Terminal: the task was cancelled.
    Cancelled {
        /// The server's status message, if any.
        message: Option<String>,
    },
    /// Terminal here: the task outlived its `ttlMs` without finishing.
    Expired,
    /// Terminal here: `tasks/get` failed (an unknown task, say) or its answer was unreadable.
    Lost(String),
    /// 2025-11-25: the task is ready for `tasks/result` (send it with
    /// [`TaskPoller::result_params`], feed the answer to [`TaskPoller::handle_result`]).
    /// Reported once per task.
    ResultReady,
}

impl TaskStep {
    /// Whether nothing more will happen for this task.
    #[must_use]
    pub fn is_terminal(&self) -> bool {
        !matches!(
            self,
            TaskStep::Working { .. } | TaskStep::Input { .. } | TaskStep::ResultReady
        )
    }
}

/// One task's polling state. See the [module docs](self) for the rules.
#[derive(Debug)]
pub struct TaskPoller {
    task_id: String,
    policy: TaskPolicy,
    status: TaskStatus,
    interval: Duration,
    next_poll: Option<Instant>,
    /// When the `ttlMs` backstop fires (from first seen), if any.
    expires: Option<Instant>,
    first_seen: Instant,
    in_flight: bool,
    finished: bool,
    surfaced: HashSet<String>,
    /// 2025-11-25: the payload comes from `tasks/result`, not from `tasks/get`.
    fetches_result: bool,
    /// 2025-11-25: [`TaskStep::ResultReady`] was reported; polling stopped.
    result_due: bool,
}

impl TaskPoller {
    /// Starts from a `resultType: "task"` result received at `now`. Returns the poller and
    /// the step the seed state already means (a seed may be terminal or need input). Errors
    /// when the result is not a task.
    ///
    /// # Errors
    ///
    /// A description of what is wrong with `raw`.
    pub fn new(
        raw: &RawValue,
        now: Instant,
        policy: TaskPolicy,
    ) -> Result<(TaskPoller, TaskStep), String> {
        if ResultType::of(raw) != ResultType::Task {
            return Err("not a task result (resultType is not \"task\")".into());
        }
        let view = serde_json::from_str::<TaskView>(raw.get())
            .map_err(|e| format!("invalid task result: {e}"))?;
        Ok(Self::seeded(view, now, policy, false))
    }

    /// Starts from a 2025-11-25 `CreateTaskResult` (`{"task": {...}}`) received at `now`, the
    /// answer of a task-augmented request. Returns the poller and the step the seed means.
    ///
    /// # Errors
    ///
    /// A description of what is wrong with `raw` (no `task` object, no `taskId`, ...).
    pub fn from_create_task(
        raw: &RawValue,
        now: Instant,
        policy: TaskPolicy,
    ) -> Result<(TaskPoller, TaskStep), String> {
        #[derive(Deserialize)]
        struct Created {
            task: TaskView,
        }
        let created = serde_json::from_str::<Created>(raw.get())
            .map_err(|e| format!("invalid CreateTaskResult: {e}"))?;
        Ok(Self::seeded(created.task, now, policy, true))
    }

    fn seeded(
        view: TaskView,
        now: Instant,
        policy: TaskPolicy,
        fetches_result: bool,
    ) -> (TaskPoller, TaskStep) {
        let mut poller = TaskPoller {
            task_id: view.task_id.clone(),
            policy,
            status: TaskStatus::Working,
            interval: policy.default_poll,
            next_poll: None,
            expires: None,
            first_seen: now,
            in_flight: false,
            finished: false,
            surfaced: HashSet::new(),
            fetches_result,
            result_due: false,
        };
        let step = poller.observe(now, view);
        (poller, step)
    }

    /// The task's id (for `tasks/get`, `tasks/update`, `tasks/cancel`).
    #[must_use]
    pub fn task_id(&self) -> &str {
        &self.task_id
    }

    /// The last status seen.
    #[must_use]
    pub fn status(&self) -> &TaskStatus {
        &self.status
    }

    /// Whether a terminal step was reported.
    #[must_use]
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// When [`poll`](Self::poll) or [`handle_timeout`](Self::handle_timeout) next has work:
    /// the next `tasks/get` or the TTL backstop. `None` once finished; while a `tasks/get` is
    /// in flight only the backstop counts.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        if self.finished {
            return None;
        }
        let poll = if self.in_flight || self.result_due {
            None
        } else {
            self.next_poll
        };
        match (poll, self.expires) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The `tasks/get` to send now, if one is due (then it counts as in flight until
    /// [`handle_get`](Self::handle_get)).
    #[must_use]
    pub fn poll(&mut self, now: Instant) -> Option<TaskIdParams> {
        if self.finished
            || self.in_flight
            || self.result_due
            || self.next_poll.is_none_or(|t| now < t)
        {
            return None;
        }
        self.in_flight = true;
        Some(self.id_params())
    }

    /// The TTL backstop: [`TaskStep::Expired`] once it elapsed without a terminal status
    /// (reported once). Early calls return `None`.
    #[must_use]
    pub fn handle_timeout(&mut self, now: Instant) -> Option<TaskStep> {
        if self.finished || self.expires.is_none_or(|t| now < t) {
            return None;
        }
        self.finished = true;
        Some(TaskStep::Expired)
    }

    /// The answer to the `tasks/get` that [`poll`](Self::poll) asked for, at `now`. Peer input
    /// never panics: an unreadable answer is [`TaskStep::Lost`].
    #[must_use]
    pub fn handle_get(&mut self, now: Instant, answer: Result<&RawValue, ErrorObject>) -> TaskStep {
        self.in_flight = false;
        if self.finished {
            return TaskStep::Lost("the task already finished".into());
        }
        if self.result_due {
            // A status notification already made the result due; this late answer adds
            // nothing (the payload comes from `tasks/result`).
            return TaskStep::Working { message: None };
        }
        let view = match answer {
            Ok(raw) => match serde_json::from_str::<TaskView>(raw.get()) {
                Ok(v) if v.task_id == self.task_id => v,
                Ok(v) => return self.lose(format!("tasks/get answered for task {:?}", v.task_id)),
                Err(e) => return self.lose(format!("invalid tasks/get result: {e}")),
            },
            Err(e) => return self.lose(format!("tasks/get failed: {e}")),
        };
        self.observe(now, view)
    }

    /// A `notifications/tasks/status` (its params, a task) seen at `now`: taken in like a
    /// `tasks/get` answer. `None` when it is about another task, unreadable, or comes after
    /// the outcome is settled (finished, or `tasks/result` already due): notifications are a
    /// hint, never relied on, and never end a task by themselves being odd.
    #[must_use]
    pub fn handle_status(&mut self, now: Instant, params: &RawValue) -> Option<TaskStep> {
        if self.finished || self.result_due {
            return None;
        }
        let view = serde_json::from_str::<TaskView>(params.get()).ok()?;
        if view.task_id != self.task_id {
            return None;
        }
        let lacks_payload = match view.status {
            TaskStatus::Completed => view.result.is_none(),
            TaskStatus::Failed => view.error.is_none(),
            _ => false,
        };
        if !self.fetches_result && lacks_payload {
            // 2026-07-28: the payload comes with `tasks/get`, and a notification without it
            // must not end the task as lost: ask `tasks/get` now instead.
            self.status = view.status;
            self.next_poll = Some(now);
            return Some(TaskStep::Working {
                message: view.status_message,
            });
        }
        Some(self.observe(now, view))
    }

    /// The params of `tasks/result` (2025-11-25), once [`TaskStep::ResultReady`] was reported.
    #[must_use]
    pub fn result_params(&self) -> TaskIdParams {
        self.id_params()
    }

    /// The answer to `tasks/result`: the original request's result ([`TaskStep::Completed`],
    /// for `tools/call` a `CallToolResult`, possibly `isError`) or its JSON-RPC error
    /// ([`TaskStep::Failed`]). Terminal, reported once: a second answer is
    /// [`TaskStep::Lost`].
    #[must_use]
    pub fn handle_result(&mut self, answer: Result<Box<RawValue>, ErrorObject>) -> TaskStep {
        if self.finished {
            return TaskStep::Lost("the task already finished".into());
        }
        self.finished = true;
        match answer {
            Ok(raw) => {
                self.status = TaskStatus::Completed;
                TaskStep::Completed(raw)
            }
            Err(e) => {
                self.status = TaskStatus::Failed;
                TaskStep::Failed(e)
            }
        }
    }

    /// When `tasks/result` is due, how long it may stay open before the TTL backstop (`None`:
    /// no backstop), so the adapter can bound the blocking request.
    #[must_use]
    pub fn result_deadline(&self) -> Option<Instant> {
        self.expires
    }

    /// The params of `tasks/cancel` (the answer is only an acknowledgement; keep polling to
    /// learn the outcome, which may still be `completed`).
    #[must_use]
    pub fn cancel_params(&self) -> TaskIdParams {
        self.id_params()
    }

    /// The params of `tasks/update` carrying `answers` (`(key, bare result)`, e.g. an
    /// `ElicitResult`) for input requests of this task.
    ///
    /// # Errors
    ///
    /// When a key is not valid JSON as a string (cannot happen for a Rust `String`) — kept as
    /// an error rather than a panic.
    pub fn update_params(
        &self,
        answers: &[(String, Box<RawValue>)],
    ) -> Result<Box<RawValue>, String> {
        let mut out = String::from("{\"taskId\":");
        out.push_str(&serde_json::to_string(&self.task_id).map_err(|e| e.to_string())?);
        out.push_str(",\"inputResponses\":{");
        for (i, (key, value)) in answers.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(&serde_json::to_string(key).map_err(|e| e.to_string())?);
            out.push(':');
            out.push_str(value.get());
        }
        out.push_str("}}");
        RawValue::from_string(out).map_err(|e| e.to_string())
    }

    fn id_params(&self) -> TaskIdParams {
        TaskIdParams {
            task_id: self.task_id.clone(),
        }
    }

    fn lose(&mut self, detail: String) -> TaskStep {
        self.finished = true;
        TaskStep::Lost(detail)
    }

    /// Takes in a task state seen at `now`: timers from its hints, the step it means.
    fn observe(&mut self, now: Instant, view: TaskView) -> TaskStep {
        self.status = view.status.clone();
        if let Some(ms) = view.poll_interval_ms.as_ref().and_then(millis) {
            self.interval = ms.clamp(self.policy.min_poll, self.policy.max_poll);
        }
        match &view.ttl_ms {
            // `null`: unlimited from now on.
            Some(serde_json::Value::Null) => self.expires = None,
            Some(v) => {
                if let (Some(ttl), Some(max)) = (millis(v), self.policy.max_ttl) {
                    self.expires = self.first_seen.checked_add(ttl.min(max));
                }
            }
            None => {}
        }
        self.next_poll = now.checked_add(self.interval);
        if self.fetches_result {
            return match view.status {
                TaskStatus::Completed | TaskStatus::Failed | TaskStatus::InputRequired => {
                    self.result_due = true;
                    TaskStep::ResultReady
                }
                TaskStatus::Cancelled => self.end(TaskStep::Cancelled {
                    message: view.status_message,
                }),
                _ => TaskStep::Working {
                    message: view.status_message,
                },
            };
        }
        match view.status {
            TaskStatus::Completed => match view.result {
                Some(result) => self.end(TaskStep::Completed(result)),
                None => self.lose("a completed task without its result".into()),
            },
            TaskStatus::Failed => match view.error {
                Some(error) => self.end(TaskStep::Failed(error)),
                None => self.lose("a failed task without its error".into()),
            },
            TaskStatus::Cancelled => self.end(TaskStep::Cancelled {
                message: view.status_message,
            }),
            TaskStatus::InputRequired => {
                let fresh: Vec<_> = view
                    .input_requests
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|(key, _)| self.surfaced.insert(key.clone()))
                    .collect();
                if fresh.is_empty() {
                    TaskStep::Working {
                        message: view.status_message,
                    }
                } else {
                    TaskStep::Input { requests: fresh }
                }
            }
            // `working`, and statuses this client does not know: keep polling.
            _ => TaskStep::Working {
                message: view.status_message,
            },
        }
    }

    fn end(&mut self, step: TaskStep) -> TaskStep {
        self.finished = true;
        step
    }
}

/// A non-negative JSON number of milliseconds as a duration (fractions dropped; negative,
/// non-numeric or non-finite values are ignored).
fn millis(v: &serde_json::Value) -> Option<Duration> {
    if let Some(ms) = v.as_u64() {
        return Some(Duration::from_millis(ms));
    }
    let f = v.as_f64().filter(|f| f.is_finite() && *f >= 0.0)?;
    // Saturating float-to-int cast: a huge value becomes u64::MAX, clamped by the caller.
    Some(Duration::from_millis(f as u64))
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_exactly_once;
#[cfg(test)]
mod tests_initialize_era;
