//! `mcp --config FILE tools --all` and `call server__tool`: every server of a config file
//! through the manager, with the built binary's demo server twice and one failing server.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::bridge_host::{MCP, group_alive, scratch_dir};
use common::python_server::{tools_server, write_script};
use common::run::{mcp_in as mcp, text, write_servers};
use serde_json::Value;

/// A fresh directory for this test's config file and cache.
fn dir(name: &str) -> PathBuf {
    scratch_dir("cli-many", name)
}

/// Two demo servers (`demo_a`, `demo-b`) and one whose program does not exist.
fn config(dir: &Path) -> PathBuf {
    write_servers(
        dir,
        serde_json::json!({
            "demo_a": { "command": MCP, "args": ["demo-server"] },
            "demo-b": { "command": MCP, "args": ["demo-server"] },
            "broken": { "command": "/nonexistent" }
        }),
    )
}

#[test]
fn tools_all_lists_every_server_and_reports_the_failing_one() {
    let d = dir("list");
    let cfg = config(&d);
    let p = cfg.to_str().unwrap();
    let o = mcp(&d, &["--config", p, "tools", "--all"]);
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "stdout:\n{out}\nstderr:\n{err}");
    assert!(out.starts_with("NAME"), "{out}");
    assert!(out.contains("demo_a__echo"), "{out}");
    assert!(out.contains("demo-b__echo"), "{out}");
    assert!(out.contains("Returns the text it is given."), "{out}");
    assert!(out.contains("  demo_a: ready (7 tools)"), "{out}");
    assert!(out.contains("  demo-b: ready (7 tools)"), "{out}");
    assert!(out.contains("  broken: failed: "), "{out}");
    assert!(err.contains("server \"broken\" failed"), "{err}");

    let o = mcp(&d, &["--config", p, "tools", "--all", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
    let tools = v["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 14, "{v:#}");
    let mut names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), 14, "namespaced names are distinct: {names:?}");
    let echo_a = tools.iter().find(|t| t["name"] == "demo_a__echo").unwrap();
    assert_eq!(echo_a["server"], "demo_a");
    assert_eq!(echo_a["serverToolName"], "echo");
    assert_eq!(echo_a["fromCache"], false);
    assert!(echo_a["inputSchema"].is_object());
    let servers = v["servers"].as_array().unwrap();
    let mut status: Vec<(&str, &str)> = servers
        .iter()
        .map(|s| (s["name"].as_str().unwrap(), s["status"].as_str().unwrap()))
        .collect();
    status.sort_unstable();
    assert_eq!(
        status,
        [
            ("broken", "failed"),
            ("demo-b", "ready"),
            ("demo_a", "ready")
        ]
    );
    let broken = servers.iter().find(|s| s["name"] == "broken").unwrap();
    assert!(
        broken["reason"]
            .as_str()
            .unwrap()
            .contains("could not start"),
        "{v:#}"
    );
    assert_eq!(broken["tools"], 0);
}

#[test]
fn all_servers_failing_exits_3() {
    let d = dir("fail");
    let path = d.join("servers.json");
    std::fs::write(
        &path,
        r#"{"mcpServers": {"broken": {"command": "/nonexistent"}}}"#,
    )
    .unwrap();
    let o = mcp(&d, &["--config", path.to_str().unwrap(), "tools", "--all"]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("  broken: failed: "));
    assert!(text(&o.stderr).contains("no server of the config file came up"));
}

#[test]
fn call_routes_a_namespaced_name_to_its_server() {
    let d = dir("call");
    let cfg = config(&d);
    let p = cfg.to_str().unwrap();
    let o = mcp(&d, &["--config", p, "call", "demo_a__echo", "text=hi"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout).trim(), "hi");
    let o = mcp(
        &d,
        &["--config", p, "call", "demo-b__add", "a=2", "b=3", "--json"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["structuredContent"]["sum"], 5.0, "{v:#}");
    // A server's own name is not a namespaced name: not found, with the namespaced one offered.
    let o = mcp(&d, &["--config", p, "call", "echo", "text=hi"]);
    assert_eq!(o.status.code(), Some(4));
    assert!(
        text(&o.stderr).contains("demo_a__echo"),
        "{}",
        text(&o.stderr)
    );
    // With --server the file's single server is used, by its own tool name, as before.
    let o = mcp(
        &d,
        &[
            "--config", p, "--server", "demo-b", "call", "echo", "text=yo",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout).trim(), "yo");
}

#[test]
fn call_starts_only_the_named_server_and_reports_its_failure() {
    let d = dir("only");
    let marker = d.join("other-started");
    let path = d.join("servers.json");
    let config = serde_json::json!({ "mcpServers": {
        "demo_a": { "command": MCP, "args": ["demo-server"] },
        // Would leave a mark if it were started (and then never answer).
        "other": { "command": "sh", "args": ["-c", format!("touch '{}'; sleep 60", marker.display())] },
        "broken": { "command": "sh", "args": ["-c", "echo boom >&2; exit 4"] }
    }});
    std::fs::write(&path, config.to_string()).unwrap();
    let p = path.to_str().unwrap();
    let o = mcp(&d, &["--config", p, "call", "demo_a__echo", "text=hi"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout).trim(), "hi");
    assert!(
        !marker.exists(),
        "a server the call does not name was started"
    );
    // The named server's failure is the error, not an unknown tool (a usage error).
    let o = mcp(
        &d,
        &["--config", p, "--json", "call", "broken__echo", "text=hi"],
    );
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stdout));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let message = v["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("server \"broken\" failed: exited with code 4: boom"),
        "{v:#}"
    );
    assert!(
        !marker.exists(),
        "a server the call does not name was started"
    );
}

#[test]
fn a_namespaced_call_is_the_servers_own_call() {
    let d = dir("typed");
    let path = d.join("servers.json");
    let config = serde_json::json!({ "mcpServers": {
        "demo": { "command": MCP, "args": ["demo-server"] },
        "github": { "command": "x", "env": { "T": "${MCP_TEST_UNSET_VARIABLE}" } },
        "down": { "url": "http://127.0.0.1:1/mcp" }
    }});
    std::fs::write(&path, config.to_string()).unwrap();
    let p = path.to_str().unwrap();
    // Arguments typed from the tool's schema: `text` is a string, so 123 stays "123".
    let o = mcp(&d, &["--config", p, "call", "demo__echo", "text=123"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), "123");
    // A missing required argument is caught before anything is sent.
    let o = mcp(&d, &["--config", p, "call", "demo__add", "a=1"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("missing required argument `b`"),
        "{}",
        text(&o.stderr)
    );
    // A typo gets the closest namespaced names.
    let o = mcp(&d, &["--config", p, "--json", "call", "demo__ecko"]);
    assert_eq!(o.status.code(), Some(4));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["error"]["code"], "tool_not_found", "{v:#}");
    assert_eq!(v["error"]["didYouMean"][0], "demo__echo", "{v:#}");
    // An entry that cannot start names its own problem.
    let o = mcp(&d, &["--config", p, "call", "github__echo", "text=1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("undefined variable MCP_TEST_UNSET_VARIABLE"),
        "{}",
        text(&o.stderr)
    );
    // An HTTP server that refuses: the same error as with --url.
    let o = mcp(&d, &["--config", p, "--json", "call", "down__echo"]);
    assert_eq!(o.status.code(), Some(3));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["error"]["code"], "connection_refused", "{v:#}");
    // And in the list of every server, in the same words.
    let o = mcp(&d, &["--config", p, "tools", "--all"]);
    assert!(
        text(&o.stdout).contains(
            "down: failed: could not connect to http://127.0.0.1:1/mcp: connection refused"
        ),
        "{}",
        text(&o.stdout)
    );
}

#[test]
fn verbose_traces_each_server_under_its_name() {
    let d = dir("trace");
    let cfg = config(&d);
    let p = cfg.to_str().unwrap();
    let o = mcp(&d, &["-v", "--config", p, "tools", "--all"]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    for server in ["demo_a", "demo-b"] {
        assert!(err.contains(&format!("[{server}] -> {{\"id\":")), "{err}");
        assert!(err.contains(&format!("[{server}] <- {{")), "{err}");
    }
    // The trace is on stderr only: stdout is the list.
    assert!(!text(&o.stdout).contains("->"), "{}", text(&o.stdout));
}

#[test]
fn config_without_server_is_a_usage_error_for_other_commands() {
    let d = dir("usage");
    let cfg = config(&d);
    let o = mcp(&d, &["--config", cfg.to_str().unwrap(), "ping"]);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(err.contains("has 3 servers"), "{err}");
    assert!(err.contains("pick one with --server"), "{err}");
    for name in ["demo_a", "demo-b", "broken"] {
        assert!(err.contains(name), "{err}");
    }
}

#[test]
fn all_needs_config_alone() {
    let d = dir("alone");
    let cfg = config(&d);
    let p = cfg.to_str().unwrap();
    let o = mcp(&d, &["tools", "--all", "--", MCP, "demo-server"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("add --config"),
        "{}",
        text(&o.stderr)
    );
    let o = mcp(&d, &["--config", p, "--server", "demo_a", "tools", "--all"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("drop --server"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn config_mistakes_name_the_command_or_variable_that_fixes_them() {
    let d = dir("mistakes");
    let cfg = config(&d);
    let p = cfg.to_str().unwrap();
    // A misspelt namespaced tool: the hint names the listing that works with this file.
    let o = mcp(&d, &["--config", p, "call", "demo_a__ad", "a=1", "b=2"]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(4), "{err}");
    assert!(err.contains("did you mean `demo_a__add`"), "{err}");
    assert!(
        err.contains(&format!(
            "`mcp --config {p} tools --all` lists every server's tools"
        )),
        "{err}"
    );
    // An undefined ${VAR}: named with its entry and field, and how to set it.
    let broken = d.join("unset.json");
    let config = serde_json::json!({ "mcpServers": {
        "demo": { "command": MCP, "args": ["demo-server"], "env": { "K": "${MCP_TEST_UNSET_VAR}" } }
    }});
    std::fs::write(&broken, config.to_string()).unwrap();
    let o = Command::new(MCP)
        .args(["--config", broken.to_str().unwrap(), "tools"])
        .env_remove("MCP_TEST_UNSET_VAR")
        .stdin(Stdio::null())
        .output()
        .expect("run mcp");
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("the config entry \"demo\"")
            && err.contains("${MCP_TEST_UNSET_VAR} (in \"env.K\"), which is not set")
            && err.contains("export MCP_TEST_UNSET_VAR="),
        "{err}"
    );
}

#[test]
fn a_server_with_one_tool_is_ready_with_1_tool() {
    let d = dir("one");
    // A stdio server (Python) with exactly one tool.
    let one_tool = tools_server(
        "one",
        r#"[{"name": "only", "inputSchema": {"type": "object"}}]"#,
        None,
    );
    let script = write_script(&d, "one.py", &one_tool);
    let cfg = d.join("one.json");
    let config = serde_json::json!({ "mcpServers": {
        "one": { "command": "python3", "args": [script] },
        "demo": { "command": MCP, "args": ["demo-server"] }
    }});
    std::fs::write(&cfg, config.to_string()).unwrap();
    let o = mcp(&d, &["--config", cfg.to_str().unwrap(), "tools", "--all"]);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}{}", text(&o.stderr));
    assert!(out.contains("  one: ready (1 tool)\n"), "{out}");
    assert!(out.contains("  demo: ready (7 tools)\n"), "{out}");
}

/// Servers that never answer, one of them ignoring SIGTERM: `tools --all` gives up on them
/// at `--connect-timeout` and ends soon after it (its servers are stopped at once, with short
/// graces, their process groups killed), not after the driver's full shutdown schedule of
/// each (seconds more); no process of theirs is left behind.
#[test]
fn servers_that_never_answer_hold_the_exit_only_briefly_past_the_timeout() {
    let d = dir("silent");
    let server = |name: &str, trap: &str| {
        let pid = d.join(format!("{name}.pid"));
        let script = format!("echo $$ > '{}'; {trap} sleep 1000", pid.display());
        serde_json::json!({ "command": "sh", "args": ["-c", script] })
    };
    let config = serde_json::json!({ "mcpServers": {
        "quiet": server("quiet", ""),
        "stubborn": server("stubborn", "trap '' TERM;"),
    }});
    let path = d.join("servers.json");
    std::fs::write(&path, config.to_string()).unwrap();
    let timeout = std::time::Duration::from_secs(1);
    let started = std::time::Instant::now();
    let o = mcp(
        &d,
        &[
            "--config",
            path.to_str().unwrap(),
            "--connect-timeout",
            "1",
            "tools",
            "--all",
        ],
    );
    let took = started.elapsed();
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(err.contains("server \"stubborn\" timed out"), "{err}");
    // Generous: the shutdown's own bound is 1.5 s; the driver's default schedule alone
    // would add 4 s for the server that ignores SIGTERM.
    let bound = timeout + std::time::Duration::from_millis(2500);
    assert!(
        took < bound,
        "ended {took:?} after the start, past {bound:?}: {err}"
    );
    for name in ["quiet", "stubborn"] {
        let pgid = std::fs::read_to_string(d.join(format!("{name}.pid"))).expect("its pid");
        let pgid: i32 = pgid.trim().parse().expect("a pid");
        let waiting = std::time::Instant::now();
        // An anti-hang guard: the group was killed; its last process may still be reaped.
        while group_alive(pgid) {
            assert!(
                waiting.elapsed() < std::time::Duration::from_secs(10),
                "server {name}'s process group {pgid} outlived the command"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}
