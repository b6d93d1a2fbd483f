#![cfg(feature = "http")]
//! The bounds the tokio HTTP server enforces for the core on real connections: connections
//! open at once (one past the bound gets 503 with a JSON-RPC error and is closed), the
//! time a request's body may take (408, and the connection closed) and the bytes all the
//! bodies being received may hold at once (503, and the connection closed). Each test is
//! bounded by an anti-hang guard; none is timed.

use std::time::Duration;

use mcp_tokio::mcp_proto::server::ServerConfig;
use mcp_tokio::mcp_proto::server::http::HttpServerConfig;
use mcp_tokio::server::http::StreamableHttp;
use mcp_tokio::server::{HttpServerHandle, ServerHandle, ServerHandler, start_http};
use mcp_tokio::types::Implementation;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const GUARD: Duration = Duration::from_secs(30);

/// Answers every request -32601: these tests never reach a handler.
struct Nothing;

impl ServerHandler for Nothing {}

async fn start(config: HttpServerConfig) -> HttpServerHandle {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind 127.0.0.1:0");
    start_http(listener, StreamableHttp::new(config), |_: &ServerHandle| {
        Nothing
    })
    .expect("the server starts")
}

fn config() -> HttpServerConfig {
    HttpServerConfig::new(ServerConfig::new(Implementation::new("bounds", "1.0")))
}

/// Everything the server sends until it closes the connection: status and body.
async fn answer(stream: &mut TcpStream) -> (u16, String) {
    let mut read = Vec::new();
    let _ = stream.read_to_end(&mut read).await;
    let text = String::from_utf8_lossy(&read).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("a status line, not {text:?}"));
    let body = text.split("\r\n\r\n").nth(1).unwrap_or_default().to_owned();
    (status, body)
}

/// The JSON-RPC error of a body (a chunked one is unwrapped to its first chunk).
fn rpc_error(body: &str) -> Value {
    let json = body
        .lines()
        .find(|l| l.starts_with('{'))
        .unwrap_or_else(|| panic!("a JSON body, not {body:?}"));
    let value: Value = serde_json::from_str(json).expect("JSON");
    value["error"].clone()
}

async fn guarded<F: std::future::Future<Output = ()>>(f: F) {
    tokio::time::timeout(GUARD, f)
        .await
        .expect("the test finished within the guard");
}

const HEAD: &str = "POST /mcp HTTP/1.1\r\nhost: x\r\naccept: application/json, text/event-stream\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_does_not_arrive_in_time_gets_408_and_the_connection_closes() {
    guarded(async {
        let server = start(config().with_connection_limits(16, Duration::from_millis(200))).await;
        let mut stream = TcpStream::connect(server.local_addr())
            .await
            .expect("connect");
        // The head, and a tenth of the body it announces; the rest never comes.
        stream.write_all(HEAD.as_bytes()).await.expect("write");
        stream.write_all(&[b' '; 100]).await.expect("write");
        let (status, body) = answer(&mut stream).await;
        assert_eq!(status, 408, "{body}");
        let error = rpc_error(&body);
        assert_eq!(error["code"], -32000);
        assert!(
            error["message"]
                .as_str()
                .is_some_and(|m| m.contains("did not arrive within 0.2 s")),
            "{error}"
        );
        server.shutdown();
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_past_the_bound_gets_503_and_a_closed_one_makes_room() {
    guarded(async {
        let server = start(config().with_connection_limits(2, Duration::from_secs(30))).await;
        let addr = server.local_addr();
        // Two connections that send nothing hold both places.
        let first = TcpStream::connect(addr).await.expect("connect");
        let _second = TcpStream::connect(addr).await.expect("connect");
        let mut third = TcpStream::connect(addr).await.expect("connect");
        let (status, body) = answer(&mut third).await;
        assert_eq!(status, 503, "{body}");
        let error = rpc_error(&body);
        assert_eq!(error["code"], -32000);
        assert!(
            error["message"]
                .as_str()
                .is_some_and(|m| m.contains("too many connections (open: 2,")),
            "{error}"
        );
        // A closed connection gives its place back: a request is served again (404 for a
        // path that is not the endpoint, from the service itself).
        drop(first);
        loop {
            let mut next = TcpStream::connect(addr).await.expect("connect");
            next.write_all(b"GET /elsewhere HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
                .await
                .expect("write");
            match answer(&mut next).await.0 {
                404 => break,
                503 => tokio::time::sleep(Duration::from_millis(10)).await,
                other => panic!("answered {other}"),
            }
        }
        server.shutdown();
    })
    .await;
}

/// A POST head to the endpoint announcing a JSON body of `len` bytes, the connection to close
/// after its answer.
fn head_of(len: usize) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nhost: x\r\naccept: application/json, text/event-stream\r\n\
         content-type: application/json\r\ncontent-length: {len}\r\nconnection: close\r\n\r\n"
    )
}

/// Waits until the bodies being received hold what `done` wants (the server reads them on
/// its own tasks; the anti-hang guard bounds the wait).
async fn until_in_flight(server: &HttpServerHandle, done: impl Fn(usize) -> bool) {
    while !done(server.body_bytes_in_flight()) {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_past_the_servers_budget_gets_503_and_finished_bodies_give_it_back() {
    guarded(async {
        // Bodies of at most 1000 bytes, and room for three at once: each buffer holds at
        // most 1001 (the byte past the bound tells a larger body).
        let server = start(
            config()
                .with_limits(64, 1000, 32)
                .with_body_bytes_in_flight(3 * 1001),
        )
        .await;
        let addr = server.local_addr();
        let mut held = Vec::new();
        for _ in 0..3 {
            let mut stream = TcpStream::connect(addr).await.expect("connect");
            let mut request = head_of(1000).into_bytes();
            request.extend_from_slice(&[b' '; 999]);
            stream.write_all(&request).await.expect("write");
            held.push(stream);
        }
        // The three bodies are read to their 999th byte and wait for their last.
        until_in_flight(&server, |held| held >= 3 * 999).await;
        assert!(server.body_bytes_in_flight() <= 3 * 1001);

        // One more body does not fit beside them: 503 with the JSON-RPC error, closed.
        let mut one_more = TcpStream::connect(addr).await.expect("connect");
        let mut request = head_of(1000).into_bytes();
        request.extend_from_slice(&[b' '; 100]);
        one_more.write_all(&request).await.expect("write");
        let (status, body) = answer(&mut one_more).await;
        assert_eq!(status, 503, "{body}");
        let error = rpc_error(&body);
        assert_eq!(error["code"], -32000);
        assert!(
            error["message"].as_str().is_some_and(|m| m.contains(
                "too many request body bytes being received (the most this server holds at \
                 once: 3003)"
            )),
            "{error}"
        );
        // The refused body gave back what it held; the three still hold theirs.
        let in_flight = server.body_bytes_in_flight();
        assert!((3 * 999..=3 * 1001).contains(&in_flight), "{in_flight}");

        // One of them completes and is served (its body, all spaces, is not JSON); the
        // others go away. Every byte comes back.
        let mut first = held.remove(0);
        first.write_all(b" ").await.expect("write");
        let (status, body) = answer(&mut first).await;
        assert_eq!(status, 400, "{body}");
        assert_eq!(rpc_error(&body)["code"], -32700);
        drop(held);
        until_in_flight(&server, |held| held == 0).await;

        // A whole budget's worth is free again: a new session opens.
        let mut next = TcpStream::connect(addr).await.expect("connect");
        let mut request = head_of(INIT.len()).into_bytes();
        request.extend_from_slice(INIT.as_bytes());
        next.write_all(&request).await.expect("write");
        let (status, body) = answer(&mut next).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(server.body_bytes_in_flight(), 0);
        server.shutdown();
    })
    .await;
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
