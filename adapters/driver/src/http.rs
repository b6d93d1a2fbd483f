//! The HTTP exchange capability a [`Runtime`](crate::Runtime) may offer.
//!
//! The core (`mcp_proto::http::Connection`) decides every request: method, URL, headers,
//! body, redirects, retries, deadlines, session ids. An [`HttpClient`] only performs one
//! exchange as described and streams the response back, chunk by chunk, as it arrives (an SSE
//! stream may stay open for hours). It must not follow redirects, must not retry, and must not
//! put a deadline on the whole exchange: the core's deadlines do that job.
//!
//! Dropping the future returned by [`HttpClient::send`], or the [`HttpResponse::body`] stream,
//! aborts the exchange (the connection is closed or returned to a pool, nothing more is read).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use futures_util::Stream;
use mcp_proto::http::headers::HeaderList;
use mcp_proto::http::{ExchangeFailure, HttpRequest, Method};
use url::Url;

/// A response body: chunks in order as they arrive, then the end of the stream; an `Err` item
/// ends the body with a failure (a reset connection, a TLS error).
pub type BodyStream = Pin<Box<dyn Stream<Item = Result<Vec<u8>, ExchangeFailure>> + Send>>;

/// The future of one exchange, up to its response head.
pub type HttpFuture = Pin<Box<dyn Future<Output = Result<HttpResponse, ExchangeFailure>> + Send>>;

/// How an [`HttpClient`] is set up. Made by the driver from the [`ClientBuilder`]'s
/// options; only transport-level settings, no protocol policy.
///
/// [`ClientBuilder`]: crate::ClientBuilder
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct HttpClientConfig {
    /// How long establishing a connection (TCP and TLS) may take; `None`: the library's
    /// default. Never a whole-request timeout, which would cut SSE streams.
    pub connect_timeout: Option<Duration>,
    /// Extra trusted root certificates, PEM-encoded (one or more certificates per entry), in
    /// addition to the system's roots.
    pub root_certificates: Vec<Vec<u8>>,
    /// The `User-Agent` header, if any.
    pub user_agent: Option<String>,
}

impl HttpClientConfig {
    /// No connect timeout of our own, only the system's roots, no user agent.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }
}

/// One exchange to perform, exactly as the core described it.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpRequestParts {
    /// The method.
    pub method: Method,
    /// The target.
    pub url: Url,
    /// Every header to send, in order. May contain credentials: never log the values.
    pub headers: HeaderList,
    /// The body (empty for GET and DELETE).
    pub body: Vec<u8>,
}

impl HttpRequestParts {
    /// The parts of `request`.
    #[must_use]
    pub fn new(method: Method, url: Url, headers: HeaderList, body: Vec<u8>) -> Self {
        Self {
            method,
            url,
            headers,
            body,
        }
    }
}

impl From<HttpRequest> for HttpRequestParts {
    fn from(r: HttpRequest) -> Self {
        Self::new(r.method, r.url, r.headers, r.body)
    }
}

impl fmt::Debug for HttpRequestParts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Header values may be credentials: only the names are shown.
        let names: Vec<&str> = self.headers.iter().map(|(n, _)| n).collect();
        f.debug_struct("HttpRequestParts")
            .field("method", &self.method)
            .field("url", &self.url.as_str())
            .field("headers", &names)
            .field("body_len", &self.body.len())
            .finish()
    }
}

/// A response head and its streaming body.
#[non_exhaustive]
pub struct HttpResponse {
    /// The status code.
    pub status: u16,
    /// The response headers, in order (values that are not visible ASCII may be dropped).
    pub headers: HeaderList,
    /// The body, read only as fast as it is polled.
    pub body: BodyStream,
}

impl HttpResponse {
    /// A response of `status` with `headers` and `body`.
    #[must_use]
    pub fn new(status: u16, headers: HeaderList, body: BodyStream) -> Self {
        Self {
            status,
            headers,
            body,
        }
    }
}

impl fmt::Debug for HttpResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpResponse")
            .field("status", &self.status)
            .finish_non_exhaustive()
    }
}

/// Performs HTTP exchanges for the driver. Implemented once per runtime (with `reqwest` for
/// tokio); shared by every exchange of a connection, so it should pool connections.
///
/// Implementations follow no redirect, add no retry and no whole-request timeout, send the
/// headers given (plus transport headers such as `Host`, `Content-Length`, `User-Agent`), and
/// log no header value.
pub trait HttpClient: Send + Sync {
    /// Starts `request`; the future resolves at the response head. Dropping it, or the body
    /// stream of its response, aborts the exchange.
    fn send(&self, request: HttpRequestParts) -> HttpFuture;
}
