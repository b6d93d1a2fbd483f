//! [`HttpClient`] with reqwest: rustls with the system's roots (plus any configured CA),
//! proxies from the environment, no redirects, a connect timeout only, streaming bodies.

use std::io;
use std::sync::Arc;

use futures_util::{StreamExt as _, TryStreamExt as _};
use mcp_driver::http::{HttpClient, HttpClientConfig, HttpFuture, HttpRequestParts, HttpResponse};
use mcp_driver::mcp_proto::http::headers::HeaderList;
use mcp_driver::mcp_proto::http::{ExchangeFailure, FailureKind, Method};

/// A reqwest client shared by the exchanges of one connection (it pools their connections).
pub(crate) struct ReqwestClient {
    client: reqwest::Client,
}

impl ReqwestClient {
    pub(crate) fn new(config: &HttpClientConfig) -> io::Result<Self> {
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
        let client = builder
            .build()
            .map_err(|e| io::Error::other(format!("could not set up the HTTP client: {e}")))?;
        Ok(Self { client })
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
            let mut headers = HeaderList::new();
            for (name, value) in response.headers() {
                // Values that are not visible ASCII are dropped: no header the core reads
                // needs them.
                if let Ok(v) = value.to_str() {
                    headers.append(name.as_str(), v);
                }
            }
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
    // The source chain carries the useful part ("connection refused", "invalid peer
    // certificate").
    let mut message = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(s) = source {
        message.push_str(": ");
        message.push_str(&s.to_string());
        source = s.source();
    }
    ExchangeFailure::new(kind, message)
}

/// The client behind [`Runtime::http_client`](mcp_driver::Runtime::http_client). Its futures
/// and body streams must be polled on a tokio runtime (the driver task always is: it is
/// spawned with [`TokioRuntime`](crate::TokioRuntime)).
pub(crate) fn client(config: &HttpClientConfig) -> io::Result<Arc<dyn HttpClient>> {
    Ok(Arc::new(ReqwestClient::new(config)?))
}
