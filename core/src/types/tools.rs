//! Tools: listing and calling.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{ContentBlock, Cursor, Icon, PaginatedParams, Request, TaskMetadata};

/// A tool the server offers (an entry of `tools/list`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    /// The name to call it by.
    pub name: String,
    /// Human-readable display name (2025-06-18 and later).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does, for the model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema (an object schema) of the arguments, as sent; not validated here.
    pub input_schema: Map<String, Value>,
    /// JSON Schema of `structuredContent` in the result (2025-06-18 and later).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Map<String, Value>>,
    /// Behaviour hints (2025-03-26 and later); untrusted unless the server is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// How the tool runs with tasks (2025-11-25 and later).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub execution: Option<ToolExecution>,
    /// Icons for display (2025-11-25 and later).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Tool metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Hints about a tool's behaviour. They are claims by the server, not guarantees.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// Human-readable display name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not modify its environment (default false).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// A modifying tool may destroy data (default true).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Repeating a call with the same arguments has no further effect (default false).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool talks to an open world of external entities (default true).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Execution properties of a tool (2025-11-25 and later).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolExecution {
    /// Whether `tools/call` may or must carry a `task`; absent means forbidden.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_support: Option<TaskSupport>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

open_string_enum! {
    /// Whether a tool supports task-augmented calls.
    pub enum TaskSupport {
        /// Calls must not carry a `task`.
        Forbidden = "forbidden",
        /// Calls may carry a `task`.
        Optional = "optional",
        /// Calls must carry a `task`.
        Required = "required",
    }
}

/// The result of `tools/list`: one page.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListToolsResult {
    /// The tools on this page.
    pub tools: Vec<Tool>,
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

/// The `params` of `tools/call`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolParams {
    /// The tool's name.
    pub name: String,
    /// The arguments, matching the tool's `inputSchema`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Map<String, Value>>,
    /// Run the call as a task (2025-11-25 and later); the result is then a
    /// [`CreateTaskResult`](super::CreateTaskResult), not a [`CallToolResult`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// Request metadata; `progressToken` lives here.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl CallToolParams {
    /// A call of `name` with `arguments`.
    pub fn new(name: impl Into<String>, arguments: Map<String, Value>) -> Self {
        Self {
            name: name.into(),
            arguments: Some(arguments),
            ..Self::default()
        }
    }
}

/// The result of `tools/call`.
///
/// A tool's own failure is reported here with `is_error: Some(true)`, not as a JSON-RPC error.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    /// Unstructured result.
    pub content: Vec<ContentBlock>,
    /// Structured result matching the tool's `outputSchema` (2025-06-18 and later).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether the tool call failed (absent means false).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Result metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

deserialize_with_extra!(CallToolResult, "a tools/call result",
    required { content: "content" via crate::types::content::BlockList }
    optional { structured_content: "structuredContent", is_error: "isError", meta: "_meta" });

/// `tools/list`: one page of the server's tools.
#[non_exhaustive]
pub enum ListTools {}

impl Request for ListTools {
    const METHOD: &'static str = "tools/list";
    type Params = Option<PaginatedParams>;
    type Result = ListToolsResult;
}

/// `tools/call`: invoke a tool.
#[non_exhaustive]
pub enum CallTool {}

impl Request for CallTool {
    const METHOD: &'static str = "tools/call";
    type Params = CallToolParams;
    type Result = CallToolResult;
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::types::tests::round_trip;

    #[test]
    fn list_tools_round_trip() {
        let result: ListToolsResult = round_trip(json!({
            "tools": [
                {
                    "name": "get_weather",
                    "title": "Weather",
                    "description": "Current weather for a city",
                    "inputSchema": {
                        "type": "object",
                        "properties": { "city": { "type": "string" } },
                        "required": ["city"]
                    },
                    "outputSchema": {
                        "type": "object",
                        "properties": { "temperature": { "type": "number" } }
                    },
                    "annotations": {
                        "title": "Weather lookup",
                        "readOnlyHint": true,
                        "destructiveHint": false,
                        "idempotentHint": true,
                        "openWorldHint": true
                    },
                    "execution": { "taskSupport": "optional" },
                    "icons": [{ "src": "https://example.com/w.png" }],
                    "_meta": { "vendor/x": 1 }
                },
                { "name": "minimal", "inputSchema": { "type": "object" }, "futureField": "kept" }
            ],
            "nextCursor": "c2"
        }));
        let tool = &result.tools[0];
        assert_eq!(tool.input_schema["required"], json!(["city"]));
        assert!(tool.output_schema.is_some());
        let annotations = tool.annotations.as_ref().unwrap();
        assert_eq!(annotations.read_only_hint, Some(true));
        assert_eq!(annotations.destructive_hint, Some(false));
        assert_eq!(
            tool.execution.as_ref().and_then(|e| e.task_support.clone()),
            Some(TaskSupport::Optional)
        );
        assert_eq!(result.tools[1].extra["futureField"], json!("kept"));
        assert_eq!(result.next_cursor.as_deref(), Some("c2"));
    }

    #[test]
    fn unknown_task_support_is_kept() {
        let execution: ToolExecution = round_trip(json!({ "taskSupport": "sometimes" }));
        assert_eq!(
            execution.task_support,
            Some(TaskSupport::Other("sometimes".into()))
        );
    }

    #[test]
    fn call_tool_params_round_trip() {
        let params: CallToolParams = round_trip(json!({
            "name": "get_weather",
            "arguments": { "city": "Paris", "units": { "temp": "C" } },
            "task": { "ttl": 60000 },
            "_meta": { "progressToken": "tok-1" }
        }));
        assert_eq!(params.name, "get_weather");
        assert_eq!(params.arguments.as_ref().unwrap()["city"], json!("Paris"));
        assert_eq!(params.task.as_ref().and_then(|t| t.ttl), Some(60000));
        let built = CallToolParams::new("echo", Map::new());
        assert_eq!(
            serde_json::to_value(built).unwrap(),
            json!({ "name": "echo", "arguments": {} })
        );
    }

    #[test]
    fn call_tool_result_round_trip() {
        let result: CallToolResult = round_trip(json!({
            "content": [
                { "type": "text", "text": "{\"temperature\": 22.5}" },
                { "type": "widget", "payload": {} }
            ],
            "structuredContent": { "temperature": 22.5 },
            "isError": false
        }));
        assert_eq!(result.content.len(), 2);
        assert!(matches!(result.content[1], ContentBlock::Unknown(_)));
        assert_eq!(
            result.structured_content,
            Some(json!({ "temperature": 22.5 }))
        );
        assert_eq!(result.is_error, Some(false));
    }

    #[test]
    fn call_tool_error_result_and_missing_content() {
        let result: CallToolResult = round_trip(json!({
            "content": [{ "type": "text", "text": "city not found" }],
            "isError": true
        }));
        assert_eq!(result.is_error, Some(true));
        assert!(serde_json::from_value::<CallToolResult>(json!({ "isError": true })).is_err());
    }

    #[test]
    fn list_tools_params_are_optional() {
        let none: <ListTools as Request>::Params = serde_json::from_value(Value::Null).unwrap();
        assert_eq!(none, None);
        let page: <ListTools as Request>::Params = round_trip(json!({ "cursor": "c2" }));
        assert_eq!(page.and_then(|p| p.cursor).as_deref(), Some("c2"));
    }
}
