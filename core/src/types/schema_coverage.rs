//! Checks every payload type against the official 2025-11-25 schema definition it implements:
//! samples generated from the definition (only the required properties, and every property)
//! deserialize and round-trip unchanged, and every property the schema names is a typed field (a wrong-typed
//! value is rejected instead of vanishing into `extra`).

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use super::tests::SCHEMA_2025_11_25;
use super::*;

/// Builds a valid sample for a schema fragment, filling in every property up to `depth`.
fn sample(schema: &Value, fragment: &Value, depth: usize) -> Value {
    if let Some(reference) = fragment.get("$ref").and_then(Value::as_str) {
        let pointer = reference.trim_start_matches('#');
        let target = schema
            .pointer(pointer)
            .unwrap_or_else(|| panic!("unresolved {reference}"));
        return sample(schema, target, depth);
    }
    if let Some(constant) = fragment.get("const") {
        return constant.clone();
    }
    if let Some(first) = fragment.get("enum").and_then(|e| e.get(0)) {
        return first.clone();
    }
    if let Some(first) = fragment.get("anyOf").and_then(|a| a.get(0)) {
        return sample(schema, first, depth);
    }
    if let Some(parts) = fragment.get("allOf").and_then(Value::as_array) {
        let mut merged = Map::new();
        for part in parts {
            if let Value::Object(fields) = sample(schema, part, depth) {
                merged.extend(fields);
            }
        }
        return Value::Object(merged);
    }
    let kind = match fragment.get("type") {
        Some(Value::Array(kinds)) => kinds.iter().find(|k| *k != "null").cloned(),
        other => other.cloned(),
    };
    match kind.as_ref().and_then(Value::as_str) {
        Some("string") => match fragment.get("format").and_then(Value::as_str) {
            Some("uri") | Some("uri-template") => json!("file:///sample"),
            _ => json!("sample"),
        },
        Some("integer") => json!(3),
        Some("number") => json!(0.5),
        Some("boolean") => json!(true),
        Some("array") => match fragment.get("items") {
            Some(items) if depth > 0 => json!([sample(schema, items, depth - 1)]),
            _ => json!([]),
        },
        Some("object") => {
            let mut object = Map::new();
            let required: Vec<&str> = fragment
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if let Some(properties) = fragment.get("properties").and_then(Value::as_object) {
                for (name, property) in properties {
                    if depth > 0 || required.contains(&name.as_str()) {
                        object.insert(
                            name.clone(),
                            sample(schema, property, depth.saturating_sub(1)),
                        );
                    }
                }
            }
            Value::Object(object)
        }
        // `{}`: any value.
        _ => json!({ "any": ["value"] }),
    }
}

/// A value of the wrong type for a property of `fragment`'s schema type.
fn wrong_value(fragment: &Value) -> Value {
    match fragment.get("type").and_then(Value::as_str) {
        Some("boolean") => json!("not a boolean"),
        _ => json!(true),
    }
}

struct Check {
    pointer: &'static str,
    /// Runs both checks; properties listed as `untyped` in the table are deliberately `Value`
    /// (or consumed as a tag) and skip the wrong-type check.
    check: fn(&Value, &str),
}

fn check<T: Serialize + DeserializeOwned>(sample_value: &Value, pointer: &str) {
    let typed: T = serde_json::from_value(sample_value.clone()).unwrap_or_else(|e| {
        panic!("{pointer}: sample does not deserialize: {e}\n{sample_value:#}")
    });
    let back = serde_json::to_value(&typed).expect("serializes");
    assert_eq!(
        &back, sample_value,
        "{pointer}: round trip changed the sample"
    );
}

fn accepts<T: DeserializeOwned>(value: &Value) -> bool {
    serde_json::from_value::<T>(value.clone()).is_ok()
}

macro_rules! checks {
    ($( $pointer:literal => $ty:ty $(, untyped: [$($untyped:literal),*])? ;)+) => {
        vec![$(Check {
            pointer: $pointer,
            check: |sample, pointer| {
                check::<$ty>(sample, pointer);
                // Swap each property for a wrong-typed value: a typed field must reject it.
                let fragment = definition(pointer);
                let Some(properties) = fragment.get("properties").and_then(Value::as_object) else {
                    return;
                };
                for (name, property) in properties {
                    if [$($($untyped),*)?].contains(&name.as_str()) {
                        continue;
                    }
                    let mut broken = sample.clone();
                    broken[name.as_str()] = wrong_value(property);
                    assert!(
                        !accepts::<$ty>(&broken),
                        "{pointer}: property `{name}` is not a typed field of {}",
                        stringify!($ty)
                    );
                }
            },
        }),+]
    };
}

fn schema() -> Value {
    serde_json::from_str(SCHEMA_2025_11_25).expect("vendored schema parses")
}

fn definition(pointer: &str) -> Value {
    let schema = schema();
    let mut fragment = schema
        .pointer(pointer)
        .unwrap_or_else(|| panic!("no {pointer}"))
        .clone();
    // `allOf` definitions (a result that is also a task) check the merged properties.
    if let Some(parts) = fragment.get("allOf").and_then(Value::as_array).cloned() {
        let mut properties = Map::new();
        for part in parts {
            let part = match part.get("$ref").and_then(Value::as_str) {
                Some(r) => schema
                    .pointer(r.trim_start_matches('#'))
                    .cloned()
                    .unwrap_or_default(),
                None => part,
            };
            if let Some(p) = part.get("properties").and_then(Value::as_object) {
                properties.extend(p.clone());
            }
        }
        fragment = json!({ "properties": properties });
    }
    fragment
}

#[test]
fn every_payload_matches_its_schema_definition() {
    let checks = checks! {
        "/$defs/Implementation" => Implementation;
        "/$defs/Icon" => Icon;
        "/$defs/ClientCapabilities" => ClientCapabilities;
        "/$defs/ServerCapabilities" => ServerCapabilities;
        "/$defs/InitializeRequestParams" => InitializeParams;
        "/$defs/InitializeResult" => InitializeResult;
        "/$defs/EmptyResult" => EmptyResult;
        "/$defs/RequestParams" => EmptyParams;
        "/$defs/NotificationParams" => NotificationParams;
        "/$defs/PaginatedRequestParams" => PaginatedParams;
        "/$defs/Annotations" => Annotations;
        "/$defs/TextContent" => ContentBlock, untyped: ["type"];
        "/$defs/ImageContent" => ContentBlock, untyped: ["type"];
        "/$defs/AudioContent" => ContentBlock, untyped: ["type"];
        "/$defs/ResourceLink" => ContentBlock, untyped: ["type"];
        "/$defs/EmbeddedResource" => ContentBlock, untyped: ["type"];
        "/$defs/ToolUseContent" => ContentBlock, untyped: ["type"];
        "/$defs/ToolResultContent" => ContentBlock, untyped: ["type", "structuredContent"];
        "/$defs/TextResourceContents" => ResourceContents;
        "/$defs/BlobResourceContents" => ResourceContents;
        "/$defs/Resource" => Resource;
        "/$defs/ResourceTemplate" => ResourceTemplate;
        "/$defs/ListResourcesResult" => ListResourcesResult;
        "/$defs/ListResourceTemplatesResult" => ListResourceTemplatesResult;
        "/$defs/ReadResourceRequestParams" => ReadResourceParams;
        "/$defs/ReadResourceResult" => ReadResourceResult;
        "/$defs/SubscribeRequestParams" => SubscribeParams;
        "/$defs/UnsubscribeRequestParams" => UnsubscribeParams;
        "/$defs/ResourceUpdatedNotificationParams" => ResourceUpdatedParams;
        "/$defs/Tool" => Tool;
        "/$defs/ToolAnnotations" => ToolAnnotations;
        "/$defs/ToolExecution" => ToolExecution;
        "/$defs/ListToolsResult" => ListToolsResult;
        "/$defs/CallToolRequestParams" => CallToolParams;
        "/$defs/CallToolResult" => CallToolResult, untyped: ["structuredContent"];
        "/$defs/Prompt" => Prompt;
        "/$defs/PromptArgument" => PromptArgument;
        "/$defs/ListPromptsResult" => ListPromptsResult;
        "/$defs/GetPromptRequestParams" => GetPromptParams;
        "/$defs/GetPromptResult" => GetPromptResult;
        "/$defs/PromptMessage" => PromptMessage;
        "/$defs/CompleteRequestParams" => CompleteParams;
        "/$defs/CompleteResult" => CompleteResult;
        "/$defs/SetLevelRequestParams" => SetLevelParams;
        "/$defs/LoggingMessageNotificationParams" => LoggingMessageParams, untyped: ["data"];
        "/$defs/Task" => Task;
        "/$defs/TaskMetadata" => TaskMetadata;
        "/$defs/CreateTaskResult" => CreateTaskResult;
        "/$defs/GetTaskRequest/properties/params" => TaskIdParams;
        "/$defs/GetTaskResult" => Task;
        "/$defs/GetTaskPayloadRequest/properties/params" => TaskIdParams;
        "/$defs/GetTaskPayloadResult" => GetTaskPayloadResult, untyped: ["_meta"];
        "/$defs/ListTasksResult" => ListTasksResult;
        "/$defs/CancelTaskRequest/properties/params" => TaskIdParams;
        "/$defs/CancelTaskResult" => Task;
        "/$defs/TaskStatusNotificationParams" => Task;
        "/$defs/Root" => Root;
        "/$defs/ListRootsResult" => ListRootsResult;
        "/$defs/SamplingMessage" => SamplingMessage;
        "/$defs/ModelPreferences" => ModelPreferences;
        "/$defs/ModelHint" => ModelHint;
        "/$defs/ToolChoice" => ToolChoice;
        "/$defs/CreateMessageRequestParams" => CreateMessageParams;
        "/$defs/CreateMessageResult" => CreateMessageResult;
        "/$defs/ElicitRequestFormParams" => ElicitParams;
        "/$defs/ElicitRequestURLParams" => ElicitParams;
        "/$defs/ElicitResult" => ElicitResult;
        "/$defs/ElicitationCompleteNotification/properties/params" => ElicitationCompleteParams;
        "/$defs/ProgressNotificationParams" => ProgressParams;
        "/$defs/CancelledNotificationParams" => CancelledParams;
    };
    let schema = schema();
    for entry in &checks {
        let fragment = schema
            .pointer(entry.pointer)
            .unwrap_or_else(|| panic!("no {}", entry.pointer));
        // Depth 0 fills in only required members: nothing the schema leaves optional may be
        // required here. Depth 4 fills in everything.
        for depth in [0, 4] {
            let sample_value = sample(&schema, fragment, depth);
            assert!(sample_value.is_object(), "{}: not an object", entry.pointer);
            (entry.check)(&sample_value, entry.pointer);
        }
    }
}
