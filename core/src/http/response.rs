//! What the responses to the connection's exchanges mean: heads (status, session id, content
//! type, redirects, 429/503, 404), bodies (JSON, SSE) and their ends and failures.

use super::connection::Connection;
use super::error::{HttpStatusError, MAX_BODY_EXCERPT};
use super::exchange::{
    ExchangeError, ExchangeFailure, ExchangeId, HttpEvent, Method, Purpose, StreamId, Transport,
    TransportMode,
};
use super::exchange_table::{Body, Exchange};
use super::headers::{ContentType, HeaderList, LOCATION, MCP_SESSION_ID};
use super::origin::{RedirectDecision, decide_redirect, resolve_endpoint};
use super::post_queue::QueuedPost;
use super::retry_after::retry_after_from_headers;
use super::session_gone;
use super::streams::Origin;
use super::transport_choice::Phase;
use crate::framing::sse::SseItem;
use crate::session::{CloseReason, Diagnostic, RequestError, SessionState};
use crate::time::{Instant, saturating_add};

impl Connection {
    // ---- (B) inputs --------------------------------------------------------------------

    /// The status and headers of exchange `exchange` arrived. Unknown (aborted, finished)
    /// exchanges are ignored.
    pub fn handle_response_head(
        &mut self,
        now: Instant,
        exchange: ExchangeId,
        status: u16,
        headers: HeaderList,
    ) {
        self.now = self.now.max(now);
        if self.exchanges.contains(exchange) {
            self.on_head(now, exchange, status, headers);
        }
        self.pump(now);
    }

    /// A chunk of the body of `exchange`.
    pub fn handle_body(&mut self, now: Instant, exchange: ExchangeId, chunk: &[u8]) {
        self.now = self.now.max(now);
        self.on_body(now, exchange, chunk);
        self.pump(now);
    }

    /// The body of `exchange` ended normally.
    pub fn handle_body_end(&mut self, now: Instant, exchange: ExchangeId) {
        self.now = self.now.max(now);
        self.on_end(now, exchange);
        self.pump(now);
    }

    /// `exchange` failed (before or during its response).
    pub fn handle_failure(&mut self, now: Instant, exchange: ExchangeId, failure: ExchangeFailure) {
        self.now = self.now.max(now);
        let failure = match self.exchanges.get(exchange) {
            Some(x) => failure.classified(&x.url),
            None => failure,
        };
        self.fail_exchange(now, exchange, failure.to_string());
        self.pump(now);
    }

    // ---- heads -------------------------------------------------------------------------

    fn on_head(&mut self, now: Instant, id: ExchangeId, status: u16, headers: HeaderList) {
        let Some(x) = self.exchanges.get(id) else {
            return;
        };
        let purpose = x.purpose;
        if purpose == Purpose::Delete {
            self.exchanges.abort(id);
            return self.delete_done(id);
        }
        // Redirects: same origin only, bounded hops, re-issued by the connection itself.
        if (300..400).contains(&status) {
            let decision = decide_redirect(
                &x.url,
                status,
                headers.get(LOCATION),
                x.method != Method::Get,
            );
            let mut x = self.take(id);
            return match decision {
                RedirectDecision::Follow(url) if x.hops < self.config.max_redirects => {
                    x.hops += 1;
                    x.url = url;
                    x.read = Body::Head;
                    let sid = self.stream_of(id);
                    let new = self.issue(x);
                    if let Some(sid) = sid
                        && let Some(s) = self.streams.get_mut(sid)
                    {
                        s.attach(new, self.config.max_event);
                    }
                }
                RedirectDecision::Follow(_) => self.lost(now, id, purpose, "too many redirects"),
                RedirectDecision::Refuse(r) => {
                    let message = format!("redirect refused: {r}");
                    self.lost(now, id, purpose, &message);
                }
                #[allow(unreachable_patterns)] // non_exhaustive in other crates only
                _ => self.lost(now, id, purpose, "redirect refused"),
            };
        }
        if matches!(status, 429 | 503)
            && x.method == Method::Post
            && x.retries < self.config.max_status_retries
            && let Some(delay) = retry_after_from_headers(&headers, self.config.max_retry_after)
        {
            let x = self.take(id);
            let at = saturating_add(now, delay);
            self.posts.delay(
                at,
                QueuedPost {
                    body: x.body,
                    purpose: x.purpose,
                    retries: x.retries + 1,
                    initialized: x.initialized,
                },
            );
            return;
        }
        // A POST's 404 means the session is gone; so does a GET's to a listener that this
        // session had open (the server restarted, say). A first GET's 404 is "no listener
        // here". The rule is in `session_gone`'s docs; a 400 is decided once its body is read.
        let asked = self.asked(id);
        if session_gone::is_session_gone_404(status, asked, x.had_session_id) {
            let x = self.take(id);
            return self.on_session_gone(now, x, 404);
        }
        if !(200..300).contains(&status) {
            return self.on_error_head(now, id, status, headers);
        }
        // 2xx.
        let content = ContentType::from_headers(&headers);
        if x.method == Method::Post && self.transport.is_legacy() {
            // Legacy answers come on the SSE stream; the POST says 202 "Accepted" or so.
            return self.set_read(id, Body::Ignore(0));
        }
        match purpose {
            Purpose::Initialize => {
                if self.transport.phase == Phase::Probing {
                    self.transport.phase = Phase::Up(Transport::Streamable);
                    self.emit(HttpEvent::TransportSelected(Transport::Streamable));
                }
                if !self.transport.is_legacy()
                    && !self.session.speaks_discover()
                    && let Some(value) = headers.get(MCP_SESSION_ID)
                    && let Err(e) = self.identity.adopt(value)
                {
                    // A diagnostic like any other odd peer input, and the HTTP event.
                    self.session.report(Diagnostic::InvalidSessionId(e.clone()));
                    self.emit(HttpEvent::InvalidSessionId(e));
                }
                self.read_reply(now, id, content, Origin::Post(None));
            }
            Purpose::Request(h) => {
                self.identity.answered_in(x.generation);
                self.read_reply(now, id, content, Origin::Post(Some(h)));
            }
            Purpose::Message(_) => self.set_read(id, Body::Ignore(0)),
            Purpose::Listen | Purpose::Resume(_) | Purpose::LegacyConnect => {
                if content != Some(ContentType::EventStream) {
                    // What came instead (a web page, JSON) says what the URL is.
                    let got: String = headers
                        .get("content-type")
                        .unwrap_or("no content type")
                        .chars()
                        .take(80)
                        .collect();
                    let message =
                        format!("HTTP {status} with {got}, not a text/event-stream stream");
                    self.exchanges.abort(id);
                    return self.fail_exchange(now, id, message);
                }
                let sid = self.stream_of(id);
                // The stream is long-lived; the legacy one keeps its deadline until the
                // endpoint event.
                if purpose != Purpose::LegacyConnect {
                    self.exchanges.clear_deadline(id);
                }
                if let Some(x) = self.exchanges.get_mut(id) {
                    x.read = Body::Sse(sid.unwrap_or(StreamId(u64::MAX)));
                }
                if purpose == Purpose::Listen {
                    if let Some(s) = sid.and_then(|sid| self.streams.get_mut(sid)) {
                        s.accepted = true;
                        s.dropped_at = None;
                    }
                    self.emit(HttpEvent::ListenerOpened);
                }
                if let Some(sid) = sid
                    && let Some(s) = self.streams.get(sid)
                    && let Some(last) = self.exchanges.get(id).and_then(|x| x.last_event_id.clone())
                    && s.origin != Origin::Legacy
                {
                    self.emit(HttpEvent::StreamResumed {
                        stream: sid,
                        last_event_id: last,
                    });
                }
            }
            Purpose::Delete => {}
        }
    }

    /// Sets up reading a 2xx reply to a POST: JSON or SSE, anything else fails the request.
    fn read_reply(
        &mut self,
        now: Instant,
        id: ExchangeId,
        content: Option<ContentType>,
        origin: Origin,
    ) {
        match content {
            Some(ContentType::Json) => self.set_read(id, Body::Json(Vec::new())),
            Some(ContentType::EventStream) => {
                let Some(sid) = self.new_stream(origin) else {
                    self.exchanges.abort(id);
                    return self.fail_exchange(now, id, "too many open streams".to_owned());
                };
                let handshake =
                    (origin == Origin::Post(None)).then(|| self.session.handshake_wire());
                if let Some(s) = self.streams.get_mut(sid) {
                    s.attach(id, self.config.max_event);
                    s.handshake_wire = handshake;
                }
                self.set_read(id, Body::Sse(sid));
            }
            other => {
                // A 202 (or a body of another type) to a request: the answer is not here.
                let x = self.take(id);
                let error = match other {
                    None => RequestError::NoResponse,
                    Some(t) => {
                        RequestError::InvalidResponse(format!("unexpected content type {t:?}"))
                    }
                };
                self.fail_reply(now, x.purpose, error);
            }
        }
    }

    /// A reply that does not answer its request: the request fails (the handshake closes).
    fn fail_reply(&mut self, now: Instant, purpose: Purpose, error: RequestError) {
        match purpose {
            Purpose::Initialize if self.session.state() == SessionState::Handshaking => {
                let detail = format!("initialize: {error}");
                self.session
                    .close_for_transport(now, CloseReason::InvalidHandshake(detail));
            }
            Purpose::Request(h) => {
                self.session.fail_request(h, error);
            }
            _ => {}
        }
    }

    fn on_error_head(&mut self, now: Instant, id: ExchangeId, status: u16, headers: HeaderList) {
        let Some(x) = self.exchanges.get(id) else {
            return;
        };
        match x.purpose {
            Purpose::Initialize
                if self.transport.phase == Phase::Probing
                    && self.config.mode == TransportMode::Auto
                    && self.transport.may_fall_back()
                    && !self.session.speaks_discover()
                    && matches!(status, 400 | 404 | 405) =>
            {
                let x = self.take(id);
                // The body is not read: the fallback starts at once.
                self.transport
                    .fall_back(HttpStatusError::from_response(status, &headers, b""));
                self.posts.push_front(QueuedPost {
                    body: x.body,
                    purpose: Purpose::Initialize,
                    retries: 0,
                    initialized: false,
                });
                self.start_legacy(now);
            }
            // A reconnecting listener's 400 may say the session is gone: its body is read.
            Purpose::Listen
                if matches!(status, 400 | 404 | 405)
                    && !session_gone::may_say_session_unknown(
                        status,
                        self.asked(id),
                        x.had_session_id,
                    ) =>
            {
                self.exchanges.abort(id);
                self.exchanges.remove(id);
                self.listener_refused(status);
            }
            _ => self.set_read(
                id,
                Body::Error {
                    status,
                    headers,
                    excerpt: Vec::new(),
                },
            ),
        }
    }

    /// `status` (404, or a 400 saying so) to exchange `x` that carried the session id: the
    /// server forgot the session.
    fn on_session_gone(&mut self, now: Instant, x: Exchange, status: u16) {
        if x.generation != self.identity.generation() {
            // Sent on a session already replaced: only re-send what was lost.
            if let Purpose::Request(h) = x.purpose {
                self.requeue_lost(h);
            }
            return;
        }
        let session_id = self.identity.expire();
        if self.identity.expired_again() || self.session.is_closed() {
            self.emit(HttpEvent::SessionExpired {
                session_id,
                reinitializing: false,
            });
            let error = HttpStatusError::from_response(status, &HeaderList::new(), b"");
            if let Purpose::Request(h) = x.purpose {
                self.session
                    .fail_request(h, RequestError::Http(error.clone()));
            }
            self.session
                .close_for_transport(now, CloseReason::Http(error));
            return;
        }
        self.emit(HttpEvent::SessionExpired {
            session_id,
            reinitializing: true,
        });
        self.identity.renew();
        // The gap starts when the listener lost its stream, if it did before this 404.
        let listener_lost = self
            .streams
            .listener()
            .and_then(|sid| self.streams.get(sid))
            .and_then(|s| s.dropped_at);
        self.reset.begin(listener_lost.map_or(now, |t| t.min(now)));
        // Everything of the old session goes: its streams (their requests are re-sent), the
        // listener, queued notifications and responses.
        let sids: Vec<StreamId> = self.streams.ids();
        for sid in sids {
            if let Some(Origin::Post(Some(h))) = self.streams.get(sid).map(|s| s.origin)
                && self.session.is_pending(h)
            {
                self.reset.lose(h);
            }
            self.remove_stream(sid);
        }
        self.posts
            .retain(|p| matches!(p.purpose, Purpose::Request(_)));
        if let Purpose::Request(h) = x.purpose {
            self.reset.lose(h);
        }
        self.session.restart_handshake(now);
    }

    /// A request lost with an old session: re-send it now or after the new handshake.
    fn requeue_lost(&mut self, h: crate::session::RequestHandle) {
        if self.reset.is_under_way() {
            self.reset.lose_once(h);
        } else {
            self.session.resend_request(h);
        }
    }

    // ---- bodies ------------------------------------------------------------------------

    fn on_body(&mut self, now: Instant, id: ExchangeId, chunk: &[u8]) {
        let max_body = self.config.max_body;
        let Some(x) = self.exchanges.get_mut(id) else {
            return;
        };
        match &mut x.read {
            Body::Head => {}
            Body::Ignore(read) => {
                // Nobody reads it, so a huge one costs no memory, but it must not keep the
                // exchange (and its connection) busy for ever: cut it off at the JSON limit.
                *read = read.saturating_add(chunk.len());
                if *read > max_body {
                    self.on_end(now, id);
                }
            }
            Body::Error { excerpt, .. } => {
                let room = MAX_BODY_EXCERPT.saturating_sub(excerpt.len());
                excerpt.extend_from_slice(&chunk[..chunk.len().min(room)]);
                // The rest of the body is never looked at: the failure is complete now, however
                // much more the server would send.
                if excerpt.len() >= MAX_BODY_EXCERPT {
                    self.on_end(now, id);
                }
            }
            Body::Json(buf) => {
                if buf.len().saturating_add(chunk.len()) > max_body {
                    let x = self.take(id);
                    self.exchanges.abort(id);
                    let error = RequestError::InvalidResponse(format!(
                        "the JSON body is larger than {max_body} bytes"
                    ));
                    self.fail_reply(now, x.purpose, error);
                } else {
                    // Grow by doubling, but never past the limit: the capacity is what the body
                    // costs, and plain doubling could reach almost twice the limit.
                    crate::framing::extend_within(buf, chunk, max_body);
                }
            }
            Body::Sse(sid) => {
                let sid = *sid;
                self.feed_sse(now, id, sid, chunk);
            }
        }
    }

    fn feed_sse(&mut self, now: Instant, id: ExchangeId, sid: StreamId, chunk: &[u8]) {
        let Some(stream) = self.streams.get_mut(sid) else {
            return;
        };
        let mut items = Vec::new();
        stream.decoder.decode(chunk, |item| match item {
            SseItem::Event(e) => items.push(Item::Event {
                kind: e.event.to_owned(),
                data: e.data.to_owned(),
                id: e.id.map(str::to_owned),
            }),
            SseItem::Retry(d) => items.push(Item::Retry(d)),
            SseItem::TooLarge { discarded, .. } => items.push(Item::TooLarge(discarded)),
            #[allow(unreachable_patterns)] // non_exhaustive in other crates only
            _ => {}
        });
        for item in items {
            if !self.exchanges.contains(id) {
                return;
            }
            self.sse_item(now, id, sid, item);
        }
        // An id set by an event without data (a priming event) dispatches nothing but is
        // the place to resume from.
        if let Some(stream) = self.streams.get_mut(sid) {
            stream.sync_id();
        }
    }

    fn sse_item(&mut self, now: Instant, id: ExchangeId, sid: StreamId, item: Item) {
        let max_retry = self.config.max_retry;
        let Some(stream) = self.streams.get_mut(sid) else {
            return;
        };
        match item {
            Item::Retry(d) => stream.retry = Some(d.min(max_retry)),
            Item::TooLarge(discarded) => self.emit(HttpEvent::EventTooLarge { discarded }),
            Item::Event {
                kind,
                data,
                id: event_id,
            } => {
                if stream.origin == Origin::Legacy {
                    return self.legacy_event(now, id, &kind, &data);
                }
                if !stream.accept(event_id.as_deref()) || kind != "message" {
                    return;
                }
                self.session.handle_message(now, data.as_bytes());
            }
        }
    }

    fn legacy_event(&mut self, now: Instant, id: ExchangeId, kind: &str, data: &str) {
        match kind {
            "endpoint" if !self.transport.is_legacy() => {
                match resolve_endpoint(&self.config.url, data) {
                    Ok(url) => {
                        self.transport.select_legacy(url);
                        self.exchanges.clear_deadline(id);
                        self.emit(HttpEvent::TransportSelected(Transport::Legacy));
                    }
                    Err(e) => {
                        self.take(id);
                        self.exchanges.abort(id);
                        let detail = format!("legacy endpoint refused: {e}");
                        self.session.handle_transport_closed(now, Some(detail));
                    }
                }
            }
            "message" if self.transport.is_legacy() => {
                self.session.handle_message(now, data.as_bytes());
            }
            _ => {}
        }
    }

    // ---- ends and failures -------------------------------------------------------------

    fn on_end(&mut self, now: Instant, id: ExchangeId) {
        let Some(x) = self.exchanges.get(id) else {
            return;
        };
        match &x.read {
            Body::Sse(sid) => {
                let sid = *sid;
                let mut items = Vec::new();
                if let Some(s) = self.streams.get_mut(sid) {
                    s.decoder.finish(|item| {
                        if let SseItem::TooLarge { discarded, .. } = item {
                            items.push(discarded);
                        }
                    });
                }
                for discarded in items {
                    self.emit(HttpEvent::EventTooLarge { discarded });
                }
                self.exchanges.remove(id);
                self.stream_dropped(now, sid);
            }
            Body::Head | Body::Ignore(_) => {
                let x = self.take(id);
                if x.purpose == Purpose::Delete {
                    self.delete_done(id);
                }
            }
            Body::Json(_) => {
                let x = self.take(id);
                let Body::Json(body) = x.read else {
                    return;
                };
                let handshake = self.session.handshake_wire();
                self.session.handle_message(now, &body);
                let still_waiting = match x.purpose {
                    // A handshake answered with a re-issue (the fallback after a probe's
                    // JSON-RPC error, a version retry) waits on the new request's exchange.
                    Purpose::Initialize => {
                        self.session.state() == SessionState::Handshaking
                            && self.session.handshake_wire() == handshake
                    }
                    Purpose::Request(h) => self.session.awaits_reply(h),
                    _ => false,
                };
                if still_waiting {
                    let error = if serde_json::from_slice::<serde::de::IgnoredAny>(&body).is_err() {
                        let excerpt =
                            HttpStatusError::from_response(200, &HeaderList::new(), &body)
                                .body_excerpt;
                        RequestError::InvalidResponse(format!("the body is not JSON: {excerpt}"))
                    } else {
                        RequestError::NoResponse
                    };
                    self.fail_reply(now, x.purpose, error);
                }
            }
            Body::Error { .. } => {
                let asked = self.asked(id);
                let mut x = self.take(id);
                let Body::Error {
                    status,
                    headers,
                    excerpt,
                } = std::mem::replace(&mut x.read, Body::Head)
                else {
                    return;
                };
                if session_gone::is_unknown_session_400(status, asked, x.had_session_id, &excerpt) {
                    return self.on_session_gone(now, x, status);
                }
                if x.purpose == Purpose::Listen && status == 400 {
                    // A reconnecting listener's 400 about something else: refused, as a
                    // first GET's is at its head.
                    return self.listener_refused(status);
                }
                let modern = self.session.speaks_discover();
                if modern && x.purpose == Purpose::Initialize && matches!(status, 400 | 404 | 405) {
                    // The probe was refused: its body says modern or legacy. 401 / 403 / 5xx
                    // never get here, so they are never era evidence.
                    let error = match super::modern::classify_probe_refusal(&excerpt) {
                        super::modern::ProbeVerdict::Modern(e) => Some(e),
                        _ => None,
                    };
                    self.session.handle_probe_refusal(now, error);
                    return;
                }
                if modern
                    && let Purpose::Request(h) = x.purpose
                    && self.modern_error_body(now, h, &excerpt)
                {
                    return;
                }
                let error = HttpStatusError::from_response(status, &headers, &excerpt);
                let message = error.to_string();
                match x.purpose {
                    Purpose::Listen => {
                        // Not a refusal (those are handled at the head): try again, bounded.
                        self.emit(HttpEvent::ExchangeFailed {
                            purpose: Purpose::Listen,
                            error: ExchangeError::Status(error),
                        });
                        if let Some(sid) = self.streams.listener() {
                            self.stream_dropped(now, sid);
                        }
                    }
                    Purpose::Resume(sid) => {
                        let _ = message;
                        self.stream_dropped(now, sid);
                    }
                    purpose => self.fail_purpose(now, purpose, Some(error), message),
                }
            }
        }
    }

    /// An exchange failed below HTTP (or its deadline passed; it is already in the aborts).
    pub(crate) fn fail_exchange(&mut self, now: Instant, id: ExchangeId, message: String) {
        let Some(x) = self.exchanges.get(id) else {
            return;
        };
        if x.purpose == Purpose::Delete {
            return self.delete_done(id);
        }
        if let Body::Sse(sid) = x.read {
            self.exchanges.remove(id);
            return self.stream_dropped(now, sid);
        }
        if matches!(x.purpose, Purpose::Listen | Purpose::Resume(_)) {
            if x.purpose == Purpose::Listen {
                // It failed before opening: whoever waits for it waits no longer (it is
                // retried in the background).
                self.release_ready();
            }
            let sid = self.stream_of(id);
            self.exchanges.remove(id);
            if let Some(sid) = sid {
                self.stream_dropped(now, sid);
            }
            return;
        }
        // Invariant: looked up just above.
        let x = self.exchanges.remove(id).expect("exchange exists");
        match x.read {
            Body::Error {
                status,
                headers,
                excerpt,
            } => {
                let error = HttpStatusError::from_response(status, &headers, &excerpt);
                let message = error.to_string();
                self.fail_purpose(now, x.purpose, Some(error), message);
            }
            _ => self.fail_purpose(now, x.purpose, None, message),
        }
    }

    /// The current exchange of stream `sid` ended or failed: resume, reconnect, or give up.
    fn stream_dropped(&mut self, now: Instant, sid: StreamId) {
        let Some(stream) = self.streams.get_mut(sid) else {
            return;
        };
        stream.exchange = None;
        stream.dropped_at.get_or_insert(now);
        let origin = stream.origin;
        let wanted = match origin {
            Origin::Post(Some(h)) => self.session.awaits_reply(h),
            Origin::Post(None) => {
                self.session.state() == SessionState::Handshaking
                    && stream
                        .handshake_wire
                        .is_none_or(|w| w == self.session.handshake_wire())
            }
            Origin::Listen => !self.session.is_closed(),
            Origin::Legacy => {
                self.streams.remove(sid);
                let detail = "the legacy SSE stream ended".to_owned();
                self.session.handle_transport_closed(now, Some(detail));
                return;
            }
        };
        if !wanted || stream.generation != self.identity.generation() {
            self.remove_stream(sid);
            return;
        }
        let resumable = stream.resume_id().is_some();
        if let Origin::Post(Some(h)) = origin
            && self.session.speaks_discover()
        {
            // 2026-07-28 has no resumption: the request is lost, re-issue it once with a new
            // wire id (same handle).
            self.remove_stream(sid);
            if self.modern.reissue_once(h) && self.session.resend_request(h) {
                let listen =
                    <crate::types::v2026::SubscriptionsListen as crate::types::Request>::METHOD;
                if self.session.pending_method(h) == Some(listen) {
                    // Its notifications are lost until the server acknowledges it again.
                    self.modern.note_listen_break(h, now);
                }
                return;
            }
            return self.fail_reply(now, Purpose::Request(h), RequestError::NoResponse);
        }
        if matches!(origin, Origin::Post(_)) && !resumable {
            self.remove_stream(sid);
            let purpose = match origin {
                Origin::Post(Some(h)) => Purpose::Request(h),
                _ => Purpose::Initialize,
            };
            return self.fail_reply(now, purpose, RequestError::NoResponse);
        }
        if stream.schedule(now).is_none() {
            self.remove_stream(sid);
            match origin {
                Origin::Post(Some(h)) => {
                    self.session.fail_request(h, RequestError::NoResponse);
                }
                Origin::Post(None) => {
                    self.fail_reply(now, Purpose::Initialize, RequestError::NoResponse)
                }
                _ => self.emit(HttpEvent::ListenerUnavailable { status: None }),
            }
        }
    }

    /// A stream's reconnection is due.
    pub(crate) fn reconnect(&mut self, now: Instant, sid: StreamId) {
        let Some(stream) = self.streams.get_mut(sid) else {
            return;
        };
        stream.reconnect_at = None;
        let purpose = match stream.origin {
            Origin::Listen => Purpose::Listen,
            _ => Purpose::Resume(sid),
        };
        self.issue_get(now, sid, purpose);
    }

    // ---- helpers -----------------------------------------------------------------------

    /// Removes an exchange the connection is done with (and tells the adapter to drop it).
    fn take(&mut self, id: ExchangeId) -> Exchange {
        // Invariant: callers looked the exchange up just before.
        self.exchanges.take(id).expect("exchange exists")
    }

    /// The listener's GET was refused with `status` (400, 404, 405; its exchange already
    /// forgotten): there is no listener, and none is tried again.
    fn listener_refused(&mut self, status: u16) {
        if let Some(sid) = self.streams.listener() {
            self.remove_stream(sid);
        }
        self.emit(HttpEvent::ListenerUnavailable {
            status: Some(status),
        });
    }

    fn set_read(&mut self, id: ExchangeId, read: Body) {
        if let Some(x) = self.exchanges.get_mut(id) {
            x.read = read;
        }
    }

    fn stream_of(&self, id: ExchangeId) -> Option<StreamId> {
        self.streams.of_exchange(id)
    }

    /// The exchange `id` is gone at its head (redirect refused, too many hops).
    fn lost(&mut self, now: Instant, id: ExchangeId, purpose: Purpose, message: &str) {
        match purpose {
            Purpose::Listen | Purpose::Resume(_) => {
                if let Some(sid) = self.streams.of_exchange(id) {
                    self.remove_stream(sid);
                }
                if purpose == Purpose::Listen {
                    self.streams.set_listener(None);
                    self.emit(HttpEvent::ListenerUnavailable { status: None });
                }
                self.emit(HttpEvent::ExchangeFailed {
                    purpose,
                    error: ExchangeError::Transport(message.to_owned()),
                });
            }
            _ => self.fail_purpose(now, purpose, None, message.to_owned()),
        }
    }
}

/// One decoded SSE item, copied out of the decoder.
enum Item {
    Event {
        kind: String,
        data: String,
        id: Option<String>,
    },
    Retry(crate::time::Duration),
    TooLarge(usize),
}
