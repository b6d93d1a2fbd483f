//! `key=value` arguments: tool arguments without a schema (JSON when the value parses as
//! JSON) and prompt arguments (always strings), with dotted keys for nested objects.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::ArgError;

/// Parses a `key=value` value: JSON when it parses as JSON, else the literal string.
///
/// So `3` is a number, `true` a boolean, `"3"` the string `3`, and `hello` the string `hello`.
pub fn parse_value(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
}

/// Builds a tool's arguments from an optional `--args` JSON object and `key=value` pairs.
///
/// Pairs are applied in order over the JSON object; a dotted key (`a.b=1`) sets a nested
/// field, creating objects on the way. Setting a field inside a value that is not an object
/// is an error, as is a pair without `=` or with an empty key segment.
pub fn build_arguments(
    json: Option<&str>,
    pairs: &[String],
) -> Result<Map<String, Value>, ArgError> {
    let mut map = match json {
        None => Map::new(),
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => map,
            Ok(other) => {
                return Err(ArgError(format!(
                    "--args must be a JSON object, got {}",
                    kind_of(&other)
                )));
            }
            Err(e) => return Err(ArgError(format!("--args is not valid JSON: {e}"))),
        },
    };
    for pair in pairs {
        let (key, value) = split_pair(pair)?;
        insert_path(&mut map, key, parse_value(value))?;
    }
    Ok(map)
}

/// Parses `key=value` pairs as strings (prompt arguments are strings, so nothing is JSON).
pub fn string_pairs(pairs: &[String]) -> Result<BTreeMap<String, String>, ArgError> {
    pairs
        .iter()
        .map(|pair| split_pair(pair).map(|(k, v)| (k.to_owned(), v.to_owned())))
        .collect()
}

pub(super) fn split_pair(pair: &str) -> Result<(&str, &str), ArgError> {
    match pair.split_once('=') {
        Some((key, value)) if !key.is_empty() => Ok((key, value)),
        _ => Err(ArgError(format!(
            "expected key=value, got {pair:?} (use --args '{{...}}' for a JSON object)"
        ))),
    }
}

pub(super) fn insert_path(
    map: &mut Map<String, Value>,
    key: &str,
    value: Value,
) -> Result<(), ArgError> {
    let segments: Vec<&str> = key.split('.').collect();
    if segments.iter().any(|s| s.is_empty()) {
        return Err(ArgError(format!("empty segment in key {key:?}")));
    }
    let (last, parents) = segments
        .split_last()
        .expect("split yields at least one segment");
    let mut current = map;
    for (i, segment) in parents.iter().enumerate() {
        let slot = current
            .entry((*segment).to_owned())
            .or_insert_with(|| Value::Object(Map::new()));
        current = match slot {
            Value::Object(inner) => inner,
            other => {
                return Err(ArgError(format!(
                    "cannot set {key:?}: {:?} is already {}",
                    segments[..=i].join("."),
                    kind_of(other)
                )));
            }
        };
    }
    current.insert((*last).to_owned(), value);
    Ok(())
}

pub(super) fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
