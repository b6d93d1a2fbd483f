//! `private_key_jwt` client assertions (RFC 7523 §2.2, RFC 7521 §5.2), signed with
//! `jsonwebtoken` (feature `jwt`).
//!
//! Signing is deterministic for both supported algorithms (RS256 is PKCS#1 v1.5; ES256 uses
//! RFC 6979 nonces), so the core stays reproducible. The RSA implementation draws random numbers
//! internally for blinding, a side-channel defence that does not change the signature.

use serde::Serialize;

use super::client::{JwtAlgorithm, PrivateKey};
use super::error::AuthError;
use super::secret::SecretString;
use crate::time::Duration;

/// The claims of a client assertion.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AssertionClaims<'a> {
    /// `iss`: the client id.
    pub iss: &'a str,
    /// `sub`: the client id.
    pub sub: &'a str,
    /// `aud`: the authorization server's issuer identifier (RFC 7523bis; accepted by servers
    /// that follow the original RFC 7523 as well).
    pub aud: &'a str,
    /// `iat`: seconds since the UNIX epoch.
    pub iat: u64,
    /// `exp`: `iat` plus the lifetime.
    pub exp: u64,
    /// `jti`: a unique id from the caller's CSPRNG, so the server can refuse replays.
    pub jti: &'a str,
}

/// Signs a client assertion for `client_id` addressed to `audience`, issued at `unix_time`
/// (seconds since the epoch, from the caller's wall clock) and valid for `lifetime`.
pub fn client_assertion(
    key: &PrivateKey,
    client_id: &str,
    audience: &str,
    unix_time: u64,
    lifetime: Duration,
    jti: &str,
) -> Result<SecretString, AuthError> {
    use jsonwebtoken::{Algorithm, EncodingKey, Header, encode};
    let pem = key.pem.expose().as_bytes();
    let err = |e: jsonwebtoken::errors::Error| AuthError::ClientAssertion(e.to_string());
    let (alg, encoding_key) = match key.algorithm {
        JwtAlgorithm::Rs256 => (
            Algorithm::RS256,
            EncodingKey::from_rsa_pem(pem).map_err(err)?,
        ),
        JwtAlgorithm::Es256 => (
            Algorithm::ES256,
            EncodingKey::from_ec_pem(pem).map_err(err)?,
        ),
    };
    let claims = AssertionClaims {
        iss: client_id,
        sub: client_id,
        aud: audience,
        iat: unix_time,
        exp: unix_time.saturating_add(lifetime.as_secs()),
        jti,
    };
    let mut header = Header::new(alg);
    header.typ = Some("JWT".into());
    encode(&header, &claims, &encoding_key)
        .map(SecretString::new)
        .map_err(err)
}
