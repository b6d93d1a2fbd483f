//! OAuth login: the client meets a 401, discovers the authorization server, registers itself
//! (dynamic client registration), sends the user's browser to authorize (PKCE), takes the
//! redirect on a loopback listener, and retries with the token; later requests refresh it.
//!
//! ```text
//! cargo run -p mcp-tokio --example oauth -- https://example.com/mcp   # a real server: opens a browser
//! cargo run -p mcp-tokio --example oauth                              # a local test server, no person
//! ```
//!
//! With a URL, the browser is `$MCP_BROWSER` (a command given the URL) or the desktop's
//! opener. Without one, the example starts the driver's OAuth test server
//! (`mcp_driver::testing::oauth_server`, feature `testing`) on 127.0.0.1, which approves at
//! once, and authorizes headlessly (`auth::Headless`). Tokens stay in memory here; the
//! `mcp` command keeps them in a file (`auth::FileTokenStore`).

use std::sync::Arc;

use mcp_tokio::driver::auth::{
    AuthProvider, BrowserAuthorizer, BrowserNotice, BrowserOpener, LoopbackListener,
};
use mcp_tokio::driver::testing::oauth_server::OAuthServer;
use mcp_tokio::mcp_proto::auth::{ClientMetadata, ClientRegistration};
use mcp_tokio::{Client, ClientBuilder};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let registration = ClientRegistration::dynamic(ClientMetadata::new("mcp-tokio oauth example"));
    let mut provider = AuthProvider::new(registration);
    // Kept alive until the end: the local test server, when no URL was given.
    let mut local = None;
    let url = match std::env::args().nth(1) {
        Some(url) => {
            let listener = LoopbackListener::bind()?;
            provider = provider.redirect_uri(listener.redirect_uri());
            let authorizer =
                BrowserAuthorizer::new(listener, BrowserOpener::from_env(), |notice| {
                    if let BrowserNotice::OpenYourself { url } = notice {
                        eprintln!("open this URL to log in: {url}");
                    } else {
                        eprintln!("{notice:?}");
                    }
                });
            provider = provider.authorizer(Arc::new(authorizer));
            url
        }
        None => {
            let server = OAuthServer::start(3600);
            let url = server.mcp_url();
            local = Some(server);
            url
        }
    };

    let client: Client = ClientBuilder::new().auth(provider).http(&url).await?;
    println!("authorized; connected to {}", client.server_info().name);
    for tool in client.list_tools().await? {
        println!("  {}", tool.name);
    }
    client.close().await;
    if let Some(server) = local {
        use std::sync::atomic::Ordering::SeqCst;
        let s = &server.state;
        println!(
            "the server saw {} unauthorized request(s), {} registration(s), {} code grant(s)",
            s.unauthorized.load(SeqCst),
            s.registrations.load(SeqCst),
            s.code_grants.load(SeqCst)
        );
        if s.code_grants.load(SeqCst) != 1 {
            return Err("expected exactly one authorization code grant".into());
        }
    }
    Ok(())
}
