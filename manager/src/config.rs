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
//!   `envFile` (string, a dotenv file for the adapter to load), `disabled` / `enabled`
//!   (booleans; `"disabled": true` or `"enabled": false` skips the server without checking the
//!   rest of it). `null` counts as absent; unknown fields are ignored; a field given twice is an
//!   error.
//! - Variables are expanded by [`expand_vars`] in `command`, `args`, `env` values, `cwd`,
//!   `url` and `headers` values (not in keys).
//! - Other shapes (VS Code's `servers`, `~/.claude.json`) and the file name in errors:
//!   [`parse_config_file`] and [`parse_config`]. Entry by entry, so that one broken server
//!   (say, an undefined variable) leaves the others usable: [`parse_config_entries`].
//! - Every error names the server and the field (`server "github": field "args[2]":
//!   undefined variable GITHUB_TOKEN`). Errors never contain the values of `env`, `headers`,
//!   `url` or expanded strings, which often hold credentials; the `Debug` output of
//!   [`StdioConfig`] and [`HttpConfig`] redacts `env` and `headers` values too.

use std::collections::HashSet;
use std::fmt;

use mcp_proto::time::Duration;

mod json;
mod shapes;

use json::{Json, Members};
pub use shapes::{
    ConfigEntry, ConfigShape, EntryStatus, ParsedConfig, parse_config, parse_config_entries,
    parse_config_file, stray_server_list,
};

/// One configured MCP server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// The key under `mcpServers` (or `servers`); unique within a file, never empty.
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
    /// A dotenv file to load (VS Code's `envFile`, after variable expansion). Reading it is the
    /// adapter's job; its variables go under `env`, which wins on a name given in both.
    pub env_file: Option<String>,
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
            env_file: None,
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
            .field("env_file", &self.env_file)
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

/// Why a configuration was rejected, and where: the file, the server and the field, when known.
///
/// Displays as `file "PATH": server "NAME": field "FIELD": KIND`, leaving out the parts that
/// are `None`.
#[derive(Debug, thiserror::Error)]
#[error("{}{kind}", Location(.file, .server, .field))]
pub struct ConfigError {
    /// The file, as the caller named it to [`parse_config_file`] ([`parse_mcp_servers`] leaves
    /// it `None`).
    pub file: Option<String>,
    /// The server's name, when the error is inside one server's entry.
    pub server: Option<String>,
    /// The field, such as `command`, `args[2]` or `env.TOKEN`, when the error is in one field.
    pub field: Option<String>,
    /// What is wrong.
    pub kind: ConfigErrorKind,
}

/// The `file "PATH": server "NAME": field "FIELD": ` prefix of a [`ConfigError`].
struct Location<'a>(&'a Option<String>, &'a Option<String>, &'a Option<String>);

impl fmt::Display for Location<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = self.0 {
            write!(f, "file {file:?}: ")?;
        }
        if let Some(server) = self.1 {
            write!(f, "server {server:?}: ")?;
        }
        if let Some(field) = self.2 {
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
    /// The top-level object has no `mcpServers` key. `typo` is a top-level key that looks
    /// meant as it (`mcpServerz`, `mcp_servers`, VS Code's `servers`), and the key meant.
    #[error(
        r#"missing top-level key "mcpServers" (expected {{"mcpServers": {{"<name>": {{...}}}}}}){}"#,
        typo_text(typo)
    )]
    MissingMcpServers {
        /// The misspelt key and the key it is likely meant as.
        typo: Option<(String, &'static str)>,
    },
    /// A VS Code file (`.vscode/mcp.json`) has no `servers` key. `typo` is a top-level key
    /// that looks meant as it (`Servers`, `mcpServers`), and the key meant.
    #[error(
        r#"missing top-level key "servers" (expected {{"servers": {{"<name>": {{...}}}}}}){}"#,
        typo_text(typo)
    )]
    MissingServers {
        /// The misspelt key and the key it is likely meant as.
        typo: Option<(String, &'static str)>,
    },
    /// [`ConfigShape::Auto`] found neither `mcpServers` nor `servers` at the top level.
    /// `typo` is a top-level key that looks like a misspelling of one (`mcpServerz`,
    /// `mcp_servers`, `Servers`), and the key meant.
    #[error(
        r#"no server list: expected a top-level "mcpServers" object (Claude Desktop, Cursor, Claude Code) or "servers" object (VS Code){}"#,
        typo_text(typo)
    )]
    UnknownShape {
        /// The misspelt key and the key it is likely meant as.
        typo: Option<(String, &'static str)>,
    },
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
    /// Neither `command` nor `url` is given, so the transport is unknown. `typo` is a key
    /// of the entry that looks like a misspelling of one of them (`"comand"`), and which.
    #[error(
        r#"needs "command" (stdio server) or "url" (HTTP server){}"#,
        typo_text(typo)
    )]
    MissingTransport {
        /// The misspelt key and the key it is likely meant as.
        typo: Option<(String, &'static str)>,
    },
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

/// `: unknown key "KEY" (did you mean "MEANT"?)` for a misspelt key, or nothing.
fn typo_text(typo: &Option<(String, &'static str)>) -> String {
    typo.as_ref().map_or(String::new(), |(key, meant)| {
        format!(r#": unknown key {key:?} (did you mean "{meant}"?)"#)
    })
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
    /// A VS Code variable that needs an editor: `${input:...}` (asks the user), `${command:...}`,
    /// `${config:...}`, or `${workspaceFolder}` where the workspace is unknown.
    #[error(
        r#"unsupported variable "${{{name}}}" (interactive or editor-only; put the value in the file or use "${{env:NAME}}")"#
    )]
    Unsupported {
        /// The reference without `${` and `}`, such as `input:api-key`.
        name: String,
    },
}

/// What a variable reference resolves to, for the expansion loop.
enum Lookup {
    Value(Option<String>),
    InvalidName,
    Unsupported,
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
    expand_with(input, &|name| {
        if is_var_name(name) {
            Lookup::Value(vars(name))
        } else {
            Lookup::InvalidName
        }
    })
}

/// [`expand_vars`] for a value typed on a command line (`mcp -H 'Name: ${VAR}'`), where `$$`
/// is the escape of one `$`: `$${NAME}` gives the literal text `${NAME}`. Every other rule is
/// [`expand_vars`]'s (a config file keeps `$$` as written, for the program that reads it).
pub fn expand_vars_escaped(
    input: &str,
    vars: &dyn Fn(&str) -> Option<String>,
) -> Result<String, ExpandError> {
    expand_with_escape(input, "$", &|name| {
        if is_var_name(name) {
            Lookup::Value(vars(name))
        } else {
            Lookup::InvalidName
        }
    })
}

/// The expansion loop of [`expand_vars`], with the name rules left to `lookup`.
fn expand_with(input: &str, lookup: &dyn Fn(&str) -> Lookup) -> Result<String, ExpandError> {
    expand_with_escape(input, "$$", lookup)
}

/// The expansion loop: `$$` is written as `dollars`, and never starts a reference.
fn expand_with_escape(
    input: &str,
    dollars: &str,
    lookup: &dyn Fn(&str) -> Lookup,
) -> Result<String, ExpandError> {
    let mut out = String::with_capacity(input.len());
    let mut rest = input;
    while let Some(i) = rest.find('$') {
        let offset = input.len() - rest.len() + i;
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(tail) = after.strip_prefix('$') {
            out.push_str(dollars);
            rest = tail;
        } else if let Some(body) = after.strip_prefix('{') {
            let end = body.find('}').ok_or(ExpandError::Unterminated { offset })?;
            let (name, default) = match body[..end].split_once(":-") {
                Some((name, default)) => (name, Some(default)),
                None => (&body[..end], None),
            };
            let value = match lookup(name) {
                Lookup::Value(value) => value,
                Lookup::InvalidName => return Err(ExpandError::InvalidName { offset }),
                Lookup::Unsupported => {
                    return Err(ExpandError::Unsupported {
                        name: name.to_owned(),
                    });
                }
            };
            match (value, default) {
                (Some(value), Some(default)) if value.is_empty() => out.push_str(default),
                (Some(value), _) => out.push_str(&value),
                (None, Some(default)) => out.push_str(default),
                (None, None) => {
                    let name = name.strip_prefix("env:").unwrap_or(name);
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
/// use mcp_manager::config::{parse_mcp_servers, TransportConfig};
///
/// let json = r#"{"mcpServers": {"files": {"command": "npx", "args": ["-y", "${PKG}"]}}}"#;
/// let vars = |name: &str| (name == "PKG").then(|| "server-filesystem".to_owned());
/// let servers = parse_mcp_servers(json, &vars)?;
/// assert_eq!(servers[0].name, "files");
/// let TransportConfig::Stdio(stdio) = &servers[0].transport else { unreachable!() };
/// assert_eq!(stdio.args, ["-y", "server-filesystem"]);
/// # Ok::<(), mcp_manager::config::ConfigError>(())
/// ```
pub fn parse_mcp_servers(
    json: &str,
    vars: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<ServerConfig>, ConfigError> {
    parse_config(None, json, vars, &ConfigShape::McpServers).map(|parsed| parsed.servers)
}

/// Which variable syntax a file uses.
#[derive(Debug, Clone, Copy)]
enum Dialect<'a> {
    /// `${NAME}` and `${NAME:-default}` only (`mcpServers` files).
    Plain,
    /// Also VS Code's `${env:NAME}`, `${userHome}` (from `HOME`) and `${workspaceFolder}`
    /// (the given folder, if known); `${input:...}` and other `${kind:...}` are unsupported.
    VsCode { workspace: Option<&'a str> },
}

/// Where errors are attributed (which file and server), plus the variable lookup.
#[derive(Clone, Copy)]
struct Scope<'a> {
    file: Option<&'a str>,
    server: Option<&'a str>,
    vars: &'a dyn Fn(&str) -> Option<String>,
    dialect: Dialect<'a>,
}

impl<'a> Scope<'a> {
    /// The same file and lookup, inside server `server`.
    fn in_server(self, server: &'a str) -> Self {
        Self {
            server: Some(server),
            ..self
        }
    }

    fn err(&self, field: Option<&str>, kind: ConfigErrorKind) -> ConfigError {
        ConfigError {
            file: self.file.map(str::to_owned),
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
        let expanded = match self.dialect {
            Dialect::Plain => expand_vars(s, self.vars),
            Dialect::VsCode { workspace } => {
                expand_with(s, &|name| vscode_lookup(name, workspace, self.vars))
            }
        };
        expanded.map_err(|e| self.err(Some(field), e.into()))
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

        // `disabled: true` (Claude, Cursor) or `enabled: false` (VS Code-style) switch a server
        // off; either is enough.
        for (key, off) in [("disabled", true), ("enabled", false)] {
            match get(key) {
                None => {}
                Some(Json::Bool(b)) if *b == off => return Ok(None),
                Some(Json::Bool(_)) => {}
                Some(other) => return Err(self.wrong_type(Some(key), "a boolean", other)),
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
            None => {
                let typo = transport_typo(fields.0.iter().map(|(key, _)| key.as_str()));
                return Err(self.err(None, ConfigErrorKind::MissingTransport { typo }));
            }
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
        let env_file = get("envFile")
            .map(|v| self.expanded("envFile", v))
            .transpose()?;
        Ok(StdioConfig {
            command,
            args,
            env,
            clear_env: false,
            cwd,
            env_file,
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

/// Resolves one VS Code variable reference (the text between `${` and `}` or `:-`).
fn vscode_lookup(
    name: &str,
    workspace: Option<&str>,
    vars: &dyn Fn(&str) -> Option<String>,
) -> Lookup {
    if let Some(env) = name.strip_prefix("env:") {
        return if is_var_name(env) {
            Lookup::Value(vars(env))
        } else {
            Lookup::InvalidName
        };
    }
    match name {
        "workspaceFolder" => {
            workspace.map_or(Lookup::Unsupported, |w| Lookup::Value(Some(w.to_owned())))
        }
        "userHome" => Lookup::Value(vars("HOME")),
        _ if name.contains(':') => Lookup::Unsupported,
        _ if is_var_name(name) => Lookup::Value(vars(name)),
        _ => Lookup::InvalidName,
    }
}

fn has_http_scheme(url: &str) -> bool {
    let lower = |n: usize| url.get(..n).map(str::to_ascii_lowercase);
    lower(7).as_deref() == Some("http://") || lower(8).as_deref() == Some("https://")
}

#[cfg(test)]
mod shapes_tests;
#[cfg(test)]
mod tests;

/// A key among `keys` that looks like a misspelling of `command` or `url` (`comand`,
/// `commmand`, `ulr`), with the key it is likely meant as: at most two edits from
/// `command`, one from `url` (a swap of two letters counts as one), or the same letters
/// in another case.
fn transport_typo<'a>(keys: impl Iterator<Item = &'a str>) -> Option<(String, &'static str)> {
    let keys: Vec<&str> = keys.collect();
    [("command", 2), ("url", 1)]
        .into_iter()
        .find_map(|(meant, edits)| {
            keys.iter()
                .find(|k| k.eq_ignore_ascii_case(meant) || strsim::osa_distance(k, meant) <= edits)
                .map(|k| ((*k).to_owned(), meant))
        })
}
