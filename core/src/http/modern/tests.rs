use serde_json::json;

use super::*;

fn schema(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

fn raw(v: &Value) -> RawResult {
    serde_json::value::to_raw_value(v).unwrap().into()
}

#[test]
fn header_values_follow_the_base64_rule() {
    assert_eq!(encode_header_value("us-west1"), "us-west1");
    assert_eq!(encode_header_value("two words"), "two words");
    assert_eq!(
        encode_header_value("Hello, 世界"),
        "=?base64?SGVsbG8sIOS4lueVjA==?="
    );
    assert_eq!(encode_header_value(" padded "), "=?base64?IHBhZGRlZCA=?=");
    assert_eq!(
        encode_header_value("line1\nline2"),
        "=?base64?bGluZTEKbGluZTI=?="
    );
    assert_eq!(encode_header_value("tab\t"), "=?base64?dGFiCQ==?=");
    assert_eq!(
        encode_header_value("=?base64?x?="),
        "=?base64?PT9iYXNlNjQ/eD89?="
    );
    assert_eq!(encode_header_value(""), "=?base64??=");
    assert_eq!(encode_header_value("\u{7f}"), "=?base64?fw==?=");
}

#[test]
fn valid_annotations_give_bindings() {
    let s = schema(json!({"type": "object", "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "count": {"type": "integer", "x-mcp-header": "Count"},
        "dry": {"type": "boolean", "x-mcp-header": "Dry-Run"},
        "note": {"type": "string"}
    }}));
    let b = tool_bindings(&s).unwrap();
    let mut names: Vec<_> = b
        .iter()
        .map(|b| (b.header.as_str(), b.property.as_str()))
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [("Count", "count"), ("Dry-Run", "dry"), ("Region", "region")]
    );
}

#[test]
fn invalid_annotations_are_refused() {
    let bad = [
        json!({"properties": {"a": {"type": "string", "x-mcp-header": "has space"}}}),
        json!({"properties": {"a": {"type": "string", "x-mcp-header": ""}}}),
        json!({"properties": {"a": {"type": "string", "x-mcp-header": 5}}}),
        json!({"properties": {"a": {"type": "number", "x-mcp-header": "A"}}}),
        json!({"properties": {"a": {"x-mcp-header": "A"}}}),
        json!({"properties": {"a": {"type": "string", "x-mcp-header": "X"},
                              "b": {"type": "string", "x-mcp-header": "x"}}}),
        json!({"properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}}}),
        json!({"properties": {"a": {"type": "object", "properties": {"b": {"type": "string", "x-mcp-header": "B"}}}}}),
        json!({"oneOf": [{"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}]}),
        json!({"properties": {"a": {"$ref": "#/$defs/r"}}, "$defs": {"r": {"type": "string", "x-mcp-header": "A"}}}),
        json!({"properties": {"a": {"anyOf": [{"type": "string", "x-mcp-header": "A"}]}}}),
    ];
    for s in bad {
        assert!(tool_bindings(&schema(s.clone())).is_err(), "{s}");
    }
}

#[test]
fn tools_with_invalid_annotations_are_dropped_from_the_list() {
    let mut th = ToolHeaders::default();
    let list = json!({"resultType": "complete", "ttlMs": 0, "tools": [
        {"name": "good", "inputSchema": {"type": "object", "properties": {"r": {"type": "string", "x-mcp-header": "R"}}}},
        {"name": "bad", "inputSchema": {"type": "object", "properties": {"n": {"type": "number", "x-mcp-header": "N"}}}},
        {"name": "plain", "inputSchema": {"type": "object"}}
    ]});
    let seen = th.observe_list(raw(&list));
    assert_eq!(seen.dropped.len(), 1);
    assert_eq!(seen.dropped[0].0, "bad");
    let out: Value = serde_json::from_str(seen.result.get()).unwrap();
    let names: Vec<_> = out["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].clone())
        .collect();
    assert_eq!(names, [json!("good"), json!("plain")]);
    assert_eq!(out["ttlMs"], 0, "other members kept");
    assert!(th.bindings("bad").is_none());
    assert_eq!(th.bindings("good").unwrap().len(), 1);
    // Nothing to drop: the raw bytes are kept exactly.
    let text = r#"{"tools":[{"name":"plain","inputSchema":{"type" : "object"}}]}"#;
    let seen = th.observe_list(RawValue::from_string(text.to_owned()).unwrap().into());
    assert_eq!(seen.result.get(), text);
}

#[test]
fn the_example_tool_list_has_nothing_to_drop() {
    let text = include_str!(
        "../../../tests/data/2026-07-28/ListToolsResult/tools-list-with-cursor-and-ttl.json"
    );
    let mut th = ToolHeaders::default();
    let text = text.trim_end();
    let seen = th.observe_list(RawValue::from_string(text.to_owned()).unwrap().into());
    assert!(seen.dropped.is_empty());
    assert_eq!(seen.result.get(), text);
    assert_eq!(th.bindings("get_weather"), Some(&[][..]));
}

fn headers(body: Value, th: &ToolHeaders) -> Vec<(String, String)> {
    message_headers(&serde_json::to_vec(&body).unwrap(), th)
}

#[test]
fn standard_and_param_headers_come_from_the_body() {
    let mut th = ToolHeaders::default();
    th.observe_list(raw(
        &json!({"tools": [{"name": "deploy", "inputSchema": {"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "replicas": {"type": "integer", "x-mcp-header": "Replicas"},
            "dry": {"type": "boolean", "x-mcp-header": "Dry"},
            "missing": {"type": "string", "x-mcp-header": "Missing"},
            "nil": {"type": "string", "x-mcp-header": "Nil"}
        }}}]}),
    ));
    let h = headers(
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "deploy",
            "arguments": {"region": "東京", "replicas": 3, "dry": false, "nil": null}}}),
        &th,
    );
    let mut h: Vec<(&str, &str)> = h.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    h.sort_unstable();
    assert_eq!(
        h,
        [
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "deploy"),
            ("Mcp-Param-Dry", "false"),
            ("Mcp-Param-Region", "=?base64?5p2x5Lqs?="),
            ("Mcp-Param-Replicas", "3"),
        ]
    );
    let h = headers(
        json!({"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": "file:///a b"}}),
        &th,
    );
    assert_eq!(h[1], ("Mcp-Name".into(), "file:///a b".into()));
    let h = headers(
        json!({"jsonrpc": "2.0", "id": 3, "method": "prompts/get", "params": {"name": "p"}}),
        &th,
    );
    assert_eq!(h[1], ("Mcp-Name".into(), "p".into()));
    let h = headers(
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {"name": "x"}}),
        &th,
    );
    assert_eq!(h, [("Mcp-Method".into(), "tools/list".into())]);
    let h = headers(json!({"jsonrpc": "2.0", "id": 5, "result": {}}), &th);
    assert!(h.is_empty(), "responses carry no method");
}

#[test]
fn a_refused_probe_is_read_by_its_body() {
    let modern =
        include_bytes!("../../../tests/data/2026-07-28/HeaderMismatchError/header-mismatch.json");
    assert!(matches!(classify_probe_refusal(modern), ProbeVerdict::Modern(e) if e.code == -32020));
    let everything = br#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Server not initialized"},"id":null}"#;
    assert_eq!(classify_probe_refusal(everything), ProbeVerdict::Legacy);
    assert_eq!(classify_probe_refusal(b""), ProbeVerdict::Legacy);
    assert_eq!(
        classify_probe_refusal(b"<html>Not Found</html>"),
        ProbeVerdict::Legacy
    );
    let not_found =
        br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}"#;
    assert_eq!(classify_probe_refusal(not_found), ProbeVerdict::Legacy);
}
