//! The bridge passes server-to-host messages and the host's answers on as the server and the
//! host wrote them: npm server-everything (over stdio, so nothing binds a port but the
//! bridge's own 127.0.0.1 listener) asked directly and through every bridge mode (`-- cmd`,
//! `--config`, `--url` in front of `--listen -- cmd` and of `--listen --config`), by a host
//! that keeps the raw lines.
//!
//! - progress: `{"progress":1,"total":2,"progressToken":"p"}`, integers and member order as
//!   the server wrote them (not `1.0`, not sorted);
//! - `elicitation/create`: its params byte for byte (the form's fields in the server's order);
//! - the host's elicitation answer reaches the server in the host's member order (the server
//!   quotes what it got);
//! - the bridge's `--timeout` restarts at each progress update: a 3 s operation with progress
//!   every 0.5 s completes under a 1.5 s timeout.
//!
//! The peer's command comes from `.peers/env.sh` (`MCP_PEER_EVERYTHING`), as for
//! `everything.rs`.

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};

mod common;
use common::bridge_host::{GUARD, MCP, scratch_dir};
use common::everything;
use common::listening::Listening;

/// A host that keeps every line the server (or the bridge) writes as text.
struct RawHost {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
}

/// One line's method, id and params, the params as written.
#[derive(Deserialize)]
struct Line<'a> {
    #[serde(default)]
    method: Option<String>,
    #[serde(default)]
    id: Option<Value>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
}

/// What a host saw of one run: progress params and the elicitation's params as written, and
/// the elicitation tool's result (where the server quotes the answer it got).
#[derive(Debug)]
struct Seen {
    progress: Vec<String>,
    elicitation: String,
    elicited_result: Value,
}

impl RawHost {
    fn spawn(mut command: Command) -> Self {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn the host's server");
        let stdout = child.stdout.take().expect("piped stdout");
        let stdin = child.stdin.take().expect("piped stdin");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        RawHost {
            child,
            stdin,
            lines,
        }
    }

    fn send(&mut self, message: &str) {
        writeln!(self.stdin, "{message}").expect("write");
        self.stdin.flush().expect("flush");
    }

    /// Lines until the answer to `id`: the answer, and the lines before it. An
    /// `elicitation/create` on the way is answered with `name` before `check` (not sorted).
    fn until_answer(&mut self, id: i64) -> (String, Vec<String>) {
        let mut before = Vec::new();
        loop {
            let line = self
                .lines
                .recv_timeout(GUARD)
                .expect("a line before the guard");
            let parsed: Line<'_> = serde_json::from_str(&line).expect("a JSON-RPC line");
            if parsed.method.as_deref() == Some("elicitation/create") {
                let request_id = parsed.id.clone().expect("a request");
                self.send(&format!(
                    r#"{{"jsonrpc":"2.0","id":{request_id},"result":{{"action":"accept","content":{{"name":"n","check":true}}}}}}"#
                ));
            }
            if parsed.method.is_none() && parsed.id == Some(json!(id)) {
                return (line, before);
            }
            before.push(line);
        }
    }

    /// The handshake (with the elicitation capability), a long operation with progress and
    /// an elicitation; tool names prefixed with `prefix` (`--config` namespaces them).
    fn session(mut self, prefix: &str) -> Seen {
        self.send(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"elicitation":{}},"clientInfo":{"name":"host","version":"1"}}}"#,
        );
        let (answer, _) = self.until_answer(1);
        assert!(answer.contains("\"result\""), "{answer}");
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        self.send(&format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"{prefix}trigger-long-running-operation","arguments":{{"duration":1,"steps":2}},"_meta":{{"progressToken":"p"}}}}}}"#
        ));
        let (answer, before) = self.until_answer(2);
        assert!(
            answer.contains("Long running operation completed"),
            "{answer}"
        );
        let progress = raw_params_of(&before, "notifications/progress");
        self.send(&format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"{prefix}trigger-elicitation-request","arguments":{{}}}}}}"#
        ));
        let (answer, before) = self.until_answer(3);
        let elicitation = raw_params_of(&before, "elicitation/create");
        assert_eq!(elicitation.len(), 1, "{before:?}");
        let answer: Value = serde_json::from_str(&answer).expect("JSON");
        Seen {
            progress,
            elicitation: elicitation.into_iter().next().unwrap_or_default(),
            elicited_result: answer["result"].clone(),
        }
    }
}

impl Drop for RawHost {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The params, as written, of the lines of `method`.
fn raw_params_of(lines: &[String], method: &str) -> Vec<String> {
    lines
        .iter()
        .filter_map(|l| {
            let line: Line<'_> = serde_json::from_str(l).ok()?;
            (line.method.as_deref() == Some(method))
                .then(|| line.params.map(|p| p.get().to_owned()))?
        })
        .collect()
}

fn command(args: &[&str], server: &[String]) -> Command {
    let mut c = Command::new(MCP);
    c.args(args).args(server);
    c
}

/// What server-everything writes to a host directly.
fn direct(server: &[String]) -> Seen {
    let mut c = Command::new(&server[0]);
    c.args(&server[1..]);
    RawHost::spawn(c).session("")
}

/// `seen` is what the host saw directly: the same progress and elicitation bytes, and the
/// host's answer quoted back in its own order.
fn assert_as_direct(mode: &str, seen: &Seen, direct: &Seen) {
    assert_eq!(seen.progress, direct.progress, "{mode}: progress");
    assert!(
        seen.progress[0].starts_with(r#"{"progress":1,"total":2"#),
        "{mode}: {:?}",
        seen.progress
    );
    assert_eq!(seen.elicitation, direct.elicitation, "{mode}: elicitation");
    let quoted = seen.elicited_result.to_string();
    assert!(
        quoted.contains(r#"\"name\": \"n\",\n    \"check\": true"#),
        "{mode}: the host's answer in its order: {quoted}"
    );
}

#[test]
fn server_messages_and_host_answers_pass_every_bridge_mode_as_written() {
    let Some(server) = everything() else { return };
    let direct = direct(&server);
    // Integers as written, members in the server's order, the form's fields unsorted.
    assert!(
        direct.progress[0].starts_with(r#"{"progress":1,"total":2"#),
        "{:?}",
        direct.progress
    );
    let at = |field: &str| direct.elicitation.find(field).expect(field);
    assert!(at("\"name\"") < at("\"check\""), "{}", direct.elicitation);

    let stdio = RawHost::spawn(command(&["bridge", "--"], &server)).session("");
    assert_as_direct("bridge -- cmd", &stdio, &direct);

    let dir = scratch_dir("bridge-faithful", "config");
    let config = dir.join("servers.json");
    let entry = json!({"mcpServers": {"ev": {"command": server[0], "args": server[1..]}}});
    std::fs::write(&config, entry.to_string()).expect("write the config");
    let config = config.to_str().expect("a UTF-8 path");
    let aggregated = RawHost::spawn(command(&["bridge", "--config", config], &[])).session("ev__");
    assert_as_direct("bridge --config", &aggregated, &direct);
    // `--listen --config`: the servers are shared, their requests go to the session calling.
    let listening = Listening::start(
        &["bridge", "--listen", "127.0.0.1:0", "--config", config],
        &[],
    );
    let shared = RawHost::spawn(command(&["bridge", "--url", &listening.url], &[])).session("ev__");
    assert_as_direct("bridge --url to bridge --listen --config", &shared, &direct);
    let _ = std::fs::remove_dir_all(&dir);

    // `--url` in front of `--listen`: both bridges in the way.
    let mut listen_args = vec!["bridge", "--listen", "127.0.0.1:0", "--"];
    listen_args.extend(server.iter().map(String::as_str));
    let listening = Listening::start(&listen_args, &[]).url_first();
    assert!(
        listening.url.starts_with("http://127.0.0.1:"),
        "{}",
        listening.url
    );
    let chained = RawHost::spawn(command(&["bridge", "--url", &listening.url], &[])).session("");
    assert_as_direct("bridge --url to bridge --listen", &chained, &direct);
}

/// Progress every 0.5 s restarts the bridge's 1.5 s `--timeout`: the 3 s operation ends with
/// its result, not a timeout.
#[test]
fn progress_restarts_the_bridges_timeout() {
    let Some(server) = everything() else { return };
    let mut host = RawHost::spawn(command(&["--timeout", "1500ms", "bridge", "--"], &server));
    host.send(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"host","version":"1"}}}"#,
    );
    host.until_answer(1);
    host.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    host.send(
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"trigger-long-running-operation","arguments":{"duration":3,"steps":6},"_meta":{"progressToken":7}}}"#,
    );
    let (answer, before) = host.until_answer(2);
    assert!(
        answer.contains("Long running operation completed"),
        "{answer}"
    );
    assert_eq!(
        raw_params_of(&before, "notifications/progress").len(),
        6,
        "{before:?}"
    );
}

/// A server (Python, stdio) that writes its requests as literal text, members unsorted and
/// numbers spelled their own way: `ask_related` sends a sampling request whose related-task
/// `_meta` names its task `t-7`, `ask_as_task` a task-augmented elicitation whose answer it
/// then fetches with `tasks/result`; each tool's text is the line that answered it, as the
/// server read it.
const WRITING_SERVER: &str = r#"
import json, sys
def send(text):
    sys.stdout.write(text + "\n")
    sys.stdout.flush()
def answer_to(i):
    for line in sys.stdin:
        m = json.loads(line)
        if m.get("id") == i and "method" not in m:
            return line.strip(), m
RELATED = '{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":' + sys.argv[1] + '}'
AS_TASK = '{"jsonrpc":"2.0","id":"e1","method":"elicitation/create","params":' + sys.argv[2] + '}'
for line in sys.stdin:
    msg = json.loads(line)
    m, i = msg.get("method"), msg.get("id")
    if i is None:
        continue
    if m == "initialize":
        r = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
             "serverInfo": {"name": "writer", "version": "1"}}
    elif m == "tools/list":
        r = {"tools": [{"name": n, "inputSchema": {"type": "object"}}
                       for n in ["ask_related", "ask_as_task"]]}
    elif m == "tools/call" and msg["params"]["name"] == "ask_related":
        send(RELATED)
        text, _ = answer_to("s1")
        r = {"content": [{"type": "text", "text": text}]}
    elif m == "tools/call":
        send(AS_TASK)
        _, created = answer_to("e1")
        task = created["result"]["task"]["taskId"]
        send(json.dumps({"jsonrpc": "2.0", "id": "r1", "method": "tasks/result",
                         "params": {"taskId": task}}))
        text, _ = answer_to("r1")
        r = {"content": [{"type": "text", "text": text}]}
    else:
        send(json.dumps({"jsonrpc": "2.0", "id": i, "error": {"code": -32601, "message": "no"}}))
        continue
    send(json.dumps({"jsonrpc": "2.0", "id": i, "result": r}))
"#;

/// The sampling params `WRITING_SERVER` sends: a related task, numbers as `0.50` and `2.0`,
/// `_meta`'s members unsorted.
const RELATED_PARAMS: &str = r#"{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":100,"temperature":0.50,"_meta":{"z":1,"io.modelcontextprotocol/related-task":{"taskId":"t-7"},"a":2.0}}"#;

/// The task-augmented elicitation params `WRITING_SERVER` sends.
const AS_TASK_PARAMS: &str = r#"{"task":{"ttl":60000},"message":"?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"},"check":{"type":"boolean"}}},"_meta":{"b":1.0}}"#;

/// The host's answers, members unsorted and `1.50` as written.
const SAMPLED: &str = r#"{"role":"assistant","model":"m","content":{"type":"text","text":"ok"},"stopReason":"endTurn","n":1.50}"#;
const ELICITED: &str = r#"{"action":"accept","content":{"name":"n","check":true}}"#;

/// What a host saw of `WRITING_SERVER` through a bridge: the params of each request it was
/// asked, as written, and each tool's text (the line the server read).
#[derive(Debug, Default)]
struct SeenAsked {
    sampling: Vec<String>,
    elicitation: Vec<String>,
    tool_texts: Vec<String>,
}

impl RawHost {
    /// Answers the requests of the bridge until the answer to `id` (a tool call) and
    /// returns its text: sampling with [`SAMPLED`], elicitation with [`ELICITED`] (or, when
    /// it comes as a task, a task of the host's, then [`ELICITED`] for its `tasks/result`).
    fn answering_until(&mut self, id: i64, seen: &mut SeenAsked) -> String {
        loop {
            let line = self
                .lines
                .recv_timeout(GUARD)
                .expect("a line before the guard");
            let parsed: Line<'_> = serde_json::from_str(&line).expect("a JSON-RPC line");
            let params = parsed
                .params
                .map(|p| p.get().to_owned())
                .unwrap_or_default();
            let answer = match parsed.method.as_deref() {
                Some("sampling/createMessage") => {
                    seen.sampling.push(params);
                    SAMPLED.to_owned()
                }
                Some("elicitation/create") => {
                    let as_task =
                        serde_json::from_str::<Value>(&params).is_ok_and(|p| p["task"].is_object());
                    seen.elicitation.push(params);
                    if as_task {
                        r#"{"task":{"taskId":"h-1","status":"working","createdAt":"2025-11-25T00:00:00Z","ttl":60000}}"#.to_owned()
                    } else {
                        ELICITED.to_owned()
                    }
                }
                Some("tasks/result") => ELICITED.to_owned(),
                Some(_) if parsed.id.is_some() => r#"{}"#.to_owned(),
                Some(_) => continue,
                None if parsed.id == Some(json!(id)) => {
                    let answer: Value = serde_json::from_str(&line).expect("JSON");
                    return answer["result"]["content"][0]["text"]
                        .as_str()
                        .unwrap_or_else(|| panic!("a tool text: {line}"))
                        .to_owned();
                }
                None => continue,
            };
            let request_id = parsed.id.expect("a request");
            self.send(&format!(
                r#"{{"jsonrpc":"2.0","id":{request_id},"result":{answer}}}"#
            ));
        }
    }

    /// The handshake with `capabilities`, then `tools` (of the server named `py`) called in
    /// turn.
    fn asked_by_writer(mut self, capabilities: &str, tools: &[&str]) -> SeenAsked {
        self.send(&format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{capabilities},"clientInfo":{{"name":"host","version":"1"}}}}}}"#
        ));
        let mut seen = SeenAsked::default();
        let (answer, _) = self.until_answer(1);
        assert!(answer.contains("\"result\""), "{answer}");
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        for (n, tool) in (10..).zip(tools) {
            self.send(&format!(
                r#"{{"jsonrpc":"2.0","id":{n},"method":"tools/call","params":{{"name":"py__{tool}","arguments":{{}}}}}}"#
            ));
            let text = self.answering_until(n, &mut seen);
            seen.tool_texts.push(text);
        }
        seen
    }
}

/// A server's request that names a related task, and its task-augmented requests, pass
/// through `--config` (stdio) and `--listen --config` as the server wrote them but for what
/// the bridge must change: the related task's id (made `py/t-7`), and the `task` of a request
/// the host session does not take as a task; the host's answers reach the server as written.
#[test]
fn related_task_and_task_augmented_requests_pass_as_written() {
    let dir = scratch_dir("bridge-faithful", "tasks");
    let script = dir.join("server.py");
    std::fs::write(&script, WRITING_SERVER).expect("write the server");
    let entry = json!({"mcpServers": {"py": {"command": "python3",
        "args": [script.display().to_string(), RELATED_PARAMS, AS_TASK_PARAMS]}}});
    let config = dir.join("servers.json");
    std::fs::write(&config, entry.to_string()).expect("write the config");
    let config = config.to_str().expect("a UTF-8 path");
    let renamed = RELATED_PARAMS.replace(r#""taskId":"t-7""#, r#""taskId":"py/t-7""#);
    let untasked = AS_TASK_PARAMS.replace(r#""task":{"ttl":60000},"#, "");
    assert_ne!(renamed, RELATED_PARAMS);
    assert_ne!(untasked, AS_TASK_PARAMS);
    // The host's members as written, before the related-task `_meta` that a task's
    // messages carry (the bridge's client core puts it in).
    let quoted = |text: &str, answer: &str| {
        let members = &answer[..answer.len() - 1];
        assert!(
            text.contains(members),
            "the host's answer as written: {text}"
        );
    };

    // Over stdio the host is asked directly.
    let host = RawHost::spawn(command(&["bridge", "--config", config], &[]));
    let seen = host.asked_by_writer(r#"{"sampling":{}}"#, &["ask_related"]);
    assert_eq!(seen.sampling, [renamed.as_str()], "bridge --config");
    quoted(&seen.tool_texts[0], SAMPLED);

    // `--listen --config`, behind a `--url` bridge: the session calling gets the requests.
    let listening = Listening::start(
        &["bridge", "--listen", "127.0.0.1:0", "--config", config],
        &[],
    );
    let url = listening.url.clone();
    let host = RawHost::spawn(command(&["bridge", "--url", &url], &[]));
    let seen = host.asked_by_writer(
        r#"{"sampling":{},"elicitation":{}}"#,
        &["ask_related", "ask_as_task"],
    );
    let mode = "bridge --listen --config, a session without tasks";
    assert_eq!(seen.sampling, [renamed.as_str()], "{mode}");
    assert_eq!(seen.elicitation, [untasked.as_str()], "{mode}");
    quoted(&seen.tool_texts[0], SAMPLED);
    quoted(&seen.tool_texts[1], ELICITED);

    // A session that takes elicitation as a task gets the `task` too.
    let host = RawHost::spawn(command(&["bridge", "--url", &url], &[]));
    let seen = host.asked_by_writer(
        r#"{"elicitation":{},"tasks":{"requests":{"elicitation":{"create":{}}}}}"#,
        &["ask_as_task"],
    );
    let mode = "bridge --listen --config, a session running tasks";
    assert_eq!(seen.elicitation, [AS_TASK_PARAMS], "{mode}");
    assert!(
        seen.tool_texts[0].contains(r#""action":"accept""#),
        "{mode}: {:?}",
        seen.tool_texts
    );
    let _ = std::fs::remove_dir_all(&dir);
}
