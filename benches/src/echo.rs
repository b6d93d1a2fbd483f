//! The end-to-end benchmarks' echo server: an MCP server over stdio with one tool, `echo`,
//! that answers as fast as one thread can, so that it is never the bottleneck of a client
//! measured against it.
//!
//! [`Mode::Mcp`] and [`Mode::Silent`] are the core's server session
//! ([`StdioServerConnection`]) driven by a plain synchronous loop: read stdin in large chunks,
//! hand each chunk to [`handle_bytes`](StdioServerConnection::handle_bytes), answer the
//! session's [`Event::Request`]s, then pull every message the session queued with
//! [`poll_transmit`](StdioServerConnection::poll_transmit) into one buffer and write it with a
//! single `write_all` per chunk read: answers are batched as densely as the requests arrived.
//! The session answers `initialize` (version negotiation), `ping` and what the server does not
//! offer by itself; the loop answers `tools/list` and `tools/call`. Calls are answered in
//! request order; the session's own answers (`initialize`, `ping`) can go ahead of the calls
//! read in the same chunk, as the session answers them while it reads.
//!
//! [`Mode::Raw`] skips JSON-RPC entirely and writes every line back (the pipe limit's peer).
//! [`answer_message`] answers one message without a session, for the stateless HTTP mode
//! ([`crate::echo_http`]).

use std::borrow::Cow;
use std::io::{self, Read, Write};
use std::time::Instant;

use mcp_proto::framing::lines::{Line, LineDecoder, encode_line};
use mcp_proto::jsonrpc::{self, DecodedRef, ErrorObject, Id, MessageRef, RawJson};
use mcp_proto::server::stdio::StdioServerConnection;
use mcp_proto::server::{ClientRequestId, Event, MessageKind, ServerConfig, ServerSession};
use mcp_proto::session::{Era, ProtocolVersion};
use mcp_proto::types::{Implementation, LoggingLevel, ServerCapabilities, ToolsCapability};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// What the server does with each line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// An MCP server: `initialize`, `ping`, `tools/list`, `tools/call` of `echo`.
    Mcp,
    /// No JSON-RPC at all: every line is written back as it came.
    Raw,
    /// An MCP server that never answers `tools/call` (the pending-request bench's peer): the
    /// handshake, `ping` and `tools/list` are answered as in [`Mode::Mcp`], and the
    /// notification [`FLUSH`] is answered with a `notifications/message`, so that a client
    /// learns that every line it wrote before was read.
    Silent,
}

/// The notification a [`Mode::Silent`] server answers with a `notifications/message`.
pub const FLUSH: &str = "bench/flush";

/// The calls a [`Mode::Silent`] server keeps open (never answered) before it refuses new
/// ones: far above what the pending-request bench sends (100 000 by default), and a bound
/// all the same.
const SILENT_OPEN_CALLS: usize = 1 << 22;

/// The bytes read at once. In [`Mode::Mcp`] it is also the bound of open requests: the
/// session hands over a whole chunk's requests before the loop answers them, and each took
/// at least one byte of it, so none is ever refused (the session's default of 1024 would
/// refuse the rest of a chunk of 2000 calls).
const CHUNK: usize = 256 * 1024;

/// The bytes the session may queue between two writes: far above the answers to one
/// chunk of requests, so that no request is ever refused for a full queue.
const OUTBOUND_BYTES: usize = 64 << 20;

/// The protocol versions the server accepts in `initialize` (others get the newest).
const VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

const SERVER_NAME: &str = "mcp-bench-echo";
const SERVER_VERSION: &str = "0.1.0";

const TOOLS: &str = r#"{"tools":[{"name":"echo","description":"Returns its message argument as text","inputSchema":{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}}]}"#;

/// Answers every line of `input` into `output` until `input` ends. Returns the number of
/// responses written (results and errors; in [`Mode::Raw`], the lines written back).
///
/// # Errors
///
/// An I/O error of either stream (a broken pipe when the client went away included).
pub fn serve(mode: Mode, input: impl Read, output: impl Write) -> io::Result<u64> {
    match mode {
        Mode::Raw => serve_raw(input, output),
        Mode::Mcp | Mode::Silent => serve_session(mode == Mode::Silent, input, output),
    }
}

/// The session's configuration: the initialize-era versions only (the 2026 envelope is not
/// read, which keeps a call's params parsed once by the session), no timers (the loop
/// never sleeps: it blocks on its input), and bounds that never refuse a bench client.
fn config(silent: bool) -> ServerConfig {
    let config = ServerConfig::new(Implementation::new(SERVER_NAME, SERVER_VERSION))
        .with_capabilities(ServerCapabilities {
            tools: Some(ToolsCapability::default()),
            // The silent server's flush answer is a log entry.
            logging: silent.then(serde_json::Map::new),
            ..ServerCapabilities::default()
        })
        .with_versions(
            ProtocolVersion::ALL
                .into_iter()
                .filter(|v| v.era() == Era::Initialize),
        )
        .with_handshake_timeout(None)
        .with_stall_timeout(None);
    let open = if silent { SILENT_OPEN_CALLS } else { CHUNK };
    let in_flight = config.max_in_flight;
    config.with_limits(open, in_flight, OUTBOUND_BYTES)
}

fn serve_session(silent: bool, mut input: impl Read, mut output: impl Write) -> io::Result<u64> {
    let mut conn = StdioServerConnection::new(config(silent), Instant::now());
    let answers = Answers::new(silent);
    let mut buf = vec![0u8; CHUNK];
    let mut out = Vec::with_capacity(CHUNK);
    let mut answered = 0u64;
    loop {
        let n = match input.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let now = Instant::now();
        conn.handle_bytes(now, &buf[..n]);
        answers.drain(&mut conn, now);
        answered += transmit(&mut conn, &mut out);
        if !out.is_empty() {
            output.write_all(&out)?;
            output.flush()?;
            out.clear();
        }
    }
    let now = Instant::now();
    // The input ended, the output did not: a last line without its newline is still a
    // request to answer. Ending it here (a blank line when nothing is buffered is skipped)
    // delivers it while the session is open; `handle_eof` would drop its answer.
    conn.handle_bytes(now, b"\n");
    answers.drain(&mut conn, now);
    answered += transmit(&mut conn, &mut out);
    output.write_all(&out)?;
    output.flush()?;
    conn.handle_eof(now, None);
    Ok(answered)
}

/// Pulls every queued message into `out`; returns how many were responses.
fn transmit(conn: &mut StdioServerConnection, out: &mut Vec<u8>) -> u64 {
    let mut responses = 0;
    while let Some(sent) = conn.poll_transmit(out) {
        responses += u64::from(sent.kind == MessageKind::Response);
    }
    responses
}

/// The loop's share of the answers: `tools/list` and `tools/call`.
struct Answers {
    silent: bool,
    /// The `tools/list` result, serialized once and cloned into each answer.
    tools: Box<RawValue>,
    /// The silent server's flush answer (a log entry's data).
    flushed: Box<RawValue>,
}

impl Answers {
    fn new(silent: bool) -> Self {
        // Invariant: both are JSON literals of this module.
        let tools = RawValue::from_string(TOOLS.to_owned()).expect("TOOLS is valid JSON");
        let flushed =
            RawValue::from_string(r#""flushed""#.to_owned()).expect("a JSON string literal");
        Answers {
            silent,
            tools,
            flushed,
        }
    }

    /// Handles every event the session has: answers requests, flushes on [`FLUSH`].
    fn drain(&self, conn: &mut StdioServerConnection, now: Instant) {
        while let Some(event) = conn.poll_event() {
            match event {
                Event::Request {
                    id, method, params, ..
                } => self.answer(conn.session_mut(), now, id, &method, params.as_deref()),
                Event::Notification { method, .. } if self.silent && method == FLUSH => {
                    // Declared (`config`) and before any `logging/setLevel` of the bench
                    // client, so it is sent; a client that raised the level asked for less.
                    let _sent =
                        conn.session_mut()
                            .log(now, LoggingLevel::Info, None, &self.flushed);
                }
                // Diagnostics (garbage, answered by the session), the handshake's progress,
                // other notifications and the close need nothing from the loop.
                _ => {}
            }
        }
    }

    fn answer(
        &self,
        session: &mut ServerSession,
        now: Instant,
        id: ClientRequestId,
        method: &str,
        params: Option<&RawValue>,
    ) {
        let answer = match method {
            // Read, never answered: the client's request stays pending.
            "tools/call" if self.silent => return,
            "tools/call" => echo_result(params.map(RawValue::get)),
            "tools/list" => Ok(self.tools.clone()),
            other => Err(ErrorObject::method_not_found(other)),
        };
        // Each event's request is open and answered here once; the session is not closed
        // while it hands out requests: an error cannot happen, and would only drop the answer.
        let _answered = match answer {
            Ok(result) => session.respond(now, id, result),
            Err(error) => session.respond_error(now, id, error),
        };
    }
}

/// The result of `tools/call` with `params`: `echo`'s message as text, or `-32602` for
/// another tool.
fn echo_result(params: Option<&str>) -> Result<Box<RawValue>, ErrorObject> {
    #[derive(Deserialize)]
    struct Call<'a> {
        #[serde(borrow)]
        name: Cow<'a, str>,
        #[serde(default, borrow)]
        arguments: Option<Args<'a>>,
    }
    #[derive(Deserialize)]
    struct Args<'a> {
        #[serde(default, borrow)]
        message: Option<Cow<'a, str>>,
    }
    #[derive(Serialize)]
    struct Text<'a> {
        #[serde(rename = "type")]
        kind: &'static str,
        text: &'a str,
    }
    #[derive(Serialize)]
    struct Result<'a> {
        content: [Text<'a>; 1],
    }
    let call = params.and_then(|p| serde_json::from_str::<Call<'_>>(p).ok());
    let Some(call) = call.filter(|c| c.name == "echo") else {
        return Err(ErrorObject::new(
            ErrorObject::INVALID_PARAMS,
            "unknown tool (only echo)",
        ));
    };
    let message = call.arguments.and_then(|a| a.message).unwrap_or_default();
    let result = Result {
        content: [Text {
            kind: "text",
            text: &message,
        }],
    };
    // Serialized straight into the raw result (no parse back): strings always serialize.
    Ok(jsonrpc::to_raw(&result).expect("a text result serializes"))
}

fn serve_raw(mut input: impl Read, mut output: impl Write) -> io::Result<u64> {
    let mut decoder = LineDecoder::new();
    let mut buf = vec![0u8; 256 * 1024];
    let mut out = Vec::with_capacity(256 * 1024);
    let mut written = 0u64;
    let mut echo_line = |line: Line<'_>, out: &mut Vec<u8>| {
        if let Line::Message(text) = line {
            encode_line(out, text.as_bytes());
            written += 1;
        }
    };
    loop {
        let n = match input.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        decoder.decode(&buf[..n], |line| echo_line(line, &mut out));
        if !out.is_empty() {
            output.write_all(&out)?;
            output.flush()?;
            out.clear();
        }
    }
    decoder.finish(|line| echo_line(line, &mut out));
    output.write_all(&out)?;
    output.flush()?;
    Ok(written)
}

/// Answers one JSON-RPC message (the body of an HTTP POST) into `out` without a session,
/// as the stdio server answers it in [`Mode::Mcp`]: the answer ends in `\n`; nothing is
/// written for notifications, responses and garbage. Returns whether a request was answered.
pub fn answer_message(text: &str, out: &mut Vec<u8>) -> bool {
    let Ok(DecodedRef::Single(MessageRef::Request { id, method, params })) = jsonrpc::decode(text)
    else {
        // Notifications (`initialized`), responses and garbage need no answer.
        return false;
    };
    match &*method {
        "tools/call" => {
            let result = echo_result(params.map(RawJson::get));
            encode_answer(out, &id, result);
        }
        "initialize" => {
            #[derive(Deserialize)]
            struct Init<'a> {
                #[serde(rename = "protocolVersion", borrow)]
                version: Cow<'a, str>,
            }
            let asked = params.and_then(|p| serde_json::from_str::<Init<'_>>(p.get()).ok());
            let version = asked
                .as_ref()
                .map(|a| &*a.version)
                .filter(|v| VERSIONS.contains(v))
                .unwrap_or("2025-11-25");
            let result = format!(
                r#"{{"protocolVersion":"{version}","capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"{SERVER_NAME}","version":"{SERVER_VERSION}"}}}}"#
            );
            // Invariant: built from a JSON literal and a version string from `VERSIONS`.
            let result = RawValue::from_string(result).expect("the initialize result is JSON");
            encode_answer(out, &id, Ok(result));
        }
        "tools/list" => {
            // Invariant: a JSON literal of this module.
            let tools: &RawValue = serde_json::from_str(TOOLS).expect("TOOLS is valid JSON");
            jsonrpc::encode_response(out, &id, tools);
            out.push(b'\n');
        }
        "ping" => encode_answer(out, &id, Ok(jsonrpc::empty_object())),
        other => encode_answer(out, &id, Err(ErrorObject::method_not_found(other))),
    }
    true
}

fn encode_answer(out: &mut Vec<u8>, id: &Id, answer: Result<Box<RawValue>, ErrorObject>) {
    match answer {
        Ok(result) => jsonrpc::encode_response(out, id, &result),
        Err(error) => jsonrpc::encode_error(out, Some(id), &error),
    }
    out.push(b'\n');
}

/// The `tools/call` line every end-to-end client sends, for request `id`, without its `\n`.
#[must_use]
pub fn call_line(id: u64, message: &str) -> String {
    let message = serde_json::to_string(message).expect("a string serializes");
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"message":{message}}}}}}}"#
    )
}

/// The `initialize` request and `initialized` notification, each ending in `\n`.
#[must_use]
pub fn handshake_lines() -> String {
    concat!(
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"file","version":"0"}}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        "\n"
    )
    .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(mode: Mode, input: &str) -> (u64, Vec<serde_json::Value>) {
        let mut out = Vec::new();
        let n = serve(mode, input.as_bytes(), &mut out).unwrap();
        let lines = std::str::from_utf8(&out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        (n, lines)
    }

    #[test]
    fn answers_the_handshake_and_echoes_in_order() {
        let mut input = handshake_lines();
        for i in 1..=3 {
            input.push_str(&call_line(i, &format!("hi \"{i}\" ü")));
            input.push('\n');
        }
        input.push_str(r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#);
        let (n, out) = run(Mode::Mcp, &input);
        assert_eq!(n, 5);
        assert_eq!(
            out.len(),
            5,
            "one answer per request, none for the notification"
        );
        assert_eq!(out[0]["result"]["protocolVersion"], "2025-11-25");
        assert_eq!(out[0]["result"]["serverInfo"]["name"], "mcp-bench-echo");
        assert_eq!(
            out[0]["result"]["capabilities"]["tools"],
            serde_json::json!({})
        );
        for i in 1..=3u64 {
            assert_eq!(out[i as usize]["id"], i);
            assert_eq!(
                out[i as usize]["result"]["content"][0]["text"],
                format!("hi \"{i}\" ü")
            );
        }
        // The last line has no newline: it is answered all the same.
        assert_eq!(out[4], json!({"jsonrpc":"2.0","id":"p","result":{}}));
    }

    #[test]
    fn refuses_unknown_methods_and_tools() {
        let mut input = handshake_lines();
        input.push_str(concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"resources/list"}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"rm"}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":4,"method":"x/unknown"}"#,
            "\n",
        ));
        let (n, out) = run(Mode::Mcp, &input);
        assert_eq!(n, 5);
        // The session refuses what the server does not offer; the loop, a tool or a
        // method it does not know.
        assert_eq!(out[1]["error"]["code"], -32601);
        assert_eq!(out[2]["error"]["code"], -32602);
        assert_eq!(out[3]["result"]["tools"][0]["name"], "echo");
        assert_eq!(
            (&out[4]["id"], &out[4]["error"]["code"]),
            (&json!(4), &json!(-32601))
        );
    }

    #[test]
    fn refuses_calls_before_the_handshake() {
        let (_, out) = run(Mode::Mcp, &format!("{}\n", call_line(1, "too early")));
        assert_eq!(
            (&out[0]["id"], &out[0]["error"]["code"]),
            (&json!(1), &json!(-32600))
        );
    }

    #[test]
    fn silent_mode_answers_the_handshake_and_flush_but_no_call() {
        let mut input = handshake_lines();
        input.push_str(&call_line(1, "never answered"));
        input.push('\n');
        input.push_str(&format!(r#"{{"jsonrpc":"2.0","method":"{FLUSH}"}}"#));
        input.push('\n');
        input.push_str(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#);
        let (n, out) = run(Mode::Silent, &input);
        assert_eq!(n, 2, "initialize and ping, not the call");
        assert_eq!(out.len(), 3);
        assert_eq!(out[0]["id"], 0);
        assert_eq!(out[1]["method"], "notifications/message");
        assert_eq!(out[2]["id"], 2);
    }

    /// Gives its chunks one per `read`, as a pipe does when the client writes in bursts.
    struct Chunks(std::collections::VecDeque<Vec<u8>>);

    impl Read for Chunks {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let Some(chunk) = self.0.pop_front() else {
                return Ok(0);
            };
            assert!(chunk.len() <= buf.len(), "a test chunk fits one read");
            buf[..chunk.len()].copy_from_slice(&chunk);
            Ok(chunk.len())
        }
    }

    /// Keeps what was written between two flushes as one batch.
    #[derive(Default)]
    struct Batches {
        current: Vec<u8>,
        flushed: Vec<Vec<u8>>,
    }

    impl Write for Batches {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.current.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            if !self.current.is_empty() {
                self.flushed.push(std::mem::take(&mut self.current));
            }
            Ok(())
        }
    }

    fn ids(batch: &[u8]) -> Vec<serde_json::Value> {
        std::str::from_utf8(batch)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["id"].clone())
            .collect()
    }

    #[test]
    fn answers_each_chunk_in_one_batch_whatever_the_cuts() {
        let mut calls = String::new();
        for i in 1..=4 {
            calls.push_str(&call_line(i, "x"));
            calls.push('\n');
        }
        // The handshake alone, then four calls cut in the middle of the second and the
        // third: a request is answered in the batch of the chunk that completes it.
        let cut1 = calls.find("\n").unwrap() + 10;
        let cut2 = cut1 + calls[cut1..].find("\n").unwrap() + 30;
        let chunks = [
            handshake_lines().into_bytes(),
            calls.as_bytes()[..cut1].to_vec(),
            calls.as_bytes()[cut1..cut2].to_vec(),
            calls.as_bytes()[cut2..].to_vec(),
        ];
        let mut out = Batches::default();
        let n = serve(Mode::Mcp, Chunks(chunks.into()), &mut out).unwrap();
        assert_eq!(n, 5);
        let batches: Vec<_> = out.flushed.iter().map(|b| ids(b)).collect();
        assert_eq!(
            batches,
            [
                vec![json!(0)],
                vec![json!(1)],
                vec![json!(2)],
                vec![json!(3), json!(4)]
            ]
        );
    }

    #[test]
    fn answers_garbage_with_a_parse_error_and_goes_on() {
        let mut input = handshake_lines();
        input.push_str("this is not json\n");
        input.push_str(&call_line(1, "still here"));
        input.push('\n');
        let (_, out) = run(Mode::Mcp, &input);
        assert_eq!(out[1]["error"]["code"], -32700);
        assert_eq!(out[1]["id"], serde_json::Value::Null);
        assert_eq!(out[2]["result"]["content"][0]["text"], "still here");
    }

    #[test]
    fn answers_every_call_of_a_chunk_past_the_sessions_default_bound() {
        // 3000 calls in one read: all open at once in the session before the loop answers.
        let mut input = handshake_lines();
        for i in 1..=3000 {
            input.push_str(&call_line(i, "m"));
            input.push('\n');
        }
        let (n, out) = run(Mode::Mcp, &input);
        assert_eq!(n, 3001);
        assert!(out.iter().all(|a| a.get("error").is_none()), "none refused");
        assert_eq!(out[3000]["id"], 3000);
    }

    #[test]
    fn silent_mode_keeps_thousands_of_calls_open() {
        // Past the session's default bound of open requests (1024): none is refused.
        let mut input = handshake_lines();
        for i in 1..=3000 {
            input.push_str(&call_line(i, "never answered"));
            input.push('\n');
        }
        input.push_str(r#"{"jsonrpc":"2.0","id":"last","method":"ping"}"#);
        input.push('\n');
        let (n, out) = run(Mode::Silent, &input);
        assert_eq!(n, 2, "initialize and ping only: {out:?}");
        assert_eq!(out[1]["id"], "last");
    }

    #[test]
    fn raw_mode_writes_every_line_back() {
        let (n, out) = run(Mode::Raw, "{\"a\":1}\n\n{\"b\":2}");
        assert_eq!(n, 2);
        assert_eq!(
            out,
            [serde_json::json!({"a":1}), serde_json::json!({"b":2})]
        );
    }
}
