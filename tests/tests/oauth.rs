//! The whole OAuth flow, headless, against the local protected MCP server of
//! `mcp_tests::oauth_server`: 401, discovery, registration, authorization, token, retry; a
//! refresh on expiry; a token reused from the file store.

use std::sync::Arc;
use std::sync::atomic::Ordering::SeqCst;
use std::time::Duration;

use mcp_driver::auth::{AuthProvider, FileTokenStore, TokenStore};
use mcp_proto::auth::{ClientMetadata, ClientRegistration};
use mcp_tests::oauth_server::OAuthServer;
use serde_json::json;

const GUARD: Duration = Duration::from_secs(30);

fn provider() -> AuthProvider {
    AuthProvider::new(ClientRegistration::dynamic(ClientMetadata::new(
        "oauth test",
    )))
}

async fn connect(url: &str, provider: AuthProvider) -> mcp_tokio::Client {
    mcp_tokio::Client::builder()
        .auth(provider)
        .http(url)
        .await
        .expect("connect with OAuth")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headless_flow_authorizes_after_401_and_calls_a_tool() {
    let server = OAuthServer::start(3600);
    tokio::time::timeout(GUARD, async {
        let client = connect(&server.mcp_url(), provider()).await;
        let tools = client.list_tools().await.unwrap();
        assert_eq!(tools[0].name, "echo");
        client.call_tool("echo", json!({})).await.unwrap();
        client.close().await;
    })
    .await
    .expect("hung");
    let s = &server.state;
    assert!(s.unauthorized.load(SeqCst) >= 1);
    assert_eq!(s.registrations.load(SeqCst), 1);
    assert_eq!(s.authorizations.load(SeqCst), 1);
    assert_eq!(s.code_grants.load(SeqCst), 1);
    assert_eq!(s.tool_calls.load(SeqCst), 1);
    assert!(!s.token_in_url.load(SeqCst));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expiring_token_is_refreshed_before_the_next_request() {
    // Tokens live 5 s, inside the client's 30 s refresh margin: every request refreshes first.
    let server = OAuthServer::start(5);
    tokio::time::timeout(GUARD, async {
        let client = connect(&server.mcp_url(), provider()).await;
        client.call_tool("echo", json!({})).await.unwrap();
        client.call_tool("echo", json!({})).await.unwrap();
        client.close().await;
    })
    .await
    .expect("hung");
    let s = &server.state;
    assert_eq!(
        s.authorizations.load(SeqCst),
        1,
        "refreshes, not new authorizations"
    );
    assert!(
        s.refresh_grants.load(SeqCst) >= 2,
        "{}",
        s.refresh_grants.load(SeqCst)
    );
    assert_eq!(s.tool_calls.load(SeqCst), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_token_is_reused_from_the_file_store() {
    let server = OAuthServer::start(3600);
    let dir = std::env::temp_dir().join(format!("mcp-oauth-store-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let path = dir.join("tokens.json");
    tokio::time::timeout(GUARD, async {
        for _ in 0..2 {
            let store: Arc<dyn TokenStore> = Arc::new(FileTokenStore::new(&path));
            let client = connect(&server.mcp_url(), provider().store(store)).await;
            client.call_tool("echo", json!({})).await.unwrap();
            client.close().await;
        }
    })
    .await
    .expect("hung");
    let s = &server.state;
    assert_eq!(
        s.authorizations.load(SeqCst),
        1,
        "the second client used the stored token"
    );
    assert_eq!(s.unauthorized.load(SeqCst), 1);
    assert_eq!(s.tool_calls.load(SeqCst), 2);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(&server.mcp_url()));
    let _ = std::fs::remove_dir_all(&dir);
}
