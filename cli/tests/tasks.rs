//! `mcp tasks` and task-augmented `mcp call` on the built binary:
//!
//! - a server that does not offer tasks (the demo server) gets `not_offered`, exit 4, for
//!   `tasks`, `tasks get|result|cancel`, with nothing sent;
//! - against npm `@modelcontextprotocol/server-everything` over stdio: in one `mcp shell`
//!   session, a `simulate-research-query` task is listed by `tasks`, shown by `tasks get`, its
//!   result printed by `tasks result` (`--json`: the tool result, as `mcp call --json` prints
//!   it), and `tasks cancel` of the finished task is the server's refusal; an unknown task's
//!   id is the server's error (exit 4) with a hint to `mcp tasks`; with `--config FILE`, a
//!   bridge's `SERVER/ID` goes to that server of the file with the server's own id;
//! - Ctrl-C during `mcp call` of that task-required tool sends `tasks/cancel` for the task.
//!
//! The peer's command comes from `.peers/env.sh` (`MCP_PEER_EVERYTHING`); without it these
//! tests fail naming `scripts/test`, unless `MCP_SKIP_INTEROP=1` is set (then they say they
//! were skipped and pass). One test runs the server over Streamable HTTP, which binds every
//! interface: it runs only inside `scripts/netns-run` (which sets `MCP_NETNS=1`); outside, it
//! fails naming `scripts/test`, or is skipped with `MCP_SKIP_INTEROP=1`, as every such test
//! (`mcp_tests::peers::require_netns`). Waits are anti-hang guards.

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

mod common;
use common::everything;
use common::run::{demo, text};

const MCP: &str = env!("CARGO_BIN_EXE_mcp");

/// The longest any wait below may take before the test gives up.
const GUARD: Duration = Duration::from_secs(90);

#[test]
fn help_and_completions_know_the_tasks_commands() {
    let o = Command::new(MCP)
        .args(["tasks", "--help"])
        .output()
        .expect("run mcp");
    // Help wraps to the terminal: compare with the line breaks folded into spaces.
    let help = text(&o.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    for word in ["get", "result", "cancel", "not_offered", "mcp shell"] {
        assert!(help.contains(word), "{word}: {help}");
    }
    let o = Command::new(MCP)
        .args(["completions", "bash"])
        .output()
        .expect("run mcp");
    let script = text(&o.stdout);
    assert!(
        script.contains("mcp__subcmd__tasks__subcmd__cancel"),
        "{script}"
    );
    assert!(
        script.contains("mcp__subcmd__tasks__subcmd__result"),
        "{script}"
    );
}

#[test]
fn a_server_without_tasks_is_not_offered_with_a_stable_code() {
    let o = demo(&["tasks"]);
    assert_eq!(o.status.code(), Some(4), "{}", text(&o.stderr));
    let stderr = text(&o.stderr);
    assert!(
        stderr
            .contains("mcp-demo does not offer tasks/list: its capabilities have no `tasks.list`"),
        "{stderr}"
    );
    assert!(stderr.contains("hint: `mcp info`"), "{stderr}");
    assert!(o.stdout.is_empty(), "{}", text(&o.stdout));

    for (args, method) in [
        (&["--json", "tasks"][..], "tasks/list"),
        (&["--json", "tasks", "get", "t1"], "tasks/get"),
        (&["--json", "tasks", "result", "t1"], "tasks/result"),
        (&["--json", "tasks", "cancel", "t1"], "tasks/cancel"),
    ] {
        let o = demo(args);
        assert_eq!(o.status.code(), Some(4), "{args:?}: {}", text(&o.stderr));
        let error: Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
        assert_eq!(error["error"]["code"], "not_offered", "{error}");
        assert_eq!(error["error"]["exit"], 4, "{error}");
        assert_eq!(error["error"]["method"], method, "{error}");
    }
}

/// An `mcp shell` session fed one command at a time, reading each command's JSON output.
struct Shell {
    child: Child,
    stdin: ChildStdin,
    /// Lines of the shell's stdout, read by a thread so that a wait can be bounded.
    lines: mpsc::Receiver<String>,
}

impl Shell {
    fn start(server: &[String]) -> Shell {
        let mut child = Command::new(MCP)
            .args(["shell", "--"])
            .args(server)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("run mcp shell");
        let stdin = child.stdin.take().expect("piped");
        let stdout = BufReader::new(child.stdout.take().expect("piped"));
        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in stdout.lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Shell {
            child,
            stdin,
            lines,
        }
    }

    fn send(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").expect("shell stdin");
    }

    /// Sends `line` and reads the one JSON value it prints on stdout (compact on one line,
    /// or pretty over several).
    fn json(&mut self, line: &str) -> Value {
        self.send(line);
        let deadline = Instant::now() + GUARD;
        let mut text = String::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let next = self.lines.recv_timeout(left);
            let l = next.unwrap_or_else(|e| panic!("no JSON for {line:?} ({e}): {text}"));
            text.push_str(&l);
            text.push('\n');
            if let Ok(v) = serde_json::from_str::<Value>(&text) {
                return v;
            }
        }
    }

    fn finish(mut self) -> Option<i32> {
        drop(self.stdin);
        let deadline = Instant::now() + GUARD;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status.code();
            }
            if Instant::now() >= deadline {
                let _ = self.child.kill();
                panic!("mcp shell did not exit");
            }
            thread::sleep(Duration::from_millis(20));
        }
    }
}

#[test]
fn tasks_lists_gets_and_fetches_the_result_of_a_task_in_one_session() {
    let Some(server) = everything() else { return };
    let mut shell = Shell::start(&server);
    let called = shell.json("call simulate-research-query topic=rust --json");
    let report = called["content"][0]["text"].as_str().unwrap_or_default();
    assert!(report.contains("# Research Report: rust"), "{called}");
    assert!(
        called.get("task").is_none(),
        "the final result, not the task: {called}"
    );

    let listed = shell.json("tasks --json");
    let tasks = listed["tasks"].as_array().expect("a tasks array");
    assert_eq!(tasks.len(), 1, "{listed}");
    assert_eq!(tasks[0]["status"], "completed", "{listed}");
    let id = tasks[0]["taskId"].as_str().expect("an id").to_owned();

    let got = shell.json(&format!("tasks get {id} --json"));
    assert_eq!(got["taskId"], id.as_str(), "{got}");
    assert_eq!(got["status"], "completed", "{got}");

    let result = shell.json(&format!("tasks result {id} --json"));
    assert_eq!(
        result["content"], called["content"],
        "the same result as the call's"
    );

    // A finished task cannot be cancelled: the server's refusal (on stderr), nothing changed.
    shell.send(&format!("tasks cancel {id} --json"));
    let after = shell.json(&format!("tasks get {id} --json"));
    assert_eq!(after["status"], "completed", "{after}");
    assert_eq!(shell.finish(), Some(0), "the last command's exit code");
}

#[test]
fn an_unknown_task_is_the_servers_refusal_with_a_hint() {
    let Some(server) = everything() else { return };
    let o = Command::new(MCP)
        .args(["--json", "tasks", "get", "no-such-task", "--"])
        .args(&server)
        .stdin(Stdio::null())
        .output()
        .expect("run mcp");
    assert_eq!(o.status.code(), Some(4), "{}", text(&o.stderr));
    let error: Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    assert_eq!(error["error"]["method"], "tasks/get", "{error}");
    assert_eq!(error["error"]["rpcCode"], -32602, "{error}");
    let hint = error["error"]["hint"].as_str().unwrap_or_default();
    assert!(hint.contains("`mcp tasks` lists"), "{error}");
}

#[cfg(unix)]
#[test]
fn ctrl_c_during_a_task_sends_tasks_cancel() {
    let Some(server) = everything() else { return };
    let dir = std::env::temp_dir().join(format!("mcp-cli-tasks-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let log = dir.join("received.jsonl");
    // `tee` records every line the server receives on its stdin.
    let mut mcp = Command::new(MCP)
        .args(["call", "simulate-research-query", "topic=rust", "--"])
        .args([
            "sh",
            "-c",
            r#"tee -a "$0" | "$@""#,
            log.to_str().expect("utf-8"),
        ])
        .args(&server)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run mcp");
    let received = || std::fs::read_to_string(&log).unwrap_or_default();
    let deadline = Instant::now() + GUARD;
    // The first poll: the task exists and `mcp` follows it.
    while !received().contains(r#""method":"tasks/get""#) {
        assert!(Instant::now() < deadline, "no tasks/get: {}", received());
        thread::sleep(Duration::from_millis(20));
    }
    let status = Command::new("kill")
        .args(["-INT", &mcp.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    let status = loop {
        if let Some(status) = mcp.try_wait().expect("wait") {
            break status;
        }
        assert!(Instant::now() < deadline, "mcp did not exit");
        thread::sleep(Duration::from_millis(20));
    };
    let output = mcp.wait_with_output().expect("output");
    assert_eq!(status.code(), Some(130), "{}", text(&output.stderr));
    assert!(output.stdout.is_empty(), "{}", text(&output.stdout));

    let lines: Vec<Value> = received()
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    let get = lines
        .iter()
        .find(|m| m["method"] == "tasks/get")
        .expect("polled");
    let cancel = lines
        .iter()
        .find(|m| m["method"] == "tasks/cancel")
        .unwrap_or_else(|| panic!("no tasks/cancel: {lines:#?}"));
    assert_eq!(cancel["params"]["taskId"], get["params"]["taskId"]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// npm server-everything in its Streamable HTTP mode on a free port of this (loopback-only)
/// network namespace; killed on drop.
struct HttpEverything {
    child: Child,
    url: String,
}

impl HttpEverything {
    /// `None` when the peer is missing (and skipping was asked for) or when not inside
    /// `scripts/netns-run`: the server binds every interface, so it runs only there.
    fn start() -> Option<Self> {
        let server = everything()?;
        // The rule of every test whose peer binds every interface: fails outside the
        // namespace naming `scripts/test`, skips with `MCP_SKIP_INTEROP=1`.
        if !mcp_tests::peers::require_netns() {
            return None;
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let child = Command::new(&server[0])
            .args(&server[1..])
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start server-everything");
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < GUARD,
                "server-everything did not listen"
            );
            thread::sleep(Duration::from_millis(50));
        }
        Some(HttpEverything {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        })
    }
}

impl Drop for HttpEverything {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_task_tool_completes_through_mcp_call_over_streamable_http() {
    let Some(server) = HttpEverything::start() else {
        return;
    };
    let o = Command::new(MCP)
        .args([
            "--url",
            &server.url,
            "--json",
            "call",
            "simulate-research-query",
            "topic=rust",
        ])
        .stdin(Stdio::null())
        .output()
        .expect("run mcp");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).expect("one JSON result");
    assert!(
        v["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("rust")),
        "{v:#}"
    );
    assert_ne!(v["isError"], true, "{v:#}");
}

#[test]
fn the_shell_shows_a_calls_task_statuses_only_as_the_calls_status() {
    let Some(server) = everything() else { return };
    let mut child = Command::new(MCP)
        .args(["shell", "--"])
        .args(&server)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run mcp shell");
    let mut stdin = child.stdin.take().expect("piped");
    writeln!(stdin, "call simulate-research-query topic=rust").expect("shell stdin");
    // The end of input ends the shell once the call has ended.
    drop(stdin);
    let o = child.wait_with_output().expect("mcp shell output");
    let (stdout, stderr) = (text(&o.stdout), text(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert!(stdout.contains("# Research Report: rust"), "{stdout}");
    // The server sends `notifications/tasks/status` for the call's task (the statuses the
    // call follows): none is printed as a notification of its own.
    assert!(!stderr.contains("tasks/status"), "{stderr}");
    assert!(!stderr.contains("taskId"), "{stderr}");
    assert!(!stderr.contains("task "), "{stderr}");
}

#[test]
fn a_bridges_server_slash_id_goes_to_that_server_with_its_own_id() {
    let Some(server) = everything() else { return };
    let dir = std::env::temp_dir().join(format!("mcp-cli-tasks-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let config = dir.join("two.json");
    let entry = serde_json::json!({"command": server[0], "args": server[1..]});
    let file = serde_json::json!({"mcpServers": {
        "alpha": entry,
        "beta": {"command": MCP, "args": ["demo-server"]},
    }});
    std::fs::write(&config, file.to_string()).expect("write the config");
    // `alpha/ID` as `mcp bridge --config` shows alpha's task `ID`.
    let o = Command::new(MCP)
        .args(["-v", "--json", "--config"])
        .arg(&config)
        .args(["tasks", "get", "alpha/no-such-task"])
        .stdin(Stdio::null())
        .output()
        .expect("run mcp");
    let stderr = text(&o.stderr);
    assert_eq!(o.status.code(), Some(4), "{stderr}");
    let error: Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    assert_eq!(error["error"]["method"], "tasks/get", "{error}");
    assert_eq!(error["error"]["rpcCode"], -32602, "{error}");
    // The server was asked about its own id, once, without the bridge's prefix.
    assert!(stderr.contains(r#""taskId":"no-such-task""#), "{stderr}");
    assert!(!stderr.contains(r#""taskId":"alpha/"#), "{stderr}");
}
