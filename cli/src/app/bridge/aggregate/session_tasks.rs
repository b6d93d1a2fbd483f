//! `mcp bridge --config FILE --listen`: a server's task-augmented sampling or elicitation
//! request (protocol 2025-11-25), taken as the bridge's own task and answered through the
//! HTTP host session it is attributed to.
//!
//! The servers start before any host session exists and every session shares them, so they
//! are told one set of capabilities for all: the bridge declares itself a task receiver of
//! both methods (`tasks.requests.sampling.createMessage`, `tasks.requests.elicitation.create`,
//! `tasks.list`, `tasks.cancel`). Its client core answers a task-augmented request at once
//! with a task of its own and answers the server's `tasks/get`, `tasks/result`, `tasks/list`
//! and `tasks/cancel` about it; the request reaches [`super::server_requests`], which passes
//! it to the one session it is attributed to, as any request:
//!
//! - a session that declared the method in its own `tasks.requests` gets it with its `task`
//!   and runs it as the session's task: the bridge follows that task with `tasks/result`
//!   (held by the session until the task ends) and the answer completes the bridge's task;
//!   when the server cancels the bridge's task, the bridge sends the session `tasks/cancel`;
//! - any other session gets a plain request (its `task` removed) and its answer completes
//!   the bridge's task.
//!
//! The task the server polls is the bridge's, not the session's: a server cannot be told a
//! session's task id, because its later `tasks/get` names no session and may come when the
//! session that made the task has no request in flight to it (or is gone).

use mcp_proto::jsonrpc::ErrorObject;
use mcp_proto::session::{RequestError, RequestOptions};
use mcp_proto::types::ClientCapabilities;
use mcp_tokio::mcp_driver::RawAnswer;
use mcp_tokio::server::{RequestContext, ServerError};
use serde_json::value::RawValue;
use serde_json::{Value, json};

/// Whether a client of `capabilities` takes `method` as a task (declared in its
/// `tasks.requests`).
pub fn runs_as_task(capabilities: Option<&ClientCapabilities>, method: &str) -> bool {
    let Some(requests) = capabilities.and_then(|c| c.tasks.as_ref()?.requests.as_ref()) else {
        return false;
    };
    match method {
        "sampling/createMessage" => requests.sampling_create_message(),
        "elicitation/create" => requests.elicitation_create(),
        _ => false,
    }
}

/// Sends `method` with `params` as written to the host session of `context`, no deadline of
/// its own (the server's request or task bounds it); the host's answer as written, or the
/// error for the server.
pub async fn request_raw(
    context: &RequestContext,
    method: &'static str,
    params: Option<&RawValue>,
) -> RawAnswer {
    let internal = |m: String| ErrorObject::new(ErrorObject::INTERNAL_ERROR, m);
    let options = RequestOptions::new().no_timeout();
    match context.request_raw(method, params, options).await {
        Ok(raw) => raw
            .into_raw()
            .map_err(|e| internal(format!("the host's answer: {e}"))),
        Err(ServerError::Request(RequestError::Remote(error))) => Err(error),
        Err(e) => Err(internal(format!(
            "mcp bridge: the host did not answer: {e}"
        ))),
    }
}

/// [`request_raw`] with decoded params and answer: for the task path, which edits both.
pub async fn request(
    context: &RequestContext,
    method: &'static str,
    params: Value,
) -> Result<Value, ErrorObject> {
    let internal = |m: String| ErrorObject::new(ErrorObject::INTERNAL_ERROR, m);
    let params = match params {
        Value::Null => None,
        p => Some(mcp_proto::jsonrpc::to_raw(&p).map_err(|e| internal(e.to_string()))?),
    };
    let raw = request_raw(context, method, params.as_deref()).await?;
    serde_json::from_str(raw.get()).map_err(|e| internal(format!("the host's answer: {e}")))
}

/// Asks the host session of `context` for `method` with `params`, which carry the `task` of
/// the server's request: as a task of the session's own when it declared the method in
/// `tasks.requests` (then the task's result, fetched with `tasks/result`), else as a plain
/// request. The answer completes the bridge's task.
pub async fn ask_for_task(
    context: &RequestContext,
    method: &'static str,
    mut params: Value,
) -> Result<Value, ErrorObject> {
    if !runs_as_task(context.client_capabilities().as_ref(), method) {
        if let Some(p) = params.as_object_mut() {
            p.remove("task");
        }
        return request(context, method, params).await;
    }
    let created = request(context, method, params).await?;
    let Some(task) = created
        .get("task")
        .and_then(|t| t.get("taskId"))
        .and_then(Value::as_str)
        .map(str::to_owned)
    else {
        // The session answered at once, as a receiver may.
        return Ok(created);
    };
    let cancel = CancelOnDrop {
        context: Some(context.clone()),
        task: task.clone(),
    };
    let mut result = request(context, "tasks/result", json!({"taskId": task})).await;
    cancel.disarm();
    if let Ok(Value::Object(answer)) = &mut result {
        // The session's related-task `_meta` names its task; the bridge's client core puts
        // its own task's in when it answers the server's `tasks/result`.
        if let Some(Value::Object(meta)) = answer.get_mut("_meta") {
            meta.remove(mcp_proto::types::RELATED_TASK_META);
            if meta.is_empty() {
                answer.remove("_meta");
            }
        }
    }
    result
}

/// Cancels the host session's task when dropped armed: the server cancelled the bridge's
/// task (its client core dropped the handler) while the session's task still ran.
struct CancelOnDrop {
    context: Option<RequestContext>,
    task: String,
}

impl CancelOnDrop {
    /// The session's task ended: nothing to cancel.
    fn disarm(mut self) {
        self.context = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(context) = self.context.take() else {
            return;
        };
        let task = std::mem::take(&mut self.task);
        // Dropped inside the bridge's runtime (a handler future), so a task can be spawned;
        // the answer does not matter (the session may be gone).
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = request(&context, "tasks/cancel", json!({"taskId": task})).await;
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_runs_as_tasks_only_the_methods_it_declared() {
        let caps = |v: Value| serde_json::from_value::<ClientCapabilities>(v).expect("caps");
        let both = caps(
            json!({"sampling": {}, "elicitation": {}, "tasks": {"requests": {
            "sampling": {"createMessage": {}}, "elicitation": {"create": {}}}}}),
        );
        assert!(runs_as_task(Some(&both), "sampling/createMessage"));
        assert!(runs_as_task(Some(&both), "elicitation/create"));
        assert!(!runs_as_task(Some(&both), "roots/list"));
        let sampling = caps(json!({"tasks": {"requests": {"sampling": {"createMessage": {}}}}}));
        assert!(!runs_as_task(Some(&sampling), "elicitation/create"));
        // `tasks` without `requests`: a session that lists its own tasks only.
        let listing = caps(json!({"tasks": {"list": {}}}));
        assert!(!runs_as_task(Some(&listing), "sampling/createMessage"));
        assert!(!runs_as_task(None, "sampling/createMessage"));
    }
}
