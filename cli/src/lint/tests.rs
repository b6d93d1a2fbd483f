use serde_json::{Value, json};

use super::*;

fn tool(name: &str, schema: Value) -> Tool {
    Tool {
        name: name.into(),
        description: Some("Does a thing".into()),
        input_schema: schema.as_object().cloned().unwrap_or_default(),
        ..Tool::default()
    }
}

fn rules(tool: &Tool) -> Vec<(Rule, String, Severity)> {
    lint_tool(tool)
        .into_iter()
        .map(|f| (f.rule, f.path, f.severity))
        .collect()
}

fn clean() -> Value {
    json!({
        "type": "object",
        "properties": { "city": { "type": "string", "description": "City name" } },
        "required": ["city"],
        "additionalProperties": false
    })
}

#[test]
fn a_clean_tool_has_no_findings() {
    assert_eq!(lint_tool(&tool("get_weather", clean())), []);
    assert!(!has_errors(&[]));
    assert_eq!(render_findings(&[], 80), "no problems found\n");
}

#[test]
fn tool_names() {
    for bad in ["", "has space", "dots.not.ok", "ü", &"x".repeat(65)] {
        let r = rules(&tool(bad, clean()));
        assert_eq!(
            r,
            [(Rule::ToolName, String::new(), Severity::Error)],
            "{bad:?}"
        );
    }
    assert_eq!(rules(&tool(&"x".repeat(64), clean())), []);
    assert_eq!(rules(&tool("a-b_C9", clean())), []);
}

#[test]
fn root_must_be_an_object() {
    let r = rules(&tool("t", json!({ "type": "string" })));
    assert_eq!(r, [(Rule::RootType, "/type".into(), Severity::Error)]);
    let r = rules(&tool("t", json!({})));
    assert_eq!(r, [(Rule::RootType, "/type".into(), Severity::Error)]);
}

#[test]
fn root_combinators() {
    let r = rules(&tool(
        "t",
        json!({ "type": "object", "additionalProperties": false,
                "oneOf": [{ "type": "object", "additionalProperties": false }] }),
    ));
    assert_eq!(
        r,
        [(Rule::RootCombinator, "/oneOf".into(), Severity::Error)]
    );
}

#[test]
fn additional_properties() {
    let r = rules(&tool("t", json!({ "type": "object" })));
    assert_eq!(
        r,
        [(Rule::AdditionalProperties, String::new(), Severity::Warning)]
    );
    let r = rules(&tool(
        "t",
        json!({ "type": "object", "additionalProperties": true }),
    ));
    assert_eq!(
        r,
        [(
            Rule::AdditionalProperties,
            "/additionalProperties".into(),
            Severity::Warning
        )]
    );
    let nested = json!({
        "type": "object", "additionalProperties": false,
        "properties": { "o": { "type": "object", "description": "d" } }
    });
    assert_eq!(
        rules(&tool("t", nested)),
        [(
            Rule::AdditionalProperties,
            "/properties/o".into(),
            Severity::Warning
        )]
    );
}

#[test]
fn refs_and_definitions() {
    let schema = json!({
        "type": "object", "additionalProperties": false,
        "properties": { "p": { "$ref": "#/$defs/P" } },
        "$defs": { "P": { "type": "string" } }
    });
    let r = rules(&tool("t", schema));
    assert!(
        r.contains(&(Rule::Ref, "/$defs".into(), Severity::Warning)),
        "{r:?}"
    );
    assert!(
        r.contains(&(Rule::Ref, "/properties/p".into(), Severity::Error)),
        "{r:?}"
    );
    // A property that is a $ref is not also blamed for lacking a description.
    assert!(!r.iter().any(|(rule, ..)| *rule == Rule::MissingDescription));
}

#[test]
fn formats() {
    let schema = json!({
        "type": "object", "additionalProperties": false,
        "properties": {
            "when": { "type": "string", "format": "date-time", "description": "d" },
            "re": { "type": "string", "format": "regex", "description": "d" }
        }
    });
    assert_eq!(
        rules(&tool("t", schema)),
        [(
            Rule::Format,
            "/properties/re/format".into(),
            Severity::Warning
        )]
    );
}

#[test]
fn tuple_items() {
    let schema = json!({
        "type": "object", "additionalProperties": false,
        "properties": { "pair": { "type": "array", "items": [{ "type": "number" }, { "type": "number" }], "description": "d" } }
    });
    assert_eq!(
        rules(&tool("t", schema)),
        [(
            Rule::TupleItems,
            "/properties/pair/items".into(),
            Severity::Error
        )]
    );
    // Items that are one schema are checked like any schema.
    let schema = json!({
        "type": "object", "additionalProperties": false,
        "properties": { "list": { "type": "array", "items": { "type": "string", "format": "color" }, "description": "d" } }
    });
    assert_eq!(
        rules(&tool("t", schema)),
        [(
            Rule::Format,
            "/properties/list/items/format".into(),
            Severity::Warning
        )]
    );
}

#[test]
fn property_names() {
    let schema = json!({
        "type": "object", "additionalProperties": false,
        "properties": {
            "ok.name-1_x": { "type": "string", "description": "d" },
            "a/b c": { "type": "string", "description": "d" }
        }
    });
    assert_eq!(
        rules(&tool("t", schema)),
        [(
            Rule::PropertyName,
            "/properties/a~1b c".into(),
            Severity::Error
        )]
    );
}

#[test]
fn required_names_unknown_properties() {
    let schema = json!({
        "type": "object", "additionalProperties": false,
        "properties": { "a": { "type": "string", "description": "d" } },
        "required": ["a", "b", 3]
    });
    assert_eq!(
        rules(&tool("t", schema)),
        [
            (Rule::RequiredUnknown, "/required/1".into(), Severity::Error),
            (Rule::RequiredUnknown, "/required/2".into(), Severity::Error)
        ]
    );
    let schema = json!({ "type": "object", "additionalProperties": false, "required": "a" });
    assert_eq!(
        rules(&tool("t", schema)),
        [(Rule::RequiredUnknown, "/required".into(), Severity::Error)]
    );
}

#[test]
fn malformed_properties() {
    let schema = json!({ "type": "object", "additionalProperties": false, "properties": [] });
    assert_eq!(
        rules(&tool("t", schema)),
        [(
            Rule::MalformedProperties,
            "/properties".into(),
            Severity::Error
        )]
    );
    let schema =
        json!({ "type": "object", "additionalProperties": false, "properties": { "x": 1 } });
    assert_eq!(
        rules(&tool("t", schema)),
        [(
            Rule::MalformedProperties,
            "/properties/x".into(),
            Severity::Error
        )]
    );
}

#[test]
fn missing_descriptions_are_warnings() {
    let mut t = tool(
        "t",
        json!({ "type": "object", "additionalProperties": false, "properties": { "x": { "type": "string" } } }),
    );
    t.description = None;
    let findings = lint_tool(&t);
    assert_eq!(
        findings
            .iter()
            .map(|f| (f.rule, f.path.as_str(), f.severity))
            .collect::<Vec<_>>(),
        [
            (Rule::MissingDescription, "", Severity::Warning),
            (Rule::MissingDescription, "/properties/x", Severity::Warning)
        ]
    );
    assert!(!has_errors(&findings));
}

#[test]
fn nested_combinators_are_checked_not_rejected() {
    let schema = json!({
        "type": "object", "additionalProperties": false,
        "properties": { "v": { "description": "d", "anyOf": [{ "type": "string" }, { "$ref": "#/x" }] } }
    });
    assert_eq!(
        rules(&tool("t", schema)),
        [(Rule::Ref, "/properties/v/anyOf/1".into(), Severity::Error)]
    );
}

#[test]
fn deep_schemas_stop() {
    let mut schema = json!({ "type": "string" });
    for _ in 0..40 {
        schema = json!({ "type": "array", "items": schema });
    }
    let root = json!({ "type": "object", "additionalProperties": false,
        "properties": { "deep": { "description": "d", "type": "array", "items": schema } } });
    let findings = lint_tool(&tool("t", root));
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert!(findings[0].issue.contains("deeper than"));
}

#[test]
fn demo_tools_are_clean_of_errors() {
    let tools = crate::demo_server::tool_definitions();
    let findings = lint_tools(&tools);
    assert!(!has_errors(&findings), "{findings:?}");
}

#[test]
fn rendering_and_json() {
    let mut bad = tool("bad name", json!({ "type": "object" }));
    bad.description = None;
    let findings = lint_tool(&bad);
    assert!(has_errors(&findings));
    let text = render_findings(&findings, 80);
    assert_eq!(
        text,
        "\
LEVEL    TOOL      PATH  ISSUE → FIX
───────  ────────  ────  ───────────────────────────────────────────────────────
error    bad name  /     tool name \"bad name\" is not [A-Za-z0-9_-]{1,64} →
                         rename the tool with letters, digits, `_` or `-` (at
                         most 64)
warning  bad name  /     the tool has no description → add a description saying
                         what the tool does and when to use it
warning  bad name  /     `additionalProperties` is missing; strict clients
                         require it to be false → add \"additionalProperties\":
                         false
1 error, 2 warnings
"
    );
    let json = findings_json(&findings);
    assert_eq!(json[0]["rule"], "tool-name");
    assert_eq!(json[0]["severity"], "error");
    assert_eq!(json[2]["path"], "");
}

#[test]
fn tools_files() {
    let list = r#"{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}"#;
    assert_eq!(parse_tools_file(list).unwrap()[0].name, "a");
    let response = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"b","inputSchema":{}}]}}"#;
    assert_eq!(parse_tools_file(response).unwrap()[0].name, "b");
    let bare = r#"[{"name":"c","inputSchema":{}}]"#;
    assert_eq!(parse_tools_file(bare).unwrap()[0].name, "c");
    assert!(parse_tools_file("{}").unwrap_err().contains("no `tools`"));
    assert!(parse_tools_file("nope").unwrap_err().contains("not JSON"));
    assert!(parse_tools_file(r#"[{"inputSchema":{}}]"#).is_err());
}

#[test]
fn an_unknown_type_name_is_an_error() {
    let schema = json!({
        "type": "object", "additionalProperties": false,
        "properties": {
            "x": { "type": "nonsense", "description": "d" },
            "y": { "type": ["string", "text"], "description": "d" },
            "list": { "type": "array", "items": { "type": "str" }, "description": "d" }
        }
    });
    let findings = lint_tool(&tool("t", schema));
    let shown: Vec<(Rule, &str, Severity)> = findings
        .iter()
        .map(|f| (f.rule, f.path.as_str(), f.severity))
        .collect();
    // Once each, in the linter's words: the meta-schema's own complaint is not repeated.
    assert_eq!(
        shown,
        [
            (
                Rule::InvalidSchema,
                "/properties/list/items/type",
                Severity::Error
            ),
            (Rule::InvalidSchema, "/properties/x/type", Severity::Error),
            (Rule::InvalidSchema, "/properties/y/type", Severity::Error),
        ]
    );
    assert_eq!(
        findings[1].issue,
        "`type` \"nonsense\" is not a JSON Schema type"
    );
    assert!(
        findings[2].issue.contains("\"text\""),
        "{}",
        findings[2].issue
    );
    assert!(has_errors(&findings));
    assert_eq!(Rule::InvalidSchema.name(), "invalid-schema");
}

#[test]
fn other_invalid_keywords_are_found_by_the_meta_schema() {
    let schema = json!({
        "type": "object", "additionalProperties": false,
        "properties": {
            "n": { "type": "integer", "minimum": "3", "description": "d" },
            "s": { "type": "string", "minLength": -1, "description": "d" }
        }
    });
    let shown: Vec<(Rule, String)> = lint_tool(&tool("t", schema))
        .into_iter()
        .map(|f| (f.rule, f.path))
        .collect();
    assert_eq!(
        shown,
        [
            (Rule::InvalidSchema, "/properties/n/minimum".to_owned()),
            (Rule::InvalidSchema, "/properties/s/minLength".to_owned()),
        ]
    );
}

#[test]
fn an_unknown_draft_is_a_warning_not_a_fetch() {
    let mut schema = clean();
    schema["$schema"] = json!("https://example.com/my-meta-schema");
    let findings = lint_tool(&tool("t", schema));
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(findings[0].rule, Rule::InvalidSchema);
    assert_eq!(findings[0].severity, Severity::Warning);
}
