//! Scenario tests of [`AuthFlow`](super::AuthFlow): scripted metadata documents and endpoint
//! responses, one rule per test. The names of the conformance scenarios each test mirrors are
//! in the test comments.

mod discovery;
mod grants;
mod identity_assertion;
mod registration;
mod resume;
mod scopes;

use serde_json::{Value, json};
use url::Url;

use super::*;
use crate::http::challenge::{Challenge, parse_www_authenticate};
use crate::http::headers::HeaderList;
use crate::time::Instant;

pub(super) const MCP: &str = "http://localhost:3000/mcp";
pub(super) const AS: &str = "http://localhost:4000";
pub(super) const REDIRECT: &str = "http://127.0.0.1:7777/callback";
pub(super) const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
pub(super) const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
pub(super) const STATE: &str = "state-1";
pub(super) const PRM_PATH: &str = "http://localhost:3000/.well-known/oauth-protected-resource/mcp";
pub(super) const PRM_ROOT: &str = "http://localhost:3000/.well-known/oauth-protected-resource";
pub(super) const ASM_URL: &str = "http://localhost:4000/.well-known/oauth-authorization-server";

pub(super) fn prm_doc() -> Value {
    json!({"resource": MCP, "authorization_servers": [AS]})
}

pub(super) fn asm_doc() -> Value {
    json!({
        "issuer": AS,
        "authorization_endpoint": format!("{AS}/authorize"),
        "token_endpoint": format!("{AS}/token"),
        "registration_endpoint": format!("{AS}/register"),
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
    })
}

pub(super) fn token_doc() -> Value {
    json!({"access_token": "AT-SECRET", "token_type": "Bearer", "expires_in": 3600, "refresh_token": "RT-SECRET"})
}

/// Merges `patch` into `base` (top-level keys; `null` removes a key).
pub(super) fn with(mut base: Value, patch: Value) -> Value {
    for (k, v) in patch.as_object().cloned().unwrap_or_default() {
        if v.is_null() {
            base.as_object_mut().unwrap().remove(&k);
        } else {
            base[k] = v;
        }
    }
    base
}

/// A scripted set of servers: URL (without query) → status and JSON body; everything else 404.
pub(super) struct Script {
    pub(super) flow: AuthFlow,
    pub(super) now: Instant,
    pub(super) routes: Vec<(String, u16, Value)>,
    pub(super) log: Vec<AuthHttpRequest>,
    pub(super) events: Vec<AuthEvent>,
}

impl Script {
    pub(super) fn new(config: AuthConfig, challenge: Option<&Challenge>) -> Self {
        Self::with_secrets(config, challenge, Secrets::new(VERIFIER, STATE))
    }

    pub(super) fn with_secrets(
        config: AuthConfig,
        challenge: Option<&Challenge>,
        secrets: Secrets,
    ) -> Self {
        let now = Instant::now();
        let flow =
            AuthFlow::new(config, challenge.and_then(Challenge::bearer), secrets, now).unwrap();
        Self {
            flow,
            now,
            routes: Vec::new(),
            log: Vec::new(),
            events: Vec::new(),
        }
    }

    pub(super) fn route(mut self, url: &str, status: u16, body: Value) -> Self {
        self.routes.push((url.to_owned(), status, body));
        self
    }

    /// Answers requests until none is left; collects events.
    pub(super) fn drive(&mut self) {
        for _ in 0..50 {
            while let Some(e) = self.flow.poll_event() {
                self.events.push(e);
            }
            let Some(req) = self.flow.poll_request() else {
                return;
            };
            let mut key = req.url.clone();
            key.set_query(None);
            let (status, body) = self
                .routes
                .iter()
                .find(|(u, _, _)| u == key.as_str())
                .map(|(_, s, b)| (*s, serde_json::to_vec(b).unwrap()))
                .unwrap_or((404, b"Not Found".to_vec()));
            let id = req.id;
            self.log.push(req);
            self.flow
                .handle_response(self.now, id, status, &HeaderList::new(), &body);
        }
        panic!("the flow did not settle");
    }

    pub(super) fn urls(&self) -> Vec<String> {
        self.log.iter().map(|r| r.url.to_string()).collect()
    }

    pub(super) fn authorize_urls(&self) -> Vec<Url> {
        self.events
            .iter()
            .filter_map(|e| match e {
                AuthEvent::AuthorizeUrl(u) => Some(u.clone()),
                _ => None,
            })
            .collect()
    }

    pub(super) fn failure(&self) -> Option<&AuthError> {
        self.events.iter().find_map(|e| match e {
            AuthEvent::Failed(err) => Some(err),
            _ => None,
        })
    }

    pub(super) fn tokens(&self) -> Vec<&Tokens> {
        self.events
            .iter()
            .filter_map(|e| match e {
                AuthEvent::Tokens(t) => Some(t),
                _ => None,
            })
            .collect()
    }

    /// Plays the authorization server's `/authorize`: redirects with `code` and the request's
    /// `state` (plus `extra` query text).
    pub(super) fn redirect_back(&mut self, extra: &str) {
        let url = self
            .authorize_urls()
            .last()
            .cloned()
            .expect("an authorization URL");
        let state = param(&url, "state").unwrap();
        let loc = format!("{REDIRECT}?code=test-auth-code&state={state}{extra}");
        self.flow.handle_redirect(self.now, &loc);
        self.drive();
    }

    pub(super) fn last(&self, purpose: AuthPurpose) -> &AuthHttpRequest {
        self.log
            .iter()
            .rev()
            .find(|r| r.purpose == purpose)
            .expect("a request of that purpose")
    }
}

pub(super) fn param(url: &Url, name: &str) -> Option<String> {
    url.query_pairs()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

pub(super) fn body_str(r: &AuthHttpRequest) -> String {
    String::from_utf8(r.body.clone()).unwrap()
}

pub(super) fn config(client: ClientRegistration) -> AuthConfig {
    AuthConfig::new(
        Url::parse(MCP).unwrap(),
        Url::parse(REDIRECT).unwrap(),
        client,
    )
}

pub(super) fn dcr() -> ClientRegistration {
    ClientRegistration::dynamic(ClientMetadata::new("test-client"))
}

pub(super) fn challenge(s: &str) -> Challenge {
    parse_www_authenticate(s).remove(0)
}

/// The standard servers: path-based PRM, AS metadata, DCR (public client) and token endpoint.
pub(super) fn standard(config: AuthConfig, ch: Option<&Challenge>) -> Script {
    Script::new(config, ch)
        .route(PRM_PATH, 200, prm_doc())
        .route(ASM_URL, 200, asm_doc())
        .route(
            &format!("{AS}/register"),
            201,
            json!({"client_id": "dyn-client"}),
        )
        .route(&format!("{AS}/token"), 200, token_doc())
}
