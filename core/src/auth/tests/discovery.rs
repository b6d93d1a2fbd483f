use serde_json::json;

use super::*;

#[test]
fn prm_from_challenge_comes_first() {
    // auth/metadata-default: resource_metadata in WWW-Authenticate.
    let ch = challenge(r#"Bearer resource_metadata="http://localhost:3000/custom/prm""#);
    let mut s = standard(config(dcr()), Some(&ch)).route(
        "http://localhost:3000/custom/prm",
        200,
        prm_doc(),
    );
    s.drive();
    assert_eq!(
        s.urls()[..2],
        [
            "http://localhost:3000/custom/prm".to_owned(),
            ASM_URL.to_owned()
        ]
    );
    assert_eq!(s.authorize_urls().len(), 1);
}

#[test]
fn prm_path_based_before_root() {
    // Path-based PRM present: the root one is never fetched.
    let mut s = standard(config(dcr()), None).route(
        PRM_ROOT,
        200,
        json!({"resource": "http://localhost:3000", "authorization_servers": ["http://evil:1"]}),
    );
    s.drive();
    assert_eq!(s.urls()[0], PRM_PATH);
    assert!(!s.urls().contains(&PRM_ROOT.to_owned()));
    // Path-based 404: the root one is used, and its `resource` (a bare origin) is sent verbatim.
    let mut s = Script::new(config(dcr()), None)
        .route(
            PRM_ROOT,
            200,
            json!({"resource": "http://localhost:3000", "authorization_servers": [AS]}),
        )
        .route(ASM_URL, 200, asm_doc())
        .route(&format!("{AS}/register"), 201, json!({"client_id": "c"}));
    s.drive();
    assert_eq!(
        s.urls()[..3],
        [PRM_PATH.to_owned(), PRM_ROOT.to_owned(), ASM_URL.to_owned()]
    );
    assert_eq!(
        param(&s.authorize_urls()[0], "resource").as_deref(),
        Some("http://localhost:3000")
    );
    assert_eq!(s.flow.resource(), "http://localhost:3000");
}

fn as_with_issuer(issuer: &str) -> serde_json::Value {
    with(
        asm_doc(),
        json!({"issuer": issuer, "authorization_endpoint": format!("{issuer}/authorize"), "token_endpoint": format!("{issuer}/token"), "registration_endpoint": format!("{issuer}/register")}),
    )
}

fn tenant_script(served_at: &str, issuer: &str) -> Script {
    Script::new(config(dcr()), None)
        .route(
            PRM_PATH,
            200,
            json!({"resource": MCP, "authorization_servers": [issuer]}),
        )
        .route(served_at, 200, as_with_issuer(issuer))
        .route(
            &format!("{issuer}/register"),
            201,
            json!({"client_id": "c"}),
        )
}

#[test]
fn as_metadata_openid_at_root() {
    // auth/metadata-var1: only openid-configuration, issuer without a path.
    let mut s = tenant_script("http://localhost:4000/.well-known/openid-configuration", AS);
    s.drive();
    assert_eq!(
        s.urls()[1..3],
        [
            ASM_URL.to_owned(),
            "http://localhost:4000/.well-known/openid-configuration".to_owned()
        ]
    );
    assert_eq!(s.authorize_urls().len(), 1, "{:?}", s.failure());
}

#[test]
fn as_metadata_path_insertion() {
    // auth/metadata-var2: oauth-authorization-server with the tenant path inserted.
    let issuer = "http://localhost:4000/tenant1";
    let mut s = tenant_script(
        "http://localhost:4000/.well-known/oauth-authorization-server/tenant1",
        issuer,
    );
    s.drive();
    assert_eq!(
        s.urls()[1],
        "http://localhost:4000/.well-known/oauth-authorization-server/tenant1"
    );
    assert_eq!(
        s.authorize_urls()[0].as_str().split('?').next(),
        Some("http://localhost:4000/tenant1/authorize")
    );
    // openid-configuration with the path inserted, after the oauth one 404s.
    let mut s = tenant_script(
        "http://localhost:4000/.well-known/openid-configuration/tenant1",
        issuer,
    );
    s.drive();
    assert_eq!(
        s.urls()[1..3],
        [
            "http://localhost:4000/.well-known/oauth-authorization-server/tenant1".to_owned(),
            "http://localhost:4000/.well-known/openid-configuration/tenant1".to_owned(),
        ]
    );
    assert_eq!(s.authorize_urls().len(), 1);
}

#[test]
fn as_metadata_path_appended() {
    // auth/metadata-var3: openid-configuration appended to the issuer path, tried last.
    let issuer = "http://localhost:4000/tenant1";
    let mut s = tenant_script(
        "http://localhost:4000/tenant1/.well-known/openid-configuration",
        issuer,
    );
    s.drive();
    assert_eq!(
        s.urls()[1..4],
        [
            "http://localhost:4000/.well-known/oauth-authorization-server/tenant1".to_owned(),
            "http://localhost:4000/.well-known/openid-configuration/tenant1".to_owned(),
            "http://localhost:4000/tenant1/.well-known/openid-configuration".to_owned(),
        ]
    );
    assert_eq!(s.authorize_urls().len(), 1);
}

#[test]
fn as_metadata_exhausted() {
    let mut s = Script::new(config(dcr()), None).route(PRM_PATH, 200, prm_doc());
    s.drive();
    assert!(matches!(
        s.failure(),
        Some(AuthError::DiscoveryFailed { .. })
    ));
    assert!(s.authorize_urls().is_empty());
}

#[test]
fn legacy_metadata_at_server_origin() {
    // auth/2025-03-26-oauth-metadata-backcompat: no PRM; AS metadata at the MCP origin.
    let origin = "http://localhost:3000";
    let mut c = config(dcr());
    c.protocol_version = Some("2025-03-26".into());
    let mut s = Script::new(c, None)
        .route(
            "http://localhost:3000/.well-known/oauth-authorization-server",
            200,
            as_with_issuer(origin),
        )
        .route(
            &format!("{origin}/register"),
            201,
            json!({"client_id": "c"}),
        )
        .route(&format!("{origin}/token"), 200, token_doc());
    s.drive();
    assert_eq!(
        s.urls()[..3],
        [
            PRM_PATH.to_owned(),
            PRM_ROOT.to_owned(),
            "http://localhost:3000/.well-known/oauth-authorization-server".to_owned(),
        ]
    );
    assert_eq!(
        s.log[0].headers.get("mcp-protocol-version"),
        Some("2025-03-26")
    );
    let auth = &s.authorize_urls()[0];
    assert!(
        auth.as_str()
            .starts_with("http://localhost:3000/authorize?")
    );
    assert_eq!(param(auth, "resource").as_deref(), Some(MCP));
    s.redirect_back("");
    assert_eq!(s.tokens().len(), 1);
}

#[test]
fn legacy_default_endpoints() {
    // auth/2025-03-26-oauth-endpoint-fallback: no metadata at all → /authorize, /token, /register.
    let mut s = Script::new(config(dcr()), None)
        .route(
            "http://localhost:3000/register",
            201,
            json!({"client_id": "c"}),
        )
        .route("http://localhost:3000/token", 200, token_doc());
    s.drive();
    assert_eq!(s.urls()[3], "http://localhost:3000/register");
    assert!(
        s.authorize_urls()[0]
            .as_str()
            .starts_with("http://localhost:3000/authorize?")
    );
    s.redirect_back("");
    assert_eq!(
        s.last(AuthPurpose::Token).url.as_str(),
        "http://localhost:3000/token"
    );
    assert_eq!(s.tokens().len(), 1);
}

#[test]
fn resource_mismatch_is_refused() {
    // auth/resource-mismatch: no authorization request may follow.
    let mut s = standard(config(dcr()), None).route(
        PRM_PATH,
        200,
        json!({"resource": "https://evil.example.com/mcp", "authorization_servers": [AS]}),
    );
    s.routes.swap(0, 4); // the evil PRM wins over the standard one
    s.drive();
    assert!(
        matches!(s.failure(), Some(AuthError::ResourceMismatch { found, .. }) if found == "https://evil.example.com/mcp")
    );
    assert_eq!(s.log.len(), 1);
    assert!(s.authorize_urls().is_empty());
    assert!(s.flow.is_failed());
}

#[test]
fn issuer_mismatch_is_refused() {
    let mut s = Script::new(config(dcr()), None)
        .route(PRM_PATH, 200, prm_doc())
        .route(
            ASM_URL,
            200,
            with(asm_doc(), json!({"issuer": "http://localhost:4001"})),
        );
    s.drive();
    assert!(matches!(
        s.failure(),
        Some(AuthError::IssuerMismatch { .. })
    ));
}

#[test]
fn pkce_absent_or_plain_is_refused() {
    // auth/pkce-no-support
    for methods in [serde_json::Value::Null, json!(["plain"])] {
        let mut s = Script::new(config(dcr()), None)
            .route(PRM_PATH, 200, prm_doc())
            .route(
                ASM_URL,
                200,
                with(
                    asm_doc(),
                    json!({"code_challenge_methods_supported": methods}),
                ),
            );
        s.drive();
        assert_eq!(s.failure(), Some(&AuthError::PkceUnsupported));
        assert!(s.authorize_urls().is_empty());
        assert_eq!(s.log.len(), 2, "no registration either");
    }
}

#[test]
fn insecure_authorization_server_is_refused() {
    let mut s = Script::new(config(dcr()), None).route(
        PRM_PATH,
        200,
        json!({"resource": MCP, "authorization_servers": ["http://as.example.com"]}),
    );
    s.drive();
    assert!(matches!(
        s.failure(),
        Some(AuthError::InsecureEndpoint { .. })
    ));
    assert_eq!(s.log.len(), 1);
}

#[test]
fn malformed_prm_and_empty_servers() {
    let mut s = Script::new(config(dcr()), None).route(
        PRM_PATH,
        200,
        json!({"authorization_servers": [AS]}),
    );
    s.drive();
    assert!(matches!(
        s.failure(),
        Some(AuthError::InvalidDocument {
            what: AuthPurpose::ResourceMetadata,
            ..
        })
    ));
    let mut s = Script::new(config(dcr()), None).route(
        PRM_PATH,
        200,
        json!({"resource": MCP, "authorization_servers": []}),
    );
    s.drive();
    assert!(matches!(
        s.failure(),
        Some(AuthError::InvalidDocument { .. })
    ));
}
