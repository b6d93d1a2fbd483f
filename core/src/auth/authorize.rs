//! The authorization request (OAuth 2.1 §4.1.1 with PKCE and RFC 8707 `resource`) and the
//! authorization response a redirect carries (§4.1.2, RFC 9207 `iss`).

use url::Url;

use super::error::AuthError;
use super::pkce::code_challenge_s256;

/// The parameters of one authorization request.
#[derive(Clone, Debug)]
pub struct AuthorizationRequest<'a> {
    /// `client_id`.
    pub client_id: &'a str,
    /// `redirect_uri`, exactly as registered.
    pub redirect_uri: &'a str,
    /// The PKCE verifier; only its S256 challenge goes into the URL.
    pub code_verifier: &'a str,
    /// `state`.
    pub state: &'a str,
    /// `scope`, omitted when `None`.
    pub scope: Option<&'a str>,
    /// `resource` (RFC 8707).
    pub resource: &'a str,
}

/// The URL to send the user to: `authorization_endpoint` with `response_type=code`,
/// `client_id`, `redirect_uri`, `code_challenge`, `code_challenge_method=S256`, `state`,
/// `scope` (when there is one) and `resource` appended to its query.
#[must_use]
pub fn authorization_url(authorization_endpoint: &Url, req: &AuthorizationRequest<'_>) -> Url {
    let mut url = authorization_endpoint.clone();
    url.set_fragment(None);
    {
        let mut q = url.query_pairs_mut();
        q.append_pair("response_type", "code")
            .append_pair("client_id", req.client_id)
            .append_pair("redirect_uri", req.redirect_uri)
            .append_pair("code_challenge", &code_challenge_s256(req.code_verifier))
            .append_pair("code_challenge_method", "S256")
            .append_pair("state", req.state);
        if let Some(scope) = req.scope {
            q.append_pair("scope", scope);
        }
        q.append_pair("resource", req.resource);
    }
    url
}

/// What the flow expects of a redirect.
#[derive(Clone, Debug)]
pub struct RedirectExpectations<'a> {
    /// The configured redirect URI; the redirect must be to it (same origin and path).
    pub redirect_uri: &'a Url,
    /// The `state` that was sent.
    pub state: &'a str,
    /// The authorization server's issuer.
    pub issuer: &'a str,
    /// Whether the server advertises `authorization_response_iss_parameter_supported`.
    pub iss_required: bool,
}

/// Reads the authorization code out of the redirect URL (the browser's final URL, or the
/// `Location` of the authorization endpoint's 302).
///
/// The checks, in order: the URL is the redirect URI; `state` matches
/// ([`AuthError::StateMismatch`] otherwise, also on error responses, so a forged error cannot
/// end a flow); `iss` equals the issuer (exactly, as strings) whenever present, and is present when the server
/// advertises it (RFC 9207, required by MCP 2026-07-28); then an `error` parameter becomes
/// [`AuthError::AuthorizationDenied`]; else `code` is returned.
pub fn parse_redirect(
    redirect: &str,
    expect: &RedirectExpectations<'_>,
) -> Result<String, AuthError> {
    let url = expect
        .redirect_uri
        .join(redirect.trim())
        .map_err(|e| AuthError::BadRedirect {
            reason: e.to_string(),
        })?;
    if url.origin() != expect.redirect_uri.origin() || url.path() != expect.redirect_uri.path() {
        return Err(AuthError::BadRedirect {
            reason: "not the configured redirect URI".into(),
        });
    }
    let (mut state, mut iss, mut error, mut description, mut code) = (None, None, None, None, None);
    for (k, v) in url.query_pairs() {
        let slot = match &*k {
            "state" => &mut state,
            "iss" => &mut iss,
            "error" => &mut error,
            "error_description" => &mut description,
            "code" => &mut code,
            _ => continue,
        };
        // A repeated parameter is ambiguous (RFC 6749 §3.1): refuse it.
        if slot.replace(v.into_owned()).is_some() {
            return Err(AuthError::BadRedirect {
                reason: format!("repeated parameter {k}"),
            });
        }
    }
    if state.as_deref() != Some(expect.state) {
        return Err(AuthError::StateMismatch);
    }
    match &iss {
        // RFC 9207 §2.4: simple string comparison, no normalization of either side.
        Some(i) if i != expect.issuer => {
            return Err(AuthError::IssuerParameterMismatch {
                expected: expect.issuer.to_owned(),
                found: iss,
            });
        }
        None if expect.iss_required => {
            return Err(AuthError::IssuerParameterMismatch {
                expected: expect.issuer.to_owned(),
                found: None,
            });
        }
        _ => {}
    }
    if let Some(error) = error {
        return Err(AuthError::AuthorizationDenied { error, description });
    }
    code.filter(|c| !c.is_empty())
        .ok_or_else(|| AuthError::BadRedirect {
            reason: "no code".into(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";

    #[test]
    fn url_has_every_parameter() {
        let ep = Url::parse("https://as.example.com/authorize?tenant=t1").unwrap();
        let url = authorization_url(
            &ep,
            &AuthorizationRequest {
                client_id: "cid",
                redirect_uri: "http://127.0.0.1:7777/callback",
                code_verifier: VERIFIER,
                state: "st",
                scope: Some("a b"),
                resource: "https://mcp.example.com/mcp",
            },
        );
        let pairs: Vec<(String, String)> = url.query_pairs().into_owned().collect();
        let want = [
            ("tenant", "t1"),
            ("response_type", "code"),
            ("client_id", "cid"),
            ("redirect_uri", "http://127.0.0.1:7777/callback"),
            (
                "code_challenge",
                "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
            ),
            ("code_challenge_method", "S256"),
            ("state", "st"),
            ("scope", "a b"),
            ("resource", "https://mcp.example.com/mcp"),
        ];
        assert_eq!(pairs, want.map(|(k, v)| (k.to_owned(), v.to_owned())));
        assert!(!url.as_str().contains(VERIFIER));
    }

    fn expect<'a>(redirect: &'a Url, iss_required: bool) -> RedirectExpectations<'a> {
        RedirectExpectations {
            redirect_uri: redirect,
            state: "st",
            issuer: "https://as.example.com",
            iss_required,
        }
    }

    #[test]
    fn redirect_checks() {
        let r = Url::parse("http://127.0.0.1:7777/callback").unwrap();
        let ok = "http://127.0.0.1:7777/callback?code=c1&state=st";
        assert_eq!(parse_redirect(ok, &expect(&r, false)), Ok("c1".into()));
        assert_eq!(
            parse_redirect(
                "http://127.0.0.1:7777/callback?code=c1&state=other",
                &expect(&r, false)
            ),
            Err(AuthError::StateMismatch)
        );
        assert_eq!(
            parse_redirect("http://127.0.0.1:7777/callback?code=c1", &expect(&r, false)),
            Err(AuthError::StateMismatch)
        );
        // An error with a wrong state is a state mismatch, not a denial.
        assert_eq!(
            parse_redirect(
                "http://127.0.0.1:7777/callback?error=access_denied&state=x",
                &expect(&r, false)
            ),
            Err(AuthError::StateMismatch)
        );
        assert_eq!(
            parse_redirect(
                "http://127.0.0.1:7777/callback?error=access_denied&error_description=no&state=st",
                &expect(&r, false)
            ),
            Err(AuthError::AuthorizationDenied {
                error: "access_denied".into(),
                description: Some("no".into())
            })
        );
        assert!(matches!(
            parse_redirect(
                "http://evil.example.com/callback?code=c&state=st",
                &expect(&r, false)
            ),
            Err(AuthError::BadRedirect { .. })
        ));
        assert!(matches!(
            parse_redirect(
                "http://127.0.0.1:7777/callback?code=a&code=b&state=st",
                &expect(&r, false)
            ),
            Err(AuthError::BadRedirect { .. })
        ));
        assert!(matches!(
            parse_redirect(
                "http://127.0.0.1:7777/callback?state=st",
                &expect(&r, false)
            ),
            Err(AuthError::BadRedirect { .. })
        ));
    }

    #[test]
    fn iss_rules() {
        let r = Url::parse("http://127.0.0.1:7777/callback").unwrap();
        let good =
            "http://127.0.0.1:7777/callback?code=c&state=st&iss=https%3A%2F%2Fas.example.com";
        let wrong =
            "http://127.0.0.1:7777/callback?code=c&state=st&iss=https%3A%2F%2Fevil.example.com";
        let missing = "http://127.0.0.1:7777/callback?code=c&state=st";
        // auth/iss-supported
        assert_eq!(parse_redirect(good, &expect(&r, true)), Ok("c".into()));
        // auth/iss-supported-missing
        assert!(matches!(
            parse_redirect(missing, &expect(&r, true)),
            Err(AuthError::IssuerParameterMismatch { found: None, .. })
        ));
        // auth/iss-wrong-issuer
        assert!(matches!(
            parse_redirect(wrong, &expect(&r, true)),
            Err(AuthError::IssuerParameterMismatch { .. })
        ));
        // auth/iss-unexpected: compared even when not advertised.
        assert!(matches!(
            parse_redirect(wrong, &expect(&r, false)),
            Err(AuthError::IssuerParameterMismatch { .. })
        ));
        // auth/iss-not-advertised
        assert_eq!(parse_redirect(missing, &expect(&r, false)), Ok("c".into()));
        // auth/iss-normalized: simple string comparison, no URL normalization (RFC 9207 §2.4).
        for variant in [
            "https%3A%2F%2Fas.example.com%2F",
            "https%3A%2F%2FAS.example.com",
            "HTTPS%3A%2F%2Fas.example.com",
            "https%3A%2F%2Fas.example.com%3A443",
        ] {
            let redirect = format!("http://127.0.0.1:7777/callback?code=c&state=st&iss={variant}");
            assert!(
                matches!(
                    parse_redirect(&redirect, &expect(&r, true)),
                    Err(AuthError::IssuerParameterMismatch { .. })
                ),
                "{variant}"
            );
        }
    }

    proptest::proptest! {
        #[test]
        fn redirect_parsing_never_panics(s in "[ -~]{0,80}") {
            let r = Url::parse("http://127.0.0.1:7777/callback").unwrap();
            let _ = parse_redirect(&s, &expect(&r, true));
            let _ = parse_redirect(&format!("http://127.0.0.1:7777/callback?{s}"), &expect(&r, false));
        }
    }
}
