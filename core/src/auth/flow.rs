//! [`AuthFlow`]: one OAuth 2.1 authorization of an MCP client, as a sans-IO state machine.

use std::collections::VecDeque;
use url::Url;

use super::authorize::{AuthorizationRequest, RedirectExpectations, authorization_url, parse_redirect};
use super::client::{
    ClientCredentials, TokenEndpointAuthMethod,
    apply_client_auth, choose_auth_method, is_metadata_document_url, parse_registration_response,
    registration_auth_method, registration_body,
};
use super::config::{AuthConfig, AuthEvent, AuthHttpRequest, AuthRequestId, Grant, Secrets};
use super::error::{AuthError, AuthPurpose, AuthUsageError};
use super::metadata::{
    AuthorizationServerMetadata, ProtectedResourceMetadata, authorization_server_metadata_urls,
    canonical_resource, is_secure_endpoint, issuer_eq, legacy_authorization_server_metadata_url,
    protected_resource_metadata_urls, resource_matches,
};
use super::pkce::is_valid_verifier;
use super::scope::{scope_param, select_scopes, union};
use super::secret::SecretString;
use super::token::{TokenResponseError, Tokens, parse_error_body, parse_token_response};
use crate::http::challenge::BearerChallenge;
use crate::http::Method;
use crate::http::headers::{ACCEPT, CONTENT_TYPE, HeaderList, MCP_PROTOCOL_VERSION};
use crate::time::{Instant, saturating_add};

#[derive(Debug)]
enum Phase {
    Prm { candidates: Vec<Url>, next: usize },
    LegacyMetadata,
    Metadata { issuer: String, candidates: Vec<Url>, next: usize },
    Registering,
    Authorizing { deadline: Instant },
    Exchanging,
    Refreshing,
    ClientCredentials,
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
    resource: String,
    scopes: Vec<String>,
    tokens: Option<Tokens>,
    authorizations: u32,
    pending: Option<Pending>,
    outbox: VecDeque<AuthHttpRequest>,
    events: VecDeque<AuthEvent>,
    next_id: u64,
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
            scopes: Vec::new(),
            tokens: None,
            authorizations: 0,
            pending: None,
            outbox: VecDeque::new(),
            events: VecDeque::new(),
            next_id: 0,
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
            Phase::Metadata { issuer, candidates, next } => {
                if !ok {
                    return self.next_metadata(now, issuer, candidates, next);
                }
                match AuthorizationServerMetadata::parse(body) {
                    Ok(m) if !issuer_eq(&m.issuer, &issuer) => self.fail(AuthError::IssuerMismatch {
                        expected: issuer,
                        found: m.issuer,
                    }),
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
            Phase::Exchanging | Phase::Refreshing | Phase::ClientCredentials => {
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
            return self.fail(AuthError::BadRedirect { reason: "no authorization server".into() });
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
                    ("code_verifier", self.secrets.code_verifier.expose().to_owned()),
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
        if !matches!(self.phase, Phase::Done) || self.config.grant != Grant::AuthorizationCode {
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
        let asked: Vec<String> = c.scope().unwrap_or_default().into_iter().map(str::to_owned).collect();
        self.scopes = union(&self.scopes, &asked);
        self.secrets = Secrets { jwt_id: self.secrets.jwt_id.take(), ..secrets };
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
            || !matches!(self.phase, Phase::Done | Phase::Failed)
            || self.config.grant != Grant::AuthorizationCode
        {
            return Err(AuthUsageError::WrongState);
        }
        validate_secrets(&secrets)?;
        self.secrets = Secrets { jwt_id: self.secrets.jwt_id.take(), ..secrets };
        self.authorizations = 0;
        self.begin_authorization(now);
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

    // ---- steps ----

    fn next_prm(&mut self, now: Instant, candidates: Vec<Url>, next: usize) {
        let Some(url) = candidates.get(next).cloned() else {
            // No resource metadata anywhere: a 2025-03-26 server. Its own origin may publish
            // authorization server metadata; else the default endpoints apply.
            self.resource = canonical_resource(&self.config.mcp_url);
            return match legacy_authorization_server_metadata_url(&self.config.mcp_url) {
                Some(url) => {
                    self.phase = Phase::LegacyMetadata;
                    self.get(now, url, AuthPurpose::ServerMetadata, true);
                }
                None => self.fail(AuthError::DiscoveryFailed { resource: self.resource.clone() }),
            };
        };
        self.phase = Phase::Prm { candidates, next: next + 1 };
        self.get(now, url, AuthPurpose::ResourceMetadata, true);
    }

    fn on_prm(&mut self, now: Instant, ok: bool, body: &[u8], candidates: Vec<Url>, next: usize) {
        if !ok {
            return self.next_prm(now, candidates, next);
        }
        let prm = match ProtectedResourceMetadata::parse(body) {
            Ok(p) => p,
            Err(reason) => return self.invalid(AuthPurpose::ResourceMetadata, reason),
        };
        if !resource_matches(&prm.resource, &self.config.mcp_url) {
            return self.fail(AuthError::ResourceMismatch {
                expected: canonical_resource(&self.config.mcp_url),
                found: prm.resource,
            });
        }
        let Some(issuer) = prm.authorization_servers.first().cloned() else {
            return self.invalid(AuthPurpose::ResourceMetadata, "no authorization_servers".into());
        };
        let issuer_url = match Url::parse(&issuer) {
            Ok(u) if is_secure_endpoint(&u) => u,
            Ok(_) => return self.fail(AuthError::InsecureEndpoint { url: issuer }),
            Err(e) => return self.invalid(AuthPurpose::ResourceMetadata, format!("issuer: {e}")),
        };
        self.resource = prm.resource.clone();
        self.prm = Some(prm);
        self.next_metadata(now, issuer, authorization_server_metadata_urls(&issuer_url), 0);
    }

    fn next_metadata(&mut self, now: Instant, issuer: String, candidates: Vec<Url>, next: usize) {
        let Some(url) = candidates.get(next).cloned() else {
            return self.fail(AuthError::DiscoveryFailed { resource: self.resource.clone() });
        };
        self.phase = Phase::Metadata { issuer, candidates, next: next + 1 };
        self.get(now, url, AuthPurpose::ServerMetadata, false);
    }

    fn on_metadata(&mut self, now: Instant, asm: AuthorizationServerMetadata) {
        let code_flow = self.config.grant == Grant::AuthorizationCode;
        if code_flow && !asm.supports_s256() {
            return self.fail(AuthError::PkceUnsupported);
        }
        let mut endpoints = vec![("token_endpoint", asm.token_endpoint.as_deref())];
        if code_flow {
            endpoints.push(("authorization_endpoint", asm.authorization_endpoint.as_deref()));
        }
        for (name, ep) in endpoints {
            match ep.map(Url::parse) {
                Some(Ok(u)) if is_secure_endpoint(&u) => {}
                Some(Ok(_)) => return self.fail(AuthError::InsecureEndpoint { url: ep.unwrap_or_default().into() }),
                _ => return self.invalid(AuthPurpose::ServerMetadata, format!("missing or bad {name}")),
            }
        }
        self.asm = Some(asm);
        let reg = &self.config.client;
        if let Some(c) = &reg.pre_registered {
            self.client = Some((c.clone(), None));
            return match self.config.grant {
                Grant::AuthorizationCode => self.start_authorization(now),
                Grant::ClientCredentials => self.client_credentials(now),
            };
        }
        let asm = self.asm.as_ref().unwrap_or_else(|| unreachable!("set just above"));
        if let Some(url) = &reg.metadata_document
            && asm.client_id_metadata_document_supported == Some(true)
        {
            self.client = Some((ClientCredentials::public(url.as_str()), Some("none".into())));
            return self.start_authorization(now);
        }
        let Some(metadata) = &reg.dynamic else {
            return self.fail(AuthError::NoClientId);
        };
        let Some(endpoint) = asm.registration_endpoint.as_deref() else {
            return self.fail(AuthError::NoClientId);
        };
        let url = match Url::parse(endpoint) {
            Ok(u) if is_secure_endpoint(&u) => u,
            Ok(_) => return self.fail(AuthError::InsecureEndpoint { url: endpoint.into() }),
            Err(e) => return self.invalid(AuthPurpose::ServerMetadata, format!("registration_endpoint: {e}")),
        };
        let mut grants = vec!["authorization_code"];
        if self.config.want_refresh_token && asm.supports_grant("refresh_token") {
            grants.push("refresh_token");
        }
        self.scopes = self.initial_scopes();
        let body = registration_body(
            metadata,
            self.config.redirect_uri.as_str(),
            &grants,
            registration_auth_method(asm),
            scope_param(&self.scopes).as_deref(),
        );
        let mut headers = HeaderList::new();
        headers.insert(CONTENT_TYPE, JSON);
        headers.insert(ACCEPT, JSON);
        self.phase = Phase::Registering;
        self.send(now, Method::Post, url, headers, body, AuthPurpose::Registration);
    }

    fn initial_scopes(&self) -> Vec<String> {
        select_scopes(
            self.config.scopes.as_deref(),
            self.challenge_scopes.as_deref(),
            self.prm.as_ref(),
            self.asm.as_ref(),
            self.config.want_refresh_token && self.config.grant == Grant::AuthorizationCode,
        )
    }

    fn start_authorization(&mut self, now: Instant) {
        self.scopes = self.initial_scopes();
        self.begin_authorization(now);
    }

    fn begin_authorization(&mut self, now: Instant) {
        let (Some(asm), Some((client, _))) = (&self.asm, &self.client) else {
            return self.fail(AuthError::NoClientId);
        };
        let Some(Ok(endpoint)) = asm.authorization_endpoint.as_deref().map(Url::parse) else {
            return self.invalid(AuthPurpose::ServerMetadata, "bad authorization_endpoint".into());
        };
        let scope = scope_param(&self.scopes);
        let url = authorization_url(
            &endpoint,
            &AuthorizationRequest {
                client_id: &client.client_id,
                redirect_uri: self.config.redirect_uri.as_str(),
                code_verifier: self.secrets.code_verifier.expose(),
                state: self.secrets.state.expose(),
                scope: scope.as_deref(),
                resource: &self.resource,
            },
        );
        self.authorizations = self.authorizations.saturating_add(1);
        self.phase = Phase::Authorizing {
            deadline: saturating_add(now, self.config.authorization_timeout),
        };
        self.events.push_back(AuthEvent::AuthorizeUrl(url));
    }

    fn client_credentials(&mut self, now: Instant) {
        self.scopes = self.initial_scopes();
        let mut form = vec![("grant_type", "client_credentials".to_owned())];
        if let Some(s) = scope_param(&self.scopes) {
            form.push(("scope", s));
        }
        form.push(("resource", self.resource.clone()));
        self.phase = Phase::ClientCredentials;
        self.token_request(now, AuthPurpose::ClientCredentials, form);
    }

    /// POSTs a token request with the client's authentication added.
    fn token_request(&mut self, now: Instant, purpose: AuthPurpose, mut form: Vec<(&'static str, String)>) {
        let (Some(asm), Some((client, registered))) = (&self.asm, &self.client) else {
            return self.fail(AuthError::NoClientId);
        };
        let method = match choose_auth_method(asm, client, registered.as_deref()) {
            Ok(m) => m,
            Err(e) => return self.fail(e),
        };
        let Some(Ok(url)) = asm.token_endpoint.as_deref().map(Url::parse) else {
            return self.invalid(AuthPurpose::ServerMetadata, "bad token_endpoint".into());
        };
        let assertion = if method == TokenEndpointAuthMethod::PrivateKeyJwt {
            match self.assertion(now, client, &asm.issuer) {
                Ok(a) => Some(a),
                Err(e) => return self.fail(e),
            }
        } else {
            None
        };
        let mut headers = HeaderList::new();
        headers.insert(CONTENT_TYPE, FORM);
        headers.insert(ACCEPT, JSON);
        apply_client_auth(method, client, assertion.as_ref(), &mut form, &mut headers);
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(form.iter().map(|(k, v)| (*k, v.as_str())))
            .finish()
            .into_bytes();
        self.send(now, Method::Post, url, headers, body, purpose);
    }

    #[cfg(feature = "jwt")]
    fn assertion(&self, now: Instant, client: &ClientCredentials, audience: &str) -> Result<SecretString, AuthError> {
        let missing = || AuthError::ClientAssertion("missing key, time or jti".into());
        let key = client.private_key.as_ref().ok_or_else(missing)?;
        let jti = self.secrets.jwt_id.as_ref().ok_or_else(missing)?;
        let base = self.config.unix_time.ok_or_else(missing)?;
        let elapsed = now.saturating_duration_since(self.started).as_secs();
        super::jwt::client_assertion(
            key,
            &client.client_id,
            audience,
            base.saturating_add(elapsed),
            self.config.assertion_lifetime,
            jti.expose(),
        )
    }

    #[cfg(not(feature = "jwt"))]
    fn assertion(&self, _: Instant, _: &ClientCredentials, _: &str) -> Result<SecretString, AuthError> {
        // `new` refuses private keys without the feature, so this is never reached.
        Err(AuthError::ClientAssertion("built without the `jwt` feature".into()))
    }

    fn get(&mut self, now: Instant, url: Url, purpose: AuthPurpose, to_mcp_server: bool) {
        let mut headers = HeaderList::new();
        headers.insert(ACCEPT, JSON);
        if to_mcp_server && let Some(v) = &self.config.protocol_version {
            headers.insert(MCP_PROTOCOL_VERSION, v.clone());
        }
        self.send(now, Method::Get, url, headers, Vec::new(), purpose);
    }

    fn send(&mut self, now: Instant, method: Method, url: Url, headers: HeaderList, body: Vec<u8>, purpose: AuthPurpose) {
        let id = AuthRequestId(self.next_id);
        self.next_id += 1;
        self.pending = Some(Pending {
            id,
            purpose,
            deadline: saturating_add(now, self.config.exchange_timeout),
        });
        self.outbox.push_back(AuthHttpRequest { id, method, url, headers, body, purpose });
    }

    fn endpoint_error(&mut self, purpose: AuthPurpose, status: u16, body: &[u8]) {
        let e = match parse_error_body(body) {
            Some(b) => AuthError::EndpointError {
                purpose,
                error: b.error,
                description: b.error_description,
            },
            None => AuthError::HttpStatus { purpose, status },
        };
        self.fail(e);
    }

    fn invalid(&mut self, what: AuthPurpose, reason: String) {
        self.fail(AuthError::InvalidDocument { what, reason });
    }

    fn fail(&mut self, e: AuthError) {
        self.phase = Phase::Failed;
        self.pending = None;
        self.outbox.clear();
        self.events.push_back(AuthEvent::Failed(e));
    }
}
