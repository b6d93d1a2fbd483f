//! The two token requests of [`Grant::IdentityAssertion`](super::super::Grant::IdentityAssertion)
//! (SEP-990, enterprise-managed authorization): the RFC 8693 token exchange at the identity
//! provider that turns the user's ID token into an Identity Assertion JWT Authorization Grant
//! (ID-JAG), then the RFC 7523 JWT bearer grant at the authorization server.

use serde::Deserialize;

use super::super::client::{TokenEndpointAuthMethod, apply_client_auth};
use super::super::error::{AuthError, AuthPurpose};
use super::super::scope::scope_param;
use super::super::secret::SecretString;
use super::steps::form_body;
use super::{AuthFlow, FORM, JSON, Phase};
use crate::http::Method;
use crate::http::headers::{ACCEPT, CONTENT_TYPE, HeaderList};
use crate::time::Instant;

const TOKEN_EXCHANGE_GRANT: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const JWT_BEARER_GRANT: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const ID_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:id_token";
const ID_JAG_TYPE: &str = "urn:ietf:params:oauth:token-type:id-jag";

/// The fields of an RFC 8693 token exchange response that the flow reads.
#[derive(Deserialize)]
struct ExchangeResponse {
    access_token: String,
    issued_token_type: Option<String>,
}

impl AuthFlow {
    /// Asks the identity provider for an ID-JAG whose audience is the authorization server
    /// just discovered and whose resource is this MCP server.
    pub(super) fn token_exchange(&mut self, now: Instant) {
        self.scopes = self.initial_scopes();
        let (Some(idp), Some(asm)) = (&self.config.identity_assertion, &self.asm) else {
            // `AuthFlow::new` refuses this grant without an identity provider, and this step
            // runs only after the authorization server metadata was stored.
            return self.fail(AuthError::NoClientId);
        };
        let mut form = vec![
            ("grant_type", TOKEN_EXCHANGE_GRANT.to_owned()),
            ("requested_token_type", ID_JAG_TYPE.to_owned()),
            ("audience", asm.issuer.clone()),
            ("resource", self.resource.clone()),
        ];
        if let Some(s) = scope_param(&self.scopes) {
            form.push(("scope", s));
        }
        form.push(("subject_token", idp.id_token.expose().to_owned()));
        form.push(("subject_token_type", ID_TOKEN_TYPE.to_owned()));
        let mut headers = HeaderList::new();
        headers.insert(CONTENT_TYPE, FORM);
        headers.insert(ACCEPT, JSON);
        let method = if idp.client.client_secret.is_some() {
            TokenEndpointAuthMethod::ClientSecretBasic
        } else {
            TokenEndpointAuthMethod::None
        };
        apply_client_auth(method, &idp.client, None, &mut form, &mut headers);
        let (url, body) = (idp.token_endpoint.clone(), form_body(&form));
        self.phase = Phase::TokenExchange;
        self.send(
            now,
            Method::Post,
            url,
            headers,
            body,
            AuthPurpose::TokenExchange,
        );
    }

    /// The identity provider's answer: an ID-JAG goes on to the authorization server as a JWT
    /// bearer grant; anything else ends the flow with a typed error.
    pub(super) fn on_token_exchange(&mut self, now: Instant, status: u16, body: &[u8]) {
        if !(200..300).contains(&status) {
            return self.endpoint_error(AuthPurpose::TokenExchange, status, body);
        }
        let r: ExchangeResponse = match serde_json::from_slice(body) {
            Ok(r) => r,
            Err(e) => return self.invalid(AuthPurpose::TokenExchange, e.to_string()),
        };
        // RFC 8693 §2.2.1 makes `issued_token_type` required; a server that leaves it out is
        // taken at its word that it issued what was asked for.
        if let Some(ty) = r.issued_token_type.as_deref()
            && ty != ID_JAG_TYPE
        {
            return self.invalid(
                AuthPurpose::TokenExchange,
                format!("issued_token_type is {ty:?}, not an ID-JAG"),
            );
        }
        if r.access_token.is_empty() {
            return self.invalid(AuthPurpose::TokenExchange, "empty access_token".into());
        }
        let assertion = SecretString::new(r.access_token);
        let mut form = vec![
            ("grant_type", JWT_BEARER_GRANT.to_owned()),
            ("assertion", assertion.expose().to_owned()),
        ];
        if let Some(s) = scope_param(&self.scopes) {
            form.push(("scope", s));
        }
        form.push(("resource", self.resource.clone()));
        self.phase = Phase::JwtBearer;
        self.token_request(now, AuthPurpose::JwtBearer, form);
    }
}
