//! [`SecretString`]: a string that never shows itself in `Debug` or logs.

use std::fmt;

/// A credential (access token, refresh token, client secret, PKCE verifier, private key).
///
/// `Debug` prints `SecretString(<redacted>)` and there is no `Display`, so a secret cannot reach
/// a log line by accident; read it with [`SecretString::expose`] at the one place it is sent.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretString(String);

impl SecretString {
    /// Wraps `value`.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The secret itself, for putting it on the wire. Never log the result.
    #[must_use]
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Whether the secret is the empty string.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for SecretString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SecretString(<redacted>)")
    }
}

impl From<String> for SecretString {
    fn from(value: String) -> Self {
        Self(value)
    }
}

impl From<&str> for SecretString {
    fn from(value: &str) -> Self {
        Self(value.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_redacts() {
        let s = SecretString::new("hunter2");
        assert_eq!(format!("{s:?}"), "SecretString(<redacted>)");
        assert!(!format!("{s:#?}").contains("hunter2"));
        assert_eq!(s.expose(), "hunter2");
    }
}
