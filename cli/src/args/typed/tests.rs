use serde_json::{Map, Value, json};

use super::*;

fn schema(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => panic!("not an object"),
    }
}

fn pairs(p: &[&str]) -> Vec<String> {
    p.iter().map(|s| (*s).to_owned()).collect()
}

fn build(s: &Value, p: &[&str]) -> Result<Value, ArgumentError> {
    build_typed(None, &pairs(p), Some(&schema(s.clone()))).map(Value::Object)
}

#[test]
fn a_string_property_gets_the_text_as_typed() {
    let s = json!({ "type": "object", "properties": {
        "message": { "type": "string" },
        "maybe": { "type": ["string", "null"] },
    }});
    assert_eq!(
        build(&s, &["message=123", "maybe=true"]).unwrap(),
        json!({ "message": "123", "maybe": "true" })
    );
    // Even text that is JSON, quotes and all.
    assert_eq!(
        build(&s, &[r#"message="hi""#, "message2={}"]).unwrap(),
        json!({ "message": "\"hi\"", "message2": {} })
    );
}

#[test]
fn typed_properties_are_parsed_as_json_and_checked() {
    let s = json!({ "type": "object", "properties": {
        "n": { "type": "number" },
        "i": { "type": "integer" },
        "ok": { "type": "boolean" },
        "tags": { "type": "array", "items": { "type": "string" } },
        "opts": { "type": "object" },
    }});
    assert_eq!(
        build(
            &s,
            &[
                "n=1.5",
                "i=3",
                "ok=false",
                r#"tags=["a"]"#,
                r#"opts={"x":1}"#
            ]
        )
        .unwrap(),
        json!({ "n": 1.5, "i": 3, "ok": false, "tags": ["a"], "opts": { "x": 1 } })
    );
    assert_eq!(build(&s, &["i=2.0"]).unwrap(), json!({ "i": 2.0 }));
    for (pair, expected) in [
        ("n=abc", "must be a number"),
        ("i=1.5", "must be an integer"),
        ("ok=yes", "must be a boolean"),
        ("tags=a", "must be an array"),
        ("n=\"3\"", "must be a number"),
    ] {
        let e = build(&s, &[pair]).unwrap_err();
        assert!(
            matches!(&e, ArgumentError::Invalid(m) if m.contains(expected)),
            "{pair}: {e}"
        );
    }
}

#[test]
fn unions_prefer_the_non_string_type_when_the_text_is_one() {
    let s = json!({ "type": "object", "properties": {
        "v": { "type": ["string", "number"] },
        "w": { "anyOf": [{ "type": "integer" }, { "type": "null" }] },
        "e": { "enum": ["low", "high", 3] },
    }});
    assert_eq!(
        build(&s, &["v=7", "w=null", "e=3"]).unwrap(),
        json!({ "v": 7, "w": null, "e": 3 })
    );
    assert_eq!(
        build(&s, &["v=seven", "e=low"]).unwrap(),
        json!({ "v": "seven", "e": "low" })
    );
    let e = build(&s, &["w=x"]).unwrap_err();
    assert!(e.to_string().contains("an integer or null"), "{e}");
}

#[test]
fn no_schema_information_keeps_the_untyped_rule() {
    let s = json!({ "type": "object", "properties": { "free": {} } });
    assert_eq!(
        build(&s, &["free=3", "other=hi", "flag=true"]).unwrap(),
        json!({ "free": 3, "other": "hi", "flag": true })
    );
    let untyped = build_typed(None, &pairs(&["message=123", "s=hi"]), None).unwrap();
    assert_eq!(Value::Object(untyped), json!({ "message": 123, "s": "hi" }));
}

#[test]
fn nested_keys_follow_nested_schemas_and_refs() {
    let s = json!({
        "type": "object",
        "properties": {
            "user": { "$ref": "#/$defs/User" },
            "meta": { "type": "object", "additionalProperties": { "type": "string" } },
            "both": { "allOf": [{ "$ref": "#/definitions/Zip" }] },
        },
        "$defs": { "User": { "type": "object", "properties": {
            "name": { "type": "string" },
            "age": { "type": "integer" },
            "address": { "type": "object", "properties": { "zip": { "type": "string" } } },
        }}},
        "definitions": { "Zip": { "type": "object", "properties": { "code": { "type": "string" } } } },
    });
    assert_eq!(
        build(
            &s,
            &[
                "user.name=007",
                "user.age=7",
                "user.address.zip=01234",
                "meta.k=1",
                "both.code=9"
            ]
        )
        .unwrap(),
        json!({
            "user": { "name": "007", "age": 7, "address": { "zip": "01234" } },
            "meta": { "k": "1" },
            "both": { "code": "9" },
        })
    );
    assert!(build(&s, &["user.age=old"]).is_err());
}

#[test]
fn cyclic_refs_do_not_loop() {
    let s = json!({
        "type": "object",
        "properties": { "a": { "$ref": "#/$defs/A" } },
        "$defs": { "A": { "$ref": "#/$defs/A" } },
    });
    assert_eq!(build(&s, &["a=1"]).unwrap(), json!({ "a": 1 }));
}

#[test]
fn missing_required_arguments_are_named_with_all_required() {
    let s = json!({ "type": "object",
        "properties": { "a": { "type": "number" }, "b": { "type": "number" }, "c": {} },
        "required": ["a", "b"] });
    let e = build(&s, &["a=1"]).unwrap_err();
    assert_eq!(
        e,
        ArgumentError::Missing {
            missing: vec!["b".into()],
            required: vec!["a".into(), "b".into()],
        }
    );
    assert_eq!(e.to_string(), "missing required argument `b`");
    let e = build(&s, &[]).unwrap_err();
    assert_eq!(e.to_string(), "missing required arguments `a`, `b`");
    // Given in the JSON object counts.
    let map = build_typed(Some(r#"{"a": 1}"#), &pairs(&["b=2"]), Some(&schema(s))).unwrap();
    assert_eq!(Value::Object(map), json!({ "a": 1, "b": 2 }));
}

#[test]
fn unknown_keys_of_a_closed_schema_get_suggestions() {
    let s = json!({ "type": "object", "properties": { "text": { "type": "string" } },
        "additionalProperties": false });
    let e = build(&s, &["txt=hi"]).unwrap_err();
    assert_eq!(
        e,
        ArgumentError::Unknown {
            key: "txt".into(),
            suggestions: vec!["text".into()],
            known: vec!["text".into()],
        }
    );
    // An open schema lets unknown keys through, untyped.
    let open = json!({ "type": "object", "properties": { "text": { "type": "string" } } });
    assert_eq!(build(&open, &["txt=1"]).unwrap(), json!({ "txt": 1 }));
}

#[test]
fn base_object_from_inline_json_and_file() {
    assert_eq!(base_object(None).unwrap(), Map::new());
    assert_eq!(
        Value::Object(base_object(Some(r#"{"a":1}"#)).unwrap()),
        json!({ "a": 1 })
    );
    let path = std::env::temp_dir().join(format!("mcp-typed-{}.json", std::process::id()));
    std::fs::write(&path, r#"{"text": "from a file"}"#).unwrap();
    let spec = format!("@{}", path.display());
    assert_eq!(
        Value::Object(base_object(Some(&spec)).unwrap()),
        json!({ "text": "from a file" })
    );
    std::fs::write(&path, "[1]").unwrap();
    let e = base_object(Some(&spec)).unwrap_err();
    assert!(
        e.to_string()
            .contains("must be a JSON object, got an array"),
        "{e}"
    );
    std::fs::remove_file(&path).unwrap();
    assert!(matches!(
        base_object(Some(&spec)),
        Err(ArgumentError::File { .. })
    ));
    assert!(
        base_object(Some("{"))
            .unwrap_err()
            .to_string()
            .contains("not valid JSON")
    );
}

#[test]
fn signatures_list_required_first() {
    let s = schema(json!({ "type": "object",
        "properties": { "c": { "type": "boolean" }, "b": { "type": "integer" }, "a": { "type": ["string", "null"] }, "d": {} },
        "required": ["b", "a"] }));
    assert_eq!(signature(&s), "b: integer, a: string|null, c?: boolean, d?");
    assert_eq!(required_of(&s), ["b", "a"]);
}
