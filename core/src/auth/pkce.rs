//! PKCE (RFC 7636) with the `S256` method, the only one MCP allows.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

/// `BASE64URL(SHA256(verifier))` without padding (RFC 7636 §4.2): the `code_challenge` sent in
/// the authorization request for a verifier sent later in the token request.
#[must_use]
pub fn code_challenge_s256(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// Whether `verifier` is a valid PKCE code verifier: 43 to 128 characters from
/// `[A-Za-z0-9-._~]` (RFC 7636 §4.1). Draw 32 random bytes from a CSPRNG and base64url them
/// to get one.
#[must_use]
pub fn is_valid_verifier(verifier: &str) -> bool {
    (43..=128).contains(&verifier.len())
        && verifier
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc7636_appendix_b() {
        assert_eq!(
            code_challenge_s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[test]
    fn verifier_rules() {
        assert!(is_valid_verifier(&"a".repeat(43)));
        assert!(is_valid_verifier(&"-._~".repeat(32)));
        assert!(!is_valid_verifier(&"a".repeat(42)));
        assert!(!is_valid_verifier(&"a".repeat(129)));
        assert!(!is_valid_verifier(&format!("{}+", "a".repeat(43))));
    }
}
