#![cfg(feature = "http")]
//! The tokio HTTP client's two paths: plain `http://` on hyper-util's pool (origin-form
//! target, `Host`, the client's `User-Agent`, one kept-alive connection), and a proxy from the
//! environment (reqwest: absolute-form target to the proxy).

use std::process::Command;
use std::time::Duration;

use mcp_driver::testing::http_server::{RecordedRequest, ScriptedHttpServer, ScriptedReply};
use mcp_tokio::ClientBuilder;
use mcp_tokio::mcp_proto::types::Implementation;
use serde_json::{Value, json};

const GUARD: Duration = Duration::from_secs(30);

/// Set in the child process of the proxy test.
const CHILD_URL: &str = "MCP_TEST_PROXY_CHILD_URL";

/// A minimal Streamable HTTP server: initialize, 202 for notifications, one tool.
fn mcp_server() -> ScriptedHttpServer {
    ScriptedHttpServer::start(|r: &RecordedRequest| {
        let id = r.rpc_id().unwrap_or(Value::Null);
        let result = match r.rpc_method().as_deref() {
            Some("initialize") => json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "scripted", "version": "1"}
            }),
            Some("tools/list") => {
                json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]})
            }
            Some(m) if m.starts_with("notifications/") => return ScriptedReply::status(202),
            _ if r.method == "DELETE" => return ScriptedReply::status(200),
            _ => return ScriptedReply::status(500),
        };
        ScriptedReply::json(&json!({"jsonrpc": "2.0", "id": id, "result": result}))
    })
}

async fn list_tools(url: &str) -> usize {
    let client = ClientBuilder::new()
        .client_info(Implementation::new("proxy-test", "9.9"))
        .http(url)
        .await
        .expect("connect");
    let n = client.list_tools().await.expect("tools/list").len();
    client.close().await;
    n
}

#[tokio::test]
async fn plain_http_sends_origin_form_host_and_user_agent() {
    let server = mcp_server();
    let url = server.url("/mcp?k=v");
    let n = tokio::time::timeout(GUARD, list_tools(&url))
        .await
        .expect("no hang");
    assert_eq!(n, 1);
    let requests = server.requests();
    // initialize, initialized, tools/list; the GET stream opens concurrently and may not
    // have been sent before the close (it was missing once on a loaded machine).
    assert!(requests.len() >= 3, "{requests:?}");
    let host = url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap_or_default();
    for r in &requests {
        assert_eq!(r.path, "/mcp?k=v", "{r:?}");
        assert_eq!(r.header("host"), Some(host));
        assert_eq!(r.header("user-agent"), Some("proxy-test/9.9"));
    }
}

#[test]
fn a_proxy_from_the_environment_carries_plain_http() {
    // The proxy is read from the environment once per client; setting it in this process
    // would reach the other tests' clients, so the client runs in a child process.
    if let Ok(url) = std::env::var(CHILD_URL) {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let n = rt.block_on(async { tokio::time::timeout(GUARD, list_tools(&url)).await });
        assert_eq!(n.expect("no hang"), 1);
        return;
    }
    let proxy = mcp_server();
    let status = Command::new(std::env::current_exe().expect("the test binary"))
        .args(["--exact", "a_proxy_from_the_environment_carries_plain_http"])
        .env(CHILD_URL, "http://mcp.invalid/mcp")
        .env("HTTP_PROXY", proxy.url(""))
        .env("http_proxy", proxy.url(""))
        .env_remove("NO_PROXY")
        .env_remove("no_proxy")
        .env_remove("ALL_PROXY")
        .env_remove("all_proxy")
        .status()
        .expect("the child test runs");
    assert!(status.success(), "the client in the child failed");
    let requests = proxy.requests();
    // initialize, initialized, tools/list; the GET stream opens concurrently and may not
    // have been sent before the close (it was missing once on a loaded machine).
    assert!(requests.len() >= 3, "{requests:?}");
    for r in &requests {
        // Absolute form: the request went to the proxy, naming the real target.
        assert_eq!(r.path, "http://mcp.invalid/mcp", "{r:?}");
        assert_eq!(r.header("host"), Some("mcp.invalid"));
    }
}

mod exchanges {
    use std::io::Write as _;
    use std::net::TcpListener;

    use mcp_driver::Runtime as _;
    use mcp_driver::http::{HttpClientConfig, HttpRequestParts};
    use mcp_driver::mcp_proto::http::headers::HeaderList;
    use mcp_driver::mcp_proto::http::{FailureKind, Method};
    use mcp_tokio::TokioRuntime;

    fn get(url: &str) -> HttpRequestParts {
        HttpRequestParts::new(
            Method::Get,
            url.parse().expect("url"),
            HeaderList::new(),
            Vec::new(),
        )
    }

    #[tokio::test]
    async fn refused_connection_is_a_connect_failure() {
        // A port that was just free: nothing listens on it.
        let port = TcpListener::bind("127.0.0.1:0")
            .expect("bind")
            .local_addr()
            .expect("addr")
            .port();
        let client = TokioRuntime::current()
            .http_client(&HttpClientConfig::new())
            .expect("client");
        let url = format!("http://127.0.0.1:{port}/mcp");
        let failure = client.send(get(&url)).await.expect_err("nothing listens");
        assert_eq!(failure.kind, FailureKind::Connect, "{}", failure.message);
        // What happened, without hyper-util's own layer ("client error (Connect)").
        assert!(
            failure
                .message
                .starts_with("tcp connect error: Connection refused"),
            "{}",
            failure.message
        );
    }

    #[tokio::test]
    async fn a_server_closing_before_its_response_is_a_reset_said_plainly() {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        std::thread::spawn(move || {
            let (mut socket, _) = listener.accept().expect("accept");
            // The request head is read, then the connection closed without a response.
            let mut buf = [0u8; 1024];
            let _ = std::io::Read::read(&mut socket, &mut buf);
        });
        let client = TokioRuntime::current()
            .http_client(&HttpClientConfig::new())
            .expect("client");
        let url = format!("http://127.0.0.1:{port}/mcp");
        let failure = client.send(get(&url)).await.expect_err("no response");
        assert_eq!(failure.kind, FailureKind::Reset, "{}", failure.message);
        assert_eq!(
            failure.message,
            "the server closed the connection before its response was complete"
        );
    }

    #[tokio::test]
    async fn https_to_a_plain_server_fails_to_connect() {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        std::thread::spawn(move || {
            let (mut socket, _) = listener.accept().expect("accept");
            let _ = socket.write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n");
        });
        // The HTTPS client is built on this first use.
        let client = TokioRuntime::current()
            .http_client(&HttpClientConfig::new())
            .expect("client");
        let url = format!("https://127.0.0.1:{port}/mcp");
        let failure = client.send(get(&url)).await.expect_err("no TLS peer");
        // reqwest reports a failed TLS handshake as a connect error.
        assert!(
            matches!(failure.kind, FailureKind::Connect | FailureKind::Tls),
            "{:?}: {}",
            failure.kind,
            failure.message
        );
    }

    #[test]
    fn root_certificate_that_is_not_pem_is_invalid_input() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let _enter = rt.enter();
        let mut config = HttpClientConfig::new();
        config.root_certificates = vec![b"not a certificate".to_vec()];
        let error = TokioRuntime::current()
            .http_client(&config)
            .err()
            .expect("a non-PEM root must be refused when the client is made");
        assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
    }
}
