//! Tests for `manager::config` (kept apart so the parser stays one readable file).

use std::collections::HashMap;

use super::*;

fn vars_from(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |name| map.get(name).cloned()
}

fn no_vars(_: &str) -> Option<String> {
    None
}

fn parse(json: &str) -> Result<Vec<ServerConfig>, ConfigError> {
    parse_mcp_servers(json, &no_vars)
}

fn parse_err(json: &str) -> ConfigError {
    parse(json).expect_err("expected an error")
}

fn only(json: &str) -> ServerConfig {
    let mut servers = parse(json).expect("valid config");
    assert_eq!(servers.len(), 1, "{servers:?}");
    servers.remove(0)
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

fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
    p.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

// ---- expand_vars ----

#[test]
fn expands_defined_variables() {
    let vars = vars_from(&[("HOME", "/home/u"), ("EMPTY", "")]);
    assert_eq!(expand_vars("${HOME}/x", &vars).unwrap(), "/home/u/x");
    assert_eq!(
        expand_vars("a${HOME}b${HOME}", &vars).unwrap(),
        "a/home/ub/home/u"
    );
    assert_eq!(expand_vars("${EMPTY}", &vars).unwrap(), "");
    assert_eq!(expand_vars("no refs", &vars).unwrap(), "no refs");
    assert_eq!(expand_vars("", &vars).unwrap(), "");
}

#[test]
fn default_applies_when_unset_or_empty() {
    let vars = vars_from(&[("SET", "v"), ("EMPTY", "")]);
    assert_eq!(expand_vars("${SET:-d}", &vars).unwrap(), "v");
    assert_eq!(expand_vars("${UNSET:-d}", &vars).unwrap(), "d");
    assert_eq!(expand_vars("${EMPTY:-d}", &vars).unwrap(), "d");
    assert_eq!(expand_vars("${UNSET:-}", &vars).unwrap(), "");
    // The default is literal text: no nested expansion, and it may contain `$` and `:-`.
    assert_eq!(
        expand_vars("${UNSET:-$HOME:-x}", &vars).unwrap(),
        "$HOME:-x"
    );
}

#[test]
fn lone_and_double_dollars_stay_literal() {
    let vars = vars_from(&[("X", "v")]);
    assert_eq!(expand_vars("$", &vars).unwrap(), "$");
    assert_eq!(expand_vars("a$b $X", &vars).unwrap(), "a$b $X");
    assert_eq!(expand_vars("$$", &vars).unwrap(), "$$");
    assert_eq!(expand_vars("$${X}", &vars).unwrap(), "$${X}");
    assert_eq!(expand_vars("$$$${X}", &vars).unwrap(), "$$$${X}");
    assert_eq!(expand_vars("$$${X}", &vars).unwrap(), "$$v");
    assert_eq!(expand_vars("cost: 5$", &vars).unwrap(), "cost: 5$");
}

#[test]
fn a_command_line_value_escapes_one_dollar_with_two() {
    let vars = vars_from(&[("X", "v")]);
    assert_eq!(expand_vars_escaped("$${X}", &vars).unwrap(), "${X}");
    assert_eq!(expand_vars_escaped("$$${X}", &vars).unwrap(), "$v");
    assert_eq!(
        expand_vars_escaped("Bearer ${X}", &vars).unwrap(),
        "Bearer v"
    );
    assert_eq!(expand_vars_escaped("5$ $X", &vars).unwrap(), "5$ $X");
    assert_eq!(
        expand_vars_escaped("${NOPE}", &vars),
        Err(ExpandError::Undefined {
            name: "NOPE".into()
        })
    );
}

#[test]
fn substituted_values_are_not_rescanned() {
    let vars = vars_from(&[("A", "${B}"), ("B", "no")]);
    assert_eq!(expand_vars("${A}", &vars).unwrap(), "${B}");
}

#[test]
fn expansion_errors() {
    let vars = vars_from(&[]);
    assert_eq!(
        expand_vars("x${MISSING}", &vars),
        Err(ExpandError::Undefined {
            name: "MISSING".into()
        })
    );
    assert_eq!(
        expand_vars("ab${OPEN", &vars),
        Err(ExpandError::Unterminated { offset: 2 })
    );
    for bad in ["${}", "${1X}", "${A-B}", "${A:B}", "${ A}", "${:-d}"] {
        assert_eq!(
            expand_vars(bad, &vars),
            Err(ExpandError::InvalidName { offset: 0 }),
            "{bad}"
        );
    }
    assert_eq!(
        ExpandError::Undefined { name: "T".into() }.to_string(),
        "undefined variable T"
    );
}

#[test]
fn expansion_error_never_shows_the_input() {
    let e = expand_vars("Bearer sekrit ${sekrit-token}", &no_vars).unwrap_err();
    assert!(!e.to_string().contains("sekrit"), "{e}");
    let e = expand_vars("Bearer sekrit ${OPEN", &no_vars).unwrap_err();
    assert!(!e.to_string().contains("sekrit"), "{e}");
}

// ---- the three real-world shapes ----

#[test]
fn claude_desktop_shape() {
    let json = r#"{
      "mcpServers": {
        "filesystem": {
          "command": "npx",
          "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/u/Desktop"]
        },
        "brave-search": {
          "command": "npx",
          "args": ["-y", "@modelcontextprotocol/server-brave-search"],
          "env": {"BRAVE_API_KEY": "abc"}
        }
      },
      "globalShortcut": "Ctrl+Space"
    }"#;
    let servers = parse(json).unwrap();
    let names: Vec<_> = servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["filesystem", "brave-search"]);
    let fs = stdio(&servers[0]);
    assert_eq!(fs.command, "npx");
    assert_eq!(fs.args[2], "/Users/u/Desktop");
    assert!(fs.env.is_empty() && fs.cwd.is_none() && !fs.clear_env);
    assert_eq!(stdio(&servers[1]).env, pairs(&[("BRAVE_API_KEY", "abc")]));
    assert_eq!(servers[0].timeouts, TimeoutConfig::default());
}

#[test]
fn cursor_shape() {
    let json = r#"{"mcpServers": {
        "remote": {"url": "https://mcp.example.com/mcp", "headers": {"API_KEY": "${KEY}"}},
        "local": {"command": "python", "args": ["server.py"], "env": {"TOKEN": "${TOKEN:-dev}"}}
    }}"#;
    let servers = parse_mcp_servers(json, &vars_from(&[("KEY", "k1")])).unwrap();
    let remote = http(&servers[0]);
    assert_eq!(remote.url, "https://mcp.example.com/mcp");
    assert_eq!(remote.transport, HttpTransport::Auto);
    assert_eq!(remote.headers, pairs(&[("API_KEY", "k1")]));
    assert_eq!(stdio(&servers[1]).env, pairs(&[("TOKEN", "dev")]));
}

#[test]
fn claude_code_shape() {
    let json = r#"{"mcpServers": {
        "api": {
          "type": "http",
          "url": "${API_BASE_URL:-https://api.example.com}/mcp",
          "headers": {"Authorization": "Bearer ${API_KEY}"}
        },
        "events": {"type": "sse", "url": "http://localhost:8080/sse"},
        "db": {
          "type": "stdio",
          "command": "${HOME}/bin/db-server",
          "args": ["--config", "${CFG:-/etc/db.json}"],
          "env": {"DB_URL": "${DB_URL}"},
          "cwd": "${HOME}/work",
          "timeout": 30000,
          "startupTimeout": 10000
        }
    }}"#;
    let vars = vars_from(&[("API_KEY", "t0k"), ("HOME", "/h"), ("DB_URL", "pg://x")]);
    let servers = parse_mcp_servers(json, &vars).unwrap();
    let api = http(&servers[0]);
    assert_eq!(api.url, "https://api.example.com/mcp");
    assert_eq!(api.transport, HttpTransport::Streamable);
    assert_eq!(api.headers, pairs(&[("Authorization", "Bearer t0k")]));
    assert_eq!(http(&servers[1]).transport, HttpTransport::Legacy);
    let db = stdio(&servers[2]);
    assert_eq!(db.command, "/h/bin/db-server");
    assert_eq!(db.args, ["--config", "/etc/db.json"]);
    assert_eq!(db.env, pairs(&[("DB_URL", "pg://x")]));
    assert_eq!(db.cwd.as_deref(), Some("/h/work"));
    assert_eq!(
        servers[2].timeouts,
        TimeoutConfig {
            startup: Some(Duration::from_secs(10)),
            request: Some(Duration::from_secs(30)),
        }
    );
}

// ---- rules ----

#[test]
fn servers_env_and_headers_keep_file_order() {
    let json = r#"{"mcpServers": {
        "zeta": {"command": "z", "env": {"Z": "1", "A": "2", "M": "3"}},
        "alpha": {"url": "http://h/", "headers": {"X-B": "1", "X-A": "2"}},
        "mid": {"command": "m"}
    }}"#;
    let servers = parse(json).unwrap();
    let names: Vec<_> = servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["zeta", "alpha", "mid"]);
    assert_eq!(
        stdio(&servers[0]).env,
        pairs(&[("Z", "1"), ("A", "2"), ("M", "3")])
    );
    assert_eq!(
        http(&servers[1]).headers,
        pairs(&[("X-B", "1"), ("X-A", "2")])
    );
}

#[test]
fn type_selects_the_transport() {
    let cases = [
        (r#""type": "http""#, HttpTransport::Streamable),
        (r#""type": "streamable-http""#, HttpTransport::Streamable),
        (r#""type": "streamableHttp""#, HttpTransport::Streamable),
        (r#""type": "sse""#, HttpTransport::Legacy),
        (r#""type": null"#, HttpTransport::Auto),
    ];
    for (ty, expected) in cases {
        let json = format!(r#"{{"mcpServers": {{"s": {{{ty}, "url": "http://x/"}}}}}}"#);
        assert_eq!(http(&only(&json)).transport, expected, "{ty}");
    }
    let s = only(r#"{"mcpServers": {"s": {"type": "stdio", "command": "c"}}}"#);
    assert_eq!(stdio(&s).command, "c");
}

#[test]
fn command_wins_over_url_without_type() {
    let s = only(r#"{"mcpServers": {"s": {"command": "c", "url": "http://x/"}}}"#);
    assert_eq!(stdio(&s).command, "c");
}

#[test]
fn disabled_servers_are_skipped_without_validation() {
    let json = r#"{"mcpServers": {
        "off": {"disabled": true, "command": "${UNDEFINED}", "args": 5},
        "on": {"disabled": false, "command": "c"}
    }}"#;
    let servers = parse(json).unwrap();
    assert_eq!(servers.len(), 1);
    assert_eq!(servers[0].name, "on");
}

#[test]
fn nulls_count_as_absent_and_unknown_fields_are_ignored() {
    let s = only(
        r#"{"mcpServers": {"s": {"command": "c", "args": null, "env": null, "cwd": null,
            "timeout": null, "disabled": null, "autoApprove": ["x"], "description": 1}}}"#,
    );
    assert_eq!(stdio(&s), &StdioConfig::new("c"));
    assert_eq!(s.timeouts, TimeoutConfig::default());
}

#[test]
fn empty_server_map_is_fine() {
    assert!(parse(r#"{"mcpServers": {}}"#).unwrap().is_empty());
}

#[test]
fn debug_redacts_env_and_header_values() {
    let s = only(r#"{"mcpServers": {"s": {"command": "c", "env": {"TOKEN": "sekrit1"}}}}"#);
    let debug = format!("{s:?}");
    assert!(
        debug.contains("TOKEN") && !debug.contains("sekrit1"),
        "{debug}"
    );
    let s = only(r#"{"mcpServers": {"s": {"url": "http://x/", "headers": {"Auth": "sekrit2"}}}}"#);
    let debug = format!("{s:?}");
    assert!(
        debug.contains("Auth") && !debug.contains("sekrit2"),
        "{debug}"
    );
}

// ---- errors ----

fn assert_err(json: &str, server: Option<&str>, field: Option<&str>, display: &str) {
    let e = parse_err(json);
    assert_eq!(e.server.as_deref(), server, "{e}");
    assert_eq!(e.field.as_deref(), field, "{e}");
    assert_eq!(e.to_string(), display);
}

#[test]
fn undefined_variable_names_server_and_field() {
    let json = r#"{"mcpServers": {"github": {"command": "npx",
        "args": ["-y", "server-github", "${GITHUB_TOKEN}"]}}}"#;
    let e = parse_err(json);
    assert!(matches!(
        e.kind,
        ConfigErrorKind::Expand(ExpandError::Undefined { .. })
    ));
    assert_eq!(
        e.to_string(),
        r#"server "github": field "args[2]": undefined variable GITHUB_TOKEN"#
    );
}

#[test]
fn expansion_errors_in_each_expanded_field() {
    let cases = [
        (r#""command": "${U}""#, "command"),
        (r#""command": "c", "cwd": "${U}""#, "cwd"),
        (r#""command": "c", "env": {"K": "${U}"}"#, "env.K"),
        (r#""url": "${U}""#, "url"),
        (
            r#""url": "http://x/", "headers": {"H": "${U}"}"#,
            "headers.H",
        ),
    ];
    for (body, field) in cases {
        let json = format!(r#"{{"mcpServers": {{"s": {{{body}}}}}}}"#);
        assert_err(
            &json,
            Some("s"),
            Some(field),
            &format!(r#"server "s": field "{field}": undefined variable U"#),
        );
    }
}

#[test]
fn invalid_json() {
    let e = parse_err(r#"{"mcpServers": {"#);
    assert!(matches!(e.kind, ConfigErrorKind::Json(_)));
    assert!(e.to_string().starts_with("invalid JSON: "), "{e}");
    assert!(e.server.is_none() && e.field.is_none());
    assert!(matches!(parse_err("{} x").kind, ConfigErrorKind::Json(_)));
}

#[test]
fn top_level_errors() {
    assert_err("[]", None, None, "expected an object, found an array");
    // VS Code's key in an mcpServers file is taken for a slip of "mcpServers".
    let e = parse_err(r#"{"servers": {}}"#);
    assert!(matches!(
        &e.kind,
        ConfigErrorKind::MissingMcpServers { typo: Some((key, "mcpServers")) } if key == "servers"
    ));
    assert!(
        e.to_string().contains(
            r#"missing top-level key "mcpServers" (expected {"mcpServers": {"<name>": {...}}}): unknown key "servers" (did you mean "mcpServers"?)"#
        ),
        "{e}"
    );
    let e = parse_err(r#"{"other": {}}"#);
    assert!(matches!(
        e.kind,
        ConfigErrorKind::MissingMcpServers { typo: None }
    ));
    assert_err(
        r#"{"mcpServers": []}"#,
        None,
        Some("mcpServers"),
        r#"field "mcpServers": expected an object, found an array"#,
    );
    assert_err(
        r#"{"mcpServers": {}, "mcpServers": {}}"#,
        None,
        Some("mcpServers"),
        r#"field "mcpServers": duplicate key"#,
    );
}

#[test]
fn server_name_errors() {
    assert_err(
        r#"{"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}}"#,
        Some("a"),
        None,
        r#"server "a": server name used more than once"#,
    );
    assert_err(
        r#"{"mcpServers": {"": {"command": "x"}}}"#,
        Some(""),
        None,
        r#"server "": server name must not be empty"#,
    );
    assert_err(
        r#"{"mcpServers": {"s": "npx"}}"#,
        Some("s"),
        None,
        r#"server "s": expected an object, found a string"#,
    );
}

#[test]
fn unknown_type() {
    let e = parse_err(r#"{"mcpServers": {"s": {"type": "websocket", "url": "ws://x"}}}"#);
    assert!(matches!(&e.kind, ConfigErrorKind::UnknownType(t) if t == "websocket"));
    assert_eq!(
        e.to_string(),
        r#"server "s": field "type": unknown server type "websocket""#
    );
}

#[test]
fn missing_fields() {
    assert_err(
        r#"{"mcpServers": {"s": {"args": ["x"]}}}"#,
        Some("s"),
        None,
        r#"server "s": needs "command" (stdio server) or "url" (HTTP server)"#,
    );
    assert_err(
        r#"{"mcpServers": {"s": {"type": "stdio", "url": "http://x/"}}}"#,
        Some("s"),
        Some("command"),
        r#"server "s": field "command": missing"#,
    );
    assert_err(
        r#"{"mcpServers": {"s": {"type": "sse", "command": "c"}}}"#,
        Some("s"),
        Some("url"),
        r#"server "s": field "url": missing"#,
    );
}

#[test]
fn wrong_types_name_field_and_expected_type() {
    let cases = [
        (r#""command": 1"#, "command", "a string", "a number"),
        (
            r#""command": "c", "args": "x""#,
            "args",
            "an array of strings",
            "a string",
        ),
        (
            r#""command": "c", "args": ["a", true]"#,
            "args[1]",
            "a string",
            "a boolean",
        ),
        (
            r#""command": "c", "env": []"#,
            "env",
            "an object",
            "an array",
        ),
        (
            r#""command": "c", "env": {"PORT": 8080}"#,
            "env.PORT",
            "a string",
            "a number",
        ),
        (
            r#""command": "c", "cwd": {}"#,
            "cwd",
            "a string",
            "an object",
        ),
        (
            r#""type": 3, "command": "c""#,
            "type",
            "a string",
            "a number",
        ),
        (r#""url": ["x"]"#, "url", "a string", "an array"),
        (
            r#""url": "http://x/", "headers": {"H": null}"#,
            "headers.H",
            "a string",
            "null",
        ),
        (
            r#""command": "c", "disabled": "yes""#,
            "disabled",
            "a boolean",
            "a string",
        ),
    ];
    for (body, field, expected, found) in cases {
        let json = format!(r#"{{"mcpServers": {{"s": {{{body}}}}}}}"#);
        assert_err(
            &json,
            Some("s"),
            Some(field),
            &format!(r#"server "s": field "{field}": expected {expected}, found {found}"#),
        );
    }
}

#[test]
fn timeouts_must_be_non_negative_integer_millis() {
    for bad in ["-1", "1.5", "\"30s\"", "18446744073709551616"] {
        for key in ["timeout", "startupTimeout"] {
            let json = format!(r#"{{"mcpServers": {{"s": {{"command": "c", "{key}": {bad}}}}}}}"#);
            let e = parse_err(&json);
            assert_eq!(e.field.as_deref(), Some(key), "{e}");
            assert!(
                matches!(e.kind, ConfigErrorKind::WrongType { expected, .. }
                    if expected == "a non-negative integer (milliseconds)"),
                "{e}"
            );
        }
    }
    let s = only(r#"{"mcpServers": {"s": {"command": "c", "timeout": 0}}}"#);
    assert_eq!(s.timeouts.request, Some(Duration::ZERO));
}

#[test]
fn duplicate_keys_inside_a_server() {
    assert_err(
        r#"{"mcpServers": {"s": {"command": "a", "command": "b"}}}"#,
        Some("s"),
        Some("command"),
        r#"server "s": field "command": duplicate key"#,
    );
    assert_err(
        r#"{"mcpServers": {"s": {"command": "a", "env": {"K": "sekrit", "K": "x"}}}}"#,
        Some("s"),
        Some("env.K"),
        r#"server "s": field "env.K": duplicate key"#,
    );
}

#[test]
fn url_must_be_http_without_showing_it() {
    for bad in ["ftp://x/?key=sekrit", "sekrit", "", "http:/x"] {
        let json = format!(r#"{{"mcpServers": {{"s": {{"url": "{bad}"}}}}}}"#);
        let e = parse_err(&json);
        assert!(matches!(e.kind, ConfigErrorKind::InvalidUrl), "{e}");
        assert_eq!(e.field.as_deref(), Some("url"));
        assert!(!e.to_string().contains("sekrit"), "{e}");
    }
    let s = only(r#"{"mcpServers": {"s": {"url": "HTTPS://X/"}}}"#);
    assert_eq!(http(&s).url, "HTTPS://X/");
}

#[test]
fn secret_values_never_appear_in_errors() {
    let cases = [
        r#""command": "c", "env": {"K": "sekrit ${U}"}"#,
        r#""command": "c", "env": {"K": "sekrit", "N": 1}"#,
        r#""url": "http://x/", "headers": {"H": "sekrit ${U"}"#,
        r#""url": "http://x/?sekrit", "headers": {"H": 1}"#,
        r#""url": "sekrit${U}""#,
    ];
    for body in cases {
        let json = format!(r#"{{"mcpServers": {{"s": {{{body}}}}}}}"#);
        let e = parse_err(&json);
        assert!(!e.to_string().contains("sekrit"), "{e}");
        assert!(!format!("{e:?}").contains("sekrit"), "{e:?}");
    }
}

#[test]
fn a_misspelt_transport_key_is_named() {
    for (entry, key, meant) in [
        (r#"{"comand": "x"}"#, "comand", "command"),
        (r#"{"Command": "x"}"#, "Command", "command"),
        (r#"{"ulr": "http://h/"}"#, "ulr", "url"),
    ] {
        assert_err(
            &format!(r#"{{"mcpServers": {{"s": {entry}}}}}"#),
            Some("s"),
            None,
            &format!(
                r#"server "s": needs "command" (stdio server) or "url" (HTTP server): unknown key "{key}" (did you mean "{meant}"?)"#
            ),
        );
    }
}
