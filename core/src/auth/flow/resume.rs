//! Refreshing in a later process: [`SavedAuthorization`], what a finished [`AuthFlow`] must
//! remember so that a new process can refresh its tokens without discovery, registration or a
//! user, and [`AuthFlow::resume`], which rebuilds a flow from it.

use std::collections::VecDeque;
use std::fmt;

use url::Url;

use super::super::client::ClientCredentials;
use super::super::config::AuthConfig;
use super::super::error::AuthUsageError;
use super::super::metadata::{AuthorizationServerMetadata, is_secure_endpoint};
use super::super::secret::SecretString;
use super::super::token::Tokens;
use super::{AuthFlow, Phase};
use crate::time::Instant;

/// The part of a finished authorization that a refresh needs: the authorization server's
/// issuer and token endpoint, how the client authenticates there, and the RFC 8707 `resource`.
/// Get it from [`AuthFlow::saved`] after the tokens arrive; keep it next to the tokens (it may
/// hold a client secret from dynamic registration, so store it as privately as the tokens);
/// hand it to [`AuthFlow::resume`] in a later process. `Debug` redacts the secret.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SavedAuthorization {
    /// The authorization server's issuer identifier.
    pub issuer: String,
    /// Where refresh tokens are exchanged.
    pub token_endpoint: String,
    /// The server's `token_endpoint_auth_methods_supported`, as discovered.
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// The client id the tokens were issued to.
    pub client_id: String,
    /// The client secret dynamic registration issued, if any. A pre-registered client's
    /// secret or key is not saved: [`AuthFlow::resume`] takes it from the configuration.
    pub client_secret: Option<SecretString>,
    /// The `token_endpoint_auth_method` registration agreed on, if any.
    pub token_endpoint_auth_method: Option<String>,
    /// The `resource` sent with every token request.
    pub resource: String,
}

impl SavedAuthorization {
    /// A saved authorization with no secret, no method and no method list (set the public
    /// fields for those): for rebuilding one from a host's store.
    pub fn new(
        issuer: impl Into<String>,
        token_endpoint: impl Into<String>,
        client_id: impl Into<String>,
        resource: impl Into<String>,
    ) -> Self {
        Self {
            issuer: issuer.into(),
            token_endpoint: token_endpoint.into(),
            token_endpoint_auth_methods_supported: None,
            client_id: client_id.into(),
            client_secret: None,
            token_endpoint_auth_method: None,
            resource: resource.into(),
        }
    }
}

impl fmt::Debug for SavedAuthorization {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SavedAuthorization")
            .field("issuer", &self.issuer)
            .field("token_endpoint", &self.token_endpoint)
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "<redacted>"),
            )
            .field(
                "token_endpoint_auth_method",
                &self.token_endpoint_auth_method,
            )
            .field("resource", &self.resource)
            .finish_non_exhaustive()
    }
}

impl AuthFlow {
    /// What a later process needs to refresh this flow's tokens: `Some` once the flow has
    /// tokens (and so a discovered server and a client identity), `None` before.
    #[must_use]
    pub fn saved(&self) -> Option<SavedAuthorization> {
        self.tokens.as_ref()?;
        let (asm, (client, method)) = (self.asm.as_ref()?, self.client.as_ref()?);
        let pre_registered = self
            .config
            .client
            .pre_registered
            .as_ref()
            .is_some_and(|p| p.client_id == client.client_id);
        Some(SavedAuthorization {
            issuer: asm.issuer.clone(),
            token_endpoint: asm.token_endpoint.clone()?,
            token_endpoint_auth_methods_supported: asm
                .token_endpoint_auth_methods_supported
                .clone(),
            client_id: client.client_id.clone(),
            client_secret: if pre_registered {
                None
            } else {
                client.client_secret.clone()
            },
            token_endpoint_auth_method: method.clone(),
            resource: self.resource.clone(),
        })
    }

    /// A finished flow rebuilt from `saved` and the stored `tokens`, at `now`: it holds the
    /// tokens, and [`refresh`](AuthFlow::refresh) works at once. It is the one command such a
    /// flow is for: [`reauthorize`](AuthFlow::reauthorize) and
    /// [`handle_forbidden`](AuthFlow::handle_forbidden) return [`AuthUsageError::WrongState`],
    /// because the authorization endpoint and redirect URI of the original run are not saved;
    /// authorize with a new flow instead.
    ///
    /// The client is the configuration's pre-registered one when its id matches (its secret or
    /// key is used), else the saved id and secret.
    ///
    /// # Errors
    ///
    /// [`AuthUsageError::BadMcpUrl`] for a configuration URL that is not http(s);
    /// [`AuthUsageError::BadSavedAuthorization`] when the saved token endpoint is not a valid
    /// https (or loopback http) URL: a tampered file must not send the refresh token elsewhere
    /// in clear text.
    pub fn resume(
        config: AuthConfig,
        saved: SavedAuthorization,
        tokens: Tokens,
        now: Instant,
    ) -> Result<Self, AuthUsageError> {
        let url = &config.mcp_url;
        if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
            return Err(AuthUsageError::BadMcpUrl);
        }
        match Url::parse(&saved.token_endpoint) {
            Ok(u) if is_secure_endpoint(&u) => {}
            _ => return Err(AuthUsageError::BadSavedAuthorization),
        }
        let client = match &config.client.pre_registered {
            Some(p) if p.client_id == saved.client_id => p.clone(),
            _ => ClientCredentials {
                client_id: saved.client_id,
                client_secret: saved.client_secret,
                private_key: None,
            },
        };
        let asm = AuthorizationServerMetadata {
            issuer: saved.issuer,
            token_endpoint: Some(saved.token_endpoint),
            token_endpoint_auth_methods_supported: saved.token_endpoint_auth_methods_supported,
            ..AuthorizationServerMetadata::default()
        };
        let secrets = super::super::config::Secrets::new("", "");
        Ok(Self {
            resource: saved.resource,
            challenge_scopes: None,
            config,
            secrets,
            started: now,
            phase: Phase::Done,
            prm: None,
            asm: Some(asm),
            client: Some((client, saved.token_endpoint_auth_method)),
            carried: None,
            scopes: tokens.scopes(),
            tokens: Some(tokens),
            authorizations: 0,
            pending: None,
            outbox: VecDeque::new(),
            events: VecDeque::new(),
            next_id: 0,
            resumed: true,
        })
    }

    /// Whether this flow was rebuilt by [`resume`](AuthFlow::resume) (it can refresh, not
    /// authorize).
    #[must_use]
    pub fn is_resumed(&self) -> bool {
        self.resumed
    }
}
