#![cfg(feature = "http")]
//! The async-std adapter's connection pool against a keep-alive HTTP/1.1 server that counts
//! its connections: exchanges share one connection; a server that closes connections (after
//! each response, or when idle) still gets every call answered, on new connections.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::Duration;

use mcp_async_std::{ClientBuilder, SmolRuntime};
use serde_json::{Value, json};

const GUARD: Duration = Duration::from_secs(30);

/// What the server does with a connection after a response.
#[derive(Clone, Copy)]
enum AfterResponse {
    /// Waits for the next request.
    KeepAlive,
    /// Says `connection: close` and closes it.
    Close,
    /// Keeps it, but closes it when no request came within this long (an idle timeout).
    IdleTimeout(Duration),
}

/// A minimal Streamable HTTP server (JSON replies only, no session, no GET stream) that
/// keeps connections alive.
struct KeepAliveServer {
    port: u16,
    connections: Arc<AtomicUsize>,
    requests: Arc<AtomicUsize>,
}

impl KeepAliveServer {
    fn start(after: AfterResponse) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let port = listener.local_addr().expect("local address").port();
        let connections = Arc::new(AtomicUsize::new(0));
        let requests = Arc::new(AtomicUsize::new(0));
        let (c, r) = (connections.clone(), requests.clone());
        thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                c.fetch_add(1, Ordering::SeqCst);
                let r = r.clone();
                thread::spawn(move || serve(stream, after, &r));
            }
        });
        Self {
            port,
            connections,
            requests,
        }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    /// The POSTs served (the GET stream, refused, may or may not have been tried).
    fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }
}

/// Serves requests on one connection until the client closes it (or `after` says to).
fn serve(stream: TcpStream, after: AfterResponse, requests: &AtomicUsize) {
    if let AfterResponse::IdleTimeout(d) = after {
        let _ = stream.set_read_timeout(Some(d));
    }
    let mut reader = BufReader::new(stream.try_clone().expect("clone the stream"));
    let mut writer = stream;
    loop {
        let mut line = String::new();
        // An error is the idle timeout (or a reset): the connection ends.
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let method = line.split(' ').next().unwrap_or_default().to_owned();
        let mut length = 0;
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        if method == "POST" {
            requests.fetch_add(1, Ordering::SeqCst);
        }
        let (status, reply) = answer(&method, &body);
        let close = matches!(after, AfterResponse::Close);
        let head = format!(
            "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n{}\r\n",
            reply.len(),
            if close { "connection: close\r\n" } else { "" },
        );
        if writer.write_all(head.as_bytes()).is_err() || writer.write_all(&reply).is_err() {
            return;
        }
        if close {
            return;
        }
    }
}

/// The status line and body for one request.
fn answer(method: &str, body: &[u8]) -> (&'static str, Vec<u8>) {
    if method != "POST" {
        return ("405 Method Not Allowed", Vec::new());
    }
    let request: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let result = match request["method"].as_str() {
        Some("initialize") => json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "keep-alive", "version": "1"}
        }),
        Some("tools/list") => {
            json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]})
        }
        _ => return ("202 Accepted", Vec::new()),
    };
    let reply = json!({"jsonrpc": "2.0", "id": request["id"], "result": result});
    ("200 OK", serde_json::to_vec(&reply).unwrap_or_default())
}

/// Connects, lists the tools `calls` times (sleeping `pause` before each), closes.
fn list_tools(url: &str, calls: usize, pause: Duration) {
    let body = async {
        let client = ClientBuilder::new()
            .runtime(SmolRuntime::smol())
            .http(url)
            .await
            .expect("connect");
        for _ in 0..calls {
            smol::Timer::after(pause).await;
            let tools = client.list_tools().await.expect("tools/list");
            assert_eq!(tools.len(), 1);
        }
        client.close().await;
    };
    let guard = async {
        smol::Timer::after(GUARD).await;
        panic!("the client hung");
    };
    smol::block_on(smol::future::or(body, guard));
}

#[test]
fn sequential_exchanges_share_one_connection() {
    let server = KeepAliveServer::start(AfterResponse::KeepAlive);
    list_tools(&server.url(), 5, Duration::ZERO);
    // initialize, initialized, five tools/list (without a session there is no DELETE).
    assert_eq!(server.requests(), 7);
    // The GET stream, tried beside the POSTs and refused with 405, may have had its own.
    assert!(server.connections() <= 2, "{}", server.connections());
}

#[test]
fn a_server_that_closes_after_each_response_gets_a_connection_per_exchange() {
    let server = KeepAliveServer::start(AfterResponse::Close);
    list_tools(&server.url(), 3, Duration::ZERO);
    assert_eq!(server.requests(), 5);
    assert!(server.connections() >= server.requests());
}

#[test]
fn a_connection_the_server_closed_while_idle_is_not_reused() {
    let idle = Duration::from_millis(100);
    let server = KeepAliveServer::start(AfterResponse::IdleTimeout(idle));
    list_tools(&server.url(), 3, idle * 4);
    assert_eq!(server.requests(), 5);
    // The handshake's exchanges share one; each later call, after the server dropped the
    // idle connection, opens its own.
    assert!(server.connections() >= 4, "{}", server.connections());
}
