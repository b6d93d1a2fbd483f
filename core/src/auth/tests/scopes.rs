use serde_json::json;

use super::*;

#[test]
fn authorization_url_parameters() {
    // auth/metadata-default: PKCE S256, state, resource on the authorization request.
    let mut s = standard(config(dcr()), None);
    s.drive();
    let u = &s.authorize_urls()[0];
    assert!(u.as_str().starts_with("http://localhost:4000/authorize?"));
    assert_eq!(param(u, "response_type").as_deref(), Some("code"));
    assert_eq!(param(u, "client_id").as_deref(), Some("dyn-client"));
    assert_eq!(param(u, "redirect_uri").as_deref(), Some(REDIRECT));
    assert_eq!(param(u, "code_challenge").as_deref(), Some(CHALLENGE));
    assert_eq!(param(u, "code_challenge_method").as_deref(), Some("S256"));
    assert_eq!(param(u, "state").as_deref(), Some(STATE));
    assert_eq!(param(u, "resource").as_deref(), Some(MCP));
    // auth/scope-omitted-when-undefined
    assert_eq!(param(u, "scope"), None);
    assert!(!u.as_str().contains(VERIFIER));
}

#[test]
fn scope_from_www_authenticate() {
    // auth/scope-from-www-authenticate: the challenge's scope beats scopes_supported.
    let ch = challenge(
        r#"Bearer resource_metadata="http://localhost:3000/.well-known/oauth-protected-resource/mcp", scope="mcp:basic""#,
    );
    let mut s = standard(config(dcr()), Some(&ch));
    s.routes[0].2 = with(
        prm_doc(),
        json!({"scopes_supported": ["mcp:basic", "mcp:admin"]}),
    );
    s.drive();
    assert_eq!(
        param(&s.authorize_urls()[0], "scope").as_deref(),
        Some("mcp:basic")
    );
}

#[test]
fn scope_from_scopes_supported() {
    // auth/scope-from-scopes-supported
    let mut s = standard(config(dcr()), None);
    s.routes[0].2 = with(
        prm_doc(),
        json!({"scopes_supported": ["mcp:basic", "mcp:read", "mcp:write"]}),
    );
    s.drive();
    assert_eq!(
        param(&s.authorize_urls()[0], "scope").as_deref(),
        Some("mcp:basic mcp:read mcp:write")
    );
}

#[test]
fn host_override_wins() {
    let mut c = config(dcr());
    c.scopes = Some(vec!["only".into()]);
    let ch = challenge(r#"Bearer scope="mcp:basic""#);
    let mut s = standard(c, Some(&ch));
    s.drive();
    assert_eq!(
        param(&s.authorize_urls()[0], "scope").as_deref(),
        Some("only")
    );
}

fn done_with_scope(scope: &str) -> Script {
    let ch = challenge(&format!(r#"Bearer scope="{scope}""#));
    let mut s = standard(config(dcr()), Some(&ch));
    s.drive();
    s.redirect_back("");
    assert!(s.flow.is_done());
    s
}

#[test]
fn step_up_on_insufficient_scope() {
    // auth/scope-step-up: re-authorize with the union, with fresh secrets.
    let mut s = done_with_scope("mcp:basic");
    let forbidden = challenge(r#"Bearer error="insufficient_scope", scope="mcp:write""#);
    let fresh = Secrets::new("x".repeat(43), "state-2");
    assert_eq!(
        s.flow.handle_forbidden(s.now, forbidden.bearer(), fresh),
        Ok(true)
    );
    s.drive();
    let u = s.authorize_urls().last().unwrap().clone();
    assert_eq!(param(&u, "scope").as_deref(), Some("mcp:basic mcp:write"));
    assert_eq!(param(&u, "state").as_deref(), Some("state-2"));
    assert_ne!(param(&u, "code_challenge").as_deref(), Some(CHALLENGE));
    // The old state no longer works; the new one does.
    s.flow
        .handle_redirect(s.now, &format!("{REDIRECT}?code=c&state={STATE}"));
    s.drive();
    assert_eq!(s.failure(), Some(&AuthError::StateMismatch));
}

#[test]
fn step_up_completes() {
    let mut s = done_with_scope("a");
    let forbidden = challenge(r#"Bearer error="insufficient_scope", scope="b""#);
    s.flow
        .handle_forbidden(
            s.now,
            forbidden.bearer(),
            Secrets::new("y".repeat(43), "s2"),
        )
        .unwrap();
    s.drive();
    s.redirect_back("");
    assert_eq!(s.tokens().len(), 2);
    assert_eq!(s.flow.scopes(), ["a", "b"]);
    assert!(
        body_str(s.last(AuthPurpose::Token)).contains(&format!("code_verifier={}", "y".repeat(43)))
    );
}

#[test]
fn step_up_retry_limit() {
    // auth/scope-retry-limit: a hopeless 403 gets at most 3 authorizations.
    let mut s = done_with_scope("a");
    let forbidden = challenge(r#"Bearer error="insufficient_scope", scope="never""#);
    let mut started = 0;
    for i in 0..5 {
        match s.flow.handle_forbidden(
            s.now,
            forbidden.bearer(),
            Secrets::new("z".repeat(43), format!("s{i}")),
        ) {
            Ok(true) => {
                started += 1;
                s.drive();
                s.redirect_back("");
            }
            Ok(false) => break,
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!(started, 2);
    assert_eq!(s.authorize_urls().len(), 3);
    assert_eq!(s.flow.authorizations(), 3);
    s.drive();
    assert_eq!(s.failure(), Some(&AuthError::StepUpLimit { attempts: 3 }));
}

#[test]
fn other_403_is_not_a_step_up() {
    let mut s = done_with_scope("a");
    let forbidden = challenge(r#"Bearer error="invalid_token""#);
    assert_eq!(
        s.flow
            .handle_forbidden(s.now, forbidden.bearer(), Secrets::new(VERIFIER, "s")),
        Ok(false)
    );
    assert_eq!(
        s.flow
            .handle_forbidden(s.now, None, Secrets::new(VERIFIER, "s")),
        Ok(false)
    );
    assert!(s.flow.is_done());
    // Misuse: bad secrets.
    assert_eq!(
        s.flow
            .handle_forbidden(s.now, forbidden.bearer(), Secrets::new("short", "s")),
        Err(AuthUsageError::BadVerifier)
    );
}
