//! Streamable HTTP serving on tokio: hyper 1 (HTTP/1.1) in front of the runtime-neutral
//! [`HttpService`]. This file only moves bytes: it accepts connections, reads each request's
//! head and body (bounded in size and time), hands them to the service and writes the
//! response it gets back, flushing every chunk as it comes. It counts the connections open,
//! and answers one past the core's bound with the core's refusal; it asks the core's
//! [`BodyBudget`] before a body's buffer grows, and answers its refusal. Every MCP decision is
//! the core's.

use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures_util::future::{Either, select};
use http_body_util::BodyExt as _;
use hyper::body::{Frame, Incoming};
use hyper::header::{HeaderName, HeaderValue, InvalidHeaderName, InvalidHeaderValue};
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use mcp_driver::mcp_proto::http::headers::{
    CACHE_CONTROL, CONTENT_TYPE, HeaderList, MCP_SESSION_ID,
};
use mcp_driver::mcp_proto::server::http::{BodyBudget, Refusal};
use mcp_driver::server::ServerHandler;
use mcp_driver::server::http::{HttpResponse, HttpService, ResponseAborted, StreamableHttp};
use tokio::io::AsyncWriteExt as _;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::TokioRuntime;
use crate::body_hold::{BodyHold, SharedBudget};
use crate::recycling_timer::RecyclingTimer;
use crate::server::ServerHandle;
use crate::when_woken::WhenWoken;

/// How long a client may take to send a request's head (a connection that trickles bytes
/// must not hold a task for ever).
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// The bound of hyper's buffers of a connection (a body passes through the input buffer on
/// its way to its own buffer, counted in the budget; a request head that outgrows it, past
/// some 100 KiB, gets 431). Hyper's default, about 400 KiB, would let many connections with
/// fast bodies hold more than the budget itself.
const READ_BUFFER_BYTES: usize = 64 * 1024;

/// A running Streamable HTTP server: its address, and its shutdown. Dropping the handle does
/// not stop the server; [`shutdown`](Self::shutdown) does.
#[derive(Debug)]
pub struct HttpServerHandle {
    addr: SocketAddr,
    service: HttpService,
    budget: SharedBudget,
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

    /// The bytes the request bodies being received hold now, across every connection (at
    /// most the budget of
    /// [`HttpServerConfig::max_body_bytes_in_flight`](mcp_driver::mcp_proto::server::http::HttpServerConfig::max_body_bytes_in_flight)).
    #[must_use]
    pub fn body_bytes_in_flight(&self) -> usize {
        self.budget.held()
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
    let bounds = Bounds {
        max_body: server.config().max_body_bytes,
        body_timeout: server.config().body_timeout,
        max_connections: server.config().max_connections,
    };
    let budget = SharedBudget::new(BodyBudget::new(server.config()));
    let (service, driver) = server.start(TokioRuntime::current(), factory);
    let driver = tokio::spawn(driver);
    let (stop, stopped) = watch::channel(false);
    let accept = tokio::spawn(accept_loop(
        listener,
        service.clone(),
        bounds,
        budget.clone(),
        stopped,
    ));
    Ok(HttpServerHandle {
        addr,
        service,
        budget,
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

/// The core's bounds this file enforces: a body's size and time, and the connections open
/// (the bytes of all bodies being read are the [`SharedBudget`]'s).
#[derive(Clone, Copy, Debug)]
struct Bounds {
    max_body: usize,
    body_timeout: Duration,
    max_connections: usize,
}

/// Counts a connection while it is served.
struct Counted(Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

async fn accept_loop(
    listener: TcpListener,
    service: HttpService,
    bounds: Bounds,
    budget: SharedBudget,
    mut stop: watch::Receiver<bool>,
) {
    let open = Arc::new(AtomicUsize::new(0));
    // Whether the last connection was refused: the log says so once per run of refusals.
    let refusing = AtomicBool::new(false);
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
                if open.load(Ordering::Relaxed) >= bounds.max_connections {
                    let refusal = Refusal::TooManyConnections {
                        limit: bounds.max_connections,
                    };
                    if !refusing.swap(true, Ordering::Relaxed) {
                        tracing::warn!(
                            "{} connections are open, the most this server takes: each new \
                             one gets 503 until one closes",
                            bounds.max_connections
                        );
                    }
                    tokio::spawn(refuse_connection(stream, refusal));
                    continue;
                }
                refusing.store(false, Ordering::Relaxed);
                open.fetch_add(1, Ordering::Relaxed);
                let counted = Counted(open.clone());
                // Answers go out as soon as they are written, not after Nagle's delay.
                let _ = stream.set_nodelay(true);
                tokio::spawn(serve_connection(
                    stream,
                    service.clone(),
                    bounds,
                    budget.clone(),
                    stop.clone(),
                    counted,
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

/// How long a refused connection gets to take its answer before it is closed anyway.
const REFUSAL_WRITE_TIMEOUT: Duration = Duration::from_secs(5);

/// Answers a connection past the bound with the core's refusal, without reading its
/// request, and closes it.
async fn refuse_connection(mut stream: tokio::net::TcpStream, refusal: Refusal) {
    let body = refusal.body();
    let status = refusal.status();
    let reason = hyper::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("");
    let mut answer = format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    answer.extend_from_slice(&body);
    let write = async {
        stream.write_all(&answer).await?;
        stream.shutdown().await
    };
    let _ = tokio::time::timeout(REFUSAL_WRITE_TIMEOUT, write).await;
}

async fn serve_connection(
    stream: tokio::net::TcpStream,
    service: HttpService,
    bounds: Bounds,
    budget: SharedBudget,
    mut stop: watch::Receiver<bool>,
    _counted: Counted,
) {
    let handler =
        service_fn(move |request| exchange(service.clone(), bounds, budget.body(), request));
    let connection = hyper::server::conn::http1::Builder::new()
        // One tokio timer for the connection's header-read deadlines, not one per request.
        .timer(RecyclingTimer::default())
        .header_read_timeout(HEADER_READ_TIMEOUT)
        .max_buf_size(READ_BUFFER_BYTES)
        .serve_connection(TokioIo::new(stream), handler);
    let mut connection = std::pin::pin!(connection);
    let first = {
        // The stop is looked at when it fires, not on each of the connection's wake-ups.
        let stop = std::pin::pin!(stop_signal(&mut stop));
        let stopped = WhenWoken::new(stop);
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

/// One request: read it (bounded; `hold` counts its body in the server's budget), hand it to
/// the service, answer with its response.
async fn exchange(
    service: HttpService,
    bounds: Bounds,
    hold: BodyHold,
    request: hyper::Request<Incoming>,
) -> Result<hyper::Response<ResponseBody>, Infallible> {
    let (parts, body) = request.into_parts();
    // hyper's header names are in lower case already.
    let mut fields = Vec::with_capacity(parts.headers.len());
    fields.extend(
        parts
            .headers
            .iter()
            .map(|(name, value)| (name.as_str().to_owned(), header_text(value))),
    );
    let headers = HeaderList::from_lower_case(fields);
    // On every way out of the read (the body complete, broken off, refused, timed out, the
    // connection dropped) the hold goes with the read or its body, and gives its bytes back.
    let read = tokio::time::timeout(bounds.body_timeout, read_body(body, bounds.max_body, hold));
    let body = match read.await {
        Ok(BodyRead::Complete(body)) => body,
        // The client broke off its own request: nobody is reading an answer.
        Ok(BodyRead::BrokenOff) => return Ok(plain(400, "the request body was not received")),
        Ok(BodyRead::Refused(refusal)) => {
            tracing::debug!("{}", String::from_utf8_lossy(&refusal.body()));
            // Its body unread, the connection cannot carry another request: hyper closes it.
            return Ok(refused(&refusal));
        }
        Err(_) => {
            let refusal = Refusal::BodyTimeout {
                after: bounds.body_timeout,
            };
            tracing::debug!("{}", String::from_utf8_lossy(&refusal.body()));
            // Its body unread, the connection cannot carry another request: hyper closes it.
            return Ok(refused(&refusal));
        }
    };
    let mut response = service.handle(
        parts.method.as_str(),
        parts.uri.path(),
        headers,
        &body.bytes,
    );
    // The service keeps what it needs of the body: its buffer and its hold go now, not when
    // the answer is ready.
    drop(body);
    let Ok((status, headers)) = response.head().await else {
        return Ok(plain(503, "the server is shutting down"));
    };
    let mut out = hyper::Response::new(ResponseBody::Service(response));
    *out.status_mut() =
        hyper::StatusCode::from_u16(status).unwrap_or(hyper::StatusCode::INTERNAL_SERVER_ERROR);
    for (name, value) in headers.iter() {
        match (response_header_name(name), response_header_value(value)) {
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

/// A response header's name: those the core puts on every response are constants (no
/// parse, no copy), any other is parsed.
fn response_header_name(name: &str) -> Result<HeaderName, InvalidHeaderName> {
    const MCP_SESSION_ID_NAME: HeaderName = HeaderName::from_static(MCP_SESSION_ID);
    match name {
        CONTENT_TYPE => Ok(hyper::header::CONTENT_TYPE),
        MCP_SESSION_ID => Ok(MCP_SESSION_ID_NAME),
        CACHE_CONTROL => Ok(hyper::header::CACHE_CONTROL),
        _ => HeaderName::from_bytes(name.as_bytes()),
    }
}

/// A response header's value: the content types and cache directive the core puts on every
/// response are constants, any other is checked and copied.
fn response_header_value(value: &str) -> Result<HeaderValue, InvalidHeaderValue> {
    match value {
        "application/json" => Ok(HeaderValue::from_static("application/json")),
        "text/event-stream" => Ok(HeaderValue::from_static("text/event-stream")),
        "no-cache" => Ok(HeaderValue::from_static("no-cache")),
        _ => HeaderValue::from_str(value),
    }
}

/// A header value as text: as sent when it is UTF-8 (nearly always visible ASCII), else with
/// replacement characters. The same text either way: hyper's visible-ASCII check comes
/// first (cheaper than a UTF-8 check on a short value), UTF-8 beyond it (obs-text) takes the
/// replacing scan, which leaves valid UTF-8 as it is.
fn header_text(value: &HeaderValue) -> String {
    match value.to_str() {
        Ok(text) => text.to_owned(),
        Err(_) => String::from_utf8_lossy(value.as_bytes()).into_owned(),
    }
}

/// A body read whole (or to the byte past the bound), with its share of the budget.
struct ReceivedBody {
    bytes: Vec<u8>,
    _hold: BodyHold,
}

/// How reading a body ended.
enum BodyRead {
    Complete(ReceivedBody),
    /// The client broke off.
    BrokenOff,
    /// The budget of all bodies being read has no room for its next bytes.
    Refused(Refusal),
}

/// Reads a body, keeping at most `max + 1` bytes: a larger body reaches the service
/// truncated to that (it answers 413) without being held whole. The buffer's growth is asked
/// of the budget first (`hold`): it doubles, up to `max + 1`, so what is counted is what the
/// buffer takes.
async fn read_body(mut body: Incoming, max: usize, mut hold: BodyHold) -> BodyRead {
    let bound = max.saturating_add(1);
    let mut out = Vec::new();
    while let Some(frame) = body.frame().await {
        let Ok(frame) = frame else {
            return BodyRead::BrokenOff;
        };
        if let Ok(data) = frame.into_data() {
            let room = bound.saturating_sub(out.len());
            let kept = &data[..data.len().min(room)];
            let needed = out.len() + kept.len();
            if needed > out.capacity() {
                let capacity = needed.max(out.capacity().saturating_mul(2)).min(bound);
                if let Err(refusal) = hold.grow(capacity - out.capacity()) {
                    return BodyRead::Refused(refusal);
                }
                out.reserve_exact(capacity - out.len());
            }
            out.extend_from_slice(kept);
            if out.len() > max {
                break;
            }
        }
    }
    BodyRead::Complete(ReceivedBody {
        bytes: out,
        _hold: hold,
    })
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

/// The core's refusal of a request the service was never given.
fn refused(refusal: &Refusal) -> hyper::Response<ResponseBody> {
    let mut out = hyper::Response::new(ResponseBody::Text(Some(Bytes::from(refusal.body()))));
    *out.status_mut() = hyper::StatusCode::from_u16(refusal.status())
        .unwrap_or(hyper::StatusCode::INTERNAL_SERVER_ERROR);
    out.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
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

#[cfg(test)]
mod tests {
    use hyper::header::{HeaderName, HeaderValue};
    use proptest::prelude::*;

    use super::{header_text, response_header_name, response_header_value};

    /// The bytes hyper accepts in a value, ASCII and beyond, and a few it refuses.
    fn value_byte() -> impl Strategy<Value = u8> {
        prop_oneof![8 => 0x20u8..0x7f, 4 => 0x80u8..=0xff, 1 => Just(b'\t'), 1 => any::<u8>()]
    }

    proptest! {
        /// Any value hyper accepts becomes the text a lossy UTF-8 reading of its bytes gives:
        /// visible ASCII as it is, UTF-8 obs-text as it is, other bytes replaced.
        #[test]
        fn header_text_is_the_lossy_reading(bytes in proptest::collection::vec(value_byte(), 0..40)) {
            if let Ok(value) = HeaderValue::from_bytes(&bytes) {
                prop_assert_eq!(header_text(&value), String::from_utf8_lossy(&bytes));
            }
        }
    }

    proptest! {
        /// The constants are the names and values parsing gives, and any other is parsed.
        #[test]
        fn response_heads_are_what_parsing_gives(
            name in prop_oneof![
                Just("content-type".to_owned()),
                Just("mcp-session-id".to_owned()),
                Just("cache-control".to_owned()),
                "[a-zA-Z0-9 :-]{0,16}",
            ],
            value in prop_oneof![
                Just("application/json".to_owned()),
                Just("text/event-stream".to_owned()),
                Just("no-cache".to_owned()),
                "[ -~\n]{0,16}",
            ],
        ) {
            prop_assert_eq!(
                response_header_name(&name).ok(),
                HeaderName::from_bytes(name.as_bytes()).ok()
            );
            prop_assert_eq!(response_header_value(&value).ok(), HeaderValue::from_str(&value).ok());
        }
    }

    #[test]
    fn utf8_and_other_bytes_beyond_ascii() {
        let utf8 = HeaderValue::from_bytes("caf\u{e9}".as_bytes()).expect("obs-text is accepted");
        assert_eq!(header_text(&utf8), "caf\u{e9}");
        let latin1 = HeaderValue::from_bytes(b"caf\xe9").expect("obs-text is accepted");
        assert_eq!(header_text(&latin1), "caf\u{fffd}");
    }
}
