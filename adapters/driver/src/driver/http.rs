//! The HTTP transport of the driver: performs the exchanges `mcp_proto::http::Connection`
//! asks for with the runtime's [`HttpClient`] and reports heads, body chunks, ends and
//! failures back, as they arrive. Every decision (headers, redirects, retries, resumption,
//! session ids, deadlines) is the connection's.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use futures_util::StreamExt as _;
use mcp_proto::http::headers::HeaderList;
use mcp_proto::http::{Connection, ExchangeError, ExchangeFailure, ExchangeId, HttpEvent};

use super::{Link, Observed, TransportIo};
use crate::http::{BodyStream, HttpClient, HttpFuture};
use crate::notify::{Gap, GapCause};
use crate::options::HttpTrace;
use crate::runtime::Runtime;
use crate::shared::Notice;

/// Body chunks taken from one exchange per round, so that one busy stream cannot starve the
/// others (the driver comes back at once when it stopped early).
const CHUNKS_PER_ROUND: usize = 16;

/// Where one exchange is.
enum Open {
    /// Waiting for the response head.
    Head(HttpFuture),
    /// Reading the body.
    Body(BodyStream),
}

/// The exchanges of one HTTP connection. Dropping one aborts it.
pub(crate) struct HttpIo {
    client: Arc<dyn HttpClient>,
    open: BTreeMap<ExchangeId, Open>,
    /// The builder's wire tap: request bodies as sent, response body chunks as received.
    wire: Option<crate::options::WireTap>,
    /// The builder's HTTP trace: every step of every exchange.
    trace: Option<crate::options::HttpTraceTap>,
}

/// What happened to an exchange, to be reported to the connection.
enum Input {
    Head(u16, HeaderList),
    Chunk(Vec<u8>),
    End,
    Failed(ExchangeFailure),
}

impl HttpIo {
    pub(crate) fn new(
        client: Arc<dyn HttpClient>,
        wire: Option<crate::options::WireTap>,
        trace: Option<crate::options::HttpTraceTap>,
    ) -> Self {
        Self {
            client,
            open: BTreeMap::new(),
            wire,
            trace,
        }
    }

    /// Reports one step to the HTTP trace, if there is one.
    fn trace(&self, step: HttpTrace<'_>) {
        if let Some(trace) = &self.trace {
            trace(step);
        }
    }

    /// Starts the exchanges the connection asks for and drops the ones it aborts.
    fn take_commands(&mut self, server: &str, now: Instant, conn: &mut Connection) -> bool {
        let mut any = false;
        while let Some(request) = conn.poll_exchange(now) {
            any = true;
            // Neither the query (it may carry an API key) nor any header value is logged.
            tracing::debug!(
                server,
                exchange = %request.id,
                method = request.method.as_str(),
                path = request.url.path(),
                purpose = ?request.purpose,
                "http exchange"
            );
            if let Some(tap) = &self.wire
                && !request.body.is_empty()
            {
                tap(crate::options::WireDirection::Sent, &request.body);
            }
            self.trace(HttpTrace::Request {
                exchange: request.id.get(),
                method: request.method.as_str(),
                url: &request.url,
                headers: &request.headers,
                body: &request.body,
            });
            let id = request.id;
            let future = self.client.send(request.into());
            self.open.insert(id, Open::Head(future));
        }
        while let Some(id) = conn.poll_abort() {
            any = true;
            if self.open.remove(&id).is_some() {
                tracing::trace!(server, exchange = %id, "http exchange aborted");
                self.trace(HttpTrace::Aborted { exchange: id.get() });
            }
        }
        any
    }

    /// Polls every open exchange once; what happened, in order.
    fn poll_open(&mut self, cx: &mut Context<'_>) -> Vec<(ExchangeId, Input)> {
        let mut inputs = Vec::new();
        let mut more = false;
        self.open.retain(|&id, open| match open {
            Open::Head(future) => match future.as_mut().poll(cx) {
                Poll::Ready(Ok(response)) => {
                    inputs.push((id, Input::Head(response.status, response.headers)));
                    *open = Open::Body(response.body);
                    // The body is read next round, after the connection saw the head (it may
                    // abort the exchange at once, for a 404 or a redirect).
                    more = true;
                    true
                }
                Poll::Ready(Err(failure)) => {
                    inputs.push((id, Input::Failed(failure)));
                    false
                }
                Poll::Pending => true,
            },
            Open::Body(body) => {
                for _ in 0..CHUNKS_PER_ROUND {
                    match body.poll_next_unpin(cx) {
                        Poll::Ready(Some(Ok(chunk))) => {
                            if !chunk.is_empty() {
                                inputs.push((id, Input::Chunk(chunk)));
                            }
                        }
                        Poll::Ready(Some(Err(failure))) => {
                            inputs.push((id, Input::Failed(failure)));
                            return false;
                        }
                        Poll::Ready(None) => {
                            inputs.push((id, Input::End));
                            return false;
                        }
                        Poll::Pending => return true,
                    }
                }
                more = true;
                true
            }
        });
        if more {
            cx.waker().wake_by_ref();
        }
        inputs
    }

    /// One round: commands from the connection, then what the exchanges did, fed back.
    /// Polling happens outside the state lock (it is taken for each step), so handles are
    /// never blocked behind network I/O.
    fn poll_round(&mut self, cx: &mut Context<'_>, now: Instant, shared: &Shared) -> bool {
        let server = &*shared.name;
        let any = self.take_commands(server, now, &mut shared.lock().core);
        let mut inputs = self.poll_open(cx);
        if inputs.is_empty() {
            return any;
        }
        let mut state = shared.lock();
        let conn = &mut state.core;
        for (id, input) in inputs.drain(..) {
            match input {
                Input::Head(status, headers) => {
                    tracing::trace!(server, exchange = %id, status, "http response");
                    self.trace(HttpTrace::Response {
                        exchange: id.get(),
                        status,
                        headers: &headers,
                    });
                    conn.handle_response_head(now, id, status, headers);
                }
                Input::Chunk(chunk) => {
                    if let Some(tap) = &self.wire {
                        tap(crate::options::WireDirection::Received, &chunk);
                    }
                    self.trace(HttpTrace::Body {
                        exchange: id.get(),
                        chunk: &chunk,
                    });
                    conn.handle_body(now, id, &chunk);
                }
                Input::End => {
                    self.trace(HttpTrace::End { exchange: id.get() });
                    conn.handle_body_end(now, id);
                }
                Input::Failed(failure) => {
                    tracing::debug!(server, exchange = %id, %failure, "http exchange failed");
                    self.trace(HttpTrace::Failed {
                        exchange: id.get(),
                        failure: &failure,
                    });
                    conn.handle_failure(now, id, failure);
                }
            }
        }
        self.take_commands(server, now, conn);
        true
    }
}

/// The shared state of an HTTP connection.
type Shared = crate::shared::Shared<Connection>;

impl<R: Runtime> TransportIo<R> for HttpIo {
    type Conn = Connection;

    /// Nothing arrives on its own: responses are read in the output half, right after the
    /// exchanges they answer were started.
    fn poll_input(
        &mut self,
        _cx: &mut Context<'_>,
        _now: Instant,
        _link: &Link<'_, R, Connection>,
    ) -> bool {
        false
    }

    fn poll_output(
        &mut self,
        cx: &mut Context<'_>,
        now: Instant,
        link: &Link<'_, R, Connection>,
    ) -> bool {
        self.poll_round(cx, now, link.shared)
    }

    /// Reports the event as a tracing event; a session reset (the core already restored the
    /// subscriptions and the log level) is also the gap its subscribers are told of.
    fn observe(server: &str, event: HttpEvent) -> Observed<HttpEvent> {
        trace_http_event(server, &event);
        match event {
            HttpEvent::SessionReset { since, until, .. } => Observed::Notice(Notice::Gap(Gap {
                cause: GapCause::SessionExpired,
                since,
                until,
            })),
            HttpEvent::ListenResumed {
                handle,
                since,
                until,
            } => Observed::Notice(Notice::ListenGap {
                handle,
                gap: Gap {
                    cause: GapCause::StreamBroken,
                    since,
                    until,
                },
            }),
            HttpEvent::RestoreFailed {
                uri: Some(uri),
                error,
                ..
            } => Observed::Notice(Notice::Refused { uri, error }),
            _ => Observed::Seen,
        }
    }

    /// Nothing of its own to shut down: the connection sends the DELETE (bounded by its close
    /// deadline) and reports when it is finished; open exchanges drop with the driver.
    fn poll_shutdown(
        &mut self,
        _cx: &mut Context<'_>,
        _now: Instant,
        _link: &Link<'_, R, Connection>,
    ) -> bool {
        true
    }

    /// Every deadline is the connection's.
    fn next_deadline(&self, _closed: bool) -> Option<Instant> {
        None
    }
}

/// Reports one of the connection's own events as a tracing event. No header value is in any
/// of them.
fn trace_http_event(server: &str, event: &HttpEvent) {
    match event {
        HttpEvent::TransportSelected(t) => {
            tracing::debug!(server, transport = ?t, "http transport selected")
        }
        // Also a session diagnostic, which the dispatch reports at warn level.
        HttpEvent::InvalidSessionId(e) => {
            tracing::debug!(server, error = %e, "the server's session id was refused")
        }
        HttpEvent::SessionExpired { reinitializing, .. } => {
            tracing::info!(server, reinitializing, "the server's session expired")
        }
        // A warning, shown by default: the server forgot the session (it restarted, say), and
        // notifications sent meanwhile may be lost.
        HttpEvent::SessionReset {
            resent, restored, ..
        } => {
            tracing::warn!(
                server,
                resent,
                restored,
                "the server had forgotten the session; a new session was established"
            );
        }
        HttpEvent::ListenerOpened => tracing::debug!(server, "listening for server messages"),
        HttpEvent::ListenerUnavailable { status } => {
            tracing::debug!(server, status, "the server offers no listener stream");
        }
        HttpEvent::StreamResumed { stream, .. } => {
            tracing::debug!(server, %stream, "stream resumed");
        }
        HttpEvent::RestoreFailed { method, error, .. } => {
            tracing::warn!(server, method, %error, "restoring after a session reset failed");
        }
        HttpEvent::ExchangeFailed { purpose, error } => match error {
            ExchangeError::Status(e) => {
                tracing::warn!(server, ?purpose, status = e.status, "{e}");
            }
            other => tracing::warn!(server, ?purpose, "http exchange failed: {other}"),
        },
        HttpEvent::EventTooLarge { discarded } => {
            tracing::warn!(
                server,
                discarded,
                "an SSE event over the size limit was dropped"
            );
        }
        HttpEvent::Finished => tracing::debug!(server, "http connection finished"),
        HttpEvent::ToolDropped { name, reason } => {
            tracing::warn!(server, tool = name, reason, "tool dropped");
        }
        other => tracing::debug!(server, event = ?other, "http event"),
    }
}
