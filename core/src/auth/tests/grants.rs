use serde_json::json;

use super::*;
use crate::time::Duration;

#[test]
fn full_flow_and_token_use() {
    let mut s = standard(config(dcr()), None);
    s.drive();
    s.redirect_back("");
    let t = s.tokens()[0].clone();
    assert_eq!(t.authorization_header(), "Bearer AT-SECRET");
    assert_eq!(t.expires_at, Some(s.now + Duration::from_secs(3600)));
    assert!(s.flow.is_done());
    assert_eq!(s.flow.poll_timeout(), None);
    // The token never appears in any URL the flow produced.
    assert!(
        s.urls()
            .iter()
            .chain(
                s.authorize_urls()
                    .iter()
                    .map(|u| u.as_str().to_owned())
                    .collect::<Vec<_>>()
                    .iter()
            )
            .all(|u| !u.contains("AT-SECRET"))
    );
}

#[test]
fn state_mismatch_stops_the_flow() {
    let mut s = standard(config(dcr()), None);
    s.drive();
    s.flow
        .handle_redirect(s.now, &format!("{REDIRECT}?code=c&state=forged"));
    s.drive();
    assert_eq!(s.failure(), Some(&AuthError::StateMismatch));
    assert!(!s.log.iter().any(|r| r.purpose == AuthPurpose::Token));
}

#[test]
fn authorization_error_in_redirect() {
    let mut s = standard(config(dcr()), None);
    s.drive();
    s.flow.handle_redirect(
        s.now,
        &format!("{REDIRECT}?error=access_denied&state={STATE}"),
    );
    s.drive();
    assert!(
        matches!(s.failure(), Some(AuthError::AuthorizationDenied { error, .. }) if error == "access_denied")
    );
}

fn iss_script(advertised: bool) -> Script {
    let mut s = standard(config(dcr()), None);
    if advertised {
        s.routes[1].2 = with(
            asm_doc(),
            json!({"authorization_response_iss_parameter_supported": true}),
        );
    }
    s.drive();
    s
}

#[test]
fn iss_checks_in_the_flow() {
    // auth/iss-supported
    let mut s = iss_script(true);
    s.redirect_back("&iss=http%3A%2F%2Flocalhost%3A4000");
    assert_eq!(s.tokens().len(), 1);
    // auth/iss-supported-missing
    let mut s = iss_script(true);
    s.redirect_back("");
    assert!(matches!(
        s.failure(),
        Some(AuthError::IssuerParameterMismatch { found: None, .. })
    ));
    assert!(!s.log.iter().any(|r| r.purpose == AuthPurpose::Token));
    // auth/iss-wrong-issuer
    let mut s = iss_script(true);
    s.redirect_back("&iss=https%3A%2F%2Fevil.example.com");
    assert!(matches!(
        s.failure(),
        Some(AuthError::IssuerParameterMismatch { .. })
    ));
    // auth/iss-unexpected
    let mut s = iss_script(false);
    s.redirect_back("&iss=https%3A%2F%2Fevil.example.com");
    assert!(matches!(
        s.failure(),
        Some(AuthError::IssuerParameterMismatch { .. })
    ));
    // auth/iss-not-advertised
    let mut s = iss_script(false);
    s.redirect_back("");
    assert_eq!(s.tokens().len(), 1);
}

#[test]
fn refresh_uses_the_refresh_token() {
    let mut s = standard(config(dcr()), None);
    s.drive();
    s.redirect_back("");
    s.routes[3].2 = json!({"access_token": "AT-2", "token_type": "Bearer"});
    s.flow.refresh(s.now).unwrap();
    s.drive();
    let r = s.last(AuthPurpose::Refresh);
    assert_eq!(r.url.as_str(), "http://localhost:4000/token");
    assert_eq!(
        body_str(r),
        "grant_type=refresh_token&refresh_token=RT-SECRET&resource=http%3A%2F%2Flocalhost%3A3000%2Fmcp&client_id=dyn-client"
    );
    let t = s.tokens()[1];
    assert_eq!(t.access_token.expose(), "AT-2");
    assert_eq!(
        t.refresh_token.as_ref().map(SecretString::expose),
        Some("RT-SECRET")
    );
    assert_eq!(t.expires_at, None);
}

#[test]
fn refresh_needs_a_refresh_token() {
    let mut s = standard(config(dcr()), None);
    s.routes[3].2 = json!({"access_token": "AT", "token_type": "Bearer"});
    assert_eq!(s.flow.refresh(s.now), Err(AuthUsageError::WrongState));
    s.drive();
    s.redirect_back("");
    assert_eq!(s.flow.refresh(s.now), Err(AuthUsageError::NoRefreshToken));
}

#[test]
fn refused_refresh_then_reauthorize() {
    let mut s = standard(config(dcr()), None);
    s.drive();
    s.redirect_back("");
    s.routes[3] = (
        format!("{AS}/token"),
        400,
        json!({"error": "invalid_grant"}),
    );
    s.flow.refresh(s.now).unwrap();
    s.drive();
    assert!(
        matches!(s.failure(), Some(AuthError::EndpointError { purpose: AuthPurpose::Refresh, error, .. }) if error == "invalid_grant")
    );
    s.flow
        .reauthorize(s.now, Secrets::new("w".repeat(43), "s9"))
        .unwrap();
    s.drive();
    assert_eq!(s.authorize_urls().len(), 2);
    assert_eq!(s.flow.authorizations(), 1);
}

#[test]
fn token_type_must_be_bearer() {
    let mut s = standard(config(dcr()), None);
    s.routes[3].2 = json!({"access_token": "AT", "token_type": "DPoP"});
    s.drive();
    s.redirect_back("");
    assert_eq!(
        s.failure(),
        Some(&AuthError::UnsupportedTokenType("DPoP".into()))
    );
}

fn client_credentials_config(creds: ClientCredentials) -> AuthConfig {
    let mut c = config(ClientRegistration::pre_registered(creds));
    c.grant = Grant::ClientCredentials;
    c
}

#[test]
fn client_credentials_basic() {
    // auth/client-credentials-basic
    let c = client_credentials_config(ClientCredentials::with_secret(
        "conformance-test-client",
        "conformance-test-secret",
    ));
    let mut s = standard(c, None);
    s.routes[1].2 = with(
        asm_doc(),
        json!({"grant_types_supported": ["client_credentials"], "token_endpoint_auth_methods_supported": ["client_secret_basic"], "code_challenge_methods_supported": null}),
    );
    s.drive();
    assert!(s.authorize_urls().is_empty());
    let t = s.last(AuthPurpose::ClientCredentials);
    assert_eq!(
        t.headers.get("authorization"),
        Some("Basic Y29uZm9ybWFuY2UtdGVzdC1jbGllbnQ6Y29uZm9ybWFuY2UtdGVzdC1zZWNyZXQ=")
    );
    assert_eq!(
        body_str(t),
        "grant_type=client_credentials&resource=http%3A%2F%2Flocalhost%3A3000%2Fmcp"
    );
    assert_eq!(s.tokens().len(), 1);
}

#[cfg(feature = "jwt")]
#[test]
fn client_credentials_jwt() {
    // auth/client-credentials-jwt
    const KEY: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgpEMjGMCE/Ku+i3av
nnM+DJ7uaEILGeS1mauQGni1sN6hRANCAAR+/NxGLRWF8MJoVkak5CyZN3RXp2nM
7QlLug33wiUoaUtCLXw7XjWgA1fLLPMhCywiXc4xQY5CAW7C01Hb2cvB
-----END PRIVATE KEY-----
";
    const PUB: &str = "-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEfvzcRi0VhfDCaFZGpOQsmTd0V6dp
zO0JS7oN98IlKGlLQi18O141oANXyyzzIQssIl3OMUGOQgFuwtNR29nLwQ==
-----END PUBLIC KEY-----
";
    let key = PrivateKey {
        pem: SecretString::new(KEY),
        algorithm: JwtAlgorithm::Es256,
    };
    let mut c = client_credentials_config(ClientCredentials::with_private_key(
        "conformance-test-client",
        key,
    ));
    c.unix_time = Some(1_800_000_000);
    let secrets = Secrets::new(VERIFIER, STATE).with_jwt_id("nonce-123");
    let mut s = Script::with_secrets(c, None, secrets)
        .route(PRM_PATH, 200, prm_doc())
        .route(
            ASM_URL,
            200,
            with(asm_doc(), json!({"grant_types_supported": ["client_credentials"], "token_endpoint_auth_methods_supported": ["private_key_jwt"], "token_endpoint_auth_signing_alg_values_supported": ["ES256"]})),
        )
        .route(&format!("{AS}/token"), 200, token_doc());
    s.drive();
    let t = s.last(AuthPurpose::ClientCredentials);
    assert_eq!(t.headers.get("authorization"), None);
    let form: Vec<(String, String)> = url::form_urlencoded::parse(&t.body).into_owned().collect();
    let get = |k: &str| form.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    assert_eq!(get("grant_type").as_deref(), Some("client_credentials"));
    assert_eq!(get("client_id").as_deref(), Some("conformance-test-client"));
    assert_eq!(get("resource").as_deref(), Some(MCP));
    assert_eq!(
        get("client_assertion_type").as_deref(),
        Some("urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
    );
    let jwt = get("client_assertion").unwrap();
    let header = jsonwebtoken::decode_header(&jwt).unwrap();
    assert_eq!(header.alg, jsonwebtoken::Algorithm::ES256);
    let mut v = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::ES256);
    v.set_audience(&[AS]);
    v.validate_exp = false; // the test's UNIX time is fixed in the future
    let data = jsonwebtoken::decode::<serde_json::Value>(
        &jwt,
        &jsonwebtoken::DecodingKey::from_ec_pem(PUB.as_bytes()).unwrap(),
        &v,
    )
    .unwrap();
    let cl = data.claims;
    assert_eq!(cl["iss"], "conformance-test-client");
    assert_eq!(cl["sub"], "conformance-test-client");
    assert_eq!(cl["aud"], AS);
    assert_eq!(cl["iat"], 1_800_000_000u64);
    assert_eq!(cl["exp"], 1_800_000_300u64);
    assert_eq!(cl["jti"], "nonce-123");
    assert_eq!(s.tokens().len(), 1);
}

#[test]
fn construction_misuse() {
    let now = Instant::now();
    let new = |c: AuthConfig, sec: Secrets| AuthFlow::new(c, None, sec, now).map(|_| ());
    assert_eq!(
        new(config(dcr()), Secrets::new("short", STATE)),
        Err(AuthUsageError::BadVerifier)
    );
    assert_eq!(
        new(config(dcr()), Secrets::new(VERIFIER, "")),
        Err(AuthUsageError::EmptyState)
    );
    let mut c = config(dcr());
    c.mcp_url = Url::parse("file:///x").unwrap();
    assert_eq!(
        new(c, Secrets::new(VERIFIER, STATE)),
        Err(AuthUsageError::BadMcpUrl)
    );
    let c = config(ClientRegistration::metadata_document(
        Url::parse("http://x/c.json").unwrap(),
    ));
    assert_eq!(
        new(c, Secrets::new(VERIFIER, STATE)),
        Err(AuthUsageError::BadMetadataDocumentUrl)
    );
    let mut c = config(dcr());
    c.grant = Grant::ClientCredentials;
    assert_eq!(
        new(c, Secrets::new(VERIFIER, STATE)),
        Err(AuthUsageError::ClientCredentialsNeedPreRegistration)
    );
    let key = PrivateKey {
        pem: SecretString::new("k"),
        algorithm: JwtAlgorithm::Es256,
    };
    let c = client_credentials_config(ClientCredentials::with_private_key("id", key));
    let want = if cfg!(feature = "jwt") {
        AuthUsageError::JwtInputsMissing
    } else {
        AuthUsageError::JwtFeatureDisabled
    };
    assert_eq!(new(c, Secrets::new(VERIFIER, STATE)), Err(want));
}

#[test]
fn exchange_deadline() {
    let mut s = standard(config(dcr()), None);
    let req = s.flow.poll_request().unwrap();
    let deadline = s.flow.poll_timeout().unwrap();
    assert_eq!(deadline, s.now + Duration::from_secs(30));
    s.flow.handle_timeout(s.now + Duration::from_secs(29));
    assert!(!s.flow.is_failed());
    s.flow.handle_timeout(deadline);
    assert_eq!(
        s.flow.poll_event(),
        Some(AuthEvent::Failed(AuthError::Timeout {
            purpose: AuthPurpose::ResourceMetadata
        }))
    );
    // A late response is ignored.
    s.flow
        .handle_response(deadline, req.id, 200, &HeaderList::new(), b"{}");
    assert_eq!(s.flow.poll_event(), None);
    assert_eq!(s.flow.poll_request(), None);
}

#[test]
fn authorization_deadline() {
    let mut s = standard(config(dcr()), None);
    s.drive();
    let deadline = s.flow.poll_timeout().unwrap();
    assert_eq!(deadline, s.now + Duration::from_secs(600));
    s.flow.handle_timeout(deadline);
    s.drive();
    assert_eq!(
        s.failure(),
        Some(&AuthError::Timeout {
            purpose: AuthPurpose::Authorization
        })
    );
    // A redirect after the failure does nothing.
    s.redirect_back("");
    assert!(!s.log.iter().any(|r| r.purpose == AuthPurpose::Token));
}

#[test]
fn oversized_body_and_transport_failure() {
    let mut s = standard(config(dcr()), None);
    let req = s.flow.poll_request().unwrap();
    s.flow.handle_response(
        s.now,
        req.id,
        200,
        &HeaderList::new(),
        &vec![b' '; (1 << 20) + 1],
    );
    assert!(matches!(
        s.flow.poll_event(),
        Some(AuthEvent::Failed(AuthError::TooLarge { .. }))
    ));
    let mut s = standard(config(dcr()), None);
    let req = s.flow.poll_request().unwrap();
    s.flow.handle_failure(s.now, req.id, "connection refused");
    assert!(matches!(
        s.flow.poll_event(),
        Some(AuthEvent::Failed(AuthError::Transport { .. }))
    ));
}

#[test]
fn nothing_secret_in_debug_output() {
    let c = config(ClientRegistration::pre_registered(
        ClientCredentials::with_secret("pre-id", "CLIENT-SECRET"),
    ));
    let mut s = standard(c, None);
    s.routes[1].2 = with(
        asm_doc(),
        json!({"token_endpoint_auth_methods_supported": ["client_secret_basic"]}),
    );
    s.drive();
    s.redirect_back("");
    s.flow.refresh(s.now).unwrap();
    let pending = s.flow.poll_request().unwrap();
    let text = format!(
        "{:?} {:#?} {:?} {:?} {:?}",
        s.flow, s.flow, s.events, s.log, pending
    );
    for secret in [
        "AT-SECRET",
        "RT-SECRET",
        "CLIENT-SECRET",
        VERIFIER,
        "Basic ",
    ] {
        assert!(!text.contains(secret), "{secret} leaked");
    }
    // The state is a secret as well (it is in the authorization URL event, by necessity).
    assert!(!format!("{:?}", s.flow).contains(STATE));
    for e in &s.events {
        if let AuthEvent::Failed(err) = e {
            assert!(!err.to_string().contains("SECRET"));
        }
    }
}

#[test]
fn rediscover_at_the_same_server_keeps_the_client() {
    let mut s = standard(config(dcr()), None);
    s.drive();
    s.redirect_back("");
    let registrations = |s: &Script| s.urls().iter().filter(|u| u.ends_with("/register")).count();
    assert_eq!(registrations(&s), 1);
    s.flow
        .rediscover(s.now, None, Secrets::new("w".repeat(43), "s9"))
        .unwrap();
    s.drive();
    // Discovery again (PRM, AS metadata), no second registration, a new authorization.
    assert_eq!(s.urls().iter().filter(|u| *u == PRM_PATH).count(), 2);
    assert_eq!(registrations(&s), 1);
    assert_eq!(s.authorize_urls().len(), 2);
    let second = s.authorize_urls()[1].clone();
    assert_eq!(param(&second, "client_id").as_deref(), Some("dyn-client"));
    assert_eq!(param(&second, "state").as_deref(), Some("s9"));
    s.redirect_back("");
    assert_eq!(s.tokens().len(), 2);
}

#[test]
fn rediscover_at_a_new_server_registers_there() {
    // auth/authorization-server-migration (SEP-2352): the resource moved to another server.
    const AS2: &str = "http://localhost:5000";
    let mut s = standard(config(dcr()), None);
    s.drive();
    s.redirect_back("");
    s.routes[0].2 = json!({"resource": MCP, "authorization_servers": [AS2]});
    let asm2 = with(
        asm_doc(),
        json!({
            "issuer": AS2,
            "authorization_endpoint": format!("{AS2}/authorize"),
            "token_endpoint": format!("{AS2}/token"),
            "registration_endpoint": format!("{AS2}/register"),
        }),
    );
    s.routes.push((
        format!("{AS2}/.well-known/oauth-authorization-server"),
        200,
        asm2,
    ));
    s.routes.push((
        format!("{AS2}/register"),
        201,
        json!({"client_id": "client-2"}),
    ));
    s.routes.push((format!("{AS2}/token"), 200, token_doc()));
    s.flow
        .rediscover(s.now, None, Secrets::new("w".repeat(43), "s9"))
        .unwrap();
    s.drive();
    assert!(
        s.urls().contains(&format!("{AS2}/register")),
        "{:?}",
        s.urls()
    );
    let second = s.authorize_urls()[1].clone();
    assert!(second.as_str().starts_with(AS2), "{second}");
    assert_eq!(param(&second, "client_id").as_deref(), Some("client-2"));
    s.redirect_back("");
    assert_eq!(
        s.last(AuthPurpose::Token).url.as_str(),
        format!("{AS2}/token")
    );
    assert!(!body_str(s.last(AuthPurpose::Token)).contains("dyn-client"));
}

#[test]
fn rediscover_needs_a_finished_flow() {
    let mut s = standard(config(dcr()), None);
    assert_eq!(
        s.flow
            .rediscover(s.now, None, Secrets::new("w".repeat(43), "s9")),
        Err(AuthUsageError::WrongState)
    );
}
