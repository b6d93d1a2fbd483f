#![cfg(feature = "http")]
//! How long the tokio HTTP server keeps a connection, on a paused clock: the header-read
//! deadline of each request's head (a connection that keeps sending requests is served past
//! it; one that trickles a head or idles is closed at it), and a shutdown that closes an idle
//! connection at once. Real TCP connections on 127.0.0.1; each test is bounded by an
//! anti-hang guard on the same paused clock.

use std::time::Duration;

use mcp_tokio::mcp_proto::server::ServerConfig;
use mcp_tokio::mcp_proto::server::http::HttpServerConfig;
use mcp_tokio::server::http::StreamableHttp;
use mcp_tokio::server::{HttpServerHandle, ServerHandle, ServerHandler, start_http};
use mcp_tokio::types::Implementation;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Answers every request -32601: these tests ask only for another path (404).
struct Nothing;

impl ServerHandler for Nothing {}

async fn start() -> HttpServerHandle {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind 127.0.0.1:0");
    let config = HttpServerConfig::new(ServerConfig::new(Implementation::new("conn", "1.0")));
    start_http(listener, StreamableHttp::new(config), |_: &ServerHandle| {
        Nothing
    })
    .expect("the server starts")
}

/// Reads one answer's status on a kept-alive connection (the answer has no body to skip:
/// a 404 for another path carries a short one, read whole with it).
async fn status_on(stream: &mut TcpStream) -> u16 {
    let mut raw = Vec::new();
    let mut buf = [0u8; 1024];
    loop {
        let n = stream.read(&mut buf).await.expect("read");
        assert!(n > 0, "the connection stayed open for the answer");
        raw.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&raw);
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length: "))
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            if body.len() >= length {
                return head
                    .split(' ')
                    .nth(1)
                    .and_then(|s| s.parse().ok())
                    .expect("a status");
            }
        }
    }
}

/// The header-read deadline (30 s for each request's head) on a paused clock: a connection
/// that keeps sending requests within it is served for longer than it, however the timer
/// behind it is reused; one that trickles a head, or idles, is closed once it passes.
#[tokio::test(start_paused = true)]
async fn each_head_has_its_own_read_deadline() {
    // The anti-hang guard on the same paused clock: a deadline that never fires lets the
    // clock jump here instead.
    let test = async {
        let server = start().await;
        let start = tokio::time::Instant::now();
        let mut kept = TcpStream::connect(server.local_addr())
            .await
            .expect("connect");
        for _ in 0..4 {
            kept.write_all(b"GET /other HTTP/1.1\r\nhost: x\r\n\r\n")
                .await
                .expect("write");
            assert_eq!(status_on(&mut kept).await, 404);
            tokio::time::sleep(Duration::from_secs(20)).await;
        }
        assert!(
            start.elapsed() >= Duration::from_secs(80),
            "served past one deadline"
        );

        // A head begun and never finished: closed at its deadline, not before.
        let mut trickling = TcpStream::connect(server.local_addr())
            .await
            .expect("connect");
        trickling
            .write_all(b"GET /other HTTP/1.1\r\nhost:")
            .await
            .expect("write");
        let began = tokio::time::Instant::now();
        let mut buf = [0u8; 256];
        let read = trickling.read(&mut buf).await;
        assert!(
            matches!(read, Ok(0) | Err(_)),
            "closed, not answered: {read:?}"
        );
        let waited = began.elapsed();
        assert!(
            (Duration::from_secs(30)..Duration::from_secs(32)).contains(&waited),
            "closed at the deadline: after {waited:?}"
        );

        // The kept connection, idle since its last answer (20 s ago, then the 30 s above): closed.
        let read = kept.read(&mut buf).await;
        assert!(
            matches!(read, Ok(0) | Err(_)),
            "an idle connection closed: {read:?}"
        );
        server.shutdown();
    };
    tokio::time::timeout(Duration::from_secs(600), test)
        .await
        .expect("the connections closed at their deadlines");
}

/// A shutdown closes a connection kept alive between requests at once, not at its next
/// head-read deadline (on the paused clock that deadline, 30 s on, would fire as soon as
/// nothing else is left to run).
#[tokio::test(start_paused = true)]
async fn shutdown_closes_an_idle_connection_at_once() {
    let test = async {
        let server = start().await;
        let mut kept = TcpStream::connect(server.local_addr())
            .await
            .expect("connect");
        kept.write_all(b"GET /other HTTP/1.1\r\nhost: x\r\n\r\n")
            .await
            .expect("write");
        assert_eq!(status_on(&mut kept).await, 404);
        let shut = tokio::time::Instant::now();
        server.shutdown();
        let mut buf = [0u8; 256];
        let read = kept.read(&mut buf).await;
        assert!(matches!(read, Ok(0) | Err(_)), "closed: {read:?}");
        let after = shut.elapsed();
        assert!(
            after < Duration::from_secs(30),
            "closed by the shutdown, not by the deadline: after {after:?}"
        );
    };
    tokio::time::timeout(Duration::from_secs(600), test)
        .await
        .expect("the connection closed");
}
