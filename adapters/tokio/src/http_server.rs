//! Streamable HTTP serving on tokio: hyper 1 (HTTP/1.1) in front of the runtime-neutral
//! [`HttpService`]. This file only moves bytes: it accepts connections, reads each request's
//! head and body (bounded), hands them to the service and writes the response it gets back,
//! flushing every chunk as it comes. Every MCP decision is the core's.

use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures_util::future::{Either, select};
use http_body_util::BodyExt as _;
use hyper::body::{Frame, Incoming};
use hyper::header::{HeaderName, HeaderValue};
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use mcp_driver::mcp_proto::http::headers::HeaderList;
use mcp_driver::server::ServerHandler;
use mcp_driver::server::http::{HttpResponse, HttpService, ResponseAborted, StreamableHttp};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::TokioRuntime;
use crate::server::ServerHandle;

/// How long a client may take to send a request's head (a connection that trickles bytes
/// must not hold a task for ever).
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// A running Streamable HTTP server: its address, and its shutdown. Dropping the handle does
/// not stop the server; [`shutdown`](Self::shutdown) does.
#[derive(Debug)]
pub struct HttpServerHandle {
    addr: SocketAddr,
    service: HttpService,
    stop: watch::Sender<bool>,
    accept: JoinHandle<()>,
    driver: JoinHandle<()>,
}

impl HttpServerHandle {
    /// The address the server listens on (the port the OS chose for port 0).
    #[must_use]
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The endpoint's URL: `http://127.0.0.1:PORT/mcp` (an IPv6 address in brackets).
    #[must_use]
    pub fn url(&self) -> String {
        format!("http://{}{}", self.addr, self.service.path())
    }

    /// The service behind the server (its live sessions, its own shutdown).
    #[must_use]
    pub fn service(&self) -> &HttpService {
        &self.service
    }

    /// Stops accepting connections and shuts the service down: every session ends (running
    /// handlers are cancelled), open streams end, idle connections close. Idempotent; await
    /// [`stopped`](Self::stopped) for the end.
    pub fn shutdown(&self) {
        let _ = self.stop.send(true);
        self.service.shutdown();
    }

    /// Waits until the server stopped: after [`shutdown`](Self::shutdown), once every
    /// session ended and every response was written.
    pub async fn stopped(self) {
        // A join error is a panic of the task, which is over either way.
        let _ = self.accept.await;
        let _ = self.driver.await;
    }
}

/// Starts serving MCP over Streamable HTTP on `listener`, on the current tokio runtime.
/// `factory` makes the handler of each new session from its [`ServerHandle`] (see
/// [`mcp_driver::server::http`]).
///
/// # Errors
///
/// The listener's address cannot be read.
///
/// # Panics
///
/// Outside a tokio runtime.
pub fn start_http<F, H>(
    listener: TcpListener,
    server: StreamableHttp,
    factory: F,
) -> io::Result<HttpServerHandle>
where
    F: Fn(&ServerHandle) -> H + Send + Sync + 'static,
    H: ServerHandler,
{
    let addr = listener.local_addr()?;
    let max_body = server.config().max_body_bytes;
    let (service, driver) = server.start(TokioRuntime::current(), factory);
    let driver = tokio::spawn(driver);
    let (stop, stopped) = watch::channel(false);
    let accept = tokio::spawn(accept_loop(listener, service.clone(), max_body, stopped));
    Ok(HttpServerHandle {
        addr,
        service,
        stop,
        accept,
        driver,
    })
}

/// Serves MCP over Streamable HTTP on `listener` until the server is shut down (through
/// [`HttpServerHandle::shutdown`] of a [`start_http`] server; this form serves for ever).
///
/// # Errors
///
/// The listener's address cannot be read.
///
/// # Panics
///
/// Outside a tokio runtime.
pub async fn serve_http<F, H>(
    listener: TcpListener,
    server: StreamableHttp,
    factory: F,
) -> io::Result<()>
where
    F: Fn(&ServerHandle) -> H + Send + Sync + 'static,
    H: ServerHandler,
{
    start_http(listener, server, factory)?.stopped().await;
    Ok(())
}

/// Completes when the server is told to stop; never when its handle is dropped instead (a
/// dropped handle leaves the server running).
async fn stop_signal(stop: &mut watch::Receiver<bool>) {
    if stop.wait_for(|s| *s).await.is_err() {
        std::future::pending::<()>().await;
    }
}

async fn accept_loop(
    listener: TcpListener,
    service: HttpService,
    max_body: usize,
    mut stop: watch::Receiver<bool>,
) {
    loop {
        let accepted = {
            let accept = std::pin::pin!(listener.accept());
            let stopped = std::pin::pin!(stop_signal(&mut stop));
            match select(accept, stopped).await {
                Either::Left((accepted, _)) => accepted,
                Either::Right(_) => return,
            }
        };
        match accepted {
            Ok((stream, _peer)) => {
                // Answers go out as soon as they are written, not after Nagle's delay.
                let _ = stream.set_nodelay(true);
                tokio::spawn(serve_connection(
                    stream,
                    service.clone(),
                    max_body,
                    stop.clone(),
                ));
            }
            Err(e) => {
                // Out of file descriptors and the like: wait a little rather than spin.
                tracing::warn!(error = %e, "accepting a connection failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

async fn serve_connection(
    stream: tokio::net::TcpStream,
    service: HttpService,
    max_body: usize,
    mut stop: watch::Receiver<bool>,
) {
    let handler = service_fn(move |request| exchange(service.clone(), max_body, request));
    let connection = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT)
        .serve_connection(TokioIo::new(stream), handler);
    let mut connection = std::pin::pin!(connection);
    let first = {
        let stopped = std::pin::pin!(stop_signal(&mut stop));
        match select(connection.as_mut(), stopped).await {
            Either::Left((result, _)) => Some(result),
            Either::Right(_) => None,
        }
    };
    let result = match first {
        Some(result) => result,
        None => {
            // Finish the exchange in progress (the service ends its streams), then close.
            connection.as_mut().graceful_shutdown();
            connection.await
        }
    };
    if let Err(e) = result {
        tracing::debug!(error = %e, "HTTP connection ended with an error");
    }
}

/// One request: read it (bounded), hand it to the service, answer with its response.
async fn exchange(
    service: HttpService,
    max_body: usize,
    request: hyper::Request<Incoming>,
) -> Result<hyper::Response<ResponseBody>, Infallible> {
    let (parts, body) = request.into_parts();
    let headers: HeaderList = parts
        .headers
        .iter()
        .map(|(name, value)| (name.as_str(), header_text(value.as_bytes())))
        .collect();
    let Some(body) = read_body(body, max_body).await else {
        // The client broke off its own request: nobody is reading an answer.
        return Ok(plain(400, "the request body was not received"));
    };
    let mut response = service.handle(parts.method.as_str(), parts.uri.path(), headers, &body);
    let Ok((status, headers)) = response.head().await else {
        return Ok(plain(503, "the server is shutting down"));
    };
    let mut out = hyper::Response::new(ResponseBody::Service(response));
    *out.status_mut() =
        hyper::StatusCode::from_u16(status).unwrap_or(hyper::StatusCode::INTERNAL_SERVER_ERROR);
    for (name, value) in headers.iter() {
        match (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            (Ok(name), Ok(value)) => {
                out.headers_mut().append(name, value);
            }
            _ => tracing::warn!(
                name,
                "a response header that HTTP cannot carry was left out"
            ),
        }
    }
    Ok(out)
}

/// A header value as text: as sent when it is UTF-8 (nearly always ASCII), else with
/// replacement characters. The same text either way; the check of valid UTF-8 alone is a
/// fraction of the replacing scan's cost, paid on every header of every request.
fn header_text(value: &[u8]) -> String {
    match std::str::from_utf8(value) {
        Ok(text) => text.to_owned(),
        Err(_) => String::from_utf8_lossy(value).into_owned(),
    }
}

/// Reads a body, keeping at most `max + 1` bytes: a larger body reaches the service
/// truncated to that (it answers 413) without being held whole. `None` when the client
/// broke off.
async fn read_body(mut body: Incoming, max: usize) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.ok()?;
        if let Ok(data) = frame.into_data() {
            let room = (max + 1).saturating_sub(out.len());
            out.extend_from_slice(&data[..data.len().min(room)]);
            if out.len() > max {
                break;
            }
        }
    }
    Some(out)
}

/// A response made here, when the service was never reached.
fn plain(status: u16, text: &'static str) -> hyper::Response<ResponseBody> {
    let mut out = hyper::Response::new(ResponseBody::Text(Some(Bytes::from_static(
        text.as_bytes(),
    ))));
    *out.status_mut() =
        hyper::StatusCode::from_u16(status).unwrap_or(hyper::StatusCode::INTERNAL_SERVER_ERROR);
    out
}

/// A response's body: the service's chunks as they come (an aborted response is an error,
/// so hyper breaks the connection rather than end the body cleanly), or a text made here.
enum ResponseBody {
    Service(HttpResponse),
    Text(Option<Bytes>),
}

impl hyper::body::Body for ResponseBody {
    type Data = Bytes;
    type Error = ResponseAborted;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, ResponseAborted>>> {
        let response = match self.get_mut() {
            ResponseBody::Service(response) => response,
            ResponseBody::Text(text) => {
                return Poll::Ready(text.take().map(|t| Ok(Frame::data(t))));
            }
        };
        match response.poll_chunk(cx) {
            Poll::Ready(Ok(Some(bytes))) => Poll::Ready(Some(Ok(Frame::data(Bytes::from(bytes))))),
            Poll::Ready(Ok(None)) => Poll::Ready(None),
            Poll::Ready(Err(e)) => Poll::Ready(Some(Err(e))),
            Poll::Pending => Poll::Pending,
        }
    }
}
