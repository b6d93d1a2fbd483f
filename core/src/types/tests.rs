//! Shared test helpers and the cross-module checks against the official schema.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

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

    /// The official 2025-11-25 schema, vendored so the test runs on a fresh machine.
    const SCHEMA_2025_11_25: &str = include_str!("testdata/schema-2025-11-25.json");

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
