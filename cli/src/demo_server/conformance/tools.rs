//! The conformance fixtures' tools: their definitions and what a call does, as the suite's
//! `tools-*`, `elicitation-*`, `json-schema-2020-12` and `server-sse-*` scenarios expect.

use std::time::Duration;

use mcp_proto::jsonrpc::ErrorObject;
use mcp_proto::session::RequestOptions;
use mcp_proto::types::{
    CallToolParams, CallToolResult, ContentBlock, CreateMessage, CreateMessageParams, Elicit,
    ElicitMode, ElicitParams, ElicitResult, LoggingLevel, Role, SamplingMessage, Tool,
};
use mcp_tokio::server::{RequestContext, ServerError};
use serde_json::{Map, Value, json};

use super::catalog::{RED_PIXEL_PNG_BASE64, SILENCE_WAV_BASE64, embedded_text};
use crate::demo_server::tools::{error_result, object, string_arg, text_result, tool};

/// The pause between the steps of the logging and progress tools (the scenarios ask for
/// about 50 ms, so that the client sees separate notifications during the call).
pub(crate) const STEP: Duration = Duration::from_millis(50);

/// The name of the tool whose input schema uses JSON Schema 2020-12 keywords.
pub(crate) const JSON_SCHEMA_2020_12_TOOL: &str = "json_schema_2020_12_tool";

fn no_arguments(name: &str, description: &str) -> Tool {
    tool(
        name,
        description,
        json!({ "type": "object", "properties": {} }),
    )
}

fn one_string(name: &str, description: &str, argument: &str, about: &str) -> Tool {
    tool(
        name,
        description,
        json!({
            "type": "object",
            "properties": { argument: { "type": "string", "description": about } },
            "required": [argument]
        }),
    )
}

/// Every fixture tool, in listing order.
pub(crate) fn definitions() -> Vec<Tool> {
    vec![
        no_arguments("test_simple_text", "Returns simple text content"),
        no_arguments("test_image_content", "Returns image content (a PNG)"),
        no_arguments("test_audio_content", "Returns audio content (a WAV)"),
        no_arguments(
            "test_embedded_resource",
            "Returns an embedded resource (text)",
        ),
        no_arguments(
            "test_multiple_content_types",
            "Returns text, image and embedded resource content together",
        ),
        no_arguments(
            "test_tool_with_logging",
            "Sends three info log messages while it runs, 50 ms apart",
        ),
        no_arguments(
            "test_tool_with_progress",
            "Reports progress 0, 50 and 100 of 100 while it runs, 50 ms apart",
        ),
        no_arguments(
            "test_error_handling",
            "Always fails: the result has isError set",
        ),
        one_string(
            "test_sampling",
            "Asks the client's model (sampling/createMessage) and returns its reply",
            "prompt",
            "The prompt to send to the model",
        ),
        one_string(
            "test_elicitation",
            "Asks the user for a username and an email (elicitation/create)",
            "message",
            "The message to show the user",
        ),
        no_arguments(
            "test_elicitation_sep1034_defaults",
            "Elicits a form whose fields all have default values (SEP-1034)",
        ),
        no_arguments(
            "test_elicitation_sep1330_enums",
            "Elicits a form with every kind of enum field (SEP-1330)",
        ),
        tool(
            JSON_SCHEMA_2020_12_TOOL,
            "Tool with JSON Schema 2020-12 features",
            json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "$defs": {
                    "address": {
                        "type": "object",
                        "properties": {
                            "street": { "type": "string" },
                            "city": { "type": "string" }
                        }
                    }
                },
                "properties": {
                    "name": { "type": "string" },
                    "address": { "$ref": "#/$defs/address" }
                },
                "additionalProperties": false
            }),
        ),
        no_arguments(
            "test_reconnection",
            "Closes its SSE stream, then answers: the client resumes with Last-Event-ID (SEP-1699)",
        ),
    ]
}

/// Runs one tool call. `Err` is a protocol error (an unknown tool); a tool's own failure is
/// a result with `isError`.
pub(crate) async fn call(
    params: &CallToolParams,
    context: &RequestContext,
) -> Result<CallToolResult, ErrorObject> {
    let empty = Map::new();
    let args = params.arguments.as_ref().unwrap_or(&empty);
    let outcome = match params.name.as_str() {
        "test_simple_text" => Ok(text_result("This is a simple text response for testing.")),
        "test_image_content" => Ok(CallToolResult {
            content: vec![ContentBlock::image(RED_PIXEL_PNG_BASE64, "image/png")],
            ..CallToolResult::default()
        }),
        "test_audio_content" => Ok(CallToolResult {
            content: vec![ContentBlock::audio(SILENCE_WAV_BASE64, "audio/wav")],
            ..CallToolResult::default()
        }),
        "test_embedded_resource" => Ok(CallToolResult {
            content: vec![embedded_text(
                "test://embedded-resource",
                "text/plain",
                "This is an embedded resource content.",
            )],
            ..CallToolResult::default()
        }),
        "test_multiple_content_types" => Ok(CallToolResult {
            content: vec![
                ContentBlock::text("Multiple content types test:"),
                ContentBlock::image(RED_PIXEL_PNG_BASE64, "image/png"),
                embedded_text(
                    "test://mixed-content-resource",
                    "application/json",
                    r#"{"test":"data","value":123}"#,
                ),
            ],
            ..CallToolResult::default()
        }),
        "test_tool_with_logging" => Ok(with_logging(context).await),
        "test_tool_with_progress" => Ok(with_progress(context).await),
        "test_error_handling" => Ok(error_result(
            "This tool intentionally returns an error for testing",
        )),
        "test_sampling" => match string_arg(args, "prompt") {
            Ok(prompt) => Ok(sampling(context, prompt).await),
            Err(e) => Err(e),
        },
        "test_elicitation" => match string_arg(args, "message") {
            Ok(message) => Ok(elicitation(context, message).await),
            Err(e) => Err(e),
        },
        "test_elicitation_sep1034_defaults" => Ok(elicit_form(
            context,
            "Test client default value handling - please accept with defaults",
            sep1034_schema(),
            "Elicitation completed",
        )
        .await),
        "test_elicitation_sep1330_enums" => Ok(elicit_form(
            context,
            "Test enum schema variants - please choose",
            sep1330_schema(),
            "Elicitation completed",
        )
        .await),
        JSON_SCHEMA_2020_12_TOOL => Ok(text_result(format!(
            "Received arguments: {}",
            Value::Object(args.clone())
        ))),
        "test_reconnection" => Ok(reconnection(context).await),
        other => {
            return Err(ErrorObject::new(
                ErrorObject::INVALID_PARAMS,
                format!("unknown tool: {other}"),
            ));
        }
    };
    Ok(outcome.unwrap_or_else(|e| e))
}

/// Closes the call's SSE stream before answering (over Streamable HTTP with a 2025-11-25
/// client; elsewhere it only waits): the client must reconnect with `Last-Event-ID` to get
/// the answer (SEP-1699 polling).
async fn reconnection(context: &RequestContext) -> CallToolResult {
    let closed = context.close_sse_stream();
    // Answering after the close: the answer goes to the stream's log, for the resumption.
    tokio::time::sleep(STEP).await;
    text_result(if closed {
        "Reconnection test completed successfully (after the stream was closed)"
    } else {
        "Reconnection test completed successfully"
    })
}

async fn with_logging(context: &RequestContext) -> CallToolResult {
    let steps = [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ];
    for (i, message) in steps.into_iter().enumerate() {
        if i > 0 {
            tokio::time::sleep(STEP).await;
        }
        // The session filters by the client's level; an error means the session is over,
        // and then nobody reads the result either.
        let _ = context
            .server()
            .log(LoggingLevel::Info, Some("test_tool_with_logging"), message);
    }
    text_result("Tool with logging executed successfully")
}

async fn with_progress(context: &RequestContext) -> CallToolResult {
    for (i, progress) in [0.0, 50.0, 100.0].into_iter().enumerate() {
        if i > 0 {
            tokio::time::sleep(STEP).await;
        }
        // Without a progress token this sends nothing; an error means the call is over.
        let _ = context.progress(progress, Some(100.0), None);
    }
    text_result("Tool with progress executed successfully")
}

/// Why a request to the client got no answer, for the tool's error result.
fn refused(what: &str, error: &ServerError) -> CallToolResult {
    error_result(format!("the client did not answer {what}: {error}"))
}

async fn sampling(context: &RequestContext, prompt: String) -> CallToolResult {
    let declared = context
        .server()
        .client_capabilities()
        .is_some_and(|c| c.sampling.is_some());
    if !declared {
        return error_result(
            "this client did not declare the sampling capability, so no model can be asked",
        );
    }
    let params = CreateMessageParams {
        messages: vec![SamplingMessage {
            role: Role::User,
            content: ContentBlock::text(prompt).into(),
            meta: None,
            extra: Map::new(),
        }],
        max_tokens: 100,
        ..CreateMessageParams::default()
    };
    // No deadline: a person may be approving the request; cancelling the call withdraws it.
    let options = RequestOptions::new().no_timeout();
    match context.request::<CreateMessage>(&params, options).await {
        Ok(result) => text_result(format!(
            "LLM response: {}",
            result.content.as_text().unwrap_or_default()
        )),
        Err(e) => refused("sampling/createMessage", &e),
    }
}

/// `elicitation/create` in form mode with `schema`; the result's text is `label`, the
/// action and the content.
async fn elicit_form(
    context: &RequestContext,
    message: &str,
    schema: Value,
    label: &str,
) -> CallToolResult {
    let server = context.server();
    let declared = server
        .client_capabilities()
        .is_some_and(|c| c.elicitation.is_some());
    if !declared {
        return error_result(
            "this client did not declare the elicitation capability, so nothing can be asked",
        );
    }
    // Older schemas have no `mode`; from 2025-11-25 on, form mode is said explicitly.
    let explicit_mode = server
        .protocol_version()
        .is_some_and(|v| v.as_str() >= "2025-11-25");
    let params = ElicitParams {
        mode: explicit_mode.then_some(ElicitMode::Form),
        message: message.into(),
        requested_schema: Some(object(schema)),
        ..ElicitParams::default()
    };
    let options = RequestOptions::new().no_timeout();
    match context.request::<Elicit>(&params, options).await {
        Ok(answer) => text_result(describe(label, &answer)),
        Err(e) => refused("elicitation/create", &e),
    }
}

fn describe(label: &str, answer: &ElicitResult) -> String {
    let content = answer
        .content
        .as_ref()
        .map_or_else(|| "{}".to_owned(), |c| Value::Object(c.clone()).to_string());
    format!(
        "{label}: action={}, content={content}",
        answer.action.as_str()
    )
}

async fn elicitation(context: &RequestContext, message: String) -> CallToolResult {
    let schema = json!({
        "type": "object",
        "properties": {
            "username": { "type": "string", "description": "User's response" },
            "email": { "type": "string", "description": "User's email address" }
        },
        "required": ["username", "email"]
    });
    elicit_form(context, &message, schema, "User response").await
}

/// A default value for every primitive type (SEP-1034).
fn sep1034_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": { "type": "string", "description": "User name", "default": "John Doe" },
            "age": { "type": "integer", "description": "User age", "default": 30 },
            "score": { "type": "number", "description": "User score", "default": 95.5 },
            "status": {
                "type": "string",
                "description": "User status",
                "enum": ["active", "inactive", "pending"],
                "default": "active"
            },
            "verified": { "type": "boolean", "description": "Verification status", "default": true }
        },
        "required": []
    })
}

/// The five enum shapes of SEP-1330: untitled and titled single-select, the legacy
/// `enumNames`, untitled and titled multi-select.
fn sep1330_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "untitledSingle": {
                "type": "string",
                "description": "Untitled single-select",
                "enum": ["option1", "option2", "option3"]
            },
            "titledSingle": {
                "type": "string",
                "description": "Titled single-select",
                "oneOf": [
                    { "const": "value1", "title": "First Option" },
                    { "const": "value2", "title": "Second Option" },
                    { "const": "value3", "title": "Third Option" }
                ]
            },
            "legacyEnum": {
                "type": "string",
                "description": "Legacy titled enum (enumNames, deprecated)",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"]
            },
            "untitledMulti": {
                "type": "array",
                "description": "Untitled multi-select",
                "items": { "type": "string", "enum": ["option1", "option2", "option3"] }
            },
            "titledMulti": {
                "type": "array",
                "description": "Titled multi-select",
                "items": {
                    "anyOf": [
                        { "const": "value1", "title": "First Choice" },
                        { "const": "value2", "title": "Second Choice" },
                        { "const": "value3", "title": "Third Choice" }
                    ]
                }
            }
        },
        "required": []
    })
}
