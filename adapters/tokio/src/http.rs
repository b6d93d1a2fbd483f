//! [`HttpClient`] for tokio. Plain `http://` exchanges that no proxy applies to go straight to
//! hyper-util's pooled HTTP/1.1 client; HTTPS and proxied exchanges go through reqwest
//! (rustls with the system's roots plus any configured CA, proxies from the environment).
//! Both follow no redirect, have a connect timeout only and stream bodies.
//!
//! Why two: reqwest's layers around hyper (redirect and retry towers, header re-validation,
//! the URL parsed again twice per request) were about 40% of the client's CPU per call to a
//! local server (BENCHMARKS.md), where most MCP HTTP servers run; TLS and proxy tunnels are
//! where reqwest earns its place.

use std::io;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use bytes::Bytes;
use futures_util::{StreamExt as _, TryStreamExt as _};
use http_body_util::{BodyExt as _, Full};
use hyper_util::client::legacy::Client as PooledClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::proxy::matcher::Matcher;
use hyper_util::rt::TokioExecutor;
use mcp_driver::http::{HttpClient, HttpClientConfig, HttpFuture, HttpRequestParts, HttpResponse};
use mcp_driver::mcp_proto::http::headers::HeaderList;
use mcp_driver::mcp_proto::http::{ExchangeFailure, FailureKind, Method};

/// The HTTP client of one connection: both inner clients pool their connections.
pub(crate) struct TokioHttpClient {
    /// Plain HTTP with no proxy.
    plain: PooledClient<HttpConnector, Full<Bytes>>,
    /// The proxies of the environment, read once as reqwest reads them (`HTTP_PROXY`,
    /// `ALL_PROXY`, `NO_PROXY`, ...): a URL they intercept is left to reqwest.
    proxies: Matcher,
    /// The last URL [`plain_target`](Self::plain_target) looked at, and its answer: a
    /// connection's exchanges all go to one URL, which is then parsed and matched against the
    /// proxies once, not per exchange (the proxies are read once, so the answer cannot change).
    last_target: Mutex<Option<(String, Option<hyper::Uri>)>>,
    /// The `User-Agent` to add when the request has none, checked once: `Err` when it is not
    /// valid HTTP (each plain exchange then fails, as reqwest's would).
    user_agent: Option<Result<hyper::header::HeaderValue, hyper::header::InvalidHeaderValue>>,
    /// HTTPS and proxied exchanges, built on first use: loading the system's root
    /// certificates costs milliseconds, wasted on a connection to a local plain-HTTP server.
    reqwest: OnceLock<Result<ReqwestClient, String>>,
    /// What `reqwest` is built from, until then. Set up (custom root certificates parsed)
    /// when this client is made, so that a bad certificate fails the connect call.
    reqwest_builder: Mutex<Option<reqwest::ClientBuilder>>,
}

impl TokioHttpClient {
    fn new(config: &HttpClientConfig) -> io::Result<Self> {
        let mut connector = HttpConnector::new();
        // Small writes (a request head, then its body) must not wait for Nagle; reqwest
        // sets the same.
        connector.set_nodelay(true);
        connector.set_connect_timeout(config.connect_timeout);
        let plain = PooledClient::builder(TokioExecutor::new()).build(connector);
        Ok(Self {
            plain,
            proxies: Matcher::from_system(),
            last_target: Mutex::new(None),
            user_agent: config
                .user_agent
                .as_deref()
                .map(hyper::header::HeaderValue::from_str),
            reqwest: OnceLock::new(),
            reqwest_builder: Mutex::new(Some(ReqwestClient::builder(config)?)),
        })
    }

    /// The reqwest client, built on the first call.
    fn reqwest(&self) -> Result<&ReqwestClient, ExchangeFailure> {
        self.reqwest
            .get_or_init(|| {
                let builder = self
                    .reqwest_builder
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .take();
                // `get_or_init` runs this once, so the builder is there.
                let builder = builder.ok_or("the HTTP client was already set up")?;
                builder
                    .build()
                    .map(|client| ReqwestClient { client })
                    .map_err(|e| format!("could not set up the HTTP client: {e}"))
            })
            .as_ref()
            .map_err(|m| ExchangeFailure::new(FailureKind::Other, m.clone()))
    }

    /// The target as hyper's URI when the exchange takes the plain path.
    fn plain_target(&self, request: &HttpRequestParts) -> Option<hyper::Uri> {
        if request.url.scheme() != "http" {
            return None;
        }
        let url = request.url.as_str();
        let mut last = self
            .last_target
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some((last_url, target)) = &*last
            && last_url == url
        {
            return target.clone();
        }
        let target = self.plain_target_of(url);
        *last = Some((url.to_owned(), target.clone()));
        target
    }

    /// [`plain_target`](Self::plain_target) without the memory of the last URL.
    fn plain_target_of(&self, url: &str) -> Option<hyper::Uri> {
        let uri: hyper::Uri = url.parse().ok()?;
        self.proxies.intercept(&uri).is_none().then_some(uri)
    }

    fn send_plain(&self, uri: hyper::Uri, request: HttpRequestParts) -> HttpFuture {
        let other = |m: String| ExchangeFailure::new(FailureKind::Other, m);
        let method = match request.method {
            Method::Get => hyper::Method::GET,
            Method::Post => hyper::Method::POST,
            Method::Delete => hyper::Method::DELETE,
            m => {
                let failure = other(format!("unsupported method {m:?}"));
                return Box::pin(async move { Err(failure) });
            }
        };
        // `Host` comes from the URI (hyper-util sets it); the target is sent in origin form.
        // The parts are set in place: `http::request::Builder` moves itself (a few hundred
        // bytes) through every `header` call.
        let mut r = hyper::Request::new(Full::new(Bytes::from(request.body)));
        *r.method_mut() = method;
        *r.uri_mut() = uri;
        let headers = r.headers_mut();
        let mut has_user_agent = false;
        for (name, value) in request.headers {
            has_user_agent |= name == "user-agent";
            // The value's own bytes become the header's (checked as `from_str` checks them),
            // not a copy.
            match (
                header_name(&name),
                hyper::header::HeaderValue::from_maybe_shared(Bytes::from(value)),
            ) {
                (Ok(name), Ok(value)) => {
                    headers.append(name, value);
                }
                // The message names the failing part only: header values may be credentials.
                _ => {
                    let failure = other(format!("the request header {name:?} is not valid HTTP"));
                    return Box::pin(async move { Err(failure) });
                }
            }
        }
        if let (false, Some(ua)) = (has_user_agent, &self.user_agent) {
            match ua {
                Ok(v) => {
                    headers.insert(hyper::header::USER_AGENT, v.clone());
                }
                Err(_) => {
                    let failure = other("the User-Agent is not valid HTTP".to_owned());
                    return Box::pin(async move { Err(failure) });
                }
            }
        }
        let sent = self.plain.request(r);
        Box::pin(async move {
            let response = sent.await.map_err(pooled_failure)?;
            let status = response.status().as_u16();
            let headers = header_list(response.headers());
            let body = response
                .into_body()
                .into_data_stream()
                .map_ok(Vec::from)
                .map_err(hyper_failure)
                .boxed();
            Ok(HttpResponse::new(status, headers, body))
        })
    }
}

impl HttpClient for TokioHttpClient {
    fn send(&self, request: HttpRequestParts) -> HttpFuture {
        match self.plain_target(&request) {
            Some(uri) => self.send_plain(uri, request),
            None => match self.reqwest() {
                Ok(client) => client.send(request),
                Err(failure) => Box::pin(async move { Err(failure) }),
            },
        }
    }
}

/// The header called `name` (lower case, as every [`HeaderList`] name is): the names the core
/// puts on every exchange without a parse, any other one parsed.
fn header_name(name: &str) -> Result<hyper::header::HeaderName, hyper::header::InvalidHeaderName> {
    use hyper::header::{self, HeaderName};
    use mcp_driver::mcp_proto::http::headers as core;
    const MCP_SESSION_ID: HeaderName = HeaderName::from_static(core::MCP_SESSION_ID);
    const MCP_PROTOCOL_VERSION: HeaderName = HeaderName::from_static(core::MCP_PROTOCOL_VERSION);
    const LAST_EVENT_ID: HeaderName = HeaderName::from_static(core::LAST_EVENT_ID);
    Ok(match name {
        core::ACCEPT => header::ACCEPT,
        core::CONTENT_TYPE => header::CONTENT_TYPE,
        core::MCP_SESSION_ID => MCP_SESSION_ID,
        core::MCP_PROTOCOL_VERSION => MCP_PROTOCOL_VERSION,
        core::LAST_EVENT_ID => LAST_EVENT_ID,
        core::AUTHORIZATION => header::AUTHORIZATION,
        _ => return HeaderName::from_bytes(name.as_bytes()),
    })
}

/// Response headers for the core. A value with bytes outside visible ASCII is passed on
/// lossily (as UTF-8, invalid sequences replaced), not dropped: the core validates what it
/// reuses and reports what it refuses (an invalid `Mcp-Session-Id` is a diagnostic).
fn header_list(map: &hyper::HeaderMap) -> HeaderList {
    let mut headers = HeaderList::new();
    for (name, value) in map {
        match value.to_str() {
            Ok(v) => headers.append(name.as_str(), v),
            Err(_) => headers.append(
                name.as_str(),
                String::from_utf8_lossy(value.as_bytes()).into_owned(),
            ),
        }
    }
    headers
}

/// The pooled client's error as the core's failure kind, in words for a person: its source
/// chain without hyper-util's own layer ("client error (SendRequest)" names a hyper-util
/// internal, not what happened).
fn pooled_failure(e: hyper_util::client::legacy::Error) -> ExchangeFailure {
    let source = std::error::Error::source(&e);
    if e.is_connect() {
        let words = source.map_or_else(|| error_chain(&e), error_chain);
        return ExchangeFailure::new(FailureKind::Connect, words);
    }
    match source.and_then(|s| s.downcast_ref::<hyper::Error>()) {
        Some(h) => ExchangeFailure::new(hyper_kind(h), hyper_words(h)),
        None => ExchangeFailure::new(FailureKind::Other, error_chain(&e)),
    }
}

/// hyper's error (a response body's) as the core's failure kind.
fn hyper_failure(e: hyper::Error) -> ExchangeFailure {
    ExchangeFailure::new(hyper_kind(&e), hyper_words(&e))
}

fn hyper_kind(e: &hyper::Error) -> FailureKind {
    if e.is_parse() || e.is_user() {
        FailureKind::Other
    } else if e.is_timeout() {
        FailureKind::Timeout
    } else {
        // Closed, canceled, incomplete message, body write or read errors: the connection
        // went away mid-exchange.
        FailureKind::Reset
    }
}

/// What happened, for a person: hyper's "connection closed before message completed" says
/// the server closed the connection before its response was whole; other errors keep their
/// chain (an OS error's "Connection reset by peer" is already plain).
fn hyper_words(e: &hyper::Error) -> String {
    if e.is_incomplete_message() {
        "the server closed the connection before its response was complete".to_owned()
    } else if e.is_canceled() || e.is_closed() {
        format!("the server closed the connection ({})", error_chain(e))
    } else {
        error_chain(e)
    }
}

/// An error and its sources ("connection refused", "invalid peer certificate"); never a
/// header value.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut message = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        message.push_str(": ");
        message.push_str(&s.to_string());
        source = s.source();
    }
    message
}

/// A reqwest client shared by the exchanges of one connection (it pools their connections).
struct ReqwestClient {
    client: reqwest::Client,
}

impl ReqwestClient {
    /// The client's settings; an error for a custom root certificate that holds none.
    fn builder(config: &HttpClientConfig) -> io::Result<reqwest::ClientBuilder> {
        let mut builder = reqwest::Client::builder()
            // The core follows same-origin redirects itself and never carries credentials
            // elsewhere, so the library must not follow any.
            .redirect(reqwest::redirect::Policy::none())
            // No response decompression is configured: bodies arrive as sent, and the core's
            // size limits apply to what is on the wire.
            .use_rustls_tls();
        if let Some(t) = config.connect_timeout {
            builder = builder.connect_timeout(t);
        }
        if let Some(ua) = &config.user_agent {
            builder = builder.user_agent(ua.clone());
        }
        for pem in &config.root_certificates {
            let certs = reqwest::Certificate::from_pem_bundle(pem)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
            if certs.is_empty() {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "the custom root certificate holds no PEM certificate",
                ));
            }
            for cert in certs {
                builder = builder.add_root_certificate(cert);
            }
        }
        Ok(builder)
    }
}

impl HttpClient for ReqwestClient {
    fn send(&self, request: HttpRequestParts) -> HttpFuture {
        let method = match request.method {
            Method::Get => reqwest::Method::GET,
            Method::Post => reqwest::Method::POST,
            Method::Delete => reqwest::Method::DELETE,
            other => {
                let message = format!("unsupported method {other:?}");
                return Box::pin(
                    async move { Err(ExchangeFailure::new(FailureKind::Other, message)) },
                );
            }
        };
        let mut builder = self.client.request(method, request.url);
        for (name, value) in request.headers.iter() {
            builder = builder.header(name, value);
        }
        if !request.body.is_empty() {
            builder = builder.body(request.body);
        }
        let send = builder.send();
        Box::pin(async move {
            let response = send.await.map_err(failure)?;
            let status = response.status().as_u16();
            let headers = header_list(response.headers());
            let body = response
                .bytes_stream()
                .map_ok(Vec::from)
                .map_err(failure)
                .boxed();
            Ok(HttpResponse::new(status, headers, body))
        })
    }
}

/// reqwest's error as the core's failure kind. The message never holds header values.
fn failure(e: reqwest::Error) -> ExchangeFailure {
    let kind = if e.is_connect() {
        FailureKind::Connect
    } else if e.is_timeout() {
        FailureKind::Timeout
    } else if e.is_body() || e.is_decode() || e.is_request() {
        FailureKind::Reset
    } else {
        FailureKind::Other
    };
    ExchangeFailure::new(kind, error_chain(&e))
}

/// The client behind [`Runtime::http_client`](mcp_driver::Runtime::http_client). Its futures
/// and body streams must be polled on a tokio runtime (the driver task always is: it is
/// spawned with [`TokioRuntime`](crate::TokioRuntime)).
pub(crate) fn client(config: &HttpClientConfig) -> io::Result<Arc<dyn HttpClient>> {
    Ok(Arc::new(TokioHttpClient::new(config)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_values_outside_visible_ascii_reach_the_core_lossily() {
        let mut map = hyper::HeaderMap::new();
        map.insert(
            "mcp-session-id",
            hyper::header::HeaderValue::from_bytes(b"caf\xe9").expect("obs-text is allowed"),
        );
        map.insert("content-type", "application/json".parse().expect("ascii"));
        let headers = header_list(&map);
        assert_eq!(headers.get("mcp-session-id"), Some("caf\u{fffd}"));
        assert_eq!(headers.get("content-type"), Some("application/json"));
    }

    #[test]
    fn request_header_names_are_those_a_parse_gives() {
        use mcp_driver::mcp_proto::http::headers as core;
        for name in [
            core::ACCEPT,
            core::CONTENT_TYPE,
            core::MCP_SESSION_ID,
            core::MCP_PROTOCOL_VERSION,
            core::LAST_EVENT_ID,
            core::AUTHORIZATION,
            "x-api-key",
            "user-agent",
        ] {
            let parsed = hyper::header::HeaderName::from_bytes(name.as_bytes()).expect("valid");
            assert_eq!(header_name(name).expect("valid"), parsed, "{name}");
        }
        assert!(header_name("not a name").is_err());
    }

    #[test]
    fn the_remembered_target_is_the_target_of_each_url() {
        let client = TokioHttpClient::new(&HttpClientConfig::default()).expect("a client");
        let parts = |url: &str| {
            let url = url.parse().expect("a URL");
            HttpRequestParts::new(Method::Post, url, HeaderList::new(), Vec::new())
        };
        let urls = [
            "http://127.0.0.1:1/mcp",
            "http://127.0.0.1:1/mcp",
            "http://127.0.0.1:2/other?q=1",
            "https://example.com/mcp",
            "http://127.0.0.1:1/mcp",
        ];
        for url in urls {
            let expected = url
                .starts_with("http:")
                .then(|| client.plain_target_of(url))
                .flatten();
            assert_eq!(client.plain_target(&parts(url)), expected, "{url}");
        }
        let remembered = client.last_target.lock().expect("not poisoned");
        let (url, _) = remembered.as_ref().expect("a URL was looked at");
        assert_eq!(url, "http://127.0.0.1:1/mcp");
    }
}
