//! [`AuthFlow`]: one OAuth 2.1 authorization of an MCP client, as a sans-IO state machine.

use std::collections::VecDeque;
use url::Url;

use super::authorize::{RedirectExpectations, parse_redirect};
use super::client::{ClientCredentials, is_metadata_document_url, parse_registration_response};
use super::config::{AuthConfig, AuthEvent, AuthHttpRequest, AuthRequestId, Grant, Secrets};
use super::error::{AuthError, AuthPurpose, AuthUsageError};
use super::metadata::{
    AuthorizationServerMetadata, ProtectedResourceMetadata, canonical_resource, is_secure_endpoint,
    issuer_eq, protected_resource_metadata_urls,
};
use super::pkce::is_valid_verifier;
use super::scope::union;
use super::token::{TokenResponseError, Tokens, parse_token_response};
use crate::http::challenge::BearerChallenge;
use crate::http::headers::HeaderList;
use crate::time::Instant;

mod identity_assertion;
mod resume;
mod steps;

pub use resume::SavedAuthorization;

#[derive(Debug)]
enum Phase {
    Prm {
        candidates: Vec<Url>,
        next: usize,
    },
    LegacyMetadata,
    Metadata {
        issuer: String,
        candidates: Vec<Url>,
        next: usize,
    },
    Registering,
    Authorizing {
        deadline: Instant,
    },
    Exchanging,
    Refreshing,
    ClientCredentials,
    /// At the identity provider: trading the ID token for an ID-JAG.
    TokenExchange,
    /// At the authorization server: trading the ID-JAG for tokens.
    JwtBearer,
    Done,
    Failed,
}

#[derive(Debug)]
struct Pending {
    id: AuthRequestId,
    purpose: AuthPurpose,
    deadline: Instant,
}

/// One authorization of an MCP client against the server at [`AuthConfig::mcp_url`], from the
/// first 401 to the tokens (MCP authorization 2025-03-26 to 2026-07-28).
///
/// The steps: protected resource metadata discovery (RFC 9728) and the check that it is for
/// this server; authorization server metadata discovery (RFC 8414 / OpenID, with the 2025-03-26
/// fallbacks when the server publishes no resource metadata); the PKCE `S256` check; client
/// identification (pre-registered, Client ID Metadata Document, Dynamic Client Registration);
/// the authorization URL; the redirect (`state`, `iss`); the token request; later, refreshes
/// and 403 step-ups.
///
/// The run loop is the crate's: after [`AuthFlow::new`] and every `handle_*` input or command,
/// drain [`poll_request`](AuthFlow::poll_request) (perform each request, feed each response
/// back), drain [`poll_event`](AuthFlow::poll_event), then wait until
/// [`poll_timeout`](AuthFlow::poll_timeout) or the next input. At most one HTTP exchange is in
/// flight. Peer input never panics and never returns an error; it ends in an event.
#[derive(Debug)]
pub struct AuthFlow {
    config: AuthConfig,
    secrets: Secrets,
    /// The `now` of `new`, the instant `AuthConfig::unix_time` describes (dates JWTs).
    #[cfg_attr(not(feature = "jwt"), allow(dead_code))]
    started: Instant,
    challenge_scopes: Option<Vec<String>>,
    phase: Phase,
    prm: Option<ProtectedResourceMetadata>,
    asm: Option<AuthorizationServerMetadata>,
    client: Option<(ClientCredentials, Option<String>)>,
    /// After [`rediscover`](AuthFlow::rediscover): the client identity and the issuer it
    /// belongs to, reused only if discovery finds that same authorization server again.
    carried: Option<((ClientCredentials, Option<String>), String)>,
    resource: String,
    scopes: Vec<String>,
    tokens: Option<Tokens>,
    authorizations: u32,
    pending: Option<Pending>,
    outbox: VecDeque<AuthHttpRequest>,
    events: VecDeque<AuthEvent>,
    next_id: u64,
    /// Rebuilt by [`AuthFlow::resume`]: it can refresh, not authorize.
    resumed: bool,
}

const FORM: &str = "application/x-www-form-urlencoded";
const JSON: &str = "application/json";
const INSUFFICIENT_SCOPE: &str = "insufficient_scope";

fn validate_secrets(s: &Secrets) -> Result<(), AuthUsageError> {
    if !is_valid_verifier(s.code_verifier.expose()) {
        return Err(AuthUsageError::BadVerifier);
    }
    if s.state.is_empty() {
        return Err(AuthUsageError::EmptyState);
    }
    Ok(())
}

impl AuthFlow {
    /// Starts an authorization at `now`, after the MCP server answered 401 with `challenge`
    /// (its Bearer challenge, if it sent one). The first request (a metadata GET) is ready in
    /// [`poll_request`](AuthFlow::poll_request).
    pub fn new(
        config: AuthConfig,
        challenge: Option<BearerChallenge<'_>>,
        secrets: Secrets,
        now: Instant,
    ) -> Result<Self, AuthUsageError> {
        let url = &config.mcp_url;
        if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
            return Err(AuthUsageError::BadMcpUrl);
        }
        if config.grant == Grant::AuthorizationCode {
            validate_secrets(&secrets)?;
        }
        if config
            .client
            .metadata_document
            .as_ref()
            .is_some_and(|u| !is_metadata_document_url(u))
        {
            return Err(AuthUsageError::BadMetadataDocumentUrl);
        }
        let pre = config.client.pre_registered.as_ref();
        if config.grant == Grant::ClientCredentials && pre.is_none() {
            return Err(AuthUsageError::ClientCredentialsNeedPreRegistration);
        }
        if config.grant == Grant::IdentityAssertion
            && (pre.is_none()
                || !config
                    .identity_assertion
                    .as_ref()
                    .is_some_and(|i| is_secure_endpoint(&i.token_endpoint)))
        {
            return Err(AuthUsageError::IdentityAssertionIncomplete);
        }
        if pre.is_some_and(|c| c.private_key.is_some()) {
            if cfg!(not(feature = "jwt")) {
                return Err(AuthUsageError::JwtFeatureDisabled);
            }
            if config.unix_time.is_none() || secrets.jwt_id.is_none() {
                return Err(AuthUsageError::JwtInputsMissing);
            }
        }
        let candidates =
            protected_resource_metadata_urls(url, challenge.and_then(|c| c.resource_metadata()));
        let mut flow = Self {
            resource: canonical_resource(url),
            challenge_scopes: challenge
                .and_then(|c| c.scope())
                .map(|s| s.into_iter().map(str::to_owned).collect()),
            config,
            secrets,
            started: now,
            phase: Phase::Failed,
            prm: None,
            asm: None,
            client: None,
            carried: None,
            scopes: Vec::new(),
            tokens: None,
            authorizations: 0,
            pending: None,
            outbox: VecDeque::new(),
            events: VecDeque::new(),
            next_id: 0,
            resumed: false,
        };
        flow.next_prm(now, candidates, 0);
        Ok(flow)
    }

    // ---- getters ----

    /// The tokens of the last successful grant.
    #[must_use]
    pub fn tokens(&self) -> Option<&Tokens> {
        self.tokens.as_ref()
    }

    /// The protected resource metadata in use (`None` before discovery, or on a 2025-03-26
    /// server that has none).
    #[must_use]
    pub fn protected_resource(&self) -> Option<&ProtectedResourceMetadata> {
        self.prm.as_ref()
    }

    /// The authorization server metadata in use (the 2025-03-26 defaults when the server
    /// published none).
    #[must_use]
    pub fn authorization_server(&self) -> Option<&AuthorizationServerMetadata> {
        self.asm.as_ref()
    }

    /// The client identity in use, once chosen.
    #[must_use]
    pub fn client(&self) -> Option<&ClientCredentials> {
        self.client.as_ref().map(|(c, _)| c)
    }

    /// The RFC 8707 `resource` sent in authorization and token requests: the metadata's
    /// `resource` exactly as published, else the canonical MCP URL.
    #[must_use]
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// The scopes of the last authorization request.
    #[must_use]
    pub fn scopes(&self) -> &[String] {
        &self.scopes
    }

    /// How many authorization URLs the flow has emitted since the last
    /// [`reauthorize`](AuthFlow::reauthorize).
    #[must_use]
    pub fn authorizations(&self) -> u32 {
        self.authorizations
    }

    /// Whether the flow holds tokens and waits for nothing.
    #[must_use]
    pub fn is_done(&self) -> bool {
        matches!(self.phase, Phase::Done)
    }

    /// Whether the flow has failed (a [`AuthEvent::Failed`] was emitted).
    #[must_use]
    pub fn is_failed(&self) -> bool {
        matches!(self.phase, Phase::Failed)
    }

    // ---- inputs ----

    /// The response to request `id`: status, headers and the whole body. Unknown or stale ids
    /// are ignored.
    pub fn handle_response(
        &mut self,
        now: Instant,
        id: AuthRequestId,
        status: u16,
        headers: &HeaderList,
        body: &[u8],
    ) {
        let _ = headers; // Nothing in the headers of these responses changes a decision.
        let Some(p) = self.pending.take_if(|p| p.id == id) else {
            return;
        };
        if body.len() > self.config.max_body {
            return self.fail(AuthError::TooLarge {
                purpose: p.purpose,
                limit: self.config.max_body,
            });
        }
        let ok = (200..300).contains(&status);
        match std::mem::replace(&mut self.phase, Phase::Failed) {
            Phase::Prm { candidates, next } => self.on_prm(now, ok, body, candidates, next),
            Phase::LegacyMetadata => {
                let asm = if ok {
                    match AuthorizationServerMetadata::parse(body) {
                        Ok(m) => m,
                        Err(reason) => return self.invalid(AuthPurpose::ServerMetadata, reason),
                    }
                } else {
                    AuthorizationServerMetadata::legacy_defaults(&self.config.mcp_url)
                };
                self.on_metadata(now, asm);
            }
            Phase::Metadata {
                issuer,
                candidates,
                next,
            } => {
                if !ok {
                    return self.next_metadata(now, issuer, candidates, next);
                }
                match AuthorizationServerMetadata::parse(body) {
                    Ok(m) if !issuer_eq(&m.issuer, &issuer) => {
                        self.fail(AuthError::IssuerMismatch {
                            expected: issuer,
                            found: m.issuer,
                        })
                    }
                    Ok(m) => self.on_metadata(now, m),
                    Err(reason) => self.invalid(AuthPurpose::ServerMetadata, reason),
                }
            }
            Phase::Registering => {
                if !ok {
                    return self.endpoint_error(AuthPurpose::Registration, status, body);
                }
                match parse_registration_response(body) {
                    Ok(r) => {
                        self.events.push_back(AuthEvent::Registered(r.clone()));
                        self.client = Some((r.credentials, r.token_endpoint_auth_method));
                        self.start_authorization(now);
                    }
                    Err(reason) => self.invalid(AuthPurpose::Registration, reason),
                }
            }
            Phase::TokenExchange => self.on_token_exchange(now, status, body),
            Phase::Exchanging | Phase::Refreshing | Phase::ClientCredentials | Phase::JwtBearer => {
                if !ok {
                    return self.endpoint_error(p.purpose, status, body);
                }
                let previous = self.tokens.as_ref().and_then(|t| t.refresh_token.clone());
                match parse_token_response(body, now, previous.as_ref()) {
                    Ok(t) => {
                        self.tokens = Some(t.clone());
                        self.phase = Phase::Done;
                        self.events.push_back(AuthEvent::Tokens(t));
                    }
                    Err(TokenResponseError::NotBearer(ty)) => {
                        self.fail(AuthError::UnsupportedTokenType(ty));
                    }
                    Err(TokenResponseError::Invalid(reason)) => self.invalid(p.purpose, reason),
                }
            }
            // No request is pending in these phases; `pending` matched, so this is unreachable
            // in practice, and keeping the phase is the harmless answer.
            other @ (Phase::Authorizing { .. } | Phase::Done | Phase::Failed) => {
                self.phase = other;
            }
        }
    }

    /// Request `id` failed below HTTP (connect, TLS, reset); `message` is the adapter's
    /// description. Unknown ids are ignored.
    pub fn handle_failure(&mut self, now: Instant, id: AuthRequestId, message: impl Into<String>) {
        let _ = now;
        if let Some(p) = self.pending.take_if(|p| p.id == id) {
            self.fail(AuthError::Transport {
                purpose: p.purpose,
                message: message.into(),
            });
        }
    }

    /// The redirect that ends the user's authorization: the URL the browser landed on, or the
    /// `Location` the authorization endpoint answered. Ignored unless the flow waits for one.
    pub fn handle_redirect(&mut self, now: Instant, redirect: &str) {
        if !matches!(self.phase, Phase::Authorizing { .. }) {
            return;
        }
        let Some(asm) = &self.asm else {
            return self.fail(AuthError::BadRedirect {
                reason: "no authorization server".into(),
            });
        };
        let expect = RedirectExpectations {
            redirect_uri: &self.config.redirect_uri,
            state: self.secrets.state.expose(),
            issuer: &asm.issuer,
            iss_required: asm.authorization_response_iss_parameter_supported == Some(true),
        };
        match parse_redirect(redirect, &expect) {
            Ok(code) => {
                let form = vec![
                    ("grant_type", "authorization_code".to_owned()),
                    ("code", code),
                    ("redirect_uri", self.config.redirect_uri.to_string()),
                    (
                        "code_verifier",
                        self.secrets.code_verifier.expose().to_owned(),
                    ),
                    ("resource", self.resource.clone()),
                ];
                self.phase = Phase::Exchanging;
                self.token_request(now, AuthPurpose::Token, form);
            }
            Err(e) => self.fail(e),
        }
    }

    /// A later 403 from the MCP server with this Bearer challenge. When it is
    /// `insufficient_scope`, the flow authorizes again (with `secrets`, which must be fresh)
    /// for the union of the scopes it had and the challenge's, and returns `Ok(true)`; after
    /// [`AuthConfig::max_authorizations`] it emits [`AuthError::StepUpLimit`] instead. Any other
    /// 403 is not an authorization matter: `Ok(false)`.
    pub fn handle_forbidden(
        &mut self,
        now: Instant,
        challenge: Option<BearerChallenge<'_>>,
        secrets: Secrets,
    ) -> Result<bool, AuthUsageError> {
        if !matches!(self.phase, Phase::Done)
            || self.config.grant != Grant::AuthorizationCode
            || self.resumed
        {
            return Err(AuthUsageError::WrongState);
        }
        validate_secrets(&secrets)?;
        let Some(c) = challenge.filter(|c| c.error() == Some(INSUFFICIENT_SCOPE)) else {
            return Ok(false);
        };
        if self.authorizations >= self.config.max_authorizations {
            self.fail(AuthError::StepUpLimit {
                attempts: self.authorizations,
            });
            return Ok(false);
        }
        let asked: Vec<String> = c
            .scope()
            .unwrap_or_default()
            .into_iter()
            .map(str::to_owned)
            .collect();
        self.scopes = union(&self.scopes, &asked);
        self.secrets = Secrets {
            jwt_id: self.secrets.jwt_id.take(),
            ..secrets
        };
        self.begin_authorization(now);
        Ok(true)
    }

    /// Deadlines: call at or after [`poll_timeout`](AuthFlow::poll_timeout). Early calls do
    /// nothing.
    pub fn handle_timeout(&mut self, now: Instant) {
        if let Some(p) = self.pending.as_ref().filter(|p| now >= p.deadline) {
            let purpose = p.purpose;
            self.pending = None;
            return self.fail(AuthError::Timeout { purpose });
        }
        if let Phase::Authorizing { deadline } = self.phase
            && now >= deadline
        {
            self.fail(AuthError::Timeout {
                purpose: AuthPurpose::Authorization,
            });
        }
    }

    // ---- commands ----

    /// Exchanges the refresh token for new tokens (grant `refresh_token`, with `resource`).
    /// Needs a finished flow whose tokens include a refresh token.
    pub fn refresh(&mut self, now: Instant) -> Result<(), AuthUsageError> {
        if !matches!(self.phase, Phase::Done) {
            return Err(AuthUsageError::WrongState);
        }
        let Some(rt) = self.tokens.as_ref().and_then(|t| t.refresh_token.as_ref()) else {
            return Err(AuthUsageError::NoRefreshToken);
        };
        let form = vec![
            ("grant_type", "refresh_token".to_owned()),
            ("refresh_token", rt.expose().to_owned()),
            ("resource", self.resource.clone()),
        ];
        self.phase = Phase::Refreshing;
        self.token_request(now, AuthPurpose::Refresh, form);
        Ok(())
    }

    /// Authorizes again with the discovered server and client (the token expired and could
    /// not be refreshed), with fresh `secrets`. Resets the step-up count. Needs a flow that got
    /// as far as tokens before (it may have failed since, e.g. on a refused refresh).
    pub fn reauthorize(&mut self, now: Instant, secrets: Secrets) -> Result<(), AuthUsageError> {
        let ready = self.client.is_some() && self.asm.is_some() && self.tokens.is_some();
        if !ready
            || self.resumed
            || !matches!(self.phase, Phase::Done | Phase::Failed)
            || self.config.grant != Grant::AuthorizationCode
        {
            return Err(AuthUsageError::WrongState);
        }
        self.take_fresh_secrets(secrets)?;
        self.begin_authorization(now);
        Ok(())
    }

    /// Authorizes again from the start of discovery, after a 401 that a refresh could not
    /// cure: the protected resource metadata is fetched again (from `challenge`'s
    /// `resource_metadata` when it has one), since the server may have moved to another
    /// authorization server (SEP-2352). The client identity is kept only if discovery finds
    /// the same authorization server; at a new one the client registers again, and the old
    /// one's credentials are never presented there. Fresh `secrets`; the step-up count resets.
    /// Needs a flow that finished (done or failed) with the authorization code grant, and was
    /// not [resumed](AuthFlow::resume) (that one can only refresh).
    pub fn rediscover(
        &mut self,
        now: Instant,
        challenge: Option<BearerChallenge<'_>>,
        secrets: Secrets,
    ) -> Result<(), AuthUsageError> {
        if self.resumed
            || !matches!(self.phase, Phase::Done | Phase::Failed)
            || self.config.grant != Grant::AuthorizationCode
        {
            return Err(AuthUsageError::WrongState);
        }
        self.take_fresh_secrets(secrets)?;
        self.carried = match (self.client.take(), self.asm.take()) {
            (Some(client), Some(asm)) => Some((client, asm.issuer)),
            _ => None,
        };
        self.prm = None;
        if let Some(scopes) = challenge.and_then(|c| c.scope()) {
            self.challenge_scopes = Some(scopes.into_iter().map(str::to_owned).collect());
        }
        let candidates = protected_resource_metadata_urls(
            &self.config.mcp_url,
            challenge.and_then(|c| c.resource_metadata()),
        );
        self.next_prm(now, candidates, 0);
        Ok(())
    }

    /// Takes fresh `secrets` for an authorization that starts over (keeping the old ones'
    /// `jti`, as a step-up does) and resets the step-up count: [`reauthorize`](Self::reauthorize)
    /// and [`rediscover`](Self::rediscover) alike.
    fn take_fresh_secrets(&mut self, secrets: Secrets) -> Result<(), AuthUsageError> {
        validate_secrets(&secrets)?;
        self.secrets = Secrets {
            jwt_id: self.secrets.jwt_id.take(),
            ..secrets
        };
        self.authorizations = 0;
        Ok(())
    }

    // ---- outputs ----

    /// The next HTTP request to perform.
    #[must_use]
    pub fn poll_request(&mut self) -> Option<AuthHttpRequest> {
        self.outbox.pop_front()
    }

    /// The next event.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<AuthEvent> {
        self.events.pop_front()
    }

    /// The earliest deadline: the exchange in flight, or the wait for the redirect.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        match (&self.pending, &self.phase) {
            (Some(p), _) => Some(p.deadline),
            (None, Phase::Authorizing { deadline }) => Some(*deadline),
            _ => None,
        }
    }
}
