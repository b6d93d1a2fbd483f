//! OAuth for people: `mcp login`, `mcp logout`, and the stored tokens every HTTP connection
//! uses.
//!
//! The decisions, which `--help` and the README repeat:
//!
//! - Tokens live in one JSON file, mode 0600 (directory 0700): `--token-store FILE`, else
//!   `$MCP_TOKEN_STORE`, else `$XDG_CONFIG_HOME/mcp-rs/tokens.json`, else
//!   `~/.config/mcp-rs/tokens.json` (next to the tool cache's `mcp-rs` directory). An entry is
//!   keyed by the server's canonical resource URL (lower-case scheme and host, no default
//!   port, no trailing slash) and holds the access token, the refresh token and what a refresh
//!   needs (token endpoint, client id).
//! - `mcp login` always authorizes afresh (in the browser, redirect to
//!   `http://127.0.0.1:<port>/callback`) and replaces the server's entry once it has a token
//!   that the server accepts (the handshake runs with it).
//! - Every other command that reaches an HTTP server (`--url`, a `--config` entry with a
//!   `url`, every HTTP server of `tools --all`) uses only what is stored
//!   ([`AuthProvider::stored_only`]): it sends the stored token and refreshes it with the stored
//!   refresh token when it has expired or is refused, but it never opens a browser. A 401
//!   without a usable token ends with [`CliError::LoginRequired`] (exit 3, `hint: run: mcp
//!   login --url …`): a script must not find a browser window popping up.
//! - An explicit `--header 'Authorization: …'` wins: no stored token is sent then.
//! - No token is ever printed: not on stdout, not on stderr, not in the `-v` trace (which
//!   shows message bodies, and masks header values in its `connecting:` line).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_manager::config::{ServerConfig, TransportConfig};
use mcp_proto::auth::{ClientMetadata, ClientRegistration};
use mcp_tokio::mcp_driver::auth::{
    AuthProvider, BrowserAuthorizer, BrowserNotice, BrowserOpener, FileTokenStore,
    LoopbackListener, StoredToken, TokenKey, TokenStore,
};
use serde_json::json;

use super::connect;
use super::elicit::ElicitMode;
use super::output::Out;
use super::ui::Ui;
use crate::args::Cli;
use crate::exit::{CliError, Exit};

/// The environment variable naming the token file (after `--token-store`).
pub const TOKEN_STORE_ENV: &str = "MCP_TOKEN_STORE";

/// The token file: `--token-store`, else `$MCP_TOKEN_STORE`, else the driver's default
/// (`$XDG_CONFIG_HOME/mcp-rs/tokens.json`, else `~/.config/mcp-rs/tokens.json`); `None`
/// when none of these is set.
pub fn token_store_path(cli: &Cli) -> Option<PathBuf> {
    cli.connection
        .token_store
        .clone()
        .or_else(|| {
            std::env::var_os(TOKEN_STORE_ENV)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        })
        .or_else(FileTokenStore::default_path)
}

/// How the CLI identifies itself to authorization servers: Dynamic Client Registration, the
/// same in `login` and later runs (so that their store entries match).
fn registration() -> ClientRegistration {
    let mut metadata = ClientMetadata::new("mcp (mcp-rs command-line client)");
    metadata.software_id = Some("mcp-rs-cli".into());
    metadata.software_version = Some(env!("CARGO_PKG_VERSION").into());
    ClientRegistration::dynamic(metadata)
}

/// The provider every HTTP connection gets: stored tokens only, refreshed, never a browser.
/// `None` when the user sends their own `Authorization` header or no token file can be
/// located.
pub fn stored_provider(cli: &Cli, headers: &[(String, String)]) -> Option<AuthProvider> {
    stored_provider_at(token_store_path(cli), headers)
}

/// [`stored_provider`] with the token file already located (`None`: no file, no provider).
pub fn stored_provider_at(
    path: Option<PathBuf>,
    headers: &[(String, String)],
) -> Option<AuthProvider> {
    if headers
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case("authorization"))
    {
        return None;
    }
    let path = path?;
    Some(
        AuthProvider::new(registration())
            .store(Arc::new(FileTokenStore::new(path)))
            .stored_only(),
    )
}

/// Whether `provider`'s store holds a token for `url` (to tell "no token" from "refused").
pub fn has_stored_token(provider: &AuthProvider, url: &str) -> bool {
    provider
        .token_store()
        .load(&provider.token_key(url))
        .is_ok_and(|t| t.is_some())
}

/// The store `login` writes through: it loads nothing (so the flow runs even when a token is
/// stored) and remembers whether a token was saved, or why it could not be.
struct FreshLogin {
    inner: FileTokenStore,
    saved: AtomicBool,
    failed: Mutex<Option<String>>,
}

impl FreshLogin {
    fn new(path: &Path) -> Self {
        Self {
            inner: FileTokenStore::new(path),
            saved: AtomicBool::new(false),
            failed: Mutex::new(None),
        }
    }
}

impl TokenStore for FreshLogin {
    fn load(&self, _: &TokenKey) -> std::io::Result<Option<StoredToken>> {
        Ok(None)
    }

    fn save(&self, key: &TokenKey, token: &StoredToken) -> std::io::Result<()> {
        if let Err(e) = self.inner.save(key, token) {
            *self.failed.lock().unwrap_or_else(|p| p.into_inner()) = Some(e.to_string());
            return Err(e);
        }
        self.saved.store(true, Ordering::SeqCst);
        Ok(())
    }

    fn remove_url(&self, mcp_url: &str) -> std::io::Result<usize> {
        self.inner.remove_url(mcp_url)
    }

    fn keys(&self) -> std::io::Result<Vec<TokenKey>> {
        self.inner.keys()
    }
}

/// Shows the browser authorizer's notices on stderr. The URL is shown only when the user has
/// to open it (no browser, or it failed): it carries no token.
fn show_notice(ui: &Ui) -> impl Fn(BrowserNotice) + Send + Sync + 'static {
    let ui = ui.clone();
    move |notice| match notice {
        BrowserNotice::Opening { redirect_uri, .. } => ui.info(&format!(
            "opened the browser to authorize; waiting for the redirect to {redirect_uri}"
        )),
        BrowserNotice::OpenFailed { url, reason } => {
            ui.note(&format!(
                "could not open a browser ({reason}); open this URL to authorize:\n  {url}"
            ));
        }
        BrowserNotice::OpenYourself { url } => {
            ui.note(&format!(
                "open this URL in a browser to authorize:\n  {url}"
            ));
        }
        _ => {}
    }
}

fn http_url(config: &ServerConfig) -> Option<&str> {
    match &config.transport {
        TransportConfig::Http(h) => Some(&h.url),
        _ => None,
    }
}

fn no_store() -> CliError {
    CliError::Usage(format!(
        "cannot tell where to keep tokens: give --token-store FILE, or set {TOKEN_STORE_ENV}, \
         XDG_CONFIG_HOME or HOME"
    ))
}

/// How long `mcp bridge` waits for the browser's redirect when it logs in on a 401 (the
/// default `mcp login --wait`).
const BRIDGE_LOGIN_WAIT: Duration = Duration::from_secs(300);

/// The provider of a browser login, as `mcp login` runs it: when the server asks for
/// authorization it opens the browser (or prints the URL) on the loopback redirect, and
/// writes the token it gets through to the token file (loading none, so the flow runs even
/// when a token is stored). Notices go to stderr.
fn browser_provider(
    cli: &Cli,
    ui: &Ui,
    no_browser: bool,
    scopes: &[String],
    wait: Duration,
) -> Result<(AuthProvider, Arc<FreshLogin>, PathBuf), CliError> {
    let path = token_store_path(cli).ok_or_else(no_store)?;
    let listener = LoopbackListener::bind()
        .map_err(|e| CliError::AuthFailed(format!("cannot listen on 127.0.0.1: {e}")))?
        .timeout(wait);
    let opener = if no_browser {
        BrowserOpener::Print
    } else {
        BrowserOpener::from_env()
    };
    let redirect_uri = listener.redirect_uri();
    let authorizer = BrowserAuthorizer::new(listener, opener, show_notice(ui));
    let store = Arc::new(FreshLogin::new(&path));
    let mut provider = AuthProvider::new(registration())
        .redirect_uri(redirect_uri)
        .authorizer(Arc::new(authorizer))
        .store(store.clone());
    if !scopes.is_empty() {
        provider = provider.scopes(scopes.to_vec());
    }
    Ok((provider, store, path))
}

/// For `mcp bridge`, whose stored token did not work: the browser login `mcp login` runs
/// (notices on stderr; stdout is the protocol), its token stored for later runs. Call it only
/// when [`terminal_present`]: someone must be there to finish the login.
///
/// # Errors
///
/// No token file can be located, or the loopback listener cannot be bound.
pub fn bridge_login_provider(cli: &Cli, ui: &Ui) -> Result<AuthProvider, CliError> {
    browser_provider(cli, ui, false, &[], BRIDGE_LOGIN_WAIT).map(|(provider, ..)| provider)
}

/// Whether a person can see this process's notices and finish a browser login: stderr is a
/// terminal, or the controlling terminal can be opened (a host app runs the bridge with
/// stdin and stdout as the protocol, and often stderr to a log file).
#[must_use]
pub fn terminal_present() -> bool {
    use std::io::IsTerminal as _;
    std::io::stderr().is_terminal()
        || std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/tty")
            .is_ok()
}

/// `mcp login`: authorizes in the browser, checks the token with a handshake, stores it.
pub async fn login(
    cli: &Cli,
    ui: &Ui,
    out: &Out,
    no_browser: bool,
    scopes: &[String],
    wait: Duration,
) -> Result<Exit, CliError> {
    let config = connect::server_config(cli)?;
    let Some(url) = http_url(&config).map(str::to_owned) else {
        return Err(CliError::Usage(
            "login is for HTTP servers: give --url <url> (or a --config entry with a url)".into(),
        ));
    };
    let (provider, store, path) = browser_provider(cli, ui, no_browser, scopes, wait)?;
    let client =
        match connect::connect_with(cli, ui, config.clone(), ElicitMode::Decline, Some(provider))
            .await
        {
            Ok(client) => client,
            Err(CliError::AuthFailed(reason)) => {
                return Err(no_oauth_login(cli, ui, config)
                    .await
                    .unwrap_or(CliError::AuthFailed(reason)));
            }
            Err(e) => return Err(e),
        };
    let server = client.server_info().name.clone();
    client.close().await;
    if let Some(reason) = store
        .failed
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take()
    {
        return Err(CliError::File { path, reason });
    }
    let saved = store.saved.load(Ordering::SeqCst);
    if ui.json {
        return out.json(&json!({
            "url": url, "server": server, "stored": saved, "tokenStore": path,
        }));
    }
    let text = if saved {
        format!(
            "logged in to {url} ({server}); the token is stored in {}\n",
            path.display()
        )
    } else {
        format!("{url} ({server}) did not ask for authorization: nothing stored\n")
    };
    out.text(&text)
}

/// After a failed login: when the server's own 401 (asked without a token) offers no OAuth
/// login, that is the error to show (with the hint to send the token with `-H`), not the
/// failure of the discovery or registration that followed. `None` when the server offers
/// OAuth, or answers otherwise.
async fn no_oauth_login(cli: &Cli, ui: &Ui, config: ServerConfig) -> Option<CliError> {
    match connect::connect_with(cli, ui, config, ElicitMode::Decline, None).await {
        Err(e @ CliError::LoginRequired { oauth: false, .. }) => Some(e),
        Ok(client) => {
            client.close().await;
            None
        }
        Err(_) => None,
    }
}

/// `mcp logout`: removes the tokens of `--url` (or of every server with `--all`) and says
/// which.
pub fn logout(cli: &Cli, ui: &Ui, out: &Out, all: bool) -> Result<Exit, CliError> {
    let path = token_store_path(cli).ok_or_else(no_store)?;
    let store = FileTokenStore::new(&path);
    let file_error = |e: std::io::Error| CliError::File {
        path: path.clone(),
        reason: e.to_string(),
    };
    let mut removed: Vec<String> = Vec::new();
    if all {
        if cli.connection.url.is_some() || cli.connection.config.is_some() {
            return Err(CliError::Usage(
                "give either --url (one server) or --all (every server), not both".into(),
            ));
        }
        for key in store.keys().map_err(file_error)? {
            if !removed.contains(&key.mcp_url) {
                store.remove_url(&key.mcp_url).map_err(file_error)?;
                removed.push(key.mcp_url);
            }
        }
    } else {
        let config = connect::server_config(cli).map_err(|_| {
            CliError::Usage("logout needs --url <url> (one server) or --all".into())
        })?;
        let Some(url) = http_url(&config) else {
            return Err(CliError::Usage(
                "logout is for HTTP servers: give --url <url> or --all".into(),
            ));
        };
        let key = AuthProvider::new(registration()).token_key(url);
        if store.remove_url(&key.mcp_url).map_err(file_error)? > 0 {
            removed.push(key.mcp_url);
        }
    }
    report_removed(ui, out, &path, &removed)
}

fn report_removed(ui: &Ui, out: &Out, path: &Path, removed: &[String]) -> Result<Exit, CliError> {
    if ui.json {
        return out.json(&json!({ "removed": removed, "tokenStore": path }));
    }
    let mut text = String::new();
    for url in removed {
        text.push_str(&format!("removed the stored tokens of {url}\n"));
    }
    if removed.is_empty() {
        text.push_str(&format!(
            "no stored tokens to remove in {}\n",
            path.display()
        ));
    }
    out.text(&text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_explicit_authorization_header_or_no_file_means_no_stored_token() {
        let file = Some(PathBuf::from("/nonexistent/tokens.json"));
        assert!(stored_provider_at(file.clone(), &[]).is_some());
        let header = [("AUTHORIZATION".to_owned(), "Bearer mine".to_owned())];
        assert!(stored_provider_at(file, &header).is_none());
        assert!(stored_provider_at(None, &[]).is_none());
    }

    #[test]
    fn login_writes_through_but_never_reads_a_stored_token() {
        let dir = std::env::temp_dir().join(format!("mcp-cli-fresh-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("tokens.json");
        let fresh = FreshLogin::new(&path);
        let key = TokenKey::new("https://h/mcp", "dynamic");
        fresh.save(&key, &StoredToken::new("t")).unwrap();
        assert!(fresh.saved.load(Ordering::SeqCst));
        assert_eq!(fresh.load(&key).unwrap(), None, "login always authorizes");
        let file = FileTokenStore::new(&path);
        assert!(file.load(&key).unwrap().is_some());
        assert_eq!(fresh.keys().unwrap(), std::slice::from_ref(&key));
        assert!(fresh.failed.lock().unwrap().is_none());
        std::fs::write(&path, b"{not json").unwrap();
        assert!(fresh.save(&key, &StoredToken::new("t")).is_err());
        assert!(fresh.failed.lock().unwrap().is_some(), "login reports it");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
