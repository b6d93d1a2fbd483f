//! The fault server does what its modes say: spawned with plain `std::process`, spoken to with
//! raw JSON lines.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_fault_server");
/// Generous bound for things that should happen at once (CI machines are slow).
const SOON: Duration = Duration::from_secs(10);

/// What the stdout reader thread saw.
#[derive(Debug)]
enum Out {
    Line(Vec<u8>),
    Eof,
}

struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Receiver<Out>,
    stderr: Receiver<Vec<u8>>,
    log: PathBuf,
}

impl Server {
    fn spawn(args: &[&str]) -> Self {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let log = std::env::temp_dir().join(format!(
            "fault-selfcheck-{}-{n}-{}.log",
            std::process::id(),
            args.join("_")
        ));
        let _ = std::fs::remove_file(&log);
        let mut child = Command::new(BIN)
            .args(args)
            .env("FAULT_LOG", &log)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn fault_server");
        let stdin = child.stdin.take();
        let mut out = BufReader::new(child.stdout.take().expect("stdout"));
        let (tx, stdout) = mpsc::channel();
        thread::spawn(move || {
            loop {
                let mut line = Vec::new();
                match out.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => {
                        let _ = tx.send(Out::Eof);
                        return;
                    }
                    Ok(_) => {
                        if tx.send(Out::Line(line)).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        let mut err = child.stderr.take().expect("stderr");
        let (etx, stderr) = mpsc::channel();
        thread::spawn(move || {
            let mut buf = vec![0; 64 * 1024];
            while let Ok(n @ 1..) = err.read(&mut buf) {
                if etx.send(buf[..n].to_vec()).is_err() {
                    return;
                }
            }
        });
        Server {
            child,
            stdin,
            stdout,
            stderr,
            log,
        }
    }

    fn send(&mut self, v: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        let mut line = serde_json::to_vec(v).expect("json");
        line.push(b'\n');
        // A server that exits on purpose (crash, grandchild exit) may be gone before a
        // write: a broken pipe is that, not a failure of the check.
        if let Err(e) = stdin.write_all(&line).and_then(|()| stdin.flush()) {
            assert_eq!(
                e.kind(),
                std::io::ErrorKind::BrokenPipe,
                "write to fault_server: {e}"
            );
        }
    }

    fn request(&mut self, id: u64, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
    }

    fn call(&mut self, id: u64, tool: &str, args: Value) {
        self.request(id, "tools/call", json!({"name": tool, "arguments": args}));
    }

    fn next(&self, within: Duration) -> Option<Out> {
        match self.stdout.recv_timeout(within) {
            Ok(o) => Some(o),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => Some(Out::Eof),
        }
    }

    /// The next stdout line that is JSON, skipping anything else.
    fn next_json(&self) -> Value {
        let deadline = Instant::now() + SOON;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.next(left) {
                Some(Out::Line(l)) => {
                    if let Ok(v) = serde_json::from_slice::<Value>(&l)
                        && v.get("jsonrpc").is_some()
                    {
                        return v;
                    }
                }
                other => panic!("expected a JSON-RPC line, got {other:?}"),
            }
        }
    }

    /// Sends initialize + initialized and checks the answer.
    fn handshake(&mut self) {
        self.request(
            0,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "selfcheck", "version": "1"}}),
        );
        let v = self.next_json();
        assert_eq!(v["id"], 0, "initialize answered: {v}");
        assert_eq!(v["result"]["serverInfo"]["name"], "fault_server");
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    }

    fn close_stdin(&mut self) {
        self.stdin = None;
    }

    fn wait(&mut self, within: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + within;
        while Instant::now() < deadline {
            if let Some(s) = self.child.try_wait().expect("try_wait") {
                return Some(s);
            }
            thread::sleep(Duration::from_millis(10));
        }
        None
    }

    fn stderr_text(&self, within: Duration) -> String {
        let deadline = Instant::now() + within;
        let mut all = Vec::new();
        while let Ok(chunk) = self
            .stderr
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            all.extend(chunk);
        }
        String::from_utf8_lossy(&all).into_owned()
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits until the log contains `needle`.
    fn wait_log(&self, needle: &str) -> String {
        let deadline = Instant::now() + SOON;
        loop {
            let text = self.log_text();
            if text.contains(needle) || Instant::now() > deadline {
                return text;
            }
            thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.log);
    }
}

fn kill(pid: i32, sig: i32) -> bool {
    // SAFETY: kill(2) has no memory-safety preconditions.
    unsafe { libc::kill(pid, sig) == 0 }
}

fn text_of(v: &Value) -> &str {
    v["result"]["content"][0]["text"].as_str().unwrap_or("")
}

#[test]
fn echo_serves_its_tools_and_exits_at_stdin_eof() {
    let mut s = Server::spawn(&["echo"]);
    s.handshake();
    s.request(1, "tools/list", json!({}));
    let list = s.next_json();
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    for t in ["echo", "add", "sleep", "progress", "crash_mid_request"] {
        assert!(names.contains(&t), "{t} listed in {names:?}");
    }
    s.call(2, "echo", json!({"message": "hi"}));
    assert_eq!(text_of(&s.next_json()), "hi");
    s.call(3, "add", json!({"a": 2, "b": 40}));
    assert_eq!(text_of(&s.next_json()), "42");
    s.request(4, "ping", json!({}));
    assert_eq!(
        s.next_json(),
        json!({"jsonrpc": "2.0", "id": 4, "result": {}})
    );
    s.request(5, "resources/list", json!({}));
    assert_eq!(s.next_json()["error"]["code"], -32601);
    s.close_stdin();
    let status = s.wait(SOON).expect("exits at stdin EOF");
    assert_eq!(status.code(), Some(0));
}

#[test]
fn progress_sends_notifications_then_the_result() {
    let mut s = Server::spawn(&["echo"]);
    s.handshake();
    s.request(
        1,
        "tools/call",
        json!({"name": "progress", "arguments": {"steps": 3}, "_meta": {"progressToken": "tok"}}),
    );
    for i in 1..=3 {
        let v = s.next_json();
        assert_eq!(v["method"], "notifications/progress");
        assert_eq!(v["params"]["progressToken"], "tok");
        // A JSON number (the session writes it as a float: `1.0`).
        assert_eq!(v["params"]["progress"].as_f64(), Some(f64::from(i)), "{v}");
        assert_eq!(v["params"]["total"].as_f64(), Some(3.0), "{v}");
        assert_eq!(v["params"]["message"], format!("step {i}"), "{v}");
    }
    let answer = s.next_json();
    assert_eq!(answer["id"], 1);
    assert_eq!(text_of(&answer), "3 steps done");
}

#[test]
fn the_log_records_every_line_received_including_cancellations() {
    let mut s = Server::spawn(&["echo"]);
    s.handshake();
    s.call(1, "sleep", json!({"ms": 300}));
    s.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": 1, "reason": "test"}}),
    );
    let log = s.wait_log("cancelled, not answered");
    assert!(
        log.contains(r#""method":"notifications/cancelled""#),
        "{log}"
    );
    assert!(log.contains(r#""method":"initialize""#), "{log}");
    assert!(
        s.next(Duration::from_millis(200)).is_none(),
        "a cancelled sleep is not answered"
    );
}

#[test]
fn crash_mid_request_exits_3_with_a_last_stderr_line() {
    let mut s = Server::spawn(&["crash_mid_request"]);
    s.handshake();
    s.request(1, "ping", json!({}));
    assert_eq!(s.next_json()["id"], 1, "other requests are answered");
    s.call(2, "echo", json!({"message": "x"}));
    let status = s.wait(SOON).expect("it crashes");
    assert_eq!(status.code(), Some(3));
    let err = s.stderr_text(Duration::from_millis(500));
    let last = err.lines().last().unwrap_or("");
    assert!(
        last.contains("crash_mid_request") && last.contains("request 2"),
        "{err}"
    );
    assert!(
        matches!(s.next(SOON), Some(Out::Eof)),
        "no answer, then EOF"
    );
}

#[test]
fn crash_as_a_tool_in_echo_mode() {
    let mut s = Server::spawn(&["echo"]);
    s.handshake();
    s.call(7, "crash_mid_request", json!({}));
    assert_eq!(s.wait(SOON).and_then(|st| st.code()), Some(3));
}

#[test]
fn garbage_surrounds_valid_answers() {
    let mut s = Server::spawn(&["garbage"]);
    s.handshake();
    s.request(1, "ping", json!({}));
    let mut lines = Vec::new();
    let answer = loop {
        match s.next(SOON) {
            Some(Out::Line(l)) => {
                if let Ok(v) = serde_json::from_slice::<Value>(&l)
                    && v["id"] == 1
                {
                    break v;
                }
                lines.push(l);
            }
            other => panic!("stdout ended before the answer: {other:?}"),
        }
    };
    assert_eq!(answer["result"], json!({}));
    assert!(lines.iter().any(|l| l.starts_with(b"Server listening")));
    assert!(
        lines.iter().any(|l| std::str::from_utf8(l).is_err()),
        "invalid UTF-8"
    );
    assert!(lines.iter().any(|l| l == b"\n"), "blank line");
}

#[test]
fn huge_line_is_one_line_of_the_size_asked_then_answers_resume() {
    let mut s = Server::spawn(&["huge_line", "2"]);
    s.handshake();
    let Some(Out::Line(huge)) = s.next(SOON) else {
        panic!("no huge line");
    };
    assert!(
        huge.len() > 2 << 20 && huge.len() < (2 << 20) + 100,
        "{}",
        huge.len()
    );
    assert!(huge.ends_with(b"\"}\n"));
    s.request(1, "ping", json!({}));
    assert_eq!(s.next_json()["id"], 1);
    // As a tool: the line comes before the answer.
    s.call(2, "huge_line", json!({"mib": 1}));
    let Some(Out::Line(huge)) = s.next(SOON) else {
        panic!("no huge line");
    };
    assert!(huge.len() > 1 << 20);
    assert_eq!(s.next_json()["id"], 2);
}

#[test]
fn silent_answers_nothing_after_initialize() {
    let mut s = Server::spawn(&["silent"]);
    s.handshake();
    s.request(1, "ping", json!({}));
    s.call(2, "echo", json!({"message": "x"}));
    assert!(s.next(Duration::from_millis(500)).is_none(), "silence");
    assert!(
        s.wait_log(r#""id":2"#).contains(r#""id":2"#),
        "still reads stdin"
    );
}

#[test]
fn silent_as_a_tool_drops_only_that_request() {
    let mut s = Server::spawn(&["echo"]);
    s.handshake();
    s.call(1, "silent", json!({}));
    s.request(2, "ping", json!({}));
    assert_eq!(s.next_json()["id"], 2);
    assert!(s.next(Duration::from_millis(300)).is_none());
}

#[test]
fn slow_delays_every_answer() {
    let mut s = Server::spawn(&["slow", "300"]);
    s.handshake();
    let t0 = Instant::now();
    s.request(1, "ping", json!({}));
    assert!(
        s.next(Duration::from_millis(200)).is_none(),
        "not before 300 ms"
    );
    assert_eq!(s.next_json()["id"], 1);
    assert!(t0.elapsed() >= Duration::from_millis(300));
}

#[test]
fn twice_answers_every_request_twice() {
    let mut s = Server::spawn(&["twice"]);
    s.handshake();
    s.request(1, "ping", json!({}));
    assert_eq!(s.next_json()["id"], 1);
    assert_eq!(s.next_json()["id"], 1);
    s.request(2, "ping", json!({}));
    assert_eq!(s.next_json()["id"], 2);
}

#[test]
fn unknown_ids_come_before_the_right_one() {
    let mut s = Server::spawn(&["unknown_ids"]);
    s.handshake();
    s.request(1, "ping", json!({}));
    let a = s.next_json();
    let b = s.next_json();
    let c = s.next_json();
    assert!(a["id"].as_u64().is_some_and(|id| id >= 990_000), "{a}");
    assert!(
        b["id"].as_str().is_some_and(|id| id.starts_with("nobody")),
        "{b}"
    );
    assert_eq!(c["id"], 1);
}

#[test]
fn close_stdout_keeps_the_process_running_and_reading() {
    let mut s = Server::spawn(&["close_stdout"]);
    s.handshake();
    assert!(matches!(s.next(SOON), Some(Out::Eof)), "stdout reaches EOF");
    s.request(1, "ping", json!({}));
    assert!(
        s.wait_log(r#""method":"ping""#)
            .contains(r#""method":"ping""#)
    );
    assert!(
        s.child.try_wait().expect("try_wait").is_none(),
        "still running"
    );
    s.close_stdin();
    assert_eq!(s.wait(SOON).and_then(|st| st.code()), Some(0));
}

#[test]
fn grandchild_holds_stdout_after_the_server_exits() {
    let mut s = Server::spawn(&["grandchild"]);
    s.handshake();
    assert_eq!(
        s.wait(SOON).and_then(|st| st.code()),
        Some(0),
        "the server exits"
    );
    let log = s.wait_log("# grandchild ");
    let pid: i32 = log
        .lines()
        .find_map(|l| l.strip_prefix("# grandchild "))
        .and_then(|p| p.trim().parse().ok())
        .unwrap_or_else(|| panic!("grandchild pid in {log}"));
    assert!(
        s.next(Duration::from_millis(300)).is_none(),
        "stdout stays open while the grandchild lives"
    );
    assert!(kill(pid, libc::SIGKILL), "the grandchild was alive");
    assert!(
        matches!(s.next(SOON), Some(Out::Eof)),
        "EOF once it is gone"
    );
}

#[test]
fn ignore_sigterm_survives_sigterm_and_stdin_eof() {
    let mut s = Server::spawn(&["ignore_sigterm"]);
    s.handshake();
    s.wait_log("SIGTERM ignored: true");
    let pid = i32::try_from(s.child.id()).expect("pid fits");
    assert!(kill(pid, libc::SIGTERM));
    s.close_stdin();
    assert!(
        s.wait(Duration::from_millis(500)).is_none(),
        "still running"
    );
    assert!(kill(pid, libc::SIGKILL));
    assert!(s.wait(SOON).is_some(), "SIGKILL works");
}

#[test]
fn stderr_flood_writes_the_amount_then_answers() {
    let mut s = Server::spawn(&["stderr_flood", "2"]);
    s.handshake();
    s.request(1, "ping", json!({}));
    assert_eq!(s.next_json()["id"], 1);
    let err = s.stderr_text(Duration::from_millis(500));
    assert!(err.len() >= 2 << 20, "{} bytes of stderr", err.len());
    assert!(err.contains("stderr flood done"));
}

#[test]
fn bad_arguments_exit_2_and_help_exits_0() {
    let out = Command::new(BIN).arg("no_such_mode").output().expect("run");
    assert_eq!(out.status.code(), Some(2));
    let help = Command::new(BIN).arg("--help").output().expect("run");
    assert_eq!(help.status.code(), Some(0));
    let text = String::from_utf8_lossy(&help.stdout);
    for mode in [
        "crash_mid_request",
        "garbage",
        "huge_line",
        "silent",
        "slow",
        "twice",
        "unknown_ids",
        "close_stdout",
        "grandchild",
        "ignore_sigterm",
        "stderr_flood",
        "echo",
    ] {
        assert!(text.contains(mode), "--help documents {mode}");
    }
}

#[test]
fn endless_pages_hand_out_a_new_cursor_on_every_page() {
    let mut s = Server::spawn(&["endless_pages", "3"]);
    s.handshake();
    s.request(1, "tools/list", json!({}));
    let first = s.next_json();
    assert_eq!(first["result"]["tools"].as_array().map(Vec::len), Some(3));
    assert_eq!(first["result"]["nextCursor"], "page-1");
    s.request(2, "tools/list", json!({"cursor": "page-1"}));
    let second = s.next_json();
    assert_eq!(second["result"]["nextCursor"], "page-2");
    assert_eq!(second["result"]["tools"][0]["name"], "tool_1_0");
}

#[test]
fn ping_flood_stops_reading_and_writes_the_pings() {
    let mut s = Server::spawn(&["ping_flood", "1000"]);
    s.handshake();
    for n in 1..=1000 {
        let v = s.next_json();
        assert_eq!(v["method"], "ping", "{v}");
        assert_eq!(v["id"], format!("flood-{n}"));
    }
    let log = s.wait_log("# ping flood done: 1000 sent");
    assert!(log.contains("# ping flood done: 1000 sent"), "{log}");
    // Not read any more: a request gets no answer.
    s.request(1, "ping", json!({}));
    assert!(
        s.wait_log("# stdin reader stopped")
            .contains("# stdin reader stopped")
    );
    assert!(s.next(Duration::from_millis(300)).is_none());
}

#[test]
fn undecodable_answers_carry_the_right_id() {
    let mut s = Server::spawn(&["echo"]);
    s.handshake();
    s.call(1, "bad_utf8", json!({}));
    let Some(Out::Line(line)) = s.next(SOON) else {
        panic!("no answer to bad_utf8")
    };
    assert!(std::str::from_utf8(&line).is_err(), "not UTF-8");
    assert!(line.starts_with(br#"{"jsonrpc":"2.0","id":1,"result":"#));
    s.call(2, "bad_json", json!({}));
    let Some(Out::Line(line)) = s.next(SOON) else {
        panic!("no answer to bad_json")
    };
    assert!(serde_json::from_slice::<Value>(&line).is_err(), "not JSON");
    assert!(line.starts_with(br#"{"jsonrpc":"2.0","id":2,"result":"#));
    s.call(3, "null_id_error", json!({}));
    let v = s.next_json();
    assert_eq!(v["id"], Value::Null);
    assert_eq!(v["error"]["code"], -32603);
}

#[test]
fn the_handshake_is_the_server_sessions_ping_before_it_only() {
    let mut s = Server::spawn(&["slow", "5000"]);
    // Before initialize: ping is answered, other requests refused, the 2026 probe unknown;
    // none of it is delayed (the mode applies after the handshake).
    s.request(1, "ping", json!({}));
    assert_eq!(
        s.next_json(),
        json!({"jsonrpc": "2.0", "id": 1, "result": {}})
    );
    s.request(2, "tools/list", json!({}));
    let refused = s.next_json();
    assert_eq!(refused["id"], 2);
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    s.request(3, "server/discover", json!({}));
    let probe = s.next_json();
    assert_eq!(probe["id"], 3);
    assert_eq!(probe["error"]["code"], -32601, "{probe}");
    // A version the server does not speak gets its latest.
    s.request(
        4,
        "initialize",
        json!({"protocolVersion": "1999-01-01", "capabilities": {},
               "clientInfo": {"name": "selfcheck", "version": "1"}}),
    );
    let answer = s.next_json();
    assert_eq!(answer["id"], 4);
    assert_eq!(
        answer["result"]["protocolVersion"], "2025-11-25",
        "{answer}"
    );
    assert_eq!(
        answer["result"]["capabilities"]["tools"]["listChanged"],
        false
    );
}

#[test]
fn progress_steps_do_not_hold_up_other_requests() {
    let mut s = Server::spawn(&["echo"]);
    s.handshake();
    s.request(
        1,
        "tools/call",
        json!({"name": "progress", "arguments": {"steps": 200}, "_meta": {"progressToken": 1}}),
    );
    assert_eq!(s.next_json()["method"], "notifications/progress");
    s.call(2, "echo", json!({"message": "meanwhile"}));
    // The echo is answered while the progress still runs (200 steps take 2 s; the echo is
    // answered when its line is read).
    let mut steps_before = 0;
    let echo = loop {
        let v = s.next_json();
        if v["id"] == 2 {
            break v;
        }
        assert_ne!(
            v["id"], 1,
            "the progress ended before the echo was answered"
        );
        steps_before += 1;
    };
    assert_eq!(text_of(&echo), "meanwhile");
    assert!(steps_before < 199, "{steps_before} steps first");
}
