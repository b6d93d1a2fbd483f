//! Discovery documents and where to find them: protected resource metadata (RFC 9728),
//! authorization server metadata (RFC 8414, OpenID Connect Discovery 1.0), and the RFC 8707
//! resource identifier of an MCP server.

use serde::Deserialize;
use url::Url;

const PRM_WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";
const OAUTH_AS_WELL_KNOWN: &str = "/.well-known/oauth-authorization-server";
const OPENID_WELL_KNOWN: &str = "/.well-known/openid-configuration";

/// Protected resource metadata (RFC 9728 §2): the fields an MCP client reads. Unknown fields are
/// ignored.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[non_exhaustive]
pub struct ProtectedResourceMetadata {
    /// The resource identifier, exactly as published (sent back verbatim as `resource`).
    pub resource: String,
    /// Issuer identifiers of the authorization servers; the client uses the first.
    #[serde(default)]
    pub authorization_servers: Vec<String>,
    /// Scopes the resource understands.
    #[serde(default)]
    pub scopes_supported: Option<Vec<String>>,
    /// How the resource accepts bearer tokens (`header`, `body`, `query`). MCP only uses
    /// `header`, whatever this says.
    #[serde(default)]
    pub bearer_methods_supported: Option<Vec<String>>,
}

impl ProtectedResourceMetadata {
    /// Parses a protected resource metadata document.
    pub fn parse(body: &[u8]) -> Result<Self, String> {
        serde_json::from_slice(body).map_err(|e| e.to_string())
    }
}

/// Authorization server metadata (RFC 8414 §2, also the OpenID Connect Discovery document): the
/// fields an MCP client reads. Unknown fields are ignored.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Default)]
#[non_exhaustive]
pub struct AuthorizationServerMetadata {
    /// The issuer identifier; must equal the issuer the document was fetched for.
    pub issuer: String,
    /// Where the user authorizes.
    pub authorization_endpoint: Option<String>,
    /// Where codes and refresh tokens are exchanged.
    pub token_endpoint: Option<String>,
    /// Dynamic client registration (RFC 7591), when offered.
    #[serde(default)]
    pub registration_endpoint: Option<String>,
    /// Scopes the server knows (`offline_access` here allows asking for a refresh token).
    #[serde(default)]
    pub scopes_supported: Option<Vec<String>>,
    /// Grant types; RFC 8414's default when absent is `authorization_code` and `implicit`.
    #[serde(default)]
    pub grant_types_supported: Option<Vec<String>>,
    /// Client authentication methods at the token endpoint; RFC 8414's default when absent is
    /// `client_secret_basic`.
    #[serde(default)]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// Signing algorithms for `private_key_jwt` assertions.
    #[serde(default)]
    pub token_endpoint_auth_signing_alg_values_supported: Option<Vec<String>>,
    /// PKCE methods. MCP requires `S256` here; absent means the client must not proceed.
    #[serde(default)]
    pub code_challenge_methods_supported: Option<Vec<String>>,
    /// Whether an https URL may serve as `client_id` (Client ID Metadata Documents).
    #[serde(default)]
    pub client_id_metadata_document_supported: Option<bool>,
    /// RFC 9207: the server puts `iss` in its authorization responses.
    #[serde(default)]
    pub authorization_response_iss_parameter_supported: Option<bool>,
}

impl AuthorizationServerMetadata {
    /// Parses an authorization server metadata document.
    pub fn parse(body: &[u8]) -> Result<Self, String> {
        serde_json::from_slice(body).map_err(|e| e.to_string())
    }

    /// Whether `code_challenge_methods_supported` lists `S256` (absent counts as no).
    #[must_use]
    pub fn supports_s256(&self) -> bool {
        contains(self.code_challenge_methods_supported.as_deref(), "S256")
    }

    /// Whether `scopes_supported` lists `scope`.
    #[must_use]
    pub fn supports_scope(&self, scope: &str) -> bool {
        contains(self.scopes_supported.as_deref(), scope)
    }

    /// Whether `grant_types_supported` lists `grant`, with RFC 8414's default
    /// (`authorization_code`, `implicit`) when the field is absent.
    #[must_use]
    pub fn supports_grant(&self, grant: &str) -> bool {
        match &self.grant_types_supported {
            Some(list) => list.iter().any(|g| g == grant),
            None => matches!(grant, "authorization_code" | "implicit"),
        }
    }

    /// The metadata MCP 2025-03-26 prescribes when the server publishes none: `/authorize`,
    /// `/token` and `/register` at the MCP server's origin, issuer = the origin. PKCE `S256`
    /// is assumed (the 2025-03-26 revision requires it of every server).
    #[must_use]
    pub fn legacy_defaults(mcp_url: &Url) -> Self {
        let origin = origin_str(mcp_url);
        Self {
            issuer: origin.clone(),
            authorization_endpoint: Some(format!("{origin}/authorize")),
            token_endpoint: Some(format!("{origin}/token")),
            registration_endpoint: Some(format!("{origin}/register")),
            code_challenge_methods_supported: Some(vec!["S256".into()]),
            ..Self::default()
        }
    }
}

fn contains(list: Option<&[String]>, item: &str) -> bool {
    list.is_some_and(|l| l.iter().any(|s| s == item))
}

/// `scheme://host[:port]`, without a trailing slash.
fn origin_str(url: &Url) -> String {
    url.origin().ascii_serialization()
}

/// The path of `url` without its trailing slash; `""` for the root.
fn trimmed_path(url: &Url) -> &str {
    url.path().trim_end_matches('/')
}

/// Where to look for protected resource metadata, in order (MCP 2025-11-25, RFC 9728 §3.1):
/// the `resource_metadata` URL of the 401 challenge when there is one (resolved against the MCP
/// URL), then `/.well-known/oauth-protected-resource/<mcp path>` (when the path is not the
/// root), then `/.well-known/oauth-protected-resource` at the origin. Duplicates are removed.
#[must_use]
pub fn protected_resource_metadata_urls(mcp_url: &Url, challenge_url: Option<&str>) -> Vec<Url> {
    let mut out = Vec::with_capacity(3);
    if let Some(u) = challenge_url.and_then(|u| mcp_url.join(u.trim()).ok())
        && matches!(u.scheme(), "http" | "https")
    {
        out.push(u);
    }
    let origin = origin_str(mcp_url);
    let path = trimmed_path(mcp_url);
    if !path.is_empty()
        && let Ok(u) = Url::parse(&format!("{origin}{PRM_WELL_KNOWN}{path}"))
    {
        out.push(u);
    }
    if let Ok(u) = Url::parse(&format!("{origin}{PRM_WELL_KNOWN}")) {
        out.push(u);
    }
    out.dedup();
    out
}

/// Where to look for an issuer's metadata, in order (MCP 2025-11-25, RFC 8414 §3.1, OpenID
/// Connect Discovery §4):
///
/// - issuer with a path (`https://as/tenant1`): `https://as/.well-known/oauth-authorization-server/tenant1`,
///   `https://as/.well-known/openid-configuration/tenant1`,
///   `https://as/tenant1/.well-known/openid-configuration`;
/// - issuer without a path: `https://as/.well-known/oauth-authorization-server`, then
///   `https://as/.well-known/openid-configuration`.
///
/// Query and fragment of the issuer are dropped (an issuer has neither).
#[must_use]
pub fn authorization_server_metadata_urls(issuer: &Url) -> Vec<Url> {
    let origin = origin_str(issuer);
    let path = trimmed_path(issuer);
    let candidates = if path.is_empty() {
        vec![
            format!("{origin}{OAUTH_AS_WELL_KNOWN}"),
            format!("{origin}{OPENID_WELL_KNOWN}"),
        ]
    } else {
        vec![
            format!("{origin}{OAUTH_AS_WELL_KNOWN}{path}"),
            format!("{origin}{OPENID_WELL_KNOWN}{path}"),
            format!("{origin}{path}{OPENID_WELL_KNOWN}"),
        ]
    };
    candidates
        .iter()
        .filter_map(|c| Url::parse(c).ok())
        .collect()
}

/// The 2025-03-26 location of authorization server metadata when a server publishes no
/// protected resource metadata: `/.well-known/oauth-authorization-server` at the MCP server's
/// origin (its path is discarded).
#[must_use]
pub fn legacy_authorization_server_metadata_url(mcp_url: &Url) -> Option<Url> {
    Url::parse(&format!("{}{OAUTH_AS_WELL_KNOWN}", origin_str(mcp_url))).ok()
}

/// The canonical resource identifier of an MCP server URL (RFC 8707 §2, MCP "Canonical Server
/// URI"): scheme and host in lower case, default port dropped, no fragment, no query, and no
/// trailing slash (a bare origin is `https://host`, not `https://host/`).
#[must_use]
pub fn canonical_resource(mcp_url: &Url) -> String {
    let mut u = mcp_url.clone();
    u.set_fragment(None);
    u.set_query(None);
    let s = u.to_string();
    // `Url` renders a root path as "/"; the canonical form has no trailing slash.
    s.strip_suffix('/').map(str::to_owned).unwrap_or(s)
}

/// Whether a protected resource metadata `resource` covers the MCP server at `mcp_url`: same
/// origin, and the resource's path is the MCP path or a parent of it at a `/` boundary (so
/// `https://h` covers `https://h/mcp`, `https://h/mcp` covers `https://h/mcp/`, and
/// `https://h/m` does not cover `https://h/mcp`). Anything else, such as another host, is a
/// mismatch the client must refuse.
#[must_use]
pub fn resource_matches(resource: &str, mcp_url: &Url) -> bool {
    let Ok(r) = Url::parse(resource) else {
        return false;
    };
    if r.fragment().is_some() || r.origin() != mcp_url.origin() {
        return false;
    }
    let rp = trimmed_path(&r);
    let mp = trimmed_path(mcp_url);
    mp == rp || (mp.starts_with(rp) && mp.as_bytes().get(rp.len()) == Some(&b'/'))
}

/// Whether two issuer identifiers are the same, tolerating a trailing slash on either (RFC 3986
/// treats `https://as` and `https://as/` as equivalent).
#[must_use]
pub fn issuer_eq(a: &str, b: &str) -> bool {
    a.trim_end_matches('/') == b.trim_end_matches('/')
}

/// Whether `url` is https, or http on a loopback host (`localhost`, `127.0.0.0/8`, `::1`), as
/// OAuth 2.1 requires of every endpoint.
#[must_use]
pub fn is_secure_endpoint(url: &Url) -> bool {
    match url.scheme() {
        "https" => true,
        "http" => match url.host() {
            Some(url::Host::Domain(d)) => {
                d.eq_ignore_ascii_case("localhost")
                    || d.to_ascii_lowercase().ends_with(".localhost")
            }
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            None => false,
        },
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    fn strs(v: Vec<Url>) -> Vec<String> {
        v.into_iter().map(String::from).collect()
    }

    #[test]
    fn prm_order_challenge_then_path_then_root() {
        let mcp = u("https://mcp.example.com/api/mcp");
        assert_eq!(
            strs(protected_resource_metadata_urls(
                &mcp,
                Some("https://mcp.example.com/custom/prm")
            )),
            [
                "https://mcp.example.com/custom/prm",
                "https://mcp.example.com/.well-known/oauth-protected-resource/api/mcp",
                "https://mcp.example.com/.well-known/oauth-protected-resource",
            ]
        );
        // Root MCP URL: the path-based and root locations coincide.
        assert_eq!(
            strs(protected_resource_metadata_urls(
                &u("http://localhost:3000/"),
                None
            )),
            ["http://localhost:3000/.well-known/oauth-protected-resource"]
        );
        // A challenge URL equal to a well-known one is not fetched twice; a non-http one is
        // ignored.
        assert_eq!(
            protected_resource_metadata_urls(
                &u("https://h/mcp"),
                Some("https://h/.well-known/oauth-protected-resource/mcp")
            )
            .len(),
            2
        );
        assert_eq!(
            protected_resource_metadata_urls(&u("https://h/mcp"), Some("file:///etc/passwd")).len(),
            2
        );
    }

    #[test]
    fn as_metadata_path_insertion() {
        assert_eq!(
            strs(authorization_server_metadata_urls(&u(
                "https://as.example.com/tenant1"
            ))),
            [
                "https://as.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://as.example.com/.well-known/openid-configuration/tenant1",
                "https://as.example.com/tenant1/.well-known/openid-configuration",
            ]
        );
        // Trailing slash on the issuer: same locations.
        assert_eq!(
            authorization_server_metadata_urls(&u("https://as.example.com/tenant1/")),
            authorization_server_metadata_urls(&u("https://as.example.com/tenant1"))
        );
        assert_eq!(
            strs(authorization_server_metadata_urls(&u(
                "http://localhost:9000"
            ))),
            [
                "http://localhost:9000/.well-known/oauth-authorization-server",
                "http://localhost:9000/.well-known/openid-configuration",
            ]
        );
    }

    #[test]
    fn canonical_resource_forms() {
        assert_eq!(
            canonical_resource(&u("HTTPS://MCP.Example.com:443/mcp#frag")),
            "https://mcp.example.com/mcp"
        );
        assert_eq!(
            canonical_resource(&u("https://mcp.example.com/")),
            "https://mcp.example.com"
        );
        assert_eq!(
            canonical_resource(&u("http://localhost:8080/a/b?x=1")),
            "http://localhost:8080/a/b"
        );
    }

    #[test]
    fn resource_matching() {
        let mcp = u("http://localhost:3000/mcp");
        assert!(resource_matches("http://localhost:3000/mcp", &mcp));
        assert!(resource_matches("http://localhost:3000", &mcp));
        assert!(resource_matches("http://localhost:3000/", &mcp));
        assert!(!resource_matches("https://evil.example.com/mcp", &mcp));
        assert!(!resource_matches("http://localhost:3001/mcp", &mcp));
        assert!(!resource_matches("http://localhost:3000/mc", &mcp));
        assert!(!resource_matches("http://localhost:3000/mcp/deeper", &mcp));
        assert!(!resource_matches("http://localhost:3000/mcp#x", &mcp));
        assert!(!resource_matches("not a url", &mcp));
    }

    #[test]
    fn secure_endpoints() {
        assert!(is_secure_endpoint(&u("https://as.example.com/token")));
        assert!(is_secure_endpoint(&u("http://localhost:1/token")));
        assert!(is_secure_endpoint(&u("http://127.0.0.1:1/token")));
        assert!(is_secure_endpoint(&u("http://[::1]:1/token")));
        assert!(!is_secure_endpoint(&u("http://as.example.com/token")));
        assert!(!is_secure_endpoint(&u("ftp://localhost/token")));
    }

    #[test]
    fn metadata_defaults() {
        let m = AuthorizationServerMetadata::parse(br#"{"issuer":"https://as"}"#).unwrap();
        assert!(!m.supports_s256());
        assert!(m.supports_grant("authorization_code"));
        assert!(!m.supports_grant("refresh_token"));
        let legacy = AuthorizationServerMetadata::legacy_defaults(&u("https://h:8443/x/mcp"));
        assert_eq!(legacy.issuer, "https://h:8443");
        assert_eq!(
            legacy.token_endpoint.as_deref(),
            Some("https://h:8443/token")
        );
        assert_eq!(
            legacy.authorization_endpoint.as_deref(),
            Some("https://h:8443/authorize")
        );
        assert_eq!(
            legacy.registration_endpoint.as_deref(),
            Some("https://h:8443/register")
        );
        assert!(ProtectedResourceMetadata::parse(b"{}").is_err());
    }
}
