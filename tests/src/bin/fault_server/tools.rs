//! What the valid server is, on both transports: its session configuration, the valid tools
//! (`echo`, `add`, `progress`), and the helpers that describe tools and make their results in
//! mcp-proto's types.

use mcp_proto::jsonrpc::{self, ErrorObject};
use mcp_proto::server::ServerConfig;
use mcp_proto::session::{Era, ProtocolVersion};
use mcp_proto::types::{
    CallToolResult, ContentBlock, Implementation, ServerCapabilities, Tool, ToolsCapability,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

/// The session's configuration: a tools server of the initialize era only (it answers the
/// 2026 probe `server/discover` with `-32601`, as the oldest servers do), which waits for
/// `initialize` as long as it takes and never closes for a slow reader (its output is written
/// at once, blocking while the client does not read).
pub(crate) fn server_config() -> ServerConfig {
    ServerConfig::new(Implementation::new("fault_server", "0.1.0"))
        .with_capabilities(ServerCapabilities {
            tools: Some(ToolsCapability {
                list_changed: Some(false),
                ..ToolsCapability::default()
            }),
            ..ServerCapabilities::default()
        })
        .with_versions(
            ProtocolVersion::ALL
                .into_iter()
                .filter(|v| v.era() == Era::Initialize),
        )
        .with_handshake_timeout(None)
        .with_stall_timeout(None)
}

/// A tool's answer: its result, or a JSON-RPC error.
pub(crate) type Answer = Result<Box<RawValue>, ErrorObject>;

/// A tool taking the object members `props` (JSON Schema properties).
pub(crate) fn tool(name: &str, description: &str, props: Value) -> Tool {
    let mut input_schema = Map::new();
    input_schema.insert("type".into(), "object".into());
    input_schema.insert("properties".into(), props);
    Tool {
        name: name.into(),
        description: Some(description.into()),
        input_schema,
        ..Tool::default()
    }
}

/// The JSON Schema of an integer argument.
pub(crate) fn integer() -> Value {
    json!({"type": "integer"})
}

/// `echo`, `add` and `progress`, as listed.
pub(crate) fn valid_tools() -> Vec<Tool> {
    vec![
        tool(
            "echo",
            "Returns the message",
            json!({"message": {"type": "string"}}),
        ),
        tool(
            "add",
            "Returns a + b",
            json!({"a": integer(), "b": integer()}),
        ),
        tool(
            "progress",
            "Sends progress steps, then answers",
            json!({"steps": integer()}),
        ),
    ]
}

/// A tool result of one text block.
pub(crate) fn text(s: impl Into<String>) -> Answer {
    to_result(&CallToolResult {
        content: vec![ContentBlock::text(s)],
        ..CallToolResult::default()
    })
}

/// `value` as a result.
pub(crate) fn to_result(value: &impl Serialize) -> Answer {
    jsonrpc::to_raw(value).map_err(|e| ErrorObject::new(ErrorObject::INTERNAL_ERROR, e.to_string()))
}

/// A request's params as `T`; `-32602` when they are not.
pub(crate) fn decode_params<T: DeserializeOwned>(
    params: Option<&RawValue>,
) -> Result<T, ErrorObject> {
    serde_json::from_str(params.map_or("null", RawValue::get))
        .map_err(|e| ErrorObject::new(ErrorObject::INVALID_PARAMS, e.to_string()))
}

/// The unsigned integer argument `name`, or `default`.
pub(crate) fn arg_u64(args: &Map<String, Value>, name: &str, default: u64) -> u64 {
    args.get(name).and_then(Value::as_u64).unwrap_or(default)
}

/// `echo {message}`: the message.
pub(crate) fn echo(args: &Map<String, Value>) -> Answer {
    text(args.get("message").and_then(Value::as_str).unwrap_or(""))
}

/// `add {a, b}`: their sum; `-32602` without two integers.
pub(crate) fn add(args: &Map<String, Value>) -> Answer {
    match (
        args.get("a").and_then(Value::as_i64),
        args.get("b").and_then(Value::as_i64),
    ) {
        (Some(a), Some(b)) => text(a.saturating_add(b).to_string()),
        _ => Err(ErrorObject::new(
            ErrorObject::INVALID_PARAMS,
            "add needs integers a and b",
        )),
    }
}

/// The answer of `progress {steps}` after its last step.
pub(crate) fn progress_done(steps: u64) -> Answer {
    text(format!("{steps} steps done"))
}

/// The default of `progress`'s `steps`.
pub(crate) const PROGRESS_STEPS: u64 = 3;

/// `progress` step `step` of `steps`, as the numbers `notifications/progress` carries.
pub(crate) fn progress_numbers(step: u64, steps: u64) -> (f64, f64) {
    // Whole numbers far below 2^53: exact as f64.
    #[allow(clippy::cast_precision_loss)]
    (step as f64, steps as f64)
}
