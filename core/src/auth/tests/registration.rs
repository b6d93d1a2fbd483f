use serde_json::{Value, json};

use super::*;

const ENC_REDIRECT: &str = "http%3A%2F%2F127.0.0.1%3A7777%2Fcallback";
const ENC_MCP: &str = "http%3A%2F%2Flocalhost%3A3000%2Fmcp";

fn code_body(tail: &str) -> String {
    format!(
        "grant_type=authorization_code&code=test-auth-code&redirect_uri={ENC_REDIRECT}&code_verifier={VERIFIER}&resource={ENC_MCP}{tail}"
    )
}

fn basic(id: &str, secret: &str) -> String {
    use base64::Engine as _;
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{id}:{secret}"))
    )
}

#[test]
fn pre_registered_with_basic() {
    // auth/pre-registration: no registration endpoint; context credentials, basic auth.
    let c = config(ClientRegistration::pre_registered(
        ClientCredentials::with_secret("pre-id", "pre-secret"),
    ));
    let mut s = standard(c, None);
    s.routes[1].2 = with(
        asm_doc(),
        json!({"registration_endpoint": null, "token_endpoint_auth_methods_supported": ["client_secret_basic"]}),
    );
    s.drive();
    assert!(!s.log.iter().any(|r| r.purpose == AuthPurpose::Registration));
    assert_eq!(
        param(&s.authorize_urls()[0], "client_id").as_deref(),
        Some("pre-id")
    );
    s.redirect_back("");
    let t = s.last(AuthPurpose::Token);
    assert_eq!(t.method, crate::http::Method::Post);
    assert_eq!(
        t.headers.get("authorization"),
        Some(basic("pre-id", "pre-secret").as_str())
    );
    assert_eq!(
        t.headers.get("content-type"),
        Some("application/x-www-form-urlencoded")
    );
    assert_eq!(body_str(t), code_body(""));
    assert_eq!(s.tokens().len(), 1);
}

#[test]
fn metadata_document_when_supported() {
    // auth/basic-cimd: the URL is the client_id; no registration.
    let cimd = Url::parse("https://conformance-test.local/client-metadata.json").unwrap();
    let c = config(
        ClientRegistration::metadata_document(cimd.clone()).with_dynamic(ClientMetadata::new("x")),
    );
    let mut s = standard(c, None);
    s.routes[1].2 = with(
        asm_doc(),
        json!({"client_id_metadata_document_supported": true}),
    );
    s.drive();
    assert!(!s.log.iter().any(|r| r.purpose == AuthPurpose::Registration));
    assert_eq!(
        param(&s.authorize_urls()[0], "client_id").as_deref(),
        Some(cimd.as_str())
    );
    s.redirect_back("");
    let enc: String = url::form_urlencoded::byte_serialize(cimd.as_str().as_bytes()).collect();
    assert_eq!(
        body_str(s.last(AuthPurpose::Token)),
        code_body(&format!("&client_id={enc}"))
    );
}

#[test]
fn metadata_document_unsupported_falls_back_to_dcr() {
    let cimd = Url::parse("https://conformance-test.local/client-metadata.json").unwrap();
    let c =
        config(ClientRegistration::metadata_document(cimd).with_dynamic(ClientMetadata::new("x")));
    let mut s = standard(c, None);
    s.drive();
    assert_eq!(
        s.last(AuthPurpose::Registration).url.as_str(),
        "http://localhost:4000/register"
    );
    assert_eq!(
        param(&s.authorize_urls()[0], "client_id").as_deref(),
        Some("dyn-client")
    );
}

#[test]
fn dynamic_registration_request_and_event() {
    // auth/metadata-default and friends register dynamically.
    let mut s = standard(config(dcr()), None);
    s.drive();
    let r = s.last(AuthPurpose::Registration);
    assert_eq!(r.headers.get("content-type"), Some("application/json"));
    let body: Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(
        body,
        json!({
            "client_name": "test-client",
            "redirect_uris": [REDIRECT],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
            "application_type": "native",
        })
    );
    assert!(
        s.events.iter().any(
            |e| matches!(e, AuthEvent::Registered(c) if c.credentials.client_id == "dyn-client")
        )
    );
    assert_eq!(s.flow.client().unwrap().client_id, "dyn-client");
}

#[test]
fn application_type_follows_the_redirect_uri_unless_set() {
    use crate::auth::ApplicationType::{self, Native, Web};
    for (uri, expected) in [
        ("http://127.0.0.1:33418/callback", Native),
        ("http://localhost/cb", Native),
        ("http://LOCALHOST:8080/cb", Native),
        ("http://[::1]:9/cb", Native),
        ("http://127.5.6.7/cb", Native),
        ("com.example.app:/oauth2redirect", Native),
        ("not a uri", Native),
        ("https://app.example.com/callback", Web),
        ("http://192.168.1.2/cb", Web),
    ] {
        assert_eq!(ApplicationType::for_redirect_uri(uri), expected, "{uri}");
    }
    let body = |metadata: &ClientMetadata, uri: &str| -> Value {
        let bytes = crate::auth::client::registration_body(
            metadata,
            uri,
            &["authorization_code"],
            crate::auth::client::TokenEndpointAuthMethod::None,
            None,
        );
        serde_json::from_slice(&bytes).unwrap()
    };
    let mut metadata = ClientMetadata::new("c");
    assert_eq!(
        body(&metadata, "https://app.example.com/cb")["application_type"],
        "web"
    );
    metadata.application_type = Some(Native);
    assert_eq!(
        body(&metadata, "https://app.example.com/cb")["application_type"],
        "native"
    );
    metadata.application_type = Some(Web);
    assert_eq!(
        body(&metadata, "http://127.0.0.1/cb")["application_type"],
        "web"
    );
}

#[test]
fn no_way_to_get_a_client_id() {
    let mut s = standard(config(ClientRegistration::default()), None);
    s.drive();
    assert_eq!(s.failure(), Some(&AuthError::NoClientId));
    // Dynamic metadata but no registration endpoint.
    let mut s = standard(config(dcr()), None);
    s.routes[1].2 = with(asm_doc(), json!({"registration_endpoint": null}));
    s.drive();
    assert_eq!(s.failure(), Some(&AuthError::NoClientId));
}

#[test]
fn registration_refused() {
    let mut s = standard(config(dcr()), None);
    s.routes[2] = (
        format!("{AS}/register"),
        400,
        json!({"error": "invalid_redirect_uri", "error_description": "nope"}),
    );
    s.drive();
    assert_eq!(
        s.failure(),
        Some(&AuthError::EndpointError {
            purpose: AuthPurpose::Registration,
            error: "invalid_redirect_uri".into(),
            description: Some("nope".into())
        })
    );
}

fn auth_method_script(method: &str, registered: Value) -> Script {
    let mut s = standard(config(dcr()), None);
    s.routes[1].2 = with(
        asm_doc(),
        json!({"token_endpoint_auth_methods_supported": [method]}),
    );
    s.routes[2].2 = registered;
    s.drive();
    let reg: Value = serde_json::from_slice(&s.last(AuthPurpose::Registration).body).unwrap();
    assert_eq!(reg["token_endpoint_auth_method"], method);
    s.redirect_back("");
    assert_eq!(s.tokens().len(), 1, "{:?}", s.failure());
    s
}

#[test]
fn token_endpoint_auth_basic() {
    // auth/token-endpoint-auth-basic
    let s = auth_method_script(
        "client_secret_basic",
        json!({"client_id": "cid", "client_secret": "csecret"}),
    );
    let t = s.last(AuthPurpose::Token);
    assert_eq!(
        t.headers.get("authorization"),
        Some(basic("cid", "csecret").as_str())
    );
    assert_eq!(body_str(t), code_body(""));
}

#[test]
fn token_endpoint_auth_post() {
    // auth/token-endpoint-auth-post
    let s = auth_method_script(
        "client_secret_post",
        json!({"client_id": "cid", "client_secret": "csecret", "token_endpoint_auth_method": "client_secret_post"}),
    );
    let t = s.last(AuthPurpose::Token);
    assert_eq!(t.headers.get("authorization"), None);
    assert_eq!(
        body_str(t),
        code_body("&client_id=cid&client_secret=csecret")
    );
}

#[test]
fn token_endpoint_auth_none() {
    // auth/token-endpoint-auth-none (the registration still hands out a secret it won't need).
    let s = auth_method_script(
        "none",
        json!({"client_id": "cid", "client_secret": "unused"}),
    );
    let t = s.last(AuthPurpose::Token);
    assert_eq!(t.headers.get("authorization"), None);
    assert_eq!(body_str(t), code_body("&client_id=cid"));
}

#[test]
fn offline_access_when_advertised() {
    // auth/offline-access-scope: AS lists offline_access; PRM does not.
    let mut s = standard(config(dcr()), None);
    s.routes[0].2 = with(prm_doc(), json!({"scopes_supported": ["mcp:basic"]}));
    s.routes[1].2 = with(
        asm_doc(),
        json!({"scopes_supported": ["mcp:basic", "offline_access"]}),
    );
    s.drive();
    let reg: Value = serde_json::from_slice(&s.last(AuthPurpose::Registration).body).unwrap();
    assert_eq!(
        reg["grant_types"],
        json!(["authorization_code", "refresh_token"])
    );
    assert_eq!(reg["scope"], "mcp:basic offline_access");
    assert_eq!(
        param(&s.authorize_urls()[0], "scope").as_deref(),
        Some("mcp:basic offline_access")
    );
}

#[test]
fn offline_access_not_advertised() {
    // auth/offline-access-not-supported
    let mut s = standard(config(dcr()), None);
    s.routes[0].2 = with(
        prm_doc(),
        json!({"scopes_supported": ["mcp:basic", "mcp:read"]}),
    );
    s.routes[1].2 = with(
        asm_doc(),
        json!({"scopes_supported": ["mcp:basic", "mcp:read"], "grant_types_supported": ["authorization_code"]}),
    );
    s.drive();
    let reg: Value = serde_json::from_slice(&s.last(AuthPurpose::Registration).body).unwrap();
    assert_eq!(reg["grant_types"], json!(["authorization_code"]));
    assert_eq!(
        param(&s.authorize_urls()[0], "scope").as_deref(),
        Some("mcp:basic mcp:read")
    );
}
