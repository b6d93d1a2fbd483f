//! Streamable HTTP for revision 2026-07-28: the pure rules.
//!
//! - Standard headers of every POST: `MCP-Protocol-Version` (equal to the envelope's
//!   version), `Mcp-Method`, and `Mcp-Name` (`params.name` for `tools/call` and `prompts/get`,
//!   `params.uri` for `resources/read`).
//! - `Mcp-Param-{Name}` headers from `x-mcp-header` annotations on the top-level properties
//!   of a tool's `inputSchema`: a string as it is, an integer in decimal (safe-integer range),
//!   a boolean as `true`/`false`; omitted when the argument is absent or `null`, or when the
//!   encoded value exceeds [`MAX_HEADER_VALUE`].
//! - The value rule ([`encode_header_value`]): a non-empty value of printable ASCII
//!   (0x20-0x7E) without leading or trailing space and not starting with `=?base64?` goes as
//!   it is; anything else as `=?base64?{standard base64 of the UTF-8 bytes}?=`.
//! - Invalid annotations drop the tool ([`ToolHeaders::observe_list`]): a header name that is
//!   not an HTTP token, a duplicate ignoring case, an annotation on a `number` (or any type
//!   other than string, integer, boolean), or one reached through `items`, `$ref`, a
//!   combinator or a nested object.
//! - The probe rule ([`classify_probe_refusal`]): a 400/404/405 to the first modern POST is
//!   read by its body: a recognised modern JSON-RPC error means modern; an empty or
//!   non-modern body means legacy. Other statuses (401, 403, 5xx) are never era evidence.

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::jsonrpc::{self, ErrorObject};
use crate::session::RawResult;
use crate::types::v2026;

/// `Mcp-Method`.
pub const MCP_METHOD: &str = "Mcp-Method";
/// `Mcp-Name`.
pub const MCP_NAME: &str = "Mcp-Name";
/// The prefix of tool parameter headers.
pub const MCP_PARAM_PREFIX: &str = "Mcp-Param-";
/// The longest header value sent; a longer parameter header is omitted.
pub const MAX_HEADER_VALUE: usize = 8192;
/// How many tools' header bindings are remembered (bounded memory whatever the server lists).
pub const MAX_REMEMBERED_TOOLS: usize = 10_000;

const SENTINEL_PREFIX: &str = "=?base64?";
const SENTINEL_SUFFIX: &str = "?=";
/// Largest integer a JSON number carries exactly through every peer (2^53 - 1).
const MAX_SAFE_INTEGER: i64 = 9_007_199_254_740_991;

/// A header value by the 2026-07-28 rule: as it is when safe, else the base64 sentinel form.
#[must_use]
pub fn encode_header_value(value: &str) -> String {
    let plain = !value.is_empty()
        && value.bytes().all(|b| (0x20..=0x7e).contains(&b))
        && !value.starts_with(' ')
        && !value.ends_with(' ')
        && !value.starts_with(SENTINEL_PREFIX);
    if plain {
        return value.to_owned();
    }
    let mut out = String::with_capacity(SENTINEL_PREFIX.len() + value.len().div_ceil(3) * 4 + 2);
    out.push_str(SENTINEL_PREFIX);
    base64_into(&mut out, value.as_bytes());
    out.push_str(SENTINEL_SUFFIX);
    out
}

/// Standard base64 with padding (RFC 4648 section 4).
fn base64_into(out: &mut String, bytes: &[u8]) {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let sextet = |shift: u32| char::from(ALPHABET[((n >> shift) & 63) as usize]);
        out.push(sextet(18));
        out.push(sextet(12));
        out.push(if chunk.len() > 1 { sextet(6) } else { '=' });
        out.push(if chunk.len() > 2 { sextet(0) } else { '=' });
    }
}

/// Whether `name` is an HTTP field-name token (RFC 9110 `tchar`s).
fn is_token(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// The JSON type an annotated parameter has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ParamType {
    String,
    Integer,
    Boolean,
}

/// One `x-mcp-header` annotation: the header `Mcp-Param-{header}` mirrors argument `property`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeaderBinding {
    /// The name after `Mcp-Param-`.
    pub header: String,
    /// The top-level argument it mirrors.
    pub property: String,
    kind: ParamType,
}

/// Reads the annotations of one tool's `inputSchema`. `Err` says why the tool is invalid.
pub fn tool_bindings(input_schema: &Map<String, Value>) -> Result<Vec<HeaderBinding>, String> {
    let mut bindings: Vec<HeaderBinding> = Vec::new();
    if let Some(Value::Object(props)) = input_schema.get("properties") {
        for (property, schema) in props {
            let Value::Object(schema) = schema else {
                continue;
            };
            for (key, sub) in schema {
                if key != "x-mcp-header" {
                    forbid_nested(sub, &format!("properties.{property}.{key}"))?;
                }
            }
            let Some(annotation) = schema.get("x-mcp-header") else {
                continue;
            };
            let Some(header) = annotation.as_str().filter(|h| is_token(h)) else {
                return Err(format!("x-mcp-header of {property:?} is not a token"));
            };
            let kind = match schema.get("type").and_then(Value::as_str) {
                Some("string") => ParamType::String,
                Some("integer") => ParamType::Integer,
                Some("boolean") => ParamType::Boolean,
                other => {
                    return Err(format!(
                        "x-mcp-header on {property:?} of type {}",
                        other.unwrap_or("(none)")
                    ));
                }
            };
            if bindings
                .iter()
                .any(|b| b.header.eq_ignore_ascii_case(header))
            {
                return Err(format!("duplicate x-mcp-header {header:?}"));
            }
            bindings.push(HeaderBinding {
                header: header.to_owned(),
                property: property.clone(),
                kind,
            });
        }
    }
    for (key, sub) in input_schema {
        if key != "properties" {
            forbid_nested(sub, key)?;
        }
    }
    Ok(bindings)
}

/// An annotation anywhere below a direct property (items, `$ref` targets, combinators,
/// nested objects, definitions) is invalid.
fn forbid_nested(v: &Value, path: &str) -> Result<(), String> {
    // Iterative, so a deeply nested schema from the peer cannot overflow the stack.
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(m) => {
                if m.contains_key("x-mcp-header") {
                    return Err(format!("x-mcp-header below {path}"));
                }
                stack.extend(m.values());
            }
            Value::Array(a) => stack.extend(a.iter()),
            _ => {}
        }
    }
    Ok(())
}

/// The header bindings of the tools the connection saw in `tools/list`, by tool name.
#[derive(Debug, Default)]
pub struct ToolHeaders {
    tools: HashMap<String, Vec<HeaderBinding>>,
}

/// What [`ToolHeaders::observe_list`] did to one `tools/list` result.
#[derive(Debug)]
pub struct ObservedList {
    /// The result to hand to the host: the raw result unchanged when every tool was valid,
    /// else rewritten without the invalid tools.
    pub result: RawResult,
    /// The tools dropped, with why.
    pub dropped: Vec<(String, String)>,
}

impl ToolHeaders {
    /// Remembers the bindings of the tools of one `tools/list` page and removes the tools
    /// with invalid annotations from the result. A result that is not a tool list is returned
    /// unchanged.
    pub fn observe_list(&mut self, raw: RawResult) -> ObservedList {
        let Ok(mut value) = raw.decode::<Map<String, Value>>() else {
            return ObservedList {
                result: raw,
                dropped: Vec::new(),
            };
        };
        let Some(Value::Array(tools)) = value.get_mut("tools") else {
            return ObservedList {
                result: raw,
                dropped: Vec::new(),
            };
        };
        let mut dropped = Vec::new();
        tools.retain(|tool| {
            let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
            let schema = tool.get("inputSchema").and_then(Value::as_object);
            let verdict = schema.map_or(Ok(Vec::new()), tool_bindings);
            match verdict {
                Ok(bindings) => {
                    if self.tools.len() < MAX_REMEMBERED_TOOLS || self.tools.contains_key(name) {
                        self.tools.insert(name.to_owned(), bindings);
                    }
                    true
                }
                Err(why) => {
                    self.tools.remove(name);
                    dropped.push((name.to_owned(), why));
                    false
                }
            }
        });
        if dropped.is_empty() {
            return ObservedList {
                result: raw,
                dropped,
            };
        }
        let result = jsonrpc::to_raw(&value).map_or(raw, RawResult::from);
        ObservedList { result, dropped }
    }

    /// The bindings of a tool, if it was listed.
    #[must_use]
    pub fn bindings(&self, tool: &str) -> Option<&[HeaderBinding]> {
        self.tools.get(tool).map(Vec::as_slice)
    }

    /// Forgets every tool (after `notifications/tools/list_changed`, before a re-fetch).
    pub fn clear(&mut self) {
        self.tools.clear();
    }
}

/// The 2026-07-28 headers of one POST body (one JSON-RPC message): `Mcp-Method`, `Mcp-Name`
/// and the tool's `Mcp-Param-*`, as (name, value) pairs. `MCP-Protocol-Version` is the
/// caller's (it comes from the session). A body that is not a message gives nothing.
#[must_use]
pub fn message_headers(body: &[u8], tools: &ToolHeaders) -> Vec<(String, String)> {
    #[derive(Deserialize)]
    struct Msg<'a> {
        #[serde(borrow, default)]
        method: Option<std::borrow::Cow<'a, str>>,
        #[serde(borrow, default)]
        params: Option<&'a RawValue>,
    }
    #[derive(Deserialize)]
    struct Named {
        #[serde(default)]
        name: Option<String>,
        #[serde(default)]
        uri: Option<String>,
        #[serde(default)]
        arguments: Option<Map<String, Value>>,
    }
    let Ok(msg) = serde_json::from_slice::<Msg<'_>>(body) else {
        return Vec::new();
    };
    let Some(method) = msg.method else {
        return Vec::new();
    };
    let mut out = vec![(MCP_METHOD.to_owned(), encode_header_value(&method))];
    let named = matches!(&*method, "tools/call" | "prompts/get" | "resources/read");
    let Some(params) = msg.params.filter(|_| named) else {
        return out;
    };
    let Ok(p) = serde_json::from_str::<Named>(params.get()) else {
        return out;
    };
    let name = if method == "resources/read" {
        &p.uri
    } else {
        &p.name
    };
    if let Some(name) = name {
        out.push((MCP_NAME.to_owned(), encode_header_value(name)));
    }
    if method == "tools/call"
        && let Some(tool) = &p.name
        && let Some(bindings) = tools.bindings(tool)
    {
        let args = p.arguments.unwrap_or_default();
        for b in bindings {
            let value = match (args.get(&b.property), b.kind) {
                (Some(Value::String(s)), ParamType::String) => encode_header_value(s),
                (Some(Value::Number(n)), ParamType::Integer) => match n.as_i64() {
                    Some(i) if i.abs() <= MAX_SAFE_INTEGER => i.to_string(),
                    _ => continue,
                },
                (Some(Value::Bool(v)), ParamType::Boolean) => v.to_string(),
                // Absent, null, or not the declared type: no header (the server validates).
                _ => continue,
            };
            if value.len() <= MAX_HEADER_VALUE {
                out.push((format!("{MCP_PARAM_PREFIX}{}", b.header), value));
            }
        }
    }
    out
}

/// What a 400/404/405 to the discover probe says about the era.
#[derive(Debug, PartialEq)]
#[non_exhaustive]
pub enum ProbeVerdict {
    /// The body is a recognised modern JSON-RPC error: the server is modern; the session
    /// handles the error (retry at a listed version, or fail).
    Modern(ErrorObject),
    /// Empty or non-modern: fall back to `initialize`.
    Legacy,
}

/// Reads a refused probe's body (see the module rules).
#[must_use]
pub fn classify_probe_refusal(body: &[u8]) -> ProbeVerdict {
    match jsonrpc::decode(body) {
        Ok(jsonrpc::DecodedRef::Single(jsonrpc::MessageRef::Error { error, .. }))
            if v2026::is_modern_error_code(error.code) =>
        {
            ProbeVerdict::Modern(error)
        }
        _ => ProbeVerdict::Legacy,
    }
}

mod hooks;

pub(crate) use hooks::ModernRequests;
#[cfg(test)]
mod tests;
