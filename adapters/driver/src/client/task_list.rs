//! A server's tasks by id, protocol 2025-11-25: `tasks/list` (one page, or every page under
//! the [`ListBudget`](crate::ListBudget)), `tasks/get`, `tasks/result` and `tasks/cancel`.
//!
//! Each method first checks what the server declared, so a server that does not offer the
//! method gets [`Error::NotOffered`] without a request on the wire: `tasks/list` needs
//! `capabilities.tasks.list`, `tasks/cancel` needs `capabilities.tasks.cancel`, `tasks/get`
//! and `tasks/result` need a `tasks` capability at all. The 2026-07-28 protocol moved tasks to
//! an extension without `tasks/list` or `tasks/result`; there a task is followed through the
//! [`TaskHandle`](crate::TaskHandle) that [`Client::call_tool_task`] hands out.

use mcp_proto::session::{Era, ProtocolVersion};
use mcp_proto::types::{
    CancelTask, Cursor, GetTask, GetTaskPayload, GetTaskPayloadResult, ListTasks, ListTasksResult,
    PaginatedParams, Request, Task, TaskIdParams, TasksCapability,
};

use super::Client;
use crate::error::Error;
use crate::options::CallOptions;
use crate::runtime::Runtime;

impl<R: Runtime> Client<R> {
    /// One page of the server's tasks (`tasks/list`): pass `None` for the first page, then
    /// the page's `next_cursor` for the next; the last page has none. For every page at
    /// once, see [`list_tasks`](Self::list_tasks).
    ///
    /// # Errors
    ///
    /// [`Error::NotOffered`] when the server did not declare `tasks.list` (nothing is
    /// sent), and see [`Error`].
    pub async fn list_tasks_page(&self, cursor: Option<Cursor>) -> Result<ListTasksResult, Error> {
        self.offers_task_method(ListTasks::METHOD, |t| t.list.is_some(), "tasks.list")?;
        let params = cursor.map(|c| PaginatedParams {
            cursor: Some(c),
            ..PaginatedParams::default()
        });
        self.request::<ListTasks>(&params).await
    }

    /// Every task the server lists (`tasks/list`, following `nextCursor` to the last page),
    /// bounded like the other lists by the connection's [`ListBudget`](crate::ListBudget).
    ///
    /// # Errors
    ///
    /// [`Error::NotOffered`] when the server did not declare `tasks.list` (nothing is
    /// sent); [`Error::Pagination`] when the server repeats a cursor,
    /// [`Error::ListBudget`] when the pages exceed the budget; and see [`Error`].
    pub async fn list_tasks(&self) -> Result<Vec<Task>, Error> {
        self.offers_task_method(ListTasks::METHOD, |t| t.list.is_some(), "tasks.list")?;
        self.list_all::<ListTasks, _>(&CallOptions::new(), |p| (p.tasks, p.next_cursor))
            .await
    }

    /// The current state of one task (`tasks/get`).
    ///
    /// # Errors
    ///
    /// [`Error::NotOffered`] when the server declared no `tasks` capability (nothing is
    /// sent); [`Error::Remote`] for a task the server does not know; and see [`Error`].
    pub async fn get_task(&self, task_id: impl Into<String>) -> Result<Task, Error> {
        self.offers_task_method(GetTask::METHOD, |_| true, "tasks")?;
        self.request::<GetTask>(&TaskIdParams::new(task_id)).await
    }

    /// The result of a task's original request (`tasks/result`; for a task-augmented
    /// `tools/call`, a `CallToolResult`: decode it with
    /// [`GetTaskPayloadResult::decode`]). The server answers once the task is terminal, so
    /// this waits as long as the task runs, up to the call's timeout.
    ///
    /// # Errors
    ///
    /// [`Error::NotOffered`] when the server declared no `tasks` capability (nothing is
    /// sent); [`Error::Remote`] with the original request's error for a failed task, or for
    /// a task the server does not know; and see [`Error`].
    pub async fn task_result(
        &self,
        task_id: impl Into<String>,
        options: CallOptions,
    ) -> Result<GetTaskPayloadResult, Error> {
        self.offers_task_method(GetTaskPayload::METHOD, |_| true, "tasks")?;
        self.request_with::<GetTaskPayload>(&TaskIdParams::new(task_id), options)
            .await
    }

    /// Asks the server to cancel a task (`tasks/cancel`) and returns its state afterwards.
    /// Cancelling is the server's decision: a task that already ended is refused.
    ///
    /// # Errors
    ///
    /// [`Error::NotOffered`] when the server did not declare `tasks.cancel` (nothing is
    /// sent); [`Error::Remote`] for a task the server does not know or will not cancel; and
    /// see [`Error`].
    pub async fn cancel_task(&self, task_id: impl Into<String>) -> Result<Task, Error> {
        self.offers_task_method(CancelTask::METHOD, |t| t.cancel.is_some(), "tasks.cancel")?;
        self.request::<CancelTask>(&TaskIdParams::new(task_id))
            .await
    }

    /// `Ok` when the negotiated protocol has `method` (2025-11-25 or later in the initialize
    /// era) and the server's `tasks` capability passes `declared`; else why not, naming
    /// `capability`.
    fn offers_task_method(
        &self,
        method: &str,
        declared: impl FnOnce(&TasksCapability) -> bool,
        capability: &str,
    ) -> Result<(), Error> {
        let version = self.protocol_version();
        let reason = if self.era() != Era::Initialize {
            Some(format!(
                "protocol {version} has tasks as an extension without it; follow a task \
                 through the handle of call_tool_task"
            ))
        } else if version < ProtocolVersion::V2025_11_25 {
            Some(format!(
                "protocol {version} has no tasks (they came with 2025-11-25)"
            ))
        } else if !self.capabilities().tasks.as_ref().is_some_and(declared) {
            Some(format!("its capabilities have no `{capability}`"))
        } else {
            None
        };
        match reason {
            None => Ok(()),
            Some(reason) => Err(Error::NotOffered {
                server: self.inner.shared.name.clone(),
                method: method.to_owned(),
                reason,
            }),
        }
    }
}
