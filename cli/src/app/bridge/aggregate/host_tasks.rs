//! `mcp bridge --config FILE` over stdio: the tasks the host makes of the servers' sampling
//! and elicitation requests (protocol 2025-11-25, a host that declared `tasks.requests`).
//!
//! The bridge passes a server's task-augmented request to the host as it came
//! ([`upstream::as_host`]), so the task is the host's,
//! under the host's own id. The servers share the host, so the bridge remembers which server
//! asked for each such task (from the host's `CreateTaskResult`):
//!
//! - a server's `tasks/get`, `tasks/result` and `tasks/cancel` of another server's task get
//!   `-32602` `unknown task` without reaching the host (a server cannot read or end another's
//!   elicitation); a task the bridge does not know (forgotten past [`MAX_REMEMBERED`], or made
//!   before it started) goes to the host, which decides;
//! - a server's `tasks/list` shows only the tasks it asked for;
//! - the host's `notifications/tasks/status` goes to the server that asked for the task
//!   only (to every server when the bridge does not know the task).

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, PoisonError};

use mcp_proto::jsonrpc::ErrorObject;
use serde_json::Value;

use crate::app::bridge::upstream::{self, HostSlot};

/// The most host tasks whose server is remembered (the oldest are forgotten first).
pub const MAX_REMEMBERED: usize = 4096;

/// The server that asked for each task the host made, by the host's task id.
#[derive(Default)]
pub struct HostTasks {
    owners: Mutex<Owners>,
}

#[derive(Default)]
struct Owners {
    by_task: HashMap<String, String>,
    /// The tasks in the order they were made, to forget the oldest.
    order: VecDeque<String>,
}

/// The `taskId` of `value`'s `task` member (a `CreateTaskResult`), or of `value` itself (a
/// task: the params of `notifications/tasks/status`, a `tasks/get` result).
fn task_id_of(value: &Value) -> Option<&str> {
    value
        .get("task")
        .unwrap_or(value)
        .get("taskId")
        .and_then(Value::as_str)
}

impl HostTasks {
    /// Remembers that the host made a task for `server` when `answer` (the host's answer to
    /// a request that carried `params.task`) is a `CreateTaskResult`.
    pub fn record(&self, server: &str, answer: &Value) {
        let Some(task) = answer.get("task").and_then(|t| t.get("taskId")?.as_str()) else {
            return;
        };
        let mut owners = self.owners.lock().unwrap_or_else(PoisonError::into_inner);
        if owners
            .by_task
            .insert(task.to_owned(), server.to_owned())
            .is_none()
        {
            owners.order.push_back(task.to_owned());
        }
        while owners.order.len() > MAX_REMEMBERED {
            if let Some(oldest) = owners.order.pop_front() {
                owners.by_task.remove(&oldest);
            }
        }
    }

    /// The server that asked for host task `task`, if the bridge knows it.
    pub fn owner(&self, task: &str) -> Option<String> {
        let owners = self.owners.lock().unwrap_or_else(PoisonError::into_inner);
        owners.by_task.get(task).cloned()
    }

    /// The server a host `notifications/tasks/status` (its `params`) is for; `None` when
    /// the bridge does not know its task.
    pub fn status_owner(&self, params: &Value) -> Option<String> {
        self.owner(task_id_of(params)?)
    }

    /// Whether `server` may ask about `task`: its own, or one the bridge does not know.
    fn visible(&self, task: &str, server: &str) -> bool {
        self.owner(task).is_none_or(|owner| owner == server)
    }

    /// Answers `server`'s task query `method` (`tasks/get`, `tasks/result`, `tasks/list`,
    /// `tasks/cancel`) about the host's tasks through the host in `host`: refused for
    /// another server's task, a `tasks/list` page narrowed to `server`'s own.
    pub async fn query(
        &self,
        host: &HostSlot,
        server: &str,
        method: String,
        params: Value,
    ) -> Result<Value, ErrorObject> {
        if method != "tasks/list" {
            if let Some(task) = params.get("taskId").and_then(Value::as_str)
                && !self.visible(task, server)
            {
                return Err(ErrorObject::new(
                    ErrorObject::INVALID_PARAMS,
                    format!("unknown task: {task}"),
                ));
            }
            return upstream::ask_host(host, method, params).await;
        }
        let mut page = upstream::ask_host(host, method, params).await?;
        if let Some(tasks) = page.get_mut("tasks").and_then(Value::as_array_mut) {
            tasks.retain(|t| {
                task_id_of(t).is_some_and(|id| self.owner(id).as_deref() == Some(server))
            });
        }
        Ok(page)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_task_is_the_servers_that_asked_and_an_unknown_one_everybodys() {
        let tasks = HostTasks::default();
        tasks.record(
            "alpha",
            &json!({"task": {"taskId": "h1", "status": "working"}}),
        );
        // A direct answer (the host made no task) is nobody's task.
        tasks.record("beta", &json!({"action": "accept"}));
        assert_eq!(tasks.owner("h1").as_deref(), Some("alpha"));
        assert!(tasks.visible("h1", "alpha"));
        assert!(!tasks.visible("h1", "beta"));
        assert!(tasks.visible("h2", "beta"));
        assert_eq!(
            tasks
                .status_owner(&json!({"taskId": "h1", "status": "completed"}))
                .as_deref(),
            Some("alpha")
        );
        assert_eq!(tasks.status_owner(&json!({"taskId": "h2"})), None);
    }

    #[tokio::test]
    async fn another_servers_task_is_refused_without_asking_the_host() {
        let tasks = HostTasks::default();
        tasks.record("alpha", &json!({"task": {"taskId": "h1"}}));
        // No host is connected: a query that reached it would fail with an internal error.
        let host = HostSlot::default();
        let refused = tasks
            .query(&host, "beta", "tasks/get".into(), json!({"taskId": "h1"}))
            .await
            .unwrap_err();
        assert_eq!(refused.code, ErrorObject::INVALID_PARAMS);
        assert!(refused.message.contains("unknown task: h1"), "{refused:?}");
        let asked = tasks
            .query(&host, "alpha", "tasks/get".into(), json!({"taskId": "h1"}))
            .await
            .unwrap_err();
        assert_eq!(asked.code, ErrorObject::INTERNAL_ERROR, "{asked:?}");
    }

    #[test]
    fn the_oldest_are_forgotten_past_the_bound() {
        let tasks = HostTasks::default();
        for n in 0..=MAX_REMEMBERED {
            tasks.record("s", &json!({"task": {"taskId": format!("h{n}")}}));
        }
        assert_eq!(tasks.owner("h0"), None);
        assert_eq!(
            tasks.owner(&format!("h{MAX_REMEMBERED}")).as_deref(),
            Some("s")
        );
    }
}
