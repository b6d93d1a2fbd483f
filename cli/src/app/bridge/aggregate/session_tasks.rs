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

use mcp_proto::jsonrpc::{self, ErrorObject};
use mcp_proto::session::{RequestError, RequestOptions};
use mcp_proto::types::ClientCapabilities;
use mcp_proto::types::RELATED_TASK_META;
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

/// Asks the host session of `context` for `method` with `params` (as written), which carry
/// the `task` of the server's request: as a task of the session's own when it declared the
/// method in `tasks.requests` (then the task's result, fetched with `tasks/result`), else as
/// a plain request (the params without their `task`, nothing else changed). The answer, as
/// the session wrote it (but for the session's related-task `_meta`), completes the bridge's
/// task.
pub async fn ask_for_task(
    context: &RequestContext,
    method: &'static str,
    params: Option<Box<RawValue>>,
) -> RawAnswer {
    if !runs_as_task(context.client_capabilities().as_ref(), method) {
        let params = match params {
            Some(p) => Some(raw(jsonrpc::without_member(p.get(), "task"))?),
            None => None,
        };
        return request_raw(context, method, params.as_deref()).await;
    }
    let created = request_raw(context, method, params.as_deref()).await?;
    let Some(task) = created_task_id(created.get()) else {
        // The session answered at once, as a receiver may.
        return Ok(created);
    };
    let cancel = CancelOnDrop {
        context: Some(context.clone()),
        task: task.clone(),
    };
    let query = raw(serde_json::to_string(&json!({"taskId": task})))?;
    let result = request_raw(context, "tasks/result", Some(&query)).await;
    cancel.disarm();
    without_related_task(result?)
}

/// The id of the task in a `CreateTaskResult` (an object's text); `None` when it is not one.
fn created_task_id(created: &str) -> Option<String> {
    let task = jsonrpc::member(created, "task").ok()??;
    let id = jsonrpc::member(task.get(), "taskId").ok()??;
    serde_json::from_str(id.get()).ok()
}

/// `answer` without its related-task `_meta` (and without `_meta` when nothing else is in
/// it), every other member as written: the session's related-task `_meta` names its task;
/// the bridge's client core puts its own task's in when it answers the server's
/// `tasks/result`. An answer that is not an object passes as it is.
fn without_related_task(answer: Box<RawValue>) -> RawAnswer {
    let Ok(Some(meta)) = jsonrpc::member(answer.get(), "_meta") else {
        return Ok(answer);
    };
    let Ok(rest) = jsonrpc::without_member(meta.get(), RELATED_TASK_META) else {
        // `_meta` is not an object: not the bridge's to mend.
        return Ok(answer);
    };
    if rest == meta.get() {
        return Ok(answer);
    }
    let changed = if rest == "{}" {
        jsonrpc::without_member(answer.get(), "_meta")
    } else {
        let rest = raw(Ok(rest))?;
        jsonrpc::with_member(answer.get(), "_meta", &rest)
    };
    raw(changed)
}

/// Edited JSON text as a raw value, or the error for the server.
fn raw(text: Result<String, serde_json::Error>) -> Result<Box<RawValue>, ErrorObject> {
    text.and_then(RawValue::from_string)
        .map_err(|e| internal(format!("mcp bridge: {e}")))
}

fn internal(message: String) -> ErrorObject {
    ErrorObject::new(ErrorObject::INTERNAL_ERROR, message)
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

    fn written(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_owned()).expect("JSON")
    }

    #[test]
    fn the_sessions_related_task_leaves_its_answer_and_nothing_else_does() {
        let related = r#""io.modelcontextprotocol/related-task":{"taskId":"h1"}"#;
        let answer = format!(r#"{{"action":"accept","n":1.50,"_meta":{{"z":1,{related}}}}}"#);
        let kept = without_related_task(written(&answer)).expect("an answer");
        assert_eq!(
            kept.get(),
            r#"{"action":"accept","n":1.50,"_meta":{"z":1}}"#
        );
        // `_meta` with the related task alone goes with it.
        let answer = format!(r#"{{"_meta":{{{related}}},"action":"decline"}}"#);
        let kept = without_related_task(written(&answer)).expect("an answer");
        assert_eq!(kept.get(), r#"{"action":"decline"}"#);
        // Nothing to remove, or not an object: as written.
        for same in [
            r#"{ "action": "accept", "_meta": {"z": 1} }"#,
            r#"{"a":2.0}"#,
            "3",
        ] {
            let kept = without_related_task(written(same)).expect("an answer");
            assert_eq!(kept.get(), same);
        }
    }

    #[test]
    fn the_task_id_of_a_created_task_is_read() {
        let created = r#"{"task":{"status":"working","taskId":"h1"}}"#;
        assert_eq!(created_task_id(created).as_deref(), Some("h1"));
        assert_eq!(created_task_id(r#"{"action":"accept"}"#), None);
        assert_eq!(created_task_id(r#"{"task":{"taskId":3}}"#), None);
        assert_eq!(created_task_id("null"), None);
    }

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
