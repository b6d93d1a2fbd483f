//! Tokens: the token response (RFC 6749 §5.1), OAuth error responses (§5.2), and how a token is
//! used (RFC 6750 §2.1: an `Authorization: Bearer` header, never a URL).

use std::fmt;

use serde::Deserialize;

use super::secret::SecretString;
use crate::time::{Duration, Instant, saturating_add};

/// The longest `expires_in` honoured; longer lifetimes are cut to it so that no peer value can
/// push an expiry out of reach of a refresh.
pub const MAX_EXPIRES_IN: Duration = Duration::from_secs(366 * 24 * 3600);

/// The tokens of a successful grant. `Debug` redacts the access and refresh tokens; there is
/// no `Display`.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Tokens {
    /// The access token; send it with [`Tokens::authorization_header`].
    pub access_token: SecretString,
    /// When the access token expires (`now + expires_in`, clamped to [`MAX_EXPIRES_IN`]);
    /// `None` when the server did not say.
    pub expires_at: Option<Instant>,
    /// The refresh token, when the server issued one.
    pub refresh_token: Option<SecretString>,
    /// The granted scopes, when the server said (otherwise assume the requested ones).
    pub scope: Option<String>,
}

impl Tokens {
    /// Tokens with just an access token (no expiry, refresh token or scope; set the public
    /// fields for those): for rebuilding stored tokens, e.g. for
    /// [`AuthFlow::resume`](super::AuthFlow::resume).
    pub fn new(access_token: impl Into<SecretString>) -> Self {
        Self {
            access_token: access_token.into(),
            expires_at: None,
            refresh_token: None,
            scope: None,
        }
    }

    /// The value of the `Authorization` header for every request to the MCP server:
    /// `Bearer <token>`. The token never goes into a URL.
    #[must_use]
    pub fn authorization_header(&self) -> String {
        format!("Bearer {}", self.access_token.expose())
    }

    /// Whether the access token has expired at `now` (or will within `margin`).
    #[must_use]
    pub fn is_expired(&self, now: Instant, margin: Duration) -> bool {
        self.expires_at
            .is_some_and(|at| saturating_add(now, margin) >= at)
    }

    /// The granted scopes, split on spaces (empty when the server did not say).
    #[must_use]
    pub fn scopes(&self) -> Vec<String> {
        self.scope
            .as_deref()
            .unwrap_or("")
            .split_ascii_whitespace()
            .map(str::to_owned)
            .collect()
    }
}

impl fmt::Debug for Tokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tokens")
            .field("access_token", &"<redacted>")
            .field("expires_at", &self.expires_at)
            .field(
                "refresh_token",
                &self.refresh_token.as_ref().map(|_| "<redacted>"),
            )
            .field("scope", &self.scope)
            .finish()
    }
}

#[derive(Deserialize)]
struct TokenResponse {
    access_token: String,
    token_type: String,
    #[serde(default)]
    expires_in: Option<serde_json::Value>,
    #[serde(default)]
    refresh_token: Option<String>,
    #[serde(default)]
    scope: Option<String>,
}

/// Why a token response was refused by [`parse_token_response`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TokenResponseError {
    /// Not a token response (bad JSON, missing fields).
    Invalid(String),
    /// `token_type` is not `Bearer`.
    NotBearer(String),
}

/// Parses a successful token response received at `now`. `token_type` must be `Bearer` (any
/// case). `expires_in` may be a number or a numeric string; a negative, fractional or absurd
/// value is clamped into `0..=MAX_EXPIRES_IN`. A refresh response without a `refresh_token`
/// keeps `previous_refresh` (RFC 6749 §6: the old one stays valid).
pub fn parse_token_response(
    body: &[u8],
    now: Instant,
    previous_refresh: Option<&SecretString>,
) -> Result<Tokens, TokenResponseError> {
    let r: TokenResponse =
        serde_json::from_slice(body).map_err(|e| TokenResponseError::Invalid(e.to_string()))?;
    if !r.token_type.eq_ignore_ascii_case("bearer") {
        return Err(TokenResponseError::NotBearer(r.token_type));
    }
    if r.access_token.is_empty() {
        return Err(TokenResponseError::Invalid("empty access_token".into()));
    }
    let secs = match r.expires_in {
        Some(serde_json::Value::Number(n)) => n.as_f64(),
        Some(serde_json::Value::String(s)) => s.trim().parse::<f64>().ok(),
        _ => None,
    };
    let expires_at = secs.map(|s| {
        let clamped = if s.is_finite() {
            s.clamp(0.0, MAX_EXPIRES_IN.as_secs_f64())
        } else {
            0.0
        };
        saturating_add(now, Duration::from_secs_f64(clamped))
    });
    Ok(Tokens {
        access_token: SecretString::new(r.access_token),
        expires_at,
        refresh_token: r
            .refresh_token
            .filter(|t| !t.is_empty())
            .map(SecretString::new)
            .or_else(|| previous_refresh.cloned()),
        scope: r.scope,
    })
}

/// An OAuth error response body (RFC 6749 §5.2, RFC 7591 §3.2.2).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[non_exhaustive]
pub struct OAuthErrorBody {
    /// The error code.
    pub error: String,
    /// Text for the user.
    #[serde(default)]
    pub error_description: Option<String>,
}

/// Parses an OAuth error body, `None` when the body is not one.
#[must_use]
pub fn parse_error_body(body: &[u8]) -> Option<OAuthErrorBody> {
    serde_json::from_slice(body).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_clamps() {
        let now = Instant::now();
        let t = parse_token_response(
            br#"{"access_token":"at","token_type":"bearer","expires_in":3600,"refresh_token":"rt","scope":"a b"}"#,
            now,
            None,
        )
        .unwrap();
        assert_eq!(t.expires_at, Some(now + Duration::from_secs(3600)));
        assert_eq!(t.authorization_header(), "Bearer at");
        assert_eq!(t.scopes(), ["a", "b"]);
        assert!(!t.is_expired(now, Duration::from_secs(60)));
        assert!(t.is_expired(now + Duration::from_secs(3570), Duration::from_secs(60)));
        let huge = parse_token_response(
            br#"{"access_token":"at","token_type":"Bearer","expires_in":1e300}"#,
            now,
            None,
        )
        .unwrap();
        assert_eq!(huge.expires_at, Some(now + MAX_EXPIRES_IN));
        let neg = parse_token_response(
            br#"{"access_token":"at","token_type":"Bearer","expires_in":"-5"}"#,
            now,
            None,
        )
        .unwrap();
        assert_eq!(neg.expires_at, Some(now));
        let none =
            parse_token_response(br#"{"access_token":"at","token_type":"Bearer"}"#, now, None)
                .unwrap();
        assert_eq!(none.expires_at, None);
        assert!(!none.is_expired(now, Duration::MAX));
    }

    #[test]
    fn refuses_non_bearer_and_garbage() {
        let now = Instant::now();
        assert_eq!(
            parse_token_response(br#"{"access_token":"x","token_type":"mac"}"#, now, None),
            Err(TokenResponseError::NotBearer("mac".into()))
        );
        assert!(matches!(
            parse_token_response(b"nope", now, None),
            Err(TokenResponseError::Invalid(_))
        ));
        assert!(matches!(
            parse_token_response(br#"{"access_token":"","token_type":"Bearer"}"#, now, None),
            Err(TokenResponseError::Invalid(_))
        ));
    }

    #[test]
    fn refresh_keeps_old_refresh_token() {
        let old = SecretString::new("old");
        let t = parse_token_response(
            br#"{"access_token":"x","token_type":"Bearer"}"#,
            Instant::now(),
            Some(&old),
        )
        .unwrap();
        assert_eq!(t.refresh_token, Some(old));
    }

    #[test]
    fn debug_redacts() {
        let t = parse_token_response(
            br#"{"access_token":"AT-SECRET","token_type":"Bearer","refresh_token":"RT-SECRET"}"#,
            Instant::now(),
            None,
        )
        .unwrap();
        let d = format!("{t:?} {t:#?}");
        assert!(!d.contains("AT-SECRET") && !d.contains("RT-SECRET"), "{d}");
    }
}
