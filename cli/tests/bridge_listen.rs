//! `mcp bridge --listen 127.0.0.1:0 -- cmd` as hosts use it over Streamable HTTP: the built
//! binary in front of `mcp demo-server` started through `sh`, which records every child's
//! process group id and what the bridge sent it. Driven by our own client (`mcp --url`) and
//! by raw HTTP/1.1 requests: each session gets its own child, DELETE ends it (its running
//! call cancelled upstream), a child's death closes only its session, the bearer token and
//! the Origin check hold, and the stateless mode shares one upstream.

mod common;

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::bridge_host::group_alive;
use serde_json::{Value, json};

/// The anti-hang guard of every wait (never reached when the bridge works).
const GUARD: Duration = Duration::from_secs(30);

const MCP: &str = env!("CARGO_BIN_EXE_mcp");

fn test_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mcp-bridge-listen-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// The running `mcp bridge --listen`, its URL and its scratch directory.
struct Listener {
    child: Child,
    url: String,
    dir: PathBuf,
    /// The reader of stderr after the URL line: it ends with the bridge and returns the lines.
    stderr: Option<std::thread::JoinHandle<Vec<String>>>,
}

impl Listener {
    /// Starts `mcp bridge --listen 127.0.0.1:0 [extra] -- sh -c '…demo-server'`; every child
    /// appends its process group id to `groups` and its input to `upstream.log`.
    fn start(name: &str, extra: &[&str], env: &[(&str, &str)]) -> Self {
        let dir = test_dir(name);
        let script = format!(
            "echo $$ >> '{groups}'; tee -a '{log}' | '{MCP}' demo-server",
            groups = dir.join("groups").display(),
            log = dir.join("upstream.log").display(),
        );
        let mut child = Command::new(MCP)
            .args(["bridge", "--listen", "127.0.0.1:0"])
            .args(extra)
            .args(["--", "sh", "-c", &script])
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn mcp bridge --listen");
        let mut stderr = BufReader::new(child.stderr.take().expect("piped stderr"));
        let mut line = String::new();
        stderr
            .read_line(&mut line)
            .expect("the bridge's first line");
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no URL in {line:?}"))
            .to_owned();
        // The rest of stderr goes on to the test's own, and is kept for `stop`.
        let stderr = std::thread::spawn(move || {
            let mut lines = Vec::new();
            for line in stderr.lines().map_while(Result::ok) {
                eprintln!("{line}");
                lines.push(line);
            }
            lines
        });
        Listener {
            child,
            url,
            dir,
            stderr: Some(stderr),
        }
    }

    /// The live children's process groups.
    fn live_groups(&self) -> Vec<i32> {
        std::fs::read_to_string(self.dir.join("groups"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .filter(|&g| group_alive(g))
            .collect()
    }

    /// Waits until `n` children are alive and returns their groups.
    fn wait_groups(&self, n: usize) -> Vec<i32> {
        let started = Instant::now();
        loop {
            let live = self.live_groups();
            if live.len() == n {
                return live;
            }
            assert!(
                started.elapsed() < GUARD,
                "expected {n} live children, have {live:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn upstream_log(&self) -> Vec<Value> {
        std::fs::read_to_string(self.dir.join("upstream.log"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    fn wait_upstream(&self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        let started = Instant::now();
        loop {
            if let Some(m) = self.upstream_log().into_iter().find(|m| pred(m)) {
                return m;
            }
            assert!(
                started.elapsed() < GUARD,
                "the server never got {what}: {:?}",
                self.upstream_log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        for g in self.live_groups() {
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{g}")])
                .status();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// One HTTP/1.1 exchange's answer: status, header fields (lower-case names), the JSON-RPC
/// messages of the body (a JSON body, or the `data:` of SSE events).
struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    messages: Vec<Value>,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// The host and port of `url` (`http://127.0.0.1:PORT/mcp`).
fn authority(url: &str) -> &str {
    let rest = url.strip_prefix("http://").expect("an http URL");
    rest.split('/').next().expect("a host")
}

/// Sends one request (`Connection: close`) and reads the whole answer.
fn exchange(url: &str, method: &str, headers: &[(&str, &str)], body: Option<&Value>) -> Reply {
    let mut stream = start_exchange(url, method, headers, body);
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("read the answer");
    parse_reply(&raw)
}

/// Sends one request and returns the open connection, the answer unread.
fn start_exchange(
    url: &str,
    method: &str,
    headers: &[(&str, &str)],
    body: Option<&Value>,
) -> TcpStream {
    let host = authority(url);
    let mut stream = TcpStream::connect(host).expect("connect to the bridge");
    stream.set_read_timeout(Some(GUARD)).expect("read timeout");
    let body = body.map(Value::to_string).unwrap_or_default();
    let mut head = format!(
        "{method} /mcp HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
        body.len()
    );
    if !body.is_empty() {
        head.push_str("Content-Type: application/json\r\n");
    }
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    stream
        .write_all(format!("{head}{body}").as_bytes())
        .expect("send the request");
    stream
}

fn parse_reply(raw: &[u8]) -> Reply {
    let text = String::from_utf8_lossy(raw);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {head:?}"));
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"));
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_owned()
    };
    let messages = if body.trim_start().starts_with('{') {
        vec![serde_json::from_str(body.trim()).expect("a JSON body")]
    } else {
        body.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str(d.trim()).ok())
            .collect()
    };
    Reply {
        status,
        headers,
        messages,
    }
}

/// The body of a chunked transfer coding.
fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if size == 0 || rest.len() < size {
            break;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].trim_start_matches("\r\n");
    }
    out
}

fn initialize_body(name: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": name, "version": "1.0"}}})
}

/// Opens a session as host `name`: initialize, then initialized; returns its session id.
fn open_session(url: &str, name: &str, headers: &[(&str, &str)]) -> String {
    let init = exchange(url, "POST", headers, Some(&initialize_body(name)));
    assert_eq!(init.status, 200, "{:?}", init.messages);
    assert_eq!(
        init.messages[0]["result"]["serverInfo"]["name"], "mcp-demo",
        "{:?}",
        init.messages
    );
    let session = init
        .header("mcp-session-id")
        .expect("a session id")
        .to_owned();
    let mut with_session = headers.to_vec();
    with_session.push(("Mcp-Session-Id", &session));
    with_session.push(("MCP-Protocol-Version", "2025-06-18"));
    let ready = exchange(
        url,
        "POST",
        &with_session,
        Some(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"})),
    );
    assert_eq!(ready.status, 202);
    session
}

fn call(url: &str, session: &str, id: i64, tool: &str, arguments: &Value) -> Reply {
    exchange(
        url,
        "POST",
        &[
            ("Mcp-Session-Id", session),
            ("MCP-Protocol-Version", "2025-06-18"),
        ],
        Some(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}})),
    )
}

#[test]
fn our_own_client_uses_the_bridge_over_http() {
    let bridge = Listener::start("client", &[], &[]);
    let out = Command::new(MCP)
        .args([
            "--url",
            &bridge.url,
            "call",
            "--json",
            "echo",
            "text=over http",
        ])
        .output()
        .expect("run mcp call");
    assert!(out.status.success(), "{out:?}");
    let result: Value = serde_json::from_slice(&out.stdout).expect("JSON output");
    assert_eq!(result["content"][0]["text"], "over http", "{result}");
    // The session's upstream saw our client's identity, not the bridge's.
    let init = bridge.wait_upstream("our client's initialize", |m| {
        m["method"] == "initialize" && m["params"]["clientInfo"]["name"] != "mcp-bridge"
    });
    assert_eq!(init["params"]["clientInfo"]["name"], "mcp-term", "{init}");

    let slow = Command::new(MCP)
        .args([
            "--url",
            &bridge.url,
            "call",
            "--json",
            "slow",
            "steps=2",
            "delay_ms=1",
        ])
        .output()
        .expect("run mcp call");
    assert!(slow.status.success(), "{slow:?}");
    let result: Value = serde_json::from_slice(&slow.stdout).expect("JSON output");
    assert_eq!(result["content"][0]["text"], "finished 2 steps", "{result}");
    // Each client closed its session (DELETE): no child is left.
    bridge.wait_groups(0);
}

#[test]
fn each_session_has_its_own_child_and_delete_ends_it_cancelling_its_call() {
    let bridge = Listener::start("sessions", &[], &[]);
    // No child before a host arrives.
    assert!(bridge.live_groups().is_empty(), "no startup connection");
    let first = open_session(&bridge.url, "host-one", &[]);
    let second = open_session(&bridge.url, "host-two", &[]);
    let groups = bridge.wait_groups(2);

    let echoed = call(&bridge.url, &second, 2, "echo", &json!({"text": "two"}));
    assert_eq!(
        echoed.messages.last().expect("an answer")["result"]["content"][0]["text"],
        "two"
    );

    // A long call on the first session, then its DELETE: the call is cancelled upstream
    // and the first child ends; the second lives on.
    let url = bridge.url.clone();
    let running = start_exchange(
        &url,
        "POST",
        &[
            ("Mcp-Session-Id", &first),
            ("MCP-Protocol-Version", "2025-06-18"),
        ],
        Some(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "slow", "arguments": {"steps": 100, "delay_ms": 1000}}})),
    );
    let slow = bridge.wait_upstream("the slow call", |m| {
        m["method"] == "tools/call" && m["params"]["name"] == "slow"
    });
    let deleted = exchange(&bridge.url, "DELETE", &[("Mcp-Session-Id", &first)], None);
    assert_eq!(deleted.status, 200);
    let cancelled = bridge.wait_upstream("the cancellation", |m| {
        m["method"] == "notifications/cancelled"
    });
    assert_eq!(cancelled["params"]["requestId"], slow["id"], "{cancelled}");
    assert_eq!(
        cancelled["params"]["reason"], "the host disconnected",
        "{cancelled}"
    );
    drop(running);
    let left = bridge.wait_groups(1);
    assert!(groups.contains(&left[0]));

    // The ended session is unknown now; the other one still answers.
    let gone = call(&bridge.url, &first, 4, "echo", &json!({"text": "x"}));
    assert_eq!(gone.status, 404);
    let still = call(&bridge.url, &second, 5, "echo", &json!({"text": "still"}));
    assert_eq!(
        still.messages.last().expect("an answer")["result"]["content"][0]["text"],
        "still"
    );
}

#[test]
fn a_dead_child_closes_its_session_only() {
    let bridge = Listener::start("dies", &[], &[]);
    bridge.wait_groups(0);
    let first = open_session(&bridge.url, "host-one", &[]);
    let second = open_session(&bridge.url, "host-two", &[]);
    let groups = bridge.wait_groups(2);
    // Which child is the first session's: the one whose input has host-one's initialize
    // cannot be told from a shared log, so kill either and find which session died.
    let killed = groups[0];
    Command::new("kill")
        .args(["-KILL", "--", &format!("-{killed}")])
        .status()
        .expect("run kill");
    bridge.wait_groups(1);
    let started = Instant::now();
    let (dead, alive) = loop {
        let a = call(&bridge.url, &first, 2, "echo", &json!({"text": "a"}));
        let b = call(&bridge.url, &second, 3, "echo", &json!({"text": "b"}));
        match (a.status, b.status) {
            (404, 200) => break (a, b),
            (200, 404) => break (b, a),
            _ => assert!(
                started.elapsed() < GUARD,
                "no session was closed: {} {}",
                a.status,
                b.status
            ),
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(dead.status, 404);
    assert!(alive.messages.last().expect("an answer")["result"]["content"][0]["text"].is_string());
    // The bridge itself serves on.
    let third = open_session(&bridge.url, "host-three", &[]);
    let ok = call(&bridge.url, &third, 4, "echo", &json!({"text": "new"}));
    assert_eq!(ok.status, 200);
}

#[test]
fn a_bearer_token_is_required_and_foreign_origins_are_refused() {
    let bridge = Listener::start(
        "bearer",
        &[
            "--bearer-token-env",
            "BRIDGE_TEST_TOKEN",
            "--allow-origin",
            "https://app.example.com",
        ],
        &[("BRIDGE_TEST_TOKEN", "s3cret")],
    );
    // The token is never on the command line.
    let argv =
        std::fs::read_to_string(format!("/proc/{}/cmdline", bridge.child.id())).unwrap_or_default();
    assert!(!argv.contains("s3cret"));

    let without = exchange(&bridge.url, "POST", &[], Some(&initialize_body("h")));
    assert_eq!(without.status, 401);
    let wrong = exchange(
        &bridge.url,
        "POST",
        &[("Authorization", "Bearer nope")],
        Some(&initialize_body("h")),
    );
    assert_eq!(wrong.status, 401);
    let auth = [("Authorization", "Bearer s3cret")];
    let session = open_session(&bridge.url, "h", &auth);
    assert!(!session.is_empty());

    let foreign = exchange(
        &bridge.url,
        "POST",
        &[auth[0], ("Origin", "http://evil.example")],
        Some(&initialize_body("h")),
    );
    assert_eq!(foreign.status, 403);
    let allowed = exchange(
        &bridge.url,
        "POST",
        &[auth[0], ("Origin", "https://app.example.com")],
        Some(&initialize_body("h")),
    );
    assert_eq!(allowed.status, 200);
}

#[test]
fn a_missing_bearer_token_variable_is_a_usage_error() {
    let out = Command::new(MCP)
        .args([
            "bridge",
            "--listen",
            "127.0.0.1:0",
            "--bearer-token-env",
            "BRIDGE_TEST_UNSET_VAR",
            "--",
            MCP,
            "demo-server",
        ])
        .env_remove("BRIDGE_TEST_UNSET_VAR")
        .output()
        .expect("run mcp bridge");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("BRIDGE_TEST_UNSET_VAR"),
        "{out:?}"
    );
}

#[test]
fn stateless_posts_share_one_upstream() {
    let bridge = Listener::start("stateless", &["--stateless"], &[]);
    let groups = bridge.wait_groups(1);
    for n in 0..3 {
        let reply = exchange(
            &bridge.url,
            "POST",
            &[("MCP-Protocol-Version", "2025-06-18")],
            Some(&json!({"jsonrpc": "2.0", "id": n, "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": format!("n{n}")}}})),
        );
        assert_eq!(reply.status, 200);
        assert!(reply.header("mcp-session-id").is_none());
        assert_eq!(
            reply.messages.last().expect("an answer")["result"]["content"][0]["text"],
            format!("n{n}")
        );
    }
    assert_eq!(bridge.live_groups(), groups, "one child served every POST");
}

#[test]
fn a_stateless_host_that_disconnects_mid_call_cancels_it_upstream() {
    let bridge = Listener::start("stateless-cancel", &["--stateless"], &[]);
    let running = start_exchange(
        &bridge.url,
        "POST",
        &[("MCP-Protocol-Version", "2025-06-18")],
        Some(&json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
            "params": {"name": "slow", "arguments": {"steps": 100, "delay_ms": 1000}}})),
    );
    let slow = bridge.wait_upstream("the slow call", |m| {
        m["method"] == "tools/call" && m["params"]["name"] == "slow"
    });
    // The host goes away without an answer.
    drop(running);
    let cancelled = bridge.wait_upstream("the cancellation", |m| {
        m["method"] == "notifications/cancelled"
    });
    assert_eq!(cancelled["params"]["requestId"], slow["id"], "{cancelled}");
}

impl Listener {
    /// Sends `signal` (`-TERM`, `-INT`) to the bridge and waits for it to exit: its status
    /// and what it printed on stderr after the URL.
    fn stop(&mut self, signal: &str) -> (std::process::ExitStatus, Vec<String>) {
        let sent = Command::new("kill")
            .args([signal, &self.child.id().to_string()])
            .status()
            .expect("run kill");
        assert!(sent.success());
        let started = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                break status;
            }
            assert!(
                started.elapsed() < GUARD,
                "the bridge did not exit on {signal}"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        let lines = self
            .stderr
            .take()
            .expect("stopped once")
            .join()
            .expect("the stderr reader");
        (status, lines)
    }
}

/// A bridge asked to stop (SIGTERM by a service manager, Ctrl-C by its user) ends cleanly:
/// every session and its child closed, one line saying so, exit 0.
fn a_stop_signal_ends_every_session_and_its_child_cleanly(name: &str, signal: &str) {
    let mut bridge = Listener::start(name, &[], &[]);
    bridge.wait_groups(0);
    open_session(&bridge.url, "host-one", &[]);
    open_session(&bridge.url, "host-two", &[]);
    bridge.wait_groups(2);
    let (status, stderr) = bridge.stop(signal);
    assert_eq!(status.code(), Some(0), "{signal}: {stderr:?}");
    assert_eq!(
        stderr
            .iter()
            .filter(|l| l.contains("stopping") || l.contains("error"))
            .collect::<Vec<_>>(),
        ["mcp bridge: stopping: closing every session"],
        "{signal}"
    );
    bridge.wait_groups(0);
}

#[test]
fn sigterm_ends_every_session_and_its_child() {
    a_stop_signal_ends_every_session_and_its_child_cleanly("sigterm", "-TERM");
}

#[test]
fn ctrl_c_ends_every_session_and_its_child() {
    a_stop_signal_ends_every_session_and_its_child_cleanly("sigint", "-INT");
}

/// Starts `mcp bridge --listen ADDR -- mcp demo-server` expecting it to fail: its output.
fn failed_listener(addr: &str) -> std::process::Output {
    let out = Command::new(MCP)
        .args(["bridge", "--listen", addr, "--", MCP, "demo-server"])
        .stdin(Stdio::null())
        .output()
        .expect("run mcp bridge");
    assert!(!out.status.success(), "{out:?}");
    out
}

#[test]
fn a_port_in_use_says_so_once_and_hints_another_port() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a port");
    let addr = taken.local_addr().expect("its address").to_string();
    let out = failed_listener(&addr);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.starts_with(&format!("error: cannot listen on {addr}: ")),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "hint: another program listens on this port: pick another, or 127.0.0.1:0 for any free one"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("mcp --help"), "{stderr}");
}

#[test]
fn listen_accepts_localhost_and_says_how_to_write_a_bare_port() {
    // localhost:0 is served on 127.0.0.1.
    let mut child = Command::new(MCP)
        .args([
            "bridge",
            "--listen",
            "localhost:0",
            "--",
            MCP,
            "demo-server",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn mcp bridge");
    let mut line = String::new();
    BufReader::new(child.stderr.take().expect("piped stderr"))
        .read_line(&mut line)
        .expect("the first line");
    let _ = child.kill();
    let _ = child.wait();
    assert!(line.starts_with("http://127.0.0.1:"), "{line}");

    let out = failed_listener("8080");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("use 127.0.0.1:8080"), "{stderr}");
}

/// `mcp tools --url` against a bridge that wants a static bearer token (no OAuth offered):
/// the hint says how to send the token, not to log in.
#[test]
fn a_static_bearer_token_server_hints_the_header_not_a_login() {
    let mut bridge = Listener::start(
        "static-token",
        &["--bearer-token-env", "BRIDGE_TEST_TOKEN"],
        &[("BRIDGE_TEST_TOKEN", "s3cret")],
    );
    let home = bridge.dir.join("home");
    let out = Command::new(MCP)
        .args(["tools", "--url", &bridge.url])
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_STATE_HOME", home.join("state"))
        .stdin(Stdio::null())
        .output()
        .expect("run mcp tools");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("needs authorization"), "{stderr}");
    assert!(
        stderr.contains("hint: the server wants an access token and offers no OAuth login"),
        "{stderr}"
    );
    assert!(
        stderr.contains("-H 'Authorization: Bearer ***' (*** = your token)"),
        "{stderr}"
    );
    assert!(!stderr.contains("mcp login"), "{stderr}");

    // With the token, the same command works.
    let ok = Command::new(MCP)
        .args([
            "tools",
            "--url",
            &bridge.url,
            "-H",
            "Authorization: Bearer s3cret",
        ])
        .env("HOME", &home)
        .stdin(Stdio::null())
        .output()
        .expect("run mcp tools");
    assert!(ok.status.success(), "{ok:?}");
    let (status, _) = bridge.stop("-TERM");
    assert_eq!(status.code(), Some(0));
}

#[test]
fn a_missing_server_program_fails_the_listener_at_once() {
    let out = Command::new(MCP)
        .args([
            "bridge",
            "--listen",
            "127.0.0.1:0",
            "--",
            "mcp-no-such-server-program",
        ])
        .stdin(Stdio::null())
        .output()
        .expect("run mcp bridge --listen");
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("http://"), "no URL: {stderr}");
    assert!(
        stderr.contains("mcp-no-such-server-program"),
        "the program named: {stderr}"
    );
}

#[test]
fn a_server_that_cannot_start_fails_that_hosts_initialize_without_a_session_id_and_the_bridge_serves_on()
 {
    let mut bridge = Command::new(MCP)
        .args([
            "bridge",
            "--listen",
            "127.0.0.1:0",
            "--",
            "sh",
            "-c",
            "echo broken >&2; exit 1",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn mcp bridge --listen");
    let mut stderr = BufReader::new(bridge.stderr.take().expect("piped stderr"));
    let mut line = String::new();
    stderr.read_line(&mut line).expect("the URL line");
    let url = line.trim().to_owned();
    for host in ["first", "second"] {
        let init = exchange(&url, "POST", &[], Some(&initialize_body(host)));
        assert_eq!(init.status, 200, "{:?}", init.messages);
        let error = &init.messages[0]["error"];
        assert_eq!(error["code"], -32603, "{:?}", init.messages);
        let message = error["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("the upstream server failed") && message.contains("broken"),
            "why, with the server's own words: {message}"
        );
        // A refused initialize opens no session: no id the host could only get 404 for.
        assert_eq!(
            init.header("mcp-session-id"),
            None,
            "a failed initialize hands out no session id"
        );
    }
    assert_eq!(
        bridge.try_wait().expect("try_wait"),
        None,
        "the bridge serves on"
    );
    let _ = bridge.kill();
    let _ = bridge.wait();
}

/// The protocol version each host asked for reaches its upstream with its identity, and
/// each host is answered the version its upstream agreed.
#[test]
fn each_host_sees_its_own_version_and_the_server_sees_each_hosts_identity() {
    let bridge = Listener::start("versions", &[], &[]);
    let mut sessions = Vec::new();
    for (name, version, caps) in [
        ("old-host", "2025-03-26", json!({})),
        (
            "new-host",
            "2025-11-25",
            json!({"roots": {}, "elicitation": {}}),
        ),
    ] {
        let init = exchange(
            &bridge.url,
            "POST",
            &[],
            Some(
                &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": version, "capabilities": caps,
                "clientInfo": {"name": name, "version": "7.0"}}}),
            ),
        );
        assert_eq!(init.status, 200, "{:?}", init.messages);
        let result = &init.messages[0]["result"];
        assert_eq!(result["protocolVersion"], version, "{result}");
        assert_eq!(result["serverInfo"]["name"], "mcp-demo", "{result}");
        assert!(result["instructions"].is_string(), "{result}");
        sessions.push(
            init.header("mcp-session-id")
                .expect("a session id")
                .to_owned(),
        );
        let seen = bridge.wait_upstream(name, |m| {
            m["method"] == "initialize" && m["params"]["clientInfo"]["name"] == name
        });
        assert_eq!(seen["params"]["protocolVersion"], version, "{seen}");
        assert_eq!(seen["params"]["clientInfo"]["version"], "7.0", "{seen}");
        assert_eq!(seen["params"]["capabilities"], caps, "{seen}");
    }
    assert_ne!(sessions[0], sessions[1]);
    bridge.wait_groups(2);
}
