//! One session of an [`HttpServer`](super::HttpServer) and its response streams: where each
//! message the session sends goes (the POST it answers or relates to, or the GET stream), in
//! which framing (one JSON body, or SSE events), and what is kept for resumption.

use std::collections::VecDeque;

use crate::rpc::peer_keys::PeerMap;
use crate::session::CounterMap;

use super::stream::{EventLog, encode_event, encode_priming, event_id};
use super::{HttpServerConfig, Output, ResponseId};
use crate::http::headers::{CACHE_CONTROL, CONTENT_TYPE, HeaderList};
use crate::jsonrpc::{self, DecodedRef, Id, MessageRef};
use crate::rpc::{MessageKind, Outgoing};
use crate::server::{ClientRequestId, ServerSession, ServerState};
use crate::session::ProtocolVersion;
use crate::time::Instant;

/// The stream number of the GET stream (POST streams count from 1).
pub(super) const GET_STREAM: u64 = 0;

/// How a POST's answers go out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Framing {
    /// Nothing sent yet: JSON if only the answers come, SSE if something comes first.
    Undecided,
    /// One `application/json` body (an array for a batch), sent when every answer is in.
    Json,
    /// `text/event-stream`, one event per message, ended after the last answer.
    Sse,
}

/// One response stream: a POST's, or the GET stream.
#[derive(Debug)]
pub(super) struct Stream {
    /// The HTTP response carrying it now; `None` while no client listens (the POST's
    /// connection dropped, no GET open): events are only logged then.
    pub(super) response: Option<ResponseId>,
    pub(super) framing: Framing,
    /// Whether the client accepts SSE (else related messages go to the GET stream).
    pub(super) sse_ok: bool,
    /// Whether the client accepts a JSON body (else the answers come as SSE events).
    pub(super) json_ok: bool,
    /// Requests of the POST not answered yet.
    pub(super) awaiting: usize,
    /// Answers held for a JSON body.
    pub(super) answers: Vec<Vec<u8>>,
    /// Events for resumption.
    pub(super) log: EventLog,
    /// The last event the live response has seen (the GET stream's backlog starts after it).
    pub(super) delivered: u64,
    /// Whether every answer went out (a POST stream) or the session ended.
    pub(super) done: bool,
}

impl Stream {
    pub(super) fn post(response: ResponseId, sse_ok: bool, json_ok: bool, awaiting: usize) -> Self {
        Stream {
            response: Some(response),
            framing: Framing::Undecided,
            sse_ok,
            json_ok,
            awaiting,
            answers: Vec::new(),
            log: EventLog::default(),
            delivered: 0,
            done: false,
        }
    }

    pub(super) fn get() -> Self {
        Stream {
            response: None,
            framing: Framing::Sse,
            sse_ok: true,
            json_ok: false,
            awaiting: 0,
            answers: Vec::new(),
            log: EventLog::default(),
            delivered: 0,
            done: false,
        }
    }
}

/// The id an answer's bytes carry (`None`: `"id": null`, or not an answer): what the id the
/// session hands over with them must equal (checked in debug builds, which every test runs).
fn id_read_from(bytes: &[u8]) -> Option<Id> {
    match jsonrpc::decode(bytes) {
        Ok(DecodedRef::Single(MessageRef::Response { id, .. })) => Some(id),
        Ok(DecodedRef::Single(MessageRef::Error { id, .. })) => id,
        _ => None,
    }
}

/// Whether stream `n` holds a response or waits for answers.
fn is_live(n: u64, stream: &Stream) -> bool {
    !stream.done && (n != GET_STREAM || stream.response.is_some())
}

/// One session and its streams.
#[derive(Debug)]
pub(super) struct Entry {
    /// The `Mcp-Session-Id` (empty in stateless mode).
    pub(super) wire_id: String,
    pub(super) session: ServerSession,
    pub(super) streams: CounterMap<u64, Stream>,
    /// Ended POST streams kept for resumption, oldest first.
    pub(super) ended: VecDeque<u64>,
    pub(super) next_stream: u64,
    /// Open client requests (JSON-RPC ids) and the stream their answer goes to.
    pub(super) by_wire: PeerMap<Id, u64>,
    /// The host's tokens of those requests, for related messages.
    pub(super) by_request: CounterMap<ClientRequestId, u64>,
    /// Progress tokens of those requests: their progress goes with them.
    pub(super) by_progress: PeerMap<Id, u64>,
    /// The stream messages queued now relate to (during a POST's feed, or
    /// [`HttpServer::related`](super::HttpServer::related)).
    pub(super) related: Option<u64>,
    /// During a POST's feed: its stream and its request ids, so the session's own answers
    /// (ping, initialize, refusals) go to it even when an id repeats an open one.
    pub(super) feeding: Option<(u64, Vec<Id>)>,
    /// Answers with `"id": null` (unreadable input) during the feed.
    pub(super) unidentified: Vec<Vec<u8>>,
    /// Whether the session was ended and its streams closed.
    pub(super) finished: bool,
    /// The last time it had a request or an open stream (for the idle timeout).
    pub(super) last_active: Instant,
    /// The session of one 2026-07-28 request: it ends once that request is answered, or
    /// when the client closes its stream (the revision's cancellation).
    pub(super) transient: bool,
}

impl Entry {
    /// The `Mcp-Session-Id` its responses may carry: none until its `initialize` was
    /// accepted, so a refused (or still held) `initialize` hands out no id the client could
    /// only get 404 for.
    pub(super) fn issued_id(&self) -> &str {
        if self.session.protocol_version().is_some() {
            &self.wire_id
        } else {
            ""
        }
    }

    /// Whether this stateful session's `initialize` was refused (by the session, or by the
    /// host of a deferred one): no id was handed out, so no client can reach it again.
    pub(super) fn initialize_refused(&self) -> bool {
        !self.wire_id.is_empty()
            && !self.transient
            && self.next_stream > 1
            && self.session.state() == ServerState::AwaitingInitialize
            && !self.session.initialize_pending()
    }

    pub(super) fn new(wire_id: String, session: ServerSession, now: Instant) -> Self {
        let mut streams = CounterMap::default();
        streams.insert(GET_STREAM, Stream::get());
        Entry {
            wire_id,
            session,
            streams,
            ended: VecDeque::new(),
            next_stream: 1,
            by_wire: PeerMap::default(),
            by_request: CounterMap::default(),
            by_progress: PeerMap::default(),
            related: None,
            feeding: None,
            unidentified: Vec::new(),
            finished: false,
            last_active: now,
            transient: false,
        }
    }

    /// Open streams that hold a response or wait for answers.
    pub(super) fn live_streams(&self) -> usize {
        self.streams.iter().filter(|(n, s)| is_live(**n, s)).count()
    }

    /// Whether the live streams reach `bound`. Only a session with that many streams at all
    /// can (most hold fewer: the live ones, the GET, the ended ones kept for resumption), so
    /// the others are not walked.
    pub(super) fn live_streams_reach(&self, bound: usize) -> bool {
        self.streams.len() >= bound && self.live_streams() >= bound
    }

    /// Whether any stream is live (the first one found ends the look; the ended streams kept
    /// for resumption need not be walked).
    pub(super) fn has_live_streams(&self) -> bool {
        self.streams.iter().any(|(n, s)| is_live(*n, s))
    }

    /// Whether 2025-11-25 stream behaviour applies (the priming event).
    fn primes(&self) -> bool {
        self.session
            .protocol_version()
            .is_some_and(|v| v >= ProtocolVersion::V2025_11_25)
    }

    /// Moves everything the session queued to its streams.
    pub(super) fn route(&mut self, config: &HttpServerConfig, out: &mut VecDeque<Output>) {
        let mut buf = Vec::new();
        while let Some((sent, answered)) = self.session.poll_transmit_answering(&mut buf) {
            let bytes = std::mem::take(&mut buf);
            self.route_one(config, out, &sent, answered, bytes);
        }
    }

    fn route_one(
        &mut self,
        config: &HttpServerConfig,
        out: &mut VecDeque<Output>,
        sent: &Outgoing,
        answered: Option<Id>,
        bytes: Vec<u8>,
    ) {
        let target = match sent.kind {
            MessageKind::Response => return self.route_answer(config, out, answered, bytes),
            // `related` is set only while the host's closure runs and what it queued is
            // routed (`HttpServer::related` routes before and after it), so nothing needs
            // remembering per request.
            MessageKind::Request => self.related,
            _ => self
                .related
                .or_else(|| self.progress_stream(&bytes))
                .or_else(|| self.transient_stream()),
        };
        let target = target.filter(|s| self.streams.get(s).is_some_and(|st| !st.done && st.sse_ok));
        self.deliver(config, out, target.unwrap_or(GET_STREAM), bytes, false);
    }

    /// The one POST stream of a 2026-07-28 request's session: where its notifications go
    /// when nothing else claims them (a listen's acknowledgement and deliveries; the
    /// revision has no GET stream).
    fn transient_stream(&self) -> Option<u64> {
        if !self.transient {
            return None;
        }
        self.streams.keys().copied().find(|n| *n != GET_STREAM)
    }

    /// The stream of the request a `notifications/progress` reports on.
    fn progress_stream(&self, bytes: &[u8]) -> Option<u64> {
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct P {
            progress_token: Id,
        }
        let Ok(DecodedRef::Single(MessageRef::Notification { method, params })) =
            jsonrpc::decode(bytes)
        else {
            return None;
        };
        if method != "notifications/progress" {
            return None;
        }
        let p: P = serde_json::from_str(params?.get()).ok()?;
        self.by_progress.get(&p.progress_token).copied()
    }

    /// Routes the answer to the client's request `id` (`None`: to an unreadable id), which
    /// the session gave with its bytes.
    fn route_answer(
        &mut self,
        config: &HttpServerConfig,
        out: &mut VecDeque<Output>,
        id: Option<Id>,
        bytes: Vec<u8>,
    ) {
        debug_assert_eq!(
            id,
            id_read_from(&bytes),
            "the answer's id is the one it carries"
        );
        if let Some((stream, ids)) = &mut self.feeding {
            let stream = *stream;
            match &id {
                Some(id) if ids.contains(id) => {
                    if let Some(at) = ids.iter().position(|i| i == id) {
                        ids.remove(at);
                    }
                    return self.deliver(config, out, stream, bytes, true);
                }
                None => return self.unidentified.push(bytes),
                Some(_) => {}
            }
        }
        let stream = id.as_ref().and_then(|id| self.by_wire.remove(id));
        match stream {
            Some(stream) => self.deliver(config, out, stream, bytes, true),
            // An answer no open POST waits for (its stream is gone): the GET stream is the
            // only place left; the spec allows answers there only on resumption, and this is
            // a session-level oddity the client can still read.
            None => self.deliver(config, out, GET_STREAM, bytes, false),
        }
    }

    /// Sends or logs one message on `stream`; `answer` counts it against the POST's
    /// requests.
    pub(super) fn deliver(
        &mut self,
        config: &HttpServerConfig,
        out: &mut VecDeque<Output>,
        stream_no: u64,
        bytes: Vec<u8>,
        answer: bool,
    ) {
        let primes = self.primes();
        let Some(stream) = self.streams.get_mut(&stream_no) else {
            return;
        };
        if answer {
            stream.awaiting = stream.awaiting.saturating_sub(1);
        }
        if stream.framing == Framing::Undecided {
            if (answer && stream.json_ok) || !stream.sse_ok {
                stream.answers.push(bytes);
                if stream.awaiting == 0 {
                    finish_json(stream, out);
                    self.stream_done(config, stream_no);
                }
                return;
            }
            open_sse(stream, stream_no, config, out, primes);
        }
        if stream.framing == Framing::Json {
            stream.answers.push(bytes);
            if stream.awaiting == 0 {
                finish_json(stream, out);
                self.stream_done(config, stream_no);
            }
            return;
        }
        push_event(stream, stream_no, config, out, bytes);
        if stream_no != GET_STREAM && stream.awaiting == 0 && answer {
            if let Some(response) = stream.response.take() {
                out.push_back(Output::End { response });
            }
            self.stream_done(config, stream_no);
        }
    }

    /// A POST stream has all its answers: kept a while for resumption, then dropped.
    fn stream_done(&mut self, config: &HttpServerConfig, stream_no: u64) {
        if let Some(s) = self.streams.get_mut(&stream_no) {
            s.done = true;
            s.response = None;
            s.answers.clear();
        }
        self.by_request.retain(|_, s| *s != stream_no);
        self.by_progress.retain(|_, s| *s != stream_no);
        self.by_wire.retain(|_, s| *s != stream_no);
        self.ended.push_back(stream_no);
        while self.ended.len() > config.ended_streams_kept {
            if let Some(old) = self.ended.pop_front() {
                self.streams.remove(&old);
            }
        }
    }

    /// The client cancelled request `id`: no answer will come for it (the spec's rule), so
    /// its POST stops waiting for one; a POST with nothing left to wait for ends (its held
    /// answers sent, or an empty event stream).
    pub(super) fn cancelled(
        &mut self,
        config: &HttpServerConfig,
        out: &mut VecDeque<Output>,
        id: ClientRequestId,
    ) {
        let Some(stream_no) = self.by_request.remove(&id) else {
            return;
        };
        let Some(stream) = self.streams.get_mut(&stream_no) else {
            return;
        };
        stream.awaiting = stream.awaiting.saturating_sub(1);
        if stream.awaiting > 0 || stream.done {
            return;
        }
        match stream.framing {
            Framing::Undecided | Framing::Json if !stream.answers.is_empty() => {
                finish_json(stream, out);
            }
            Framing::Undecided | Framing::Json => {
                if let Some(response) = stream.response.take() {
                    out.push_back(sse_head(response));
                    out.push_back(Output::End { response });
                }
            }
            Framing::Sse => {
                if let Some(response) = stream.response.take() {
                    out.push_back(Output::End { response });
                }
            }
        }
        self.stream_done(config, stream_no);
    }

    /// Closes the connection of the POST stream that carries client request `request`
    /// without ending the stream (SEP-1699 polling): a stream not framed yet becomes an SSE
    /// stream with its priming event first, then the response ends; what follows (the
    /// answer included) is logged, and the client resumes it with `Last-Event-ID`. `false`
    /// when that cannot be done: a session before 2025-11-25 (no priming event, so nothing to
    /// resume from), a client that does not accept SSE, a request already answered or not
    /// known, a stream already framed as JSON. `true` also when the connection was gone.
    pub(super) fn close_request_stream(
        &mut self,
        config: &HttpServerConfig,
        out: &mut VecDeque<Output>,
        request: ClientRequestId,
    ) -> bool {
        let primes = self.primes();
        let Some(&stream_no) = self.by_request.get(&request) else {
            return false;
        };
        let Some(stream) = self.streams.get_mut(&stream_no) else {
            return false;
        };
        if !primes || stream.done || !stream.sse_ok || stream.framing == Framing::Json {
            return false;
        }
        let Some(response) = stream.response else {
            return true;
        };
        if stream.framing == Framing::Undecided {
            open_sse(stream, stream_no, config, out, true);
        }
        stream.response = None;
        out.push_back(Output::End { response });
        true
    }

    /// The client's connection of `response` dropped: not a cancellation (the spec's rule);
    /// its stream's messages are logged for resumption from now on.
    pub(super) fn detach(&mut self, response: ResponseId) {
        for stream in self.streams.values_mut() {
            if stream.response == Some(response) {
                stream.response = None;
                // Held JSON answers cannot be resumed; from now on events are logged.
                stream.framing = Framing::Sse;
                let held = std::mem::take(&mut stream.answers);
                for bytes in held {
                    stream.log.push(bytes, usize::MAX, usize::MAX);
                }
            }
        }
    }

    /// Opens the GET stream on `response`: what was queued for it while no client listened
    /// goes first.
    pub(super) fn open_get(
        &mut self,
        config: &HttpServerConfig,
        out: &mut VecDeque<Output>,
        response: ResponseId,
    ) {
        let primes = self.primes();
        let Some(stream) = self.streams.get_mut(&GET_STREAM) else {
            return;
        };
        stream.response = Some(response);
        out.push_back(sse_head(response));
        let mut body = Vec::new();
        if primes {
            encode_priming(
                &mut body,
                &event_id(GET_STREAM, stream.log.last_seq),
                config.retry,
            );
        }
        for (seq, data) in stream.log.after(stream.delivered) {
            encode_event(&mut body, &event_id(GET_STREAM, seq), data);
        }
        stream.delivered = stream.log.last_seq;
        if !body.is_empty() {
            out.push_back(Output::Body {
                response,
                bytes: body,
            });
        }
    }

    /// Resumes stream `stream_no` after event `seq` on `response`. `false` when the stream
    /// is not known (never existed, or dropped).
    pub(super) fn resume(
        &mut self,
        out: &mut VecDeque<Output>,
        response: ResponseId,
        stream_no: u64,
        seq: u64,
    ) -> bool {
        let Some(stream) = self.streams.get_mut(&stream_no) else {
            return false;
        };
        if seq > stream.log.last_seq {
            return false;
        }
        // A connection still attached is replaced: the client moved to the new one.
        if let Some(old) = stream.response.take() {
            out.push_back(Output::End { response: old });
        }
        out.push_back(sse_head(response));
        let mut body = Vec::new();
        for (s, data) in stream.log.after(seq) {
            encode_event(&mut body, &event_id(stream_no, s), data);
        }
        if !body.is_empty() {
            out.push_back(Output::Body {
                response,
                bytes: body,
            });
        }
        stream.delivered = stream.log.last_seq;
        if stream.done {
            out.push_back(Output::End { response });
        } else {
            stream.framing = Framing::Sse;
            stream.response = Some(response);
        }
        true
    }

    /// Ends every live response (the session is over).
    pub(super) fn end_all(&mut self, out: &mut VecDeque<Output>) {
        let mut numbers: Vec<u64> = self.streams.keys().copied().collect();
        numbers.sort_unstable();
        for n in numbers {
            let Some(stream) = self.streams.get_mut(&n) else {
                continue;
            };
            stream.done = true;
            if let Some(response) = stream.response.take() {
                if stream.framing == Framing::Undecided {
                    // No answer came: the POST ends as 404 (the session is gone), the
                    // status a client re-initializes on.
                    out.push_back(super::refusal_head(response, 404));
                    out.push_back(Output::Body {
                        response,
                        bytes: super::error_body(-32000, "Session ended"),
                    });
                }
                out.push_back(Output::End { response });
            }
        }
        self.finished = true;
    }
}

fn sse_head(response: ResponseId) -> Output {
    let mut headers = HeaderList::new();
    headers.insert(CONTENT_TYPE, "text/event-stream");
    headers.insert(CACHE_CONTROL, "no-cache");
    Output::Head {
        response,
        status: 200,
        headers,
    }
}

/// Decides an undecided POST stream for SSE: its head goes out (while the response is still
/// open), with the priming event when `primes`, then the answers held for a JSON body (a
/// batch's first ones) as events, in order, before anything sent after this call.
fn open_sse(
    stream: &mut Stream,
    stream_no: u64,
    config: &HttpServerConfig,
    out: &mut VecDeque<Output>,
    primes: bool,
) {
    stream.framing = Framing::Sse;
    if let Some(response) = stream.response {
        out.push_back(sse_head(response));
        if primes {
            let mut body = Vec::new();
            encode_priming(&mut body, &event_id(stream_no, 0), config.retry);
            out.push_back(Output::Body {
                response,
                bytes: body,
            });
        }
    }
    for held in std::mem::take(&mut stream.answers) {
        push_event(stream, stream_no, config, out, held);
    }
}

fn push_event(
    stream: &mut Stream,
    stream_no: u64,
    config: &HttpServerConfig,
    out: &mut VecDeque<Output>,
    bytes: Vec<u8>,
) {
    let mut event = Vec::new();
    let seq = stream.log.last_seq + 1;
    encode_event(&mut event, &event_id(stream_no, seq), &bytes);
    stream
        .log
        .push(bytes, config.replay_events, config.replay_bytes);
    if let Some(response) = stream.response {
        stream.delivered = seq;
        out.push_back(Output::Body {
            response,
            bytes: event,
        });
    }
}

/// Sends a POST's held answers as one JSON body (an array for several) and ends it.
fn finish_json(stream: &mut Stream, out: &mut VecDeque<Output>) {
    stream.framing = Framing::Json;
    let answers = std::mem::take(&mut stream.answers);
    let Some(response) = stream.response.take() else {
        return;
    };
    let bytes = match answers.len() {
        1 => answers.into_iter().next().unwrap_or_default(),
        _ => {
            let mut body = vec![b'['];
            for (i, a) in answers.iter().enumerate() {
                if i > 0 {
                    body.push(b',');
                }
                body.extend_from_slice(a);
            }
            body.push(b']');
            body
        }
    };
    let mut headers = HeaderList::new();
    headers.insert(CONTENT_TYPE, "application/json");
    out.push_back(Output::Head {
        response,
        status: 200,
        headers,
    });
    out.push_back(Output::Body { response, bytes });
    out.push_back(Output::End { response });
}
