//! Schema keywords that are not valid JSON Schema at all: an unknown `type` name, and every
//! other violation of the JSON Schema meta-schema (`"minimum": "3"`, `"required": "a"`, a
//! `pattern` that is not a regular expression ...), found by the `jsonschema` crate's
//! meta-validation against the draft the schema names (2020-12, MCP's default, otherwise).

use serde_json::{Map, Value};

use super::{Linter, Rule, Severity, pointer_escape};

/// The type names JSON Schema defines.
const TYPES: &[&str] = &[
    "string", "number", "integer", "boolean", "object", "array", "null",
];

/// Deeper schemas are not walked for `type` (the meta-validation still sees them).
const MAX_DEPTH: usize = 32;

/// The keywords whose value is one subschema.
const SUBSCHEMA: &[&str] = &[
    "items",
    "additionalProperties",
    "not",
    "contains",
    "propertyNames",
    "if",
    "then",
    "else",
    "unevaluatedItems",
    "unevaluatedProperties",
    "additionalItems",
];

/// The keywords whose value is an array of subschemas.
const SUBSCHEMA_LISTS: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems"];

/// The keywords whose value maps names to subschemas.
const SUBSCHEMA_MAPS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

impl Linter<'_> {
    /// Reports every way `schema` (the tool's input schema) is not valid JSON Schema: one
    /// finding per unknown `type` name (with the names that exist), then one per other
    /// meta-schema violation, at its JSON Pointer. A `$schema` this build does not know is
    /// reported once instead, as not checked.
    pub(super) fn meta(&mut self, schema: &Map<String, Value>) {
        self.types(schema, "", 0);
        // What the other rules said already, and better (`properties` not an object, tuple
        // `items`, an unknown type name): not said again in the meta-schema's words.
        let said: Vec<String> = self
            .findings
            .iter()
            .filter(|f| f.severity == Severity::Error && !f.path.is_empty())
            .map(|f| f.path.clone())
            .collect();
        let schema = Value::Object(schema.clone());
        let validator = match jsonschema::meta::validator_for(&schema) {
            Ok(validator) => validator,
            Err(e) => {
                return self.report(
                    "/$schema",
                    Rule::InvalidSchema,
                    Severity::Warning,
                    format!("the schema's draft is unknown, so it was not checked: {e}"),
                    "drop `$schema` or name a JSON Schema draft (2020-12 is MCP's default)",
                );
            }
        };
        for error in validator.iter_errors(&schema) {
            let path = error.instance_path().to_string();
            if said
                .iter()
                .any(|p| path == *p || path.starts_with(&format!("{p}/")))
            {
                continue;
            }
            self.report(
                &path,
                Rule::InvalidSchema,
                Severity::Error,
                format!("not valid JSON Schema: {error}"),
                "fix the keyword as the JSON Schema specification defines it",
            );
        }
    }

    /// Reports each `type` name that JSON Schema does not define, walking the subschemas.
    fn types(&mut self, schema: &Map<String, Value>, path: &str, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        let names: Vec<&Value> = match schema.get("type") {
            Some(Value::Array(names)) => names.iter().collect(),
            Some(name) => vec![name],
            None => Vec::new(),
        };
        for name in names {
            if name.as_str().is_some_and(|n| TYPES.contains(&n)) {
                continue;
            }
            self.report(
                &format!("{path}/type"),
                Rule::InvalidSchema,
                Severity::Error,
                format!("`type` {name} is not a JSON Schema type"),
                "use string, number, integer, boolean, object, array or null",
            );
        }
        let mut walk = |sub: &Value, at: String| {
            if let Value::Object(sub) = sub {
                self.types(sub, &at, depth + 1);
            }
        };
        for key in SUBSCHEMA {
            if let Some(sub) = schema.get(*key) {
                walk(sub, format!("{path}/{key}"));
            }
        }
        for key in SUBSCHEMA_LISTS {
            if let Some(Value::Array(subs)) = schema.get(*key) {
                for (i, sub) in subs.iter().enumerate() {
                    walk(sub, format!("{path}/{key}/{i}"));
                }
            }
        }
        for key in SUBSCHEMA_MAPS {
            if let Some(Value::Object(subs)) = schema.get(*key) {
                for (name, sub) in subs {
                    walk(sub, format!("{path}/{key}/{}", pointer_escape(name)));
                }
            }
        }
    }
}
