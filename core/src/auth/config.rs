//! The vocabulary of [`AuthFlow`](super::AuthFlow): its configuration, the host's one-time
//! secrets, the HTTP requests it asks for and the events it emits.

use std::fmt;

use url::Url;

use super::client::{ClientRegistration, RegisteredClient};
use super::error::{AuthError, AuthPurpose};
use super::secret::SecretString;
use super::token::Tokens;
use crate::http::Method;
use crate::http::headers::HeaderList;
use crate::time::Duration;

/// Which OAuth grant the flow performs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Grant {
    /// Authorization code with PKCE: a user authorizes in a browser (or a headless agent
    /// follows the authorization URL).
    #[default]
    AuthorizationCode,
    /// Client credentials (machine to machine): a pre-registered confidential client gets a
    /// token directly, with `client_secret_basic`/`_post` or `private_key_jwt`.
    ClientCredentials,
    /// Enterprise-managed authorization (SEP-990, the Identity Assertion JWT Authorization
    /// Grant): the user's ID token from the enterprise identity provider is exchanged there
    /// (RFC 8693) for an ID-JAG, which a pre-registered client presents to the MCP server's
    /// authorization server as a JWT bearer grant (RFC 7523). No browser. Needs
    /// [`AuthConfig::identity_assertion`].
    IdentityAssertion,
}

/// The enterprise identity provider of [`Grant::IdentityAssertion`]: where the flow trades the
/// user's ID token for an Identity Assertion JWT Authorization Grant (ID-JAG). `Debug` redacts
/// the token.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct IdentityAssertion {
    /// The identity provider's token endpoint (https, or http on a loopback host).
    pub token_endpoint: Url,
    /// The OpenID Connect ID token the host got when the user signed in at the identity
    /// provider.
    pub id_token: SecretString,
    /// How the client authenticates at the identity provider: `client_secret_basic` when the
    /// credentials hold a secret, else the `client_id` form field.
    pub client: super::client::ClientCredentials,
}

impl IdentityAssertion {
    /// The identity provider at `token_endpoint`, the user's `id_token`, and the client's
    /// credentials there.
    pub fn new(
        token_endpoint: Url,
        id_token: impl Into<SecretString>,
        client: super::client::ClientCredentials,
    ) -> Self {
        Self {
            token_endpoint,
            id_token: id_token.into(),
            client,
        }
    }
}

/// How an [`AuthFlow`](super::AuthFlow) behaves. Build with [`AuthConfig::new`] and adjust the public fields.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct AuthConfig {
    /// The MCP server URL the token is for.
    pub mcp_url: Url,
    /// The redirect URI (a loopback URL for native clients), exactly as registered.
    pub redirect_uri: Url,
    /// The ways the client may identify itself, tried in the specification's order.
    pub client: ClientRegistration,
    /// The grant to perform.
    pub grant: Grant,
    /// The identity provider for [`Grant::IdentityAssertion`]; ignored by the other grants.
    pub identity_assertion: Option<IdentityAssertion>,
    /// Scopes the host insists on, instead of the challenge's or the metadata's.
    pub scopes: Option<Vec<String>>,
    /// Ask for a refresh token (`offline_access`, `refresh_token` grant) where the server
    /// advertises them.
    pub want_refresh_token: bool,
    /// The `MCP-Protocol-Version` to send with metadata requests to the MCP server, if known.
    pub protocol_version: Option<String>,
    /// The deadline of each HTTP exchange.
    pub exchange_timeout: Duration,
    /// How long to wait for the redirect after emitting the authorization URL.
    pub authorization_timeout: Duration,
    /// The largest response body accepted, in bytes.
    pub max_body: usize,
    /// The most authorizations one flow makes for 403 `insufficient_scope` step-ups,
    /// counting the first.
    pub max_authorizations: u32,
    /// The wall-clock time (seconds since the UNIX epoch) at the `now` given to
    /// [`AuthFlow::new`](super::AuthFlow::new); needed to date `private_key_jwt` assertions.
    pub unix_time: Option<u64>,
    /// How long a `private_key_jwt` assertion is valid.
    pub assertion_lifetime: Duration,
}

impl AuthConfig {
    /// A configuration with safe defaults: authorization code grant, refresh tokens wanted,
    /// 30 s per exchange, 10 minutes for the user, 1 MiB bodies, 3 authorizations at most.
    pub fn new(mcp_url: Url, redirect_uri: Url, client: ClientRegistration) -> Self {
        Self {
            mcp_url,
            redirect_uri,
            client,
            grant: Grant::AuthorizationCode,
            identity_assertion: None,
            scopes: None,
            want_refresh_token: true,
            protocol_version: None,
            exchange_timeout: Duration::from_secs(30),
            authorization_timeout: Duration::from_secs(600),
            max_body: 1 << 20,
            max_authorizations: 3,
            unix_time: None,
            assertion_lifetime: Duration::from_secs(300),
        }
    }
}

/// The one-time values of an authorization, drawn by the host from a CSPRNG. `Debug` redacts.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Secrets {
    /// The PKCE code verifier: 43 to 128 characters of `[A-Za-z0-9-._~]` (32 random bytes,
    /// base64url).
    pub code_verifier: SecretString,
    /// The `state` (16 or more random bytes, base64url).
    pub state: SecretString,
    /// The `jti` of a `private_key_jwt` assertion.
    pub jwt_id: Option<SecretString>,
}

impl Secrets {
    /// Secrets for an authorization code flow.
    pub fn new(code_verifier: impl Into<SecretString>, state: impl Into<SecretString>) -> Self {
        Self {
            code_verifier: code_verifier.into(),
            state: state.into(),
            jwt_id: None,
        }
    }

    /// Adds the `jti` for a `private_key_jwt` assertion.
    #[must_use]
    pub fn with_jwt_id(mut self, jti: impl Into<SecretString>) -> Self {
        self.jwt_id = Some(jti.into());
        self
    }
}

/// One HTTP exchange of a flow. Unique within the flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AuthRequestId(pub(crate) u64);

impl AuthRequestId {
    /// The id as a number, for logs.
    #[must_use]
    pub fn get(self) -> u64 {
        self.0
    }
}

/// An HTTP request to perform, from [`AuthFlow::poll_request`](super::AuthFlow::poll_request). Send exactly this, follow no
/// redirect, and report the response with [`AuthFlow::handle_response`](super::AuthFlow::handle_response). `Debug` omits the
/// headers and the body, which may hold credentials.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AuthHttpRequest {
    /// Quote it back with the response.
    pub id: AuthRequestId,
    /// `GET` or `POST`.
    pub method: Method,
    /// The target.
    pub url: Url,
    /// Every header to send.
    pub headers: HeaderList,
    /// The body (empty for GET; form-urlencoded or JSON for POST, per `Content-Type`).
    pub body: Vec<u8>,
    /// What it is for.
    pub purpose: AuthPurpose,
}

impl fmt::Debug for AuthHttpRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthHttpRequest")
            .field("id", &self.id)
            .field("method", &self.method)
            .field("url", &self.url.as_str())
            .field("purpose", &self.purpose)
            .field("body_len", &self.body.len())
            .finish_non_exhaustive()
    }
}

/// What the flow tells the host, from [`AuthFlow::poll_event`](super::AuthFlow::poll_event).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuthEvent {
    /// Send the user here: open a browser, or (headless) GET it without following redirects
    /// and pass the `Location` to [`AuthFlow::handle_redirect`](super::AuthFlow::handle_redirect).
    AuthorizeUrl(Url),
    /// Dynamic registration gave the client an identity; store it to reuse as pre-registered
    /// credentials for this authorization server.
    Registered(RegisteredClient),
    /// The grant succeeded. Keep the tokens in the host's store; the flow keeps a copy for
    /// [`AuthFlow::refresh`](super::AuthFlow::refresh).
    Tokens(Tokens),
    /// The authorization failed; the flow is over.
    Failed(AuthError),
}
