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

fn temp_store(name: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("mcp-oauth-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let path = dir.join("tokens.json");
    (dir, path)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_client_refreshes_an_expired_stored_token_without_authorizing() {
    // Tokens live 5 s, inside the 30 s margin: the second client finds an expired token and
    // refreshes it with the stored refresh token and grant (as a new process would).
    let server = OAuthServer::start(5);
    let (dir, path) = temp_store("refresh");
    tokio::time::timeout(GUARD, async {
        let store: Arc<dyn TokenStore> = Arc::new(FileTokenStore::new(&path));
        let first = connect(&server.mcp_url(), provider().store(store)).await;
        first.close().await;
        assert_eq!(server.state.refresh_grants.load(SeqCst), 0);
        let unauthorized = server.state.unauthorized.load(SeqCst);
        let store: Arc<dyn TokenStore> = Arc::new(FileTokenStore::new(&path));
        let second = connect(&server.mcp_url(), provider().store(store).stored_only()).await;
        second.call_tool("echo", json!({})).await.unwrap();
        second.close().await;
        assert_eq!(
            server.state.unauthorized.load(SeqCst),
            unauthorized,
            "the refreshed token was sent from the start"
        );
    })
    .await
    .expect("hung");
    let s = &server.state;
    assert_eq!(s.authorizations.load(SeqCst), 1);
    assert_eq!(s.registrations.load(SeqCst), 1);
    assert!(s.refresh_grants.load(SeqCst) >= 1);
    assert!(!s.token_in_url.load(SeqCst));
    let text = std::fs::read_to_string(&path).unwrap();
    let last = format!(
        "access-{}",
        s.code_grants.load(SeqCst) + s.refresh_grants.load(SeqCst)
    );
    assert!(text.contains(&last), "the refreshed token is stored");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stored_only_never_starts_an_authorization() {
    let server = OAuthServer::start(3600);
    let (dir, path) = temp_store("stored-only");
    let store: Arc<dyn TokenStore> = Arc::new(FileTokenStore::new(&path));
    let result = tokio::time::timeout(
        GUARD,
        mcp_tokio::Client::builder()
            .auth(provider().store(store).stored_only())
            .http(&server.mcp_url()),
    )
    .await
    .expect("hung");
    let Err(err) = result else {
        panic!("a 401 without tokens fails")
    };
    assert_eq!(err.http_status().map(|s| s.status), Some(401), "{err}");
    let s = &server.state;
    assert_eq!(s.registrations.load(SeqCst), 0);
    assert_eq!(s.authorizations.load(SeqCst), 0);
    assert!(!path.exists());
    let _ = std::fs::remove_dir_all(&dir);
}
