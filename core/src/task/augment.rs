//! Whether a `tools/call` of protocol 2025-11-25 carries `params.task`, and how.
//!
//! The rule (client rules 1.9): a client must not augment `tools/call` unless the server
//! declares `capabilities.tasks.requests.tools.call` and the tool's `execution.taskSupport`
//! is `optional` or `required`; `required` means the call must use a task. A tool without
//! `execution`, with `forbidden`, or with a value this client does not know never gets one.

use crate::time::Duration;
use crate::types::{ServerCapabilities, TaskSupport, Tool};

/// The `ttl` a client asks for when the caller names none: long enough for a slow tool and
/// for the client to fetch the result, short enough that an abandoned task does not linger.
pub const DEFAULT_TASK_TTL: Duration = Duration::from_secs(3600);

/// How a `tools/call` may use a task, from [`tools_call`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Augmentation {
    /// The call must not carry `params.task`.
    Forbidden,
    /// The call may carry it (the caller chooses; a transparent call does not).
    Optional,
    /// The call must carry it: the server refuses the tool otherwise.
    Required,
}

impl Augmentation {
    /// Whether the call carries `params.task` when the caller `wants_task` (asked for the
    /// handle) or not (a transparent call): `Required` always, `Optional` when asked.
    #[must_use]
    pub fn uses_task(self, wants_task: bool) -> bool {
        match self {
            Augmentation::Forbidden => false,
            Augmentation::Optional => wants_task,
            Augmentation::Required => true,
        }
    }
}

/// Whether the server accepts task-augmented `tools/call` at all
/// (`capabilities.tasks.requests.tools.call` present).
#[must_use]
pub fn server_accepts(capabilities: &ServerCapabilities) -> bool {
    capabilities
        .tasks
        .as_ref()
        .and_then(|t| t.requests.as_ref())
        .and_then(|r| r.tools.as_ref())
        .is_some_and(|tools| tools.contains_key("call"))
}

/// How a call of `tool` may use a task with a server that declared `capabilities`.
#[must_use]
pub fn tools_call(capabilities: &ServerCapabilities, tool: &Tool) -> Augmentation {
    let support = tool
        .execution
        .as_ref()
        .and_then(|e| e.task_support.as_ref());
    tools_call_with(capabilities, support)
}

/// [`tools_call`] from the tool's `execution.taskSupport` alone (`None`: absent).
#[must_use]
pub fn tools_call_with(
    capabilities: &ServerCapabilities,
    support: Option<&TaskSupport>,
) -> Augmentation {
    if !server_accepts(capabilities) {
        return Augmentation::Forbidden;
    }
    match support {
        Some(TaskSupport::Optional) => Augmentation::Optional,
        Some(TaskSupport::Required) => Augmentation::Required,
        _ => Augmentation::Forbidden,
    }
}

/// `params` (a JSON object's text, as `RawParams::tool_call` makes it) with
/// `"task":{"ttl":<ms>}` added (`"task":{}` without a ttl: the server picks one). `None` when
/// `params` is not an object's text or already has a top-level `task` member.
#[must_use]
pub fn with_task(params: &str, ttl_ms: Option<u64>) -> Option<String> {
    let value: serde_json::Map<String, serde_json::Value> = serde_json::from_str(params).ok()?;
    if value.contains_key("task") {
        return None;
    }
    let body = params.trim_end().strip_suffix('}')?;
    let mut out = String::with_capacity(params.len() + 32);
    out.push_str(body.trim_end());
    if !value.is_empty() {
        out.push(',');
    }
    out.push_str("\"task\"");
    match ttl_ms {
        Some(ms) => {
            out.push_str(":{\"ttl\":");
            out.push_str(&ms.to_string());
            out.push_str("}}");
        }
        None => out.push_str(":{}}"),
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn caps(v: serde_json::Value) -> ServerCapabilities {
        serde_json::from_value(v).unwrap()
    }

    fn tool(execution: serde_json::Value) -> Tool {
        serde_json::from_value(json!({
            "name": "t", "inputSchema": {"type": "object"}, "execution": execution
        }))
        .unwrap()
    }

    #[test]
    fn the_server_and_the_tool_must_both_allow_a_task() {
        let yes = caps(json!({"tasks": {"requests": {"tools": {"call": {}}}}}));
        let no = caps(json!({"tasks": {"list": {}, "requests": {"tools": {}}}}));
        let none = caps(json!({"tools": {}}));
        let required = tool(json!({"taskSupport": "required"}));
        let optional = tool(json!({"taskSupport": "optional"}));
        let forbidden = tool(json!({"taskSupport": "forbidden"}));
        let unknown = tool(json!({"taskSupport": "sometimes"}));
        let absent: Tool = serde_json::from_value(json!({"name": "a", "inputSchema": {}})).unwrap();
        assert_eq!(tools_call(&yes, &required), Augmentation::Required);
        assert_eq!(tools_call(&yes, &optional), Augmentation::Optional);
        assert_eq!(tools_call(&yes, &forbidden), Augmentation::Forbidden);
        assert_eq!(tools_call(&yes, &unknown), Augmentation::Forbidden);
        assert_eq!(tools_call(&yes, &absent), Augmentation::Forbidden);
        assert_eq!(tools_call(&no, &required), Augmentation::Forbidden);
        assert_eq!(tools_call(&none, &optional), Augmentation::Forbidden);
        assert!(Augmentation::Required.uses_task(false));
        assert!(!Augmentation::Optional.uses_task(false));
        assert!(Augmentation::Optional.uses_task(true));
        assert!(!Augmentation::Forbidden.uses_task(true));
    }

    #[test]
    fn the_task_member_is_spliced_into_the_params() {
        let with = with_task(r#"{"name":"x","arguments":{"a":1}}"#, Some(60000)).unwrap();
        let v: serde_json::Value = serde_json::from_str(&with).unwrap();
        assert_eq!(
            v,
            json!({"name": "x", "arguments": {"a": 1}, "task": {"ttl": 60000}})
        );
        let bare = with_task("{}", None).unwrap();
        assert_eq!(bare, r#"{"task":{}}"#);
        assert!(with_task(r#"{"task":{}}"#, None).is_none(), "never twice");
        assert!(with_task("[1]", None).is_none());
        assert!(with_task("{", None).is_none());
    }
}
