//! A tool's JSON input schema as readable lines:
//! `name: type (required) — description [one of: …; default: …]`, nested objects indented.

use serde_json::{Map, Value};

use super::{MIN_WIDTH, wrap_hanging};

/// How deep nested objects are expanded; deeper ones are summarized as their type.
const MAX_DEPTH: usize = 6;
const STEP: usize = 2;

/// Renders the properties of an object schema, one (wrapped) entry per property.
///
/// Required properties come first, then the rest, each group by name (a JSON object has no
/// order this crate can rely on). A schema without properties renders as `(no arguments)`;
/// one whose root is not an object says what it is.
pub fn schema_lines(schema: &Map<String, Value>, width: usize) -> String {
    let width = width.max(MIN_WIDTH);
    let mut out = Vec::new();
    let root_type = type_name(schema);
    if schema.get("properties").is_none() && root_type != "object" && !root_type.is_empty() {
        out.push(format!("(input is {root_type}, not an object)"));
    } else {
        properties(schema, 0, width, &mut out);
        if out.is_empty() {
            out.push("(no arguments)".to_owned());
        }
    }
    let mut text = out.join("\n");
    text.push('\n');
    text
}

fn properties(schema: &Map<String, Value>, depth: usize, width: usize, out: &mut Vec<String>) {
    let Some(Value::Object(props)) = schema.get("properties") else {
        return;
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut names: Vec<&String> = props.keys().collect();
    names.sort_by_key(|n| (!required.contains(&n.as_str()), n.as_str()));
    for name in names {
        let prop = props.get(name.as_str()).and_then(Value::as_object);
        let empty = Map::new();
        let prop = prop.unwrap_or(&empty);
        property(
            name,
            prop,
            required.contains(&name.as_str()),
            depth,
            width,
            out,
        );
    }
}

fn property(
    name: &str,
    prop: &Map<String, Value>,
    required: bool,
    depth: usize,
    width: usize,
    out: &mut Vec<String>,
) {
    let indent = depth * STEP;
    let mut head = format!("{name}: {}", type_name(prop));
    if required {
        head.push_str(" (required)");
    }
    let mut text = String::new();
    if let Some(d) = prop.get("description").and_then(Value::as_str) {
        text.push_str(d.trim());
    }
    let notes = notes(prop);
    if !notes.is_empty() {
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(&format!("[{}]", notes.join("; ")));
    }
    if !text.is_empty() {
        head.push_str(" — ");
        head.push_str(&text);
    }
    // Continuation lines hang two steps further in than the name.
    let prefix = " ".repeat(indent);
    out.extend(
        wrap_hanging(&head, width.saturating_sub(indent), STEP * 2)
            .into_iter()
            .map(|l| format!("{prefix}{l}")),
    );
    if depth + 1 >= MAX_DEPTH {
        return;
    }
    if prop.get("properties").is_some() {
        properties(prop, depth + 1, width, out);
    } else if let Some(Value::Object(items)) = prop.get("items") {
        if items.get("properties").is_some() {
            properties(items, depth + 1, width, out);
        }
    }
}

/// A short type description: `string`, `integer | null`, `array of string`, `enum`, `ref X`.
fn type_name(schema: &Map<String, Value>) -> String {
    let base = match schema.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" | "),
        _ => {
            if let Some(Value::String(r)) = schema.get("$ref") {
                return format!("ref {}", r.rsplit('/').next().unwrap_or(r));
            }
            for key in ["anyOf", "oneOf"] {
                if let Some(Value::Array(options)) = schema.get(key) {
                    return options
                        .iter()
                        .map(|o| o.as_object().map_or("any".to_owned(), type_name))
                        .collect::<Vec<_>>()
                        .join(" | ");
                }
            }
            if schema.contains_key("enum") {
                return "enum".to_owned();
            }
            if let Some(c) = schema.get("const") {
                return format!("const {c}");
            }
            if schema.contains_key("properties") {
                return "object".to_owned();
            }
            return "any".to_owned();
        }
    };
    if base == "array" {
        if let Some(Value::Object(items)) = schema.get("items") {
            return format!("array of {}", type_name(items));
        }
    }
    base
}

fn notes(schema: &Map<String, Value>) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(Value::Array(values)) = schema.get("enum") {
        let values: Vec<String> = values.iter().map(short_json).collect();
        notes.push(format!("one of: {}", values.join(", ")));
    }
    if let Some(d) = schema.get("default") {
        notes.push(format!("default: {}", short_json(d)));
    }
    let bound = |key: &str| schema.get(key).map(short_json);
    match (bound("minimum"), bound("maximum")) {
        (Some(lo), Some(hi)) => notes.push(format!("{lo} to {hi}")),
        (Some(lo), None) => notes.push(format!("at least {lo}")),
        (None, Some(hi)) => notes.push(format!("at most {hi}")),
        (None, None) => {}
    }
    match (bound("minLength"), bound("maxLength")) {
        (Some(lo), Some(hi)) => notes.push(format!("length {lo} to {hi}")),
        (Some(lo), None) => notes.push(format!("length at least {lo}")),
        (None, Some(hi)) => notes.push(format!("length at most {hi}")),
        (None, None) => {}
    }
    if let Some(Value::String(f)) = schema.get("format") {
        notes.push(format!("format: {f}"));
    }
    if let Some(Value::String(p)) = schema.get("pattern") {
        notes.push(format!("pattern: {p}"));
    }
    notes
}

/// A JSON value for a note: strings bare (quoted only when they contain separators).
fn short_json(value: &Value) -> String {
    match value {
        Value::String(s) if !s.is_empty() && !s.contains([',', ';', ' ']) => s.clone(),
        other => other.to_string(),
    }
}
