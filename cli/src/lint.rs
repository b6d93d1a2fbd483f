//! `mcp lint`: portability problems in tool input schemas.
//!
//! MCP lets a tool's `inputSchema` be any JSON Schema object, but the model APIs that clients
//! hand tools to accept much less: strict modes want `additionalProperties: false` and a
//! plain object at the root, several clients never dereference `$ref`, some reject tuple
//! `items`, unusual `format`s or long names. Each [`Finding`] says where (tool and JSON
//! Pointer), what is wrong, how to fix it and whether it is an [`Severity::Error`] (the tool
//! fails on common clients; `mcp lint` exits 1) or a [`Severity::Warning`]. A schema that is
//! not valid JSON Schema at all (an unknown `type` name, a keyword with a value of the wrong
//! kind) is an error too ([`Rule::InvalidSchema`]).

use std::fmt;

use mcp_proto::types::Tool;
use serde_json::{Map, Value};

use crate::render::{Column, Table};

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Severity {
    /// The tool is rejected or misused by common clients.
    Error,
    /// Works in most places, but is fragile or unhelpful to a model.
    Warning,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        })
    }
}

/// The rule a finding comes from; its [`name`](Rule::name) is stable for scripts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Rule {
    /// The tool name is not `[A-Za-z0-9_-]{1,64}`.
    ToolName,
    /// The root schema is not `"type": "object"`.
    RootType,
    /// `oneOf` / `anyOf` / `allOf` at the root.
    RootCombinator,
    /// An object schema without `additionalProperties: false`.
    AdditionalProperties,
    /// A `$ref`, or `definitions` / `$defs` to be referenced.
    Ref,
    /// A `format` few clients know.
    Format,
    /// Tuple-style `items` (an array of schemas).
    TupleItems,
    /// A property name that is not `[A-Za-z0-9_.-]{1,64}`.
    PropertyName,
    /// `required` names a property that is not in `properties` (or is not a string array).
    RequiredUnknown,
    /// `properties` is not an object.
    MalformedProperties,
    /// No description on the tool or a property.
    MissingDescription,
    /// Not valid JSON Schema: an unknown `type` name, or another violation of the
    /// meta-schema (a keyword with a value of the wrong kind).
    InvalidSchema,
}

impl Rule {
    /// A short kebab-case name, shown in `--json` output.
    pub fn name(self) -> &'static str {
        match self {
            Rule::ToolName => "tool-name",
            Rule::RootType => "root-type",
            Rule::RootCombinator => "root-combinator",
            Rule::AdditionalProperties => "additional-properties",
            Rule::Ref => "ref",
            Rule::Format => "format",
            Rule::TupleItems => "tuple-items",
            Rule::PropertyName => "property-name",
            Rule::RequiredUnknown => "required-unknown",
            Rule::MalformedProperties => "malformed-properties",
            Rule::MissingDescription => "missing-description",
            Rule::InvalidSchema => "invalid-schema",
        }
    }
}

/// One portability problem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The tool's name.
    pub tool: String,
    /// Where in the input schema, as a JSON Pointer (`""` is the root, `/properties/a`).
    pub path: String,
    /// The rule that fired.
    pub rule: Rule,
    /// What is wrong.
    pub issue: String,
    /// What to do about it.
    pub fix: String,
    /// Error or warning.
    pub severity: Severity,
}

/// Formats that most clients and model APIs accept on strings.
const PORTABLE_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "email",
    "uri",
    "uuid",
    "hostname",
    "ipv4",
    "ipv6",
];

/// Deeper schemas are not inspected further (and reported once).
const MAX_DEPTH: usize = 32;

/// Lints every tool; findings come grouped by tool, in the tools' order.
pub fn lint_tools(tools: &[Tool]) -> Vec<Finding> {
    tools.iter().flat_map(lint_tool).collect()
}

/// True when any finding is an error (`mcp lint` then exits 1).
pub fn has_errors(findings: &[Finding]) -> bool {
    findings.iter().any(|f| f.severity == Severity::Error)
}

fn name_ok(name: &str, extra: &[u8]) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || extra.contains(&b))
}

struct Linter<'a> {
    tool: &'a str,
    findings: Vec<Finding>,
}

impl Linter<'_> {
    fn report(&mut self, path: &str, rule: Rule, severity: Severity, issue: String, fix: &str) {
        self.findings.push(Finding {
            tool: self.tool.to_owned(),
            path: path.to_owned(),
            rule,
            issue,
            fix: fix.to_owned(),
            severity,
        });
    }

    fn schema(&mut self, schema: &Map<String, Value>, path: &str, depth: usize) {
        if depth > MAX_DEPTH {
            return self.report(
                path,
                Rule::Ref,
                Severity::Warning,
                format!("schema nested deeper than {MAX_DEPTH} levels was not checked"),
                "flatten the schema",
            );
        }
        if schema.contains_key("$ref") {
            self.report(
                path,
                Rule::Ref,
                Severity::Error,
                "`$ref` is not dereferenced by many clients".into(),
                "inline the referenced schema",
            );
        }
        for key in ["definitions", "$defs"] {
            if schema.contains_key(key) {
                self.report(
                    &format!("{path}/{key}"),
                    Rule::Ref,
                    Severity::Warning,
                    format!("`{key}` only helps clients that resolve `$ref`"),
                    "inline the definitions where they are used",
                );
            }
        }
        if let Some(Value::String(format)) = schema.get("format")
            && !PORTABLE_FORMATS.contains(&format.as_str())
        {
            self.report(
                &format!("{path}/format"),
                Rule::Format,
                Severity::Warning,
                format!("format `{format}` is not supported by many clients"),
                "drop the format and describe it in `description`, or use `pattern`",
            );
        }
        match schema.get("items") {
            Some(Value::Array(_)) => self.report(
                &format!("{path}/items"),
                Rule::TupleItems,
                Severity::Error,
                "tuple-style `items` (an array of schemas) is rejected by many clients".into(),
                "use one schema for `items`, or an object with named fields",
            ),
            Some(Value::Object(items)) => self.schema(items, &format!("{path}/items"), depth + 1),
            _ => {}
        }
        let is_object = schema.get("type").and_then(Value::as_str) == Some("object")
            || schema.contains_key("properties");
        if is_object {
            self.object(schema, path, depth);
        }
        for key in ["anyOf", "oneOf", "allOf"] {
            if let Some(Value::Array(options)) = schema.get(key) {
                for (i, option) in options.iter().enumerate() {
                    if let Value::Object(option) = option {
                        self.schema(option, &format!("{path}/{key}/{i}"), depth + 1);
                    }
                }
            }
        }
    }

    fn object(&mut self, schema: &Map<String, Value>, path: &str, depth: usize) {
        match schema.get("additionalProperties") {
            Some(Value::Bool(false)) => {}
            None => self.report(
                path,
                Rule::AdditionalProperties,
                Severity::Warning,
                "`additionalProperties` is missing; strict clients require it to be false".into(),
                "add \"additionalProperties\": false",
            ),
            Some(Value::Object(extra)) => {
                self.report(
                    &format!("{path}/additionalProperties"),
                    Rule::AdditionalProperties,
                    Severity::Warning,
                    "a schema for `additionalProperties` is rejected by strict clients".into(),
                    "list the properties explicitly and set additionalProperties to false",
                );
                self.schema(extra, &format!("{path}/additionalProperties"), depth + 1);
            }
            Some(_) => self.report(
                &format!("{path}/additionalProperties"),
                Rule::AdditionalProperties,
                Severity::Warning,
                "`additionalProperties` allows anything; strict clients require false".into(),
                "set \"additionalProperties\": false",
            ),
        }
        let empty = Map::new();
        let props = match schema.get("properties") {
            None => &empty,
            Some(Value::Object(props)) => props,
            Some(_) => {
                self.report(
                    &format!("{path}/properties"),
                    Rule::MalformedProperties,
                    Severity::Error,
                    "`properties` is not an object".into(),
                    "make `properties` an object mapping names to schemas",
                );
                &empty
            }
        };
        match schema.get("required") {
            None => {}
            Some(Value::Array(names)) => {
                for (i, name) in names.iter().enumerate() {
                    match name.as_str() {
                        Some(n) if props.contains_key(n) => {}
                        Some(n) => self.report(
                            &format!("{path}/required/{i}"),
                            Rule::RequiredUnknown,
                            Severity::Error,
                            format!("`required` names `{n}`, which is not in `properties`"),
                            "add the property or remove it from `required`",
                        ),
                        None => self.report(
                            &format!("{path}/required/{i}"),
                            Rule::RequiredUnknown,
                            Severity::Error,
                            format!("`required` entry {name} is not a string"),
                            "list property names as strings",
                        ),
                    }
                }
            }
            Some(_) => self.report(
                &format!("{path}/required"),
                Rule::RequiredUnknown,
                Severity::Error,
                "`required` is not an array of property names".into(),
                "make `required` an array of strings",
            ),
        }
        for (name, prop) in props {
            let prop_path = format!("{path}/properties/{}", pointer_escape(name));
            if !name_ok(name, b".") {
                self.report(
                    &prop_path,
                    Rule::PropertyName,
                    Severity::Error,
                    format!("property name {name:?} is not [A-Za-z0-9_.-]{{1,64}}"),
                    "rename it with letters, digits, `_`, `.` or `-` (at most 64)",
                );
            }
            match prop {
                Value::Object(prop) => {
                    if !prop.contains_key("description") && !prop.contains_key("$ref") {
                        self.report(
                            &prop_path,
                            Rule::MissingDescription,
                            Severity::Warning,
                            format!("property `{name}` has no description"),
                            "add a description so a model knows what to pass",
                        );
                    }
                    self.schema(prop, &prop_path, depth + 1);
                }
                Value::Bool(_) => {}
                _ => self.report(
                    &prop_path,
                    Rule::MalformedProperties,
                    Severity::Error,
                    format!("property `{name}` is not a schema object"),
                    "give the property a schema object such as {\"type\": \"string\"}",
                ),
            }
        }
    }
}

/// JSON Pointer escaping of one reference token (RFC 6901).
fn pointer_escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// Lints one tool: its name, its description and its input schema.
pub fn lint_tool(tool: &Tool) -> Vec<Finding> {
    let mut l = Linter {
        tool: &tool.name,
        findings: Vec::new(),
    };
    if !name_ok(&tool.name, b"") {
        l.report(
            "",
            Rule::ToolName,
            Severity::Error,
            format!("tool name {:?} is not [A-Za-z0-9_-]{{1,64}}", tool.name),
            "rename the tool with letters, digits, `_` or `-` (at most 64)",
        );
    }
    if tool
        .description
        .as_deref()
        .is_none_or(|d| d.trim().is_empty())
    {
        l.report(
            "",
            Rule::MissingDescription,
            Severity::Warning,
            "the tool has no description".into(),
            "add a description saying what the tool does and when to use it",
        );
    }
    let schema = &tool.input_schema;
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        l.report(
            "/type",
            Rule::RootType,
            Severity::Error,
            "the input schema's root is not `\"type\": \"object\"`".into(),
            "wrap the input in an object: {\"type\": \"object\", \"properties\": {...}}",
        );
    }
    for key in ["oneOf", "anyOf", "allOf"] {
        if schema.contains_key(key) {
            l.report(
                &format!("/{key}"),
                Rule::RootCombinator,
                Severity::Error,
                format!("`{key}` at the root is rejected by many clients"),
                "use one object with optional properties and explain the variants in descriptions",
            );
        }
    }
    l.schema(schema, "", 0);
    l.meta(schema);
    l.findings
}

/// Where `tool`'s input schema is not valid JSON Schema at all: the errors of rule
/// [`Rule::InvalidSchema`] alone (an unknown `type` name, a keyword of the wrong kind), for
/// commands that use the schema (`mcp tools`, `mcp call`) and warn about it.
pub fn invalid_schema(tool: &Tool) -> Vec<Finding> {
    let mut l = Linter {
        tool: &tool.name,
        findings: Vec::new(),
    };
    l.meta(&tool.input_schema);
    l.findings
        .retain(|f| f.rule == Rule::InvalidSchema && f.severity == Severity::Error);
    l.findings
}

/// The findings as a table (`SEVERITY TOOL PATH ISSUE / FIX`), plus a summary line.
pub fn render_findings(findings: &[Finding], width: usize) -> String {
    let errors = findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .count();
    let warnings = findings.len() - errors;
    if findings.is_empty() {
        return "no problems found\n".to_owned();
    }
    let mut table = Table::new(vec![
        Column::new("LEVEL"),
        Column::new("TOOL"),
        Column::new("PATH"),
        Column::wrapping("ISSUE → FIX"),
    ]);
    let mut sorted: Vec<&Finding> = findings.iter().collect();
    sorted.sort_by_key(|f| f.severity);
    for f in sorted {
        let path = if f.path.is_empty() { "/" } else { &f.path };
        table.row([
            f.severity.to_string(),
            f.tool.clone(),
            path.to_owned(),
            format!("{} → {}", f.issue, f.fix),
        ]);
    }
    let mut out = table.render(width);
    out.push_str(&format!(
        "{errors} error{}, {warnings} warning{}\n",
        if errors == 1 { "" } else { "s" },
        if warnings == 1 { "" } else { "s" }
    ));
    out
}

/// The findings as JSON, for `--json`.
pub fn findings_json(findings: &[Finding]) -> Value {
    Value::Array(
        findings
            .iter()
            .map(|f| {
                serde_json::json!({
                    "tool": f.tool,
                    "path": f.path,
                    "rule": f.rule.name(),
                    "severity": f.severity.to_string(),
                    "issue": f.issue,
                    "fix": f.fix,
                })
            })
            .collect(),
    )
}

/// Reads tools from a saved file: a `tools/list` result (`{"tools": [...]}`), a JSON-RPC
/// response wrapping one, or a bare array of tools.
pub fn parse_tools_file(text: &str) -> Result<Vec<Tool>, String> {
    let value: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let tools = match &value {
        Value::Array(_) => &value,
        Value::Object(map) => map
            .get("tools")
            .or_else(|| map.get("result").and_then(|r| r.get("tools")))
            .ok_or("no `tools` array (expected a tools/list result or an array of tools)")?,
        _ => return Err("expected a tools/list result or an array of tools".into()),
    };
    serde_json::from_value(tools.clone()).map_err(|e| format!("invalid tool list: {e}"))
}

mod meta;
#[cfg(test)]
mod tests;
