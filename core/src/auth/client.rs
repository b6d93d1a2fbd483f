//! Who the client is to the authorization server: registration (pre-registered, Client ID
//! Metadata Document, Dynamic Client Registration) and token endpoint authentication.

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::Deserialize;
use url::Url;

use super::error::AuthError;
use super::metadata::AuthorizationServerMetadata;
use super::secret::SecretString;
use crate::http::headers::{AUTHORIZATION, HeaderList};

/// The signing algorithm of a `private_key_jwt` client assertion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum JwtAlgorithm {
    /// RSASSA-PKCS1-v1_5 with SHA-256, from an RSA private key PEM (PKCS#1 or PKCS#8).
    Rs256,
    /// ECDSA P-256 with SHA-256, from an EC private key PEM (PKCS#8).
    Es256,
}

impl JwtAlgorithm {
    /// The JOSE name (`RS256`, `ES256`).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            JwtAlgorithm::Rs256 => "RS256",
            JwtAlgorithm::Es256 => "ES256",
        }
    }

    /// Parses a JOSE name (case-sensitive, as JOSE is).
    #[must_use]
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "RS256" => Some(JwtAlgorithm::Rs256),
            "ES256" => Some(JwtAlgorithm::Es256),
            _ => None,
        }
    }
}

/// A private key for `private_key_jwt` (RFC 7523 §2.2) client authentication.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrivateKey {
    /// The key as PEM; kept secret.
    pub pem: SecretString,
    /// How to sign with it.
    pub algorithm: JwtAlgorithm,
}

/// A client's identity at one authorization server: its id and, for a confidential client, a
/// secret or a private key. `Debug` never shows the secret or the key.
#[derive(Clone, PartialEq, Eq)]
pub struct ClientCredentials {
    /// `client_id`.
    pub client_id: String,
    /// `client_secret`, for `client_secret_basic` / `client_secret_post`.
    pub client_secret: Option<SecretString>,
    /// The key for `private_key_jwt`.
    pub private_key: Option<PrivateKey>,
}

impl ClientCredentials {
    /// A public client: an id and no secret.
    pub fn public(client_id: impl Into<String>) -> Self {
        Self {
            client_id: client_id.into(),
            client_secret: None,
            private_key: None,
        }
    }

    /// A confidential client with a shared secret.
    pub fn with_secret(client_id: impl Into<String>, secret: impl Into<SecretString>) -> Self {
        Self {
            client_secret: Some(secret.into()),
            ..Self::public(client_id)
        }
    }

    /// A confidential client that signs JWT assertions with `key`.
    pub fn with_private_key(client_id: impl Into<String>, key: PrivateKey) -> Self {
        Self {
            private_key: Some(key),
            ..Self::public(client_id)
        }
    }
}

impl fmt::Debug for ClientCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientCredentials")
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "<redacted>"),
            )
            .field(
                "private_key",
                &self.private_key.as_ref().map(|k| k.algorithm),
            )
            .finish()
    }
}

/// The OpenID Connect `application_type` of a registration (OIDC Dynamic Client Registration
/// 1.0 §2; MCP requires clients to send one, SEP-837): a server that gets none assumes `web`,
/// which forbids the loopback redirect URIs of command-line and desktop clients.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ApplicationType {
    /// A client on the user's device: loopback or private-use-scheme redirect URIs.
    Native,
    /// A web application: https redirect URIs on a public host.
    Web,
}

impl ApplicationType {
    /// The registration value.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            ApplicationType::Native => "native",
            ApplicationType::Web => "web",
        }
    }

    /// The type a redirect URI implies: `native` for a loopback host (`localhost`,
    /// `127.0.0.1`, `[::1]`) or a scheme other than http(s) (a private-use scheme, or a URI
    /// that does not parse), `web` for an http(s) URI on any other host.
    #[must_use]
    pub fn for_redirect_uri(redirect_uri: &str) -> Self {
        let Ok(url) = Url::parse(redirect_uri) else {
            return ApplicationType::Native;
        };
        if !matches!(url.scheme(), "http" | "https") {
            return ApplicationType::Native;
        }
        match url.host() {
            Some(url::Host::Domain(d)) if d.eq_ignore_ascii_case("localhost") => {
                ApplicationType::Native
            }
            Some(url::Host::Ipv4(ip)) if ip.is_loopback() => ApplicationType::Native,
            Some(url::Host::Ipv6(ip)) if ip.is_loopback() => ApplicationType::Native,
            _ => ApplicationType::Web,
        }
    }
}

/// What the client says about itself in a Dynamic Client Registration request (RFC 7591 §2).
/// The flow adds `redirect_uris`, `grant_types`, `response_types`, `token_endpoint_auth_method`,
/// `application_type` (unless set here) and `scope` itself.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClientMetadata {
    /// `client_name`, shown to the user on the consent screen.
    pub client_name: String,
    /// `client_uri`, the client's home page.
    pub client_uri: Option<String>,
    /// `software_id`.
    pub software_id: Option<String>,
    /// `software_version`.
    pub software_version: Option<String>,
    /// `application_type`; `None`: the one the redirect URI implies
    /// ([`ApplicationType::for_redirect_uri`]).
    pub application_type: Option<ApplicationType>,
}

impl ClientMetadata {
    /// Metadata with just a name.
    pub fn new(client_name: impl Into<String>) -> Self {
        Self {
            client_name: client_name.into(),
            client_uri: None,
            software_id: None,
            software_version: None,
            application_type: None,
        }
    }
}

/// How the client may identify itself, tried in the MCP 2025-11-25 order: pre-registered
/// credentials, then a Client ID Metadata Document (when the server advertises
/// `client_id_metadata_document_supported`), then Dynamic Client Registration (when the server
/// has a `registration_endpoint`), else [`AuthError::NoClientId`]. Set the ones the host has.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ClientRegistration {
    /// Credentials the host got out of band (a config file, a CLI flag, an earlier DCR).
    pub pre_registered: Option<ClientCredentials>,
    /// The https URL of the client's metadata document, used as `client_id`.
    pub metadata_document: Option<Url>,
    /// The metadata for Dynamic Client Registration.
    pub dynamic: Option<ClientMetadata>,
}

impl ClientRegistration {
    /// Only pre-registered credentials.
    pub fn pre_registered(credentials: ClientCredentials) -> Self {
        Self {
            pre_registered: Some(credentials),
            ..Self::default()
        }
    }

    /// Only a Client ID Metadata Document.
    pub fn metadata_document(url: Url) -> Self {
        Self {
            metadata_document: Some(url),
            ..Self::default()
        }
    }

    /// Only Dynamic Client Registration.
    pub fn dynamic(metadata: ClientMetadata) -> Self {
        Self {
            dynamic: Some(metadata),
            ..Self::default()
        }
    }

    /// Adds a metadata document URL (tried after pre-registered credentials).
    #[must_use]
    pub fn with_metadata_document(mut self, url: Url) -> Self {
        self.metadata_document = Some(url);
        self
    }

    /// Adds Dynamic Client Registration as the last resort.
    #[must_use]
    pub fn with_dynamic(mut self, metadata: ClientMetadata) -> Self {
        self.dynamic = Some(metadata);
        self
    }
}

/// Whether `url` can be a Client ID Metadata Document URL: https with a path other than `/`.
#[must_use]
pub fn is_metadata_document_url(url: &Url) -> bool {
    url.scheme() == "https" && url.host().is_some() && url.path() != "/" && !url.path().is_empty()
}

/// A token endpoint client authentication method (RFC 7591 §2, OAuth 2.1 §2.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TokenEndpointAuthMethod {
    /// `none`: a public client, `client_id` in the form body.
    None,
    /// `client_secret_basic`: HTTP Basic with the form-urlencoded id and secret.
    ClientSecretBasic,
    /// `client_secret_post`: `client_id` and `client_secret` in the form body.
    ClientSecretPost,
    /// `private_key_jwt`: a signed assertion in the form body (RFC 7523).
    PrivateKeyJwt,
}

impl TokenEndpointAuthMethod {
    /// The registered name.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            TokenEndpointAuthMethod::None => "none",
            TokenEndpointAuthMethod::ClientSecretBasic => "client_secret_basic",
            TokenEndpointAuthMethod::ClientSecretPost => "client_secret_post",
            TokenEndpointAuthMethod::PrivateKeyJwt => "private_key_jwt",
        }
    }

    /// Parses a registered name.
    #[must_use]
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "none" => Some(TokenEndpointAuthMethod::None),
            "client_secret_basic" => Some(TokenEndpointAuthMethod::ClientSecretBasic),
            "client_secret_post" => Some(TokenEndpointAuthMethod::ClientSecretPost),
            "private_key_jwt" => Some(TokenEndpointAuthMethod::PrivateKeyJwt),
            _ => None,
        }
    }

    fn usable_with(self, c: &ClientCredentials) -> bool {
        match self {
            TokenEndpointAuthMethod::None => true,
            TokenEndpointAuthMethod::ClientSecretBasic
            | TokenEndpointAuthMethod::ClientSecretPost => c.client_secret.is_some(),
            TokenEndpointAuthMethod::PrivateKeyJwt => c.private_key.is_some(),
        }
    }
}

/// Picks how to authenticate `creds` at the token endpoint.
///
/// A method fixed at registration (`registered`, from the DCR response) wins when the
/// credentials allow it. Otherwise the strongest method the credentials allow that the server
/// lists in `token_endpoint_auth_methods_supported` (RFC 8414's default when absent:
/// `client_secret_basic` only): `private_key_jwt`, then `client_secret_basic`, then
/// `client_secret_post`, then `none`. A client without a secret or key always uses `none`.
pub fn choose_auth_method(
    asm: &AuthorizationServerMetadata,
    creds: &ClientCredentials,
    registered: Option<&str>,
) -> Result<TokenEndpointAuthMethod, AuthError> {
    if let Some(m) = registered.and_then(TokenEndpointAuthMethod::parse)
        && m.usable_with(creds)
    {
        return Ok(m);
    }
    if creds.client_secret.is_none() && creds.private_key.is_none() {
        return Ok(TokenEndpointAuthMethod::None);
    }
    let default = ["client_secret_basic".to_owned()];
    let supported = asm
        .token_endpoint_auth_methods_supported
        .as_deref()
        .unwrap_or(&default);
    [
        TokenEndpointAuthMethod::PrivateKeyJwt,
        TokenEndpointAuthMethod::ClientSecretBasic,
        TokenEndpointAuthMethod::ClientSecretPost,
        TokenEndpointAuthMethod::None,
    ]
    .into_iter()
    .find(|m| m.usable_with(creds) && supported.iter().any(|s| s == m.as_str()))
    .ok_or_else(|| AuthError::NoAuthMethod {
        supported: supported.to_vec(),
    })
}

/// The `token_endpoint_auth_method` to ask for in a registration request: `none` (a public
/// client: nothing to store or leak) when the server allows it, else `client_secret_basic`, else
/// `client_secret_post`. With no list, RFC 8414's default, `client_secret_basic`.
#[must_use]
pub fn registration_auth_method(asm: &AuthorizationServerMetadata) -> TokenEndpointAuthMethod {
    let Some(supported) = asm.token_endpoint_auth_methods_supported.as_deref() else {
        return TokenEndpointAuthMethod::ClientSecretBasic;
    };
    [
        TokenEndpointAuthMethod::None,
        TokenEndpointAuthMethod::ClientSecretBasic,
        TokenEndpointAuthMethod::ClientSecretPost,
    ]
    .into_iter()
    .find(|m| supported.iter().any(|s| s == m.as_str()))
    .unwrap_or(TokenEndpointAuthMethod::ClientSecretBasic)
}

/// The JSON body of a Dynamic Client Registration request (RFC 7591 §3.1).
#[must_use]
pub fn registration_body(
    metadata: &ClientMetadata,
    redirect_uri: &str,
    grant_types: &[&str],
    method: TokenEndpointAuthMethod,
    scope: Option<&str>,
) -> Vec<u8> {
    let mut doc = serde_json::json!({
        "client_name": metadata.client_name,
        "redirect_uris": [redirect_uri],
        "grant_types": grant_types,
        "response_types": ["code"],
        "token_endpoint_auth_method": method.as_str(),
        "application_type": metadata
            .application_type
            .unwrap_or_else(|| ApplicationType::for_redirect_uri(redirect_uri))
            .as_str(),
    });
    let extra = [
        ("client_uri", metadata.client_uri.as_deref()),
        ("software_id", metadata.software_id.as_deref()),
        ("software_version", metadata.software_version.as_deref()),
        ("scope", scope),
    ];
    for (k, v) in extra {
        if let Some(v) = v {
            doc[k] = v.into();
        }
    }
    // Serialising a `Value` built from strings cannot fail.
    serde_json::to_vec(&doc).unwrap_or_default()
}

/// A successful registration response (RFC 7591 §3.2.1).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RegisteredClient {
    /// The id and secret the server issued.
    pub credentials: ClientCredentials,
    /// The auth method the server settled on, when it says.
    pub token_endpoint_auth_method: Option<String>,
}

#[derive(Deserialize)]
struct RegistrationResponse {
    client_id: String,
    #[serde(default)]
    client_secret: Option<String>,
    #[serde(default)]
    token_endpoint_auth_method: Option<String>,
}

/// Parses a registration response body.
pub fn parse_registration_response(body: &[u8]) -> Result<RegisteredClient, String> {
    let r: RegistrationResponse = serde_json::from_slice(body).map_err(|e| e.to_string())?;
    if r.client_id.is_empty() {
        return Err("empty client_id".into());
    }
    Ok(RegisteredClient {
        credentials: ClientCredentials {
            client_id: r.client_id,
            client_secret: r
                .client_secret
                .filter(|s| !s.is_empty())
                .map(SecretString::new),
            private_key: None,
        },
        token_endpoint_auth_method: r.token_endpoint_auth_method,
    })
}

fn form_encode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// The `Authorization` value of `client_secret_basic`: `Basic base64(enc(id) ":" enc(secret))`
/// where `enc` is `application/x-www-form-urlencoded` (RFC 6749 §2.3.1).
#[must_use]
pub fn basic_authorization(client_id: &str, secret: &str) -> String {
    let pair = format!("{}:{}", form_encode(client_id), form_encode(secret));
    format!("Basic {}", STANDARD.encode(pair))
}

/// `client_assertion_type` of a JWT client assertion (RFC 7523 §2.2).
pub const JWT_BEARER_ASSERTION_TYPE: &str =
    "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// Adds the client authentication of `method` to a token request: an `Authorization` header
/// (`client_secret_basic`) or form fields (`client_id`, `client_secret`, `client_assertion`).
/// `assertion` is the signed JWT for `private_key_jwt`.
pub fn apply_client_auth(
    method: TokenEndpointAuthMethod,
    creds: &ClientCredentials,
    assertion: Option<&SecretString>,
    form: &mut Vec<(&'static str, String)>,
    headers: &mut HeaderList,
) {
    let secret = creds
        .client_secret
        .as_ref()
        .map(SecretString::expose)
        .unwrap_or("");
    match method {
        TokenEndpointAuthMethod::ClientSecretBasic => {
            headers.insert(AUTHORIZATION, basic_authorization(&creds.client_id, secret));
        }
        TokenEndpointAuthMethod::ClientSecretPost => {
            form.push(("client_id", creds.client_id.clone()));
            form.push(("client_secret", secret.to_owned()));
        }
        TokenEndpointAuthMethod::None => form.push(("client_id", creds.client_id.clone())),
        TokenEndpointAuthMethod::PrivateKeyJwt => {
            form.push(("client_id", creds.client_id.clone()));
            form.push((
                "client_assertion_type",
                JWT_BEARER_ASSERTION_TYPE.to_owned(),
            ));
            form.push((
                "client_assertion",
                assertion.map(|a| a.expose().to_owned()).unwrap_or_default(),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asm(methods: Option<&[&str]>) -> AuthorizationServerMetadata {
        AuthorizationServerMetadata {
            issuer: "https://as".into(),
            token_endpoint_auth_methods_supported: methods
                .map(|m| m.iter().map(|s| (*s).to_owned()).collect()),
            ..Default::default()
        }
    }

    #[test]
    fn basic_header_is_form_encoded() {
        assert_eq!(
            basic_authorization("conformance-test-client", "conformance-test-secret"),
            format!(
                "Basic {}",
                STANDARD.encode("conformance-test-client:conformance-test-secret")
            )
        );
        // RFC 6749 §2.3.1: encode before joining, so a ':' in the id survives.
        assert_eq!(
            basic_authorization("a:b c", "p&ss"),
            format!("Basic {}", STANDARD.encode("a%3Ab+c:p%26ss"))
        );
    }

    #[test]
    fn auth_method_choice() {
        let secret = ClientCredentials::with_secret("id", "s");
        let public = ClientCredentials::public("id");
        assert_eq!(
            choose_auth_method(&asm(Some(&["client_secret_post"])), &secret, None),
            Ok(TokenEndpointAuthMethod::ClientSecretPost)
        );
        assert_eq!(
            choose_auth_method(
                &asm(Some(&["client_secret_post", "client_secret_basic"])),
                &secret,
                None
            ),
            Ok(TokenEndpointAuthMethod::ClientSecretBasic)
        );
        assert_eq!(
            choose_auth_method(&asm(None), &secret, None),
            Ok(TokenEndpointAuthMethod::ClientSecretBasic)
        );
        assert_eq!(
            choose_auth_method(&asm(Some(&["none"])), &secret, None),
            Ok(TokenEndpointAuthMethod::None)
        );
        assert_eq!(
            choose_auth_method(&asm(Some(&["client_secret_basic"])), &public, None),
            Ok(TokenEndpointAuthMethod::None)
        );
        // The registration response's method wins when usable.
        assert_eq!(
            choose_auth_method(
                &asm(Some(&["client_secret_basic"])),
                &secret,
                Some("client_secret_post")
            ),
            Ok(TokenEndpointAuthMethod::ClientSecretPost)
        );
        assert!(matches!(
            choose_auth_method(&asm(Some(&["private_key_jwt"])), &secret, None),
            Err(AuthError::NoAuthMethod { .. })
        ));
    }

    #[test]
    fn registration_method_prefers_public() {
        assert_eq!(
            registration_auth_method(&asm(Some(&["client_secret_basic", "none"]))),
            TokenEndpointAuthMethod::None
        );
        assert_eq!(
            registration_auth_method(&asm(Some(&["client_secret_post"]))),
            TokenEndpointAuthMethod::ClientSecretPost
        );
        assert_eq!(
            registration_auth_method(&asm(None)),
            TokenEndpointAuthMethod::ClientSecretBasic
        );
    }

    #[test]
    fn credentials_debug_redacts() {
        let c = ClientCredentials::with_secret("id", "topsecret");
        let d = format!("{c:?}");
        assert!(d.contains("id") && !d.contains("topsecret"), "{d}");
        let r = parse_registration_response(br#"{"client_id":"x","client_secret":"sss"}"#).unwrap();
        assert!(!format!("{r:?}").contains("sss"));
        assert!(parse_registration_response(br#"{"client_id":""}"#).is_err());
    }

    #[test]
    fn metadata_document_urls() {
        assert!(is_metadata_document_url(
            &Url::parse("https://conformance-test.local/client-metadata.json").unwrap()
        ));
        assert!(!is_metadata_document_url(
            &Url::parse("http://x/client.json").unwrap()
        ));
        assert!(!is_metadata_document_url(
            &Url::parse("https://x/").unwrap()
        ));
    }
}
