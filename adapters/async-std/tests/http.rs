#![cfg(feature = "http")]
//! The HTTP transport on async-std and on smol: the scripted-server bodies of
//! `mcp_driver::testing::http_suite` (the same bodies the tokio adapter runs), each run under
//! async-std's executor and under `smol::block_on`, bounded by a hang guard.

use std::future::Future;
use std::time::Duration;

#[cfg(feature = "async-std")]
use mcp_async_std::AsyncStdRuntime;
use mcp_async_std::SmolRuntime;
use mcp_driver::testing::http_suite;

const GUARD: Duration = Duration::from_secs(30);

/// Runs `body` under async-std's `block_on`, failing if it takes longer than [`GUARD`].
#[cfg(feature = "async-std")]
fn on_async_std(what: &str, body: impl Future<Output = ()>) {
    async_std::task::block_on(async_std::future::timeout(GUARD, body))
        .unwrap_or_else(|_| panic!("{what} hung on async-std"));
}

/// Runs `body` under `smol::block_on`, failing if it takes longer than [`GUARD`].
fn on_smol(what: &str, body: impl Future<Output = ()>) {
    let guard = async {
        smol::Timer::after(GUARD).await;
        panic!("{what} hung on smol");
    };
    smol::block_on(smol::future::or(body, guard));
}

macro_rules! scripted_tests {
    ($($name:ident),* $(,)?) => {
        #[cfg(feature = "async-std")]
        mod async_std_executor {
            use super::*;
            $(
                #[test]
                fn $name() {
                    on_async_std(stringify!($name), http_suite::$name(AsyncStdRuntime::async_std()));
                }
            )*
        }
        mod smol_executor {
            use super::*;
            $(
                #[test]
                fn $name() {
                    on_smol(stringify!($name), http_suite::$name(SmolRuntime::smol()));
                }
            )*
        }
    };
}

scripted_tests!(
    http_json_session_headers_delete,
    http_sse_notification_before_response,
    http_session_expired_reinitializes,
    http_session_forgotten_400_reinitializes,
    http_listen_stream_broken_yields_gap,
    http_session_expired_refused_subscription_ends,
    http_session_expired_shared_uri_subscribed_afresh,
    http_session_expired_subscription_continues,
    http_session_expired_task_polled_again,
    http_session_expired_unknown_task_fails,
    http_resume_with_last_event_id,
    http_unauthorized_challenge,
    http_bad_url,
);

// ---- the adapter's own client: streaming, abort on drop, headers, failures ---------------------

mod client {
    use std::io::{BufRead as _, BufReader, Read as _, Write as _};
    use std::net::TcpListener;
    use std::sync::mpsc;
    use std::thread;

    use futures_util::StreamExt as _;
    use mcp_async_std::SmolRuntime;
    use mcp_driver::Runtime as _;
    use mcp_driver::http::{HttpClientConfig, HttpRequestParts};
    use mcp_driver::mcp_proto::http::headers::HeaderList;
    use mcp_driver::mcp_proto::http::{FailureKind, Method};

    use super::on_smol;

    /// A one-connection server: reads the request head, sends it back on `heads`, writes a
    /// chunked head and `first`, then waits for `go` before writing more; reports on `eof`
    /// whether the client closed the connection.
    fn chunked_server(
        first: &'static [u8],
    ) -> (
        u16,
        mpsc::Receiver<String>,
        mpsc::Sender<()>,
        mpsc::Receiver<bool>,
    ) {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let (head_tx, heads) = mpsc::channel();
        let (go, go_rx) = mpsc::channel::<()>();
        let (eof_tx, eof) = mpsc::channel();
        thread::spawn(move || {
            let (mut socket, _) = listener.accept().expect("accept");
            let mut reader = BufReader::new(socket.try_clone().expect("clone"));
            let mut head = String::new();
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).expect("read head");
                if line == "\r\n" || line.is_empty() {
                    break;
                }
                head.push_str(&line);
            }
            head_tx.send(head).expect("send head");
            let mut out = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n".to_vec();
            out.extend_from_slice(format!("{:x}\r\n", first.len()).as_bytes());
            out.extend_from_slice(first);
            out.extend_from_slice(b"\r\n");
            socket.write_all(&out).expect("write first chunk");
            let _ = go_rx.recv();
            // The client has dropped the body by now: the read sees the end of the stream.
            socket
                .set_read_timeout(Some(std::time::Duration::from_secs(5)))
                .expect("timeout");
            let mut rest = [0u8; 64];
            let closed = matches!(reader.read(&mut rest), Ok(0));
            eof_tx.send(closed).expect("send eof");
        });
        (port, heads, go, eof)
    }

    fn get(url: &str) -> HttpRequestParts {
        let mut headers = HeaderList::new();
        headers.append("accept", "text/event-stream");
        HttpRequestParts::new(Method::Get, url.parse().expect("url"), headers, Vec::new())
    }

    #[test]
    fn body_streams_before_the_end_and_drop_closes_the_connection() {
        on_smol("streaming", async {
            let (port, heads, go, eof) = chunked_server(b"data: one\n\n");
            let mut config = HttpClientConfig::new();
            config.user_agent = Some("mcp-test/1".to_owned());
            let client = SmolRuntime::smol().http_client(&config).expect("client");
            let url = format!("http://127.0.0.1:{port}/mcp?x=1");
            let response = client.send(get(&url)).await.expect("response head");
            assert_eq!(response.status, 200);
            assert_eq!(
                response.headers.get("content-type"),
                Some("text/event-stream")
            );
            let head = heads.recv().expect("request head");
            assert!(head.starts_with("GET /mcp?x=1 HTTP/1.1\r\n"), "{head}");
            let lower = head.to_ascii_lowercase();
            assert!(
                lower.contains(&format!("host: 127.0.0.1:{port}\r\n")),
                "{head}"
            );
            assert!(lower.contains("user-agent: mcp-test/1\r\n"), "{head}");
            assert!(lower.contains("accept: text/event-stream\r\n"), "{head}");
            let mut body = response.body;
            // The first chunk arrives while the server still holds the rest back.
            let chunk = body.next().await.expect("a chunk").expect("no failure");
            assert_eq!(chunk, b"data: one\n\n");
            drop(body);
            go.send(()).expect("go");
            let closed = smol::unblock(move || eof.recv().expect("eof report")).await;
            assert!(closed, "dropping the body must close the connection");
        });
    }

    #[test]
    fn refused_connection_is_a_connect_failure() {
        on_smol("refused", async {
            // A port that was just free: nothing listens on it.
            let port = TcpListener::bind("127.0.0.1:0")
                .expect("bind")
                .local_addr()
                .expect("addr")
                .port();
            let client = SmolRuntime::smol()
                .http_client(&HttpClientConfig::new())
                .expect("client");
            let url = format!("http://127.0.0.1:{port}/mcp");
            let failure = client.send(get(&url)).await.expect_err("nothing listens");
            assert_eq!(failure.kind, FailureKind::Connect, "{}", failure.message);
        });
    }

    #[test]
    fn https_to_a_plain_server_is_a_tls_failure() {
        on_smol("tls", async {
            let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
            let port = listener.local_addr().expect("addr").port();
            thread::spawn(move || {
                let (mut socket, _) = listener.accept().expect("accept");
                let _ = socket.write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n");
            });
            let client = SmolRuntime::smol()
                .http_client(&HttpClientConfig::new())
                .expect("client");
            let url = format!("https://127.0.0.1:{port}/mcp");
            let failure = client.send(get(&url)).await.expect_err("no TLS peer");
            assert_eq!(failure.kind, FailureKind::Tls, "{}", failure.message);
        });
    }

    #[test]
    fn root_certificate_that_is_not_pem_is_invalid_input() {
        let mut config = HttpClientConfig::new();
        config.root_certificates = vec![b"not a certificate".to_vec()];
        let error = SmolRuntime::smol()
            .http_client(&config)
            .err()
            .expect("a non-PEM root must be refused");
        assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
    }
}
