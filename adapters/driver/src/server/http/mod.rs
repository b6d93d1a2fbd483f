//! The Streamable HTTP side of the server driver: one core `HttpServer`
//! ([`mcp_proto::server::http`], many sessions) behind any HTTP library, on any [`Runtime`].
//!
//! The host's HTTP library hands each request to [`HttpService::handle`] (method, path,
//! header fields, the whole body) and writes the [`HttpResponse`] it gets back: the head,
//! then each body chunk as it comes (SSE streams stay open), flushing every chunk. The
//! [`HttpServiceDriver`] future executes everything else: it writes what the core produces to
//! the right responses, runs the handler of each session, arms the timer of the core's
//! deadlines (request timeouts, idle sessions).
//!
//! **One handler per session.** The host gives a factory, called with each new session's
//! [`ServerHandle`] (`initialize` in stateful mode, each POST in stateless mode); the handler
//! it returns serves that session alone, exactly as a stdio server's handler serves its one
//! client: the same [`ServerHandler`] trait, the same [`RequestContext`] (progress,
//! cancellation, requests to the client, which go on the request's own SSE stream), the same
//! guarantees (a panicking handler answers `-32603`, every request to the client completes
//! once). A host whose handler keeps no per-session state returns a clone of one.
//!
//! **Disconnection is not cancellation** (the MCP rule): in stateful mode a client that drops
//! a POST's SSE stream can resume it with `Last-Event-ID` and the request runs on; in
//! stateless mode nothing can resume it, so the POST's requests are cancelled.
//!
//! **Bounds.** The core bounds sessions, streams and replay logs; the driver bounds what a
//! response holds that its client has not read ([`StreamableHttp::max_unread`]): past it the
//! response is aborted (the client may resume it) and what it held is freed at once, not
//! when the client's connection ends, so a client that opens stream after stream and reads
//! none holds no more than one bound's worth.
//!
//! [`RequestContext`]: super::RequestContext

mod driver;
mod response;
mod wire;

use crate::shared::CounterMap;
use std::sync::Arc;
use std::time::Instant;

use mcp_proto::http::headers::HeaderList;
pub use mcp_proto::server::http::{HttpMode, HttpServerConfig, OriginCheck};
use mcp_proto::server::http::{HttpServer, Output, RequestHead, ResponseId};

pub use driver::HttpServiceDriver;
pub use response::{HttpResponse, ResponseAborted};
pub use wire::ServerWire;

use super::ServerHandle;
use super::handler::ServerHandler;
use super::state::{Conn, ServerState, Shared};
use crate::runtime::Runtime;
use response::{Part, ResponseSink};
use wire::OnWire;

/// The path of the MCP endpoint unless [`StreamableHttp::path`] says otherwise.
pub const DEFAULT_PATH: &str = "/mcp";

/// Body bytes a response may hold that its client has not read (default 8 MiB).
const DEFAULT_MAX_UNREAD: usize = 8 << 20;

/// Makes the handler of each new session.
pub(crate) type Factory = Arc<dyn Fn(&ServerHandle) -> Arc<dyn ServerHandler> + Send + Sync>;

/// How to serve MCP over Streamable HTTP: the core's [`HttpServerConfig`] (mode, `Origin`
/// check, bearer token, bounds, the MCP server each session runs) plus the endpoint's path.
/// Build it, then [`start`](Self::start).
#[derive(Clone)]
pub struct StreamableHttp {
    config: HttpServerConfig,
    path: String,
    max_unread: usize,
    on_refused: Option<OnRefused>,
    on_wire: Option<OnWire>,
}

impl std::fmt::Debug for StreamableHttp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamableHttp")
            .field("config", &self.config)
            .field("path", &self.path)
            .field("max_unread", &self.max_unread)
            .field("on_refused", &self.on_refused.is_some())
            .field("on_wire", &self.on_wire.is_some())
            .finish()
    }
}

/// Told of each request the server refused ([`StreamableHttp::on_refused`]).
pub type OnRefused = Arc<dyn Fn(&mcp_proto::server::http::Refusal) + Send + Sync>;

impl StreamableHttp {
    /// Serves `config` at [`DEFAULT_PATH`].
    #[must_use]
    pub fn new(config: HttpServerConfig) -> Self {
        StreamableHttp {
            config,
            path: DEFAULT_PATH.to_owned(),
            max_unread: DEFAULT_MAX_UNREAD,
            on_refused: None,
            on_wire: None,
        }
    }

    /// Calls `report` with each request the server refuses (401 without or with a wrong
    /// bearer token, 403 for an Origin, 404 for an unknown session, ...), for an operator's
    /// log: the refusal never holds a token. Called on the driver's task: keep it short.
    #[must_use]
    pub fn on_refused(
        mut self,
        report: impl Fn(&mcp_proto::server::http::Refusal) + Send + Sync + 'static,
    ) -> Self {
        self.on_refused = Some(Arc::new(report));
        self
    }

    /// Calls `trace` with each session's traffic ([`ServerWire`]): each request's body,
    /// then the head, body chunks and end of its response. Refused requests (no session) are
    /// not traced. Called with the server's state locked: keep it short, never call into
    /// the server from it.
    #[must_use]
    pub fn on_wire(mut self, trace: impl Fn(ServerWire<'_>) + Send + Sync + 'static) -> Self {
        self.on_wire = Some(Arc::new(trace));
        self
    }

    /// The endpoint's path (`/mcp` by default); other paths get 404, with a body naming this
    /// path (`no MCP endpoint at /sse; this server's MCP endpoint is /mcp`).
    #[must_use]
    pub fn path(mut self, path: impl Into<String>) -> Self {
        let path = path.into();
        self.path = if path.starts_with('/') {
            path
        } else {
            format!("/{path}")
        };
        self
    }

    /// Body bytes one response may hold that its client has not read yet (default 8 MiB);
    /// past it the response is aborted, as if the client had gone (an SSE client resumes with
    /// `Last-Event-ID`), and what it held is freed. Never less than twice the core's
    /// [`replay_bytes`](HttpServerConfig::replay_bytes): a resumed stream's replay comes in one
    /// burst and must fit.
    #[must_use]
    pub fn max_unread(mut self, bytes: usize) -> Self {
        self.max_unread = bytes.max(1);
        self
    }

    /// The core's configuration.
    #[must_use]
    pub fn config(&self) -> &HttpServerConfig {
        &self.config
    }

    /// Starts the server: the service to hand requests to, and the driver, which must be
    /// polled (spawned) for anything to happen. `factory` makes each new session's handler.
    pub fn start<R, F, H>(self, runtime: R, factory: F) -> (HttpService, HttpServiceDriver<R>)
    where
        R: Runtime,
        F: Fn(&ServerHandle) -> H + Send + Sync + 'static,
        H: ServerHandler,
    {
        let now = runtime.now();
        let max_unread = self
            .max_unread
            .max(self.config.replay_bytes.saturating_mul(2));
        let conn = HttpConn {
            server: HttpServer::new(self.config, now),
            responses: CounterMap::default(),
            max_unread,
            shutting_down: false,
            on_wire: self.on_wire,
        };
        let clock = runtime.clone();
        let shared = Arc::new(Shared::new(Conn::Http(conn), Box::new(move || clock.now())));
        let factory: Factory = Arc::new(move |server: &ServerHandle| {
            Arc::new(factory(server)) as Arc<dyn ServerHandler>
        });
        let service = HttpService {
            shared: shared.clone(),
            path: Arc::from(self.path.as_str()),
        };
        let driver = HttpServiceDriver::new(shared, runtime, factory).on_refused(self.on_refused);
        (service, driver)
    }
}

/// The host's handle on a running Streamable HTTP server: hand it each request. Cheap to
/// clone.
#[derive(Clone)]
pub struct HttpService {
    shared: Arc<Shared>,
    path: Arc<str>,
}

impl std::fmt::Debug for HttpService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpService")
            .field("path", &self.path)
            .field("sessions", &self.sessions())
            .finish_non_exhaustive()
    }
}

impl HttpService {
    /// The endpoint's path.
    #[must_use]
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The live sessions.
    #[must_use]
    pub fn sessions(&self) -> usize {
        conn(&mut self.shared.lock()).server.sessions().count()
    }

    /// Serves one HTTP request: `method`, the request target's `path` (a query is ignored),
    /// its header fields and its whole body (empty for GET and DELETE). Returns the response
    /// to write, at once: its parts come as the server produces them. Never blocks.
    ///
    /// The host bounds the body it reads by [`HttpServerConfig::max_body_bytes`] (the core
    /// answers 413 to a larger one).
    pub fn handle(
        &self,
        method: &str,
        path: &str,
        headers: HeaderList,
        body: &[u8],
    ) -> HttpResponse {
        let path = path.split('?').next().unwrap_or_default();
        if path != &*self.path {
            return HttpResponse::local(404, &wrong_path_text(path, &self.path));
        }
        let now = self.shared.now();
        let mut state = self.shared.lock();
        let http = conn(&mut state);
        if http.shutting_down {
            return HttpResponse::local(503, "Service Unavailable: the server is shutting down");
        }
        // The OS's randomness is drawn only for a request that opens a session (a system
        // call per request otherwise, on every call a session makes).
        let id = http.server.handle_request_with_session_id(
            now,
            &RequestHead::new(method, headers),
            body,
            mint_session_id,
        );
        if let Some(trace) = &http.on_wire
            && let Some(session) = http.server.response_session(id)
        {
            trace(ServerWire::Request { session, body });
        }
        let (response, sink) = HttpResponse::open(self.shared.clone(), id);
        http.responses.insert(id, sink);
        http.pump(now);
        state.wake_driver();
        response
    }

    /// Shuts the server down: every session closes (running handlers are cancelled, pending
    /// requests to clients complete with a close, queued answers go out), every response
    /// ends, new requests get 503, and the driver's future finishes once all is written.
    /// Idempotent.
    pub fn shutdown(&self) {
        let now = self.shared.now();
        let mut state = self.shared.lock();
        let http = conn(&mut state);
        http.shutting_down = true;
        let keys: Vec<_> = http.server.sessions().collect();
        for key in keys {
            http.server.close_session(now, key);
        }
        http.pump(now);
        state.wake_driver();
    }
}

/// The longest part of a request's path repeated in the 404 body (the path is the client's
/// own input; a long one is cut, with `…`).
const MAX_ECHOED_PATH: usize = 200;

/// The body of the 404 for a request to `path`, not the endpoint's `endpoint`: what was
/// asked and where the endpoint is, so a client pointed at `/` or `/sse` learns the path to
/// use.
fn wrong_path_text(path: &str, endpoint: &str) -> String {
    let mut asked: String = path.chars().take(MAX_ECHOED_PATH).collect();
    if asked.len() < path.len() {
        asked.push('…');
    }
    let asked = if asked.is_empty() {
        "/".to_owned()
    } else {
        asked
    };
    format!("no MCP endpoint at {asked}; this server's MCP endpoint is {endpoint}")
}

/// The HTTP connection of an HTTP driver's state.
pub(crate) fn conn(state: &mut ServerState) -> &mut HttpConn {
    match &mut state.conn {
        Conn::Http(http) => http,
        Conn::Stdio(_) => unreachable!(
            "only `StreamableHttp::start` builds HTTP handles, over an HTTP connection"
        ),
    }
}

/// The core's HTTP server and the responses it writes to.
pub(crate) struct HttpConn {
    pub(crate) server: HttpServer,
    responses: CounterMap<ResponseId, ResponseSink>,
    max_unread: usize,
    shutting_down: bool,
    /// The wire trace, if asked for ([`StreamableHttp::on_wire`]).
    on_wire: Option<OnWire>,
}

impl HttpConn {
    /// Writes everything the core produced to its responses. Returns whether there was
    /// anything.
    pub(crate) fn pump(&mut self, now: Instant) -> bool {
        let mut any = false;
        loop {
            let (wrote, gone) = self.drain();
            any |= wrote;
            if gone.is_empty() {
                return any;
            }
            for response in gone {
                self.server.handle_response_closed(now, response);
            }
        }
    }

    /// One pass of [`pump`](Self::pump): whether anything was written, and the responses
    /// dropped on the way.
    fn drain(&mut self) -> (bool, Vec<ResponseId>) {
        let mut any = false;
        let mut gone = Vec::new();
        while let Some(output) = self.server.poll_output() {
            any = true;
            self.trace(&output);
            let (response, part) = match output {
                Output::Head {
                    response,
                    status,
                    headers,
                } => (response, Part::Head { status, headers }),
                Output::Body { response, bytes } => (response, Part::Body(bytes)),
                Output::End { response } => (response, Part::End),
                // Kinds added later have nothing to write yet.
                _ => continue,
            };
            let end = matches!(part, Part::End);
            let Some(sink) = self.responses.get(&response) else {
                continue;
            };
            let sent = sink.send(part);
            if end {
                self.responses.remove(&response);
            } else if !sent {
                // The client went away.
                self.responses.remove(&response);
                gone.push(response);
                if let Some(trace) = &self.on_wire {
                    trace(ServerWire::End { response });
                }
            } else if sink.unread() > self.max_unread {
                // The client reads too slowly to be buffered for: what it has not read is
                // freed now, not when its connection ends.
                if let Some(sink) = self.responses.remove(&response) {
                    sink.abort();
                }
                gone.push(response);
                if let Some(trace) = &self.on_wire {
                    trace(ServerWire::End { response });
                }
            }
        }
        (any, gone)
    }

    /// Tells the wire trace of `output`. A refusal's response has no session: its head is
    /// not traced, and the trace ignores its body and end.
    fn trace(&self, output: &Output) {
        let Some(trace) = &self.on_wire else {
            return;
        };
        match output {
            Output::Head {
                response,
                status,
                headers,
            } => {
                // Only `End` makes the core forget a response's session.
                if let Some(session) = self.server.response_session(*response) {
                    trace(ServerWire::Head {
                        session,
                        response: *response,
                        status: *status,
                        headers,
                    });
                }
            }
            Output::Body { response, bytes } => trace(ServerWire::Body {
                response: *response,
                chunk: bytes,
            }),
            Output::End { response } => trace(ServerWire::End {
                response: *response,
            }),
            // Kinds added later have nothing to trace yet.
            _ => {}
        }
    }

    /// The host dropped a response before its end.
    pub(crate) fn response_closed(&mut self, now: Instant, response: ResponseId) {
        if self.responses.remove(&response).is_some() {
            if let Some(trace) = &self.on_wire {
                trace(ServerWire::End { response });
            }
            self.server.handle_response_closed(now, response);
        }
    }

    /// Drops every response without its end and refuses new requests (the driver is gone).
    pub(crate) fn abort_all(&mut self) {
        self.shutting_down = true;
        self.responses.clear();
    }

    /// Whether the server shut down and has nothing left to write.
    pub(crate) fn finished(&self) -> bool {
        self.shutting_down && self.responses.is_empty() && self.server.sessions().next().is_none()
    }
}

/// A new session's id: 16 bytes of the OS's randomness in hex. Empty when the random source
/// fails, which the core refuses as an id (500): no session is opened without it.
fn mint_session_id() -> String {
    let mut entropy = [0u8; 16];
    match getrandom::getrandom(&mut entropy) {
        Ok(()) => entropy.iter().map(|b| format!("{b:02x}")).collect(),
        Err(e) => {
            tracing::error!(error = %e, "the OS random source failed: no session id");
            String::new()
        }
    }
}
