//! The errors of an authorization: what the peers did wrong ([`AuthError`]) and what the caller
//! did wrong ([`AuthUsageError`]).

/// Which HTTP exchange of a flow a failure is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuthPurpose {
    /// Fetching protected resource metadata (RFC 9728).
    ResourceMetadata,
    /// Fetching authorization server metadata (RFC 8414 or OpenID Connect Discovery).
    ServerMetadata,
    /// Dynamic client registration (RFC 7591).
    Registration,
    /// The authorization code exchange.
    Token,
    /// A refresh token exchange.
    Refresh,
    /// A client credentials token request.
    ClientCredentials,
    /// The token exchange at the enterprise identity provider (RFC 8693) that yields an
    /// ID-JAG ([`Grant::IdentityAssertion`](super::Grant::IdentityAssertion)).
    TokenExchange,
    /// The JWT bearer grant (RFC 7523) that trades the ID-JAG for an access token.
    JwtBearer,
    /// Waiting for the user (the authorization redirect), not an HTTP exchange.
    Authorization,
}

/// Why an authorization failed because of what a server sent (or did not send). Delivered in
/// [`AuthEvent::Failed`](super::AuthEvent::Failed); the flow is over after it.
///
/// No variant carries a token or a secret, so `Display` and `Debug` are safe to log.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// No protected resource metadata was found and the legacy fallbacks are exhausted.
    #[error("no authorization server could be discovered for {resource}")]
    DiscoveryFailed {
        /// The MCP server URL.
        resource: String,
    },
    /// The protected resource metadata names another resource than the MCP server (RFC 9728
    /// §3.3, RFC 8707): the client refuses to authorize against it.
    #[error("the protected resource metadata is for {found:?}, not for {expected:?}")]
    ResourceMismatch {
        /// The MCP server's canonical URL.
        expected: String,
        /// The `resource` the metadata claims.
        found: String,
    },
    /// A metadata document or endpoint response is not what the specification requires.
    #[error("invalid {what:?}: {reason}")]
    InvalidDocument {
        /// Which document.
        what: AuthPurpose,
        /// What is wrong with it.
        reason: String,
    },
    /// The authorization server metadata's `issuer` is not the issuer it was fetched for (RFC
    /// 8414 §3.3).
    #[error("the authorization server metadata says issuer {found:?}, expected {expected:?}")]
    IssuerMismatch {
        /// The issuer the metadata was fetched for.
        expected: String,
        /// The metadata's `issuer`.
        found: String,
    },
    /// The authorization server does not advertise PKCE `S256` in
    /// `code_challenge_methods_supported` (or omits the field): the client must not proceed.
    #[error("the authorization server does not support PKCE S256")]
    PkceUnsupported,
    /// An endpoint URL is neither https nor on a loopback host.
    #[error("insecure endpoint {url} (https is required outside loopback)")]
    InsecureEndpoint {
        /// The URL, as the server wrote it.
        url: String,
    },
    /// No way to get a client id: no pre-registered client, no usable client ID metadata
    /// document, and no registration endpoint. The host should ask the user for one.
    #[error("no client id: configure a pre-registered client or a client ID metadata document")]
    NoClientId,
    /// The client's credentials fit none of the token endpoint auth methods the server supports.
    #[error("no common token endpoint auth method (server supports {supported:?})")]
    NoAuthMethod {
        /// What the server advertised.
        supported: Vec<String>,
    },
    /// An HTTP exchange answered with a status it should not have.
    #[error("{purpose:?} failed with HTTP {status}")]
    HttpStatus {
        /// Which exchange.
        purpose: AuthPurpose,
        /// The status.
        status: u16,
    },
    /// An HTTP exchange failed below HTTP (connect, TLS, reset), as the adapter reported it.
    #[error("{purpose:?} failed: {message}")]
    Transport {
        /// Which exchange.
        purpose: AuthPurpose,
        /// The adapter's description.
        message: String,
    },
    /// An exchange (or the user's authorization) did not finish before its deadline.
    #[error("{purpose:?} timed out")]
    Timeout {
        /// Which exchange.
        purpose: AuthPurpose,
    },
    /// A response body exceeded the configured limit.
    #[error("{purpose:?} response is larger than {limit} bytes")]
    TooLarge {
        /// Which exchange.
        purpose: AuthPurpose,
        /// The limit.
        limit: usize,
    },
    /// The redirect's `state` is not the one this flow sent (a forged or stale redirect).
    #[error("the authorization response state does not match")]
    StateMismatch,
    /// The redirect's `iss` is missing although the server advertises
    /// `authorization_response_iss_parameter_supported`, or names another issuer (RFC 9207).
    #[error("the authorization response issuer is {found:?}, expected {expected:?}")]
    IssuerParameterMismatch {
        /// The issuer of the authorization server in use.
        expected: String,
        /// The `iss` in the redirect (`None`: absent).
        found: Option<String>,
    },
    /// The redirect is not to the configured redirect URI, or carries neither `code` nor
    /// `error`.
    #[error("unexpected authorization redirect: {reason}")]
    BadRedirect {
        /// What is wrong.
        reason: String,
    },
    /// The authorization server refused the authorization (an `error` in the redirect).
    #[error("authorization refused: {error}{}", description.as_deref().map(|d| format!(" ({d})")).unwrap_or_default())]
    AuthorizationDenied {
        /// The OAuth error code (`access_denied`, ...).
        error: String,
        /// `error_description`, for the user.
        description: Option<String>,
    },
    /// The token (or registration) endpoint answered with an OAuth error (RFC 6749 §5.2).
    #[error("{purpose:?} refused: {error}{}", description.as_deref().map(|d| format!(" ({d})")).unwrap_or_default())]
    EndpointError {
        /// Which exchange.
        purpose: AuthPurpose,
        /// The OAuth error code (`invalid_grant`, `invalid_client`, ...).
        error: String,
        /// `error_description`, for the user.
        description: Option<String>,
    },
    /// The token response's `token_type` is not `Bearer`.
    #[error("unsupported token type {0:?}")]
    UnsupportedTokenType(String),
    /// The resource keeps answering 403 `insufficient_scope` after the allowed number of
    /// authorizations.
    #[error("still insufficient scope after {attempts} authorizations")]
    StepUpLimit {
        /// Authorizations made.
        attempts: u32,
    },
    /// Building the `private_key_jwt` client assertion failed (bad key, unsupported algorithm).
    #[error("cannot sign the client assertion: {0}")]
    ClientAssertion(String),
}

/// A misuse of the [`AuthFlow`](super::AuthFlow) API by the caller, returned at once.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AuthUsageError {
    /// The configured MCP URL is not http(s) or has no host.
    #[error("the MCP URL must be an http(s) URL with a host")]
    BadMcpUrl,
    /// The PKCE verifier is not 43 to 128 characters of `[A-Za-z0-9-._~]` (RFC 7636 §4.1).
    #[error("the PKCE verifier must be 43..=128 unreserved characters")]
    BadVerifier,
    /// The `state` is empty.
    #[error("the state must not be empty")]
    EmptyState,
    /// The client ID metadata document URL is not https with a path.
    #[error("the client ID metadata document URL must be https with a path")]
    BadMetadataDocumentUrl,
    /// A private key is configured but this build has no `jwt` feature.
    #[error("private_key_jwt needs the `jwt` feature of mcp-proto")]
    JwtFeatureDisabled,
    /// A private key is configured but [`AuthConfig::unix_time`](super::AuthConfig::unix_time)
    /// or [`Secrets::jwt_id`](super::Secrets::jwt_id) is missing.
    #[error("private_key_jwt needs the UNIX time and a jti")]
    JwtInputsMissing,
    /// The client credentials grant needs a pre-registered client.
    #[error("the client credentials grant needs a pre-registered client")]
    ClientCredentialsNeedPreRegistration,
    /// The identity assertion grant needs a pre-registered client and
    /// [`AuthConfig::identity_assertion`](super::AuthConfig::identity_assertion) with an
    /// https (or loopback http) token endpoint.
    #[error(
        "the identity assertion grant needs a pre-registered client and an identity provider \
         with an https (or loopback http) token endpoint"
    )]
    IdentityAssertionIncomplete,
    /// The command needs a finished flow (tokens in hand), or one with a refresh token.
    #[error("the flow is not in a state that allows this command")]
    WrongState,
    /// The flow has no refresh token.
    #[error("no refresh token")]
    NoRefreshToken,
    /// A [`SavedAuthorization`](super::SavedAuthorization) whose token endpoint is not an
    /// https (or loopback http) URL.
    #[error("the saved authorization's token endpoint must be an https (or loopback http) URL")]
    BadSavedAuthorization,
}
