//! The client as a task receiver (protocol 2025-11-25): the table of tasks the client runs
//! for the server, as pure decisions.
//!
//! A client that declares `tasks.requests.sampling.createMessage` (or
//! `tasks.requests.elicitation.create`) accepts a `sampling/createMessage` (or
//! `elicitation/create`) that carries `params.task` as a task: it answers at once with a
//! `CreateTaskResult`, runs its handler, and answers the server's `tasks/get`, `tasks/result`,
//! `tasks/list` and `tasks/cancel` from this table. The session
//! ([`Session`](crate::session::Session)) does the wiring; this module decides:
//!
//! - Task ids are `client-task-<n>`, unique within the session (a counter: the core has no
//!   randomness, and one connection has one requestor, so ids need not be unguessable).
//! - A task's ttl is the requested `ttl`, else [`ReceiverPolicy::default_ttl`], clamped into
//!   [`ReceiverPolicy::min_ttl`]..=[`ReceiverPolicy::max_ttl`]: never unlimited, so every task
//!   leaves the table. When it elapses the task is removed whatever its status (the spec lets
//!   a receiver delete it); a handler still running is cancelled and a blocked `tasks/result`
//!   is answered with an error.
//! - At most [`ReceiverPolicy::max_tasks`] tasks are held; one more is refused with -32603
//!   (the request fails, nothing is lost silently).
//! - Unknown task ids, bad cursors and a cancel of a terminal task are -32602, as the spec
//!   says.
//! - `tasks/result` of a running task blocks (at most
//!   [`ReceiverPolicy::max_waiting_results`] at once per task); it gets the handler's result
//!   or its JSON-RPC error once the task ends, an error for a cancelled task.
//!
//! Times: `createdAt` and `lastUpdatedAt` are ISO 8601 in UTC, from the [`WallClock`] anchor
//! the adapter hands in (the core reads no clock).

use std::collections::{BTreeMap, HashMap};

use serde_json::value::RawValue;

use crate::jsonrpc::{ErrorObject, Id};
use crate::time::{Duration, Instant, saturating_add};
use crate::types::{ListTasksResult, Task, TaskStatus};

/// Bounds on what the server may ask of the client's task table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReceiverPolicy {
    /// How many tasks (running or kept for their result) the table holds at most.
    pub max_tasks: usize,
    /// The ttl of a task whose request asks for none.
    pub default_ttl: Duration,
    /// The shortest ttl granted (a shorter request is raised to it).
    pub min_ttl: Duration,
    /// The longest ttl granted (a longer request, or none at all, is lowered to it).
    pub max_ttl: Duration,
    /// The `pollInterval` suggested to the server.
    pub poll_interval: Duration,
    /// How many tasks one `tasks/list` page holds.
    pub page_size: usize,
    /// How many `tasks/result` may wait for one task at once.
    pub max_waiting_results: usize,
}

impl Default for ReceiverPolicy {
    fn default() -> Self {
        ReceiverPolicy {
            max_tasks: 64,
            default_ttl: Duration::from_secs(10 * 60),
            min_ttl: Duration::from_secs(1),
            max_ttl: Duration::from_secs(60 * 60),
            poll_interval: Duration::from_secs(1),
            page_size: 50,
            max_waiting_results: 4,
        }
    }
}

/// One reading of the wall clock taken together with a monotonic instant, so the core can
/// write `createdAt` / `lastUpdatedAt` for any later instant without reading a clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WallClock {
    /// The monotonic instant of the reading.
    pub at: Instant,
    /// Milliseconds since the Unix epoch at that instant.
    pub unix_millis: u64,
}

impl WallClock {
    /// The anchor `(at, unix_millis)`.
    #[must_use]
    pub fn new(at: Instant, unix_millis: u64) -> Self {
        WallClock { at, unix_millis }
    }

    /// Milliseconds since the Unix epoch at `t`.
    fn millis_at(&self, t: Instant) -> u64 {
        let offset = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        if t >= self.at {
            self.unix_millis.saturating_add(offset(t - self.at))
        } else {
            self.unix_millis.saturating_sub(offset(self.at - t))
        }
    }
}

/// How a task of the table ended or runs.
#[derive(Debug)]
struct Entry {
    task_id: String,
    status: TaskStatus,
    message: Option<String>,
    created: Instant,
    updated: Instant,
    ttl: Duration,
    /// The handler's answer, once it came.
    outcome: Option<Result<Box<RawValue>, ErrorObject>>,
    /// `tasks/result` requests (their wire ids) blocked until the task ends.
    waiting: Vec<Id>,
}

impl Entry {
    fn expires(&self) -> Instant {
        saturating_add(self.created, self.ttl)
    }
}

/// What `tasks/result` gets.
#[derive(Debug)]
pub enum ResultAnswer {
    /// Answer now with this (the handler's result, or the error the task ended with).
    Ready(Result<Box<RawValue>, ErrorObject>),
    /// The task still runs: the request waits; it is answered by [`TaskTable::finish`],
    /// [`TaskTable::cancel`] or [`TaskTable::expire`].
    Waiting,
}

/// A task that ended (by its handler or by a cancel): who waited for its result, and with
/// what to answer them.
#[derive(Debug)]
pub struct Ended {
    /// The task as it is now (for `notifications/tasks/status`).
    pub task: Task,
    /// Each blocked `tasks/result` and its answer.
    pub answers: Vec<(Id, Result<Box<RawValue>, ErrorObject>)>,
}

/// A task removed because its ttl elapsed.
#[derive(Debug)]
pub struct Expired {
    /// Its id.
    pub task_id: String,
    /// Whether its handler was still running (then it must be stopped).
    pub was_running: bool,
    /// Blocked `tasks/result` requests, each to be answered with [`Expired::error`].
    pub waiting: Vec<Id>,
}

impl Expired {
    /// The error a blocked `tasks/result` of an expired task gets.
    #[must_use]
    pub fn error(&self) -> ErrorObject {
        ErrorObject::new(
            ErrorObject::INVALID_PARAMS,
            format!("task {} expired (its ttl elapsed)", self.task_id),
        )
    }
}

/// The tasks the client runs for the server. See the [module docs](self) for the rules.
#[derive(Debug)]
pub struct TaskTable {
    policy: ReceiverPolicy,
    wall: Option<WallClock>,
    next: u64,
    /// By creation order (the key is the sequence number), for pagination.
    tasks: BTreeMap<u64, Entry>,
    by_id: HashMap<String, u64>,
}

impl TaskTable {
    /// An empty table. Without a `wall` anchor, times are written as if the session had
    /// started at the Unix epoch (well-formed, but not the real time).
    #[must_use]
    pub fn new(policy: ReceiverPolicy, wall: Option<WallClock>) -> Self {
        TaskTable {
            policy,
            wall,
            next: 0,
            tasks: BTreeMap::new(),
            by_id: HashMap::new(),
        }
    }

    /// How many tasks the table holds.
    #[must_use]
    pub fn len(&self) -> usize {
        self.tasks.len()
    }

    /// Whether the table holds no task.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }

    /// When the next task expires ([`expire`](Self::expire) has work then).
    #[must_use]
    pub fn next_expiry(&self) -> Option<Instant> {
        self.tasks.values().map(Entry::expires).min()
    }

    /// Accepts a task-augmented request at `now` whose `params.task.ttl` is `requested_ttl`
    /// (milliseconds). Returns the new task (status `working`) for the `CreateTaskResult`.
    ///
    /// # Errors
    ///
    /// -32603 when the table is full (call [`expire`](Self::expire) first so that expired
    /// tasks do not count).
    pub fn accept(
        &mut self,
        now: Instant,
        requested_ttl: Option<u64>,
    ) -> Result<Task, ErrorObject> {
        if self.tasks.len() >= self.policy.max_tasks {
            return Err(ErrorObject::new(
                ErrorObject::INTERNAL_ERROR,
                format!(
                    "the client holds {} tasks already; try again when one has ended",
                    self.tasks.len()
                ),
            ));
        }
        let ttl = requested_ttl
            .map_or(self.policy.default_ttl, Duration::from_millis)
            .clamp(
                self.policy.min_ttl,
                self.policy.max_ttl.max(self.policy.min_ttl),
            );
        let seq = self.next;
        self.next += 1;
        let task_id = format!("client-task-{seq}");
        let entry = Entry {
            task_id: task_id.clone(),
            status: TaskStatus::Working,
            message: None,
            created: now,
            updated: now,
            ttl,
            outcome: None,
            waiting: Vec::new(),
        };
        let task = self.view(&entry);
        self.by_id.insert(task_id, seq);
        self.tasks.insert(seq, entry);
        Ok(task)
    }

    /// `tasks/get`: the task's current state.
    ///
    /// # Errors
    ///
    /// -32602 for an unknown (or expired) task.
    pub fn get(&self, task_id: &str) -> Result<Task, ErrorObject> {
        let entry = self.entry(task_id).ok_or_else(|| unknown(task_id))?;
        Ok(self.view(entry))
    }

    /// `tasks/result` with wire id `wire`: the outcome now, or the request waits.
    ///
    /// # Errors
    ///
    /// -32602 for an unknown task; -32603 when too many requests wait for it already.
    pub fn result(&mut self, task_id: &str, wire: Id) -> Result<ResultAnswer, ErrorObject> {
        let max = self.policy.max_waiting_results;
        let seq = *self.by_id.get(task_id).ok_or_else(|| unknown(task_id))?;
        let entry = self.tasks.get_mut(&seq).ok_or_else(|| unknown(task_id))?;
        if let Some(answer) = settled(entry) {
            return Ok(ResultAnswer::Ready(answer));
        }
        if entry.waiting.len() >= max {
            return Err(ErrorObject::new(
                ErrorObject::INTERNAL_ERROR,
                format!("{max} tasks/result requests wait for task {task_id} already"),
            ));
        }
        entry.waiting.push(wire);
        Ok(ResultAnswer::Waiting)
    }

    /// `tasks/list`: one page, oldest first; the cursor is where the previous page stopped.
    ///
    /// # Errors
    ///
    /// -32602 for a cursor this table did not hand out.
    pub fn list(&self, cursor: Option<&str>) -> Result<ListTasksResult, ErrorObject> {
        let start = match cursor {
            None => 0,
            Some(c) => c
                .parse::<u64>()
                .ok()
                .filter(|&n| n <= self.next)
                .ok_or_else(|| {
                    ErrorObject::new(ErrorObject::INVALID_PARAMS, format!("invalid cursor {c:?}"))
                })?,
        };
        let mut page = self.tasks.range(start..);
        let tasks: Vec<Task> = page
            .by_ref()
            .take(self.policy.page_size)
            .map(|(_, e)| self.view(e))
            .collect();
        let next_cursor = page.next().map(|(seq, _)| seq.to_string());
        Ok(ListTasksResult {
            tasks,
            next_cursor,
            ..ListTasksResult::default()
        })
    }

    /// `tasks/cancel` at `now`: the task becomes `cancelled` (its handler must be stopped);
    /// returns its state and the blocked `tasks/result` requests with their error.
    ///
    /// # Errors
    ///
    /// -32602 for an unknown task or one already in a terminal status.
    pub fn cancel(&mut self, now: Instant, task_id: &str) -> Result<Ended, ErrorObject> {
        let seq = *self.by_id.get(task_id).ok_or_else(|| unknown(task_id))?;
        let entry = self.tasks.get_mut(&seq).ok_or_else(|| unknown(task_id))?;
        if entry.status.is_terminal() {
            return Err(ErrorObject::new(
                ErrorObject::INVALID_PARAMS,
                format!(
                    "cannot cancel task {task_id}: it is already {}",
                    entry.status.as_str()
                ),
            ));
        }
        entry.status = TaskStatus::Cancelled;
        entry.message = Some("cancelled by the server".into());
        entry.updated = now;
        let waiting = std::mem::take(&mut entry.waiting);
        let entry = &self.tasks[&seq];
        let answers = waiting
            .into_iter()
            .map(|id| (id, Err(cancelled(task_id))))
            .collect();
        Ok(Ended {
            task: self.view(entry),
            answers,
        })
    }

    /// The handler of `task_id` answered at `now`: the task is `completed` (a result) or
    /// `failed` (an error). Returns the blocked `tasks/result` requests with their answer;
    /// `None` when the task is unknown or ended already (cancelled, expired): the late answer
    /// is dropped.
    pub fn finish(
        &mut self,
        now: Instant,
        task_id: &str,
        outcome: Result<Box<RawValue>, ErrorObject>,
    ) -> Option<Ended> {
        let seq = *self.by_id.get(task_id)?;
        let entry = self.tasks.get_mut(&seq)?;
        if entry.status.is_terminal() {
            return None;
        }
        entry.status = if outcome.is_ok() {
            TaskStatus::Completed
        } else {
            TaskStatus::Failed
        };
        entry.message = outcome.as_ref().err().map(|e| e.message.clone());
        entry.updated = now;
        entry.outcome = Some(outcome);
        let waiting = std::mem::take(&mut entry.waiting);
        let entry = &self.tasks[&seq];
        let answers = waiting
            .into_iter()
            .filter_map(|id| Some((id, settled(entry)?)))
            .collect();
        Some(Ended {
            task: self.view(entry),
            answers,
        })
    }

    /// Removes every task whose ttl elapsed by `now`.
    pub fn expire(&mut self, now: Instant) -> Vec<Expired> {
        let due: Vec<u64> = self
            .tasks
            .iter()
            .filter(|(_, e)| e.expires() <= now)
            .map(|(seq, _)| *seq)
            .collect();
        due.into_iter()
            .filter_map(|seq| {
                let entry = self.tasks.remove(&seq)?;
                self.by_id.remove(&entry.task_id);
                Some(Expired {
                    was_running: !entry.status.is_terminal(),
                    task_id: entry.task_id,
                    waiting: entry.waiting,
                })
            })
            .collect()
    }

    fn entry(&self, task_id: &str) -> Option<&Entry> {
        self.tasks.get(self.by_id.get(task_id)?)
    }

    fn view(&self, e: &Entry) -> Task {
        let millis = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        Task {
            task_id: e.task_id.clone(),
            status: e.status.clone(),
            status_message: e.message.clone(),
            created_at: self.timestamp(e.created),
            last_updated_at: self.timestamp(e.updated),
            ttl: Some(millis(e.ttl)),
            poll_interval: (!e.status.is_terminal()).then(|| millis(self.policy.poll_interval)),
            ..Task::default()
        }
    }

    fn timestamp(&self, t: Instant) -> String {
        let millis = self.wall.map_or(0, |w| w.millis_at(t));
        iso8601_utc(millis)
    }
}

/// The answer a finished task gives `tasks/result`, `None` while it runs.
fn settled(entry: &Entry) -> Option<Result<Box<RawValue>, ErrorObject>> {
    match (&entry.status, &entry.outcome) {
        (TaskStatus::Cancelled, _) => Some(Err(cancelled(&entry.task_id))),
        (_, Some(outcome)) => Some(outcome.clone()),
        _ => None,
    }
}

fn unknown(task_id: &str) -> ErrorObject {
    ErrorObject::new(
        ErrorObject::INVALID_PARAMS,
        format!("unknown task {task_id:?}"),
    )
}

fn cancelled(task_id: &str) -> ErrorObject {
    ErrorObject::new(
        ErrorObject::INVALID_PARAMS,
        format!("task {task_id} was cancelled: it has no result"),
    )
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ` for milliseconds since the Unix epoch (Howard Hinnant's
/// `civil_from_days`).
fn iso8601_utc(unix_millis: u64) -> String {
    let secs = unix_millis / 1000;
    let days = secs / 86_400;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        unix_millis % 1000
    )
}

#[cfg(test)]
mod tests;
