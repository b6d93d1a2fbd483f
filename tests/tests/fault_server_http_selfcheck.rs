//! `fault_server --http` does what its modes say: spawned with plain `std::process`, spoken to
//! with raw HTTP/1.1 over a `TcpStream` (no client of this repo in between).

#![cfg(target_os = "linux")]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_fault_server");
/// Generous bound for what should happen at once.
const SOON: Duration = Duration::from_secs(10);

/// A running `fault_server --http`; killed on drop.
struct Server {
    child: Child,
    addr: String,
    log: std::path::PathBuf,
}

impl Server {
    fn spawn(mode: &[&str]) -> Self {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let log = std::env::temp_dir().join(format!(
            "fault-http-selfcheck-{}-{n}.log",
            std::process::id()
        ));
        let _ = std::fs::remove_file(&log);
        let mut child = Command::new(BIN)
            .arg("--http")
            .arg("--log")
            .arg(&log)
            .args(mode)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn fault_server --http");
        let mut first = String::new();
        BufReader::new(child.stdout.take().expect("piped stdout"))
            .read_line(&mut first)
            .expect("the first stdout line");
        let url = first
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("first line: {first:?}"));
        let addr = url
            .strip_prefix("http://")
            .and_then(|rest| rest.strip_suffix("/mcp"))
            .unwrap_or_else(|| panic!("url: {url}"))
            .to_owned();
        assert!(addr.starts_with("127.0.0.1:"), "loopback only: {addr}");
        Server { child, addr, log }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Sends one request; returns the stream, positioned at the body, and the head.
    fn send(
        &self,
        method: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> (Head, BufReader<TcpStream>) {
        let mut s = TcpStream::connect(&self.addr).expect("connect");
        s.set_read_timeout(Some(SOON)).expect("read timeout");
        let mut req = format!(
            "{method} /mcp HTTP/1.1\r\nhost: {}\r\ncontent-length: {}\r\n\
             accept: application/json, text/event-stream\r\ncontent-type: application/json\r\n",
            self.addr,
            body.len()
        );
        for (n, v) in headers {
            req.push_str(&format!("{n}: {v}\r\n"));
        }
        req.push_str("\r\n");
        s.write_all(req.as_bytes()).expect("write head");
        s.write_all(body).expect("write body");
        let mut r = BufReader::new(s);
        let mut line = String::new();
        r.read_line(&mut line).expect("status line");
        let status = line
            .split_whitespace()
            .nth(1)
            .and_then(|c| c.parse().ok())
            .unwrap_or_else(|| panic!("status line {line:?}"));
        let mut headers = Vec::new();
        loop {
            line.clear();
            r.read_line(&mut line).expect("header line");
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            let (n, v) = l.split_once(':').expect("a header");
            headers.push((n.trim().to_ascii_lowercase(), v.trim().to_owned()));
        }
        (Head { status, headers }, r)
    }

    /// One whole exchange: the head and the body up to the end of the connection (chunk
    /// framing included, for SSE).
    fn exchange(&self, method: &str, headers: &[(&str, &str)], body: &Value) -> (Head, String) {
        let bytes = if body.is_null() {
            Vec::new()
        } else {
            body.to_string().into_bytes()
        };
        let (head, mut r) = self.send(method, headers, &bytes);
        let mut rest = String::new();
        r.read_to_string(&mut rest)
            .expect("the body until the connection closes");
        (head, rest)
    }

    /// Initializes a session; returns its id.
    fn initialize(&self) -> String {
        let (head, body) = self.exchange(
            "POST",
            &[],
            &rpc(
                1,
                "initialize",
                json!({"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "selfcheck", "version": "1"}}),
            ),
        );
        assert_eq!(head.status, 200, "{body}");
        assert!(
            body.contains("\"protocolVersion\":\"2025-06-18\""),
            "{body}"
        );
        head.get("mcp-session-id").expect("a session id").to_owned()
    }

    fn call(&self, session: &str, id: u64, tool: &str, args: Value, token: bool) -> (Head, String) {
        let mut params = json!({"name": tool, "arguments": args});
        if token {
            params["_meta"] = json!({"progressToken": "t"});
        }
        self.exchange(
            "POST",
            &[("mcp-session-id", session)],
            &rpc(id, "tools/call", params),
        )
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.log);
    }
}

struct Head {
    status: u16,
    headers: Vec<(String, String)>,
}

impl Head {
    fn get(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

fn rpc(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// Whether a chunked body ends with its last chunk (rather than breaking off).
fn terminated(body: &str) -> bool {
    body.ends_with("0\r\n\r\n")
}

#[test]
fn echo_keeps_sessions_and_refuses_unknown_ones() {
    let s = Server::spawn(&["echo"]);
    let session = s.initialize();
    assert_eq!(session, "fault-1");
    let (head, body) = s.call(&session, 2, "echo", json!({"message": "hi"}), false);
    assert_eq!(head.status, 200);
    assert_eq!(head.get("content-type"), Some("application/json"));
    assert!(body.contains("\"text\":\"hi\""), "{body}");
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(
        s.exchange("POST", &[("mcp-session-id", &session)], &note)
            .0
            .status,
        202
    );
    assert_eq!(s.call("nobody", 3, "echo", json!({}), false).0.status, 404);
    assert_eq!(
        s.exchange("GET", &[("mcp-session-id", &session)], &Value::Null)
            .0
            .status,
        405
    );
    assert_eq!(
        s.exchange("DELETE", &[("mcp-session-id", &session)], &Value::Null)
            .0
            .status,
        200
    );
    assert_eq!(
        s.call(&session, 4, "echo", json!({}), false).0.status,
        404,
        "deleted"
    );
    assert!(s.log().contains("\"method\":\"tools/call\""), "{}", s.log());
}

#[test]
fn a_request_without_a_session_gets_400_and_deleting_an_unknown_one_404() {
    let s = Server::spawn(&["echo"]);
    let session = s.initialize();
    let (head, _) = s.exchange("POST", &[], &rpc(2, "ping", json!({})));
    assert_eq!(head.status, 400, "no Mcp-Session-Id");
    let (head, _) = s.exchange("DELETE", &[("mcp-session-id", "nobody")], &Value::Null);
    assert_eq!(head.status, 404);
    let (head, body) = s.exchange(
        "POST",
        &[("mcp-session-id", &session)],
        &rpc(3, "ping", json!({})),
    );
    assert_eq!(head.status, 200, "{body}");
    assert!(
        s.log().contains("# 404 unknown session nobody"),
        "{}",
        s.log()
    );
}

#[test]
fn expire_session_404s_the_first_call_only() {
    let s = Server::spawn(&["expire_session"]);
    let first = s.initialize();
    assert_eq!(
        s.call(&first, 2, "echo", json!({"message": "a"}), false)
            .0
            .status,
        404
    );
    assert_eq!(
        s.call(&first, 3, "echo", json!({"message": "a"}), false)
            .0
            .status,
        404,
        "forgotten"
    );
    let second = s.initialize();
    assert_eq!(second, "fault-2");
    let (head, body) = s.call(&second, 4, "echo", json!({"message": "b"}), false);
    assert_eq!(head.status, 200, "{body}");
    assert!(body.contains("\"text\":\"b\""), "{body}");
}

#[test]
fn status_500_has_a_text_body_naming_the_request() {
    let s = Server::spawn(&["status_500"]);
    let session = s.initialize();
    let (head, body) = s.call(&session, 7, "echo", json!({}), false);
    assert_eq!(head.status, 500);
    assert_eq!(
        body,
        "fault_server: internal error while handling request 7"
    );
    let (ping, _) = s.exchange(
        "POST",
        &[("mcp-session-id", &session)],
        &rpc(8, "ping", json!({})),
    );
    assert_eq!(ping.status, 200, "ping is answered");
}

#[test]
fn sse_drop_breaks_off_after_an_id_and_resumes_after_it() {
    let s = Server::spawn(&["sse_drop"]);
    let session = s.initialize();
    let (head, body) = s.call(&session, 2, "progress", json!({"steps": 2}), true);
    assert_eq!(head.status, 200);
    assert_eq!(head.get("content-type"), Some("text/event-stream"));
    assert!(body.contains("id: s1-0\nretry: 100\n\n"), "{body:?}");
    assert!(
        body.contains("id: s1-1\ndata: ") && body.contains("\"progress\":1"),
        "{body:?}"
    );
    assert!(
        !body.contains("s1-2") && !terminated(&body),
        "broken off: {body:?}"
    );
    let h = [
        ("mcp-session-id", session.as_str()),
        ("last-event-id", "s1-1"),
    ];
    let (head, body) = s.exchange("GET", &h, &Value::Null);
    assert_eq!(head.status, 200);
    assert!(
        !body.contains("s1-1") && body.contains("\"progress\":2"),
        "{body:?}"
    );
    assert!(
        body.contains("id: s1-3\ndata: ") && body.contains("2 steps done"),
        "{body:?}"
    );
    assert!(terminated(&body), "{body:?}");
    let h = [
        ("mcp-session-id", session.as_str()),
        ("last-event-id", "s9-1"),
    ];
    assert_eq!(
        s.exchange("GET", &h, &Value::Null).0.status,
        404,
        "unknown stream"
    );
}

#[test]
fn sse_replay_resumes_from_the_first_event() {
    let s = Server::spawn(&["sse_replay"]);
    let session = s.initialize();
    let (_, body) = s.call(&session, 2, "progress", json!({"steps": 4}), true);
    assert!(
        body.contains("id: s1-2\n") && !body.contains("s1-3"),
        "{body:?}"
    );
    let h = [
        ("mcp-session-id", session.as_str()),
        ("last-event-id", "s1-2"),
    ];
    let (_, body) = s.exchange("GET", &h, &Value::Null);
    let ids: Vec<&str> = body
        .lines()
        .filter_map(|l| l.strip_prefix("id: "))
        .collect();
    assert_eq!(ids, ["s1-1", "s1-2", "s1-3", "s1-4", "s1-5"], "{body:?}");
}

#[test]
fn silent_stream_sends_a_head_and_nothing_until_the_client_leaves() {
    let s = Server::spawn(&["silent_stream"]);
    let session = s.initialize();
    let body = rpc(2, "tools/call", json!({"name": "echo", "arguments": {}})).to_string();
    let (head, mut r) = s.send("POST", &[("mcp-session-id", &session)], body.as_bytes());
    assert_eq!(head.status, 200);
    assert_eq!(head.get("content-type"), Some("text/event-stream"));
    r.get_ref()
        .set_read_timeout(Some(Duration::from_millis(500)))
        .expect("read timeout");
    let mut buf = [0u8; 64];
    match r.read(&mut buf) {
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ) => {}
        other => panic!("expected silence, got {other:?} {:?}", &buf[..8]),
    }
    drop(r);
    let started = Instant::now();
    while !s
        .log()
        .contains("silent stream for request 2 ended, client hung up: true")
    {
        assert!(started.elapsed() < SOON, "{}", s.log());
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The server's resident memory, from `/proc`.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .expect("VmRSS")
}

#[test]
fn huge_body_is_one_gib_made_while_written() {
    let s = Server::spawn(&["huge_body"]);
    let session = s.initialize();
    let body = rpc(2, "tools/call", json!({"name": "echo", "arguments": {}})).to_string();
    let (head, mut r) = s.send("POST", &[("mcp-session-id", &session)], body.as_bytes());
    assert_eq!(head.status, 200);
    assert_eq!(head.get("content-length"), Some("1073741824"));
    let mut start = [0u8; 96];
    r.read_exact(&mut start).expect("the start of the body");
    assert!(start.starts_with(
        br#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"aaa"#
    ));
    // A quarter of it: the server's memory does not grow with what it wrote.
    let mut block = vec![0u8; 1 << 20];
    for _ in 0..256 {
        r.read_exact(&mut block).expect("body bytes");
        assert!(block.iter().all(|&b| b == b'a'));
    }
    let rss = rss_kib(s.child.id());
    assert!(
        rss < 64 * 1024,
        "server RSS {rss} KiB after 256 MiB written"
    );
    drop(r);
    let started = Instant::now();
    while !s.log().contains("client hung up: true") {
        assert!(started.elapsed() < SOON, "{}", s.log());
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn huge_event_is_one_big_event_then_the_answer() {
    let s = Server::spawn(&["huge_event", "2"]);
    let session = s.initialize();
    let (head, body) = s.call(&session, 7, "echo", json!({"message": "hi"}), false);
    assert_eq!(head.status, 200);
    assert_eq!(head.get("content-type"), Some("text/event-stream"));
    assert_eq!(
        head.get("content-length").and_then(|n| n.parse().ok()),
        Some(body.len())
    );
    let events: Vec<&str> = body.split("\n\n").filter(|e| !e.is_empty()).collect();
    assert_eq!(events.len(), 2, "{}", &body[body.len() - 200..]);
    assert!(events[0].starts_with(r#"data: {"jsonrpc":"2.0","method":"notifications/message""#));
    assert!(events[0].len() > 2 << 20);
    let note: Value = serde_json::from_str(&events[0]["data: ".len()..]).expect("event 1 is JSON");
    assert!(
        note["params"]["data"]
            .as_str()
            .expect("text")
            .bytes()
            .all(|b| b == b'a')
    );
    let (id_line, data) = events[1].split_once('\n').expect("two lines");
    assert_eq!(id_line, "id: 7");
    let answer: Value = serde_json::from_str(data.strip_prefix("data: ").expect("data")).unwrap();
    assert_eq!(answer["id"], 7);
    assert_eq!(answer["result"]["content"][0]["text"], "hi");
}

#[test]
fn help_lists_the_http_modes() {
    let out = Command::new(BIN)
        .arg("--help")
        .output()
        .expect("run --help");
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for mode in [
        "expire_session",
        "status_500",
        "sse_drop",
        "sse_replay",
        "silent_stream",
        "huge_body <MiB>",
        "huge_error <MiB>",
        "huge_event <MiB>",
    ] {
        assert!(help.contains(mode), "{mode} missing from --help");
    }
    let bad = Command::new(BIN)
        .args(["--http", "nonsense"])
        .output()
        .expect("run");
    assert_eq!(bad.status.code(), Some(2));
}
