//! OAuth 2.1 authorization for MCP over HTTP, as pure decisions.
//!
//! [`AuthFlow`] runs one authorization from the server's 401 to the tokens: protected resource
//! metadata (RFC 9728), authorization server metadata (RFC 8414, OpenID Connect Discovery, and
//! the 2025-03-26 fallbacks), PKCE `S256`, client identification (pre-registered, Client ID
//! Metadata Document, Dynamic Client Registration), the authorization URL and redirect
//! (`state`, RFC 9207 `iss`), token, refresh and client credentials requests, and 403
//! `insufficient_scope` step-ups with a cap. It asks for HTTP requests
//! ([`AuthHttpRequest`]) and emits [`AuthEvent`]s; the adapter performs the requests, opens
//! the browser (or follows the URL headless), and stores the tokens.
//!
//! The pieces are usable on their own:
//!
//! - [`metadata`]: the discovery documents, their well-known locations, the resource check;
//! - [`pkce`]: `S256` challenges;
//! - [`scope`]: scope selection and step-up unions;
//! - [`client`]: registration and token endpoint authentication (`client_secret_basic`,
//!   `client_secret_post`, `none`, `private_key_jwt`);
//! - [`authorize`]: the authorization URL and the redirect's checks;
//! - [`token`]: [`Tokens`] and token responses;
//! - `jwt` (feature `jwt`): signed client assertions.
//!
//! Nothing here reads a clock or draws a random number: PKCE verifiers, `state` and JWT ids come
//! in [`Secrets`] from the adapter's CSPRNG, time comes in as `now`. Secrets are
//! [`SecretString`]s, whose `Debug` is redacted; no error carries one.

pub mod authorize;
pub mod client;
mod config;
pub mod error;
mod flow;
#[cfg(feature = "jwt")]
pub mod jwt;
pub mod metadata;
pub mod pkce;
pub mod scope;
mod secret;
pub mod token;

#[cfg(test)]
mod tests;

pub use client::{
    ApplicationType, ClientCredentials, ClientMetadata, ClientRegistration, JwtAlgorithm,
    PrivateKey,
};
pub use config::{
    AuthConfig, AuthEvent, AuthHttpRequest, AuthRequestId, Grant, IdentityAssertion, Secrets,
};
pub use error::{AuthError, AuthPurpose, AuthUsageError};
pub use flow::{AuthFlow, SavedAuthorization};
pub use secret::SecretString;
pub use token::Tokens;
