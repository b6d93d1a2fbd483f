//! Shared test helpers and the cross-module checks against the official schema.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The official 2025-11-25 schema, vendored so the tests run on a fresh machine.
pub(super) const SCHEMA_2025_11_25: &str = include_str!("testdata/schema-2025-11-25.json");

/// Deserializes `json` as `T`, serializes it back and asserts that nothing changed
/// (unknown fields kept, no `null` added). Returns the typed value for field checks.
#[track_caller]
pub(super) fn round_trip<T: Serialize + DeserializeOwned>(json: Value) -> T {
    let typed: T = serde_json::from_value(json.clone()).expect("sample deserializes");
    let back = serde_json::to_value(&typed).expect("value serializes");
    assert_eq!(back, json, "round trip changed the value");
    typed
}

mod schema {
    use std::collections::BTreeMap;

    use serde_json::Value;

    use crate::types::*;

    use super::SCHEMA_2025_11_25;

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Kind {
        Request,
        Notification,
    }

    fn req<R: Request>() -> (&'static str, Kind) {
        (R::METHOD, Kind::Request)
    }

    fn note<N: Notification>() -> (&'static str, Kind) {
        (N::METHOD, Kind::Notification)
    }

    /// Every marker this module declares.
    fn markers() -> Vec<(&'static str, Kind)> {
        vec![
            req::<Initialize>(),
            note::<Initialized>(),
            req::<Ping>(),
            req::<ListTools>(),
            req::<CallTool>(),
            req::<ListResources>(),
            req::<ListResourceTemplates>(),
            req::<ReadResource>(),
            req::<Subscribe>(),
            req::<Unsubscribe>(),
            req::<ListPrompts>(),
            req::<GetPrompt>(),
            req::<Complete>(),
            req::<SetLevel>(),
            note::<LoggingMessage>(),
            req::<GetTask>(),
            req::<GetTaskPayload>(),
            req::<ListTasks>(),
            req::<CancelTask>(),
            note::<TaskStatusNotification>(),
            req::<ListRoots>(),
            req::<CreateMessage>(),
            req::<Elicit>(),
            note::<ElicitationComplete>(),
            note::<Progress>(),
            note::<Cancelled>(),
            note::<ResourceUpdated>(),
            note::<ToolListChanged>(),
            note::<ResourceListChanged>(),
            note::<PromptListChanged>(),
            note::<RootsListChanged>(),
        ]
    }

    /// Method name to kind, for every definition with a `const` `method` property.
    fn schema_methods() -> BTreeMap<String, Kind> {
        let schema: Value =
            serde_json::from_str(SCHEMA_2025_11_25).expect("vendored schema parses");
        let defs = schema
            .get("$defs")
            .or_else(|| schema.get("definitions"))
            .and_then(Value::as_object)
            .expect("schema has definitions");
        let mut methods = BTreeMap::new();
        for def in defs.values() {
            let Some(properties) = def.get("properties") else {
                continue;
            };
            let Some(method) = properties.pointer("/method/const").and_then(Value::as_str) else {
                continue;
            };
            // A request envelope has an `id`; a notification has none.
            let kind = if properties.get("id").is_some() {
                Kind::Request
            } else {
                Kind::Notification
            };
            methods.insert(method.to_owned(), kind);
        }
        methods
    }

    #[test]
    fn every_marker_method_is_in_the_schema_with_its_kind() {
        let schema = schema_methods();
        assert!(
            schema.len() >= 30,
            "suspiciously few methods found: {schema:?}"
        );
        for (method, kind) in markers() {
            assert_eq!(
                schema.get(method),
                Some(&kind),
                "{method} ({kind:?}) is not in the schema as such"
            );
        }
    }

    #[test]
    fn every_schema_method_has_exactly_one_marker() {
        let markers = markers();
        let mut declared: BTreeMap<&str, usize> = BTreeMap::new();
        for (method, _) in &markers {
            *declared.entry(method).or_default() += 1;
        }
        assert!(
            declared.values().all(|&n| n == 1),
            "duplicate markers: {declared:?}"
        );
        let missing: Vec<_> = schema_methods()
            .into_keys()
            .filter(|m| !declared.contains_key(m.as_str()))
            .collect();
        assert!(
            missing.is_empty(),
            "schema methods without a marker: {missing:?}"
        );
    }
}

mod properties {
    use proptest::prelude::*;
    use serde_json::{Map, Value, json};

    use crate::types::{CallToolResult, ContentBlock};

    fn leaf() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            "[a-z]{0,8}".prop_map(Value::from),
        ]
    }

    fn json_value() -> impl Strategy<Value = Value> {
        leaf().prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map("[a-zA-Z_]{1,10}", inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    fn object() -> impl Strategy<Value = Map<String, Value>> {
        prop::collection::btree_map("[a-zA-Z_]{1,10}", json_value(), 0..6)
            .prop_map(|m| m.into_iter().collect())
    }

    const KNOWN: [&str; 7] = [
        "text",
        "image",
        "audio",
        "resource_link",
        "resource",
        "tool_use",
        "tool_result",
    ];

    proptest! {
        /// A block of an unknown type is kept verbatim, whatever it holds.
        #[test]
        fn unknown_blocks_round_trip_exactly(mut fields in object(), kind in "[a-z_/]{1,12}") {
            prop_assume!(!KNOWN.contains(&kind.as_str()));
            fields.insert("type".into(), Value::from(kind));
            let input = Value::Object(fields);
            let block: ContentBlock = serde_json::from_value(input.clone()).unwrap();
            prop_assert!(matches!(block, ContentBlock::Unknown(_)));
            prop_assert_eq!(serde_json::to_value(&block).unwrap(), input);
        }

        /// A known type with arbitrary fields parses or fails cleanly; when it parses, the
        /// unknown fields survive. (Generated values hold no floats, and the one `f64` member,
        /// `annotations`, has a longer name than any generated key, so nothing is re-typed.)
        #[test]
        fn known_blocks_parse_or_fail_cleanly(
            mut fields in object(),
            index in 0..KNOWN.len(),
            text in "[a-z]{0,8}",
        ) {
            fields.insert("type".into(), Value::from(KNOWN[index]));
            if index == 0 {
                fields.insert("text".into(), Value::from(text));
            }
            let input = Value::Object(fields);
            if let Ok(block) = serde_json::from_value::<ContentBlock>(input.clone()) {
                let back = serde_json::to_value(&block).unwrap();
                // Known optional members sent as `null` are dropped; everything else is kept.
                let mut expected = input.as_object().unwrap().clone();
                expected.retain(|_, v| !v.is_null());
                let mut back = back.as_object().unwrap().clone();
                back.retain(|_, v| !v.is_null());
                prop_assert_eq!(back, expected);
            }
        }
    }

    #[test]
    fn call_tool_result_keeps_unknown_blocks_among_known_ones() {
        let input = json!({
            "content": [
                { "type": "text", "text": "a" },
                { "type": "x-chart", "series": [1, 2], "nested": { "deep": [null, true] } },
                { "type": "text", "text": "b", "vendorField": { "k": "v" } }
            ]
        });
        let result: CallToolResult = serde_json::from_value(input.clone()).unwrap();
        assert_eq!(result.content.len(), 3);
        assert_eq!(result.content[1].kind(), Some("x-chart"));
        assert_eq!(serde_json::to_value(&result).unwrap(), input);
    }
}
