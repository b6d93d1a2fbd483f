//! The tasks extension (2026-07-28) on [`Client`]: a `tools/call` the server turned into a
//! task, followed by executing what the core's [`TaskPoller`] decides.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use mcp_proto::RawResult;
use mcp_proto::jsonrpc::{self, ErrorObject};
use mcp_proto::task::{TASKS_CANCEL, TASKS_GET, TASKS_UPDATE, TaskPolicy, TaskPoller, TaskStep};
use mcp_proto::types::TaskStatus;
use mcp_proto::types::v2026::ResultType;
use mcp_proto::types::{CallTool, CallToolResult, Request as _};
use serde::Serialize;

use super::Client;
use crate::error::Error;
use crate::options::CallOptions;
use crate::runtime::Runtime;
use crate::shared::Shared;

/// What a `tools/call` gave, from [`Client::call_tool_task`].
#[derive(Debug)]
#[non_exhaustive]
pub enum ToolCall<R: Runtime> {
    /// The result itself.
    Complete(CallToolResult),
    /// A task that will produce it.
    Task(TaskHandle<R>),
}

/// A task the server made of a `tools/call` (tasks extension, 2026-07-28).
///
/// [`wait`](Self::wait) follows it to its end; [`cancel`](Self::cancel) asks the server to
/// stop it. Dropping the handle (or the `wait` future) stops following the task, which keeps
/// running on the server unless cancelled.
pub struct TaskHandle<R: Runtime> {
    client: Client<R>,
    poller: TaskPoller,
    /// What the last state seen means, not yet acted on.
    step: Option<TaskStep>,
    /// The tool whose call this is, and whether its result is checked against the tool's
    /// output schema.
    tool: String,
    check_output: bool,
}

impl<R: Runtime> fmt::Debug for TaskHandle<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskHandle")
            .field("task_id", &self.poller.task_id())
            .field("status", self.poller.status())
            .finish_non_exhaustive()
    }
}

impl<R: Runtime> Client<R> {
    /// Calls a tool and hands out the task if the server made one of the call (the tasks
    /// extension must be declared with [`ClientBuilder::tasks`](crate::ClientBuilder::tasks)).
    ///
    /// # Errors
    ///
    /// See [`call_tool`](Self::call_tool).
    pub async fn call_tool_task(
        &self,
        name: impl AsRef<str>,
        arguments: impl Serialize,
        options: CallOptions,
    ) -> Result<ToolCall<R>, Error> {
        let name = name.as_ref();
        let check = !options.skip_output_check;
        let raw = self.call_tool_raw(name, arguments, options).await?;
        match self.task_of(name, check, &raw)? {
            Some(task) => Ok(ToolCall::Task(task)),
            None => self
                .check_output(name, self.decode_tool_result(&raw)?, check)
                .map(ToolCall::Complete),
        }
    }

    /// The task a result of `tool` announces, when the extension is declared and it is one;
    /// `check_output` says whether the task's result is checked against the tool's output
    /// schema.
    pub(crate) fn task_of(
        &self,
        tool: &str,
        check_output: bool,
        raw: &RawResult,
    ) -> Result<Option<TaskHandle<R>>, Error> {
        if !self.inner.handlers.tasks {
            return Ok(None);
        }
        let raw = raw
            .to_raw()
            .map_err(|e| self.decode_error(CallTool::METHOD, e))?;
        if ResultType::of(raw) != ResultType::Task {
            return Ok(None);
        }
        let now = self.inner.runtime.now();
        let (poller, step) =
            TaskPoller::new(raw, now, TaskPolicy::default()).map_err(|detail| Error::Task {
                server: self.inner.shared.name.clone(),
                task_id: String::new(),
                detail,
            })?;
        Ok(Some(TaskHandle {
            client: self.clone(),
            poller,
            step: Some(step),
            tool: tool.to_owned(),
            check_output,
        }))
    }
}

impl<R: Runtime> TaskHandle<R> {
    /// The task's id.
    #[must_use]
    pub fn id(&self) -> &str {
        self.poller.task_id()
    }

    /// The last status seen.
    #[must_use]
    pub fn status(&self) -> &TaskStatus {
        self.poller.status()
    }

    /// Follows the task to its end and returns the tool's result: polls `tasks/get` when the
    /// core says it is due (the server's `pollIntervalMs`, clamped), answers input requests
    /// with the client's handlers and sends them in `tasks/update`, and stops at a terminal
    /// status or when the task outlives its `ttlMs`.
    ///
    /// # Errors
    ///
    /// [`Error::Remote`] for a `failed` task (its JSON-RPC error) or a handler's refusal of an
    /// input request (the task is then cancelled), [`Error::Cancelled`] for a `cancelled`
    /// task, [`Error::Task`] when it cannot be followed, [`Error::OutputSchema`] when the
    /// result does not match the tool's output schema (see
    /// [`ClientBuilder::validate_output`](crate::ClientBuilder::validate_output)), and the
    /// errors of the connection.
    pub async fn wait(mut self) -> Result<CallToolResult, Error> {
        loop {
            let step = match self.step.take() {
                Some(step) => step,
                None => self.next_step().await?,
            };
            match step {
                TaskStep::Working { .. } => {}
                TaskStep::Input { requests } => self.answer(requests).await?,
                TaskStep::Completed(raw) => {
                    let result = self.client.decode_tool_result(&raw.into())?;
                    return self
                        .client
                        .check_output(&self.tool, result, self.check_output);
                }
                TaskStep::Failed(e) => return Err(self.remote(e)),
                TaskStep::Cancelled { .. } => {
                    return Err(Error::Cancelled {
                        server: self.shared().name.clone(),
                        method: "tools/call".into(),
                    });
                }
                TaskStep::Expired => return Err(self.lost("it outlived its ttlMs".into())),
                TaskStep::Lost(detail) => return Err(self.lost(detail)),
                other => return Err(self.lost(format!("unexpected step {other:?}"))),
            }
        }
    }

    /// Asks the server to cancel the task (`tasks/cancel`). Cancellation is cooperative: the
    /// task may still complete; [`wait`](Self::wait) reports how it ended.
    ///
    /// # Errors
    ///
    /// The server's refusal (an unknown task) and the errors of the connection.
    pub async fn cancel(&self) -> Result<(), Error> {
        let params = jsonrpc::to_raw(&self.poller.cancel_params()).ok();
        self.client
            .request_raw(TASKS_CANCEL, params, CallOptions::new())
            .await
            .map(drop)
    }

    /// [`wait`](Self::wait), asking the server to cancel the task if the future is dropped
    /// before the end (the contract of a dropped call).
    pub(crate) async fn wait_cancelling_on_drop(self) -> Result<CallToolResult, Error> {
        let mut guard = CancelTaskOnDrop {
            shared: self.shared().clone(),
            now: self.client.now_fn(),
            task_id: Some(self.id().to_owned()),
        };
        let result = self.wait().await;
        guard.task_id = None;
        result
    }

    fn shared(&self) -> &Arc<Shared> {
        &self.client.inner.shared
    }

    /// Sleeps until the poller has work, then does it.
    async fn next_step(&mut self) -> Result<TaskStep, Error> {
        let runtime = &self.client.inner.runtime;
        let Some(at) = self.poller.poll_timeout() else {
            return Ok(TaskStep::Lost("no further poll can be scheduled".into()));
        };
        runtime.sleep_until(at).await;
        let now = runtime.now();
        if let Some(step) = self.poller.handle_timeout(now) {
            return Ok(step);
        }
        let Some(params) = self.poller.poll(now) else {
            return Ok(TaskStep::Working { message: None });
        };
        let params = jsonrpc::to_raw(&params).ok();
        let answer = self
            .client
            .request_raw(TASKS_GET, params, CallOptions::new())
            .await;
        let now = runtime.now();
        match answer {
            Ok(raw) => Ok(self.poller.handle_get(now, Ok(&raw))),
            Err(Error::Remote {
                code,
                message,
                data,
                ..
            }) => {
                let mut e = ErrorObject::new(code, message);
                e.data = data;
                Ok(self.poller.handle_get(now, Err(e)))
            }
            // The connection's own failure (closed, timed out) ends the wait as it is.
            Err(e) => Err(e),
        }
    }

    /// Answers a task's input requests with the handlers and sends the answers.
    async fn answer(
        &mut self,
        requests: Vec<(String, mcp_proto::types::v2026::InputRequest)>,
    ) -> Result<(), Error> {
        let mut answers = Vec::with_capacity(requests.len());
        for (key, request) in requests {
            let params = request
                .params
                .and_then(|p| serde_json::from_str(p.get()).ok())
                .unwrap_or(serde_json::Value::Null);
            let answer = match self.client.inner.handlers.dispatch(&request.method, params) {
                Some(fut) => fut.await,
                None => Err(ErrorObject::method_not_found(&request.method)),
            };
            let value = answer.and_then(|v| {
                jsonrpc::to_raw(&v)
                    .map_err(|e| ErrorObject::new(ErrorObject::INTERNAL_ERROR, e.to_string()))
            });
            match value {
                Ok(raw) => answers.push((key, raw)),
                Err(e) => {
                    // The task cannot go on without it; a refused cancel changes nothing.
                    let _ = self.cancel().await;
                    return Err(self.remote(e));
                }
            }
        }
        let params = self
            .poller
            .update_params(&answers)
            .map_err(|detail| self.lost(detail))?;
        self.client
            .request_raw(TASKS_UPDATE, Some(params), CallOptions::new())
            .await
            .map(drop)
    }

    fn remote(&self, e: ErrorObject) -> Error {
        Error::Remote {
            server: self.shared().name.clone(),
            method: "tools/call".into(),
            code: e.code,
            message: e.message,
            data: e.data,
        }
    }

    fn lost(&self, detail: String) -> Error {
        Error::Task {
            server: self.shared().name.clone(),
            task_id: self.id().to_owned(),
            detail,
        }
    }
}

/// Sends `tasks/cancel` (fire and forget) when a transparent wait is dropped before the end.
struct CancelTaskOnDrop {
    shared: Arc<Shared>,
    now: Arc<dyn Fn() -> std::time::Instant + Send + Sync>,
    task_id: Option<String>,
}

impl Drop for CancelTaskOnDrop {
    fn drop(&mut self) {
        let Some(task_id) = self.task_id.take() else {
            return;
        };
        let params = mcp_proto::task::TaskIdParams { task_id };
        let Ok(params) = jsonrpc::to_raw(&params) else {
            return;
        };
        let now = (self.now)();
        let mut state = self.shared.lock();
        // The driver ignores completions it has no call for; a closed session refuses,
        // which is fine: nothing to cancel at.
        let sent = state.core.session_mut().send_request(
            now,
            Cow::Borrowed(TASKS_CANCEL),
            Some(params.into()),
            mcp_proto::session::RequestOptions::new(),
        );
        tracing::debug!(
            server = &*self.shared.name,
            ok = sent.is_ok(),
            "call dropped: cancelling its task"
        );
        state.wake_driver();
    }
}
