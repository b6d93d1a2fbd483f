//! Tasks on [`Client`]: a `tools/call` that became a task, followed by executing what the
//! core's [`TaskPoller`] decides. One handle for both eras: the 2026-07-28 extension (the
//! server answers `resultType: "task"`) and protocol 2025-11-25 (the client sends
//! `params.task` when [`augment`] allows it and the answer is a `CreateTaskResult`).

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use futures_util::future::{Either, select};
use mcp_proto::RawParams;
use mcp_proto::RawResult;
use mcp_proto::jsonrpc::{self, ErrorObject};
use mcp_proto::session::{Era, ProtocolVersion};
use mcp_proto::task::augment::{self, Augmentation, DEFAULT_TASK_TTL};
use mcp_proto::task::{
    TASKS_CANCEL, TASKS_GET, TASKS_RESULT, TASKS_STATUS_NOTIFICATION, TASKS_UPDATE, TaskPolicy,
    TaskPoller, TaskStep,
};
use mcp_proto::types::v2026::ResultType;
use mcp_proto::types::{CallTool, CallToolResult, Request as _, TaskStatus, TaskSupport, Tool};
use serde::Serialize;
use serde_json::value::RawValue;
use tokio::sync::broadcast;

use super::Client;
use crate::error::Error;
use crate::options::{CallOptions, CancelHandle, TaskStatusSink};
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
    /// What the caller asked of the call; boxed to keep [`ToolCall`] small.
    follow: Box<Follow>,
}

/// What the caller asked of a call that became a task.
struct Follow {
    /// Told each status change.
    on_status: Option<TaskStatusSink>,
    /// The status and message last told to `on_status`.
    told: Option<(TaskStatus, Option<String>)>,
    /// The call's cancel handle: it also ends the wait for the task (which is then cancelled).
    cancel: Option<CancelHandle>,
    /// The tool whose call this is, and whether its result is checked against the tool's
    /// output schema.
    tool: String,
    check_output: bool,
    /// The connection's notifications, read for `notifications/tasks/status` while waiting
    /// for the next poll (bounded: a handle that lags only misses hints).
    statuses: broadcast::Receiver<crate::notify::Item>,
}

/// Each tool's `execution.taskSupport` (`None`: absent), from the `tools/list` pages seen.
#[derive(Debug, Default)]
pub(crate) struct TaskSupportCache {
    tools: Mutex<Option<HashMap<String, Option<TaskSupport>>>>,
}

impl TaskSupportCache {
    /// Replaces what is known with a complete tool list.
    pub(crate) fn remember(&self, tools: &[Tool]) {
        let map = tools
            .iter()
            .map(|t| {
                let support = t.execution.as_ref().and_then(|e| e.task_support.clone());
                (t.name.clone(), support)
            })
            .collect();
        // A panic while held leaves a plain map, still usable.
        *self.tools.lock().unwrap_or_else(PoisonError::into_inner) = Some(map);
    }

    /// `None` until a list was seen; then the tool's support (`Some(None)`: not listed or no
    /// `taskSupport`).
    fn lookup(&self, name: &str) -> Option<Option<TaskSupport>> {
        let tools = self.tools.lock().unwrap_or_else(PoisonError::into_inner);
        tools.as_ref().map(|m| m.get(name).cloned().flatten())
    }
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
    /// Calls a tool and hands out the task if the server made one of the call.
    ///
    /// In protocol 2025-11-25 the call asks for a task when the server accepts task-augmented
    /// calls and the tool's `execution.taskSupport` is `required` or `optional`; nothing needs
    /// declaring. In 2026-07-28 the server makes a task of a call only for a client that
    /// declared the tasks extension ([`ClientBuilder::tasks`](crate::ClientBuilder::tasks)).
    /// Either way the result is [`ToolCall::Task`] with the handle (status, cancel, result) or
    /// [`ToolCall::Complete`] when the server answered at once.
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
        let task_options = options.clone();
        let (raw, augmented) = self.call_tool_raw(name, arguments, options, true).await?;
        match self.task_of(name, &raw, augmented, &task_options)? {
            Some(task) => Ok(ToolCall::Task(task)),
            None => self
                .check_output(name, self.decode_tool_result(&raw)?, check)
                .map(ToolCall::Complete),
        }
    }

    /// How a `tools/call` of `name` may use a task: only with protocol 2025-11-25 (the 2026
    /// extension lets the server decide), only when the server accepts task-augmented
    /// `tools/call`, and then as the tool's `execution.taskSupport` says: from the last
    /// `tools/list` seen, fetched here on first need. A list that cannot be fetched means
    /// no task (the server's own error then says what is wrong).
    pub(crate) async fn augmentation(&self, name: &str) -> Augmentation {
        let capabilities = self.capabilities();
        if !self.may_augment() {
            return Augmentation::Forbidden;
        }
        let support = match self.inner.task_support.lookup(name) {
            Some(support) => support,
            None => match self.list_tools().await {
                Ok(_) => self.inner.task_support.lookup(name).flatten(),
                Err(e) => {
                    tracing::debug!(server = self.server_name(), error = %e, "no tool list: calling without a task");
                    None
                }
            },
        };
        augment::tools_call_with(capabilities, support.as_ref())
    }

    /// Whether any `tools/call` of this connection may carry `params.task`: protocol
    /// 2025-11-25 or later in the initialize era, with a server that accepts it.
    pub(crate) fn may_augment(&self) -> bool {
        self.era() == Era::Initialize
            && self.protocol_version() >= ProtocolVersion::V2025_11_25
            && augment::server_accepts(self.capabilities())
    }

    /// `params` with `params.task {ttl}` (the call's [`CallOptions::task_ttl`], else the
    /// default).
    pub(crate) fn with_task(
        &self,
        params: &RawParams,
        options: &CallOptions,
    ) -> Result<RawParams, Error> {
        let ttl = options.task_ttl.unwrap_or(DEFAULT_TASK_TTL);
        let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX);
        let text = augment::with_task(params.get(), Some(ttl_ms)).ok_or_else(|| {
            self.usage(mcp_proto::session::UsageError::InvalidParams(
                "tool call params cannot carry a task".into(),
            ))
        })?;
        let raw = RawValue::from_string(text).map_err(|e| {
            self.usage(mcp_proto::session::UsageError::InvalidParams(e.to_string()))
        })?;
        Ok(raw.into())
    }

    /// The task a result of `tool` announces: a `CreateTaskResult` when the call carried
    /// `params.task` (`augmented`), else a 2026 `resultType: "task"` when the extension is
    /// declared. The task's result is checked against the tool's output schema unless
    /// `options` skip it.
    pub(crate) fn task_of(
        &self,
        tool: &str,
        raw: &RawResult,
        augmented: bool,
        options: &CallOptions,
    ) -> Result<Option<TaskHandle<R>>, Error> {
        if !augmented && !self.inner.handlers.tasks {
            return Ok(None);
        }
        let raw = raw
            .to_raw()
            .map_err(|_| self.unreadable_answer(CallTool::METHOD))?;
        let now = self.inner.runtime.now();
        let seeded = if augmented {
            TaskPoller::from_create_task(raw, now, TaskPolicy::default())
        } else if ResultType::of(raw) == ResultType::Task {
            TaskPoller::new(raw, now, TaskPolicy::default())
        } else {
            return Ok(None);
        };
        let (poller, step) = seeded.map_err(|detail| Error::Task {
            server: self.inner.shared.name.clone(),
            task_id: String::new(),
            detail,
        })?;
        let mut handle = TaskHandle {
            client: self.clone(),
            poller,
            step: Some(step),
            follow: Box::new(Follow {
                on_status: options.task_status.clone(),
                told: None,
                cancel: options.cancel.clone(),
                tool: tool.to_owned(),
                check_output: !options.skip_output_check,
                statuses: self.inner.shared.subscribe(),
            }),
        };
        if let Some(created) = &options.task_created {
            created(handle.poller.task_id());
        }
        handle.tell_status(None);
        Ok(Some(handle))
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
    /// core says it is due (the server's `pollIntervalMs` / `pollInterval`, clamped), answers
    /// input requests with the client's handlers (2026: sent in `tasks/update`; 2025-11-25:
    /// the server sends them as requests while `tasks/result` is open), fetches the payload
    /// with `tasks/result` (2025-11-25), and stops at a terminal status or when the task
    /// outlives its ttl. A `notifications/tasks/status` is taken in when it comes (the status
    /// callback hears of it at once; polling never waits for one), and the call's
    /// [`CancelHandle`] ends the wait at once, not at the next poll.
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
            let message = match &step {
                TaskStep::Working { message } | TaskStep::Cancelled { message } => message.clone(),
                _ => None,
            };
            self.tell_status(message);
            match step {
                TaskStep::Working { .. } => {}
                TaskStep::Input { requests } => self.answer(requests).await?,
                TaskStep::ResultReady => {
                    let step = self.fetch_result().await?;
                    self.step = Some(step);
                }
                TaskStep::Completed(raw) => {
                    let result = self.client.decode_tool_result(&raw.into())?;
                    return self.client.check_output(
                        &self.follow.tool,
                        result,
                        self.follow.check_output,
                    );
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
        let cancel = self.follow.cancel.clone();
        let result = self.wait().await;
        // Ended by the call's cancel handle: the task still runs; the guard cancels it.
        let cancelled_by_caller = matches!(result, Err(Error::Cancelled { .. }))
            && cancel.is_some_and(|c| c.is_cancelled());
        if !cancelled_by_caller {
            guard.task_id = None;
        }
        result
    }

    /// Tells `on_status` the current status, when it or its message changed.
    fn tell_status(&mut self, message: Option<String>) {
        let Some(sink) = &self.follow.on_status else {
            return;
        };
        let now = (self.poller.status().clone(), message);
        if self.follow.told.as_ref() != Some(&now) {
            sink(&now.0, now.1.as_deref());
            self.follow.told = Some(now);
        }
    }

    /// Options for the requests that follow the task: the call's cancel handle.
    fn follow_options(&self) -> CallOptions {
        match &self.follow.cancel {
            Some(c) => CallOptions::new().cancel_on(c),
            None => CallOptions::new(),
        }
    }

    /// `tasks/result` (2025-11-25): the payload or the original request's error. It may stay
    /// open while the server asks for input, so it is bounded only by the task's ttl.
    async fn fetch_result(&mut self) -> Result<TaskStep, Error> {
        let runtime = &self.client.inner.runtime;
        let options = match self.poller.result_deadline() {
            Some(at) => self
                .follow_options()
                .timeout(at.saturating_duration_since(runtime.now())),
            None => self.follow_options().no_timeout(),
        };
        let params = jsonrpc::to_raw(&self.poller.result_params()).ok();
        let answer = self.client.request_raw(TASKS_RESULT, params, options).await;
        match answer {
            Ok(raw) => Ok(self.poller.handle_result(Ok(raw))),
            Err(e) => Ok(self.poller.handle_result(Err(e.into_remote()?))),
        }
    }

    fn shared(&self) -> &Arc<Shared> {
        &self.client.inner.shared
    }

    /// Sleeps until the poller has work, then does it. A `notifications/tasks/status` about
    /// this task that comes first is taken in at once (the status stream learns sooner); the
    /// next poll stays scheduled, so a server that never sends one is still followed.
    async fn next_step(&mut self) -> Result<TaskStep, Error> {
        let runtime = &self.client.inner.runtime;
        loop {
            let Some(at) = self.poller.poll_timeout() else {
                return Ok(TaskStep::Lost("no further poll can be scheduled".into()));
            };
            let sleep = runtime.sleep_until(at);
            let status = next_status(&mut self.follow.statuses);
            // The call's cancel handle ends the wait at once, not at the next poll (which may
            // be a minute away).
            let cancel = self.follow.cancel.clone();
            let cancelled = async move {
                match cancel {
                    Some(c) => drop(c.cancelled().await),
                    None => std::future::pending::<()>().await,
                }
            };
            let woken = match select(
                select(sleep, std::pin::pin!(status)),
                std::pin::pin!(cancelled),
            )
            .await
            {
                Either::Left((Either::Left(((), _)), _)) => Woken::Due,
                Either::Left((Either::Right((params, _)), _)) => Woken::Status(params),
                Either::Right(((), _)) => Woken::Cancelled,
            };
            let params = match woken {
                Woken::Due => break,
                Woken::Status(params) => params,
                Woken::Cancelled => {
                    return Err(Error::Cancelled {
                        server: self.shared().name.clone(),
                        method: "tools/call".into(),
                    });
                }
            };
            // Another task's, unreadable, or after the outcome is settled: a hint ignored.
            if let Some(step) = self.poller.handle_status(runtime.now(), &params) {
                return Ok(step);
            }
        }
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
            .request_raw(TASKS_GET, params, self.follow_options())
            .await;
        let now = runtime.now();
        match answer {
            Ok(raw) => Ok(self.poller.handle_get(now, Ok(&raw))),
            Err(e) => Ok(self.poller.handle_get(now, Err(e.into_remote()?))),
        }
    }

    /// Answers a task's input requests with the handlers and sends the answers.
    async fn answer(
        &mut self,
        requests: Vec<(String, mcp_proto::types::v2026::InputRequest)>,
    ) -> Result<(), Error> {
        let mut answers = Vec::with_capacity(requests.len());
        for (key, request) in requests {
            let answer = match self
                .client
                .inner
                .handlers
                .dispatch(&request.method, request.params)
            {
                Some(fut) => fut.await,
                None => Err(ErrorObject::method_not_found(&request.method)),
            };
            match answer {
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

/// What ended a follower's wait between two polls.
enum Woken {
    /// The poller has work (the next poll or the ttl backstop).
    Due,
    /// A `notifications/tasks/status` came (its params).
    Status(Box<RawValue>),
    /// The call's cancel handle fired.
    Cancelled,
}

/// The params of the next `notifications/tasks/status` on `statuses`; never resolves once
/// the stream ended (the connection's own errors then reach the next poll).
async fn next_status(statuses: &mut broadcast::Receiver<crate::notify::Item>) -> Box<RawValue> {
    loop {
        match statuses.recv().await {
            Ok(crate::notify::Item::Notification(n)) if n.method == TASKS_STATUS_NOTIFICATION => {
                if let Some(params) = n.params {
                    return params;
                }
            }
            // Other notifications, gaps and missed ones (a lag): the poll covers what was
            // missed.
            Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
            Err(broadcast::error::RecvError::Closed) => std::future::pending::<()>().await,
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
        let session = state.core.session_mut();
        // Detached in the initialize era: the caller may be stopping the program, and a
        // close that follows at once must not swallow the cancel. The discover era's
        // requests need their envelope, so there it is an ordinary request (the driver
        // ignores completions it has no call for). A closed session refuses, which is fine:
        // nothing to cancel at.
        let sent = if session.era() == Some(mcp_proto::session::Era::Initialize) {
            session.send_detached_request(Cow::Borrowed(TASKS_CANCEL), Some(params))
        } else {
            session
                .send_request(
                    now,
                    Cow::Borrowed(TASKS_CANCEL),
                    Some(params.into()),
                    mcp_proto::session::RequestOptions::new(),
                )
                .map(drop)
        };
        tracing::debug!(
            server = &*self.shared.name,
            ok = sent.is_ok(),
            "call dropped: cancelling its task"
        );
        state.wake_driver();
    }
}
