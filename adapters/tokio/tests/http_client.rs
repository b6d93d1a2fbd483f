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
    assert!(requests.len() >= 4, "{requests:?}");
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
    assert!(requests.len() >= 4, "{requests:?}");
    for r in &requests {
        // Absolute form: the request went to the proxy, naming the real target.
        assert_eq!(r.path, "http://mcp.invalid/mcp", "{r:?}");
        assert_eq!(r.header("host"), Some("mcp.invalid"));
    }
}
