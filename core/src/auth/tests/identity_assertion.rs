//! [`Grant::IdentityAssertion`] (SEP-990, enterprise-managed authorization): the token exchange
//! at the identity provider, then the JWT bearer grant at the authorization server
//! (conformance `auth/cross-app-access-complete-flow`).

use super::*;

const IDP_TOKEN: &str = "http://localhost:5000/token";
const ID_JAG: &str = "eyJ.ID-JAG.sig";

fn form(r: &AuthHttpRequest) -> Vec<(String, String)> {
    url::form_urlencoded::parse(&r.body)
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

fn field(r: &AuthHttpRequest, name: &str) -> Option<String> {
    form(r).into_iter().find(|(k, _)| k == name).map(|(_, v)| v)
}

fn idp(client: ClientCredentials) -> IdentityAssertion {
    IdentityAssertion::new(Url::parse(IDP_TOKEN).unwrap(), "ID-TOKEN-SECRET", client)
}

fn identity_config(idp: Option<IdentityAssertion>) -> AuthConfig {
    let mut c = config(ClientRegistration::pre_registered(
        ClientCredentials::with_secret("xaa-client", "xaa-secret"),
    ));
    c.grant = Grant::IdentityAssertion;
    c.identity_assertion = idp;
    c
}

/// The metadata of an authorization server that only takes JWT bearer grants with
/// `client_secret_basic`, plus an identity provider that issues `answer`.
fn script(idp_client: ClientCredentials, status: u16, answer: Value) -> Script {
    let mut s =
        standard(identity_config(Some(idp(idp_client))), None).route(IDP_TOKEN, status, answer);
    s.routes[1].2 = with(
        asm_doc(),
        json!({
            "grant_types_supported": ["urn:ietf:params:oauth:grant-type:jwt-bearer"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic"],
            "code_challenge_methods_supported": null,
        }),
    );
    s
}

fn id_jag() -> Value {
    json!({
        "access_token": ID_JAG,
        "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag",
        "token_type": "N_A",
    })
}

#[test]
fn exchange_then_jwt_bearer() {
    let mut s = script(ClientCredentials::public("idp-client"), 200, id_jag());
    s.drive();
    assert!(s.authorize_urls().is_empty(), "no browser step");
    assert_eq!(s.failure(), None);
    assert_eq!(
        s.urls(),
        [PRM_PATH, ASM_URL, IDP_TOKEN, &format!("{AS}/token")]
    );

    let x = s.last(AuthPurpose::TokenExchange);
    assert_eq!(
        field(x, "grant_type").as_deref(),
        Some("urn:ietf:params:oauth:grant-type:token-exchange")
    );
    assert_eq!(
        field(x, "requested_token_type").as_deref(),
        Some("urn:ietf:params:oauth:token-type:id-jag")
    );
    assert_eq!(field(x, "audience").as_deref(), Some(AS), "the AS's issuer");
    assert_eq!(field(x, "resource").as_deref(), Some(MCP));
    assert_eq!(
        field(x, "subject_token").as_deref(),
        Some("ID-TOKEN-SECRET")
    );
    assert_eq!(
        field(x, "subject_token_type").as_deref(),
        Some("urn:ietf:params:oauth:token-type:id_token")
    );
    assert_eq!(field(x, "client_id").as_deref(), Some("idp-client"));
    assert_eq!(x.headers.get("authorization"), None);

    let b = s.last(AuthPurpose::JwtBearer);
    assert_eq!(
        field(b, "grant_type").as_deref(),
        Some("urn:ietf:params:oauth:grant-type:jwt-bearer")
    );
    assert_eq!(field(b, "assertion").as_deref(), Some(ID_JAG));
    assert_eq!(field(b, "resource").as_deref(), Some(MCP));
    // The MCP client authenticates to its authorization server, not with the IdP's id.
    assert_eq!(
        b.headers.get("authorization"),
        Some("Basic eGFhLWNsaWVudDp4YWEtc2VjcmV0")
    );
    assert_eq!(field(b, "client_id"), None);

    assert_eq!(s.tokens().len(), 1);
    assert!(s.flow.is_done());
}

#[test]
fn a_confidential_idp_client_uses_basic_authentication() {
    let mut s = script(
        ClientCredentials::with_secret("idp-client", "idp-secret"),
        200,
        id_jag(),
    );
    s.drive();
    let x = s.last(AuthPurpose::TokenExchange);
    assert_eq!(
        x.headers.get("authorization"),
        Some("Basic aWRwLWNsaWVudDppZHAtc2VjcmV0")
    );
    assert_eq!(field(x, "client_secret"), None);
    assert_eq!(s.tokens().len(), 1);
}

#[test]
fn the_idp_refusing_ends_the_flow_before_the_authorization_server() {
    let mut s = script(
        ClientCredentials::public("idp-client"),
        400,
        json!({"error": "invalid_grant", "error_description": "Invalid ID token"}),
    );
    s.drive();
    assert_eq!(
        s.failure(),
        Some(&AuthError::EndpointError {
            purpose: AuthPurpose::TokenExchange,
            error: "invalid_grant".into(),
            description: Some("Invalid ID token".into()),
        })
    );
    assert!(s.log.iter().all(|r| r.purpose != AuthPurpose::JwtBearer));
    assert!(s.flow.is_failed());
}

#[test]
fn an_exchange_answer_that_is_not_an_id_jag_is_invalid() {
    for answer in [
        json!({"access_token": "x", "issued_token_type": "urn:ietf:params:oauth:token-type:access_token"}),
        json!({"access_token": ""}),
        json!({"issued_token_type": "urn:ietf:params:oauth:token-type:id-jag"}),
        json!([1, 2]),
    ] {
        let mut s = script(ClientCredentials::public("idp-client"), 200, answer.clone());
        s.drive();
        assert!(
            matches!(
                s.failure(),
                Some(AuthError::InvalidDocument {
                    what: AuthPurpose::TokenExchange,
                    ..
                })
            ),
            "{answer}: {:?}",
            s.failure()
        );
        assert!(s.log.iter().all(|r| r.purpose != AuthPurpose::JwtBearer));
    }
}

#[test]
fn the_authorization_server_refusing_the_grant_is_typed() {
    let mut s = script(ClientCredentials::public("idp-client"), 200, id_jag());
    s.routes[3] = (
        format!("{AS}/token"),
        400,
        json!({"error": "invalid_grant", "error_description": "ID-JAG resource does not match"}),
    );
    s.drive();
    assert!(matches!(
        s.failure(),
        Some(AuthError::EndpointError {
            purpose: AuthPurpose::JwtBearer,
            ..
        })
    ));
}

#[test]
fn construction_needs_an_idp_and_a_pre_registered_client() {
    let now = Instant::now();
    let new =
        |c: AuthConfig| AuthFlow::new(c, None, Secrets::new(VERIFIER, STATE), now).map(|_| ());
    assert_eq!(
        new(identity_config(None)),
        Err(AuthUsageError::IdentityAssertionIncomplete)
    );
    let mut c = identity_config(Some(idp(ClientCredentials::public("i"))));
    c.client = dcr();
    assert_eq!(new(c), Err(AuthUsageError::IdentityAssertionIncomplete));
    let insecure = IdentityAssertion::new(
        Url::parse("http://idp.example/token").unwrap(),
        "t",
        ClientCredentials::public("i"),
    );
    assert_eq!(
        new(identity_config(Some(insecure))),
        Err(AuthUsageError::IdentityAssertionIncomplete)
    );
    assert_eq!(
        new(identity_config(Some(idp(ClientCredentials::public("i"))))),
        Ok(())
    );
}

#[test]
fn the_id_token_and_the_grant_stay_out_of_debug_output() {
    let mut s = script(ClientCredentials::public("idp-client"), 200, id_jag());
    let config = format!(
        "{:?}",
        identity_config(Some(idp(ClientCredentials::public("i"))))
    );
    assert!(!config.contains("ID-TOKEN-SECRET"), "{config}");
    s.drive();
    let all = format!("{:?} {:?} {:?}", s.flow, s.log, s.events);
    assert!(!all.contains("ID-TOKEN-SECRET"), "{all}");
    assert!(!all.contains(ID_JAG), "{all}");
}
