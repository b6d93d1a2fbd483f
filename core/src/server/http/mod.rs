//! A sans-IO Streamable HTTP server: the HTTP decisions of the MCP transport (2025-03-26 to
//! 2025-11-25, and 2026-07-28) around a table of [`ServerSession`]s.
//!
//! A POST whose `MCP-Protocol-Version` is 2026-07-28 (when the server's
//! [`ServerConfig::versions`](crate::server::ServerConfig::versions) list it) is that
//! revision's: one request, served by a session of its own that ends with its answer (no
//! `Mcp-Session-Id`; one sent is ignored), its `Mcp-Method` / `Mcp-Name` headers and envelope
//! checked first (400 with `-32020`, `-32602` or `-32022`; 404 with `-32601` for a removed or
//! undeclared method: [`Refusal::Rejected`]); closing its stream cancels it; GET and DELETE
//! get 405. A `subscriptions/listen` POST (it must accept `text/event-stream`: 406 otherwise)
//! is that listen's stream: its acknowledgement and the host's deliveries go on it as SSE
//! events, and it ends with the listen (the host's close sends the `complete` result; the
//! client's close of the stream ends the listen).
//!
//! The host's HTTP library hands each request's head and body to
//! [`HttpServer::handle_request`] and writes what [`HttpServer::poll_output`] gives it: a
//! response head, body chunks, the end, for each [`ResponseId`]. The machine decides
//! everything in between: which session a request belongs to (`Mcp-Session-Id`, 404 for an
//! unknown or ended one, 400 without one after `initialize`), the checks of the head
//! (`Origin` against DNS rebinding: 403; the bearer token: 401; `Accept`: 406;
//! `MCP-Protocol-Version`: 400; the body size: 413), whether a POST is answered with one JSON
//! body or an SSE stream, what goes on the GET stream, event ids and their replay on
//! `Last-Event-ID`, and DELETE. It draws no randomness (the host passes 16 random bytes with
//! each request, used when a session id is minted) and reads no clock.
//!
//! The host answers its sessions' requests through
//! [`session_mut`](HttpServer::session_mut) (or [`related`](HttpServer::related) to send
//! messages on a request's own stream), with the same four groups as [`ServerSession`],
//! listed on [`HttpServer`].
//!
//! # Example: a session's first exchange
//!
//! ```
//! use mcp_proto::http::headers::HeaderList;
//! use mcp_proto::server::ServerConfig;
//! use mcp_proto::server::http::{HttpServer, HttpServerConfig, Output, RequestHead};
//! use mcp_proto::types::Implementation;
//! use std::time::Instant;
//!
//! let now = Instant::now();
//! let config = HttpServerConfig::new(ServerConfig::new(Implementation::new("demo", "1.0")));
//! let mut server = HttpServer::new(config, now);
//!
//! let headers: HeaderList = [
//!     ("accept", "application/json, text/event-stream"),
//!     ("content-type", "application/json"),
//! ]
//! .into_iter()
//! .collect();
//! let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;
//! let entropy = [7u8; 16]; // a real host draws these from its random source
//! let response = server.handle_request(now, &RequestHead::new("POST", headers), body.as_bytes(), entropy);
//!
//! // The drain rule: what to write, then the events.
//! let Some(Output::Head { status, headers, .. }) = server.poll_output() else { panic!() };
//! assert_eq!(status, 200);
//! assert_eq!(headers.get("mcp-session-id"), Some("07".repeat(16).as_str()));
//! let Some(Output::Body { bytes, .. }) = server.poll_output() else { panic!() };
//! assert!(std::str::from_utf8(&bytes).unwrap().contains(r#""protocolVersion":"2025-11-25""#));
//! assert_eq!(server.poll_output(), Some(Output::End { response }));
//! while let Some(event) = server.poll_event() {
//!     // `SessionOpened`, then the session's `InitializeAnswered`: a host answers the
//!     // session's requests through `server.session_mut(key)`.
//!     let _ = event;
//! }
//! ```
//!
//! **Bounds.** Each session's messages are taken from it as soon as it queues them, so the
//! session's own stall close does not apply here; what is held instead is bounded per stream
//! ([`HttpServerConfig::replay_events`], [`HttpServerConfig::replay_bytes`]), per session
//! ([`HttpServerConfig::max_streams_per_session`], [`HttpServerConfig::ended_streams_kept`])
//! and in sessions ([`HttpServerConfig::max_sessions`], [`HttpServerConfig::idle_timeout`]).
//! The request bodies the host's HTTP library is receiving are bounded together by a
//! [`BodyBudget`] ([`HttpServerConfig::max_body_bytes_in_flight`]) it asks before keeping
//! each chunk.
//! A host that stops polling keeps its own outputs, which it alone can bound.
//!
//! **The drain rule.** After every (B) or (C) call, drain `poll_output` until `None`, then
//! `poll_event` until `None`, then sleep until `poll_timeout` or the next input. Every
//! [`ResponseId`] gets exactly one [`Output::Head`], then [`Output::Body`] chunks, then one
//! [`Output::End`] (unless the host reported the connection closed first).

use std::collections::VecDeque;

use crate::rpc::{notifications::ProgressParams, peer_keys::PeerMap};
use crate::session::CounterMap;

use crate::http::headers::{
    CONTENT_TYPE, HeaderList, LAST_EVENT_ID, MCP_SESSION_ID, WWW_AUTHENTICATE,
};
use crate::jsonrpc::{self, ErrorObject};
use crate::server::{ClientRequestId, Event, ServerSession};
use crate::session::{CloseReason, ProtocolVersion};
use crate::time::Instant;

mod body_budget;
mod checks;
mod config;
mod entry;
mod modern;
mod opening;
mod shape;
mod stream;
mod types;

pub use body_budget::BodyBudget;
pub use config::{HttpMode, HttpServerConfig, OriginCheck};
pub use modern::ModernRejection;
pub use types::{HttpEvent, Output, Refusal, RequestHead, ResponseId, SessionKey};

use entry::{Entry, GET_STREAM, Stream};
use opening::NewSessionId;
use shape::BodyShape;

/// The Streamable HTTP server machine (see the [module docs](self)).
///
/// Its methods fall in the four groups of [`ServerSession`]:
///
/// - **(A) getters**: [`config`](Self::config), [`sessions`](Self::sessions),
///   [`session`](Self::session), [`session_id`](Self::session_id),
///   [`response_session`](Self::response_session), [`buffered_bytes`](Self::buffered_bytes).
/// - **(B) inputs**: [`handle_request`](Self::handle_request) (or
///   [`handle_request_with_session_id`](Self::handle_request_with_session_id) for a host that
///   names its sessions), [`handle_response_closed`](Self::handle_response_closed),
///   [`handle_timeout`](Self::handle_timeout).
/// - **(C) commands**: [`session_mut`](Self::session_mut), [`related`](Self::related),
///   [`close_session`](Self::close_session),
///   [`close_request_stream`](Self::close_request_stream).
/// - **(D) outputs**: [`poll_output`](Self::poll_output), [`poll_event`](Self::poll_event),
///   [`poll_timeout`](Self::poll_timeout).
#[derive(Debug)]
pub struct HttpServer {
    config: HttpServerConfig,
    entries: CounterMap<SessionKey, Entry>,
    by_wire_id: PeerMap<String, SessionKey>,
    /// Which session each open response belongs to.
    responses: CounterMap<ResponseId, SessionKey>,
    /// Sessions the host touched through `session_mut`: routed at the next poll.
    dirty: Vec<SessionKey>,
    next_response: u64,
    next_session: u64,
    out: VecDeque<Output>,
    events: VecDeque<HttpEvent>,
    /// The latest instant an input gave (the session close of a stateless POST happens
    /// while polling, which takes none).
    last_now: Instant,
}

impl HttpServer {
    /// A server with no sessions, started at `now`.
    #[must_use]
    pub fn new(config: HttpServerConfig, now: Instant) -> Self {
        HttpServer {
            config,
            entries: CounterMap::default(),
            by_wire_id: PeerMap::default(),
            responses: CounterMap::default(),
            dirty: Vec::new(),
            next_response: 1,
            next_session: 1,
            out: VecDeque::new(),
            events: VecDeque::new(),
            last_now: now,
        }
    }

    // ---- (A) getters -------------------------------------------------------------------

    /// The configuration.
    #[must_use]
    pub fn config(&self) -> &HttpServerConfig {
        &self.config
    }

    /// The live sessions, in no order.
    pub fn sessions(&self) -> impl Iterator<Item = SessionKey> + '_ {
        self.entries.keys().copied()
    }

    /// A live session, for its getters.
    #[must_use]
    pub fn session(&self, key: SessionKey) -> Option<&ServerSession> {
        self.entries.get(&key).map(|e| &e.session)
    }

    /// A session's `Mcp-Session-Id` (`None` in stateless mode or once ended).
    #[must_use]
    pub fn session_id(&self, key: SessionKey) -> Option<&str> {
        self.entries
            .get(&key)
            .map(|e| e.wire_id.as_str())
            .filter(|id| !id.is_empty())
    }

    /// The session `response` belongs to, until its [`Output::End`] is polled (`None` for a
    /// refused request, or once ended).
    #[must_use]
    pub fn response_session(&self, response: ResponseId) -> Option<SessionKey> {
        self.responses.get(&response).copied()
    }

    /// The bytes held for output and for resumption, over all sessions (bounded by the
    /// configuration: sessions times streams times replay bytes, plus what the host has not
    /// polled).
    #[must_use]
    pub fn buffered_bytes(&self) -> usize {
        let logs: usize = self
            .entries
            .values()
            .flat_map(|e| e.streams.values())
            .map(|s| s.log.bytes() + s.answers.iter().map(Vec::len).sum::<usize>())
            .sum();
        let out: usize = self
            .out
            .iter()
            .map(|o| match o {
                Output::Body { bytes, .. } => bytes.len(),
                _ => 0,
            })
            .sum();
        logs + out
    }

    // ---- (B) inputs --------------------------------------------------------------------

    /// Takes one HTTP request with its whole body (empty for GET and DELETE) and returns the
    /// token its response will be written under. `entropy` is 16 random bytes from the host,
    /// used only when the request opens a session (its id is their hex form).
    pub fn handle_request(
        &mut self,
        now: Instant,
        head: &RequestHead,
        body: &[u8],
        entropy: [u8; 16],
    ) -> ResponseId {
        self.take_request(now, head, body, NewSessionId::Entropy(entropy))
    }

    fn take_request(
        &mut self,
        now: Instant,
        head: &RequestHead,
        body: &[u8],
        new_id: NewSessionId<'_>,
    ) -> ResponseId {
        self.last_now = self.last_now.max(now);
        // What the host queued since the last poll goes out first, routed as it was meant.
        self.settle_dirty();
        let response = ResponseId(self.next_response);
        self.next_response += 1;
        if let Err(refusal) = self.serve(now, response, head, body, new_id) {
            self.refuse(response, refusal);
        }
        response
    }

    /// The client's connection for `response` closed before its end. In stateful mode a
    /// POST's answers are still produced and logged for resumption (a disconnection is not a
    /// cancellation); the GET stream's messages wait for the next GET. In stateless mode
    /// nothing can resume the POST, and a 2026-07-28 request's stream is its cancellation, so
    /// their session ends (its requests are cancelled: the host's [`Event::Closed`] stops
    /// their work); so does a session whose `initialize` POST closed before it was answered
    /// (held by a deferred `initialize`): its client never learned its id. Unknown or ended
    /// responses are ignored.
    pub fn handle_response_closed(&mut self, now: Instant, response: ResponseId) {
        self.last_now = self.last_now.max(now);
        let Some(key) = self.responses.remove(&response) else {
            return;
        };
        if let Some(entry) = self.entries.get_mut(&key) {
            entry.detach(response);
            // The idle timeout counts from the last stream's end.
            entry.last_active = entry.last_active.max(now);
            if self.config.mode == HttpMode::Stateless || entry.transient {
                if entry.transient {
                    // The close of a 2026 request's stream is its cancellation, a listen's too.
                    entry.session.listens_cancelled_by_stream_close();
                }
                let why = if entry.transient {
                    "the client closed the request's stream"
                } else {
                    "the client disconnected before its stateless answer"
                };
                entry.session.handle_transport_closed(now, Some(why.into()));
                self.settle(key);
            } else if !entry.wire_id.is_empty() && entry.issued_id().is_empty() {
                // Its `initialize` not answered yet, the client left without learning the
                // session's id: nothing could reach the session again, nor DELETE it.
                let why = "the client left before its initialize was answered";
                entry.session.handle_transport_closed(now, Some(why.into()));
                self.settle(key);
            }
        }
    }

    /// Runs every session's deadlines, and ends the sessions idle for
    /// [`HttpServerConfig::idle_timeout`]; a session that closes ends (its streams end, its
    /// id gets 404).
    pub fn handle_timeout(&mut self, now: Instant) {
        self.last_now = self.last_now.max(now);
        let mut keys: Vec<SessionKey> = self.entries.keys().copied().collect();
        keys.sort_unstable();
        for key in keys {
            if let Some(entry) = self.entries.get_mut(&key) {
                entry.session.handle_timeout(now);
                if entry.has_live_streams() {
                    entry.last_active = entry.last_active.max(now);
                } else if let Some(idle) = self.config.idle_timeout
                    && now >= crate::time::saturating_add(entry.last_active, idle)
                {
                    let detail = format!("idle for {} s", idle.as_secs());
                    entry.session.handle_transport_closed(now, Some(detail));
                }
            }
            self.settle(key);
        }
    }

    // ---- (C) commands ------------------------------------------------------------------

    /// A live session, for its commands (answers, notifications, requests, close). What it
    /// queues is routed at the next [`poll_output`](Self::poll_output): answers to their
    /// POST, progress to the request it reports on, the rest to the GET stream.
    pub fn session_mut(&mut self, key: SessionKey) -> Option<&mut ServerSession> {
        let entry = self.entries.get_mut(&key)?;
        if !self.dirty.contains(&key) {
            self.dirty.push(key);
        }
        Some(&mut entry.session)
    }

    /// Runs `f` on a session with what it queues going to the stream of the client request
    /// `request` (a server-to-client request or a notification made while serving it; the
    /// POST then answers with SSE). When that POST is answered already or its client does
    /// not accept SSE, they go to the GET stream. `None` when the session is not live.
    pub fn related<R>(
        &mut self,
        key: SessionKey,
        request: ClientRequestId,
        f: impl FnOnce(&mut ServerSession) -> R,
    ) -> Option<R> {
        self.settle(key);
        let entry = self.entries.get_mut(&key)?;
        entry.related = entry.by_request.get(&request).copied();
        let result = f(&mut entry.session);
        self.settle(key);
        if let Some(entry) = self.entries.get_mut(&key) {
            entry.related = None;
        }
        Some(result)
    }

    /// Closes the connection of the POST stream of client request `request` without ending
    /// the stream (SEP-1699 polling: the client reconnects with `Last-Event-ID`, after the
    /// [`HttpServerConfig::retry`] delay, and gets the rest, the answer included). `false`
    /// when it cannot be resumed: a session before 2025-11-25, a client that does not accept
    /// SSE, a request answered or unknown.
    pub fn close_request_stream(&mut self, key: SessionKey, request: ClientRequestId) -> bool {
        self.settle(key);
        let Some(entry) = self.entries.get_mut(&key) else {
            return false;
        };
        let mut routed = VecDeque::new();
        let closed = entry.close_request_stream(&self.config, &mut routed, request);
        tag_heads(&mut routed, entry.issued_id());
        self.out.extend(routed);
        closed
    }

    /// Closes a session from the host's side: its pending requests complete
    /// ([`CloseReason::Local`]), its queued answers are flushed, its streams end.
    pub fn close_session(&mut self, now: Instant, key: SessionKey) {
        if let Some(entry) = self.entries.get_mut(&key) {
            entry.session.close(now);
        }
        self.settle(key);
    }

    // ---- (D) outputs -------------------------------------------------------------------

    /// The next thing to write.
    pub fn poll_output(&mut self) -> Option<Output> {
        self.settle_dirty();
        let out = self.out.pop_front()?;
        if let Output::End { response } = &out {
            self.responses.remove(response);
        }
        Some(out)
    }

    /// The next event.
    pub fn poll_event(&mut self) -> Option<HttpEvent> {
        self.settle_dirty();
        self.events.pop_front()
    }

    /// The earliest deadline of any session, or of the idle timeout of one without open
    /// streams.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        let idle = self.config.idle_timeout;
        self.entries
            .values()
            .flat_map(|e| {
                let idle_at = idle
                    .filter(|_| !e.has_live_streams())
                    .map(|d| crate::time::saturating_add(e.last_active, d));
                [e.session.poll_timeout(), idle_at]
            })
            .flatten()
            .min()
    }

    // ---- internals ---------------------------------------------------------------------

    fn refuse(&mut self, response: ResponseId, refusal: Refusal) {
        let mut head = refusal_head(response, refusal.status());
        if let Output::Head { headers, .. } = &mut head {
            match &refusal {
                // RFC 6750 §3.1: no error code when the request had no token at all.
                Refusal::Unauthorized => headers.insert(WWW_AUTHENTICATE, "Bearer"),
                Refusal::InvalidToken => headers.insert(
                    WWW_AUTHENTICATE,
                    "Bearer error=\"invalid_token\", error_description=\"the access token is not the one this server requires\"",
                ),
                Refusal::MethodNotAllowed(_) => headers.insert("allow", self.allowed_methods()),
                _ => {}
            }
        }
        self.out.push_back(head);
        let bytes = refusal.body();
        self.out.push_back(Output::Body { response, bytes });
        self.out.push_back(Output::End { response });
        self.events
            .push_back(HttpEvent::Refused { response, refusal });
    }

    fn allowed_methods(&self) -> &'static str {
        match (self.config.mode, self.config.get_stream) {
            (HttpMode::Stateless, _) => "POST",
            (_, true) => "GET, POST, DELETE",
            (_, false) => "POST, DELETE",
        }
    }

    fn serve(
        &mut self,
        now: Instant,
        response: ResponseId,
        head: &RequestHead,
        body: &[u8],
        new_id: NewSessionId<'_>,
    ) -> Result<(), Refusal> {
        let headers = &head.headers;
        let origin = headers.get("origin");
        if !checks::origin_allowed(&self.config.origin, origin) {
            return Err(Refusal::Origin(origin.unwrap_or_default().to_owned()));
        }
        if let Some(token) = &self.config.bearer_token {
            match checks::bearer(headers, token) {
                checks::BearerCheck::Valid => {}
                checks::BearerCheck::Missing => return Err(Refusal::Unauthorized),
                checks::BearerCheck::Wrong => return Err(Refusal::InvalidToken),
            }
        }
        let speaks = self.config.server.versions.clone();
        let version =
            checks::protocol_version(headers, &speaks).map_err(Refusal::UnsupportedVersion)?;
        let stateless = self.config.mode == HttpMode::Stateless;
        let modern = version.is_some_and(|v| v.era() == crate::session::Era::Discover);
        match head.method.to_ascii_uppercase().as_str() {
            // 2026-07-28 has no GET stream and no DELETE: every request is its own POST.
            "POST" if modern => self.serve_post(now, response, headers, body, new_id, version),
            _ if modern => Err(Refusal::MethodNotAllowed(head.method.clone())),
            "POST" => self.serve_post(now, response, headers, body, new_id, version),
            "GET" if !stateless && self.config.get_stream => self.serve_get(response, headers),
            "DELETE" if !stateless => self.serve_delete(now, response, headers),
            _ => Err(Refusal::MethodNotAllowed(head.method.clone())),
        }
    }

    /// The live session a request names; 400 without a header, 404 for an unknown id.
    fn named_session(&self, headers: &HeaderList) -> Result<SessionKey, Refusal> {
        let id = headers
            .get(MCP_SESSION_ID)
            .ok_or(Refusal::MissingSessionId)?;
        self.by_wire_id
            .get(id.trim())
            .copied()
            .ok_or(Refusal::UnknownSession)
    }

    fn serve_post(
        &mut self,
        now: Instant,
        response: ResponseId,
        headers: &HeaderList,
        body: &[u8],
        new_id: NewSessionId<'_>,
        version: Option<ProtocolVersion>,
    ) -> Result<(), Refusal> {
        if body.len() > self.config.max_body_bytes {
            return Err(Refusal::BodyTooLarge { len: body.len() });
        }
        let accepts = checks::accepts(headers);
        if !accepts.json && !accepts.sse {
            return Err(Refusal::NotAcceptable);
        }
        if !checks::content_is_json(headers) {
            return Err(Refusal::UnsupportedMediaType);
        }
        let modern = version.filter(|v| v.era() == crate::session::Era::Discover);
        if let Some(version) = modern {
            let speaks = self.config.server.versions.clone();
            let post = modern::check_post(
                headers,
                body,
                version,
                &speaks,
                &self.config.server.capabilities,
            )
            .map_err(Refusal::Rejected)?;
            match post {
                modern::ModernPost::Nothing => {
                    self.accept_without_requests_alone(response);
                    return Ok(());
                }
                // A listen's notifications can only travel on an SSE response.
                modern::ModernPost::Listen if !accepts.sse => {
                    return Err(Refusal::NotAcceptable);
                }
                _ => {}
            }
        }
        // Decoded once: the shape is read from what the session then routes.
        let input = jsonrpc::Input::Bytes(body);
        let mut progress = None;
        let decoded = jsonrpc::decode_reading_into::<ProgressParams>(input, &mut progress);
        let shape = BodyShape::of_decoded(&decoded)?;
        let request_count = shape.requests.len();
        let key = match self.config.mode {
            // Session headers are ignored in 2026: the request gets a session of its own.
            _ if modern.is_some() => self.open_transient(now)?,
            HttpMode::Stateless => self.open_stateless(now, version, shape.initialize)?,
            HttpMode::Stateful if headers.contains(MCP_SESSION_ID) => {
                self.named_session(headers)?
            }
            HttpMode::Stateful if shape.initialize => self.open_session(now, new_id)?,
            HttpMode::Stateful => return Err(Refusal::MissingSessionId),
        };
        let Some(entry) = self.entries.get_mut(&key) else {
            return Err(Refusal::UnknownSession);
        };
        entry.last_active = entry.last_active.max(now);
        if entry.live_streams_reach(self.config.max_streams_per_session) {
            return Err(Refusal::TooManyStreams);
        }
        let stream_no = entry.next_stream;
        entry.next_stream += 1;
        let sse_ok = accepts.sse;
        entry.streams.insert(
            stream_no,
            Stream::post(response, sse_ok, accepts.json, request_count),
        );
        self.responses.insert(response, key);
        entry.feeding = Some((stream_no, shape.requests));
        entry
            .session
            .handle_decoded_input(now, input, (decoded, progress));
        // Who asked what: the host's tokens and progress tokens of this POST's requests.
        let mut forwarded = Vec::new();
        let mut routed = VecDeque::new();
        while let Some(event) = entry.session.poll_event() {
            match &event {
                Event::Request {
                    id, progress_token, ..
                } => {
                    entry.by_request.insert(*id, stream_no);
                    if let Some(token) = progress_token {
                        entry.by_progress.insert(token.clone(), stream_no);
                    }
                }
                Event::RequestCancelled { id, .. } => {
                    entry.cancelled(&self.config, &mut routed, *id);
                }
                _ => {}
            }
            forwarded.push(event);
        }
        entry.route(&self.config, &mut routed);
        // Requests the session did not answer at once wait for the host: their answers are
        // routed by id. An id still open on another POST keeps its first owner (the session
        // refused the repeat, and that refusal came back to this POST above).
        if let Some((_, open)) = entry.feeding.take() {
            for id in open {
                entry.by_wire.entry(id).or_insert(stream_no);
            }
        }
        let unidentified = std::mem::take(&mut entry.unidentified);
        tag_heads(&mut routed, entry.issued_id());
        self.out.extend(routed);
        for event in forwarded {
            self.events.push_back(HttpEvent::Session {
                session: key,
                event,
            });
        }
        if request_count == 0 {
            self.accept_without_requests(key, stream_no, response, unidentified);
        } else if let Some(entry) = self.entries.get_mut(&key) {
            // Errors to unreadable batch elements come with the answers.
            for bytes in unidentified {
                entry.deliver(&self.config, &mut self.out, stream_no, bytes, false);
            }
        }
        self.settle(key);
        Ok(())
    }

    /// A POST of notifications and answers only: 202, or 400 with the error the session
    /// gave to unreadable elements.
    fn accept_without_requests(
        &mut self,
        key: SessionKey,
        stream_no: u64,
        response: ResponseId,
        unidentified: Vec<Vec<u8>>,
    ) {
        if let Some(entry) = self.entries.get_mut(&key)
            && let Some(stream) = entry.streams.get_mut(&stream_no)
        {
            stream.done = true;
            stream.response = None;
            entry.streams.remove(&stream_no);
        }
        let (status, body) = match unidentified.into_iter().next() {
            Some(error) => (400, error),
            None => (202, Vec::new()),
        };
        let mut head = refusal_head(response, status);
        if body.is_empty()
            && let Output::Head { headers, .. } = &mut head
        {
            headers.remove(CONTENT_TYPE);
        }
        self.out.push_back(head);
        if !body.is_empty() {
            self.out.push_back(Output::Body {
                response,
                bytes: body,
            });
        }
        self.out.push_back(Output::End { response });
    }

    fn serve_get(&mut self, response: ResponseId, headers: &HeaderList) -> Result<(), Refusal> {
        if !checks::accepts(headers).sse {
            return Err(Refusal::NotAcceptable);
        }
        let key = self.named_session(headers)?;
        let config_streams = self.config.max_streams_per_session;
        let Some(entry) = self.entries.get_mut(&key) else {
            return Err(Refusal::UnknownSession);
        };
        let mut routed = VecDeque::new();
        if let Some(last) = headers.get(LAST_EVENT_ID) {
            let (stream_no, seq) = stream::parse_event_id(last)
                .ok_or_else(|| Refusal::UnknownLastEventId(last.to_owned()))?;
            if stream_no == GET_STREAM
                && entry
                    .streams
                    .get(&GET_STREAM)
                    .is_some_and(|s| s.response.is_some())
            {
                return Err(Refusal::GetStreamTaken);
            }
            if !entry.resume(&mut routed, response, stream_no, seq) {
                return Err(Refusal::UnknownLastEventId(last.to_owned()));
            }
        } else {
            if entry
                .streams
                .get(&GET_STREAM)
                .is_some_and(|s| s.response.is_some())
            {
                return Err(Refusal::GetStreamTaken);
            }
            if entry.live_streams_reach(config_streams) {
                return Err(Refusal::TooManyStreams);
            }
            entry.open_get(&self.config, &mut routed, response);
        }
        tag_heads(&mut routed, entry.issued_id());
        self.out.extend(routed);
        self.responses.insert(response, key);
        Ok(())
    }

    fn serve_delete(
        &mut self,
        now: Instant,
        response: ResponseId,
        headers: &HeaderList,
    ) -> Result<(), Refusal> {
        let key = self.named_session(headers)?;
        if let Some(entry) = self.entries.get_mut(&key) {
            entry
                .session
                .handle_transport_closed(now, Some("the client deleted the session".into()));
        }
        self.settle(key);
        self.out.push_back(Output::Head {
            response,
            status: 200,
            headers: HeaderList::new(),
        });
        self.out.push_back(Output::End { response });
        Ok(())
    }

    fn settle_dirty(&mut self) {
        for key in std::mem::take(&mut self.dirty) {
            self.settle(key);
        }
    }

    /// Routes what a session queued, forwards its events, and ends it once it closed.
    fn settle(&mut self, key: SessionKey) {
        let Some(entry) = self.entries.get_mut(&key) else {
            return;
        };
        if entry.has_live_streams() {
            entry.last_active = entry.last_active.max(self.last_now);
        }
        let mut routed = VecDeque::new();
        entry.route(&self.config, &mut routed);
        if entry.initialize_refused() {
            // Its error is routed above; without an id the client cannot come back to it.
            entry.session.close(self.last_now);
        }
        let mut closed = None;
        while let Some(event) = entry.session.poll_event() {
            match &event {
                Event::Closed { reason } => closed = Some(reason.clone()),
                Event::RequestCancelled { id, .. } => {
                    entry.cancelled(&self.config, &mut routed, *id);
                }
                _ => {}
            }
            self.events.push_back(HttpEvent::Session {
                session: key,
                event,
            });
        }
        let stateless_done = (self.config.mode == HttpMode::Stateless || entry.transient)
            && entry
                .streams
                .iter()
                .all(|(n, s)| *n == GET_STREAM || s.done);
        if entry.session.is_closed() || closed.is_some() {
            entry.end_all(&mut routed);
        }
        tag_heads(&mut routed, entry.issued_id());
        self.out.extend(routed);
        if entry.session.is_closed() {
            let wire_id = entry.wire_id.clone();
            self.entries.remove(&key);
            self.by_wire_id.remove(&wire_id);
            self.responses.retain(|_, k| *k != key);
            self.events.push_back(HttpEvent::SessionEnded {
                session: key,
                reason: closed.unwrap_or(CloseReason::Local),
            });
        } else if stateless_done && self.entries.get(&key).is_some_and(|e| e.next_stream > 1) {
            // A stateless (or 2026) POST answered in full: its session has nothing more to do.
            if let Some(entry) = self.entries.get_mut(&key) {
                entry.session.handle_transport_closed(
                    self.last_now,
                    Some("the stateless request was answered".into()),
                );
            }
            self.settle(key);
        }
    }
}

/// The head of an error or refusal: `status` and a JSON body.
pub(super) fn refusal_head(response: ResponseId, status: u16) -> Output {
    let mut headers = HeaderList::new();
    headers.insert(CONTENT_TYPE, "application/json");
    Output::Head {
        response,
        status,
        headers,
    }
}

/// A JSON-RPC error with `"id": null`, the body of a refusal (as the TypeScript SDK sends).
pub(super) fn error_body(code: i64, message: &str) -> Vec<u8> {
    let mut out = Vec::new();
    jsonrpc::encode_error(&mut out, None, &ErrorObject::new(code, message));
    out
}

/// Puts the session id on the heads of a session's responses.
fn tag_heads(outputs: &mut VecDeque<Output>, wire_id: &str) {
    if wire_id.is_empty() {
        return;
    }
    for o in outputs {
        if let Output::Head { headers, .. } = o {
            headers.insert(MCP_SESSION_ID, wire_id);
        }
    }
}
