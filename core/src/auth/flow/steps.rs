//! The steps of [`AuthFlow`]: discovery, client identification, the authorization URL and the
//! token requests. Split from `flow.rs` to keep each file readable in one sitting.

use url::Url;

use super::super::AuthEvent;
use super::super::authorize::{AuthorizationRequest, authorization_url};
use super::super::client::{
    ClientCredentials, TokenEndpointAuthMethod, apply_client_auth, choose_auth_method,
    registration_auth_method, registration_body,
};
use super::super::config::Grant;
use super::super::error::{AuthError, AuthPurpose};
use super::super::metadata::{
    AuthorizationServerMetadata, ProtectedResourceMetadata, authorization_server_metadata_urls,
    canonical_resource, is_secure_endpoint, issuer_eq, legacy_authorization_server_metadata_url,
    resource_matches,
};
use super::super::scope::{scope_param, select_scopes};
use super::super::secret::SecretString;
use super::super::token::parse_error_body;
use super::{AuthFlow, AuthHttpRequest, AuthRequestId, FORM, JSON, Pending, Phase};
use crate::http::Method;
use crate::http::headers::{ACCEPT, CONTENT_TYPE, HeaderList, MCP_PROTOCOL_VERSION};
use crate::time::{Instant, saturating_add};

impl AuthFlow {
    // ---- steps ----

    pub(super) fn next_prm(&mut self, now: Instant, candidates: Vec<Url>, next: usize) {
        let Some(url) = candidates.get(next).cloned() else {
            // No resource metadata anywhere: a 2025-03-26 server. Its own origin may publish
            // authorization server metadata; else the default endpoints apply.
            self.resource = canonical_resource(&self.config.mcp_url);
            return match legacy_authorization_server_metadata_url(&self.config.mcp_url) {
                Some(url) => {
                    self.phase = Phase::LegacyMetadata;
                    self.get(now, url, AuthPurpose::ServerMetadata, true);
                }
                None => self.fail(AuthError::DiscoveryFailed {
                    resource: self.resource.clone(),
                }),
            };
        };
        self.phase = Phase::Prm {
            candidates,
            next: next + 1,
        };
        self.get(now, url, AuthPurpose::ResourceMetadata, true);
    }

    pub(super) fn on_prm(
        &mut self,
        now: Instant,
        ok: bool,
        body: &[u8],
        candidates: Vec<Url>,
        next: usize,
    ) {
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
            return self.invalid(
                AuthPurpose::ResourceMetadata,
                "no authorization_servers".into(),
            );
        };
        let issuer_url = match Url::parse(&issuer) {
            Ok(u) if is_secure_endpoint(&u) => u,
            Ok(_) => return self.fail(AuthError::InsecureEndpoint { url: issuer }),
            Err(e) => return self.invalid(AuthPurpose::ResourceMetadata, format!("issuer: {e}")),
        };
        self.resource = prm.resource.clone();
        self.prm = Some(prm);
        self.next_metadata(
            now,
            issuer,
            authorization_server_metadata_urls(&issuer_url),
            0,
        );
    }

    pub(super) fn next_metadata(
        &mut self,
        now: Instant,
        issuer: String,
        candidates: Vec<Url>,
        next: usize,
    ) {
        let Some(url) = candidates.get(next).cloned() else {
            return self.fail(AuthError::DiscoveryFailed {
                resource: self.resource.clone(),
            });
        };
        self.phase = Phase::Metadata {
            issuer,
            candidates,
            next: next + 1,
        };
        self.get(now, url, AuthPurpose::ServerMetadata, false);
    }

    pub(super) fn on_metadata(&mut self, now: Instant, asm: AuthorizationServerMetadata) {
        let code_flow = self.config.grant == Grant::AuthorizationCode;
        if code_flow && !asm.supports_s256() {
            return self.fail(AuthError::PkceUnsupported);
        }
        let mut endpoints = vec![("token_endpoint", asm.token_endpoint.as_deref())];
        if code_flow {
            endpoints.push((
                "authorization_endpoint",
                asm.authorization_endpoint.as_deref(),
            ));
        }
        for (name, ep) in endpoints {
            match ep.map(Url::parse) {
                Some(Ok(u)) if is_secure_endpoint(&u) => {}
                Some(Ok(_)) => {
                    return self.fail(AuthError::InsecureEndpoint {
                        url: ep.unwrap_or_default().into(),
                    });
                }
                _ => {
                    return self.invalid(
                        AuthPurpose::ServerMetadata,
                        format!("missing or bad {name}"),
                    );
                }
            }
        }
        let carried = self
            .carried
            .take()
            .filter(|(_, issuer)| issuer_eq(issuer, &asm.issuer));
        self.asm = Some(asm);
        let reg = &self.config.client;
        if let Some((client, _)) = carried
            && reg.pre_registered.is_none()
        {
            // Rediscovery found the same authorization server: its client id still holds.
            self.client = Some(client);
            return self.start_authorization(now);
        }
        if let Some(c) = &reg.pre_registered {
            self.client = Some((c.clone(), None));
            return match self.config.grant {
                Grant::AuthorizationCode => self.start_authorization(now),
                Grant::ClientCredentials => self.client_credentials(now),
                Grant::IdentityAssertion => self.token_exchange(now),
            };
        }
        let asm = self
            .asm
            .as_ref()
            .unwrap_or_else(|| unreachable!("set just above"));
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
            Ok(_) => {
                return self.fail(AuthError::InsecureEndpoint {
                    url: endpoint.into(),
                });
            }
            Err(e) => {
                return self.invalid(
                    AuthPurpose::ServerMetadata,
                    format!("registration_endpoint: {e}"),
                );
            }
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
        self.send(
            now,
            Method::Post,
            url,
            headers,
            body,
            AuthPurpose::Registration,
        );
    }

    pub(super) fn initial_scopes(&self) -> Vec<String> {
        select_scopes(
            self.config.scopes.as_deref(),
            self.challenge_scopes.as_deref(),
            self.prm.as_ref(),
            self.asm.as_ref(),
            self.config.want_refresh_token && self.config.grant == Grant::AuthorizationCode,
        )
    }

    pub(super) fn start_authorization(&mut self, now: Instant) {
        self.scopes = self.initial_scopes();
        self.begin_authorization(now);
    }

    pub(super) fn begin_authorization(&mut self, now: Instant) {
        let (Some(asm), Some((client, _))) = (&self.asm, &self.client) else {
            return self.fail(AuthError::NoClientId);
        };
        let Some(Ok(endpoint)) = asm.authorization_endpoint.as_deref().map(Url::parse) else {
            return self.invalid(
                AuthPurpose::ServerMetadata,
                "bad authorization_endpoint".into(),
            );
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

    pub(super) fn client_credentials(&mut self, now: Instant) {
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
    pub(super) fn token_request(
        &mut self,
        now: Instant,
        purpose: AuthPurpose,
        mut form: Vec<(&'static str, String)>,
    ) {
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
        self.send(now, Method::Post, url, headers, form_body(&form), purpose);
    }

    #[cfg(feature = "jwt")]
    fn assertion(
        &self,
        now: Instant,
        client: &ClientCredentials,
        audience: &str,
    ) -> Result<SecretString, AuthError> {
        let missing = || AuthError::ClientAssertion("missing key, time or jti".into());
        let key = client.private_key.as_ref().ok_or_else(missing)?;
        let jti = self.secrets.jwt_id.as_ref().ok_or_else(missing)?;
        let base = self.config.unix_time.ok_or_else(missing)?;
        let elapsed = now.saturating_duration_since(self.started).as_secs();
        super::super::jwt::client_assertion(
            key,
            &client.client_id,
            audience,
            base.saturating_add(elapsed),
            self.config.assertion_lifetime,
            jti.expose(),
        )
    }

    #[cfg(not(feature = "jwt"))]
    fn assertion(
        &self,
        _: Instant,
        _: &ClientCredentials,
        _: &str,
    ) -> Result<SecretString, AuthError> {
        // `new` refuses private keys without the feature, so this is never reached.
        Err(AuthError::ClientAssertion(
            "built without the `jwt` feature".into(),
        ))
    }

    pub(super) fn get(
        &mut self,
        now: Instant,
        url: Url,
        purpose: AuthPurpose,
        to_mcp_server: bool,
    ) {
        let mut headers = HeaderList::new();
        headers.insert(ACCEPT, JSON);
        if to_mcp_server && let Some(v) = &self.config.protocol_version {
            headers.insert(MCP_PROTOCOL_VERSION, v.clone());
        }
        self.send(now, Method::Get, url, headers, Vec::new(), purpose);
    }

    pub(super) fn send(
        &mut self,
        now: Instant,
        method: Method,
        url: Url,
        headers: HeaderList,
        body: Vec<u8>,
        purpose: AuthPurpose,
    ) {
        let id = AuthRequestId(self.next_id);
        self.next_id += 1;
        self.pending = Some(Pending {
            id,
            purpose,
            deadline: saturating_add(now, self.config.exchange_timeout),
        });
        self.outbox.push_back(AuthHttpRequest {
            id,
            method,
            url,
            headers,
            body,
            purpose,
        });
    }

    pub(super) fn endpoint_error(&mut self, purpose: AuthPurpose, status: u16, body: &[u8]) {
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

    pub(super) fn invalid(&mut self, what: AuthPurpose, reason: String) {
        self.fail(AuthError::InvalidDocument { what, reason });
    }

    pub(super) fn fail(&mut self, e: AuthError) {
        self.phase = Phase::Failed;
        self.pending = None;
        self.outbox.clear();
        self.events.push_back(AuthEvent::Failed(e));
    }
}

/// `form` as an `application/x-www-form-urlencoded` body.
pub(super) fn form_body(form: &[(&'static str, String)]) -> Vec<u8> {
    url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(form.iter().map(|(k, v)| (*k, v.as_str())))
        .finish()
        .into_bytes()
}
