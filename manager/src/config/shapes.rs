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

    let shape = match shape {
        ConfigShape::Auto if top_level.get("mcpServers").is_some() => &ConfigShape::McpServers,
        ConfigShape::Auto if top_level.get("servers").is_some() => &ConfigShape::VsCode {
            workspace: file.and_then(vscode_workspace),
        },
        ConfigShape::Auto => return Err(top.err(None, ConfigErrorKind::UnknownShape)),
        other => other,
    };
    match shape {
        ConfigShape::McpServers => {
            let servers = top_level
                .get("mcpServers")
                .ok_or_else(|| top.err(None, ConfigErrorKind::MissingMcpServers))?;
            server_list(top, "mcpServers", servers)
        }
        ConfigShape::VsCode { workspace } => {
            let scope = Scope {
                dialect: Dialect::VsCode {
                    workspace: workspace.as_deref(),
                },
                ..top
            };
            let servers = top_level
                .get("servers")
                .ok_or_else(|| top.err(None, ConfigErrorKind::MissingServers))?;
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
        ConfigShape::Auto => Err(top.err(None, ConfigErrorKind::UnknownShape)),
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
