//! Checking a tool result's `structuredContent` against the tool's `outputSchema`.
//!
//! The spec asks a client to validate structured results against the schema a tool declared.
//! The schemas come from the tools a client listed: [`Client::list_tools`] compiles each
//! `outputSchema` once and keeps them for the connection, until the next listing replaces
//! them or the server says `notifications/tools/list_changed` (which drops them: a changed
//! tool's old schema would reject its new results). A tool the client never listed, or whose
//! schema does not compile, is not checked.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use mcp_proto::types::{CallToolResult, Tool};
use serde_json::Value;

use super::Client;
use crate::error::Error;
use crate::runtime::Runtime;

/// How many violations an [`Error::OutputSchema`] lists; the rest are only counted.
pub const MAX_VIOLATIONS: usize = 5;

/// How long one violation's message may be, in bytes: the message quotes the offending value,
/// which may be a large object.
const MAX_MESSAGE_LEN: usize = 300;

/// One way a tool's `structuredContent` fails its `outputSchema`, in
/// [`Error::OutputSchema`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SchemaViolation {
    /// Where in `structuredContent`, as a JSON pointer (RFC 6901): `""` is the whole value,
    /// `/items/0/price` a nested one.
    pub pointer: String,
    /// What is wrong there, as the validator words it (shortened when it quotes a long
    /// value).
    pub message: String,
}

impl fmt::Display for SchemaViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.pointer.is_empty() {
            write!(f, "at the root: {}", self.message)
        } else {
            write!(f, "at {}: {}", self.pointer, self.message)
        }
    }
}

/// The compiled output schemas of the tools of one listing, by tool name.
pub(crate) struct OutputSchemas {
    by_tool: HashMap<String, jsonschema::Validator>,
}

impl OutputSchemas {
    /// Compiles the `outputSchema` of each tool that has one. A schema that does not compile
    /// (invalid, or an external `$ref`: nothing is fetched) is reported as a warning and its
    /// tool left unchecked: the server's mistake must not make the tool unusable.
    pub(crate) fn compile(server: &str, tools: &[Tool]) -> Self {
        let mut by_tool = HashMap::new();
        for tool in tools {
            let Some(schema) = &tool.output_schema else {
                continue;
            };
            // The schema is a JSON object; the validator takes a `Value`.
            let schema = Value::Object(schema.clone());
            match jsonschema::validator_for(&schema) {
                Ok(validator) => {
                    by_tool.insert(tool.name.clone(), validator);
                }
                Err(e) => tracing::warn!(
                    server,
                    tool = tool.name,
                    error = %e,
                    "the tool's outputSchema does not compile: its results are not checked"
                ),
            }
        }
        OutputSchemas { by_tool }
    }

    /// Checks `result` of `tool`: `Ok` when the tool has no compiled schema or reported its
    /// own failure (`isError`), or when `structuredContent` is present and valid. Otherwise
    /// the first [`MAX_VIOLATIONS`] violations and how many there were in all.
    pub(crate) fn check(
        &self,
        tool: &str,
        result: &CallToolResult,
    ) -> Result<(), (Vec<SchemaViolation>, usize)> {
        let Some(validator) = self.by_tool.get(tool) else {
            return Ok(());
        };
        if result.is_error == Some(true) {
            return Ok(());
        }
        let Some(structured) = &result.structured_content else {
            let missing = SchemaViolation {
                pointer: String::new(),
                message: "structuredContent is missing, but the tool declares an outputSchema"
                    .into(),
            };
            return Err((vec![missing], 1));
        };
        let mut violations = Vec::new();
        let mut total = 0;
        for e in validator.iter_errors(structured) {
            total += 1;
            if violations.len() < MAX_VIOLATIONS {
                violations.push(SchemaViolation {
                    pointer: e.instance_path().to_string(),
                    message: shorten(e.to_string()),
                });
            }
        }
        if total == 0 {
            Ok(())
        } else {
            Err((violations, total))
        }
    }
}

/// `message` cut to [`MAX_MESSAGE_LEN`] bytes at a character boundary, marked with `…`.
fn shorten(mut message: String) -> String {
    if message.len() > MAX_MESSAGE_LEN {
        let mut end = MAX_MESSAGE_LEN;
        while !message.is_char_boundary(end) {
            end -= 1;
        }
        message.truncate(end);
        message.push('…');
    }
    message
}

/// A connection's output schemas, shared by its handles and its driver (which drops them on
/// `notifications/tools/list_changed`).
#[derive(Default)]
pub(crate) struct SchemaCache {
    state: Mutex<CacheState>,
}

#[derive(Default)]
struct CacheState {
    /// Counts the `tools/list_changed` notifications: a listing that began before the last
    /// one is stale and is not stored.
    generation: u64,
    schemas: Option<Arc<OutputSchemas>>,
}

impl SchemaCache {
    /// Locks the state; it is plain data, consistent after any panic, so poisoning is ignored.
    fn lock(&self) -> MutexGuard<'_, CacheState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The generation to hand to [`store`](Self::store) after a listing that starts now.
    pub(crate) fn generation(&self) -> u64 {
        self.lock().generation
    }

    /// Keeps `schemas`, replacing the previous listing's, unless the tools changed since the
    /// listing began (`listed_at`).
    pub(crate) fn store(&self, listed_at: u64, schemas: OutputSchemas) {
        let mut state = self.lock();
        if state.generation == listed_at {
            state.schemas = Some(Arc::new(schemas));
        }
    }

    /// The server's tools changed: the schemas are dropped until the next listing.
    pub(crate) fn tools_changed(&self) {
        let mut state = self.lock();
        state.generation = state.generation.wrapping_add(1);
        state.schemas = None;
    }

    /// The schemas of the last listing, if still current.
    fn current(&self) -> Option<Arc<OutputSchemas>> {
        self.lock().schemas.clone()
    }
}

impl<R: Runtime> Client<R> {
    /// Compiles and keeps the output schemas of a complete listing begun at `listed_at`
    /// (unless validation is off for this client).
    pub(crate) fn keep_output_schemas(&self, listed_at: u64, tools: &[Tool]) {
        if self.inner.validate_output {
            let schemas = OutputSchemas::compile(&self.inner.shared.name, tools);
            self.inner.shared.output_schemas.store(listed_at, schemas);
        }
    }

    /// `result` of `tool`, or [`Error::OutputSchema`] when it fails the tool's output schema
    /// (see [`OutputSchemas::check`]). `wanted` is the call's own opt-in; the client's is
    /// checked here.
    pub(crate) fn check_output(
        &self,
        tool: &str,
        result: CallToolResult,
        wanted: bool,
    ) -> Result<CallToolResult, Error> {
        if !wanted || !self.inner.validate_output {
            return Ok(result);
        }
        let Some(schemas) = self.inner.shared.output_schemas.current() else {
            return Ok(result);
        };
        match schemas.check(tool, &result) {
            Ok(()) => Ok(result),
            Err((violations, total)) => {
                tracing::debug!(
                    server = &*self.inner.shared.name,
                    tool,
                    total,
                    "structuredContent does not match the tool's outputSchema"
                );
                Err(Error::OutputSchema {
                    server: self.inner.shared.name.clone(),
                    tool: tool.to_owned(),
                    violations,
                    total,
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, schema: Value) -> Tool {
        serde_json::from_value(json!({
            "name": name,
            "inputSchema": {"type": "object"},
            "outputSchema": schema,
        }))
        .expect("a valid tool")
    }

    fn result(v: Value) -> CallToolResult {
        serde_json::from_value(v).expect("a valid result")
    }

    fn sum_schema() -> Value {
        json!({"type": "object", "properties": {"sum": {"type": "number"}}, "required": ["sum"]})
    }

    #[test]
    fn names_the_pointer_of_each_violation_and_counts_them_all() {
        let schemas = OutputSchemas::compile(
            "s",
            &[tool(
                "t",
                json!({
                    "type": "object",
                    "properties": {"items": {"type": "array", "items": {"type": "integer"}}},
                }),
            )],
        );
        let items: Vec<Value> = (0..8).map(|i| json!(format!("x{i}"))).collect();
        let r = result(json!({"content": [], "structuredContent": {"items": items}}));
        let (violations, total) = schemas
            .check("t", &r)
            .expect_err("strings are not integers");
        assert_eq!(total, 8);
        assert_eq!(violations.len(), MAX_VIOLATIONS);
        assert_eq!(violations[0].pointer, "/items/0");
        assert!(
            violations[0].message.contains("integer"),
            "{:?}",
            violations[0]
        );
        assert_eq!(
            violations[0].to_string(),
            format!("at /items/0: {}", violations[0].message)
        );
    }

    #[test]
    fn an_error_result_and_an_unknown_tool_are_not_checked() {
        let schemas = OutputSchemas::compile("s", &[tool("t", sum_schema())]);
        let failed = result(json!({"content": [], "isError": true}));
        assert!(schemas.check("t", &failed).is_ok());
        let wrong = result(json!({"content": [], "structuredContent": {"sum": "x"}}));
        assert!(schemas.check("other", &wrong).is_ok());
        assert!(schemas.check("t", &wrong).is_err());
    }

    #[test]
    fn a_missing_structured_content_is_a_violation_at_the_root() {
        let schemas = OutputSchemas::compile("s", &[tool("t", sum_schema())]);
        let (violations, total) = schemas
            .check("t", &result(json!({"content": []})))
            .expect_err("missing");
        assert_eq!(total, 1);
        assert_eq!(violations[0].pointer, "");
        assert!(
            violations[0]
                .to_string()
                .starts_with("at the root: structuredContent is missing")
        );
    }

    #[test]
    fn a_schema_that_does_not_compile_leaves_its_tool_unchecked() {
        let schemas = OutputSchemas::compile(
            "s",
            &[
                tool("bad", json!({"type": 12})),
                tool("remote", json!({"$ref": "https://example.com/schema.json"})),
            ],
        );
        let r = result(json!({"content": [], "structuredContent": {"anything": true}}));
        assert!(schemas.check("bad", &r).is_ok());
        assert!(schemas.check("remote", &r).is_ok());
        assert!(schemas.by_tool.is_empty());
    }

    #[test]
    fn a_long_message_is_shortened_at_a_character_boundary() {
        let long = "é".repeat(MAX_MESSAGE_LEN);
        let short = shorten(long);
        assert!(short.len() <= MAX_MESSAGE_LEN + '…'.len_utf8());
        assert!(short.ends_with('…'));
    }

    #[test]
    fn a_listing_older_than_the_last_change_is_not_kept() {
        let cache = SchemaCache::default();
        let before = cache.generation();
        cache.tools_changed();
        cache.store(
            before,
            OutputSchemas::compile("s", &[tool("t", sum_schema())]),
        );
        assert!(cache.current().is_none());
        cache.store(cache.generation(), OutputSchemas::compile("s", &[]));
        assert!(cache.current().is_some());
        cache.tools_changed();
        assert!(cache.current().is_none());
    }
}
