//! The demo tools: their definitions and what a call does.

use std::time::Duration;

use mcp_proto::jsonrpc::ErrorObject;
use mcp_proto::types::{
    CallToolParams, CallToolResult, ContentBlock, CreateMessageParams, CreateMessageResult,
    ListRootsResult, LoggingLevel, ModelHint, ModelPreferences, Role, SamplingMessage, Tool,
    ToolAnnotations,
};
use mcp_tokio::server::RequestContext;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::state::{CancelToken, Peer, Shared};

/// `elicitation/create` params in form mode.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct ElicitParams {
    /// Only sent to 2025-11-25 clients: older schemas have no `mode`.
    #[serde(skip_serializing_if = "Option::is_none")]
    mode: Option<&'static str>,
    message: String,
    requested_schema: Value,
}

/// The client's answer to `elicitation/create`.
#[derive(Debug, Clone, Deserialize)]
struct ElicitResult {
    action: String,
    #[serde(default)]
    content: Option<Map<String, Value>>,
}

/// An 8×8 checkerboard PNG, small enough to print in a terminal summary.
pub const DEMO_PNG_BASE64: &str = "iVBORw0KGgoAAAANSUhEUgAAAAgAAAAICAIAAABLbSncAAAAH0lEQVR42mMwSLgARBcMDIAImc2AUwJTCMLGLUEHOwAKqFIBk1gMCgAAAABJRU5ErkJggg==";

/// The most steps and the longest step `slow` accepts, so a call always ends.
const MAX_STEPS: u64 = 100;
const MAX_DELAY_MS: u64 = 10_000;
/// The largest `max_tokens` `model` passes on.
const MAX_SAMPLE_TOKENS: u64 = 100_000;

/// `value` as a JSON object (a schema written with `json!`); anything else is an empty one.
pub(super) fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// A tool of the demo's or of the conformance fixtures: its name, description and input
/// schema (a JSON object).
pub(super) fn tool(name: &str, description: &str, input_schema: Value) -> Tool {
    Tool {
        name: name.into(),
        description: Some(description.into()),
        input_schema: object(input_schema),
        ..Tool::default()
    }
}

fn read_only() -> Option<ToolAnnotations> {
    Some(ToolAnnotations {
        read_only_hint: Some(true),
        ..ToolAnnotations::default()
    })
}

/// The tools a client sees: [`definitions`] less `model` when it did not declare sampling
/// and `roots` when it did not declare roots (as real servers hide the tools a client could
/// not serve).
pub(crate) fn listed(peer: Option<&Peer>) -> Vec<Tool> {
    let sampling = peer.is_some_and(|p| p.sampling);
    let roots = peer.is_some_and(|p| p.roots);
    definitions()
        .into_iter()
        .filter(|t| match t.name.as_str() {
            "model" => sampling,
            "roots" => roots,
            _ => true,
        })
        .collect()
}

/// Every demo tool, in listing order.
pub(crate) fn definitions() -> Vec<Tool> {
    vec![
        Tool {
            annotations: read_only(),
            ..tool(
                "echo",
                "Returns the text it is given.",
                json!({
                    "type": "object",
                    "properties": { "text": { "type": "string", "description": "What to echo back" } },
                    "required": ["text"],
                    "additionalProperties": false
                }),
            )
        },
        Tool {
            title: Some("Add two numbers".into()),
            output_schema: Some(object(json!({
                "type": "object",
                "properties": { "sum": { "type": "number" } },
                "required": ["sum"]
            }))),
            annotations: read_only(),
            ..tool(
                "add",
                "Adds a and b; the sum also comes back as structured content.",
                json!({
                    "type": "object",
                    "properties": {
                        "a": { "type": "number", "description": "First addend" },
                        "b": { "type": "number", "description": "Second addend" }
                    },
                    "required": ["a", "b"],
                    "additionalProperties": false
                }),
            )
        },
        tool(
            "slow",
            "Works for steps × delay_ms, reporting progress after each step. Cancellable.",
            json!({
                "type": "object",
                "properties": {
                    "steps": { "type": "integer", "minimum": 1, "maximum": MAX_STEPS, "default": 5, "description": "How many steps" },
                    "delay_ms": { "type": "integer", "minimum": 0, "maximum": MAX_DELAY_MS, "default": 200, "description": "Milliseconds per step" }
                },
                "additionalProperties": false
            }),
        ),
        tool(
            "ask",
            "Asks the user a question through elicitation and returns the answer.",
            json!({
                "type": "object",
                "properties": { "question": { "type": "string", "description": "The question to ask" } },
                "required": ["question"],
                "additionalProperties": false
            }),
        ),
        Tool {
            annotations: read_only(),
            ..tool(
                "image",
                "Returns a small PNG image.",
                json!({ "type": "object", "properties": {}, "additionalProperties": false }),
            )
        },
        tool(
            "fail",
            "Always fails, with isError set, to show how tool errors look.",
            json!({
                "type": "object",
                "properties": { "message": { "type": "string", "description": "The error text" } },
                "additionalProperties": false
            }),
        ),
        tool(
            "model",
            "Asks the client's model (sampling) to answer a prompt and returns the reply.",
            json!({
                "type": "object",
                "properties": {
                    "prompt": { "type": "string", "description": "What to ask the model" },
                    "max_tokens": { "type": "integer", "minimum": 1, "maximum": MAX_SAMPLE_TOKENS, "default": 100, "description": "The longest reply wanted, in tokens" }
                },
                "required": ["prompt"],
                "additionalProperties": false
            }),
        ),
        Tool {
            annotations: read_only(),
            ..tool(
                "roots",
                "Lists the client's roots (roots/list): the directories it lets the server see.",
                json!({ "type": "object", "properties": {}, "additionalProperties": false }),
            )
        },
    ]
}

/// A tool's result of one text block (the demo's and the conformance fixtures' tools).
pub(super) fn text_result(text: impl Into<String>) -> CallToolResult {
    CallToolResult {
        content: vec![ContentBlock::text(text)],
        ..CallToolResult::default()
    }
}

/// A tool execution error: reported in the result (`isError`) so a model can read it.
pub(super) fn error_result(text: impl Into<String>) -> CallToolResult {
    CallToolResult {
        is_error: Some(true),
        ..text_result(text)
    }
}

/// The string argument `name`, or the tool's error result saying it is missing or not a
/// string.
pub(super) fn string_arg(args: &Map<String, Value>, name: &str) -> Result<String, CallToolResult> {
    match args.get(name) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(error_result(format!(
            "argument `{name}` must be a string, got {other}"
        ))),
        None => Err(error_result(format!("missing required argument `{name}`"))),
    }
}

fn number_arg(args: &Map<String, Value>, name: &str) -> Result<f64, CallToolResult> {
    match args.get(name).map(|v| (v, v.as_f64())) {
        Some((_, Some(n))) => Ok(n),
        Some((other, None)) => Err(error_result(format!(
            "argument `{name}` must be a number, got {other}"
        ))),
        None => Err(error_result(format!("missing required argument `{name}`"))),
    }
}

/// An integer argument within `range` (as the tool's schema says), or `default` when absent.
fn uint_arg(
    args: &Map<String, Value>,
    name: &str,
    default: u64,
    range: std::ops::RangeInclusive<u64>,
) -> Result<u64, CallToolResult> {
    match args.get(name) {
        None => Ok(default),
        Some(v) => match v.as_u64() {
            Some(n) if range.contains(&n) => Ok(n),
            _ => Err(error_result(format!(
                "argument `{name}` must be an integer from {} to {}, got {v}",
                range.start(),
                range.end()
            ))),
        },
    }
}

/// Runs one tool call on a thread of its own. `Ok(None)` means the call was cancelled and
/// gets no response; `Err` is a protocol error (an unknown tool).
pub(crate) fn call(
    shared: &Shared,
    params: &CallToolParams,
    token: &CancelToken,
    context: &RequestContext,
) -> Result<Option<CallToolResult>, ErrorObject> {
    let empty = Map::new();
    let args = params.arguments.as_ref().unwrap_or(&empty);
    shared.log(
        LoggingLevel::Debug,
        "tools",
        format!("tools/call {}", params.name),
    );
    let outcome = match params.name.as_str() {
        "echo" => string_arg(args, "text").map(text_result),
        "add" => add(args),
        "slow" => return Ok(slow(shared, args, context, token)),
        "ask" => return Ok(ask(shared, args, token)),
        "model" => return Ok(model(shared, args, token)),
        "roots" => return Ok(roots(shared, token)),
        "image" => Ok(CallToolResult {
            content: vec![ContentBlock::image(DEMO_PNG_BASE64, "image/png")],
            ..CallToolResult::default()
        }),
        "fail" => {
            let message = args
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("the fail tool always fails");
            shared.log(LoggingLevel::Warning, "tools", format!("fail: {message}"));
            Ok(error_result(message))
        }
        other => {
            return Err(ErrorObject::new(
                ErrorObject::INVALID_PARAMS,
                format!("unknown tool: {other}"),
            ));
        }
    };
    Ok(Some(outcome.unwrap_or_else(|e| e)))
}

fn add(args: &Map<String, Value>) -> Result<CallToolResult, CallToolResult> {
    let a = number_arg(args, "a")?;
    let b = number_arg(args, "b")?;
    let sum = a + b;
    Ok(CallToolResult {
        structured_content: Some(json!({ "sum": sum })),
        ..text_result(format!("{a} + {b} = {sum}"))
    })
}

fn slow(
    shared: &Shared,
    args: &Map<String, Value>,
    context: &RequestContext,
    token: &CancelToken,
) -> Option<CallToolResult> {
    let steps = match uint_arg(args, "steps", 5, 1..=MAX_STEPS) {
        Ok(n) => n,
        Err(e) => return Some(e),
    };
    let delay = match uint_arg(args, "delay_ms", 200, 0..=MAX_DELAY_MS) {
        Ok(ms) => Duration::from_millis(ms),
        Err(e) => return Some(e),
    };
    for step in 1..=steps {
        if !token.sleep(delay) {
            shared.diag("slow: cancelled");
            return None;
        }
        let message = format!("step {step} of {steps}");
        // Sent only when the client asked for progress; a refusal (the call is over, the
        // client is not reading) leaves nothing to report to.
        if let Err(e) = context.progress(step as f64, Some(steps as f64), Some(&message)) {
            shared.diag(&format!("slow: progress not sent: {e}"));
        }
    }
    Some(text_result(format!("finished {steps} steps")))
}

fn ask(shared: &Shared, args: &Map<String, Value>, token: &CancelToken) -> Option<CallToolResult> {
    let question = match string_arg(args, "question") {
        Ok(q) => q,
        Err(e) => return Some(e),
    };
    let peer = shared.peer();
    let Some(peer) = peer.filter(|p| p.elicitation) else {
        return Some(error_result(
            "this client did not declare the elicitation capability, so the question cannot be asked",
        ));
    };
    let params = ElicitParams {
        mode: (peer.protocol_version.as_str() >= "2025-11-25").then_some("form"),
        message: question,
        requested_schema: json!({
            "type": "object",
            "properties": { "answer": { "type": "string", "title": "Answer" } },
            "required": ["answer"]
        }),
    };
    let reply = shared.ask_client("elicitation/create", &params, token)?;
    Some(match reply {
        Err(error) => error_result(format!("the client refused the elicitation: {error}")),
        Ok(value) => match serde_json::from_value::<ElicitResult>(value) {
            Err(e) => error_result(format!("the client's elicitation answer is malformed: {e}")),
            Ok(answer) => match answer.action.as_str() {
                "accept" => {
                    let said = answer
                        .content
                        .as_ref()
                        .and_then(|c| c.get("answer"))
                        .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
                        .unwrap_or_default();
                    text_result(format!("The user said: {said}"))
                }
                "decline" => text_result("The user declined to answer."),
                _ => text_result("The user dismissed the question."),
            },
        },
    })
}

fn model(
    shared: &Shared,
    args: &Map<String, Value>,
    token: &CancelToken,
) -> Option<CallToolResult> {
    let prompt = match string_arg(args, "prompt") {
        Ok(p) => p,
        Err(e) => return Some(e),
    };
    let max_tokens = match uint_arg(args, "max_tokens", 100, 1..=MAX_SAMPLE_TOKENS) {
        Ok(n) => n,
        Err(e) => return Some(e),
    };
    let peer = shared.peer();
    if !peer.is_some_and(|p| p.sampling) {
        return Some(error_result(
            "this client did not declare the sampling capability, so no model can be asked",
        ));
    }
    let params = CreateMessageParams {
        messages: vec![SamplingMessage {
            role: Role::User,
            content: ContentBlock::text(prompt).into(),
            meta: None,
            extra: Map::new(),
        }],
        system_prompt: Some("You are the model behind the MCP demo server's model tool.".into()),
        max_tokens,
        model_preferences: Some(ModelPreferences {
            hints: Some(vec![ModelHint {
                name: Some("demo".into()),
                extra: Map::new(),
            }]),
            ..ModelPreferences::default()
        }),
        ..CreateMessageParams::default()
    };
    let reply = shared.ask_client("sampling/createMessage", &params, token)?;
    Some(match reply {
        Err(error) => error_result(format!("the client declined to sample: {error}")),
        Ok(value) => match serde_json::from_value::<CreateMessageResult>(value) {
            Err(e) => error_result(format!("the client's sampling result is malformed: {e}")),
            Ok(result) => {
                let text: Vec<&str> = result
                    .content
                    .blocks()
                    .iter()
                    .filter_map(|b| match b {
                        ContentBlock::Text(t) => Some(t.text.as_str()),
                        _ => None,
                    })
                    .collect();
                text_result(format!("{} replied: {}", result.model, text.join("\n")))
            }
        },
    })
}

fn roots(shared: &Shared, token: &CancelToken) -> Option<CallToolResult> {
    let peer = shared.peer();
    if !peer.is_some_and(|p| p.roots) {
        return Some(error_result(
            "this client did not declare the roots capability, so it has no roots to list",
        ));
    }
    let reply = shared.ask_client("roots/list", &json!({}), token)?;
    Some(match reply {
        Err(error) => error_result(format!("the client refused roots/list: {error}")),
        Ok(value) => match serde_json::from_value::<ListRootsResult>(value) {
            Err(e) => error_result(format!("the client's roots/list result is malformed: {e}")),
            Ok(list) if list.roots.is_empty() => text_result("the client offers no roots"),
            Ok(list) => text_result(
                list.roots
                    .iter()
                    .map(|r| match &r.name {
                        Some(name) => format!("{} ({name})", r.uri),
                        None => r.uri.clone(),
                    })
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
        },
    })
}
