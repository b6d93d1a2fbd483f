//! The conformance fixtures served over an in-memory stream pair (the demo server's
//! harness), checked against what the conformance suite's scenarios expect, plus the
//! handler's own state.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};

use super::super::DemoConfig;
use super::super::tests::{Harness, text_of};
use super::{ConformanceHandler, catalog};

fn conformance() -> Harness {
    Harness::with(DemoConfig {
        quiet: true,
        conformance: true,
        ..DemoConfig::default()
    })
}

/// A conformance server initialized by a client with sampling and elicitation (as the
/// suite's client declares).
fn ready() -> Harness {
    let h = conformance();
    let init = h.initialize("2025-11-25", json!({ "sampling": {}, "elicitation": {} }));
    assert_eq!(init["result"]["serverInfo"]["name"], "mcp-demo-conformance");
    let caps = &init["result"]["capabilities"];
    for cap in ["tools", "resources", "prompts", "logging", "completions"] {
        assert!(caps.get(cap).is_some(), "capability {cap} in {caps}");
    }
    assert_eq!(caps["resources"]["subscribe"], true);
    h
}

fn call_tool(h: &Harness, id: u64, name: &str, arguments: Value) -> Value {
    h.call(
        id,
        "tools/call",
        json!({ "name": name, "arguments": arguments }),
    )
}

fn names(list: &Value, key: &str) -> Vec<String> {
    list[key]
        .as_array()
        .unwrap_or_else(|| panic!("no {key} in {list}"))
        .iter()
        .map(|t| t["name"].as_str().expect("a name").to_owned())
        .collect()
}

#[test]
fn tools_list_has_every_fixture_in_one_page_with_descriptions() {
    let h = ready();
    let list = &h.call(1, "tools/list", json!({}))["result"];
    assert_eq!(
        names(list, "tools"),
        [
            "test_simple_text",
            "test_image_content",
            "test_audio_content",
            "test_embedded_resource",
            "test_multiple_content_types",
            "test_tool_with_logging",
            "test_tool_with_progress",
            "test_error_handling",
            "test_sampling",
            "test_elicitation",
            "test_elicitation_sep1034_defaults",
            "test_elicitation_sep1330_enums",
            "json_schema_2020_12_tool",
            "test_reconnection",
        ]
    );
    assert!(list.get("nextCursor").is_none(), "{list}");
    for tool in list["tools"].as_array().expect("tools") {
        assert!(tool["description"].as_str().is_some_and(|d| !d.is_empty()));
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
    }
    // The 2020-12 keywords survive the listing as written.
    let schema = &list["tools"][12]["inputSchema"];
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert_eq!(schema["$defs"]["address"]["type"], "object");
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(schema["properties"]["address"]["$ref"], "#/$defs/address");
    // Nothing of the demo's own catalog.
    assert!(!names(list, "tools").iter().any(|n| n == "echo"));
    let bad = &h.call(2, "tools/list", json!({ "cursor": "1" }))["error"];
    assert_eq!(bad["code"], -32602, "{bad}");
    h.close();
}

#[test]
fn content_tools_return_each_kind_of_content() {
    let h = ready();
    let text = call_tool(&h, 1, "test_simple_text", json!({}));
    assert_eq!(
        text["result"]["content"],
        json!([{ "type": "text", "text": "This is a simple text response for testing." }])
    );

    let image = &call_tool(&h, 2, "test_image_content", json!({}))["result"]["content"][0];
    assert_eq!(image["type"], "image");
    assert_eq!(image["mimeType"], "image/png");
    let png = STANDARD
        .decode(image["data"].as_str().expect("data"))
        .expect("base64");
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"));

    let audio = &call_tool(&h, 3, "test_audio_content", json!({}))["result"]["content"][0];
    assert_eq!(audio["type"], "audio");
    assert_eq!(audio["mimeType"], "audio/wav");
    let wav = STANDARD
        .decode(audio["data"].as_str().expect("data"))
        .expect("base64");
    assert_eq!((&wav[..4], &wav[8..12]), (&b"RIFF"[..], &b"WAVE"[..]));
    // The RIFF size field counts every byte after it.
    let riff_size = u32::from_le_bytes(wav[4..8].try_into().expect("4 bytes"));
    assert_eq!(riff_size as usize, wav.len() - 8);

    let embedded = &call_tool(&h, 4, "test_embedded_resource", json!({}))["result"]["content"];
    assert_eq!(
        embedded,
        &json!([{ "type": "resource", "resource": {
            "uri": "test://embedded-resource",
            "mimeType": "text/plain",
            "text": "This is an embedded resource content."
        } }])
    );

    let mixed = &call_tool(&h, 5, "test_multiple_content_types", json!({}))["result"]["content"];
    let kinds: Vec<&str> = mixed
        .as_array()
        .expect("content")
        .iter()
        .map(|c| c["type"].as_str().expect("type"))
        .collect();
    assert_eq!(kinds, ["text", "image", "resource"]);
    let json_text = mixed[2]["resource"]["text"].as_str().expect("text");
    assert_eq!(
        serde_json::from_str::<Value>(json_text).expect("JSON"),
        json!({ "test": "data", "value": 123 })
    );

    let error = call_tool(&h, 6, "test_error_handling", json!({}));
    assert_eq!(error["result"]["isError"], true);
    assert_eq!(
        text_of(&error),
        "This tool intentionally returns an error for testing"
    );

    let echoed = call_tool(
        &h,
        7,
        "json_schema_2020_12_tool",
        json!({ "name": "Ada", "address": { "city": "London" } }),
    );
    assert!(text_of(&echoed).contains(r#""city":"London""#), "{echoed}");
    let reconnection = call_tool(&h, 8, "test_reconnection", json!({}));
    assert_eq!(
        text_of(&reconnection),
        "Reconnection test completed successfully"
    );

    let unknown = call_tool(&h, 9, "no_such_tool", json!({}));
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    h.close();
}

#[test]
fn logging_tool_sends_three_messages_during_the_call_at_or_above_the_level() {
    let h = ready();
    assert_eq!(
        h.call(1, "logging/setLevel", json!({ "level": "debug" }))["result"],
        json!({})
    );
    h.request(
        2,
        "tools/call",
        json!({ "name": "test_tool_with_logging", "arguments": {} }),
    );
    let (done, before) = h.response_with_others(&json!(2));
    assert!(done["result"]["isError"].is_null(), "{done}");
    let logs: Vec<(Value, Value)> = before
        .iter()
        .filter(|m| m["method"] == "notifications/message")
        .map(|m| (m["params"]["level"].clone(), m["params"]["data"].clone()))
        .collect();
    let expected = [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ]
    .map(|data| (json!("info"), json!(data)));
    assert_eq!(logs, expected);
    // Above info, the session filters them out.
    h.call(3, "logging/setLevel", json!({ "level": "error" }));
    h.request(
        4,
        "tools/call",
        json!({ "name": "test_tool_with_logging", "arguments": {} }),
    );
    let (_, before) = h.response_with_others(&json!(4));
    assert!(before.is_empty(), "{before:?}");
    h.close();
}

#[test]
fn progress_tool_reports_0_50_100_with_a_token_and_nothing_without() {
    let h = ready();
    h.send(
        json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "test_tool_with_progress", "arguments": {},
        "_meta": { "progressToken": "progress-test-1" } } }),
    );
    let (done, before) = h.response_with_others(&json!(1));
    assert!(done["result"]["content"][0]["text"].is_string(), "{done}");
    let progress: Vec<(Value, Option<f64>, Option<f64>)> = before
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .map(|m| {
            (
                m["params"]["progressToken"].clone(),
                m["params"]["progress"].as_f64(),
                m["params"]["total"].as_f64(),
            )
        })
        .collect();
    assert_eq!(
        progress,
        [0.0, 50.0, 100.0].map(|p| (json!("progress-test-1"), Some(p), Some(100.0)))
    );
    h.request(
        2,
        "tools/call",
        json!({ "name": "test_tool_with_progress", "arguments": {} }),
    );
    let (_, before) = h.response_with_others(&json!(2));
    assert!(before.is_empty(), "{before:?}");
    h.close();
}

#[test]
fn sampling_tool_asks_the_clients_model() {
    let h = ready();
    h.request(
        1,
        "tools/call",
        json!({ "name": "test_sampling", "arguments": { "prompt": "Test prompt for sampling" } }),
    );
    let ask = h.recv();
    assert_eq!(ask["method"], "sampling/createMessage");
    assert_eq!(ask["params"]["maxTokens"], 100);
    assert_eq!(
        ask["params"]["messages"],
        json!([{ "role": "user", "content": { "type": "text", "text": "Test prompt for sampling" } }])
    );
    h.send(json!({ "jsonrpc": "2.0", "id": ask["id"], "result": {
        "role": "assistant", "model": "test-model", "stopReason": "endTurn",
        "content": { "type": "text", "text": "This is a test response from the client" } } }));
    assert_eq!(
        text_of(&h.response(1)),
        "LLM response: This is a test response from the client"
    );

    // The client's refusal is the tool's error, not a protocol error.
    h.request(
        2,
        "tools/call",
        json!({ "name": "test_sampling", "arguments": { "prompt": "again" } }),
    );
    let ask = h.recv();
    h.send(json!({ "jsonrpc": "2.0", "id": ask["id"], "error": { "code": -1, "message": "User rejected sampling request" } }));
    let refused = h.response(2);
    assert_eq!(refused["result"]["isError"], true);
    assert!(text_of(&refused).contains("User rejected"), "{refused}");

    let missing = call_tool(&h, 3, "test_sampling", json!({}));
    assert_eq!(missing["result"]["isError"], true);
    h.close();
}

#[test]
fn sampling_and_elicitation_need_the_clients_capability() {
    let h = conformance();
    h.initialize("2025-11-25", json!({}));
    for (id, tool, arguments) in [
        (1, "test_sampling", json!({ "prompt": "p" })),
        (2, "test_elicitation", json!({ "message": "m" })),
        (3, "test_elicitation_sep1034_defaults", json!({})),
    ] {
        let result = call_tool(&h, id, tool, arguments);
        assert_eq!(result["result"]["isError"], true, "{tool}: {result}");
        assert!(text_of(&result).contains("did not declare"), "{result}");
    }
    h.close();
}

/// Calls an elicitation tool, checks the form asked for, answers `answer` and returns the
/// tool's text.
fn elicit(h: &Harness, id: u64, tool: &str, arguments: Value, answer: Value) -> (Value, String) {
    h.request(
        id,
        "tools/call",
        json!({ "name": tool, "arguments": arguments }),
    );
    let ask = h.recv();
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    assert_eq!(ask["params"]["mode"], "form");
    h.send(json!({ "jsonrpc": "2.0", "id": ask["id"], "result": answer }));
    let text = text_of(&h.response(id)).to_owned();
    (ask["params"].clone(), text)
}

#[test]
fn elicitation_tools_ask_the_forms_the_scenarios_check() {
    let h = ready();
    let (params, text) = elicit(
        &h,
        1,
        "test_elicitation",
        json!({ "message": "Please provide your information" }),
        json!({ "action": "accept", "content": { "username": "testuser", "email": "test@example.com" } }),
    );
    assert_eq!(params["message"], "Please provide your information");
    let schema = &params["requestedSchema"];
    assert_eq!(schema["required"], json!(["username", "email"]));
    assert_eq!(schema["properties"]["email"]["type"], "string");
    assert_eq!(
        text,
        r#"User response: action=accept, content={"email":"test@example.com","username":"testuser"}"#
    );

    let (params, text) = elicit(
        &h,
        2,
        "test_elicitation_sep1034_defaults",
        json!({}),
        json!({ "action": "decline" }),
    );
    let props = &params["requestedSchema"]["properties"];
    assert_eq!(props["name"]["default"], "John Doe");
    assert_eq!(
        (&props["age"]["type"], &props["age"]["default"]),
        (&json!("integer"), &json!(30))
    );
    assert_eq!(props["score"]["default"], 95.5);
    assert_eq!(props["status"]["default"], "active");
    assert_eq!(
        props["status"]["enum"],
        json!(["active", "inactive", "pending"])
    );
    assert_eq!(props["verified"]["default"], true);
    assert_eq!(text, "Elicitation completed: action=decline, content={}");

    let (params, text) = elicit(
        &h,
        3,
        "test_elicitation_sep1330_enums",
        json!({}),
        json!({ "action": "accept", "content": { "untitledSingle": "option1", "titledMulti": ["value1"] } }),
    );
    let props = &params["requestedSchema"]["properties"];
    assert!(props["untitledSingle"]["enum"].is_array());
    assert!(props["untitledSingle"].get("oneOf").is_none());
    let titled = props["titledSingle"]["oneOf"].as_array().expect("oneOf");
    assert!(
        titled
            .iter()
            .all(|o| o["const"].is_string() && o["title"].is_string())
    );
    assert!(props["titledSingle"].get("enum").is_none());
    assert_eq!(
        props["legacyEnum"]["enumNames"].as_array().map(Vec::len),
        props["legacyEnum"]["enum"].as_array().map(Vec::len)
    );
    assert_eq!(props["untitledMulti"]["type"], "array");
    assert!(props["untitledMulti"]["items"]["enum"].is_array());
    assert!(props["titledMulti"]["items"]["anyOf"].is_array());
    assert!(props["titledMulti"]["items"].get("enum").is_none());
    assert!(text.starts_with("Elicitation completed: action=accept, content={"));
    assert!(text.contains(r#""titledMulti":["value1"]"#), "{text}");
    h.close();
}

#[test]
fn elicitation_on_2025_06_18_has_no_mode() {
    let h = conformance();
    h.initialize("2025-06-18", json!({ "elicitation": {} }));
    h.request(
        1,
        "tools/call",
        json!({ "name": "test_elicitation", "arguments": { "message": "m" } }),
    );
    let ask = h.recv();
    assert!(ask["params"].get("mode").is_none(), "{ask}");
    h.send(json!({ "jsonrpc": "2.0", "id": ask["id"], "result": { "action": "cancel" } }));
    assert_eq!(
        text_of(&h.response(1)),
        "User response: action=cancel, content={}"
    );
    h.close();
}

#[test]
fn resources_templates_and_subscriptions() {
    let h = ready();
    let list = &h.call(1, "resources/list", json!({}))["result"];
    let uris: Vec<&str> = list["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .map(|r| r["uri"].as_str().expect("uri"))
        .collect();
    assert_eq!(
        uris,
        [
            "test://static-text",
            "test://static-binary",
            "test://watched-resource"
        ]
    );
    assert!(
        list["resources"]
            .as_array()
            .expect("resources")
            .iter()
            .all(|r| r["name"].is_string() && r["description"].is_string())
    );
    let templates = &h.call(2, "resources/templates/list", Value::Null)["result"];
    assert_eq!(
        templates["resourceTemplates"][0]["uriTemplate"],
        "test://template/{id}/data"
    );

    let text = &h.call(3, "resources/read", json!({ "uri": "test://static-text" }))["result"];
    assert_eq!(
        text["contents"],
        json!([{ "uri": "test://static-text", "mimeType": "text/plain",
            "text": "This is the content of the static text resource." }])
    );
    let binary = &h.call(
        4,
        "resources/read",
        json!({ "uri": "test://static-binary" }),
    )["result"]["contents"][0];
    assert_eq!(binary["mimeType"], "image/png");
    let png = STANDARD
        .decode(binary["blob"].as_str().expect("blob"))
        .expect("base64");
    assert!(png.starts_with(b"\x89PNG"));

    let data = &h.call(
        5,
        "resources/read",
        json!({ "uri": "test://template/123/data" }),
    )["result"]["contents"][0];
    assert_eq!(data["uri"], "test://template/123/data");
    assert_eq!(data["mimeType"], "application/json");
    assert_eq!(
        serde_json::from_str::<Value>(data["text"].as_str().expect("text")).expect("JSON"),
        json!({ "id": "123", "templateTest": true, "data": "Data for ID: 123" })
    );
    for (id, uri) in [
        (6, "test://template//data"),
        (7, "test://template/1/2/data"),
        (8, "test://nothing"),
    ] {
        let missing = h.call(id, "resources/read", json!({ "uri": uri }));
        assert_eq!(missing["error"]["code"], -32002, "{uri}: {missing}");
    }

    let watched = json!({ "uri": "test://watched-resource" });
    assert_eq!(
        h.call(9, "resources/subscribe", watched.clone())["result"],
        json!({})
    );
    assert_eq!(
        h.call(10, "resources/unsubscribe", watched)["result"],
        json!({})
    );
    let unknown = h.call(
        11,
        "resources/subscribe",
        json!({ "uri": "test://nothing" }),
    );
    assert_eq!(unknown["error"]["code"], -32002, "{unknown}");
    h.close();
}

#[test]
fn the_handler_tracks_subscriptions_to_existing_resources_only() {
    let handler = ConformanceHandler::new(true);
    handler
        .subscription(catalog::WATCHED_URI.into(), true)
        .expect("subscribed");
    handler
        .subscription("test://template/7/data".into(), true)
        .expect("subscribed");
    assert_eq!(
        handler.subscriptions(),
        ["test://template/7/data", "test://watched-resource"]
    );
    handler
        .subscription(catalog::WATCHED_URI.into(), false)
        .expect("unsubscribed");
    assert_eq!(handler.subscriptions(), ["test://template/7/data"]);
    assert!(handler.subscription("test://nothing".into(), true).is_err());
    assert_eq!(handler.subscriptions(), ["test://template/7/data"]);
}

#[test]
fn prompts_and_their_messages() {
    let h = ready();
    let list = &h.call(1, "prompts/list", json!({}))["result"];
    assert_eq!(
        names(list, "prompts"),
        [
            "test_simple_prompt",
            "test_prompt_with_arguments",
            "test_prompt_with_embedded_resource",
            "test_prompt_with_image"
        ]
    );
    assert!(
        list["prompts"]
            .as_array()
            .expect("prompts")
            .iter()
            .all(|p| p["description"].is_string())
    );
    assert_eq!(
        list["prompts"][1]["arguments"][0],
        json!({ "name": "arg1", "description": "First test argument", "required": true })
    );

    let simple = &h.call(2, "prompts/get", json!({ "name": "test_simple_prompt" }))["result"];
    assert_eq!(
        simple["messages"],
        json!([{ "role": "user", "content": { "type": "text", "text": "This is a simple prompt for testing." } }])
    );
    let with_args = &h.call(
        3,
        "prompts/get",
        json!({ "name": "test_prompt_with_arguments", "arguments": { "arg1": "hello", "arg2": "world" } }),
    )["result"];
    assert_eq!(
        with_args["messages"][0]["content"]["text"],
        "Prompt with arguments: arg1='hello', arg2='world'"
    );
    let missing = h.call(
        4,
        "prompts/get",
        json!({ "name": "test_prompt_with_arguments", "arguments": { "arg1": "x" } }),
    );
    assert_eq!(missing["error"]["code"], -32602, "{missing}");

    let embedded = &h.call(
        5,
        "prompts/get",
        json!({ "name": "test_prompt_with_embedded_resource", "arguments": { "resourceUri": "test://example-resource" } }),
    )["result"]["messages"];
    assert_eq!(embedded[0]["content"]["type"], "resource");
    assert_eq!(
        embedded[0]["content"]["resource"]["uri"],
        "test://example-resource"
    );
    assert_eq!(embedded[1]["content"]["type"], "text");

    let image = &h.call(
        6,
        "prompts/get",
        json!({ "name": "test_prompt_with_image" }),
    )["result"]["messages"];
    assert_eq!(image[0]["content"]["type"], "image");
    assert_eq!(image[0]["content"]["mimeType"], "image/png");
    assert!(image[0]["content"]["data"].is_string());

    let unknown = h.call(7, "prompts/get", json!({ "name": "summarize" }));
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    h.close();
}

#[test]
fn completion_of_prompt_arguments_and_the_template_id() {
    let h = ready();
    let complete = |id: u64, reference: Value, argument: &str, value: &str| {
        h.call(
            id,
            "completion/complete",
            json!({ "ref": reference, "argument": { "name": argument, "value": value } }),
        )
    };
    let prompt = json!({ "type": "ref/prompt", "name": "test_prompt_with_arguments" });
    let par = &complete(1, prompt.clone(), "arg1", "par")["result"]["completion"];
    assert_eq!(par["values"], json!(["paris", "park", "party"]));
    assert_eq!(par["total"], 3);
    assert_eq!(par["hasMore"], false);
    let test = &complete(2, prompt.clone(), "arg2", "test")["result"]["completion"];
    assert_eq!(test["values"], json!(["test", "testing"]));
    let none = &complete(3, prompt.clone(), "arg1", "zzz")["result"]["completion"];
    assert_eq!(none["values"], json!([]));
    let template = json!({ "type": "ref/resource", "uri": "test://template/{id}/data" });
    let ids = &complete(4, template, "id", "1")["result"]["completion"];
    assert_eq!(ids["values"], json!(["1", "123"]));
    let unknown = complete(5, prompt, "arg3", "");
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    h.close();
}
