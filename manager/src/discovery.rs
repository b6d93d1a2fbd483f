//! Which configuration files apply to a project, in which order, and how their servers merge.
//!
//! Discovery is pure: the caller passes the project directory, the home directory, the OS and an
//! `exists` check; [`discover`] returns the candidate files, highest precedence first. The
//! adapter reads them, parses each with [`parse_config`](super::config::parse_config) and the
//! candidate's [`shape`](Candidate::shape), and hands the results to [`merge`].
//!
//! # Precedence (first wins)
//!
//! Local over project over user, as in Claude Code; within a scope, the order below.
//!
//! 1. Local: `~/.claude.json`, `projects.<project dir>.mcpServers` (Claude Code's private
//!    per-project servers).
//! 2. Project: `<project>/.mcp.json` (Claude Code), then `<project>/.cursor/mcp.json` (Cursor),
//!    then `<project>/.vscode/mcp.json` (VS Code, `servers` shape).
//! 3. User: `~/.claude.json` top-level `mcpServers` (Claude Code), then `~/.cursor/mcp.json`
//!    (Cursor), then Claude Desktop's `claude_desktop_config.json`
//!    (`~/.config/Claude/` on Linux, `~/Library/Application Support/Claude/` on macOS).
//!
//! A server name defined in several files is taken from the first; the others are reported as
//! shadowed. A server disabled in a file shadows the same name in later files too, so a project
//! can switch off a user-level server.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::config::{ConfigShape, ParsedConfig, ServerConfig};

/// The operating system whose conventional paths to use.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Os {
    /// Linux and other XDG systems.
    Linux,
    /// macOS.
    MacOs,
    /// Anything else: the OS-specific files (Claude Desktop) are not looked for.
    Other,
}

/// How widely a configuration file applies, from the most to the least specific.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ConfigScope {
    /// One project, private to the user (kept in the user's home).
    Local,
    /// One project, usually checked in with it.
    Project,
    /// Every project of the user.
    User,
}

/// The application whose file format and location a candidate follows.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Client {
    /// Claude Code (`.mcp.json`, `~/.claude.json`).
    ClaudeCode,
    /// Cursor (`.cursor/mcp.json`).
    Cursor,
    /// VS Code (`.vscode/mcp.json`).
    VsCode,
    /// Claude Desktop (`claude_desktop_config.json`).
    ClaudeDesktop,
}

/// One configuration file to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// Where the file is.
    pub path: PathBuf,
    /// How to parse it (pass to [`parse_config`](super::config::parse_config)).
    pub shape: ConfigShape,
    /// How widely it applies.
    pub scope: ConfigScope,
    /// Whose format it is.
    pub client: Client,
}

/// Every conventional configuration file for `project` and `home`, highest precedence first
/// (see the [module docs](self)), whether or not it exists. `~/.claude.json` appears twice: once
/// for its local-scope entry of `project`, once for its user-scope servers.
pub fn candidates(project: &Path, home: &Path, os: Os) -> Vec<Candidate> {
    let claude_json = home.join(".claude.json");
    let candidate = |path: PathBuf, shape, scope, client| Candidate {
        path,
        shape,
        scope,
        client,
    };
    let mut out = vec![
        candidate(
            claude_json.clone(),
            ConfigShape::ClaudeLocal {
                project: project.to_string_lossy().into_owned(),
            },
            ConfigScope::Local,
            Client::ClaudeCode,
        ),
        candidate(
            project.join(".mcp.json"),
            ConfigShape::McpServers,
            ConfigScope::Project,
            Client::ClaudeCode,
        ),
        candidate(
            project.join(".cursor").join("mcp.json"),
            ConfigShape::McpServers,
            ConfigScope::Project,
            Client::Cursor,
        ),
        candidate(
            project.join(".vscode").join("mcp.json"),
            ConfigShape::VsCode {
                workspace: Some(project.to_string_lossy().into_owned()),
            },
            ConfigScope::Project,
            Client::VsCode,
        ),
        candidate(
            claude_json,
            ConfigShape::ClaudeUser,
            ConfigScope::User,
            Client::ClaudeCode,
        ),
        candidate(
            home.join(".cursor").join("mcp.json"),
            ConfigShape::McpServers,
            ConfigScope::User,
            Client::Cursor,
        ),
    ];
    let desktop = match os {
        Os::Linux => Some(home.join(".config").join("Claude")),
        Os::MacOs => Some(home.join("Library/Application Support/Claude")),
        Os::Other => None,
    };
    if let Some(dir) = desktop {
        out.push(candidate(
            dir.join("claude_desktop_config.json"),
            ConfigShape::McpServers,
            ConfigScope::User,
            Client::ClaudeDesktop,
        ));
    }
    out
}

/// The [`candidates`] for which `exists` is true, in the same order.
pub fn discover(
    project: &Path,
    home: &Path,
    os: Os,
    exists: &dyn Fn(&Path) -> bool,
) -> Vec<Candidate> {
    candidates(project, home, os)
        .into_iter()
        .filter(|c| exists(&c.path))
        .collect()
}

/// A server that made it into the merged list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergedServer {
    /// The server's configuration.
    pub config: ServerConfig,
    /// Index of the file it came from, in the slice given to [`merge`].
    pub file: usize,
}

/// A server entry that lost to an entry of the same name in a higher-precedence file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shadowed {
    /// The server's name.
    pub name: String,
    /// Index of the file whose entry was dropped.
    pub file: usize,
    /// Index of the file whose entry won.
    pub by: usize,
    /// Whether the winning entry is a disabled one (the name is switched off, not replaced).
    pub by_disabled: bool,
}

/// The outcome of [`merge`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Merged {
    /// The enabled servers, by file precedence and then by order within each file.
    pub servers: Vec<MergedServer>,
    /// The disabled server names that won, with the index of their file.
    pub disabled: Vec<(String, usize)>,
    /// Every entry that lost, in the order they were met.
    pub shadowed: Vec<Shadowed>,
}

/// Merges parsed files given highest precedence first (the order of [`discover`]): the first
/// file to name a server, enabled or disabled, decides it.
pub fn merge(files: &[ParsedConfig]) -> Merged {
    let mut out = Merged::default();
    // name -> (winning file, winner is disabled)
    let mut winner: HashMap<String, (usize, bool)> = HashMap::new();
    for (index, parsed) in files.iter().enumerate() {
        let entries = parsed
            .servers
            .iter()
            .map(|s| (s.name.as_str(), Some(s)))
            .chain(parsed.disabled.iter().map(|n| (n.as_str(), None)));
        for (name, server) in entries {
            if let Some(&(by, by_disabled)) = winner.get(name) {
                out.shadowed.push(Shadowed {
                    name: name.to_owned(),
                    file: index,
                    by,
                    by_disabled,
                });
                continue;
            }
            winner.insert(name.to_owned(), (index, server.is_none()));
            match server {
                Some(config) => out.servers.push(MergedServer {
                    config: config.clone(),
                    file: index,
                }),
                None => out.disabled.push((name.to_owned(), index)),
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;
