//! Tool arguments typed from the tool's `inputSchema`.
//!
//! `mcp call` and `mcp load` take a base JSON object (`--args '{…}'`, `--args @file`,
//! `--args -` for stdin) and `key=value` pairs over it. [`build_typed`] builds the object to
//! send:
//!
//! - a pair whose property the schema types as `string` (only) is sent as the text as typed:
//!   `message=123` sends `"123"`;
//! - a pair whose property is `number`, `integer`, `boolean`, `array`, `object` or `null` is
//!   parsed as JSON and must be of that type (`n=3`, `ok=true`, `tags=["a"]`); a value that is
//!   not is a local error naming the expected type, and nothing is sent;
//! - a property that allows a string and other types (`["string", "number"]`, an `anyOf`)
//!   gets the parsed JSON when it is one of the other types, else the text;
//! - `a.b=1` follows nested schemas (`properties`, `additionalProperties`, local `$ref`s to
//!   `#/$defs/…` or `#/definitions/…`, and the branches of `allOf` / `anyOf` / `oneOf`);
//! - a property the schema says nothing about, or no schema at all (the tool is not listed),
//!   falls back to the untyped rule of [`super::parse_value`]: JSON when it parses,
//!   else the text.
//!
//! With a schema, it also checks what a server would refuse anyway, before anything is sent:
//! a top-level key that a closed schema (`additionalProperties: false`) does not have (with
//! "did you mean"), and every top-level `required` property being present.

use std::io::Read as _;
use std::path::PathBuf;
use std::sync::OnceLock;

use serde_json::{Map, Value};

use super::{ArgError, insert_path, kind_of, parse_value, split_pair};
use crate::suggest::did_you_mean;

/// Why the arguments cannot be built. Each is a local error: nothing was sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArgumentError {
    /// A pair or JSON object that cannot be used (syntax, not an object, wrong type).
    #[error("{0}")]
    Invalid(String),
    /// `--args @FILE` could not be read.
    #[error("{}: {reason}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// The OS error.
        reason: String,
    },
    /// A key the tool's closed schema does not have.
    #[error("the tool has no argument `{key}`")]
    Unknown {
        /// The key as given (its first segment).
        key: String,
        /// The closest argument names, best first.
        suggestions: Vec<String>,
        /// Every argument name of the schema, in schema order.
        known: Vec<String>,
    },
    /// Required properties that were not given.
    #[error(
        "missing required argument{} {}",
        if missing.len() == 1 { "" } else { "s" },
        quoted(missing)
    )]
    Missing {
        /// The required properties not given, in schema order.
        missing: Vec<String>,
        /// Every required property, in schema order.
        required: Vec<String>,
    },
}

impl From<ArgError> for ArgumentError {
    fn from(e: ArgError) -> Self {
        ArgumentError::Invalid(e.0)
    }
}

fn quoted(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Reads the base object of `--args`: inline JSON, `@FILE`, or `-` for stdin.
///
/// Stdin is read once per process and kept, so the arguments may be checked before
/// connecting and built again once the schema is known.
///
/// # Errors
///
/// [`ArgumentError::File`] when the file cannot be read, [`ArgumentError::Invalid`] when the
/// text is not a JSON object.
pub fn base_object(spec: Option<&str>) -> Result<Map<String, Value>, ArgumentError> {
    let Some(spec) = spec else {
        return Ok(Map::new());
    };
    let (text, origin) = if spec == "-" {
        (read_stdin()?, "stdin (--args -)".to_owned())
    } else if let Some(path) = spec.strip_prefix('@') {
        let text = std::fs::read_to_string(path).map_err(|e| ArgumentError::File {
            path: PathBuf::from(path),
            reason: e.to_string(),
        })?;
        (text, format!("{path} (--args @{path})"))
    } else {
        (spec.to_owned(), "--args".to_owned())
    };
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(ArgumentError::Invalid(format!(
            "{origin} must be a JSON object, got {}",
            kind_of(&other)
        ))),
        Err(e) => Err(ArgumentError::Invalid(format!(
            "{origin} is not valid JSON: {e}"
        ))),
    }
}

fn read_stdin() -> Result<String, ArgumentError> {
    static STDIN: OnceLock<Result<String, String>> = OnceLock::new();
    STDIN
        .get_or_init(|| {
            let mut text = String::new();
            std::io::stdin()
                .lock()
                .read_to_string(&mut text)
                .map(|_| text)
                .map_err(|e| e.to_string())
        })
        .clone()
        .map_err(|reason| ArgumentError::Invalid(format!("cannot read stdin (--args -): {reason}")))
}

/// Builds the arguments to send from the base object (see [`base_object`]) and `key=value`
/// pairs, typed by `schema` (the tool's `inputSchema`) when there is one.
///
/// # Errors
///
/// See [`ArgumentError`]; without a schema only syntax errors and unreadable input.
pub fn build_typed(
    args_spec: Option<&str>,
    pairs: &[String],
    schema: Option<&Map<String, Value>>,
) -> Result<Map<String, Value>, ArgumentError> {
    let mut map = base_object(args_spec)?;
    let schema = schema.map(|root| Schema { root });
    for pair in pairs {
        let (key, text) = split_pair(pair)?;
        let value = match schema {
            None => parse_value(text),
            Some(s) => {
                s.check_known(key)?;
                let property = s.at_path(key);
                let types = property.and_then(|p| s.types(p, 0));
                convert(text, types).map_err(|expected| {
                    invalid_type(key, text, &expected, types.unwrap_or_default())
                })?
            }
        };
        insert_path(&mut map, key, value)?;
    }
    if let Some(s) = schema {
        let required = s.required();
        let missing: Vec<String> = required
            .iter()
            .filter(|r| !map.contains_key(r.as_str()))
            .cloned()
            .collect();
        if !missing.is_empty() {
            return Err(ArgumentError::Missing { missing, required });
        }
    }
    Ok(map)
}

fn invalid_type(key: &str, text: &str, expected: &str, types: Types) -> ArgumentError {
    let example = [
        (types.number || types.integer, "3"),
        (types.boolean, "true"),
        (types.array, "'[\"a\"]'"),
        (types.object, "'{\"k\":1}'"),
        (types.null, "null"),
    ]
    .into_iter()
    .find_map(|(on, example)| on.then_some(example))
    .unwrap_or("3");
    ArgumentError::Invalid(format!(
        "argument `{key}` must be {expected} (the tool's input schema says so), got {text:?} \
         (write it as JSON: {key}={example})"
    ))
}

/// The JSON types a schema allows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Types {
    /// `string`.
    pub string: bool,
    /// `number` (which also admits integers).
    pub number: bool,
    /// `integer` (a number without a fractional part).
    pub integer: bool,
    /// `boolean`.
    pub boolean: bool,
    /// `array`.
    pub array: bool,
    /// `object`.
    pub object: bool,
    /// `null`.
    pub null: bool,
}

impl Types {
    fn of_name(name: &str) -> Option<Types> {
        let mut t = Types::default();
        match name {
            "string" => t.string = true,
            "number" => t.number = true,
            "integer" => t.integer = true,
            "boolean" => t.boolean = true,
            "array" => t.array = true,
            "object" => t.object = true,
            "null" => t.null = true,
            _ => return None,
        }
        Some(t)
    }

    fn of_value(value: &Value) -> Types {
        let name = match value {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        };
        Types::of_name(name).unwrap_or_default()
    }

    fn union(self, o: Types) -> Types {
        Types {
            string: self.string || o.string,
            number: self.number || o.number,
            integer: self.integer || o.integer,
            boolean: self.boolean || o.boolean,
            array: self.array || o.array,
            object: self.object || o.object,
            null: self.null || o.null,
        }
    }

    /// Whether `value` is one of these types.
    pub fn admits(self, value: &Value) -> bool {
        match value {
            Value::Null => self.null,
            Value::Bool(_) => self.boolean,
            Value::Number(n) => {
                self.number
                    || (self.integer
                        && (n.is_i64()
                            || n.is_u64()
                            || n.as_f64().is_some_and(|f| f.fract() == 0.0)))
            }
            Value::String(_) => self.string,
            Value::Array(_) => self.array,
            Value::Object(_) => self.object,
        }
    }

    /// `number`, `boolean|null`: the types as in a schema, for signatures.
    pub fn short(self) -> String {
        [
            (self.string, "string"),
            (self.number, "number"),
            (self.integer && !self.number, "integer"),
            (self.boolean, "boolean"),
            (self.array, "array"),
            (self.object, "object"),
            (self.null, "null"),
        ]
        .into_iter()
        .filter_map(|(on, name)| on.then_some(name))
        .collect::<Vec<_>>()
        .join("|")
    }

    /// `a number`, `a boolean or null`: the types as a phrase for error messages.
    pub fn describe(self) -> String {
        let names: Vec<&str> = [
            (self.string, "a string"),
            (self.number, "a number"),
            (self.integer && !self.number, "an integer"),
            (self.boolean, "a boolean"),
            (self.array, "an array"),
            (self.object, "an object"),
            (self.null, "null"),
        ]
        .into_iter()
        .filter_map(|(on, name)| on.then_some(name))
        .collect();
        match names.split_last() {
            None => "nothing".into(),
            Some((last, [])) => (*last).to_owned(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        }
    }
}

/// The value of a `key=value` pair for a property of these types (`None`: unknown).
///
/// # Errors
///
/// The expected types as a phrase, when the text is none of them.
pub fn convert(text: &str, types: Option<Types>) -> Result<Value, String> {
    let Some(types) = types else {
        return Ok(parse_value(text));
    };
    let only_string = Types {
        string: true,
        ..Types::default()
    };
    // A string property gets the text as typed, even when it looks like JSON; a property
    // that also allows null still gets the text (send null with --args).
    if types == only_string
        || types == only_string.union(Types::of_name("null").unwrap_or_default())
    {
        return Ok(Value::String(text.to_owned()));
    }
    match serde_json::from_str::<Value>(text) {
        Ok(parsed) if types.admits(&parsed) => Ok(parsed),
        _ if types.string => Ok(Value::String(text.to_owned())),
        _ => Err(types.describe()),
    }
}

/// The most `$ref` hops or combinator levels followed, so a cyclic schema cannot loop.
const MAX_DEPTH: usize = 16;

/// A tool's input schema, with its root kept for local `$ref`s.
#[derive(Clone, Copy)]
struct Schema<'a> {
    root: &'a Map<String, Value>,
}

impl<'a> Schema<'a> {
    /// Follows a local `$ref` (a JSON pointer into the root), if the schema is one.
    fn resolve(&self, schema: &'a Value) -> &'a Value {
        let mut current = schema;
        for _ in 0..MAX_DEPTH {
            let Some(pointer) = current
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix('#'))
            else {
                break;
            };
            let target = if pointer.is_empty() {
                None
            } else {
                pointer_into(self.root, pointer)
            };
            match target {
                Some(t) => current = t,
                None => break,
            }
        }
        current
    }

    /// The schema of the top-level or nested (`a.b`) property `path`.
    fn at_path(&self, path: &str) -> Option<&'a Value> {
        let mut segments = path.split('.');
        let first = segments.next()?;
        let mut current = self.property_of_root(first)?;
        for segment in segments {
            current = self.property(current, segment, 0)?;
        }
        Some(current)
    }

    fn property_of_root(&self, name: &str) -> Option<&'a Value> {
        if let Some(p) = self.root.get("properties").and_then(|p| p.get(name)) {
            return Some(p);
        }
        for key in ["allOf", "anyOf", "oneOf"] {
            for branch in self
                .root
                .get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let Some(p) = self.property(branch, name, 0) {
                    return Some(p);
                }
            }
        }
        self.root
            .get("additionalProperties")
            .filter(|a| a.is_object())
    }

    fn property(&self, schema: &'a Value, name: &str, depth: usize) -> Option<&'a Value> {
        if depth > MAX_DEPTH {
            return None;
        }
        let schema = self.resolve(schema);
        if let Some(p) = schema.get("properties").and_then(|p| p.get(name)) {
            return Some(p);
        }
        for key in ["allOf", "anyOf", "oneOf"] {
            for branch in schema
                .get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let Some(p) = self.property(branch, name, depth + 1) {
                    return Some(p);
                }
            }
        }
        schema.get("additionalProperties").filter(|a| a.is_object())
    }

    /// The types `schema` allows; `None` when it does not say (any value is fine).
    fn types(&self, schema: &'a Value, depth: usize) -> Option<Types> {
        if depth > MAX_DEPTH {
            return None;
        }
        let schema = self.resolve(schema);
        match schema.get("type") {
            Some(Value::String(name)) => return Types::of_name(name),
            Some(Value::Array(names)) => {
                return names
                    .iter()
                    .map(|n| n.as_str().and_then(Types::of_name))
                    .try_fold(Types::default(), |acc, t| Some(acc.union(t?)));
            }
            _ => {}
        }
        if let Some(values) = schema.get("enum").and_then(Value::as_array) {
            return Some(
                values
                    .iter()
                    .fold(Types::default(), |acc, v| acc.union(Types::of_value(v))),
            );
        }
        if let Some(value) = schema.get("const") {
            return Some(Types::of_value(value));
        }
        // Any branch that says nothing allows anything, so the union is unknown.
        for key in ["anyOf", "oneOf"] {
            if let Some(branches) = schema.get(key).and_then(Value::as_array) {
                return branches
                    .iter()
                    .map(|b| self.types(b, depth + 1))
                    .try_fold(Types::default(), |acc, t| Some(acc.union(t?)));
            }
        }
        // allOf: the first branch that says something (an intersection is rarely written).
        schema
            .get("allOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find_map(|b| self.types(b, depth + 1))
    }

    /// Rejects a top-level key the schema closes out (`additionalProperties: false`).
    fn check_known(&self, path: &str) -> Result<(), ArgumentError> {
        let key = path.split('.').next().unwrap_or(path);
        let closed = self.root.get("additionalProperties") == Some(&Value::Bool(false));
        let Some(properties) = self.root.get("properties").and_then(Value::as_object) else {
            return Ok(());
        };
        if !closed || properties.contains_key(key) {
            return Ok(());
        }
        let known: Vec<String> = properties.keys().cloned().collect();
        Err(ArgumentError::Unknown {
            key: key.to_owned(),
            suggestions: did_you_mean(key, known.iter().map(String::as_str)),
            known,
        })
    }

    /// The top-level `required` properties, in schema order.
    fn required(&self) -> Vec<String> {
        required_of(self.root)
    }
}

/// The `required` names of a tool's input schema, in schema order.
pub fn required_of(schema: &Map<String, Value>) -> Vec<String> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|r| r.as_str().map(str::to_owned))
        .collect()
}

/// `a: number, b: string, c?: boolean`: every top-level property with its type, required
/// ones first (in `required` order), then the optional ones marked `?`.
pub fn signature(schema: &Map<String, Value>) -> String {
    let s = Schema { root: schema };
    let required = required_of(schema);
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return String::new();
    };
    let describe = |name: &String, value: &Value| match s.types(value, 0) {
        Some(t) => format!("{name}: {}", t.short()),
        None => name.clone(),
    };
    let mut parts: Vec<String> = required
        .iter()
        .filter_map(|r| properties.get(r).map(|v| describe(r, v)))
        .collect();
    parts.extend(
        properties
            .iter()
            .filter(|(k, _)| !required.contains(k))
            .map(|(k, v)| describe(&format!("{k}?"), v)),
    );
    parts.join(", ")
}

/// Follows a JSON pointer (`/$defs/Name`) from the root object.
fn pointer_into<'a>(root: &'a Map<String, Value>, pointer: &str) -> Option<&'a Value> {
    let mut segments = pointer.strip_prefix('/')?.split('/');
    let first = unescape(segments.next()?);
    let mut current = root.get(&first)?;
    for segment in segments {
        let segment = unescape(segment);
        current = match current {
            Value::Object(map) => map.get(&segment)?,
            Value::Array(items) => items.get(segment.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(current)
}

fn unescape(segment: &str) -> String {
    segment.replace("~1", "/").replace("~0", "~")
}

#[cfg(test)]
mod tests;
