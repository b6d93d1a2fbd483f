//! A finished flow saved and resumed in a "later process": the refresh request is the same
//! as the original flow's, and nothing but a refresh is possible.

use serde_json::json;

use super::*;

fn finished() -> Script {
    let mut s = standard(config(dcr()), None);
    s.drive();
    s.redirect_back("");
    s
}

#[test]
fn a_resumed_flow_refreshes_like_the_original() {
    let s = finished();
    let saved = s.flow.saved().expect("saved once tokens arrived");
    assert_eq!(saved.token_endpoint, format!("{AS}/token"));
    assert_eq!(saved.client_id, "dyn-client");
    assert_eq!(saved.resource, MCP);
    let tokens = s.tokens()[0].clone();
    let now = s.now;
    let mut resumed = AuthFlow::resume(config(dcr()), saved, tokens, now).unwrap();
    assert!(resumed.is_done() && resumed.is_resumed());
    resumed.refresh(now).unwrap();
    let r = resumed.poll_request().expect("a refresh request");
    assert_eq!(r.purpose, AuthPurpose::Refresh);
    assert_eq!(r.url.as_str(), "http://localhost:4000/token");
    assert_eq!(
        body_str(&r),
        "grant_type=refresh_token&refresh_token=RT-SECRET&resource=http%3A%2F%2Flocalhost%3A3000%2Fmcp&client_id=dyn-client"
    );
    let body =
        serde_json::to_vec(&json!({"access_token": "AT-2", "token_type": "Bearer"})).unwrap();
    resumed.handle_response(now, r.id, 200, &HeaderList::new(), &body);
    match resumed.poll_event() {
        Some(AuthEvent::Tokens(t)) => {
            assert_eq!(t.access_token.expose(), "AT-2");
            assert_eq!(
                t.refresh_token.as_ref().map(SecretString::expose),
                Some("RT-SECRET"),
                "the old refresh token stays"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_resumed_flow_cannot_authorize_and_refuses_a_cleartext_endpoint() {
    let s = finished();
    let saved = s.flow.saved().unwrap();
    let tokens = s.tokens()[0].clone();
    let mut resumed =
        AuthFlow::resume(config(dcr()), saved.clone(), tokens.clone(), s.now).unwrap();
    assert_eq!(
        resumed.reauthorize(s.now, Secrets::new(VERIFIER, "s2")),
        Err(AuthUsageError::WrongState)
    );
    let ch = challenge(r#"Bearer error="insufficient_scope", scope="more""#);
    assert_eq!(
        resumed.handle_forbidden(s.now, ch.bearer(), Secrets::new(VERIFIER, "s3")),
        Err(AuthUsageError::WrongState)
    );
    let mut bad = saved;
    bad.token_endpoint = "http://evil.example/token".into();
    assert_eq!(
        AuthFlow::resume(config(dcr()), bad, tokens, s.now).err(),
        Some(AuthUsageError::BadSavedAuthorization)
    );
}

#[test]
fn nothing_is_saved_before_tokens_and_debug_redacts() {
    let mut s = standard(config(dcr()), None);
    s.drive();
    assert!(s.flow.saved().is_none(), "no tokens yet");
    s.redirect_back("");
    let mut saved = s.flow.saved().unwrap();
    saved.client_secret = Some("CS-SECRET".into());
    assert!(!format!("{saved:?}").contains("CS-SECRET"));
}
