//! The file shapes that hold server lists, and the entry point that parses any of them.
//!
//! | shape | where | servers under |
//! | --- | --- | --- |
//! | [`ConfigShape::McpServers`] | `.mcp.json`, `.cursor/mcp.json`, `~/.cursor/mcp.json`, `claude_desktop_config.json` | `mcpServers` (required) |
//! | [`ConfigShape::VsCode`] | `.vscode/mcp.json` | `servers` (required); `inputs` ignored |
//! | [`ConfigShape::ClaudeUser`] | `~/.claude.json` | `mcpServers` (optional: the file holds much else) |
//! | [`ConfigShape::ClaudeLocal`] | `~/.claude.json` | `projects.<project dir>.mcpServers` (optional) |
//!
//! Every shape uses the same server fields (see [the module rules](super)); the VS Code shape also
//! understands VS Code's variables (`${env:NAME}`, `${workspaceFolder}`, `${userHome}`) and
//! reports `${input:...}` (which would prompt the user) as [`ExpandError::Unsupported`](super::ExpandError::Unsupported).

use std::collections::HashSet;
use std::path::Path;

use super::json::{Json, Members};
use super::{ConfigError, ConfigErrorKind, Dialect, Scope, ServerConfig};

/// Which shape a configuration file has, and so where its servers are.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ConfigShape {
    /// Decide from the top-level keys: `mcpServers` means [`McpServers`](Self::McpServers),
    /// otherwise `servers` means [`VsCode`](Self::VsCode) (with the workspace folder taken
    /// from the path when it ends in `.vscode/mcp.json`); neither is
    /// [`ConfigErrorKind::UnknownShape`].
    Auto,
    /// `{"mcpServers": {...}}`; the key is required.
    McpServers,
    /// VS Code's `{"servers": {...}, "inputs": [...]}`; `servers` is required.
    VsCode {
        /// What `${workspaceFolder}` expands to; `None` makes it unsupported.
        workspace: Option<String>,
    },
    /// Claude Code's user file `~/.claude.json`, user scope: the top-level `mcpServers`, which
    /// may be absent (no servers).
    ClaudeUser,
    /// Claude Code's user file `~/.claude.json`, local scope: `projects.<project>.mcpServers`
    /// for one project directory, any part of which may be absent (no servers).
    ClaudeLocal {
        /// The project's absolute path, exactly as Claude Code writes it as a key.
        project: String,
    },
}

/// The servers of one file: the enabled ones in the file's order, and the names of the
/// disabled ones (so that a merge can let them shadow other files, and a CLI can list them).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParsedConfig {
    /// Enabled servers, in the file's order.
    pub servers: Vec<ServerConfig>,
    /// Names of servers with `"disabled": true` or `"enabled": false`, in the file's order.
    pub disabled: Vec<String>,
}

/// One entry of a file's server list, as [`parse_config_entries`] found it.
#[derive(Debug)]
pub struct ConfigEntry {
    /// The server's name (its key in the file).
    pub name: String,
    /// Whether it can be used.
    pub status: EntryStatus,
}

/// What one server entry of a file is.
#[non_exhaustive]
#[derive(Debug)]
pub enum EntryStatus {
    /// A usable server.
    Enabled(ServerConfig),
    /// Switched off (`"disabled": true` or `"enabled": false`).
    Disabled,
    /// The entry is wrong (a missing field, an undefined variable, ...); the error names the
    /// server and the field. The other entries of the file are unaffected.
    Broken(ConfigError),
}

/// Parses a configuration file entry by entry: a problem inside one server's entry (an
/// undefined `${VAR}`, a missing `command`, a bad URL) becomes that entry's
/// [`EntryStatus::Broken`] and leaves the others usable; only problems of the file as a whole
/// (invalid JSON, an unknown shape, a server list that is not an object, an empty or repeated
/// server name) are an `Err`.
///
/// This is what a host that starts several servers, or picks one by name, wants: one entry with
/// a variable undefined in this environment must not make the file unusable.
///
/// ```
/// use mcp_manager::config::{parse_config_entries, ConfigShape, EntryStatus};
///
/// let json = r#"{"mcpServers": {
///     "gh": {"command": "gh-mcp", "env": {"TOKEN": "${GH_TOKEN}"}},
///     "fs": {"command": "fs-mcp"}}}"#;
/// let entries = parse_config_entries(None, json, &|_| None, &ConfigShape::Auto)?;
/// let EntryStatus::Broken(e) = &entries[0].status else { unreachable!() };
/// assert_eq!(e.to_string(), r#"server "gh": field "env.TOKEN": undefined variable GH_TOKEN"#);
/// assert!(matches!(entries[1].status, EntryStatus::Enabled(_)));
/// # Ok::<(), mcp_manager::config::ConfigError>(())
/// ```
pub fn parse_config_entries(
    file: Option<&str>,
    contents: &str,
    vars: &dyn Fn(&str) -> Option<String>,
    shape: &ConfigShape,
) -> Result<Vec<ConfigEntry>, ConfigError> {
    let top = Scope {
        file,
        server: None,
        vars,
        dialect: Dialect::Plain,
    };
    let root: Json =
        serde_json::from_str(contents).map_err(|e| top.err(None, ConfigErrorKind::Json(e)))?;
    let top_level = top.object(None, &root)?;

    let typo = |accepted: &[&'static str]| list_key_typo(top_level, accepted);
    let shape = match shape {
        ConfigShape::Auto if top_level.get("mcpServers").is_some() => &ConfigShape::McpServers,
        ConfigShape::Auto if top_level.get("servers").is_some() => &ConfigShape::VsCode {
            workspace: file.and_then(vscode_workspace),
        },
        ConfigShape::Auto => {
            let typo = typo(&LIST_KEYS);
            return Err(top.err(None, ConfigErrorKind::UnknownShape { typo }));
        }
        other => other,
    };
    match shape {
        ConfigShape::McpServers => {
            let servers = top_level.get("mcpServers").ok_or_else(|| {
                let typo = typo(&["mcpServers"]);
                top.err(None, ConfigErrorKind::MissingMcpServers { typo })
            })?;
            server_list(top, "mcpServers", servers)
        }
        ConfigShape::VsCode { workspace } => {
            let scope = Scope {
                dialect: Dialect::VsCode {
                    workspace: workspace.as_deref(),
                },
                ..top
            };
            let servers = top_level.get("servers").ok_or_else(|| {
                let typo = typo(&["servers"]);
                top.err(None, ConfigErrorKind::MissingServers { typo })
            })?;
            server_list(scope, "servers", servers)
        }
        ConfigShape::ClaudeUser => match top_level.present("mcpServers") {
            Some(servers) => server_list(top, "mcpServers", servers),
            None => Ok(Vec::new()),
        },
        ConfigShape::ClaudeLocal { project } => {
            let Some(projects) = top_level.present("projects") else {
                return Ok(Vec::new());
            };
            let projects = top.object(Some("projects"), projects)?;
            let field = format!("projects.{project}");
            let Some(entry) = projects.present(project) else {
                return Ok(Vec::new());
            };
            let entry: &Members = top.object(Some(&field), entry)?;
            match entry.present("mcpServers") {
                Some(servers) => server_list(top, &format!("{field}.mcpServers"), servers),
                None => Ok(Vec::new()),
            }
        }
        // `Auto` was resolved above; a shape added later must be handled here.
        ConfigShape::Auto => Err(top.err(None, ConfigErrorKind::UnknownShape { typo: None })),
    }
}

/// Parses a configuration file of any supported shape (decided from its contents, see
/// [`ConfigShape::Auto`]) into its enabled servers.
///
/// `path_for_errors` is only used to name the file in errors (and to find the workspace folder
/// of a `.vscode/mcp.json`); nothing is read. Use [`parse_config`] to fix the shape, or to learn
/// which servers are disabled.
///
/// ```
/// use mcp_manager::config::parse_config_file;
///
/// let json = r#"{"servers": {"db": {"type": "stdio", "command": "db-mcp", "args": ["${env:DB}"]}}}"#;
/// let vars = |name: &str| (name == "DB").then(|| "/tmp/db".to_owned());
/// let servers = parse_config_file("/p/.vscode/mcp.json", json, &vars)?;
/// assert_eq!(servers[0].name, "db");
///
/// let err = parse_config_file("/p/.vscode/mcp.json",
///     r#"{"servers": {"db": {"command": "${input:bin}"}}}"#, &vars).unwrap_err();
/// assert!(err.to_string().starts_with(r#"file "/p/.vscode/mcp.json": server "db": field "command": unsupported variable"#));
/// # Ok::<(), mcp_manager::config::ConfigError>(())
/// ```
pub fn parse_config_file(
    path_for_errors: &str,
    contents: &str,
    vars: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<ServerConfig>, ConfigError> {
    parse_config(Some(path_for_errors), contents, vars, &ConfigShape::Auto).map(|p| p.servers)
}

/// Parses `contents` as a file of the given shape. `file` names the file in errors.
///
/// Strict: the first broken entry (in file order) makes the whole file an `Err`. Use
/// [`parse_config_entries`] to keep the other entries usable.
pub fn parse_config(
    file: Option<&str>,
    contents: &str,
    vars: &dyn Fn(&str) -> Option<String>,
    shape: &ConfigShape,
) -> Result<ParsedConfig, ConfigError> {
    let mut out = ParsedConfig::default();
    for entry in parse_config_entries(file, contents, vars, shape)? {
        match entry.status {
            EntryStatus::Enabled(server) => out.servers.push(server),
            EntryStatus::Disabled => out.disabled.push(entry.name),
            EntryStatus::Broken(e) => return Err(e),
        }
    }
    Ok(out)
}

/// The object of servers at `field`, in document order, each entry parsed on its own.
fn server_list(
    scope: Scope<'_>,
    field: &str,
    servers: &Json,
) -> Result<Vec<ConfigEntry>, ConfigError> {
    // Not `object`: a repeated server name gets its own, clearer error below.
    let Json::Object(servers) = servers else {
        return Err(scope.wrong_type(Some(field), "an object", servers));
    };
    let mut out = Vec::with_capacity(servers.0.len());
    let mut seen = HashSet::new();
    for (name, value) in &servers.0 {
        let scope = scope.in_server(name);
        if name.is_empty() {
            return Err(scope.err(None, ConfigErrorKind::EmptyName));
        }
        if !seen.insert(name.as_str()) {
            return Err(scope.err(None, ConfigErrorKind::DuplicateServer));
        }
        let status = match scope.server_config(name, value) {
            Ok(Some(server)) => EntryStatus::Enabled(server),
            Ok(None) => EntryStatus::Disabled,
            Err(e) => EntryStatus::Broken(e),
        };
        out.push(ConfigEntry {
            name: name.clone(),
            status,
        });
    }
    Ok(out)
}

/// The folder that holds `.vscode/mcp.json`, if `path` names such a file.
fn vscode_workspace(path: &str) -> Option<String> {
    let path = Path::new(path);
    let dir = path.parent()?;
    let is_vscode =
        path.file_name()? == "mcp.json" && dir.file_name().is_some_and(|n| n == ".vscode");
    is_vscode
        .then(|| dir.parent())
        .flatten()
        .map(|w| w.to_string_lossy().into_owned())
}

/// The top-level keys that hold a server list, in the order [`ConfigShape::Auto`] tries them.
const LIST_KEYS: [&str; 2] = ["mcpServers", "servers"];

/// A top-level key that looks meant as one of the server list keys `accepted` but is not one,
/// with the key it is likely meant as: a slip of a list key (`mcpServerz`, `mcp_servers`,
/// `MCPServers`, `Servers`), or, when only one key is accepted, the other dialect's key
/// (VS Code's `servers` in an `mcpServers` file, and back). `None` when no key looks so.
fn list_key_typo(top_level: &Members, accepted: &[&'static str]) -> Option<(String, &'static str)> {
    top_level
        .0
        .iter()
        .map(|(key, _)| key.as_str())
        .filter(|key| !accepted.contains(key))
        .find_map(|key| {
            let looks_like_list = LIST_KEYS.into_iter().find(|list| looks_like(key, list))?;
            // With one accepted key, whichever list key this one looks like, it was meant as
            // the accepted one (the other dialect's key in this dialect's file).
            let meant = match accepted {
                [only] => only,
                _ => looks_like_list,
            };
            Some((key.to_owned(), meant))
        })
}

/// Whether `key` looks like a slip of `list_key`: the same letters and digits in any case
/// and with any separators (`mcp_servers`, `MCP-Servers`), or at most two edits away (one
/// for a short key; a swap of two letters counts as one).
fn looks_like(key: &str, list_key: &str) -> bool {
    let letters = |s: &str| -> String {
        s.chars()
            .filter(char::is_ascii_alphanumeric)
            .map(|c| c.to_ascii_lowercase())
            .collect()
    };
    let (key, list_key) = (letters(key), letters(list_key));
    let edits = if list_key.len() > 8 { 2 } else { 1 };
    !key.is_empty() && strsim::osa_distance(&key, &list_key) <= edits
}

/// Why a file of `shape` has no servers although it parsed, when a top-level key looks meant
/// to hold them: `{"mcpServers": {}, "servers": {...}}` (VS Code's key beside an empty
/// `mcpServers`), `{"mcpServers": {}, "mcp_servers": {...}}`. Returns that key and the key
/// the file's servers are read from; `None` when the contents are not an object with a
/// server list, or nothing looks so.
///
/// For a caller that found no servers in a file and wants to say more than "no servers".
///
/// ```
/// use mcp_manager::config::{ConfigShape, stray_server_list};
///
/// let json = r#"{"mcpServers": {}, "servers": {"db": {"command": "db-mcp"}}}"#;
/// assert_eq!(
///     stray_server_list(json, &ConfigShape::Auto),
///     Some(("servers".to_owned(), "mcpServers"))
/// );
/// ```
pub fn stray_server_list(contents: &str, shape: &ConfigShape) -> Option<(String, &'static str)> {
    let Json::Object(top_level) = serde_json::from_str::<Json>(contents).ok()? else {
        return None;
    };
    let read = match shape {
        ConfigShape::Auto => LIST_KEYS
            .into_iter()
            .find(|key| top_level.get(key).is_some())?,
        ConfigShape::McpServers | ConfigShape::ClaudeUser => "mcpServers",
        ConfigShape::VsCode { .. } => "servers",
        // Its list is nested inside a project: a top-level key is not a slip of it.
        ConfigShape::ClaudeLocal { .. } => return None,
    };
    list_key_typo(&top_level, &[read])
}
