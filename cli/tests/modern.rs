//! `mcp demo-server --modern` speaks protocol 2026-07-28 (`server/discover` and the
//! per-request `_meta` envelope) beside the initialize era; without `--modern` it speaks only
//! the initialize era. Runs the built `mcp` against the built `mcp demo-server`.

use std::process::{Command, Output, Stdio};

use serde_json::Value;

const MCP: &str = env!("CARGO_BIN_EXE_mcp");

/// `mcp ARGS -- <mcp> demo-server SERVER_ARGS`, with no terminal.
fn run(args: &[&str], server_args: &[&str]) -> Output {
    Command::new(MCP)
        .args(args)
        .args(["--", MCP, "demo-server"])
        .args(server_args)
        .stdin(Stdio::null())
        .output()
        .expect("run mcp")
}

fn json(o: &Output) -> Value {
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}",
            String::from_utf8_lossy(&o.stdout)
        )
    })
}

#[test]
fn a_modern_client_discovers_the_modern_demo_server() {
    let info = json(&run(&["--era", "modern", "info", "--json"], &["--modern"]));
    assert_eq!(info["protocolVersion"], "2026-07-28");
    assert_eq!(info["serverInfo"]["name"], "mcp-demo");
    assert_eq!(info["capabilities"]["tools"]["listChanged"], false);
    // The tool list, as any client sees it (nothing that needs a server-to-client request:
    // the revision has none).
    let tools = json(&run(&["--era", "modern", "tools", "--json"], &["--modern"]));
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .or(tools.as_array())
        .expect("a tool list")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        names.contains(&"echo") && names.contains(&"slow"),
        "{names:?}"
    );
    assert!(!names.contains(&"model"), "{names:?}");
}

#[test]
fn a_modern_tool_call_carries_result_type_and_server_info() {
    let result = json(&run(
        &[
            "--era",
            "modern",
            "--json",
            "call",
            "slow",
            "steps=2",
            "delay_ms=1",
        ],
        &["--modern"],
    ));
    assert_eq!(result["resultType"], "complete");
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "mcp-demo"
    );
    assert_eq!(result["content"][0]["text"], "finished 2 steps");
}

#[test]
fn an_auto_client_picks_2026_only_when_the_server_speaks_it() {
    let modern = json(&run(&["info", "--json"], &["--modern"]));
    assert_eq!(modern["protocolVersion"], "2026-07-28");
    let legacy = json(&run(&["info", "--json"], &[]));
    assert_eq!(legacy["protocolVersion"], "2025-11-25");
}

#[test]
fn ping_and_log_level_on_2026_say_the_protocol_lacks_them() {
    for args in [&["--json", "ping"][..], &["--json", "log-level", "debug"]] {
        let o = run(args, &["--modern"]);
        // Not a usage error: the user typed nothing wrong.
        assert_eq!(o.status.code(), Some(4), "{args:?}");
        let error = &serde_json::from_slice::<Value>(&o.stdout).expect("a JSON error")["error"];
        assert_eq!(error["code"], "not_offered", "{error}");
        let message = error["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("speaks protocol 2026-07-28, which has no"),
            "{message}"
        );
        assert!(
            error["hint"]
                .as_str()
                .unwrap_or_default()
                .contains("--era legacy"),
            "{error}"
        );
    }
    // The hint's way out works with a server that also speaks an older version.
    let o = run(&["--era", "legacy", "ping"], &["--modern"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // `info` says what `logging` means in this protocol.
    let o = run(&["info"], &["--modern"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("logging (per request only: no log-level)"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}

#[test]
fn a_modern_only_client_is_refused_by_the_default_demo_server_with_a_clear_error() {
    let o = run(&["--era", "modern", "tools"], &[]);
    assert_ne!(o.status.code(), Some(0));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("server/discover"), "{err}");
    assert!(err.contains("--era"), "{err}");
}

/// The PyPI `mcp` 2.3.0 client (`tests/clients/py_modern_client.py`) discovers
/// `mcp demo-server --modern` over stdio and speaks 2026-07-28 to it: tools listed, a call, a
/// call with progress. Needs the interop peers (`. .peers/env.sh`; `MCP_SKIP_INTEROP=1` skips).
#[test]
fn the_python_sdk_client_speaks_2026_to_the_demo_server() {
    let Some(peers) = mcp_tests::peers::peers() else {
        return;
    };
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/clients/py_modern_client.py"
    );
    let o = Command::new(&peers.python2)
        .args([script, MCP, "demo-server", "--modern"])
        .env("MCP_CLIENT_GUARD_SECS", "60")
        .stdin(Stdio::null())
        .output()
        .expect("run the Python client");
    let out = String::from_utf8_lossy(&o.stdout);
    let steps: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let names: Vec<&str> = steps.iter().filter_map(|s| s["step"].as_str()).collect();
    assert_eq!(
        names,
        ["discover", "list_tools", "echo", "progress"],
        "{out}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(steps.iter().all(|s| s["ok"] == true), "{out}");
    assert_eq!(steps[0]["detail"]["negotiated"], "2026-07-28");
    assert_eq!(steps[0]["detail"]["server"], "mcp-demo");
    assert_eq!(o.status.code(), Some(0));
}

/// `mcp bridge` speaks the initialize era to its host (as to the upstream): a 2026 host's
/// `server/discover` is answered `-32601`, so it falls back to `initialize` (before
/// `initialize` nothing goes upstream, so no server is needed here).
#[test]
fn the_bridge_answers_discover_with_method_not_found() {
    use std::io::Write as _;
    let mut child = Command::new(MCP)
        .args(["bridge", "--url", "http://127.0.0.1:9/mcp"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn mcp bridge");
    let discover = r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let mut stdin = child.stdin.take().expect("piped stdin");
    writeln!(stdin, "{discover}").expect("write");
    drop(stdin);
    let out = child
        .wait_with_output()
        .expect("the bridge exits when stdin closes");
    let answer: Value = serde_json::from_slice(&out.stdout).expect("one JSON line");
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["error"]["code"], -32601, "{answer}");
}

/// The longest a listen test waits for the demo server before it fails (never reached when
/// things work: the clock ticks every second).
const HANG_GUARD: std::time::Duration = std::time::Duration::from_secs(60);

/// The lines `child` writes to stdout, as they come.
fn lines_of(child: &mut std::process::Child) -> std::sync::mpsc::Receiver<String> {
    use std::io::BufRead;
    let stdout = child.stdout.take().expect("piped stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// The next line from `lines` as JSON; kills `pid` and fails when none comes in time.
fn next_json(lines: &std::sync::mpsc::Receiver<String>, pid: u32) -> Value {
    let Ok(line) = lines.recv_timeout(HANG_GUARD) else {
        let _ = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
        panic!("nothing from the server within {HANG_GUARD:?}");
    };
    serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
}

/// A client speaking 2026-07-28 by hand to `mcp demo-server --modern` over stdio: a listen
/// for `demo://clock` is acknowledged first, then the clock's updates arrive tagged with the
/// listen's id; the client's `notifications/cancelled` ends the listen.
#[test]
fn a_listen_on_the_modern_demo_server_gets_the_clocks_updates() {
    use std::io::Write;
    let mut child = Command::new(MCP)
        .args(["demo-server", "--modern"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run mcp demo-server");
    let pid = child.id();
    let lines = lines_of(&mut child);
    let mut stdin = child.stdin.take().expect("piped stdin");
    let listen = r#"{"jsonrpc":"2.0","id":"clock-1","method":"subscriptions/listen","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"notifications":{"toolsListChanged":true,"resourceSubscriptions":["demo://clock"]}}}"#;
    writeln!(stdin, "{listen}").expect("write the listen");
    let ack = next_json(&lines, pid);
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "clock-1"
    );
    // The demo's tools list never changes (listChanged: false): only the clock is honoured.
    assert_eq!(
        ack["params"]["notifications"],
        serde_json::json!({"resourceSubscriptions": ["demo://clock"]})
    );
    let update = next_json(&lines, pid);
    assert_eq!(update["method"], "notifications/resources/updated");
    assert_eq!(update["params"]["uri"], "demo://clock");
    assert_eq!(
        update["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "clock-1"
    );
    let cancel =
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"clock-1"}}"#;
    writeln!(stdin, "{cancel}").expect("write the cancel");
    drop(stdin);
    let o = child.wait_with_output().expect("the server exits");
    assert_eq!(o.status.code(), Some(0));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("ended: Cancelled"), "{err}");
    // A cancelled listen gets no answer: nothing after it carries its id as a response.
    while let Ok(line) = lines.recv_timeout(HANG_GUARD) {
        let v: Value = serde_json::from_str(&line).expect("JSON");
        assert!(
            v.get("id").is_none(),
            "an answer to the cancelled listen: {v}"
        );
    }
}

/// `mcp --era modern watch --subscribe demo://clock` against `mcp demo-server --modern`: the
/// subscription is a `subscriptions/listen`, and the clock's updates reach the command.
#[cfg(unix)]
#[test]
fn watch_subscribe_listens_on_the_modern_demo_server() {
    let mut child = Command::new(MCP)
        .args(["--era", "modern", "-v", "watch", "--json"])
        .args([
            "--subscribe",
            "demo://clock",
            "--",
            MCP,
            "demo-server",
            "--modern",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run mcp watch");
    let pid = child.id();
    let lines = lines_of(&mut child);
    let update = loop {
        let v = next_json(&lines, pid);
        if v["method"] == "notifications/resources/updated" {
            break v;
        }
    };
    assert_eq!(update["params"]["uri"], "demo://clock");
    let interrupted = Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .expect("kill -INT");
    assert!(interrupted.success());
    let o = child.wait_with_output().expect("mcp exits");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert!(err.contains("subscriptions/listen"), "{err}");
    assert!(!err.contains("resources/subscribe"), "{err}");
}
