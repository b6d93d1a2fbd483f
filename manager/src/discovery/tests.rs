//! Tests for `manager::discovery`.

use std::collections::HashSet;

use super::*;
use crate::config::parse_config;

fn paths(c: &[Candidate]) -> Vec<String> {
    c.iter()
        .map(|c| c.path.to_string_lossy().into_owned())
        .collect()
}

#[test]
fn linux_order_and_scopes() {
    let c = candidates(Path::new("/w/p"), Path::new("/home/u"), Os::Linux);
    assert_eq!(
        paths(&c),
        [
            "/home/u/.claude.json",
            "/w/p/.mcp.json",
            "/w/p/.cursor/mcp.json",
            "/w/p/.vscode/mcp.json",
            "/home/u/.claude.json",
            "/home/u/.cursor/mcp.json",
            "/home/u/.config/Claude/claude_desktop_config.json",
        ]
    );
    let scopes: Vec<_> = c.iter().map(|c| c.scope).collect();
    assert!(scopes.windows(2).all(|w| w[0] <= w[1]), "{scopes:?}");
    assert_eq!(
        c[0].shape,
        ConfigShape::ClaudeLocal {
            project: "/w/p".into()
        }
    );
    assert_eq!(c[4].shape, ConfigShape::ClaudeUser);
    assert_eq!(
        c[3].shape,
        ConfigShape::VsCode {
            workspace: Some("/w/p".into())
        }
    );
}

#[test]
fn macos_claude_desktop_path() {
    let c = candidates(Path::new("/p"), Path::new("/Users/u"), Os::MacOs);
    let last = c.last().unwrap();
    assert_eq!(last.client, Client::ClaudeDesktop);
    assert_eq!(
        last.path,
        Path::new("/Users/u/Library/Application Support/Claude/claude_desktop_config.json")
    );
}

#[test]
fn other_os_has_no_desktop_file() {
    let c = candidates(Path::new("/p"), Path::new("/h"), Os::Other);
    assert!(c.iter().all(|c| c.client != Client::ClaudeDesktop));
}

#[test]
fn discover_keeps_existing_in_order() {
    let present: HashSet<&Path> = [Path::new("/h/.cursor/mcp.json"), Path::new("/p/.mcp.json")]
        .into_iter()
        .collect();
    let c = discover(Path::new("/p"), Path::new("/h"), Os::Linux, &|p| {
        present.contains(p)
    });
    assert_eq!(paths(&c), ["/p/.mcp.json", "/h/.cursor/mcp.json"]);
}

fn parsed(json: &str) -> ParsedConfig {
    parse_config(None, json, &|_| None, &ConfigShape::Auto).unwrap()
}

#[test]
fn higher_precedence_file_shadows_same_name() {
    let project = parsed(r#"{"mcpServers": {"db": {"command": "project-db"}}}"#);
    let user = parsed(r#"{"mcpServers": {"db": {"command": "user-db"}, "gh": {"command": "gh"}}}"#);
    let m = merge(&[project, user]);
    let names: Vec<_> = m
        .servers
        .iter()
        .map(|s| (s.config.name.as_str(), s.file))
        .collect();
    assert_eq!(names, [("db", 0), ("gh", 1)]);
    assert_eq!(
        m.shadowed,
        [Shadowed {
            name: "db".into(),
            file: 1,
            by: 0,
            by_disabled: false
        }]
    );
}

#[test]
fn disabled_entry_switches_off_lower_file() {
    let project = parsed(r#"{"mcpServers": {"gh": {"disabled": true}}}"#);
    let user = parsed(r#"{"mcpServers": {"gh": {"command": "gh"}}}"#);
    let m = merge(&[project, user]);
    assert!(m.servers.is_empty());
    assert_eq!(m.disabled, [("gh".to_string(), 0)]);
    assert!(m.shadowed[0].by_disabled);
}

#[test]
fn lower_disabled_does_not_remove_higher_enabled() {
    let project = parsed(r#"{"mcpServers": {"gh": {"command": "gh"}}}"#);
    let user = parsed(r#"{"servers": {"gh": {"enabled": false}}}"#);
    let m = merge(&[project, user]);
    assert_eq!(m.servers.len(), 1);
    assert!(m.disabled.is_empty());
    assert_eq!(m.shadowed.len(), 1);
}

#[test]
fn merge_of_nothing_is_empty() {
    assert_eq!(merge(&[]), Merged::default());
}
