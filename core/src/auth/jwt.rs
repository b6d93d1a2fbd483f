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

#[cfg(test)]
mod tests {
    use super::*;

    const RSA_KEY: &str = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQCpAzq5KTTRa8uX\nKiQ/o4bxX//kBYufX3OYVfU1r6yIJT3pw2crFEh+nOROYB874eRjYJ2uRmW6DTm7\nFul1emdrOPb9FL7qNBWz9iY6P7DuhKwM2WfkbkP+hT/6n0qBLHzi0MN+eYgWULRE\n+KtUxAd9ZupQQgLxnomf99LpPMwrcVx2/MT9H6POF2M/7yvbGOkayD0B1xBXIuaQ\nlrwk+n4SoBEhaJRzeK63CeS0oCkgh0sRkLHXsGi8hJ7W0vZ/09j7JrFR8XwOLn1H\n2fT6lICF98OIsvlR5vuXyyjgLOAQuAbJoSDKwuRRD2Qra2en1Lani8dXx755F8NO\n8YgunqVRAgMBAAECggEANE9nkX+LdXXjoXnNllTKo1KPJMgCmuU0JeYU6vTgdZLx\nQrTT7aVteqKclxVxFVupEIkKxLHNMnR9dcZ1o4KrF6id6V7OaDaOsRBybHziCjDN\n/3wah70JFnGvh6ZdrPVUAe+TUkXTNPTtlptQi//QQaPkycpkltv2xKgzgzTqDFec\nGFBH7nvNaSBkOzX4ugWXxW82fFjbDPGJxcf2kUvrGFVVjjgr91tlrarJa9zbBc/V\nm3AvHVEEFIHDyFKla+lqv8XdDBpB0T7Dd24VBPq0Tw+gW4T6IkV3n/X7it2RfnOD\neMINEvaRNj4h391CXSRr5KewmpeJl5NGy28zCfKyMQKBgQDqLapicdqaHhiLuHoW\n/NNRpqgW+AKX59j/ygWTNErMuplv0OYfYRazISbmuaeiawfjUEz7Lw/rUHYjudC9\nfCwnVPdI+UEFfefBCHxvi5OLG/bZm2zifXtD0uj7ZuTw69LsR1D0OYqXiKd3EqyI\n0d5DuG9BOsoqS9ynsB7zQBrPywKBgQC4wwgr79XgE+D9PrvcEyYeNJSDYySYRFHx\nyiEiKNe4j0ytSN1mfPXvjpx6ig/QINbZc8ASXhy2GG7magPqyJq8lse0c0CRejU1\nbgrs1b2MImtW7kRAPEUGGdOLNdJNzL0YvRtYeYxATaOlb5ZnxChQMCOTXIwKN6uB\nAb6PKYID0wKBgHOoei6E7OKRWq4nPqV72SLKnNo7Q4yjBZnPvVEm0oqq3n1LP1zg\nJsXx6bSqnRCqrAqo7lxgsgwWgULD00TCv0vtuvRfpq1/saa0+kBdP1HFTfXLvctf\nDjJBSLBh8VDMKDBqSKFWigytgYhdwLkSbiQkQ06EKrUZIrHvWlnpn1RhAoGBALXn\n70ey3hO7/qvW9AZ9I+5hPkcNeZ4gxb0UkQKcy6b+DzQcpT6ekVTGR/GttFvpuR5n\nBBgRaJsv+yAICMtDrnU2znAveMbCV1i/eyoqVnB+AsiX1cKYlCypiMlquB+5EAQn\nS6EUKq20wwXCk4aebkJk4uHXIFl+7fAZ05AIAeXZAoGAdtCuWKS2Y02brHgwD3BC\nE5+CA4C/etCMZ36Ux74Lq7LTfgIQTXEM2X/52hTilR7C14wzL0EfdJzPU8vtn4MP\nir7k2MArziA251ZE5kKIfMfMC+gr3xgiHtdbXtwhM6yxg8JuIDLEWuCH9K1ZYMNY\nYN6FOkPY5cVqBKvoXI8zo+A=\n-----END PRIVATE KEY-----\n";
    const RSA_PUB: &str = "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAqQM6uSk00WvLlyokP6OG\n8V//5AWLn19zmFX1Na+siCU96cNnKxRIfpzkTmAfO+HkY2CdrkZlug05uxbpdXpn\nazj2/RS+6jQVs/YmOj+w7oSsDNln5G5D/oU/+p9KgSx84tDDfnmIFlC0RPirVMQH\nfWbqUEIC8Z6Jn/fS6TzMK3FcdvzE/R+jzhdjP+8r2xjpGsg9AdcQVyLmkJa8JPp+\nEqARIWiUc3iutwnktKApIIdLEZCx17BovISe1tL2f9PY+yaxUfF8Di59R9n0+pSA\nhffDiLL5Ueb7l8so4CzgELgGyaEgysLkUQ9kK2tnp9S2p4vHV8e+eRfDTvGILp6l\nUQIDAQAB\n-----END PUBLIC KEY-----\n";

    #[test]
    fn rs256_assertion_verifies() {
        let key = PrivateKey {
            pem: SecretString::new(RSA_KEY),
            algorithm: JwtAlgorithm::Rs256,
        };
        let a = client_assertion(
            &key,
            "cid",
            "https://as.example.com",
            1_000,
            Duration::from_secs(60),
            "j1",
        )
        .unwrap();
        let header = jsonwebtoken::decode_header(a.expose()).unwrap();
        assert_eq!(header.alg, jsonwebtoken::Algorithm::RS256);
        assert_eq!(header.typ.as_deref(), Some("JWT"));
        let mut v = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::RS256);
        v.set_audience(&["https://as.example.com"]);
        v.validate_exp = false;
        let data = jsonwebtoken::decode::<serde_json::Value>(
            a.expose(),
            &jsonwebtoken::DecodingKey::from_rsa_pem(RSA_PUB.as_bytes()).unwrap(),
            &v,
        )
        .unwrap();
        assert_eq!(data.claims["iss"], "cid");
        assert_eq!(data.claims["sub"], "cid");
        assert_eq!(data.claims["exp"], 1_060);
        assert_eq!(data.claims["jti"], "j1");
        // Deterministic: the same inputs sign to the same assertion.
        let b = client_assertion(
            &key,
            "cid",
            "https://as.example.com",
            1_000,
            Duration::from_secs(60),
            "j1",
        )
        .unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn bad_key_is_an_error() {
        let key = PrivateKey {
            pem: SecretString::new("not a key"),
            algorithm: JwtAlgorithm::Es256,
        };
        let e = client_assertion(&key, "cid", "aud", 0, Duration::from_secs(1), "j").unwrap_err();
        assert!(matches!(e, AuthError::ClientAssertion(_)));
        assert!(!e.to_string().contains("not a key"));
    }
}
