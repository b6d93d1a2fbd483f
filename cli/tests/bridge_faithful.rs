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
