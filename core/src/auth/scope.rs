//! Which scopes to ask for (MCP 2025-11-25 "Scope Selection Strategy", SEP-835, SEP-2207).

use super::metadata::{AuthorizationServerMetadata, ProtectedResourceMetadata};

/// The `offline_access` scope, which asks for a refresh token.
pub const OFFLINE_ACCESS: &str = "offline_access";

/// The scopes of an authorization request, in this order of preference: the host's override,
/// the `scope` of the 401 challenge, every scope of the protected resource metadata's
/// `scopes_supported`, else none (then the `scope` parameter is omitted).
///
/// `offline_access` is added when `want_refresh` is set and the authorization server lists it in
/// its `scopes_supported`, and only then (SEP-2207): asking a server for a scope it does not
/// know is an error. The result has no duplicates and keeps the first order seen.
#[must_use]
pub fn select_scopes(
    host_override: Option<&[String]>,
    challenge: Option<&[String]>,
    prm: Option<&ProtectedResourceMetadata>,
    asm: Option<&AuthorizationServerMetadata>,
    want_refresh: bool,
) -> Vec<String> {
    let base: &[String] = host_override
        .or(challenge.filter(|c| !c.is_empty()))
        .or(prm.and_then(|p| p.scopes_supported.as_deref()))
        .unwrap_or(&[]);
    let mut out = union(&[], base);
    if want_refresh
        && asm.is_some_and(|a| a.supports_scope(OFFLINE_ACCESS))
        && !out.iter().any(|s| s == OFFLINE_ACCESS)
    {
        out.push(OFFLINE_ACCESS.to_owned());
    }
    out
}

/// `a` followed by the scopes of `b` not in `a`, without duplicates: the scope set of a step-up
/// authorization (what the client had plus what the 403 challenge asks for).
#[must_use]
pub fn union(a: &[String], b: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(a.len() + b.len());
    for s in a.iter().chain(b) {
        if !s.is_empty() && !out.contains(s) {
            out.push(s.clone());
        }
    }
    out
}

/// The scopes joined with spaces, `None` when there are none (omit the parameter).
#[must_use]
pub fn scope_param(scopes: &[String]) -> Option<String> {
    (!scopes.is_empty()).then(|| scopes.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| (*s).to_owned()).collect()
    }

    fn prm(scopes: Option<&[&str]>) -> ProtectedResourceMetadata {
        ProtectedResourceMetadata {
            resource: "https://h/mcp".into(),
            authorization_servers: vec!["https://as".into()],
            scopes_supported: scopes.map(v),
            bearer_methods_supported: None,
        }
    }

    fn asm(scopes: Option<&[&str]>) -> AuthorizationServerMetadata {
        AuthorizationServerMetadata {
            issuer: "https://as".into(),
            scopes_supported: scopes.map(v),
            ..Default::default()
        }
    }

    #[test]
    fn order_of_preference() {
        let p = prm(Some(&["a", "b"]));
        let ch = v(&["c"]);
        assert_eq!(
            select_scopes(Some(&v(&["x"])), Some(&ch), Some(&p), None, false),
            v(&["x"])
        );
        assert_eq!(
            select_scopes(None, Some(&ch), Some(&p), None, false),
            v(&["c"])
        );
        // An empty challenge scope does not count.
        assert_eq!(
            select_scopes(None, Some(&[]), Some(&p), None, false),
            v(&["a", "b"])
        );
        assert_eq!(
            select_scopes(None, None, Some(&p), None, false),
            v(&["a", "b"])
        );
        assert!(select_scopes(None, None, Some(&prm(None)), None, false).is_empty());
        assert!(select_scopes(None, None, None, None, true).is_empty());
    }

    #[test]
    fn offline_access_only_when_advertised() {
        let p = prm(Some(&["mcp:basic"]));
        assert_eq!(
            select_scopes(
                None,
                None,
                Some(&p),
                Some(&asm(Some(&["mcp:basic", "offline_access"]))),
                true
            ),
            v(&["mcp:basic", "offline_access"])
        );
        assert_eq!(
            select_scopes(
                None,
                None,
                Some(&p),
                Some(&asm(Some(&["mcp:basic", "mcp:read"]))),
                true
            ),
            v(&["mcp:basic"])
        );
        assert_eq!(
            select_scopes(None, None, Some(&p), Some(&asm(None)), true),
            v(&["mcp:basic"])
        );
        assert_eq!(
            select_scopes(
                None,
                None,
                Some(&p),
                Some(&asm(Some(&["offline_access"]))),
                false
            ),
            v(&["mcp:basic"])
        );
    }

    #[test]
    fn union_keeps_order_and_dedups() {
        assert_eq!(
            union(&v(&["a", "b"]), &v(&["b", "c", "", "a"])),
            v(&["a", "b", "c"])
        );
        assert_eq!(scope_param(&v(&["a", "b"])).as_deref(), Some("a b"));
        assert_eq!(scope_param(&[]), None);
    }
}
