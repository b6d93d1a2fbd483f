//! The result cache hints of protocol 2026-07-28: a result's `ttlMs` and `cacheScope`.
//!
//! [`CacheHint::from_wire`] reads them as a client must: an absent or negative TTL is 0 (do not
//! cache), a TTL longer than [`MAX_TTL_MS`] is clamped to it, and any scope but `"public"` is
//! private. The session's result cache ([`crate::session`]) and a host's persistent tool cache
//! read hints through this one function, so they always agree.

use serde::{Deserialize, Serialize};

/// The longest TTL a server hint can set (30 days); longer hints are clamped to it.
pub const MAX_TTL_MS: u64 = 30 * 24 * 60 * 60 * 1000;

/// Who may be served a cached result (`cacheScope`).
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheScope {
    /// Any client may reuse it.
    Public,
    /// Only the same authorisation context (the key already includes the credentials).
    Private,
}

/// A result's cache hint, read by the client's rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheHint {
    /// How long the result stays fresh, in milliseconds: 0 means do not cache; at most
    /// [`MAX_TTL_MS`].
    pub ttl_ms: u64,
    /// Who may be served it.
    pub scope: CacheScope,
}

impl CacheHint {
    /// The hint of a result's `ttlMs` and `cacheScope` as sent (see the [module rules](self)).
    #[must_use]
    pub fn from_wire(ttl_ms: Option<i64>, scope: Option<&str>) -> Self {
        let ttl_ms = ttl_ms
            .and_then(|t| u64::try_from(t).ok())
            .unwrap_or(0)
            .min(MAX_TTL_MS);
        let scope = match scope {
            Some("public") => CacheScope::Public,
            _ => CacheScope::Private,
        };
        CacheHint { ttl_ms, scope }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_are_read_by_the_client_rules() {
        let h = CacheHint::from_wire(Some(5_000), Some("public"));
        assert_eq!((h.ttl_ms, h.scope), (5_000, CacheScope::Public));
        assert_eq!(CacheHint::from_wire(None, None).ttl_ms, 0);
        assert_eq!(CacheHint::from_wire(Some(-1), None).ttl_ms, 0);
        assert_eq!(
            CacheHint::from_wire(Some(i64::MAX), None).ttl_ms,
            MAX_TTL_MS
        );
        assert_eq!(
            CacheHint::from_wire(Some(1), Some("shared")).scope,
            CacheScope::Private
        );
    }
}
