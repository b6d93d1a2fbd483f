//! `mcp bridge --config FILE` on stdio.

use std::io::Write as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::host::{
    BridgeHost, GUARD, MCP, names, start_bridge, test_dir, text, write_config, write_servers,
};

/// Tools, prompts and resources of both demo servers under host-visible names, each call
/// routed to its server, the broken server reported and left out.
#[test]
fn every_server_is_served_under_namespaced_names() {
    let dir = test_dir("names");
    let config = write_config(&dir);
    let mut host = start_bridge(&dir, &[]);
    let init = host.initialize(&json!({"sampling": {}}));
    assert_eq!(init["serverInfo"]["name"], "mcp-bridge");
    assert_eq!(init["capabilities"]["tools"]["listChanged"], true);
    assert_eq!(init["capabilities"]["resources"]["subscribe"], true);
    assert!(init["capabilities"]["prompts"].is_object(), "{init}");
    assert_eq!(
        host.stderr()
            .matches(r#"server "broken" failed: could not start"#)
            .count(),
        1,
        "reported once: {}",
        host.stderr()
    );

    // The names `mcp tools --all --config FILE` shows (with the same client capabilities:
    // the demo server lists `model` only to a client with sampling, as `mcp` is).
    let tools = host.tool_names();
    let listed = Command::new(MCP)
        .args(["tools", "--all", "--json", "--config"])
        .arg(&config)
        .env("XDG_CACHE_HOME", dir.join("cache-cli"))
        .output()
        .expect("run mcp tools --all");
    let listed: Value = serde_json::from_slice(&listed.stdout).expect("tools --all --json");
    assert_eq!(tools, names(&listed["tools"]));
    for name in ["alpha__echo", "alpha__slow", "beta__add", "beta__model"] {
        assert!(tools.contains(&name.to_owned()), "{name} in {tools:?}");
    }
    assert!(!tools.iter().any(|t| t.starts_with("broken__")));

    let echoed = host.call(
        "tools/call",
        json!({"name": "alpha__echo", "arguments": {"text": "to alpha"}}),
    );
    assert_eq!(text(&echoed), "to alpha");
    let added = host.call(
        "tools/call",
        json!({"name": "beta__add", "arguments": {"a": 2, "b": 40}}),
    );
    assert_eq!(text(&added), "2 + 40 = 42");

    // Progress comes back under the host's own token, before the answer.
    let id = host.request(
        "tools/call",
        json!({"name": "beta__slow", "arguments": {"steps": 3, "delay_ms": 10},
            "_meta": {"progressToken": "host-token"}}),
    );
    let (answer, before) = host.answer(id);
    assert_eq!(text(&answer["result"]), "finished 3 steps", "{answer}");
    let progress: Vec<_> = before
        .iter()
        .filter(|l| l["method"] == "notifications/progress")
        .collect();
    assert_eq!(progress.len(), 3, "{before:?}");
    assert!(
        progress
            .iter()
            .all(|p| p["params"]["progressToken"] == "host-token")
    );
    assert_eq!(progress[2]["params"]["progress"].as_f64(), Some(3.0));

    // Prompts: namespaced, and `prompts/get` reaches the server under its own name.
    let prompts = host.call("prompts/list", json!({}));
    assert_eq!(
        names(&prompts["prompts"]),
        ["alpha__summarize", "beta__summarize"]
    );
    let prompt = host.call(
        "prompts/get",
        json!({"name": "beta__summarize", "arguments": {"text": "MCP", "style": "brief"}}),
    );
    assert!(
        prompt["messages"][0]["content"]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("MCP"),
        "{prompt}"
    );

    // Resources: mcp-bridge://SERVER/URI, read back with the host-visible URI.
    let resources = host.call("resources/list", json!({}));
    let uris: Vec<_> = resources["resources"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|r| r["uri"].as_str().expect("a uri"))
        .collect();
    assert!(
        uris.contains(&"mcp-bridge://alpha/demo://readme"),
        "{uris:?}"
    );
    assert!(uris.contains(&"mcp-bridge://beta/demo://clock"), "{uris:?}");
    let read = host.call(
        "resources/read",
        json!({"uri": "mcp-bridge://beta/demo://readme"}),
    );
    assert_eq!(
        read["contents"][0]["uri"],
        "mcp-bridge://beta/demo://readme"
    );
    assert!(
        read["contents"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("demo server")
    );
    let templates = host.call("resources/templates/list", json!({}));
    assert_eq!(
        templates["resourceTemplates"][0]["uriTemplate"],
        "mcp-bridge://alpha/demo://notes/{name}"
    );
    let note = host.call(
        "resources/read",
        json!({"uri": "mcp-bridge://alpha/demo://notes/todo"}),
    );
    assert!(
        note["contents"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("todo"),
        "{note}"
    );

    // Completion of a prompt argument, routed by the prompt's host-visible name.
    let completed = host.call(
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "alpha__summarize"},
            "argument": {"name": "style", "value": "bu"}}),
    );
    assert_eq!(
        completed["completion"]["values"][0], "bullet-points",
        "{completed}"
    );

    // A resource that is not the bridge's is refused, not guessed.
    let id = host.request("resources/read", json!({"uri": "demo://readme"}));
    assert_eq!(host.answer(id).0["error"]["code"], -32602);
    assert_eq!(host.finish(), 0);
}

/// A subscription relays `resources/updated` under the host-visible URI; a server's requests
/// (sampling, elicitation) go to the host and its answers back; the host's log level reaches
/// the servers and their log messages come back marked with the server.
#[test]
fn subscriptions_and_server_requests_reach_the_host() {
    let dir = test_dir("subscribe");
    write_config(&dir);
    let mut host = start_bridge(&dir, &[]);
    host.initialize(&json!({"sampling": {}, "elicitation": {}}));
    host.call(
        "resources/subscribe",
        json!({"uri": "mcp-bridge://beta/demo://clock"}),
    );
    let updated = host.until("notifications/resources/updated");
    assert_eq!(updated["params"]["uri"], "mcp-bridge://beta/demo://clock");
    host.call(
        "resources/unsubscribe",
        json!({"uri": "mcp-bridge://beta/demo://clock"}),
    );

    let id = host.request(
        "tools/call",
        json!({"name": "alpha__model", "arguments": {"prompt": "say hi"}}),
    );
    let ask = host.until("sampling/createMessage");
    assert!(
        ask["params"]["messages"].to_string().contains("say hi"),
        "{ask}"
    );
    host.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": {
        "role": "assistant", "content": {"type": "text", "text": "hi from the host"},
        "model": "host-model"}}));
    let (answer, _) = host.answer(id);
    assert!(
        answer["result"].to_string().contains("hi from the host"),
        "{answer}"
    );

    // An elicitation: asked of the host, its answer back to the server.
    let id = host.request(
        "tools/call",
        json!({"name": "beta__ask", "arguments": {"question": "Favourite colour?"}}),
    );
    let ask = host.until("elicitation/create");
    assert_eq!(ask["params"]["message"], "Favourite colour?", "{ask}");
    host.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": {
        "action": "accept", "content": {"answer": "teal"}}}));
    let (answer, _) = host.answer(id);
    assert_eq!(text(&answer["result"]), "The user said: teal", "{answer}");

    // The host's log level goes to every server; their messages come back marked.
    host.call("logging/setLevel", json!({"level": "info"}));
    let id = host.request("tools/call", json!({"name": "beta__fail", "arguments": {}}));
    // Each server logs that its level was set, and `fail` logs a warning before its result:
    // the bridge passes each on under `SERVER/LOGGER`, a server's log line before the answer
    // it preceded.
    let (answer, before) = host.answer(id);
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let loggers: Vec<_> = before
        .iter()
        .filter(|l| l["method"] == "notifications/message")
        .map(|l| l["params"]["logger"].as_str().unwrap_or("").to_owned())
        .collect();
    assert!(loggers.contains(&"beta/tools".to_owned()), "{before:?}");
    assert!(
        loggers
            .iter()
            .all(|l| l.starts_with("alpha/") || l.starts_with("beta/")),
        "{loggers:?}"
    );
    assert_eq!(host.finish(), 0);
}

/// `--allow` / `--deny`: a tool kept out is neither listed nor callable, and its call gets
/// the same error as a name never listed.
#[test]
fn denied_tools_are_neither_listed_nor_callable() {
    let dir = test_dir("filter");
    write_config(&dir);
    let mut host = start_bridge(&dir, &["--allow", "alpha__*", "--deny", "*__fail"]);
    host.initialize(&json!({}));
    let tools = host.tool_names();
    assert_eq!(
        tools,
        [
            "alpha__echo",
            "alpha__add",
            "alpha__slow",
            "alpha__ask",
            "alpha__image"
        ]
    );

    let refused = |host: &mut BridgeHost, name: &str| {
        let id = host.request("tools/call", json!({"name": name, "arguments": {}}));
        host.answer(id).0["error"].clone()
    };
    let denied = refused(&mut host, "alpha__fail");
    let not_allowed = refused(&mut host, "beta__echo");
    let unknown = refused(&mut host, "nosuch__tool");
    assert_eq!(denied["code"], -32602);
    assert_eq!(denied["message"], "unknown tool: alpha__fail");
    assert_eq!(not_allowed["message"], "unknown tool: beta__echo");
    assert_eq!(denied["code"], unknown["code"]);
    assert_eq!(unknown["message"], "unknown tool: nosuch__tool");
    // The tools let through still work.
    let echoed = host.call(
        "tools/call",
        json!({"name": "alpha__echo", "arguments": {"text": "ok"}}),
    );
    assert_eq!(text(&echoed), "ok");
    assert_eq!(host.finish(), 0);
}

/// A pattern that matches no tool at all (`--deny echo` meant `*__echo`) is warned about on
/// stderr once the servers' tools are known, with the form of a real name; a pattern that
/// matches something is not.
#[test]
fn a_pattern_matching_no_tool_is_warned_about() {
    let dir = test_dir("unmatched");
    write_config(&dir);
    let mut host = start_bridge(&dir, &["--allow", "alpha__*", "--deny", "echo"]);
    host.initialize(&json!({}));
    let stderr = host.stderr();
    assert!(
        stderr.contains(
            r#"mcp bridge: --deny "echo" matches no tool; tool names are SERVER__TOOL, e.g. "alpha__echo""#
        ),
        "{stderr}"
    );
    assert!(
        !stderr.contains(r#"--allow "alpha__*" matches no tool"#),
        "{stderr}"
    );
    // Still only a warning: the filter applies as given.
    assert!(host.tool_names().contains(&"alpha__echo".to_owned()));
    assert_eq!(host.finish(), 0);
}

/// Usage errors before anything starts: a bad glob, --server or `-- cmd` with --config, a
/// filter without --config.
#[test]
fn usage_errors_name_the_problem() {
    let dir = test_dir("usage");
    let config = write_config(&dir);
    let config = config.to_str().expect("utf-8 path");
    for (args, expected) in [
        (
            vec!["--deny", "[oops", "--config", config],
            "--deny \"[oops\"",
        ),
        (
            vec!["--config", config, "--server", "beta"],
            "--allow 'beta__*'",
        ),
        (
            vec!["--allow", "x*", "--url", "http://127.0.0.1:9/"],
            "mcp bridge --config FILE",
        ),
        (
            vec!["--config", config, "--", "true"],
            "drop `-- <command>`",
        ),
    ] {
        let out = Command::new(MCP)
            .arg("bridge")
            .args(&args)
            .stdin(Stdio::null())
            .output()
            .expect("run mcp bridge");
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A server killed under the bridge: the host is told its tools went and came back
/// (`notifications/tools/list_changed`), and its tools answer again on the new process.
#[test]
fn a_killed_server_is_reconnected_and_the_host_told() {
    let dir = test_dir("reconnect");
    write_config(&dir);
    let mut host = start_bridge(&dir, &[]);
    host.initialize(&json!({}));
    assert!(host.tool_names().contains(&"alpha__echo".to_owned()));
    let pid_file = dir.join("alpha.pid");
    let first = std::fs::read_to_string(&pid_file).expect("alpha wrote its pid");
    let killed = Command::new("kill")
        .args(["-9", first.trim()])
        .status()
        .expect("run kill");
    assert!(killed.success());

    // Its tools leave the list...
    host.until("notifications/tools/list_changed");
    let tools = host.tool_names();
    assert!(!tools.iter().any(|t| t.starts_with("alpha__")), "{tools:?}");
    assert!(tools.contains(&"beta__echo".to_owned()));
    // ...and come back with the new process.
    host.until("notifications/tools/list_changed");
    assert!(host.tool_names().contains(&"alpha__echo".to_owned()));
    let second = std::fs::read_to_string(&pid_file).expect("pid");
    assert_ne!(first, second, "a new process");
    let echoed = host.call(
        "tools/call",
        json!({"name": "alpha__echo", "arguments": {"text": "back"}}),
    );
    assert_eq!(text(&echoed), "back");
    assert!(
        host.stderr()
            .contains(r#"server "alpha" was lost; reconnecting"#),
        "{}",
        host.stderr()
    );
    assert_eq!(host.finish(), 0);
}

/// When no server can start, the host's `initialize` is refused and the bridge exits 3.
#[test]
fn no_server_up_refuses_initialize() {
    let dir = test_dir("none");
    write_servers(
        &dir,
        json!({"broken": {"command": dir.join("nothing").display().to_string()}}),
    );
    let mut host = start_bridge(&dir, &[]);
    let answer = initialize_answer(&mut host);
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("no server"),
        "{answer}"
    );
    assert_eq!(host.finish(), 3);
}

/// A server that exits during its first connect cannot start: it is reported at once with
/// its exit status and last stderr line (not as still connecting), and the others serve;
/// when every server exits so, `initialize` is refused and the bridge exits 3.
#[test]
fn a_server_exiting_at_start_is_reported_failed() {
    let dir = test_dir("exits");
    let crash = json!({"command": "sh", "args": ["-c", "echo boom >&2; exit 1"]});
    write_servers(
        &dir,
        json!({
            "alpha": {"command": MCP, "args": ["demo-server"]},
            "crash": crash,
            "quits": {"command": "false"},
        }),
    );
    let mut host = start_bridge(&dir, &[]);
    host.initialize(&json!({}));
    let stderr = host.stderr();
    assert!(
        stderr.contains(r#"server "crash" failed: exited with code 1: boom"#),
        "{stderr}"
    );
    assert!(
        stderr.contains(r#"server "quits" failed: exited with code 1"#),
        "{stderr}"
    );
    assert!(!stderr.contains("still connecting"), "{stderr}");
    let tools = host.tool_names();
    assert!(tools.contains(&"alpha__echo".to_owned()), "{tools:?}");
    assert!(
        !tools.iter().any(|t| !t.starts_with("alpha__")),
        "{tools:?}"
    );
    assert_eq!(host.finish(), 0);

    let dir = test_dir("exits-all");
    write_servers(&dir, json!({"crash": crash, "quits": {"command": "false"}}));
    let mut host = start_bridge(&dir, &[]);
    let answer = initialize_answer(&mut host);
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("no server"),
        "{answer}"
    );
    let stderr = host.stderr();
    assert!(
        stderr.contains(r#"server "crash" failed: exited with code 1: boom"#),
        "{stderr}"
    );
    assert_eq!(host.finish(), 3);
}

/// A call to a tool of a server that is not running (it exited at start, its program does
/// not exist, its entry names an undefined variable, it is disabled) says which server, that
/// it is not running and what it last failed with: -32603 with the bridge's upstream-failure
/// data, at once, not -32602 "unknown tool". A name of no server's prefix stays unknown.
#[test]
fn a_call_to_a_server_not_running_names_it_and_its_failure() {
    let dir = test_dir("not-running");
    write_servers(
        &dir,
        json!({
            "alpha": {"command": MCP, "args": ["demo-server"]},
            "quits": {"command": "sh", "args": ["-c", "echo cannot open db >&2; exit 2"]},
            "broken": {"command": dir.join("no-such-server").display().to_string()},
            "gh": {"command": MCP, "args": ["demo-server"],
                   "env": {"TOKEN": "${MCP_TEST_UNDEFINED_VAR_F2}"}},
            "off": {"command": MCP, "args": ["demo-server"], "disabled": true},
        }),
    );
    let mut host = start_bridge(&dir, &[]);
    host.initialize(&json!({}));
    let mut error_of = |tool: &str| {
        let id = host.request(
            "tools/call",
            json!({"name": tool, "arguments": {"message": "hi"}}),
        );
        host.answer(id).0["error"].clone()
    };
    let quits = error_of("quits__echo");
    let broken = error_of("broken__echo");
    let gh = error_of("gh__echo");
    let off = error_of("off__echo");
    let unknown = error_of("nosuch__echo");
    for (error, server, why) in [
        (&quits, "quits", "exited with code 2: cannot open db"),
        (&broken, "broken", "no-such-server"),
        (&gh, "gh", "MCP_TEST_UNDEFINED_VAR_F2"),
        (&off, "off", "disabled"),
    ] {
        assert_eq!(error["code"], -32603, "{error}");
        let message = error["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(&format!(r#"server "{server}" is not running"#))
                && message.contains(why),
            "{error}"
        );
        let data = &error["data"]["mcpBridge"];
        assert_eq!(data["upstream"], server, "{error}");
        assert_eq!(data["failure"], "server_not_running", "{error}");
    }
    assert_eq!(unknown["code"], -32602, "{unknown}");
    assert_eq!(unknown["message"], "unknown tool: nosuch__echo");
    assert_eq!(host.finish(), 0);
}

/// A config file whose only entry misspells "command": the entry's problem is named with
/// the key meant, and the host's `initialize` is refused as when no server can start (exit 3).
#[test]
fn a_misspelt_entry_is_named_and_initialize_refused() {
    let dir = test_dir("typo");
    write_servers(&dir, json!({"b": {"comand": "x"}}));
    let mut host = start_bridge(&dir, &[]);
    let answer = initialize_answer(&mut host);
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains(r#"no server of the config file came up: server "b": configuration error"#),
        "{answer}"
    );
    let stderr = host.stderr();
    assert!(
        stderr.contains(r#"unknown key "comand" (did you mean "command"?)"#),
        "{stderr}"
    );
    assert_eq!(host.finish(), 3);
}

/// A server that does not come up in time is offered from the tool cache of an earlier run;
/// a call to it waits for it (here until `--timeout`), and says why it failed.
#[test]
fn a_late_server_is_offered_from_the_tool_cache() {
    let dir = test_dir("cache");
    let hang = dir.join("hang");
    let late = format!(
        "if [ -e '{}' ]; then sleep 1000; fi; exec '{MCP}' demo-server",
        hang.display()
    );
    write_servers(
        &dir,
        json!({
            "quick": {"command": MCP, "args": ["demo-server"]},
            "late": {"command": "sh", "args": ["-c", late]},
        }),
    );

    // A first run lists `late`'s tools, which fills the cache.
    let mut host = start_bridge(&dir, &[]);
    host.initialize(&json!({}));
    assert!(host.tool_names().contains(&"late__echo".to_owned()));
    drop(host.stdin.take());
    let mut first = host;
    assert_eq!(first.child.wait().expect("exit").code(), Some(0));

    // Now `late` never answers: `initialize` is answered at the deadline, and its tools are
    // there (from the cache only).
    std::fs::write(&hang, "").expect("hang flag");
    let mut host = start_bridge(&dir, &["--connect-timeout", "300ms", "--timeout", "1s"]);
    first.dir = dir.join("kept"); // the second host removes the directory
    host.initialize(&json!({}));
    let tools = host.tool_names();
    assert!(tools.contains(&"late__echo".to_owned()), "{tools:?}");
    assert!(tools.contains(&"quick__echo".to_owned()), "{tools:?}");
    assert!(
        host.stderr()
            .contains(r#"server "late" is still connecting"#),
        "{}",
        host.stderr()
    );
    let id = host.request(
        "tools/call",
        json!({"name": "late__echo", "arguments": {"text": "x"}}),
    );
    let (answer, _) = host.answer(id);
    assert_eq!(
        answer["error"]["message"], r#"mcp bridge: server "late" is still not ready after 1s"#,
        "{answer}"
    );
    let echoed = host.call(
        "tools/call",
        json!({"name": "quick__echo", "arguments": {"text": "q"}}),
    );
    assert_eq!(text(&echoed), "q");
    assert_eq!(host.finish(), 0);
}

/// The host cancelling a call cancels it at its server (`-v` traces the server's wire), and
/// the bridge goes on answering.
#[test]
fn a_cancelled_call_is_cancelled_at_its_server() {
    let dir = test_dir("cancel");
    write_config(&dir);
    let mut host = start_bridge(&dir, &["-v"]);
    host.initialize(&json!({}));
    let id = host.request(
        "tools/call",
        json!({"name": "beta__slow", "arguments": {"steps": 100, "delay_ms": 100},
            "_meta": {"progressToken": 7}}),
    );
    host.until("notifications/progress");
    host.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": id, "reason": "the user pressed stop"}}),
    );
    let started = Instant::now();
    while !host
        .stderr()
        .lines()
        .any(|l| l.starts_with("[beta] -> ") && l.contains("the user pressed stop"))
    {
        assert!(
            started.elapsed() < GUARD,
            "no cancellation upstream: {}",
            host.stderr()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let ping = host.request("ping", json!({}));
    let (_, before) = host.answer(ping);
    assert!(
        !before.iter().any(|l| l["id"] == id),
        "a cancelled call is not answered: {before:?}"
    );
    assert_eq!(host.finish(), 0);
}

/// A server whose tool list grows: `grow {name}` adds a tool and sends
/// `notifications/tools/list_changed`.
const GROWING_SERVER: &str = r#"
import json, sys
tools = [{"name": "grow", "inputSchema": {"type": "object"}}]
def send(m):
    sys.stdout.write(json.dumps(m) + "\n"); sys.stdout.flush()
for line in sys.stdin:
    req = json.loads(line)
    method, rid = req.get("method"), req.get("id")
    if rid is None:
        continue
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": rid, "result": {"protocolVersion": "2025-06-18",
              "capabilities": {"tools": {"listChanged": True}},
              "serverInfo": {"name": "growing", "version": "1"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": rid, "result": {"tools": tools}})
    elif method == "tools/call":
        name = req["params"]["name"]
        if name == "grow":
            tools.append({"name": req["params"]["arguments"]["name"], "inputSchema": {"type": "object"}})
            send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": "grown"}]}})
            send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        else:
            send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": "I am " + name}]}})
    else:
        send({"jsonrpc": "2.0", "id": rid, "result": {}})
"#;

/// A server's own `tools/list_changed`: the host is told once the new list is in place, and
/// the new tool is listed and callable under its namespaced name.
#[test]
fn a_servers_list_changed_reaches_the_host_with_the_new_list() {
    let dir = test_dir("grow");
    let script = dir.join("growing.py");
    std::fs::write(&script, GROWING_SERVER).expect("write the server");
    write_servers(
        &dir,
        json!({
            "grower": {"command": "python3", "args": [script.display().to_string()]},
            "beta": {"command": MCP, "args": ["demo-server"]},
        }),
    );
    let mut host = start_bridge(&dir, &[]);
    host.initialize(&json!({}));
    assert!(!host.tool_names().contains(&"grower__sprout".to_owned()));
    let grown = host.call(
        "tools/call",
        json!({"name": "grower__grow", "arguments": {"name": "sprout"}}),
    );
    assert_eq!(text(&grown), "grown");
    host.until("notifications/tools/list_changed");
    // Listed at once after the notification: the manager had the new list before it.
    assert!(host.tool_names().contains(&"grower__sprout".to_owned()));
    let called = host.call(
        "tools/call",
        json!({"name": "grower__sprout", "arguments": {}}),
    );
    assert_eq!(text(&called), "I am sprout");
    assert_eq!(host.finish(), 0);
}

/// A host that pipes its requests in and closes stdin at once still reads every answer.
#[test]
fn a_piped_script_gets_every_answer() {
    let dir = test_dir("piped");
    let config = write_config(&dir);
    let script = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "script", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "beta__add", "arguments": {"a": 2, "b": 3}}}),
    ];
    let mut child = Command::new(MCP)
        .args(["bridge", "--config"])
        .arg(&config)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn mcp bridge");
    let mut stdin = child.stdin.take().expect("piped stdin");
    for line in &script {
        writeln!(stdin, "{line}").expect("write");
    }
    drop(stdin);
    let out = child.wait_with_output().expect("the bridge exits");
    assert_eq!(out.status.code(), Some(0));
    let answers: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON lines"))
        .collect();
    let ids: std::collections::BTreeSet<_> = answers.iter().map(|a| a["id"].to_string()).collect();
    assert_eq!(
        ids.into_iter().collect::<Vec<_>>(),
        ["1", "2", "3"],
        "{answers:?}"
    );
    let sum = answers.iter().find(|a| a["id"] == 3).expect("answer 3");
    assert_eq!(text(&sum["result"]), "2 + 3 = 5");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The whole answer to the host's `initialize` (as `host-app` 3.1, protocol 2025-06-18), for
/// a test that expects it refused.
fn initialize_answer(host: &mut BridgeHost) -> Value {
    let id = host.request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "host-app", "version": "3.1"}}),
    );
    host.answer(id).0
}

/// An HTTP entry that goes down and comes back: a call meanwhile names the entry and its URL
/// (`server "evh" (URL): could not connect: connection refused`, not `could not connect to
/// evh`), and stderr says when it was lost and when it is ready again, as for a stdio entry.
#[test]
fn a_lost_http_entry_is_named_with_its_url_and_its_return_said() {
    let demo = crate::common::listening::Listening::demo();
    let url = demo.url.clone();
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let dir = test_dir("lost-http-entry");
    write_servers(&dir, json!({"evh": {"url": url}}));
    let mut host = start_bridge(&dir, &[]);
    host.initialize(&json!({}));
    let echo = json!({"name": "evh__echo", "arguments": {"text": "hi"}});
    host.call("tools/call", echo.clone());
    drop(demo);
    let id = host.request("tools/call", echo.clone());
    let (answer, _) = host.answer(id);
    assert_eq!(
        answer["error"]["message"],
        format!(r#"mcp bridge: server "evh" ({url}): could not connect: connection refused"#),
        "{answer}"
    );
    assert_eq!(
        answer["error"]["data"]["mcpBridge"]["failure"],
        "connection_refused"
    );
    let lost = r#"mcp bridge: server "evh" was lost; reconnecting (attempt 1)"#;
    assert!(host.stderr().contains(lost), "{}", host.stderr());
    let _back = crate::common::listening::Listening::demo_on(&addr);
    host.call("tools/call", echo);
    let stderr = host.stderr();
    let ready = r#"mcp bridge: server "evh" is ready"#;
    assert!(
        stderr.contains(ready) && stderr.find(lost) < stderr.rfind(ready),
        "{stderr}"
    );
    assert_eq!(host.finish(), 0);
}
