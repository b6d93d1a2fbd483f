//! `mcp demo-server --listen 127.0.0.1:0 --conformance` (the built binary) over raw HTTP/1.1:
//! `test_reconnection` closes its POST's SSE stream after a priming event that carries
//! `retry`, and the answer comes on the GET that resumes the stream with `Last-Event-ID`
//! (SEP-1699 polling, what the conformance suite's `server-sse-polling` checks).

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

/// The anti-hang guard of every read (never reached when the server works).
const GUARD: Duration = Duration::from_secs(30);

const MCP: &str = env!("CARGO_BIN_EXE_mcp");

/// The running server; killed when dropped.
struct Server {
    child: Child,
    /// `127.0.0.1:PORT`.
    addr: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(extra: &[&str]) -> Server {
    let mut child = Command::new(MCP)
        .args(["demo-server", "--listen", "127.0.0.1:0"])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn mcp demo-server --listen");
    let mut stderr = BufReader::new(child.stderr.take().expect("piped stderr"));
    let mut line = String::new();
    stderr
        .read_line(&mut line)
        .expect("the server's first line");
    let addr = line
        .trim()
        .strip_prefix("http://")
        .and_then(|rest| rest.strip_suffix("/mcp"))
        .unwrap_or_else(|| panic!("no URL in {line:?}"))
        .to_owned();
    Server { child, addr }
}

/// One response: status, headers (names in lower case), the body with chunking undone.
struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Response {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Undoes `Transfer-Encoding: chunked`.
fn dechunk(mut raw: &str) -> String {
    let mut body = String::new();
    loop {
        let (size, rest) = raw.split_once("\r\n").expect("a chunk size line");
        let size = usize::from_str_radix(size.trim(), 16).expect("a hex chunk size");
        if size == 0 {
            return body;
        }
        body.push_str(&rest[..size]);
        raw = &rest[size + 2..];
    }
}

/// Sends one request on its own connection (`Connection: close`) and reads the response to
/// its end.
fn exchange(server: &Server, method: &str, headers: &[(&str, &str)], body: &str) -> Response {
    let mut stream = TcpStream::connect(&server.addr).expect("connect");
    stream.set_read_timeout(Some(GUARD)).expect("read timeout");
    let mut request = format!(
        "{method} /mcp HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Length: {}\r\n",
        server.addr,
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).expect("write");
    let mut raw = String::new();
    stream.read_to_string(&mut raw).expect("read to the end");
    let (head, body) = raw.split_once("\r\n\r\n").expect("a head");
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .expect("a status line");
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.contains("chunked"));
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_owned()
    };
    Response {
        status,
        headers,
        body,
    }
}

const POST: [(&str, &str); 2] = [
    ("content-type", "application/json"),
    ("accept", "application/json, text/event-stream"),
];

/// Initializes a 2025-11-25 session; returns its id.
fn initialize(server: &Server) -> String {
    let init = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": { "name": "test", "version": "1" } } });
    let r = exchange(server, "POST", &POST, &init.to_string());
    assert_eq!(r.status, 200, "{}", r.body);
    let session = r.header("mcp-session-id").expect("a session id").to_owned();
    let mut headers = POST.to_vec();
    headers.push(("mcp-session-id", &session));
    let initialized = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
    let r = exchange(server, "POST", &headers, &initialized.to_string());
    assert_eq!(r.status, 202, "{}", r.body);
    session
}

/// The SSE events' data, parsed, skipping empty ones (the priming event).
fn event_data(body: &str) -> Vec<Value> {
    body.split("\n\n")
        .filter_map(|event| {
            let data = event.lines().find_map(|l| l.strip_prefix("data: "))?;
            (!data.is_empty()).then(|| serde_json::from_str(data).expect("JSON data"))
        })
        .collect()
}

#[test]
fn test_reconnection_closes_its_stream_and_the_answer_comes_on_the_resumed_get() {
    let server = start(&["--conformance"]);
    let session = initialize(&server);
    let mut headers = POST.to_vec();
    headers.push(("mcp-session-id", &session));
    headers.push(("mcp-protocol-version", "2025-11-25"));
    let call = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": { "name": "test_reconnection", "arguments": {} } });
    let closed = exchange(&server, "POST", &headers, &call.to_string());
    assert_eq!(closed.status, 200);
    assert_eq!(closed.header("content-type"), Some("text/event-stream"));
    // Only the priming event: its id, the retry delay, empty data; no answer.
    let priming_id = closed
        .body
        .strip_prefix("id: ")
        .and_then(|rest| rest.strip_suffix("\nretry: 500\ndata: \n\n"))
        .unwrap_or_else(|| panic!("only a priming event with retry: {:?}", closed.body))
        .to_owned();

    let resume = [
        ("accept", "text/event-stream"),
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
        ("last-event-id", priming_id.as_str()),
    ];
    let resumed = exchange(&server, "GET", &resume, "");
    assert_eq!(resumed.status, 200, "{}", resumed.body);
    let events = event_data(&resumed.body);
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["id"], 2);
    assert_eq!(
        events[0]["result"]["content"][0]["text"],
        "Reconnection test completed successfully (after the stream was closed)"
    );
}

#[test]
fn without_conformance_the_http_demo_has_no_fixtures() {
    let server = start(&[]);
    let session = initialize(&server);
    let mut headers = POST.to_vec();
    headers.push(("mcp-session-id", &session));
    let list = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list" });
    let r = exchange(&server, "POST", &headers, &list.to_string());
    assert_eq!(r.status, 200, "{}", r.body);
    let body: Value = serde_json::from_str(&r.body).expect("a JSON answer");
    let first = &body["result"]["tools"][0]["name"];
    assert_eq!(first, "echo", "{body}");
}
