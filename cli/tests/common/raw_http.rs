//! Raw HTTP/1.1 to an MCP server of the built binary (`mcp bridge --listen`, `mcp
//! demo-server --listen`), as a host that is not our own client speaks it: one exchange per
//! connection, the answer's JSON-RPC messages read from a JSON or SSE body.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;

use serde_json::{Value, json};

use super::bridge_host::GUARD;

/// One HTTP/1.1 exchange's answer: status, header fields (lower-case names), the body (after
/// any chunked transfer coding) and its JSON-RPC messages (a JSON body, or the `data:` of SSE
/// events).
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
    pub messages: Vec<Value>,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as one JSON value (an error body, a JSON reply).
    pub fn json(&self) -> Value {
        serde_json::from_str(self.body.trim())
            .unwrap_or_else(|e| panic!("a JSON body ({e}): {:?}", self.body))
    }
}

/// The host and port of `url` (`http://127.0.0.1:PORT/mcp`).
pub fn authority(url: &str) -> &str {
    let rest = url.strip_prefix("http://").expect("an http URL");
    rest.split('/').next().expect("a host")
}

/// Sends one request to `/mcp` (`Connection: close`) and reads the whole answer.
pub fn exchange(url: &str, method: &str, headers: &[(&str, &str)], body: Option<&Value>) -> Reply {
    let mut stream = start_exchange(url, method, headers, body);
    read_reply(&mut stream)
}

/// POSTs `body`, sent as it is (JSON or not), to `path` of the server at `url`
/// (`Connection: close`) and reads the whole answer.
pub fn post_text(url: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    let mut stream = send_request(url, "POST", path, headers, body);
    read_reply(&mut stream)
}

/// Sends one request to `/mcp` and returns the open connection, the answer unread.
pub fn start_exchange(
    url: &str,
    method: &str,
    headers: &[(&str, &str)],
    body: Option<&Value>,
) -> TcpStream {
    let body = body.map(Value::to_string).unwrap_or_default();
    send_request(url, method, "/mcp", headers, &body)
}

/// Connects to the server of `url` and sends `method path` with `body` (a JSON content type
/// when there is one) and `headers`; the answer is left unread.
fn send_request(
    url: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> TcpStream {
    let host = authority(url);
    let mut stream = TcpStream::connect(host).expect("connect to the server");
    stream.set_read_timeout(Some(GUARD)).expect("read timeout");
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\
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

/// Reads the answer on `stream` to its end (the server closes the connection).
fn read_reply(stream: &mut TcpStream) -> Reply {
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("read the answer");
    parse_reply(&raw)
}

/// The status, header fields, body and JSON-RPC messages of a whole HTTP/1.1 answer.
pub fn parse_reply(raw: &[u8]) -> Reply {
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
        body,
        messages,
    }
}

/// The body of a chunked transfer coding.
pub fn dechunk(mut body: &str) -> String {
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

pub fn initialize_body(name: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": name, "version": "1.0"}}})
}

/// Opens a session as host `name`: initialize, then initialized; returns its session id.
pub fn open_session(url: &str, name: &str, headers: &[(&str, &str)]) -> String {
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

pub fn call(url: &str, session: &str, id: i64, tool: &str, arguments: &Value) -> Reply {
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
