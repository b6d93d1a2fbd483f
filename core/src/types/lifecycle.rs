//! The handshake: `initialize`, `notifications/initialized`, capabilities and `ping`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{EmptyParams, EmptyResult, Icon, Notification, NotificationParams, Request};

/// The name and version of an MCP implementation (`clientInfo` / `serverInfo`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Implementation {
    /// Programmatic name.
    pub name: String,
    /// Version string, free-form.
    pub version: String,
    /// Human-readable display name (2025-06-18 and later).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Human-readable description (2025-11-25 and later).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Icons for display (2025-11-25 and later).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Home page of the implementation (2025-11-25 and later).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub website_url: Option<String>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Implementation {
    /// An implementation with only the required `name` and `version`.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            version: version.into(),
            ..Self::default()
        }
    }
}

/// What a client supports; sent in `initialize`.
///
/// A capability is declared by being present (`Some`), even when its object is empty.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientCapabilities {
    /// Non-standard capabilities, by name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub experimental: Option<Map<String, Value>>,
    /// The client answers `roots/list`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub roots: Option<RootsCapability>,
    /// The client answers `sampling/createMessage`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sampling: Option<SamplingCapability>,
    /// The client answers `elicitation/create` (2025-06-18 and later).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<ElicitationCapability>,
    /// The client runs task-augmented requests (2025-11-25 and later).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tasks: Option<TasksCapability>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The client's `roots` capability.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RootsCapability {
    /// The client sends `notifications/roots/list_changed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The client's `sampling` capability.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplingCapability {
    /// The client honours `includeContext` other than `"none"` (2025-11-25 and later).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<Map<String, Value>>,
    /// The client supports `tools` and `toolChoice` in sampling (2025-11-25 and later).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<Map<String, Value>>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The client's `elicitation` capability.
///
/// An empty object (2025-06-18 style) means form mode only.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationCapability {
    /// The client supports form mode (2025-11-25 and later).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub form: Option<Map<String, Value>>,
    /// The client supports URL mode (2025-11-25 and later).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<Map<String, Value>>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The `tasks` capability of a client or a server (2025-11-25 and later).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TasksCapability {
    /// The side answers `tasks/list`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub list: Option<Map<String, Value>>,
    /// The side answers `tasks/cancel`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cancel: Option<Map<String, Value>>,
    /// Which of the side's request types accept a `task` parameter.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requests: Option<TaskRequestsCapability>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Which requests may be task-augmented; the union of the client's and the server's fields.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskRequestsCapability {
    /// Server side: `tools.call` means `tools/call` accepts a task.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<Map<String, Value>>,
    /// Client side: `sampling.createMessage` means `sampling/createMessage` accepts a task.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sampling: Option<Map<String, Value>>,
    /// Client side: `elicitation.create` means `elicitation/create` accepts a task.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<Map<String, Value>>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl TaskRequestsCapability {
    /// True when the server declared that `tools/call` accepts a `task` parameter.
    pub fn tools_call(&self) -> bool {
        has_key(self.tools.as_ref(), "call")
    }

    /// True when the client declared that `sampling/createMessage` accepts a `task` parameter.
    pub fn sampling_create_message(&self) -> bool {
        has_key(self.sampling.as_ref(), "createMessage")
    }

    /// True when the client declared that `elicitation/create` accepts a `task` parameter.
    pub fn elicitation_create(&self) -> bool {
        has_key(self.elicitation.as_ref(), "create")
    }
}

fn has_key(map: Option<&Map<String, Value>>, key: &str) -> bool {
    map.is_some_and(|m| m.contains_key(key))
}

/// What a server supports; received in the `initialize` result.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerCapabilities {
    /// Non-standard capabilities, by name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub experimental: Option<Map<String, Value>>,
    /// The server sends log messages and answers `logging/setLevel`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logging: Option<Map<String, Value>>,
    /// The server answers `completion/complete` (2025-03-26 and later).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completions: Option<Map<String, Value>>,
    /// The server offers prompts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompts: Option<PromptsCapability>,
    /// The server offers resources.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourcesCapability>,
    /// The server offers tools.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<ToolsCapability>,
    /// The server runs task-augmented requests (2025-11-25 and later).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tasks: Option<TasksCapability>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The server's `prompts` capability.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptsCapability {
    /// The server sends `notifications/prompts/list_changed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The server's `resources` capability.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourcesCapability {
    /// The server answers `resources/subscribe`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subscribe: Option<bool>,
    /// The server sends `notifications/resources/list_changed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The server's `tools` capability.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolsCapability {
    /// The server sends `notifications/tools/list_changed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The `params` of `initialize`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    /// The latest protocol version the client supports.
    pub protocol_version: String,
    /// What the client supports.
    pub capabilities: ClientCapabilities,
    /// Who the client is.
    pub client_info: Implementation,
    /// Request metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The result of `initialize`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    /// The version the server chose; the client must support it or disconnect.
    pub protocol_version: String,
    /// What the server supports.
    pub capabilities: ServerCapabilities,
    /// Who the server is.
    pub server_info: Implementation,
    /// Hints for the model on how to use this server.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Result metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `initialize`: the first request of a session (up to 2025-11-25).
#[non_exhaustive]
pub enum Initialize {}

impl Request for Initialize {
    const METHOD: &'static str = "initialize";
    type Params = InitializeParams;
    type Result = InitializeResult;
}

/// `notifications/initialized`: the client's acknowledgement of the `initialize` result.
#[non_exhaustive]
pub enum Initialized {}

impl Notification for Initialized {
    const METHOD: &'static str = "notifications/initialized";
    type Params = Option<NotificationParams>;
}

/// `ping`: a liveness check either side may send; the answer is an empty result.
#[non_exhaustive]
pub enum Ping {}

impl Request for Ping {
    const METHOD: &'static str = "ping";
    type Params = Option<EmptyParams>;
    type Result = EmptyResult;
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::types::tests::round_trip;

    #[test]
    fn initialize_params_round_trip() {
        let params: InitializeParams = round_trip(json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {
                "roots": { "listChanged": true },
                "sampling": { "context": {}, "tools": {} },
                "elicitation": { "form": {}, "url": {} },
                "tasks": {
                    "list": {},
                    "cancel": {},
                    "requests": {
                        "sampling": { "createMessage": {} },
                        "elicitation": { "create": {} }
                    }
                },
                "experimental": { "x-trace": { "level": 2 } },
                "futureCapability": { "a": 1 }
            },
            "clientInfo": {
                "name": "example-client",
                "title": "Example Client",
                "version": "1.0.0",
                "description": "An example",
                "icons": [{ "src": "https://example.com/i.png", "mimeType": "image/png", "sizes": ["48x48"], "theme": "dark" }],
                "websiteUrl": "https://example.com"
            },
            "_meta": { "progressToken": 7 }
        }));
        assert_eq!(params.protocol_version, "2025-11-25");
        let caps = &params.capabilities;
        assert_eq!(caps.roots.as_ref().and_then(|r| r.list_changed), Some(true));
        assert!(caps.sampling.as_ref().is_some_and(|s| s.tools.is_some()));
        assert!(caps.elicitation.as_ref().is_some_and(|e| e.url.is_some()));
        let requests = caps.tasks.as_ref().and_then(|t| t.requests.as_ref());
        assert!(requests.is_some_and(|r| r.sampling_create_message() && r.elicitation_create()));
        assert!(requests.is_some_and(|r| !r.tools_call()));
        assert!(caps.extra.contains_key("futureCapability"));
        assert_eq!(params.client_info.icons.as_ref().map(Vec::len), Some(1));
        assert_eq!(
            params.client_info.website_url.as_deref(),
            Some("https://example.com")
        );
    }

    #[test]
    fn initialize_result_round_trip_2024_shape() {
        let result: InitializeResult = round_trip(json!({
            "protocolVersion": "2024-11-05",
            "capabilities": {
                "logging": {},
                "prompts": { "listChanged": true },
                "resources": { "subscribe": true, "listChanged": false },
                "tools": {}
            },
            "serverInfo": { "name": "old-server", "version": "0.1" },
            "instructions": "Use the tools."
        }));
        let caps = &result.capabilities;
        assert!(caps.logging.is_some());
        assert!(caps.completions.is_none());
        assert_eq!(
            caps.resources.as_ref().and_then(|r| r.subscribe),
            Some(true)
        );
        assert_eq!(caps.tools.as_ref().and_then(|t| t.list_changed), None);
        assert_eq!(result.server_info.title, None);
        assert_eq!(result.instructions.as_deref(), Some("Use the tools."));
    }

    #[test]
    fn server_task_capability_reports_tools_call() {
        let caps: ServerCapabilities = round_trip(json!({
            "tasks": { "list": {}, "cancel": {}, "requests": { "tools": { "call": {} } } }
        }));
        let requests = caps.tasks.and_then(|t| t.requests);
        assert!(requests.is_some_and(|r| r.tools_call()));
    }

    #[test]
    fn default_serializes_without_nulls() {
        let params = InitializeParams {
            protocol_version: "2025-06-18".into(),
            client_info: Implementation::new("c", "1"),
            ..InitializeParams::default()
        };
        assert_eq!(
            serde_json::to_value(&params).unwrap(),
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": { "name": "c", "version": "1" }
            })
        );
    }

    #[test]
    fn ping_params_absent_or_empty() {
        let none: <Ping as Request>::Params = serde_json::from_value(Value::Null).unwrap();
        assert_eq!(none, None);
        let some: <Ping as Request>::Params = round_trip(json!({}));
        assert_eq!(some, Some(EmptyParams::default()));
        let result: EmptyResult = round_trip(json!({ "_meta": { "k": "v" } }));
        assert!(result.meta.is_some());
    }
}
