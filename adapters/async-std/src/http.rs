//! [`HttpClient`] with hyper 1 (HTTP/1.1) over smol's TCP and futures-rustls: no tokio
//! runtime, no redirects, no retries, a connect timeout only, streaming bodies.
//!
//! Connections (TCP, then TLS for `https`) are kept alive and reused: an exchange takes an
//! idle connection to the same origin from the client's pool ([`crate::http_pool`]) or opens
//! a new one, and its response body gives the connection back when read to the end. A pooled
//! connection that closed before the request was written is replaced by a new one, the
//! request sent again (it never reached the server).

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_io::{AsyncRead, AsyncWrite};
use futures_rustls::TlsConnector;
use futures_util::future::{AbortHandle, Abortable};
use futures_util::{StreamExt as _, TryStreamExt as _, future};
use http_body_util::{BodyStream, Full};
use mcp_driver::Runtime as _;
use mcp_driver::http::{HttpClient, HttpClientConfig, HttpFuture, HttpRequestParts, HttpResponse};
use mcp_driver::mcp_proto::http::headers::HeaderList;
use mcp_driver::mcp_proto::http::{ExchangeFailure, FailureKind, Method};
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, ServerName};
use smol::net::TcpStream;
use url::{Host, Url};

use crate::AsyncStdRuntime;
use crate::http_pool::{AbortOnDrop, Connection, Origin, Pool, PooledBody, origin_of};
use crate::hyper_io::HyperIo;

/// The connect timeout (TCP and TLS) when the configuration sets none.
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// A byte stream hyper can run over: plain TCP or TLS.
trait Conn: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> Conn for T {}

/// The client behind [`Runtime::http_client`](mcp_driver::Runtime::http_client).
struct HyperClient {
    rt: AsyncStdRuntime,
    tls: TlsConnector,
    connect_timeout: Duration,
    user_agent: Option<String>,
    pool: Pool,
}

pub(crate) fn client(
    rt: AsyncStdRuntime,
    config: &HttpClientConfig,
) -> io::Result<Arc<dyn HttpClient>> {
    let mut roots = rustls::RootCertStore::empty();
    // Unreadable system certificates are skipped, as reqwest does: the others still count.
    roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
    let invalid = |e: &dyn std::fmt::Display| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("the custom root certificate is not usable: {e}"),
        )
    };
    for pem in &config.root_certificates {
        let certs = CertificateDer::pem_slice_iter(pem)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| invalid(&e))?;
        if certs.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the custom root certificate holds no PEM certificate",
            ));
        }
        for cert in certs {
            roots.add(cert).map_err(|e| invalid(&e))?;
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| io::Error::other(format!("could not set up TLS: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    tls.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(HyperClient {
        rt,
        tls: TlsConnector::from(Arc::new(tls)),
        connect_timeout: config.connect_timeout.unwrap_or(DEFAULT_CONNECT_TIMEOUT),
        user_agent: config.user_agent.clone(),
        pool: Pool::default(),
    }))
}

impl HttpClient for HyperClient {
    fn send(&self, request: HttpRequestParts) -> HttpFuture {
        let head = build_request(request, self.user_agent.as_deref());
        let rt = self.rt.clone();
        let tls = self.tls.clone();
        let timeout = self.connect_timeout;
        let pool = self.pool.clone();
        Box::pin(async move {
            let (url, mut request) = head?;
            let origin = origin_of(&url);
            while let Some(mut connection) = pool.take(&origin).await {
                match connection.sender.try_send_request(request).await {
                    Ok(response) => return Ok(respond(response, pool, origin, connection)),
                    Err(mut e) => match e.take_message() {
                        // Never written: the connection closed meanwhile; try another.
                        Some(unsent) => request = unsent,
                        None => return Err(hyper_failure(e.into_error())),
                    },
                }
            }
            let mut connection = open(&url, &tls, timeout, &rt).await?;
            let response = connection
                .sender
                .send_request(request)
                .await
                .map_err(hyper_failure)?;
            Ok(respond(response, pool, origin, connection))
        })
    }
}

/// A new connection to `url`'s origin (TCP, TLS for `https`, the HTTP/1.1 handshake), its
/// task spawned on `rt`, all within `timeout`.
async fn open(
    url: &Url,
    tls: &TlsConnector,
    timeout: Duration,
    rt: &AsyncStdRuntime,
) -> Result<Connection, ExchangeFailure> {
    let stream = smol::future::or(connect(url, tls), async {
        smol::Timer::after(timeout).await;
        Err(ExchangeFailure::new(
            FailureKind::Timeout,
            format!("connecting took longer than {timeout:?}"),
        ))
    })
    .await?;
    let (sender, connection) = hyper::client::conn::http1::handshake(HyperIo::new(stream))
        .await
        .map_err(hyper_failure)?;
    let (handle, registration) = AbortHandle::new_pair();
    rt.spawn(Box::pin(async move {
        // The connection's own error reaches the exchange through `send_request` or the
        // body; nothing to report here.
        let _ = Abortable::new(connection, registration).await;
    }));
    Ok(Connection {
        sender,
        _guard: AbortOnDrop(handle),
    })
}

/// The response as the driver takes it; its body owns `connection` (see [`PooledBody`]).
fn respond(
    response: hyper::Response<hyper::body::Incoming>,
    pool: Pool,
    origin: Origin,
    connection: Connection,
) -> HttpResponse {
    let status = response.status().as_u16();
    let mut headers = HeaderList::new();
    for (name, value) in response.headers() {
        // A value outside visible ASCII is passed on lossily, not dropped: the core validates
        // what it reuses and reports what it refuses (an invalid `Mcp-Session-Id`).
        match value.to_str() {
            Ok(v) => headers.append(name.as_str(), v),
            Err(_) => headers.append(
                name.as_str(),
                String::from_utf8_lossy(value.as_bytes()).into_owned(),
            ),
        }
    }
    let body = BodyStream::new(response.into_body())
        .map_err(hyper_failure)
        .try_filter_map(|frame| future::ready(Ok(frame.into_data().ok().map(Vec::from))))
        .boxed();
    let body = PooledBody::new(body, pool, origin, connection).boxed();
    HttpResponse::new(status, headers, body)
}

/// The request as hyper sends it (origin-form target, `Host`, `User-Agent`), and its URL.
fn build_request(
    parts: HttpRequestParts,
    user_agent: Option<&str>,
) -> Result<(Url, hyper::Request<Full<Bytes>>), ExchangeFailure> {
    let other = |m: String| ExchangeFailure::new(FailureKind::Other, m);
    let method = match parts.method {
        Method::Get => hyper::Method::GET,
        Method::Post => hyper::Method::POST,
        Method::Delete => hyper::Method::DELETE,
        m => return Err(other(format!("unsupported method {m:?}"))),
    };
    let url = parts.url;
    let host = url
        .host_str()
        .ok_or_else(|| other(format!("the URL {} has no host", url.as_str())))?;
    let authority = match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    };
    let target = match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_owned(),
    };
    let mut builder = hyper::Request::builder().method(method).uri(target);
    let mut has = (false, false);
    for (name, value) in parts.headers.iter() {
        has.0 |= name.eq_ignore_ascii_case("host");
        has.1 |= name.eq_ignore_ascii_case("user-agent");
        builder = builder.header(name, value);
    }
    if !has.0 {
        builder = builder.header("host", authority);
    }
    if let (false, Some(ua)) = (has.1, user_agent) {
        builder = builder.header("user-agent", ua);
    }
    // The message names the failing part only: header values may be credentials.
    let request = builder
        .body(Full::new(Bytes::from(parts.body)))
        .map_err(|_| other("a request header is not valid HTTP".to_owned()))?;
    Ok((url, request))
}

/// TCP to the URL's host, then TLS for `https`.
async fn connect(url: &Url, tls: &TlsConnector) -> Result<Box<dyn Conn>, ExchangeFailure> {
    let port = url.port_or_known_default().unwrap_or(80);
    let connected = match url.host() {
        Some(Host::Domain(d)) => TcpStream::connect((d, port)).await,
        Some(Host::Ipv4(a)) => TcpStream::connect(SocketAddr::from((a, port))).await,
        Some(Host::Ipv6(a)) => TcpStream::connect(SocketAddr::from((a, port))).await,
        None => Err(io::Error::new(io::ErrorKind::InvalidInput, "no host")),
    };
    let tcp = connected.map_err(|e| {
        ExchangeFailure::new(FailureKind::Connect, format!("could not connect: {e}"))
    })?;
    // Small writes (a request head, then its body) must not wait for Nagle.
    let _ = tcp.set_nodelay(true);
    match url.scheme() {
        "http" => Ok(Box::new(tcp)),
        "https" => {
            let name = match url.host() {
                Some(Host::Domain(d)) => ServerName::try_from(d.to_owned()).ok(),
                Some(Host::Ipv4(a)) => Some(ServerName::from(std::net::IpAddr::from(a))),
                Some(Host::Ipv6(a)) => Some(ServerName::from(std::net::IpAddr::from(a))),
                None => None,
            }
            .ok_or_else(|| ExchangeFailure::new(FailureKind::Tls, "invalid TLS server name"))?;
            let stream = tls.connect(name, tcp).await.map_err(|e| {
                ExchangeFailure::new(FailureKind::Tls, format!("TLS handshake failed: {e}"))
            })?;
            Ok(Box::new(stream))
        }
        s => Err(ExchangeFailure::new(
            FailureKind::Other,
            format!("unsupported URL scheme {s:?}"),
        )),
    }
}

/// hyper's error as the core's failure kind, with its source chain (never a header value).
fn hyper_failure(e: hyper::Error) -> ExchangeFailure {
    let kind = if e.is_parse() || e.is_user() {
        FailureKind::Other
    } else if e.is_timeout() {
        FailureKind::Timeout
    } else {
        // Closed, canceled, incomplete message, body write or read errors: the connection
        // went away mid-exchange.
        FailureKind::Reset
    };
    let mut message = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(s) = source {
        message.push_str(": ");
        message.push_str(&s.to_string());
        source = s.source();
    }
    ExchangeFailure::new(kind, message)
}
