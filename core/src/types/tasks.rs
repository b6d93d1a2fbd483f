//! Tasks (2025-11-25): durable, pollable execution of a request.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{Cursor, Notification, PaginatedParams, Request};

open_string_enum! {
    /// The state of a task. `Completed`, `Failed` and `Cancelled` are terminal.
    #[derive(Default)]
    pub enum TaskStatus {
        /// The task is running (the default).
        #[default]
        Working = "working",
        /// The task waits for input from the requester (an elicitation or sampling request).
        InputRequired = "input_required",
        /// The task finished; `tasks/result` returns its result.
        Completed = "completed",
        /// The task failed.
        Failed = "failed",
        /// The task was cancelled.
        Cancelled = "cancelled",
    }
}

impl TaskStatus {
    /// True for a status after which the task never changes again.
    pub fn is_terminal(&self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Cancelled)
    }
}

/// The `task` parameter of a task-augmented request.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskMetadata {
    /// Requested lifetime in milliseconds after creation; the receiver may change it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttl: Option<u64>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The `_meta` key that ties a message to a task: `{"taskId": ...}` (2025-11-25). A server
/// that needs input for one of its tasks sends its `elicitation/create` or
/// `sampling/createMessage` with it; the client's answer carries it back.
pub const RELATED_TASK_META: &str = "io.modelcontextprotocol/related-task";

/// The value of `_meta["io.modelcontextprotocol/related-task"]`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RelatedTaskMetadata {
    /// The task the message belongs to.
    pub task_id: String,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The task id in `meta` (a request's or result's `_meta`) under [`RELATED_TASK_META`], if
/// there is one and it is a string.
#[must_use]
pub fn related_task_id(meta: Option<&Map<String, Value>>) -> Option<&str> {
    meta?.get(RELATED_TASK_META)?.get("taskId")?.as_str()
}

/// The state of a task, as returned by `tasks/get`, `tasks/cancel`, `tasks/list` and
/// `notifications/tasks/status`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// The task's identifier, chosen by the receiver of the original request.
    pub task_id: String,
    /// Current state.
    pub status: TaskStatus,
    /// Human-readable detail about the status.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// ISO 8601 creation time, as sent.
    pub created_at: String,
    /// ISO 8601 time of the last status change, as sent.
    pub last_updated_at: String,
    /// Lifetime in milliseconds from creation; `None` (JSON `null`) means unlimited.
    /// Always serialized, because the schema requires the member.
    pub ttl: Option<u64>,
    /// Suggested polling interval in milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub poll_interval: Option<u64>,
    /// Metadata of the result or notification that carries the task.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The immediate result of a task-augmented request: the task that was created.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateTaskResult {
    /// The new task.
    pub task: Task,
    /// Result metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The `params` of `tasks/get`, `tasks/result` and `tasks/cancel`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskIdParams {
    /// The task's identifier.
    pub task_id: String,
    /// Request metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl TaskIdParams {
    /// Params naming `task_id`.
    pub fn new(task_id: impl Into<String>) -> Self {
        Self {
            task_id: task_id.into(),
            ..Self::default()
        }
    }
}

/// The result of `tasks/result`: whatever the original request returns (for a task-augmented
/// `tools/call`, a [`CallToolResult`](super::CallToolResult)), kept as an open object.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct GetTaskPayloadResult(pub Map<String, Value>);

impl GetTaskPayloadResult {
    /// Decodes the payload as the original request's result type, for example
    /// `payload.decode::<<CallTool as Request>::Result>()`.
    pub fn decode<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_value(Value::Object(self.0.clone()))
    }
}

/// The result of `tasks/list`: one page.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTasksResult {
    /// The tasks on this page.
    pub tasks: Vec<Task>,
    /// Where the next page starts; `None` on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Cursor>,
    /// Result metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `tasks/get`: the current state of a task.
#[non_exhaustive]
pub enum GetTask {}

impl Request for GetTask {
    const METHOD: &'static str = "tasks/get";
    type Params = TaskIdParams;
    type Result = Task;
}

/// `tasks/result`: the result of a task's original request; blocks until the task is terminal.
#[non_exhaustive]
pub enum GetTaskPayload {}

impl Request for GetTaskPayload {
    const METHOD: &'static str = "tasks/result";
    type Params = TaskIdParams;
    type Result = GetTaskPayloadResult;
}

/// `tasks/list`: one page of the receiver's tasks.
#[non_exhaustive]
pub enum ListTasks {}

impl Request for ListTasks {
    const METHOD: &'static str = "tasks/list";
    type Params = Option<PaginatedParams>;
    type Result = ListTasksResult;
}

/// `tasks/cancel`: ask the receiver to cancel a task; the result is its state afterwards.
#[non_exhaustive]
pub enum CancelTask {}

impl Request for CancelTask {
    const METHOD: &'static str = "tasks/cancel";
    type Params = TaskIdParams;
    type Result = Task;
}

/// `notifications/tasks/status`: a task changed state; the params are the task.
#[non_exhaustive]
pub enum TaskStatusNotification {}

impl Notification for TaskStatusNotification {
    const METHOD: &'static str = "notifications/tasks/status";
    type Params = Task;
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::types::tests::round_trip;
    use crate::types::{CallTool, ContentBlock};

    fn sample_task() -> Value {
        json!({
            "taskId": "t-1",
            "status": "working",
            "statusMessage": "halfway",
            "createdAt": "2025-11-25T10:30:00Z",
            "lastUpdatedAt": "2025-11-25T10:31:00Z",
            "ttl": 60000,
            "pollInterval": 5000
        })
    }

    #[test]
    fn create_task_result_round_trip() {
        let result: CreateTaskResult = round_trip(json!({ "task": sample_task(), "_meta": {} }));
        assert_eq!(result.task.task_id, "t-1");
        assert_eq!(result.task.status, TaskStatus::Working);
        assert_eq!(result.task.ttl, Some(60000));
        assert_eq!(result.task.poll_interval, Some(5000));
    }

    #[test]
    fn null_ttl_round_trips_as_null() {
        let task: Task = round_trip(json!({
            "taskId": "t-2",
            "status": "completed",
            "createdAt": "a",
            "lastUpdatedAt": "b",
            "ttl": null,
            "_meta": { "io.modelcontextprotocol/related-task": { "taskId": "t-2" } }
        }));
        assert_eq!(task.ttl, None);
        assert!(task.status.is_terminal());
        assert!(task.meta.is_some());
    }

    #[test]
    fn status_values_and_unknown_status() {
        let statuses: Vec<TaskStatus> = round_trip(json!([
            "working",
            "input_required",
            "completed",
            "failed",
            "cancelled",
            "paused"
        ]));
        assert_eq!(statuses[1], TaskStatus::InputRequired);
        assert_eq!(statuses[5], TaskStatus::Other("paused".into()));
        assert!(!statuses[5].is_terminal());
        let terminal: Vec<bool> = statuses.iter().map(TaskStatus::is_terminal).collect();
        assert_eq!(terminal, [false, false, true, true, true, false]);
    }

    #[test]
    fn list_tasks_and_id_params() {
        let result: ListTasksResult =
            round_trip(json!({ "tasks": [sample_task()], "nextCursor": "n" }));
        assert_eq!(result.tasks.len(), 1);
        let params: TaskIdParams = round_trip(json!({ "taskId": "t-1" }));
        assert_eq!(params, TaskIdParams::new("t-1"));
    }

    #[test]
    fn payload_decodes_as_original_result() {
        let payload: GetTaskPayloadResult = round_trip(json!({
            "content": [{ "type": "text", "text": "done" }],
            "_meta": { "io.modelcontextprotocol/related-task": { "taskId": "t-1" } }
        }));
        let result = payload.decode::<<CallTool as Request>::Result>().unwrap();
        assert_eq!(result.content, vec![ContentBlock::text("done")]);
        assert!(payload.decode::<Task>().is_err());
    }
}
