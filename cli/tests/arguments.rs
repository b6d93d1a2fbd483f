//! What the built `mcp` says about a command line or a `--config` file it cannot use:
//! where a config file is broken, refused `bridge` options, usage errors that a bridge keeps
//! off stdout. Nothing here needs a server to start.

mod common;

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use common::run::{json_out, mcp, stderr, stdout};

const MCP: &str = env!("CARGO_BIN_EXE_mcp");

/// The usage hint, which belongs to command-line mistakes only.
const USAGE_HINT: &str = "see `mcp --help`";

/// A file `name` holding `text` in this test process's own directory.
fn file(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("mcp-cli-arguments-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let path: PathBuf = dir.join(name);
    std::fs::write(&path, text).expect("write scratch file");
    path.display().to_string()
}

/// Exit 2, stdout empty (nothing for a bridge's host to misread), and stderr as returned.
fn refused_quietly(o: &Output) -> String {
    assert_eq!(o.status.code(), Some(2), "stderr: {}", stderr(o));
    assert_eq!(stdout(o), "", "stderr: {}", stderr(o));
    stderr(o)
}

#[test]
fn a_config_file_that_is_not_json_is_reported_at_its_line_and_column() {
    let path = file(
        "trailing-comma.json",
        "{\"mcpServers\": {\n  \"demo\": {\"command\": \"mcp\", \"args\": [\"demo-server\"],}\n}}\n",
    );
    let expected = format!("error: {path}:2:54: trailing comma\n");
    for args in [
        vec!["bridge", "--config", &path],
        vec!["--config", &path, "tools", "--all"],
        vec!["--config", &path, "info"],
    ] {
        let err = refused_quietly(&mcp(&args));
        // The place is the whole story: no usage hint, no other hint.
        assert_eq!(err, expected, "{args:?}");
    }

    let o = mcp(&["--json", "--config", &path, "tools", "--all"]);
    assert_eq!(o.status.code(), Some(2));
    let error = &json_out(&o)["error"];
    assert_eq!(error["code"], "config_error", "{error}");
    assert_eq!(error["message"], format!("{path}:2:54: trailing comma"));
    assert!(error.get("hint").is_none(), "{error}");

    let path = file("cut.json", "{\"mcpServers\": {\"a\": ");
    let err = refused_quietly(&mcp(&["bridge", "--config", &path]));
    assert_eq!(
        err,
        format!("error: {path}:1:21: EOF while parsing a value\n")
    );

    let path = file("empty.json", "");
    let err = refused_quietly(&mcp(&["bridge", "--config", &path]));
    assert!(
        err.starts_with(&format!("error: {path}: the file is empty\n")),
        "{err}"
    );
    assert!(!err.contains(USAGE_HINT), "{err}");
}

#[test]
fn a_misspelt_server_list_key_gets_a_did_you_mean_naming_the_accepted_keys() {
    for (name, key, meant) in [
        ("z.json", "mcpServerz", "mcpServers"),
        ("snake.json", "mcp_servers", "mcpServers"),
        ("capital.json", "Servers", "servers"),
    ] {
        let path = file(
            name,
            &format!(r#"{{"{key}": {{"demo": {{"command": "mcp", "args": ["demo-server"]}}}}}}"#),
        );
        let err = refused_quietly(&mcp(&["bridge", "--config", &path]));
        assert!(
            err.starts_with(&format!(
                "error: {path}: no server list: expected a top-level \"mcpServers\" object \
                 (Claude Desktop, Cursor, Claude Code) or \"servers\" object (VS Code): unknown \
                 key \"{key}\" (did you mean \"{meant}\"?)\n"
            )),
            "{err}"
        );
        assert!(
            err.contains(&format!("hint: rename \"{key}\" to \"{meant}\"")),
            "{err}"
        );
        assert!(!err.contains(USAGE_HINT), "{err}");

        let o = mcp(&["--json", "--config", &path, "tools", "--all"]);
        assert_eq!(o.status.code(), Some(2));
        let error = &json_out(&o)["error"];
        assert_eq!(error["code"], "config_error", "{error}");
        assert_eq!(error["didYouMean"], serde_json::json!([meant]), "{error}");
    }

    // A key that is no slip of either still hears which keys there are.
    let path = file("other.json", r#"{"tools": {}}"#);
    let err = refused_quietly(&mcp(&["bridge", "--config", &path]));
    assert!(
        err.contains(r#"expected a top-level "mcpServers" object"#)
            && !err.contains("did you mean"),
        "{err}"
    );
}

#[test]
fn a_server_list_beside_an_empty_one_is_named_not_just_no_servers() {
    let path = file(
        "both.json",
        r#"{"mcpServers": {}, "servers": {"demo": {"command": "mcp"}}}"#,
    );
    let err = refused_quietly(&mcp(&["bridge", "--config", &path]));
    assert_eq!(
        err,
        format!(
            "error: {path} has no servers: \"mcpServers\" is empty, and the servers under \
             \"servers\" are not read\nhint: rename \"servers\" to \"mcpServers\", replacing \
             the empty one (a file has one server list)\n"
        )
    );
    // Without a stray list: the accepted keys, still no usage hint.
    let path = file("none.json", r#"{"mcpServers": {}}"#);
    for args in [
        vec!["bridge", "--config", &path],
        vec!["--config", &path, "info"],
    ] {
        let err = refused_quietly(&mcp(&args));
        assert!(
            err.starts_with(&format!(
                "error: {path} has no servers\nhint: servers go under"
            )),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn a_broken_entry_asked_for_by_name_names_the_file_server_and_field() {
    let path = file(
        "entry.json",
        r#"{"mcpServers": {"gh": {"command": "gh-mcp", "env": {"T": "${MCP_ARGS_TEST_UNSET}"}}}}"#,
    );
    let o = Command::new(MCP)
        .args(["--config", &path, "--server", "gh", "info"])
        .env_remove("MCP_ARGS_TEST_UNSET")
        .stdin(Stdio::null())
        .output()
        .expect("run mcp");
    let err = refused_quietly(&o);
    assert_eq!(
        err,
        format!(
            "error: the config entry \"gh\" of {path} uses ${{MCP_ARGS_TEST_UNSET}} (in \
             \"env.T\"), which is not set\nhint: set it in the environment (`export \
             MCP_ARGS_TEST_UNSET=…`, or `MCP_ARGS_TEST_UNSET=… mcp …`), or write \
             ${{MCP_ARGS_TEST_UNSET:-default}} in the file\n"
        )
    );
}

#[test]
fn allow_origin_without_a_scheme_or_with_a_path_is_refused_with_the_form_to_use() {
    for (origin, says) in [
        (
            "example.com",
            "\"example.com\" has no scheme, so no browser's Origin would match it: use \
             https://example.com (an origin is a scheme, a host and a port unless it is the \
             scheme's default, as a browser sends it: https://example.com, \
             http://localhost:3000)",
        ),
        (
            "https://example.com/",
            "\"https://example.com/\" ends with a slash, which a browser's Origin never has: \
             use https://example.com",
        ),
        (
            "https://example.com/app",
            "\"https://example.com/app\" has a path: an origin has none, use https://example.com",
        ),
    ] {
        for args in [
            vec![
                "bridge",
                "--listen",
                "127.0.0.1:0",
                "--allow-origin",
                origin,
                "--",
                MCP,
                "demo-server",
            ],
            vec![
                "demo-server",
                "--listen",
                "127.0.0.1:0",
                "--allow-origin",
                origin,
            ],
        ] {
            // Refused before anything listens: no URL on stderr, exit 2 at once.
            let err = refused_quietly(&mcp(&args));
            assert!(
                err.starts_with(&format!(
                    "error: invalid value '{origin}' for '--allow-origin <ORIGIN>': {says}"
                )),
                "{args:?}: {err}"
            );
            assert!(!err.contains("http://127.0.0.1:"), "{err}");
        }
    }
}

/// The three upstream forms of `mcp bridge`, none of which is ever started by these tests
/// (`-- <missing program>`, a closed port, a file whose server is that program).
fn bridge_upstreams() -> Vec<Vec<String>> {
    let config = file(
        "bridge-upstream.json",
        r#"{"mcpServers": {"gone": {"command": "/nonexistent/mcp-args-test-server"}}}"#,
    );
    vec![
        vec!["--url".into(), "http://127.0.0.1:1/mcp".into()],
        vec!["--".into(), "/nonexistent/mcp-args-test-server".into()],
        vec!["--config".into(), config],
    ]
}

#[test]
fn bridge_refuses_the_global_options_it_would_ignore() {
    for (option, says) in [
        (
            vec!["--root", "/tmp"],
            "mcp bridge does not take --root (roots are the host's: a server's roots/list is \
             forwarded to the host; with --config --listen none are offered)",
        ),
        (
            vec!["--era", "legacy"],
            "mcp bridge does not take --era (the bridge speaks the host's protocol version",
        ),
        (
            vec!["--json"],
            "mcp bridge does not take --json (stdout carries the protocol only",
        ),
        (
            vec!["-o", "/nonexistent/mcp-args-test-out"],
            "mcp bridge does not take --output (stdout is the protocol channel to the host)",
        ),
        (
            vec!["--raw"],
            "mcp bridge does not take --raw (the bridge forwards results as they are)",
        ),
    ] {
        for upstream in bridge_upstreams() {
            // Before the subcommand and after it: the options are global.
            let upstream: Vec<&str> = upstream.iter().map(String::as_str).collect();
            let before: Vec<&str> = option
                .iter()
                .copied()
                .chain(["bridge"])
                .chain(upstream.iter().copied())
                .collect();
            let after: Vec<&str> = ["bridge"]
                .into_iter()
                .chain(option.iter().copied())
                .chain(upstream.iter().copied())
                .collect();
            for args in [before, after] {
                let err = refused_quietly(&mcp(&args));
                assert!(
                    err.starts_with(&format!("error: {says}")),
                    "{args:?}: {err}"
                );
            }
        }
    }
    // Every refused option at once: each is named, so one run tells them all.
    let err = refused_quietly(&mcp(&[
        "bridge",
        "--root",
        ".",
        "--raw",
        "--url",
        "http://127.0.0.1:1/mcp",
    ]));
    assert!(
        err.contains("--root (") && err.contains("; nor --raw ("),
        "{err}"
    );
}

#[test]
fn bridge_still_takes_the_global_options_it_uses() {
    // The host closes stdin before `initialize`: the bridge exits 0 having started nothing.
    let o = mcp(&[
        "bridge",
        "--era",
        "auto",
        "--timeout",
        "5s",
        "--max-time",
        "1m",
        "--connect-timeout",
        "5s",
        "-v",
        "--color",
        "never",
        "-e",
        "K=V",
        "--",
        "/nonexistent/mcp-args-test-server",
    ]);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    assert_eq!(stdout(&o), "");
    // `-q` and `-H` with an HTTP upstream, `--token-store` for its OAuth tokens.
    let o = mcp(&[
        "bridge",
        "-q",
        "-H",
        "X-Test: 1",
        "--token-store",
        "/nonexistent/tokens.json",
        "--url",
        "http://127.0.0.1:1/mcp",
    ]);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
}

#[test]
fn a_bridge_usage_error_never_writes_to_stdout_even_with_json() {
    for args in [
        // Refused by clap: a missing value, an unknown option, a bad value, a conflict.
        &["--json", "bridge", "--listen"][..],
        &["bridge", "--json", "--bogus"],
        &[
            "--json",
            "--timeout",
            "soon",
            "bridge",
            "--url",
            "http://127.0.0.1:1/mcp",
        ],
        &[
            "--json",
            "bridge",
            "--listen",
            "127.0.0.1:0",
            "--allow-origin",
            "example.com",
        ],
        &[
            "--json",
            "bridge",
            "--stateless",
            "--url",
            "http://127.0.0.1:1/mcp",
        ],
        // Refused after parsing: no upstream, --json itself, --allow without --config.
        &["--json", "bridge"],
        &["bridge", "--json", "--url", "http://127.0.0.1:1/mcp"],
        &["bridge", "--allow", "x*", "--url", "http://127.0.0.1:1/mcp"],
    ] {
        let err = refused_quietly(&mcp(args));
        assert!(err.starts_with("error: "), "{args:?}: {err}");
    }
    // Any other command still gets its JSON object on stdout.
    let o = mcp(&["--json", "ping", "--bogus"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(json_out(&o)["error"]["code"], "usage");
}

#[test]
fn a_task_id_with_a_file_of_several_servers_is_told_both_ways_to_name_its_server() {
    let path = file(
        "two-servers.json",
        &format!(
            r#"{{"mcpServers": {{"alpha": {{"command": "{MCP}", "args": ["demo-server"]}},
                "my beta": {{"command": "{MCP}", "args": ["demo-server"]}}}}}}"#
        ),
    );
    // A server's own id: --server, or the id as a bridge shows it (prefixed once).
    let err = refused_quietly(&mcp(&["--config", &path, "tasks", "get", "abc"]));
    assert!(
        err.starts_with(&format!(
            "error: {path} has 2 servers (alpha, my beta): say which has task \"abc\" with \
             --server NAME, or give the id as a bridge over the file shows it, SERVER/ID \
             (alpha/abc)\n"
        )),
        "{err}"
    );
    // Already SERVER/ID, of a server the file lacks: not told to prefix it again.
    let err = refused_quietly(&mcp(&["--config", &path, "tasks", "result", "gamma/abc"]));
    assert!(
        err.starts_with(&format!(
            "error: task id \"gamma/abc\" names the server \"gamma\" (a bridge's SERVER/ID), \
             which {path} does not have; its servers: alpha, my beta; with --server NAME give \
             the server's own id\n"
        )),
        "{err}"
    );
    assert!(!err.contains("alpha/gamma"), "{err}");
    // SERVER/ID of a server of the file goes to that server (percent-encoded as a bridge
    // writes it): the demo server offers no tasks, so it is its refusal, exit 4.
    for id in ["alpha/abc", "my%20beta/abc"] {
        let o = mcp(&["--json", "--config", &path, "tasks", "cancel", id]);
        assert_eq!(o.status.code(), Some(4), "{id}: {}", stderr(&o));
        let error = &json_out(&o)["error"];
        assert_eq!(error["code"], "not_offered", "{id}: {error}");
        assert_eq!(error["method"], "tasks/cancel", "{id}: {error}");
    }
}
