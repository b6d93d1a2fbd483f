//! Server configuration parsing: the `mcpServers` JSON shape.
//!
//! Claude Desktop (`claude_desktop_config.json`), Cursor (`mcp.json`) and Claude Code
//! (`.mcp.json`) all describe servers as
//!
//! ```json
//! {"mcpServers": {
//!     "files":  {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]},
//!     "github": {"type": "http", "url": "https://api.example.com/mcp",
//!                "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"}}
//! }}
//! ```
//!
//! [`parse_mcp_servers`] turns such a document into [`ServerConfig`]s, in the file's order.
//! It is pure: environment variables come in through the `vars` callback.
//!
//! # Rules
//!
//! - The top level must be an object with an `mcpServers` object; other top-level keys are
//!   ignored. Duplicate server names are an error.
//! - `type`: missing or `"stdio"` → stdio (needs `command`); missing with `url` (and no
//!   `command`) → HTTP, [`HttpTransport::Auto`]; `"http"`, `"streamable-http"` or
//!   `"streamableHttp"` → [`HttpTransport::Streamable`]; `"sse"` → [`HttpTransport::Legacy`].
//! - Fields: `command` (string), `args` (array of strings), `env` (object of strings), `cwd`
//!   (string), `url` (`http://` or `https://`), `headers` (object of strings), `timeout`
//!   (per-request timeout, integer milliseconds), `startupTimeout` (integer milliseconds),
//!   `disabled` (boolean; `true` skips the server without checking the rest of it). `null`
//!   counts as absent; unknown fields are ignored; a field given twice is an error.
//! - Variables are expanded by [`expand_vars`] in `command`, `args`, `env` values, `cwd`,
//!   `url` and `headers` values (not in keys).
//! - Every error names the server and the field (`server "github": field "args[2]":
//!   undefined variable GITHUB_TOKEN`). Errors never contain the values of `env`, `headers`,
//!   `url` or expanded strings, which often hold credentials; the `Debug` output of
//!   [`StdioConfig`] and [`HttpConfig`] redacts `env` and `headers` values too.

use std::collections::HashSet;
use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::time::Duration;

/// One configured MCP server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// The key under `mcpServers`; unique within a file, never empty.
    pub name: String,
    /// How to reach the server.
    pub transport: TransportConfig,
    /// Timeouts configured for this server.
    pub timeouts: TimeoutConfig,
}

/// How to reach a server.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransportConfig {
    /// Spawn a child process and speak over its stdin / stdout.
    Stdio(StdioConfig),
    /// Connect over HTTP.
    Http(HttpConfig),
}

/// A server started as a child process.
#[derive(Clone, PartialEq, Eq)]
pub struct StdioConfig {
    /// The program to run (looked up in `PATH` by the adapter if it has no slash).
    pub command: String,
    /// The program's arguments, without the program name.
    pub args: Vec<String>,
    /// Variables set for the child, in the file's order. The adapter merges them over the
    /// parent's environment (or over an empty one when `clear_env` is set).
    pub env: Vec<(String, String)>,
    /// Start the child with only `env`, not the parent's environment. No `mcpServers` key
    /// sets this; a host that wants it sets it itself.
    pub clear_env: bool,
    /// The child's working directory; `None` inherits the parent's.
    pub cwd: Option<String>,
}

impl StdioConfig {
    /// A stdio server that runs `command` without arguments, in the parent's environment.
    pub fn new(command: impl Into<String>) -> Self {
        Self {
            command: command.into(),
            args: Vec::new(),
            env: Vec::new(),
            clear_env: false,
            cwd: None,
        }
    }
}

impl fmt::Debug for StdioConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StdioConfig")
            .field("command", &self.command)
            .field("args", &self.args)
            .field("env", &Redacted(&self.env))
            .field("clear_env", &self.clear_env)
            .field("cwd", &self.cwd)
            .finish()
    }
}

/// A server reached over HTTP.
#[derive(Clone, PartialEq, Eq)]
pub struct HttpConfig {
    /// The MCP endpoint (Streamable HTTP) or the SSE endpoint (legacy transport).
    pub url: String,
    /// Extra request headers (for example `Authorization`), in the file's order.
    pub headers: Vec<(String, String)>,
    /// Which HTTP transport to speak.
    pub transport: HttpTransport,
}

impl HttpConfig {
    /// An HTTP server at `url`, without extra headers, with [`HttpTransport::Auto`].
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            headers: Vec::new(),
            transport: HttpTransport::Auto,
        }
    }
}

impl fmt::Debug for HttpConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpConfig")
            .field("url", &self.url)
            .field("headers", &Redacted(&self.headers))
            .field("transport", &self.transport)
            .finish()
    }
}

/// Shows the keys of a list of pairs and hides the values.
struct Redacted<'a>(&'a [(String, String)]);

impl fmt::Debug for Redacted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.0.iter().map(|(k, _)| (k, format_args!("<redacted>"))))
            .finish()
    }
}

/// Which HTTP transport a server speaks.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HttpTransport {
    /// Try Streamable HTTP, falling back to the legacy HTTP+SSE transport (no `type` given).
    Auto,
    /// Streamable HTTP only (`"http"`, `"streamable-http"`, `"streamableHttp"`).
    Streamable,
    /// The legacy HTTP+SSE transport of 2024-11-05 only (`"sse"`).
    Legacy,
}

/// Per-server timeouts; `None` means the session's default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TimeoutConfig {
    /// How long connecting and the initialize handshake may take (`startupTimeout`).
    pub startup: Option<Duration>,
    /// How long each request may take (`timeout`).
    pub request: Option<Duration>,
}

/// Why a configuration was rejected, and where: the server and the field, when known.
///
/// Displays as `server "NAME": field "FIELD": KIND`, leaving out the parts that are `None`.
#[derive(Debug, thiserror::Error)]
#[error("{}{kind}", Location(.server, .field))]
pub struct ConfigError {
    /// The server's name, when the error is inside one server's entry.
    pub server: Option<String>,
    /// The field, such as `command`, `args[2]` or `env.TOKEN`, when the error is in one field.
    pub field: Option<String>,
    /// What is wrong.
    pub kind: ConfigErrorKind,
}

/// The `server "NAME": field "FIELD": ` prefix of a [`ConfigError`].
struct Location<'a>(&'a Option<String>, &'a Option<String>);

impl fmt::Display for Location<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(server) = self.0 {
            write!(f, "server {server:?}: ")?;
        }
        if let Some(field) = self.1 {
            write!(f, "field {field:?}: ")?;
        }
        Ok(())
    }
}

/// What is wrong with a configuration. Never contains secret values.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum ConfigErrorKind {
    /// The text is not JSON (the message gives line and column).
    #[error("invalid JSON: {0}")]
    Json(serde_json::Error),
    /// The top-level object has no `mcpServers` key.
    #[error(
        r#"missing top-level key "mcpServers" (expected {{"mcpServers": {{"<name>": {{...}}}}}})"#
    )]
    MissingMcpServers,
    /// A value has the wrong JSON type.
    #[error("expected {expected}, found {found}")]
    WrongType {
        /// What the field must be, such as `"a string"`.
        expected: &'static str,
        /// What it is, such as `"a number"`.
        found: &'static str,
    },
    /// The same key appears twice in one object.
    #[error("duplicate key")]
    DuplicateKey,
    /// Two servers have the same name.
    #[error("server name used more than once")]
    DuplicateServer,
    /// A server name is the empty string.
    #[error("server name must not be empty")]
    EmptyName,
    /// A required field is missing.
    #[error("missing")]
    MissingField,
    /// Neither `command` nor `url` is given, so the transport is unknown.
    #[error(r#"needs "command" (stdio server) or "url" (HTTP server)"#)]
    MissingTransport,
    /// `type` names no transport this crate knows.
    #[error("unknown server type {0:?}")]
    UnknownType(String),
    /// `url` is not an `http://` or `https://` URL (the URL itself is not shown).
    #[error("expected an http:// or https:// URL")]
    InvalidUrl,
    /// Variable expansion failed.
    #[error(transparent)]
    Expand(#[from] ExpandError),
}

/// Why [`expand_vars`] failed. Never contains the input text, only variable names and offsets.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExpandError {
    /// `${NAME}` names a variable that is not defined, and no default is given.
    #[error("undefined variable {name}")]
    Undefined {
        /// The variable's name.
        name: String,
    },
    /// A `${` has no closing `}`.
    #[error(r#"unterminated "${{" at byte {offset}"#)]
    Unterminated {
        /// The byte offset of the `$`.
        offset: usize,
    },
    /// The text between `${` and `}` (or `:-`) is not a variable name.
    #[error(
        r#"invalid variable name in "${{...}}" at byte {offset} (expected [A-Za-z_][A-Za-z0-9_]*)"#
    )]
    InvalidName {
        /// The byte offset of the `$`.
        offset: usize,
    },
}

/// Expands `${NAME}` and `${NAME:-default}` in `input`, looking names up with `vars`.
///
/// The rule, in one pass from left to right:
/// - `${NAME}` is replaced by the value of `NAME`; if `vars` returns `None`, that is
///   [`ExpandError::Undefined`]. `NAME` matches `[A-Za-z_][A-Za-z0-9_]*`.
/// - `${NAME:-default}` is replaced by the value of `NAME` if it is defined and not empty,
///   otherwise by `default` (shell semantics). `default` is literal text and ends at the first
///   `}`, so it cannot contain one.
/// - `$$` is copied as `$$` and never starts a reference, so `$${NAME}` stays as written. Any
///   other `$` not followed by `{` (such as `$NAME`) is copied as is.
/// - Substituted values are not scanned again.
pub fn expand_vars(
    input: &str,
    vars: &dyn Fn(&str) -> Option<String>,
) -> Result<String, ExpandError> {
    let mut out = String::with_capacity(input.len());
    let mut rest = input;
    while let Some(i) = rest.find('$') {
        let offset = input.len() - rest.len() + i;
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(tail) = after.strip_prefix('$') {
            out.push_str("$$");
            rest = tail;
        } else if let Some(body) = after.strip_prefix('{') {
            let end = body.find('}').ok_or(ExpandError::Unterminated { offset })?;
            let (name, default) = match body[..end].split_once(":-") {
                Some((name, default)) => (name, Some(default)),
                None => (&body[..end], None),
            };
            if !is_var_name(name) {
                return Err(ExpandError::InvalidName { offset });
            }
            match (vars(name), default) {
                (Some(value), Some(default)) if value.is_empty() => out.push_str(default),
                (Some(value), _) => out.push_str(&value),
                (None, Some(default)) => out.push_str(default),
                (None, None) => {
                    return Err(ExpandError::Undefined {
                        name: name.to_owned(),
                    });
                }
            }
            rest = &body[end + 1..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    Ok(out)
}

fn is_var_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Parses an `mcpServers` document into the enabled servers, in the file's order.
///
/// `vars` resolves `${NAME}` references (usually `|name| std::env::var(name).ok()` in the
/// adapter); see [`expand_vars`] and the [module rules](self). Servers with
/// `"disabled": true` are left out.
///
/// ```
/// use mcp_proto::manager::config::{parse_mcp_servers, TransportConfig};
///
/// let json = r#"{"mcpServers": {"files": {"command": "npx", "args": ["-y", "${PKG}"]}}}"#;
/// let vars = |name: &str| (name == "PKG").then(|| "server-filesystem".to_owned());
/// let servers = parse_mcp_servers(json, &vars)?;
/// assert_eq!(servers[0].name, "files");
/// let TransportConfig::Stdio(stdio) = &servers[0].transport else { unreachable!() };
/// assert_eq!(stdio.args, ["-y", "server-filesystem"]);
/// # Ok::<(), mcp_proto::manager::config::ConfigError>(())
/// ```
pub fn parse_mcp_servers(
    json: &str,
    vars: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<ServerConfig>, ConfigError> {
    let root: Json = serde_json::from_str(json).map_err(|e| ConfigError {
        server: None,
        field: None,
        kind: ConfigErrorKind::Json(e),
    })?;
    let top = Scope { server: None, vars };
    let top_level = top.object(None, &root)?;
    let servers = top_level
        .get("mcpServers")
        .ok_or_else(|| top.err(None, ConfigErrorKind::MissingMcpServers))?;
    // Not `object`: a repeated server name gets its own, clearer error below.
    let Json::Object(servers) = servers else {
        return Err(top.wrong_type(Some("mcpServers"), "an object", servers));
    };

    let mut out = Vec::with_capacity(servers.0.len());
    let mut seen = HashSet::new();
    for (name, value) in &servers.0 {
        let scope = Scope {
            server: Some(name),
            vars,
        };
        if name.is_empty() {
            return Err(scope.err(None, ConfigErrorKind::EmptyName));
        }
        if !seen.insert(name.as_str()) {
            return Err(scope.err(None, ConfigErrorKind::DuplicateServer));
        }
        if let Some(server) = scope.server_config(name, value)? {
            out.push(server);
        }
    }
    Ok(out)
}

/// A JSON value that keeps object members in document order (serde_json's `Map` sorts
/// them unless `preserve_order` is enabled, which would affect the whole build).
#[derive(Debug)]
enum Json {
    Null,
    Bool(bool),
    /// A non-negative integer that fits `u64`.
    UInt(u64),
    /// Any other number.
    Number,
    String(String),
    Array(Vec<Json>),
    Object(Members),
}

/// Object members in document order, duplicates kept so they can be reported.
#[derive(Debug)]
struct Members(Vec<(String, Json)>);

impl Members {
    /// The first member named `key`; [`Scope::object`] has already rejected duplicates.
    fn get(&self, key: &str) -> Option<&Json> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Like [`get`](Self::get), but `null` counts as absent (for every server field).
    fn present(&self, key: &str) -> Option<&Json> {
        self.get(key).filter(|v| !matches!(v, Json::Null))
    }
}

impl Json {
    fn type_name(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "a boolean",
            Json::UInt(_) | Json::Number => "a number",
            Json::String(_) => "a string",
            Json::Array(_) => "an array",
            Json::Object(_) => "an object",
        }
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Json, E> {
        Ok(Json::Bool(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Json, E> {
        Ok(Json::UInt(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Json, E> {
        Ok(u64::try_from(v).map_or(Json::Number, Json::UInt))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Json, E> {
        Ok(Json::Number)
    }
    fn visit_str<E>(self, v: &str) -> Result<Json, E> {
        Ok(Json::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Json, E> {
        Ok(Json::String(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut members = Vec::new();
        while let Some(member) = map.next_entry::<String, Json>()? {
            members.push(member);
        }
        Ok(Json::Object(Members(members)))
    }
}

/// Where errors are attributed (which server), plus the variable lookup.
struct Scope<'a> {
    server: Option<&'a str>,
    vars: &'a dyn Fn(&str) -> Option<String>,
}

impl Scope<'_> {
    fn err(&self, field: Option<&str>, kind: ConfigErrorKind) -> ConfigError {
        ConfigError {
            server: self.server.map(str::to_owned),
            field: field.map(str::to_owned),
            kind,
        }
    }

    fn wrong_type(&self, field: Option<&str>, expected: &'static str, found: &Json) -> ConfigError {
        let found = found.type_name();
        self.err(field, ConfigErrorKind::WrongType { expected, found })
    }

    /// `value` as an object whose keys are unique.
    fn object<'j>(&self, field: Option<&str>, value: &'j Json) -> Result<&'j Members, ConfigError> {
        let Json::Object(members) = value else {
            return Err(self.wrong_type(field, "an object", value));
        };
        let mut seen = HashSet::new();
        for (key, _) in &members.0 {
            if !seen.insert(key.as_str()) {
                let path = match field {
                    Some(field) => format!("{field}.{key}"),
                    None => key.clone(),
                };
                return Err(self.err(Some(&path), ConfigErrorKind::DuplicateKey));
            }
        }
        Ok(members)
    }

    fn string<'j>(&self, field: &str, value: &'j Json) -> Result<&'j str, ConfigError> {
        match value {
            Json::String(s) => Ok(s),
            other => Err(self.wrong_type(Some(field), "a string", other)),
        }
    }

    fn expanded(&self, field: &str, value: &Json) -> Result<String, ConfigError> {
        let s = self.string(field, value)?;
        expand_vars(s, self.vars).map_err(|e| self.err(Some(field), e.into()))
    }

    fn string_map(&self, field: &str, value: &Json) -> Result<Vec<(String, String)>, ConfigError> {
        let members = self.object(Some(field), value)?;
        members
            .0
            .iter()
            .map(|(key, v)| Ok((key.clone(), self.expanded(&format!("{field}.{key}"), v)?)))
            .collect()
    }

    fn millis(&self, field: &str, value: &Json) -> Result<Duration, ConfigError> {
        match value {
            Json::UInt(ms) => Ok(Duration::from_millis(*ms)),
            other => {
                Err(self.wrong_type(Some(field), "a non-negative integer (milliseconds)", other))
            }
        }
    }

    /// One entry of `mcpServers`; `None` if it is disabled.
    fn server_config(&self, name: &str, value: &Json) -> Result<Option<ServerConfig>, ConfigError> {
        let fields = self.object(None, value)?;
        let get = |key| fields.present(key);

        if let Some(disabled) = get("disabled") {
            match disabled {
                Json::Bool(true) => return Ok(None),
                Json::Bool(false) => {}
                other => return Err(self.wrong_type(Some("disabled"), "a boolean", other)),
            }
        }

        let kind = match get("type") {
            None => None,
            Some(t) => Some(self.string("type", t)?),
        };
        let http = match kind {
            Some("stdio") => None,
            None if get("command").is_some() => None,
            None if get("url").is_some() => Some(HttpTransport::Auto),
            None => return Err(self.err(None, ConfigErrorKind::MissingTransport)),
            Some("http" | "streamable-http" | "streamableHttp") => Some(HttpTransport::Streamable),
            Some("sse") => Some(HttpTransport::Legacy),
            Some(other) => {
                return Err(self.err(Some("type"), ConfigErrorKind::UnknownType(other.to_owned())));
            }
        };

        let transport = match http {
            None => TransportConfig::Stdio(self.stdio(fields)?),
            Some(transport) => TransportConfig::Http(self.http(fields, transport)?),
        };
        let timeouts = TimeoutConfig {
            startup: get("startupTimeout")
                .map(|v| self.millis("startupTimeout", v))
                .transpose()?,
            request: get("timeout")
                .map(|v| self.millis("timeout", v))
                .transpose()?,
        };
        Ok(Some(ServerConfig {
            name: name.to_owned(),
            transport,
            timeouts,
        }))
    }

    fn stdio(&self, fields: &Members) -> Result<StdioConfig, ConfigError> {
        let get = |key| fields.present(key);
        let command = get("command")
            .ok_or_else(|| self.err(Some("command"), ConfigErrorKind::MissingField))?;
        let command = self.expanded("command", command)?;
        let args = match get("args") {
            None => Vec::new(),
            Some(Json::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, item)| self.expanded(&format!("args[{i}]"), item))
                .collect::<Result<_, _>>()?,
            Some(other) => return Err(self.wrong_type(Some("args"), "an array of strings", other)),
        };
        let env = get("env")
            .map(|v| self.string_map("env", v))
            .transpose()?
            .unwrap_or_default();
        let cwd = get("cwd").map(|v| self.expanded("cwd", v)).transpose()?;
        Ok(StdioConfig {
            command,
            args,
            env,
            clear_env: false,
            cwd,
        })
    }

    fn http(&self, fields: &Members, transport: HttpTransport) -> Result<HttpConfig, ConfigError> {
        let get = |key| fields.present(key);
        let url = get("url").ok_or_else(|| self.err(Some("url"), ConfigErrorKind::MissingField))?;
        let url = self.expanded("url", url)?;
        if !has_http_scheme(&url) {
            return Err(self.err(Some("url"), ConfigErrorKind::InvalidUrl));
        }
        let headers = get("headers")
            .map(|v| self.string_map("headers", v))
            .transpose()?
            .unwrap_or_default();
        Ok(HttpConfig {
            url,
            headers,
            transport,
        })
    }
}

fn has_http_scheme(url: &str) -> bool {
    let lower = |n: usize| url.get(..n).map(str::to_ascii_lowercase);
    lower(7).as_deref() == Some("http://") || lower(8).as_deref() == Some("https://")
}

#[cfg(test)]
mod tests;
