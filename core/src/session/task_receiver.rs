//! Server requests that concern tasks (protocol 2025-11-25), as the session routes them:
//!
//! - A request that belongs to one of the server's tasks (`_meta` related-task, sent while
//!   the task is `input_required`) goes to the host like any other; the answer carries the
//!   same related-task `_meta` back, as the spec asks of every message of a task.
//! - When the host declared `tasks` (see [`ClientCapabilities::tasks`]), the client is a task
//!   receiver: a `sampling/createMessage` or `elicitation/create` with `params.task`, of a
//!   method declared in `tasks.requests`, is answered at once with a `CreateTaskResult`; the
//!   host's handler runs as for any request ([`Event::ServerRequest`]) and its answer goes to
//!   the [`TaskTable`] instead of the wire. The session itself answers `tasks/get`,
//!   `tasks/result` (held until the task ends), `tasks/list` and `tasks/cancel` (which stops
//!   the handler with [`Event::ServerRequestCancelled`]), and sends
//!   `notifications/tasks/status` when a task ends. A task-augmented request of a method not
//!   declared in `tasks.requests` is processed normally, its `task` ignored, as the spec asks
//!   of a receiver that did not declare it.
//! - When the host makes the tasks itself
//!   ([`SessionConfig::host_runs_tasks`](super::SessionConfig::host_runs_tasks): a bridge
//!   whose own host declared `tasks`), none of this applies: the task-augmented request and
//!   the task queries go to the host as they came, so the task is the host's, once.
//!
//! [`ClientCapabilities::tasks`]: crate::types::ClientCapabilities::tasks

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::inbound::Reply;
use super::server_requests::{ServerRequestKind, TaskQuery};
use super::{Event, Queued, Session};
use crate::jsonrpc::{self, ErrorObject, Id};
use crate::task::TASKS_STATUS_NOTIFICATION;
use crate::task::receiver::{Ended, ResultAnswer};
use crate::time::Instant;
use crate::types::{CreateTaskResult, PaginatedParams, RELATED_TASK_META, TaskIdParams};

/// What the params of a server request say about tasks.
#[derive(Debug, Default)]
pub(super) struct TaskInfo {
    /// `Some(ttl)` when the request carries a `params.task` object (`ttl` in milliseconds,
    /// if it is a non-negative integer).
    pub(super) augmented: Option<Option<u64>>,
    /// The server's task the request belongs to (`_meta` related-task).
    pub(super) related: Option<String>,
}

impl TaskInfo {
    /// Reads `params` of a request of `kind` if it may concern a task (its descriptor says it
    /// may run as one; other methods are not looked at). Params that do not parse concern no
    /// task: the host's typed decoding reports them.
    pub(super) fn of(kind: &ServerRequestKind, params: Option<&RawValue>) -> TaskInfo {
        #[derive(Deserialize)]
        struct Shape {
            #[serde(default)]
            task: Option<Value>,
            #[serde(default, rename = "_meta")]
            meta: Option<Value>,
        }
        if kind.runs_as_task.is_none() {
            return TaskInfo::default();
        }
        let Some(shape) = params.and_then(|p| serde_json::from_str::<Shape>(p.get()).ok()) else {
            return TaskInfo::default();
        };
        TaskInfo {
            augmented: shape
                .task
                .filter(Value::is_object)
                .map(|t| t.get("ttl").and_then(Value::as_u64)),
            related: shape
                .meta
                .as_ref()
                .and_then(|m| m.get(RELATED_TASK_META)?.get("taskId")?.as_str())
                .map(str::to_owned),
        }
    }
}

/// `result` with `_meta["io.modelcontextprotocol/related-task"] = {"taskId": task_id}`
/// merged in (the caller's other `_meta` members kept). A result that is not an object is
/// returned as it is.
pub(super) fn with_related_task(result: Box<RawValue>, task_id: &str) -> Box<RawValue> {
    #[derive(serde::Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Related<'a> {
        task_id: &'a str,
    }
    let Ok(related) = jsonrpc::to_raw(&Related { task_id }) else {
        return result;
    };
    super::meta::splice(Some(result.get()), &[], &[(RELATED_TASK_META, &related)]).unwrap_or(result)
}

fn invalid_params(method: &str, e: &serde_json::Error) -> ErrorObject {
    ErrorObject::new(
        ErrorObject::INVALID_PARAMS,
        format!("invalid {method} params: {e}"),
    )
}

fn encode<T: serde::Serialize>(value: &T) -> Result<Box<RawValue>, ErrorObject> {
    jsonrpc::to_raw(value).map_err(|e| ErrorObject::new(ErrorObject::INTERNAL_ERROR, e.to_string()))
}

impl Session {
    /// Answers `tasks/get`, `tasks/result`, `tasks/list` or `tasks/cancel` (`query`) from
    /// the task table: at once, or for `tasks/result` when the task ends. Called for a host
    /// that declared `tasks` (the descriptors refuse these requests otherwise).
    pub(super) fn handle_tasks_request(
        &mut self,
        now: Instant,
        id: Id,
        query: TaskQuery,
        params: Option<&RawValue>,
    ) {
        self.expire_tasks(now);
        let method = query.method();
        let text = params.map_or("{}", RawValue::get);
        let answer = if query == TaskQuery::List {
            match serde_json::from_str::<Option<PaginatedParams>>(text) {
                Ok(p) => {
                    let cursor = p.and_then(|p| p.cursor);
                    self.receiver
                        .list(cursor.as_deref())
                        .and_then(|page| encode(&page))
                }
                Err(e) => Err(invalid_params(method, &e)),
            }
        } else {
            match serde_json::from_str::<TaskIdParams>(text) {
                Ok(p) => match self.answer_task_id_request(now, &id, query, &p.task_id) {
                    Some(answer) => answer,
                    // Held until the task ends.
                    None => return,
                },
                Err(e) => Err(invalid_params(method, &e)),
            }
        };
        self.outbound
            .push_back(Queued::Response { id, result: answer });
    }

    /// `tasks/get`, `tasks/result` or `tasks/cancel` of `task_id`; `None` when the answer
    /// waits for the task to end.
    fn answer_task_id_request(
        &mut self,
        now: Instant,
        id: &Id,
        query: TaskQuery,
        task_id: &str,
    ) -> Option<Result<Box<RawValue>, ErrorObject>> {
        Some(match query {
            TaskQuery::Get => self.receiver.get(task_id).and_then(|t| encode(&t)),
            TaskQuery::Result => match self.receiver.result(task_id, id.clone()) {
                Ok(ResultAnswer::Ready(answer)) => answer.map(|r| with_related_task(r, task_id)),
                Ok(ResultAnswer::Waiting) => return None,
                Err(e) => Err(e),
            },
            // `tasks/list` names no task: `handle_tasks_request` answers it before this.
            TaskQuery::List => Err(ErrorObject::new(
                ErrorObject::INVALID_PARAMS,
                "tasks/list names no task",
            )),
            TaskQuery::Cancel => match self.receiver.cancel(now, task_id) {
                Ok(ended) => {
                    self.stop_task_handler(now, task_id);
                    let task = encode(&ended.task);
                    self.task_ended(task_id, ended);
                    task
                }
                Err(e) => Err(e),
            },
        })
    }

    /// A task-augmented request of a method the host accepts as a task: answered at once
    /// with a `CreateTaskResult` (or an error when the table is full); the host's handler
    /// then runs as for any server request, its answer kept for `tasks/result`.
    pub(super) fn accept_task(
        &mut self,
        now: Instant,
        id: Id,
        kind: &ServerRequestKind,
        params: Option<Box<RawValue>>,
        ttl: Option<u64>,
    ) {
        self.expire_tasks(now);
        let task = match self.receiver.accept(now, ttl) {
            Ok(task) => task,
            Err(e) => {
                self.outbound
                    .push_back(Queued::Response { id, result: Err(e) });
                return;
            }
        };
        let task_id = task.task_id.clone();
        let created = encode(&CreateTaskResult {
            task,
            ..CreateTaskResult::default()
        });
        self.outbound.push_back(Queued::Response {
            id,
            result: created,
        });
        let pauses = kind.pauses_deadlines;
        if pauses {
            self.clock.pause(now);
        }
        let id = self.inbound.insert_reply(Reply::Task(task_id), pauses);
        self.events.push_back(Event::ServerRequest {
            id,
            method: kind.method.to_owned(),
            params,
        });
    }

    /// The host answered the request of task `task_id`.
    pub(super) fn finish_task(
        &mut self,
        now: Instant,
        task_id: &str,
        result: Result<Box<RawValue>, ErrorObject>,
    ) {
        if let Some(ended) = self.receiver.finish(now, task_id, result) {
            self.task_ended(task_id, ended);
        }
    }

    /// Answers the `tasks/result` requests that waited for a task, and tells the server its
    /// new status (`notifications/tasks/status`, which the spec allows a receiver to send).
    fn task_ended(&mut self, task_id: &str, ended: Ended) {
        for (wire, answer) in ended.answers {
            let result = answer.map(|r| with_related_task(r, task_id));
            self.outbound
                .push_back(Queued::Response { id: wire, result });
        }
        if let Ok(params) = jsonrpc::to_raw(&ended.task) {
            self.outbound.push_back(Queued::Notification {
                method: Cow::Borrowed(TASKS_STATUS_NOTIFICATION),
                params: Some(params),
            });
        }
    }

    /// Stops the host's handler of task `task_id`, if it still runs.
    fn stop_task_handler(&mut self, now: Instant, task_id: &str) {
        if let Some((id, inbound)) = self.inbound.remove_task(task_id) {
            if inbound.pauses {
                self.clock.resume(now);
            }
            self.events.push_back(Event::ServerRequestCancelled {
                id,
                reason: Some(format!("task {task_id} ended")),
            });
        }
    }

    /// Removes the tasks whose ttl elapsed: their handlers are stopped, their waiting
    /// `tasks/result` requests answered with an error.
    pub(super) fn expire_tasks(&mut self, now: Instant) {
        if self.receiver.next_expiry().is_none_or(|t| now < t) {
            return;
        }
        for gone in self.receiver.expire(now) {
            if gone.was_running {
                self.stop_task_handler(now, &gone.task_id);
            }
            let error = gone.error();
            for wire in gone.waiting {
                self.outbound.push_back(Queued::Response {
                    id: wire,
                    result: Err(error.clone()),
                });
            }
        }
    }
}
