use mcp_proto::http::headers::HeaderList;
use mcp_tokio::mcp_driver::HttpTrace;

use super::*;

const CANARY: &str = "canary-5ecr3t-value";

#[test]
fn trace_lines() {
    assert_eq!(
        trace_line(WireDirection::Sent, b"{\"id\":1,\"token\":\"x\"}\n"),
        r#"-> {"id":1,"token":"***"}"#
    );
    assert_eq!(
        trace_line(WireDirection::Received, b"not json Bearer zzz\n"),
        "<- not json Bearer ***"
    );
    let long = format!("\"{}\"", "a".repeat(5000));
    let line = trace_line(WireDirection::Received, long.as_bytes());
    assert!(line.ends_with("… (5002 bytes)"), "{line}");
    assert_eq!(masked_pairs(&[("A".into(), "1".into())], "="), "A=***");
    assert_eq!(
        trace_line(WireDirection::Received, b"{\"id\":1,\"result\":\"\xff\"}\n"),
        "<- {\"id\":1,\"result\":\"\u{FFFD}\"} (not valid UTF-8; bad bytes shown as \u{FFFD})"
    );
}

fn request_headers() -> HeaderList {
    [
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("authorization", "Bearer canary-5ecr3t-value"),
        ("x-api-key", CANARY),
        ("mcp-session-id", "sess-1"),
    ]
    .into_iter()
    .collect()
}

/// Runs `steps` through a tracer and returns every line.
fn run(headers: bool, steps: &[HttpTrace<'_>]) -> Vec<String> {
    let mut tracer = HttpTracer::new(headers);
    let lines: Vec<String> = steps.iter().flat_map(|s| tracer.step(*s)).collect();
    assert!(tracer.open.is_empty(), "every exchange's state is freed");
    let all = lines.join("\n");
    assert!(!all.contains(CANARY), "{all}");
    lines
}

fn json_exchange<'a>(
    url: &'a url::Url,
    req_headers: &'a HeaderList,
    resp_headers: &'a HeaderList,
    chunks: &'a [&'a [u8]],
) -> Vec<HttpTrace<'a>> {
    let mut steps = vec![
        HttpTrace::Request {
            exchange: 1,
            method: "POST",
            url,
            headers: req_headers,
            body: br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"login","arguments":{"password":"canary-5ecr3t-value"}}}"#,
        },
        HttpTrace::Response {
            exchange: 1,
            status: 200,
            headers: resp_headers,
        },
    ];
    steps.extend(chunks.iter().map(|c| HttpTrace::Body {
        exchange: 1,
        chunk: c,
    }));
    steps.push(HttpTrace::End { exchange: 1 });
    steps
}

#[test]
fn a_json_answer_is_one_whole_line_at_its_end() {
    let url = url::Url::parse(&format!("http://127.0.0.1:1/mcp?token={CANARY}")).unwrap();
    let req = request_headers();
    let resp: HeaderList = [("content-type", "application/json")].into_iter().collect();
    // No final newline, split mid-string: one line, after the whole body.
    let chunks: [&[u8]; 3] = [
        br#"{"jsonrpc":"2.0","id":1,"res"#,
        br#"ult":{"access_token":"canary-5ecr3t-"#,
        br#"value","ok":true}}"#,
    ];
    let lines = run(false, &json_exchange(&url, &req, &resp, &chunks));
    assert_eq!(
        lines,
        [
            r#"-> {"id":1,"jsonrpc":"2.0","method":"tools/call","params":{"arguments":{"password":"***"},"name":"login"}}"#,
            r#"<- {"id":1,"jsonrpc":"2.0","result":{"access_token":"***","ok":true}}"#,
        ]
    );
}

#[test]
fn sse_answers_show_messages_not_framing() {
    let url = url::Url::parse("http://127.0.0.1:1/mcp").unwrap();
    let req = request_headers();
    let resp: HeaderList = [
        ("content-type", "text/event-stream"),
        ("set-cookie", "sid=canary-5ecr3t-value"),
    ]
    .into_iter()
    .collect();
    let chunks: [&[u8]; 4] = [
        b"event: message\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",",
        b"\"params\":{\"progressToken\":1,\"progress\":1}}\n\n: keep-alive\n\nevent: mess",
        b"age\nid: 2\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"apiKey\":\"canary-5ecr3t-value\"}}\r\n\r\n",
        b"retry: 100\n\n",
    ];
    let steps = json_exchange(&url, &req, &resp, &chunks);
    let lines = run(false, &steps);
    assert_eq!(lines.len(), 3, "{lines:#?}");
    assert!(lines[0].starts_with("-> "), "{lines:#?}");
    assert_eq!(
        lines[1],
        r#"<- {"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1,"progressToken":1}}"#
    );
    assert_eq!(
        lines[2],
        r#"<- {"id":1,"jsonrpc":"2.0","result":{"apiKey":"***"}}"#
    );
    assert!(
        !lines
            .iter()
            .any(|l| l.contains("data:") || l.contains("event:"))
    );

    // -vv: the heads (secrets masked, the session id kept) and the framing as it came.
    let lines = run(true, &steps);
    let all = lines.join("\n");
    for want in [
        "> POST http://127.0.0.1:1/mcp (exchange 1)",
        "> authorization: ***",
        "> x-api-key: ***",
        "> mcp-session-id: sess-1",
        "< 200 (exchange 1)",
        "< set-cookie: ***",
        "< content-type: text/event-stream",
        "< event: message",
        "< id: 2",
        "< : keep-alive",
        "< retry: 100",
    ] {
        assert!(
            lines.iter().any(|l| l == want),
            "{want:?} missing from\n{all}"
        );
    }
    assert!(
        all.contains(r#"< data: {"jsonrpc":"2.0","id":1,"result":{"apiKey":"***"}}"#),
        "{all}"
    );
    // Each message still printed once.
    assert_eq!(
        lines.iter().filter(|l| l.starts_with("<- ")).count(),
        2,
        "{all}"
    );
}

#[test]
fn interleaved_exchanges_and_aborts() {
    let json: HeaderList = [("content-type", "application/json")].into_iter().collect();
    let sse: HeaderList = [("content-type", "text/event-stream")]
        .into_iter()
        .collect();
    let steps = [
        HttpTrace::Response {
            exchange: 1,
            status: 200,
            headers: &sse,
        },
        HttpTrace::Response {
            exchange: 2,
            status: 200,
            headers: &json,
        },
        HttpTrace::Body {
            exchange: 2,
            chunk: b"{\"id\":2,",
        },
        HttpTrace::Body {
            exchange: 1,
            chunk: b"data: {\"id\":1}\n",
        },
        HttpTrace::Body {
            exchange: 2,
            chunk: b"\"result\":{}}",
        },
        HttpTrace::Body {
            exchange: 1,
            chunk: b"\n",
        },
        HttpTrace::End { exchange: 2 },
        HttpTrace::Body {
            exchange: 1,
            chunk: b"data: {\"id\":3}",
        },
        HttpTrace::Aborted { exchange: 1 },
    ];
    let lines = run(false, &steps);
    // The SSE event with no blank line before the abort is not a dispatched event.
    assert_eq!(lines, [r#"<- {"id":1}"#, r#"<- {"id":2,"result":{}}"#]);
}
