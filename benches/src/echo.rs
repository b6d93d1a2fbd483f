//! The end-to-end benchmarks' echo server: an MCP server over stdio with one tool, `echo`,
//! that answers as fast as one thread can, so that it is never the bottleneck of a client
//! measured against it.
//!
//! It reads stdin in large chunks, frames them with [`LineDecoder`], decodes each line with
//! [`jsonrpc::decode`], appends every answer to one buffer, and writes that buffer with
//! a single `write_all` per chunk read: answers come out in request order, batched as densely
//! as the requests arrived. [`Mode::Raw`] skips JSON-RPC entirely and writes every line back
//! (the pipe limit's peer).

use std::borrow::Cow;
use std::io::{self, Read, Write};

use mcp_proto::framing::lines::{Line, LineDecoder, encode_line};
use mcp_proto::jsonrpc::{self, DecodedRef, ErrorObject, Id, MessageRef, RawJson};
use serde::Deserialize;
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

/// The protocol versions the server accepts in `initialize` (others get the newest).
const VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

const TOOLS: &str = r#"{"tools":[{"name":"echo","description":"Returns its message argument as text","inputSchema":{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}}]}"#;

/// Answers every line of `input` into `output` until `input` ends. Returns the number of
/// requests answered.
///
/// # Errors
///
/// An I/O error of either stream (a broken pipe when the client went away included).
pub fn serve(mode: Mode, mut input: impl Read, mut output: impl Write) -> io::Result<u64> {
    let mut decoder = LineDecoder::new();
    let mut buf = vec![0u8; 256 * 1024];
    let mut out = Vec::with_capacity(256 * 1024);
    let mut answered = 0u64;
    loop {
        let n = match input.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        decoder.decode(&buf[..n], |line| {
            answer(mode, line, &mut out, &mut answered)
        });
        if !out.is_empty() {
            output.write_all(&out)?;
            output.flush()?;
            out.clear();
        }
    }
    decoder.finish(|line| answer(mode, line, &mut out, &mut answered));
    output.write_all(&out)?;
    output.flush()?;
    Ok(answered)
}

/// Answers one JSON-RPC message (the body of an HTTP POST) into `out`, as [`serve`] answers
/// one line in [`Mode::Mcp`]: the answer ends in `\n`; nothing is written for notifications,
/// responses and garbage. Returns whether a request was answered.
pub fn answer_message(text: &str, out: &mut Vec<u8>) -> bool {
    let mut answered = 0;
    answer(Mode::Mcp, Line::Message(text), out, &mut answered);
    answered > 0
}

fn answer(mode: Mode, line: Line<'_>, out: &mut Vec<u8>, answered: &mut u64) {
    let Line::Message(text) = line else {
        return;
    };
    if mode == Mode::Raw {
        encode_line(out, text.as_bytes());
        *answered += 1;
        return;
    }
    let (id, method, params) = match jsonrpc::decode(text) {
        Ok(DecodedRef::Single(MessageRef::Request { id, method, params })) => (id, method, params),
        Ok(DecodedRef::Single(MessageRef::Notification { method, .. }))
            if mode == Mode::Silent && method == FLUSH =>
        {
            out.extend_from_slice(
                br#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"flushed"}}"#,
            );
            out.push(b'\n');
            return;
        }
        // Notifications (`initialized`), responses and garbage need no answer.
        _ => return,
    };
    if mode == Mode::Silent && method == "tools/call" {
        // Read, never answered: the client's request stays pending.
        return;
    }
    *answered += 1;
    match &*method {
        "tools/call" => echo(out, &id, params),
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
                r#"{{"protocolVersion":"{version}","capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"mcp-bench-echo","version":"0.1.0"}}}}"#
            );
            respond(out, &id, &result);
        }
        "tools/list" => respond(out, &id, TOOLS),
        "ping" => respond(out, &id, "{}"),
        other => {
            jsonrpc::encode_error(out, Some(&id), &ErrorObject::method_not_found(other));
            out.push(b'\n');
        }
    }
}

fn respond(out: &mut Vec<u8>, id: &Id, result: &str) {
    // Invariant: every `result` passed here is a JSON literal of this module or built from
    // one with a version string from `VERSIONS`.
    let raw: &RawValue =
        serde_json::from_str(result).expect("the echo server's fixed results are valid JSON");
    jsonrpc::encode_response(out, id, raw);
    out.push(b'\n');
}

fn echo(out: &mut Vec<u8>, id: &Id, params: Option<RawJson<'_>>) {
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
    let call = params.and_then(|p| serde_json::from_str::<Call<'_>>(p.get()).ok());
    let Some(call) = call.filter(|c| c.name == "echo") else {
        let e = ErrorObject::new(ErrorObject::INVALID_PARAMS, "unknown tool (only echo)");
        jsonrpc::encode_error(out, Some(id), &e);
        out.push(b'\n');
        return;
    };
    let message = call.arguments.and_then(|a| a.message).unwrap_or_default();
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    // Invariant: ids and strings always serialize into a Vec.
    serde_json::to_writer(&mut *out, id).expect("an id serializes");
    out.extend_from_slice(br#","result":{"content":[{"type":"text","text":"#);
    serde_json::to_writer(&mut *out, &message).expect("a string serializes");
    out.extend_from_slice(b"}]}}\n");
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
        assert_eq!(out[0]["result"]["protocolVersion"], "2025-11-25");
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
        assert_eq!(
            out[4],
            serde_json::json!({"jsonrpc":"2.0","id":"p","result":{}})
        );
    }

    #[test]
    fn refuses_unknown_methods_and_tools() {
        let input = concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"resources/list"}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"rm"}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#,
            "\n",
        );
        let (_, out) = run(Mode::Mcp, input);
        assert_eq!(out[0]["error"]["code"], -32601);
        assert_eq!(out[1]["error"]["code"], -32602);
        assert_eq!(out[2]["result"]["tools"][0]["name"], "echo");
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
