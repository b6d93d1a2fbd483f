//! Tests for the file shapes (`parse_config`, `parse_config_file`) and the VS Code variables.

use super::*;

fn vars(name: &str) -> Option<String> {
    match name {
        "TOKEN" => Some("sekrit".into()),
        "HOME" => Some("/home/u".into()),
        _ => None,
    }
}

fn file(path: &str, json: &str) -> Result<Vec<ServerConfig>, ConfigError> {
    parse_config_file(path, json, &vars)
}

fn stdio(server: &ServerConfig) -> &StdioConfig {
    match &server.transport {
        TransportConfig::Stdio(s) => s,
        other => panic!("expected stdio, got {other:?}"),
    }
}

fn http(server: &ServerConfig) -> &HttpConfig {
    match &server.transport {
        TransportConfig::Http(h) => h,
        other => panic!("expected http, got {other:?}"),
    }
}

#[test]
fn auto_detects_mcp_servers_shape() {
    let servers = file(".mcp.json", r#"{"mcpServers": {"a": {"command": "x"}}}"#).unwrap();
    assert_eq!(servers[0].name, "a");
}

#[test]
fn vscode_shape_with_all_three_types() {
    let servers = file(
        "/p/.vscode/mcp.json",
        r#"{"inputs": [{"type": "promptString", "id": "k"}], "servers": {
            "s": {"type": "stdio", "command": "run", "args": ["--x"], "env": {"A": "1"},
                  "envFile": "${workspaceFolder}/.env"},
            "h": {"type": "http", "url": "https://h.example/mcp", "headers": {"X": "${env:TOKEN}"}},
            "e": {"type": "sse", "url": "http://127.0.0.1:1/sse"}
        }}"#,
    )
    .unwrap();
    let names: Vec<_> = servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["s", "h", "e"]);
    assert_eq!(stdio(&servers[0]).args, ["--x"]);
    assert_eq!(stdio(&servers[0]).env_file.as_deref(), Some("/p/.env"));
    assert_eq!(http(&servers[1]).transport, HttpTransport::Streamable);
    assert_eq!(
        http(&servers[1]).headers,
        [("X".to_string(), "sekrit".to_string())]
    );
    assert_eq!(http(&servers[2]).transport, HttpTransport::Legacy);
}

#[test]
fn vscode_input_variable_is_unsupported_and_named() {
    let e = file(
        "/p/.vscode/mcp.json",
        r#"{"servers": {"gh": {"type": "http", "url": "https://x.example",
            "headers": {"Authorization": "Bearer ${input:gh-token}"}}}}"#,
    )
    .unwrap_err();
    assert_eq!(e.file.as_deref(), Some("/p/.vscode/mcp.json"));
    assert_eq!(e.server.as_deref(), Some("gh"));
    assert_eq!(e.field.as_deref(), Some("headers.Authorization"));
    assert!(matches!(
        &e.kind,
        ConfigErrorKind::Expand(ExpandError::Unsupported { name }) if name == "input:gh-token"
    ));
    let shown = e.to_string();
    assert!(
        shown.starts_with(
            r#"file "/p/.vscode/mcp.json": server "gh": field "headers.Authorization": unsupported variable "${input:gh-token}""#
        ),
        "{shown}"
    );
}

#[test]
fn vscode_user_home_and_undefined_env() {
    let servers = file(
        "/p/.vscode/mcp.json",
        r#"{"servers": {"a": {"command": "${userHome}/bin/x"}}}"#,
    )
    .unwrap();
    assert_eq!(stdio(&servers[0]).command, "/home/u/bin/x");
    let e = file(
        "/p/.vscode/mcp.json",
        r#"{"servers": {"a": {"command": "${env:NOPE}"}}}"#,
    )
    .unwrap_err();
    assert!(
        matches!(&e.kind, ConfigErrorKind::Expand(ExpandError::Undefined { name }) if name == "NOPE")
    );
}

#[test]
fn workspace_folder_unknown_outside_dot_vscode() {
    let e = file(
        "/p/mcp.json",
        r#"{"servers": {"a": {"command": "${workspaceFolder}/x"}}}"#,
    )
    .unwrap_err();
    assert!(matches!(
        e.kind,
        ConfigErrorKind::Expand(ExpandError::Unsupported { .. })
    ));
}

#[test]
fn env_prefix_is_not_a_plain_variable() {
    // In `mcpServers` files only `${NAME}` exists.
    let e = file(
        ".mcp.json",
        r#"{"mcpServers": {"a": {"command": "${env:TOKEN}"}}}"#,
    )
    .unwrap_err();
    assert!(matches!(
        e.kind,
        ConfigErrorKind::Expand(ExpandError::InvalidName { .. })
    ));
}

#[test]
fn enabled_false_and_disabled_true_are_both_reported_as_disabled() {
    let parsed = parse_config(
        Some("f"),
        r#"{"servers": {"a": {"enabled": false, "command": 3}, "b": {"disabled": true},
            "c": {"enabled": true, "command": "c"}}}"#,
        &vars,
        &ConfigShape::Auto,
    )
    .unwrap();
    assert_eq!(parsed.disabled, ["a", "b"]);
    assert_eq!(parsed.servers.len(), 1);
    assert_eq!(parsed.servers[0].name, "c");
}

#[test]
fn enabled_must_be_boolean() {
    let e = file(
        "f",
        r#"{"mcpServers": {"a": {"enabled": "no", "command": "c"}}}"#,
    )
    .unwrap_err();
    assert_eq!(e.field.as_deref(), Some("enabled"));
}

#[test]
fn unknown_shape_names_the_file() {
    let e = file("/x/conf.json", r#"{"other": {}}"#).unwrap_err();
    assert!(matches!(
        e.kind,
        ConfigErrorKind::UnknownShape { typo: None }
    ));
    assert_eq!(
        e.to_string(),
        r#"file "/x/conf.json": no server list: expected a top-level "mcpServers" object (Claude Desktop, Cursor, Claude Code) or "servers" object (VS Code)"#
    );
}

/// The key a file of unknown shape probably meant, as `(found, meant)`.
fn shape_typo(json: &str) -> Option<(String, &'static str)> {
    match file("f.json", json).unwrap_err().kind {
        ConfigErrorKind::UnknownShape { typo } => typo,
        other => panic!("{json}: {other:?}"),
    }
}

#[test]
fn a_misspelt_list_key_gets_the_key_it_looks_meant_as() {
    for (json, key, meant) in [
        (r#"{"mcpServerz": {}}"#, "mcpServerz", "mcpServers"),
        (r#"{"mcp_servers": {}}"#, "mcp_servers", "mcpServers"),
        (r#"{"MCP-Servers": {}}"#, "MCP-Servers", "mcpServers"),
        (r#"{"mcpServer": {}}"#, "mcpServer", "mcpServers"),
        (r#"{"mpcServers": {}}"#, "mpcServers", "mcpServers"),
        (r#"{"inputs": [], "Servers": {}}"#, "Servers", "servers"),
        (r#"{"server": {}}"#, "server", "servers"),
    ] {
        assert_eq!(shape_typo(json), Some((key.to_owned(), meant)), "{json}");
    }
    let e = file("f.json", r#"{"mcp_servers": {}}"#).unwrap_err();
    assert!(
        e.to_string()
            .ends_with(r#": unknown key "mcp_servers" (did you mean "mcpServers"?)"#),
        "{e}"
    );
    // Keys that are not slips of a list key get no guess.
    for json in [
        r#"{"other": {}}"#,
        r#"{"context_servers": {}}"#,
        r#"{"observers": {}}"#,
        r#"{"": {}}"#,
        "{}",
    ] {
        assert_eq!(shape_typo(json), None, "{json}");
    }
}

#[test]
fn the_other_dialects_key_is_taken_for_this_dialects() {
    let e = parse_config(
        None,
        r#"{"mcpServers": {"a": {"command": "a"}}}"#,
        &vars,
        &ConfigShape::VsCode { workspace: None },
    )
    .unwrap_err();
    assert!(
        matches!(&e.kind, ConfigErrorKind::MissingServers { typo: Some((key, "servers")) } if key == "mcpServers"),
        "{e}"
    );
}

#[test]
fn a_stray_server_list_beside_an_empty_one_is_found() {
    let stray = |json: &str| stray_server_list(json, &ConfigShape::Auto);
    assert_eq!(
        stray(r#"{"mcpServers": {}, "servers": {"a": {"command": "a"}}}"#),
        Some(("servers".to_owned(), "mcpServers"))
    );
    assert_eq!(
        stray(r#"{"mcp_servers": {"a": {"command": "a"}}, "mcpServers": {}}"#),
        Some(("mcp_servers".to_owned(), "mcpServers"))
    );
    assert_eq!(
        stray(r#"{"servers": {}, "Servers": {}}"#),
        Some(("Servers".to_owned(), "servers"))
    );
    assert_eq!(stray(r#"{"mcpServers": {}, "other": 1}"#), None);
    // Without a list there is nothing to be beside: that is the shape error's to report.
    assert_eq!(stray(r#"{"mcpServerz": {}}"#), None);
    assert_eq!(stray("[]"), None);
    assert_eq!(stray("{"), None);
    assert_eq!(
        stray_server_list(
            r#"{"projects": {}, "mcp_servers": {}}"#,
            &ConfigShape::ClaudeUser
        ),
        Some(("mcp_servers".to_owned(), "mcpServers"))
    );
}

#[test]
fn json_error_names_the_file() {
    let e = file("/x/.mcp.json", "{").unwrap_err();
    assert!(
        e.to_string()
            .starts_with(r#"file "/x/.mcp.json": invalid JSON"#),
        "{e}"
    );
}

#[test]
fn explicit_vscode_shape_requires_servers() {
    let e = parse_config(
        None,
        r#"{"mcpServers": {}}"#,
        &vars,
        &ConfigShape::VsCode { workspace: None },
    )
    .unwrap_err();
    assert!(matches!(
        e.kind,
        ConfigErrorKind::MissingServers { typo: Some(_) }
    ));
}

#[test]
fn claude_user_without_mcp_servers_is_empty() {
    let parsed = parse_config(
        None,
        r#"{"numStartups": 3, "projects": {}}"#,
        &vars,
        &ConfigShape::ClaudeUser,
    )
    .unwrap();
    assert_eq!(parsed, ParsedConfig::default());
}

const CLAUDE_JSON: &str = r#"{
    "mcpServers": {"u": {"command": "user-server"}},
    "projects": {
        "/work/p": {"allowedTools": [], "mcpServers": {"l": {"command": "local-server"}}},
        "/work/q": {"allowedTools": []}
    }
}"#;

#[test]
fn claude_user_reads_top_level() {
    let parsed = parse_config(None, CLAUDE_JSON, &vars, &ConfigShape::ClaudeUser).unwrap();
    assert_eq!(parsed.servers[0].name, "u");
}

#[test]
fn claude_local_reads_the_project_entry() {
    let shape = |p: &str| ConfigShape::ClaudeLocal { project: p.into() };
    let parsed = parse_config(None, CLAUDE_JSON, &vars, &shape("/work/p")).unwrap();
    assert_eq!(parsed.servers.len(), 1);
    assert_eq!(stdio(&parsed.servers[0]).command, "local-server");
    for other in ["/work/q", "/elsewhere"] {
        let parsed = parse_config(None, CLAUDE_JSON, &vars, &shape(other)).unwrap();
        assert!(parsed.servers.is_empty(), "{other}");
    }
}

#[test]
fn claude_local_errors_name_the_nested_field() {
    let e = parse_config(
        Some("~/.claude.json"),
        r#"{"projects": {"/p": {"mcpServers": []}}}"#,
        &vars,
        &ConfigShape::ClaudeLocal {
            project: "/p".into(),
        },
    )
    .unwrap_err();
    assert_eq!(e.field.as_deref(), Some("projects./p.mcpServers"));
}

#[test]
fn duplicate_server_in_vscode_file() {
    let e = file(
        "f",
        r#"{"servers": {"a": {"command": "x"}, "a": {"command": "y"}}}"#,
    )
    .unwrap_err();
    assert!(matches!(e.kind, ConfigErrorKind::DuplicateServer));
    assert_eq!(e.server.as_deref(), Some("a"));
}

/// The entries of an `mcpServers` document with the test variables.
fn entries(json: &str) -> Result<Vec<ConfigEntry>, ConfigError> {
    parse_config_entries(Some("f.json"), json, &vars, &ConfigShape::Auto)
}

#[test]
fn a_broken_entry_leaves_the_others_usable() {
    let json = r#"{"mcpServers": {
        "good": {"command": "a", "env": {"T": "${TOKEN}"}},
        "novar": {"command": "b", "args": ["--key", "${MISSING_KEY}"]},
        "off": {"command": "c", "disabled": true},
        "nocmd": {"args": []},
        "web": {"url": "${NO_HOST}/mcp"},
        "last": {"url": "https://h/mcp"}
    }}"#;
    let list = entries(json).unwrap();
    let names: Vec<&str> = list.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["good", "novar", "off", "nocmd", "web", "last"]);
    let EntryStatus::Enabled(good) = &list[0].status else {
        panic!("{:?}", list[0])
    };
    assert_eq!(stdio(good).env, [("T".to_owned(), "sekrit".to_owned())]);
    let EntryStatus::Broken(e) = &list[1].status else {
        panic!("{:?}", list[1])
    };
    assert_eq!(
        e.to_string(),
        r#"file "f.json": server "novar": field "args[1]": undefined variable MISSING_KEY"#
    );
    assert!(matches!(list[2].status, EntryStatus::Disabled));
    assert!(matches!(list[3].status, EntryStatus::Broken(_)));
    let EntryStatus::Broken(e) = &list[4].status else {
        panic!("{:?}", list[4])
    };
    assert!(e.to_string().contains("undefined variable NO_HOST"), "{e}");
    assert!(matches!(&list[5].status, EntryStatus::Enabled(s) if http(s).url == "https://h/mcp"));

    // The strict parser still rejects the file at its first broken entry.
    let strict = parse_config(Some("f.json"), json, &vars, &ConfigShape::Auto).unwrap_err();
    assert!(strict.to_string().contains("MISSING_KEY"), "{strict}");
}

#[test]
fn file_level_problems_are_still_errors() {
    assert!(entries("{").is_err());
    assert!(entries(r#"{"other": {}}"#).is_err());
    assert!(entries(r#"{"mcpServers": []}"#).is_err());
    assert!(entries(r#"{"mcpServers": {"": {"command": "a"}}}"#).is_err());
    let dup = r#"{"mcpServers": {"a": {"command": "x"}, "a": {"command": "${NOPE}"}}}"#;
    assert!(matches!(
        entries(dup).unwrap_err().kind,
        ConfigErrorKind::DuplicateServer
    ));
    // Shapes without servers give no entries.
    let none = parse_config_entries(None, "{}", &vars, &ConfigShape::ClaudeUser).unwrap();
    assert!(none.is_empty());
}
