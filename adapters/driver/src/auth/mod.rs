//! OAuth 2.1 for HTTP servers: the [`AuthProvider`] a [`ClientBuilder`](crate::ClientBuilder)
//! takes with [`auth`](crate::ClientBuilder::auth).
//!
//! The decisions are the core's ([`mcp_proto::auth::AuthFlow`]); this module performs them.
//! With a provider, every request to the MCP server carries `Authorization: Bearer <token>`
//! (a stored token, if the [`TokenStore`] has a fresh one). When the server answers 401, the
//! client runs the flow (its HTTP requests go through the runtime's
//! [`HttpClient`], following no redirect), stores the tokens and
//! retries the request once. A token about to expire is refreshed before a request, and a 401
//! on a later request refreshes (or re-authorizes) once. A 403 `insufficient_scope` asks for
//! the union of the scopes (a step-up), within the flow's cap.
//!
//! How the user authorizes is an [`Authorizer`]: [`BrowserAuthorizer`] opens the
//! authorization URL in a browser ([`BrowserOpener`]: `xdg-open` / `open`, a command of your
//! own, or showing the URL) and takes the redirect on a [`LoopbackListener`]
//! (`http://127.0.0.1:<port>/callback`), for a person at a desktop; [`Headless`] GETs the
//! authorization URL without following redirects and takes the `Location` (for tests,
//! services, and servers that authorize without a person).
//! [`AuthProvider::client_credentials`] needs no user at all, and
//! [`AuthProvider::stored_only`] never authorizes: it uses and refreshes what the store holds.
//!
//! Stored tokens carry what a refresh needs ([`mcp_proto::auth::SavedAuthorization`]), so a
//! token stored by one process is refreshed by the next one without discovery or a user.
//!
//! Tokens never go into a URL, a log line or a `Debug` output.

mod browser;
mod loopback;
mod run;
mod session;
mod store;
mod store_fs;

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use mcp_proto::auth::{ClientRegistration, Grant, IdentityAssertion};
use url::Url;

use crate::http::HttpClient;

pub use browser::{BROWSER_ENV, BrowserAuthorizer, BrowserNotice, BrowserOpener, NoticeFn};
pub use loopback::{CALLBACK_PATH, DEFAULT_LOOPBACK_TIMEOUT, LoopbackListener};
pub(crate) use session::AuthSession;
pub use store::{
    FileTokenStore, MemoryTokenStore, RefreshGuard, StoredToken, TokenKey, TokenStore,
};

/// The future of an [`Authorizer`]: the URL the user's browser was redirected to (with `code`
/// and `state`), or why there is none.
pub type AuthorizeFuture = Pin<Box<dyn Future<Output = Result<String, String>> + Send>>;

/// How the user authorizes: given the authorization URL, produce the redirect URL.
pub trait Authorizer: Send + Sync {
    /// Sends the user to `url` and resolves with the redirect (an absolute URL at the
    /// provider's redirect URI). `http` is the connection's HTTP client, for headless use.
    fn authorize(&self, url: Url, http: Arc<dyn HttpClient>) -> AuthorizeFuture;
}

/// Follows the authorization URL without a person: one GET, no redirect followed, and the
/// response's `Location` is the redirect. Works with authorization servers that approve at
/// once (test servers, the conformance suite, some enterprise setups).
#[derive(Clone, Copy, Debug, Default)]
pub struct Headless;

impl Authorizer for Headless {
    fn authorize(&self, url: Url, http: Arc<dyn HttpClient>) -> AuthorizeFuture {
        Box::pin(run::headless_authorize(url, http))
    }
}

/// The OAuth configuration of a client: how it identifies itself, which grant, where tokens
/// are kept and how the user authorizes. Cheap to clone (shared parts are `Arc`s).
#[derive(Clone)]
pub struct AuthProvider {
    pub(crate) registration: ClientRegistration,
    pub(crate) grant: Grant,
    pub(crate) identity_assertion: Option<IdentityAssertion>,
    pub(crate) redirect_uri: Url,
    pub(crate) scopes: Option<Vec<String>>,
    pub(crate) store: Arc<dyn TokenStore>,
    pub(crate) authorizer: Arc<dyn Authorizer>,
    /// Whether a 401 (or 403 step-up) may start an authorization.
    pub(crate) authorize: bool,
}

impl fmt::Debug for AuthProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthProvider")
            .field("registration", &self.registration)
            .field("grant", &self.grant)
            .field("redirect_uri", &self.redirect_uri.as_str())
            .field("scopes", &self.scopes)
            .field("authorize", &self.authorize)
            .finish_non_exhaustive()
    }
}

/// The redirect URI of [`AuthProvider::new`]: a loopback URL, as native clients register.
pub const DEFAULT_REDIRECT_URI: &str = "http://127.0.0.1/callback";

impl AuthProvider {
    /// Authorization code with PKCE, identified by `registration` (pre-registered, metadata
    /// document, dynamic registration, in that order), the [`Headless`] authorizer, an
    /// in-memory token store and [`DEFAULT_REDIRECT_URI`].
    #[must_use]
    pub fn new(registration: ClientRegistration) -> Self {
        Self {
            registration,
            grant: Grant::AuthorizationCode,
            identity_assertion: None,
            // Invariant: the constant is a valid absolute URL.
            redirect_uri: Url::parse(DEFAULT_REDIRECT_URI).expect("valid constant URL"),
            scopes: None,
            store: Arc::new(MemoryTokenStore::new()),
            authorizer: Arc::new(Headless),
            authorize: true,
        }
    }

    /// Uses only what the [`TokenStore`] holds: a stored token is sent, and refreshed with its
    /// stored refresh token when it expires or the server refuses it (also in a process that
    /// did not obtain it), but no authorization is ever started. A 401 with no usable token
    /// stays the connection's or request's error ([`Error::http_status`](crate::Error::http_status)
    /// says 401), so that a script is never surprised by a browser; run the flow separately
    /// (for instance `mcp login`) to fill the store.
    #[must_use]
    pub fn stored_only(mut self) -> Self {
        self.authorize = false;
        self
    }

    /// The client credentials grant (machine to machine) instead: `registration` must hold
    /// pre-registered credentials with a secret (`client_secret_basic`/`_post`) or a private
    /// key (`private_key_jwt`, needs the `jwt` feature).
    #[must_use]
    pub fn client_credentials(mut self) -> Self {
        self.grant = Grant::ClientCredentials;
        self
    }

    /// Enterprise-managed authorization (SEP-990) instead: the user's ID token from the
    /// enterprise identity provider `idp` is exchanged there for an identity assertion grant,
    /// which `registration`'s pre-registered client trades for an access token at the MCP
    /// server's authorization server. No browser; when the token runs out without a refresh
    /// token, a new ID token is needed (build a new provider).
    #[must_use]
    pub fn identity_assertion(mut self, idp: IdentityAssertion) -> Self {
        self.grant = Grant::IdentityAssertion;
        self.identity_assertion = Some(idp);
        self
    }

    /// The redirect URI, exactly as registered (e.g. the loopback listener's URL).
    #[must_use]
    pub fn redirect_uri(mut self, uri: Url) -> Self {
        self.redirect_uri = uri;
        self
    }

    /// Scopes to ask for instead of the challenge's or the server metadata's.
    #[must_use]
    pub fn scopes(mut self, scopes: Vec<String>) -> Self {
        self.scopes = Some(scopes);
        self
    }

    /// Where tokens are kept (default: in memory).
    #[must_use]
    pub fn store(mut self, store: Arc<dyn TokenStore>) -> Self {
        self.store = store;
        self
    }

    /// How the user authorizes (default: [`Headless`]).
    #[must_use]
    pub fn authorizer(mut self, authorizer: Arc<dyn Authorizer>) -> Self {
        self.authorizer = authorizer;
        self
    }

    /// The store key of this client's token for `mcp_url`: its canonical resource URL (see
    /// [`TokenKey::for_server`]; a URL that does not parse is taken as it is) and the client id.
    #[must_use]
    pub fn token_key(&self, mcp_url: &str) -> TokenKey {
        let r = &self.registration;
        let client = r
            .pre_registered
            .as_ref()
            .map(|c| c.client_id.clone())
            .or_else(|| r.metadata_document.as_ref().map(|u| u.to_string()))
            .unwrap_or_else(|| "dynamic".to_owned());
        match Url::parse(mcp_url) {
            Ok(url) => TokenKey::for_server(&url, client),
            Err(_) => TokenKey::new(mcp_url, client),
        }
    }

    /// The token store.
    #[must_use]
    pub fn token_store(&self) -> &Arc<dyn TokenStore> {
        &self.store
    }
}
