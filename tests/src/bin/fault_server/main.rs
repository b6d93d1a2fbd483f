//! An MCP server that misbehaves on command, for the fault-matrix tests: over stdio, or over
//! Streamable HTTP with `--http` (module [`http`]).
//!
//! The handshake is always normal; the fault applies after it (whole-process mode) or to one
//! request (a `tools/call` whose tool name is the fault). See `HELP` for every mode, and
//! `tests/README.md`.

mod hostile;
mod http;

use std::collections::HashSet;
use std::fs::File;
use std::io::{self, Read, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;
use std::time::Duration;

use mcp_proto::framing::lines::{Line, LineDecoder};
use mcp_proto::jsonrpc::{self, ErrorObject, Id, Message};
use serde_json::{Value, json};

const HELP: &str = "\
fault_server: an MCP server that misbehaves on command (for tests), over stdio or HTTP.

USAGE:
    fault_server [--stay] [--log PATH] <MODE> [ARG]
    fault_server --http [--log PATH] <HTTP MODE> [ARG]
    fault_server --help

The handshake (initialize / notifications/initialized) is always answered normally; the mode
applies to what comes after it. Every mode also serves the tools below, and every mode name is
also a tool: `tools/call` with that name applies the fault to that one request (arguments in
braces).

MODES:
    echo                   A well-behaved server (the default).
    crash_mid_request      On the first tools/call: write a last line to stderr, exit(3) without
                           answering. Other requests are answered. Tool: same.
    garbage                Print a banner at start, and garbage lines (banner text, broken JSON,
                           invalid UTF-8, JSON that is not JSON-RPC, blank lines) before and
                           after every response. Tool: garbage around this answer.
    huge_line <MiB>        Right after the initialize answer, print one line of MiB mebibytes
                           (default 64) without its newline, pause 300 ms, then the newline; then
                           answer normally. Tool {mib}: the same line, then this answer.
    silent                 Answer nothing after initialize (stdin is still read and logged).
                           Tool: this request is never answered.
    slow <ms>              Answer every request after a delay of ms (default 1000); requests are
                           handled concurrently. Tool {ms}: this answer is delayed.
    twice                  Answer every request twice. Tool: this answer twice.
    unknown_ids            Before each answer, send a result and an error for ids nobody sent
                           (990000+n and \"nobody-n\"), then the right answer. Tool: for this one.
    close_stdout           Right after the initialize answer, close stdout (fd 1 becomes
                           /dev/null) but keep running and reading stdin. Tool: close it now.
    grandchild [exit|stay] Right after the initialize answer, spawn `sleep 300` inheriting stdout
                           and stderr (its pid goes to stderr and the log as `# grandchild PID`);
                           then exit(0) (`exit`, default) or keep serving (`stay`).
                           Tool {stay}: the same, after answering.
    ignore_sigterm         Set SIGTERM to SIG_IGN at start, and keep running after stdin EOF
                           (implies --stay). Tool: ignore SIGTERM from now on.
    strict_handshake       Like the oldest servers: any request before initialize makes it
                           write a last stderr line and exit(1) without answering.
    stderr_flood <MiB>     Right after the initialize answer, write MiB mebibytes (default 8) of
                           lines to stderr, blocking while nobody reads them, then answer
                           normally. Tool {mib}: the same, then this answer.
    endless_pages <N>      tools/list answers every page with N tools (default 100) of about
                           1 KiB each and a new nextCursor: the list never ends.
    ping_flood <count>     Right after the initialize answer, stop reading stdin for good and
                           write count ping requests (default 4000000) to stdout.
                           Tool {count}: the same, after answering.
    bad_utf8               Every answer has bytes that are not UTF-8 inside a string.
                           Tool: this answer.
    bad_json               Every answer is cut off in the middle (invalid JSON, right id).
                           Tool: this answer.
    null_id_error          Every request gets an error with \"id\": null instead of its answer.
                           Tool: this request.

TOOLS (every mode):
    echo {message}         Returns the message as text.
    add {a, b}             Returns a + b as text.
    sleep {ms}             Answers after ms; not at all if notifications/cancelled arrives first.
    progress {steps}       Sends `steps` notifications/progress (when the request has a
                           progressToken), 10 ms apart, then answers.

OPTIONS:
    --stay                 Do not exit at stdin EOF: sleep until killed.
    --log PATH             Append every line received on stdin to PATH (verbatim, one per line),
                           plus server events as lines starting with `# `. Also FAULT_LOG=PATH.

Requests other than initialize, ping, tools/list and tools/call get a -32601 error.
At stdin EOF the server exits 0 (unless --stay or ignore_sigterm).

";

/// The whole-process fault, from the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Echo,
    CrashMidRequest,
    Garbage,
    HugeLine(usize),
    Silent,
    Slow(u64),
    Twice,
    UnknownIds,
    CloseStdout,
    Grandchild { stay: bool },
    IgnoreSigterm,
    StderrFlood(usize),
    StrictHandshake,
    EndlessPages(usize),
    PingFlood(u64),
    BadUtf8,
    BadJson,
    NullIdError,
}

struct Options {
    mode: Mode,
    stay: bool,
    log: Option<String>,
    /// `--http`: the HTTP mode to serve instead.
    http: Option<http::HttpMode>,
}

fn parse_args() -> Result<Options, String> {
    let mut args = std::env::args().skip(1);
    let mut stay = false;
    let mut http = false;
    let mut log = std::env::var("FAULT_LOG").ok();
    let mut positional = Vec::new();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--help" | "-h" => {
                print!("{HELP}{}", http::HELP_HTTP);
                std::process::exit(0);
            }
            "--stay" => stay = true,
            "--http" => http = true,
            "--log" => log = Some(args.next().ok_or("--log needs a path")?),
            _ => positional.push(a),
        }
    }
    let name = positional.first().map_or("echo", String::as_str);
    let arg = positional.get(1).map(String::as_str);
    if http {
        return Ok(Options {
            mode: Mode::Echo,
            stay: false,
            log,
            http: Some(http::HttpMode::parse(name, arg)?),
        });
    }
    let num = |default: u64| -> Result<u64, String> {
        arg.map_or(Ok(default), |a| {
            a.parse().map_err(|_| format!("{name}: not a number: {a}"))
        })
    };
    let mode = match name {
        "echo" => Mode::Echo,
        "crash_mid_request" => Mode::CrashMidRequest,
        "garbage" => Mode::Garbage,
        "huge_line" => Mode::HugeLine(usize::try_from(num(64)?).map_err(|e| e.to_string())?),
        "silent" => Mode::Silent,
        "slow" => Mode::Slow(num(1000)?),
        "twice" => Mode::Twice,
        "unknown_ids" => Mode::UnknownIds,
        "close_stdout" => Mode::CloseStdout,
        "grandchild" => Mode::Grandchild {
            stay: match arg {
                None | Some("exit") => false,
                Some("stay") => true,
                Some(other) => return Err(format!("grandchild: exit or stay, not {other}")),
            },
        },
        "ignore_sigterm" => Mode::IgnoreSigterm,
        "strict_handshake" => Mode::StrictHandshake,
        "stderr_flood" => Mode::StderrFlood(usize::try_from(num(8)?).map_err(|e| e.to_string())?),
        "endless_pages" => {
            Mode::EndlessPages(usize::try_from(num(100)?).map_err(|e| e.to_string())?)
        }
        "ping_flood" => Mode::PingFlood(num(4_000_000)?),
        "bad_utf8" => Mode::BadUtf8,
        "bad_json" => Mode::BadJson,
        "null_id_error" => Mode::NullIdError,
        other => return Err(format!("unknown mode {other:?} (see --help)")),
    };
    Ok(Options {
        mode,
        stay: stay || mode == Mode::IgnoreSigterm,
        log,
        http: None,
    })
}

/// What the reader thread hands to the main loop.
enum Input {
    Message(Message),
    Eof,
}

/// State shared by the main loop and the threads that answer late.
struct Server {
    mode: Mode,
    log: Option<Mutex<File>>,
    /// Ids named by `notifications/cancelled`, as JSON text.
    cancelled: Mutex<HashSet<String>>,
    unknown_counter: Mutex<u64>,
    /// `initialize` was answered (for `strict_handshake`).
    initialized: std::sync::atomic::AtomicBool,
    /// Set by `ping_flood`: the stdin reader stops reading for good.
    stop_reading: std::sync::atomic::AtomicBool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panicking thread aborts the test anyway; the data stays usable.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Server {
    fn log_line(&self, line: &[u8]) {
        if let Some(f) = &self.log {
            let mut f = lock(f);
            let _ = f.write_all(line);
            let _ = f.write_all(b"\n");
            let _ = f.flush();
        }
    }

    fn log_event(&self, what: &str) {
        self.log_line(format!("# {what}").as_bytes());
    }

    /// Writes whole lines to stdout in one locked write, so threads never interleave.
    fn send_raw(&self, bytes: &[u8]) {
        let mut out = io::stdout().lock();
        if out.write_all(bytes).and_then(|()| out.flush()).is_err() {
            drop(out);
            self.log_event("stdout write failed");
        }
    }

    fn send(&self, message: &[u8]) {
        let mut line = message.to_vec();
        line.push(b'\n');
        self.send_raw(&line);
    }

    fn respond(&self, id: &Id, result: &Value) {
        let mut out = Vec::new();
        // Invariant: a serde_json::Value always serializes.
        let raw = jsonrpc::to_raw(result).expect("a Value serializes");
        jsonrpc::encode_response(&mut out, id, &raw);
        self.send(&out);
    }

    fn respond_error(&self, id: &Id, code: i64, message: &str) {
        let mut out = Vec::new();
        jsonrpc::encode_error(&mut out, Some(id), &ErrorObject::new(code, message));
        self.send(&out);
    }

    fn notify(&self, method: &str, params: &Value) {
        let mut out = Vec::new();
        // Invariant: a serde_json::Value always serializes.
        let raw = jsonrpc::to_raw(params).expect("a Value serializes");
        jsonrpc::encode_notification(&mut out, method, Some(&raw));
        self.send(&out);
    }

    fn garbage(&self) {
        self.send_raw(
            b"Server listening on stdio\n\
              {\"jsonrpc\":\"2.0\",\"id\":\n\
              \xff\xfe not utf-8 \xc3\x28\n\
              {\"hello\":\"not json-rpc\"}\n\
              \n\
              [1,2,3]\n\
              \r\n",
        );
    }

    fn unknown_ids(&self) {
        let n = {
            let mut c = lock(&self.unknown_counter);
            *c += 1;
            *c
        };
        self.respond(&Id::from(990_000 + n), &json!({"unknown": true}));
        let nobody = format!("nobody-{n}");
        self.respond_error(&Id::from(nobody.as_str()), -32000, "for nobody");
    }

    fn huge_line(&self, mib: usize) {
        let mut out = io::stdout().lock();
        let chunk = vec![b'a'; 1 << 20];
        let mut ok = out
            .write_all(br#"{"jsonrpc":"2.0","method":"huge","params":""#)
            .is_ok();
        for _ in 0..mib {
            ok = ok && out.write_all(&chunk).is_ok();
        }
        ok = ok && out.flush().is_ok();
        thread::sleep(Duration::from_millis(300));
        ok = ok && out.write_all(b"\"}\n").and_then(|()| out.flush()).is_ok();
        drop(out);
        self.log_event(&format!("huge line of {mib} MiB written: {ok}"));
    }

    fn close_stdout(&self) {
        let null = match File::options().write(true).open("/dev/null") {
            Ok(f) => f,
            Err(e) => {
                self.log_event(&format!("close_stdout: /dev/null: {e}"));
                return;
            }
        };
        let _guard = io::stdout().lock();
        // SAFETY: dup2 on two valid descriptors; fd 1 is replaced atomically (so it is never
        // free for reuse), and the pipe's write end, held by nobody else, closes.
        let rc = unsafe { libc::dup2(std::os::fd::AsRawFd::as_raw_fd(&null), 1) };
        self.log_event(&format!("stdout closed: {}", rc == 1));
    }

    fn grandchild(&self) {
        match Command::new("sleep")
            .arg("300")
            .stdin(Stdio::null())
            .stdout(Stdio::inherit())
            .stderr(Stdio::inherit())
            .spawn()
        {
            Ok(child) => {
                eprintln!("# grandchild {}", child.id());
                self.log_event(&format!("grandchild {}", child.id()));
                // Not waited for on purpose: it must outlive us.
                std::mem::forget(child);
            }
            Err(e) => self.log_event(&format!("grandchild spawn failed: {e}")),
        }
    }

    fn stderr_flood(&self, mib: usize) {
        let line = format!("fault_server: stderr flood {}\n", "x".repeat(90));
        let mut err = io::stderr().lock();
        let mut written = 0;
        while written < mib << 20 {
            if err.write_all(line.as_bytes()).is_err() {
                break;
            }
            written += line.len();
        }
        let _ = writeln!(err, "fault_server: stderr flood done ({written} bytes)");
        drop(err);
        self.log_event(&format!("stderr flood done: {written} bytes"));
    }

    fn ignore_sigterm(&self) {
        // SAFETY: installing SIG_IGN runs no handler code, so there is no async-signal-safety
        // concern; libc::signal with a valid signal number has no other precondition.
        let prev = unsafe { libc::signal(libc::SIGTERM, libc::SIG_IGN) };
        self.log_event(&format!("SIGTERM ignored: {}", prev != libc::SIG_ERR));
    }

    fn crash(&self, id: &Id) -> ! {
        self.log_event(&format!("crashing on request {id}"));
        eprintln!(
            "fault_server: crash_mid_request: exiting with status 3 while handling request {id}"
        );
        std::process::exit(3);
    }

    fn is_cancelled(&self, id: &Id) -> bool {
        lock(&self.cancelled).contains(&id.to_string())
    }
}

/// How one request is answered: the fault applied to it, if any.
#[derive(Debug, Clone, Copy, Default)]
struct Shape {
    silent: bool,
    delay_ms: u64,
    twice: bool,
    garbage: bool,
    unknown_ids: bool,
    /// Instead of the answer: an undecodable one, or an error with `"id": null`.
    broken: Option<Broken>,
}

/// How `bad_utf8`, `bad_json` and `null_id_error` break an answer.
#[derive(Debug, Clone, Copy)]
enum Broken {
    Utf8,
    Json,
    NullIdError,
}

impl Shape {
    fn of_mode(mode: Mode) -> Self {
        let mut s = Shape::default();
        match mode {
            Mode::Silent => s.silent = true,
            Mode::Slow(ms) => s.delay_ms = ms,
            Mode::Twice => s.twice = true,
            Mode::Garbage => s.garbage = true,
            Mode::UnknownIds => s.unknown_ids = true,
            Mode::BadUtf8 => s.broken = Some(Broken::Utf8),
            Mode::BadJson => s.broken = Some(Broken::Json),
            Mode::NullIdError => s.broken = Some(Broken::NullIdError),
            _ => {}
        }
        s
    }
}

/// An answer to send: a result or an error.
enum Answer {
    Result(Value),
    Error(i64, String),
    /// The tool sends its own answer (or none).
    Deferred,
}

fn arg_u64(args: &Value, name: &str, default: u64) -> u64 {
    args.get(name).and_then(Value::as_u64).unwrap_or(default)
}

fn text(s: impl Into<String>) -> Value {
    json!({"content": [{"type": "text", "text": s.into()}]})
}

fn tool_list() -> Value {
    let tool = |name: &str, description: &str, props: Value| {
        json!({"name": name, "description": description,
               "inputSchema": {"type": "object", "properties": props}})
    };
    let n = json!({"type": "integer"});
    json!({"tools": [
        tool("echo", "Returns the message", json!({"message": {"type": "string"}})),
        tool("add", "Returns a + b", json!({"a": n, "b": n})),
        tool("sleep", "Answers after ms", json!({"ms": n})),
        tool("progress", "Sends progress steps, then answers", json!({"steps": n})),
        tool("crash_mid_request", "Exits with status 3 without answering", json!({})),
        tool("garbage", "Garbage lines around the answer", json!({})),
        tool("huge_line", "A huge line, then the answer", json!({"mib": n})),
        tool("silent", "Never answers", json!({})),
        tool("slow", "Answers after ms", json!({"ms": n})),
        tool("twice", "Answers twice", json!({})),
        tool("unknown_ids", "Answers unknown ids first", json!({})),
        tool("close_stdout", "Closes stdout", json!({})),
        tool("grandchild", "Leaves a grandchild holding stdout", json!({"stay": {"type": "boolean"}})),
        tool("ignore_sigterm", "Ignores SIGTERM from now on", json!({})),
        tool("stderr_flood", "Floods stderr, then answers", json!({"mib": n})),
        tool("ping_flood", "Answers, then floods stdout with pings and stops reading", json!({"count": n})),
        tool("bad_utf8", "Answers with bytes that are not UTF-8", json!({})),
        tool("bad_json", "Answers with a cut-off line", json!({})),
        tool("null_id_error", "Answers with an error whose id is null", json!({})),
    ]})
}

fn send_answer(server: &Server, id: &Id, answer: &Answer, shape: Shape) {
    let once = || {
        if shape.garbage {
            server.garbage();
        }
        if shape.unknown_ids {
            server.unknown_ids();
        }
        match (shape.broken, answer) {
            (_, Answer::Deferred) => {}
            (Some(Broken::Utf8), _) => server.answer_bad_utf8(id),
            (Some(Broken::Json), _) => server.answer_bad_json(id),
            (Some(Broken::NullIdError), _) => server.answer_null_id_error(),
            (None, _) => {}
        }
        if shape.broken.is_some() {
            return;
        }
        match answer {
            Answer::Result(v) => server.respond(id, v),
            Answer::Error(code, msg) => server.respond_error(id, *code, msg),
            Answer::Deferred => {}
        }
        if shape.garbage {
            server.garbage();
        }
    };
    once();
    if shape.twice {
        once();
    }
}

/// Handles one `tools/call`; returns the answer and the per-request shape it asks for.
fn call_tool(server: &Arc<Server>, id: &Id, params: &Value, shape: &mut Shape) -> Answer {
    let name = params.get("name").and_then(Value::as_str).unwrap_or("");
    let args = params.get("arguments").cloned().unwrap_or(Value::Null);
    if server.mode == Mode::CrashMidRequest || name == "crash_mid_request" {
        server.crash(id);
    }
    match name {
        "echo" => text(args.get("message").and_then(Value::as_str).unwrap_or("")).into(),
        "add" => match (
            args.get("a").and_then(Value::as_i64),
            args.get("b").and_then(Value::as_i64),
        ) {
            (Some(a), Some(b)) => text(a.saturating_add(b).to_string()).into(),
            _ => Answer::Error(-32602, "add needs integers a and b".into()),
        },
        "sleep" => {
            let ms = arg_u64(&args, "ms", 1000);
            let (server, id, shape) = (Arc::clone(server), id.clone(), *shape);
            thread::spawn(move || {
                thread::sleep(Duration::from_millis(ms));
                if server.is_cancelled(&id) {
                    server.log_event(&format!("sleep {id} cancelled, not answered"));
                } else {
                    send_answer(&server, &id, &text(format!("slept {ms} ms")).into(), shape);
                }
            });
            Answer::Deferred
        }
        "progress" => {
            let steps = arg_u64(&args, "steps", 3);
            if let Some(token) = params.pointer("/_meta/progressToken") {
                for i in 1..=steps {
                    server.notify(
                        "notifications/progress",
                        &json!({"progressToken": token, "progress": i, "total": steps,
                                "message": format!("step {i}")}),
                    );
                    thread::sleep(Duration::from_millis(10));
                }
            }
            text(format!("{steps} steps done")).into()
        }
        "garbage" => {
            shape.garbage = true;
            text("garbage").into()
        }
        "huge_line" => {
            let mib = usize::try_from(arg_u64(&args, "mib", 64)).unwrap_or(64);
            server.huge_line(mib);
            text(format!("after a {mib} MiB line")).into()
        }
        "silent" => {
            shape.silent = true;
            Answer::Deferred
        }
        "slow" => {
            shape.delay_ms = arg_u64(&args, "ms", 1000);
            text("slow").into()
        }
        "twice" => {
            shape.twice = true;
            text("twice").into()
        }
        "unknown_ids" => {
            shape.unknown_ids = true;
            text("after unknown ids").into()
        }
        "close_stdout" => {
            server.close_stdout();
            Answer::Deferred
        }
        "grandchild" => {
            let stay = args.get("stay").and_then(Value::as_bool).unwrap_or(true);
            send_answer(server, id, &text("grandchild").into(), *shape);
            server.grandchild();
            if !stay {
                std::process::exit(0);
            }
            Answer::Deferred
        }
        "ignore_sigterm" => {
            server.ignore_sigterm();
            text("SIGTERM ignored").into()
        }
        "stderr_flood" => {
            let mib = usize::try_from(arg_u64(&args, "mib", 8)).unwrap_or(8);
            server.stderr_flood(mib);
            text("after a stderr flood").into()
        }
        "ping_flood" => {
            let count = arg_u64(&args, "count", 4_000_000);
            send_answer(server, id, &text("flooding").into(), *shape);
            server.ping_flood(count);
            Answer::Deferred
        }
        "bad_utf8" => {
            shape.broken = Some(Broken::Utf8);
            text("bad_utf8").into()
        }
        "bad_json" => {
            shape.broken = Some(Broken::Json);
            text("bad_json").into()
        }
        "null_id_error" => {
            shape.broken = Some(Broken::NullIdError);
            text("null_id_error").into()
        }
        other => Answer::Error(-32602, format!("unknown tool {other:?}")),
    }
}

impl From<Value> for Answer {
    fn from(v: Value) -> Self {
        Answer::Result(v)
    }
}

/// Applies the whole-process faults that happen once, right after the initialize answer.
fn after_initialize(server: &Server) {
    match server.mode {
        Mode::HugeLine(mib) => server.huge_line(mib),
        Mode::CloseStdout => server.close_stdout(),
        Mode::Grandchild { stay } => {
            server.grandchild();
            if !stay {
                server.log_event("exiting, grandchild left behind");
                std::process::exit(0);
            }
        }
        Mode::StderrFlood(mib) => server.stderr_flood(mib),
        Mode::PingFlood(count) => server.ping_flood(count),
        _ => {}
    }
}

fn handle_request(server: &Arc<Server>, id: Id, method: &str, params: Option<&Value>) {
    let null = Value::Null;
    let params = params.unwrap_or(&null);
    if method != "initialize"
        && server.mode == Mode::StrictHandshake
        && !server.initialized.load(std::sync::atomic::Ordering::SeqCst)
    {
        server.log_event(&format!("strict_handshake: {method} before initialize"));
        eprintln!(
            "fault_server: strict_handshake: {method} before initialize, exiting with status 1"
        );
        std::process::exit(1);
    }
    if method == "initialize" {
        server
            .initialized
            .store(true, std::sync::atomic::Ordering::SeqCst);
        let version = params
            .get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or("2025-11-25");
        if matches!(server.mode, Mode::PingFlood(_)) {
            // Before the answer, so that no request the client sends after it is read: the
            // reader may already be waiting for the next chunk when the flood begins.
            server
                .stop_reading
                .store(true, std::sync::atomic::Ordering::SeqCst);
        }
        server.respond(
            &id,
            &json!({"protocolVersion": version,
                    "capabilities": {"tools": {"listChanged": false}},
                    "serverInfo": {"name": "fault_server", "version": "0.1.0"}}),
        );
        after_initialize(server);
        return;
    }
    let mut shape = Shape::of_mode(server.mode);
    let answer = match method {
        "ping" => Answer::Result(json!({})),
        "tools/list" => match server.mode {
            Mode::EndlessPages(per_page) => Answer::Result(hostile::endless_page(params, per_page)),
            _ => Answer::Result(tool_list()),
        },
        "tools/call" => call_tool(server, &id, params, &mut shape),
        other => Answer::Error(-32601, format!("method not found: {other}")),
    };
    if shape.silent || matches!(answer, Answer::Deferred) {
        return;
    }
    if shape.delay_ms > 0 {
        let server = Arc::clone(server);
        thread::spawn(move || {
            thread::sleep(Duration::from_millis(shape.delay_ms));
            send_answer(&server, &id, &answer, shape);
        });
    } else {
        send_answer(server, &id, &answer, shape);
    }
}

fn handle(server: &Arc<Server>, message: Message) {
    match message {
        Message::Request { id, method, params } => {
            let params: Option<Value> = params.and_then(|p| serde_json::from_str(p.get()).ok());
            handle_request(server, id, &method, params.as_ref());
        }
        Message::Notification { method, params } if method == "notifications/cancelled" => {
            let params: Option<Value> = params.and_then(|p| serde_json::from_str(p.get()).ok());
            if let Some(rid) = params.as_ref().and_then(|p| p.get("requestId")) {
                lock(&server.cancelled).insert(rid.to_string());
            }
        }
        // Other notifications and the client's answers need nothing (they are logged).
        _ => {}
    }
}

/// Reads stdin, logs every line as it arrives and forwards decoded messages.
fn read_stdin(server: &Server, tx: &mpsc::Sender<Input>) {
    let mut decoder = LineDecoder::with_max_line_len(256 << 20);
    let mut stdin = io::stdin().lock();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match stdin.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if server
            .stop_reading
            .load(std::sync::atomic::Ordering::SeqCst)
        {
            // `ping_flood`: what was read after the flood began is ignored, and stdin is never
            // read again (the client's writes back up).
            server.log_event("stdin reader stopped");
            loop {
                thread::park();
            }
        }
        let mut messages = Vec::new();
        decoder.decode(&buf[..n], |line| match line {
            Line::Message(bytes) => {
                server.log_line(bytes.as_bytes());
                match jsonrpc::decode_owned(bytes.as_bytes()) {
                    Ok(jsonrpc::Decoded::Single(m)) => messages.push(m),
                    Ok(batch) => eprintln!("fault_server: ignoring a batch: {batch:?}"),
                    Err(e) => eprintln!("fault_server: ignoring input: {e}"),
                }
            }
            other => eprintln!("fault_server: ignoring input: {other:?}"),
        });
        for m in messages {
            if tx.send(Input::Message(m)).is_err() {
                return;
            }
        }
    }
    let _ = tx.send(Input::Eof);
}

fn main() {
    let options = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("fault_server: {e}");
            std::process::exit(2);
        }
    };
    let log = options.log.as_deref().map(|path| {
        let file = File::options().create(true).append(true).open(path);
        // A test that asks for a log and cannot get one must fail loudly.
        file.unwrap_or_else(|e| panic!("FAULT_LOG {path}: {e}"))
    });
    if let Some(mode) = options.http {
        http::run(mode, log);
    }
    let log = log.map(Mutex::new);
    let server = Arc::new(Server {
        mode: options.mode,
        log,
        cancelled: Mutex::new(HashSet::new()),
        unknown_counter: Mutex::new(0),
        initialized: std::sync::atomic::AtomicBool::new(false),
        stop_reading: std::sync::atomic::AtomicBool::new(false),
    });
    server.log_event(&format!(
        "start pid {} mode {:?}",
        std::process::id(),
        options.mode
    ));
    if options.mode == Mode::IgnoreSigterm {
        server.ignore_sigterm();
    }
    if options.mode == Mode::Garbage {
        server.garbage();
    }
    let (tx, rx) = mpsc::channel();
    {
        let server = Arc::clone(&server);
        thread::spawn(move || read_stdin(&server, &tx));
    }
    while let Ok(input) = rx.recv() {
        match input {
            Input::Message(m) => handle(&server, m),
            Input::Eof => break,
        }
    }
    server.log_event("stdin EOF");
    if options.stay {
        loop {
            thread::sleep(Duration::from_secs(3600));
        }
    }
}
