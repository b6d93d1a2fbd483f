//! [`ExchangeTable`]: the exchanges of one connection, from the moment the connection asks for
//! one ([`Connection::poll_exchange`](super::Connection::poll_exchange)) until it ended or the
//! adapter was told to drop it ([`Connection::poll_abort`](super::Connection::poll_abort)).

use std::collections::{BTreeMap, VecDeque};

use url::Url;

use super::exchange::{ExchangeId, HttpRequest, Method, Purpose, StreamId};
use super::headers::HeaderList;
use crate::session::RequestHandle;
use crate::time::Instant;

/// What is read from a response body.
#[derive(Debug)]
pub(crate) enum Body {
    /// Waiting for the head.
    Head,
    /// A JSON body, bounded by `max_body`.
    Json(Vec<u8>),
    /// An SSE body of this stream.
    Sse(StreamId),
    /// A body nobody needs (202 "Accepted", a DELETE answer): bytes read so far, cut off at
    /// `max_body`.
    Ignore(usize),
    /// The body of a failed response, kept up to the excerpt limit; the exchange ends as soon
    /// as the excerpt is full (nothing after it is read).
    Error {
        status: u16,
        headers: HeaderList,
        excerpt: Vec<u8>,
    },
}

/// One open exchange: what was asked for, why, and how far its response has been read.
#[derive(Debug)]
pub(crate) struct Exchange {
    pub(crate) method: Method,
    pub(crate) url: Url,
    pub(crate) body: Vec<u8>,
    pub(crate) purpose: Purpose,
    /// The session generation it was first issued in (kept across redirects).
    pub(crate) generation: u32,
    /// It carried the `Mcp-Session-Id`: a 404 to it means the session is gone.
    pub(crate) had_session_id: bool,
    pub(crate) last_event_id: Option<String>,
    pub(crate) deadline: Option<Instant>,
    /// Redirects followed so far.
    pub(crate) hops: u8,
    /// 429 / 503 re-sends so far.
    pub(crate) retries: u8,
    pub(crate) read: Body,
    /// The POST of `notifications/initialized`: no request POST starts while it is open.
    pub(crate) initialized: bool,
}

impl Exchange {
    /// A fresh exchange of `purpose` in session generation `generation`: no deadline, no
    /// redirect or re-send yet, waiting for its head.
    pub(crate) fn new(
        method: Method,
        url: Url,
        body: Vec<u8>,
        purpose: Purpose,
        generation: u32,
    ) -> Self {
        Exchange {
            method,
            url,
            body,
            purpose,
            generation,
            had_session_id: false,
            last_event_id: None,
            deadline: None,
            hops: 0,
            retries: 0,
            read: Body::Head,
            initialized: false,
        }
    }

    /// The same, ending at `deadline` unless answered.
    pub(crate) fn with_deadline(mut self, deadline: Instant) -> Self {
        self.deadline = Some(deadline);
        self
    }
}

/// The open exchanges, the requests not yet handed to the adapter, and the exchanges the
/// adapter must drop. Ids are never reused.
#[derive(Debug, Default)]
pub(crate) struct ExchangeTable {
    open: BTreeMap<ExchangeId, Exchange>,
    next: u64,
    /// Asked for and not yet taken by `poll_exchange` (each is also in `open`).
    ready: VecDeque<HttpRequest>,
    /// To be dropped by the adapter, in order.
    aborts: VecDeque<ExchangeId>,
}

impl ExchangeTable {
    /// The id the next exchange gets.
    pub(crate) fn next_id(&mut self) -> ExchangeId {
        let id = ExchangeId(self.next);
        self.next += 1;
        id
    }

    /// Opens `x` under `request.id` (from [`next_id`](Self::next_id)) and queues its request
    /// for the adapter.
    pub(crate) fn insert(&mut self, request: HttpRequest, x: Exchange) {
        self.open.insert(request.id, x);
        self.ready.push_back(request);
    }

    pub(crate) fn len(&self) -> usize {
        self.open.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.open.is_empty()
    }

    pub(crate) fn contains(&self, id: ExchangeId) -> bool {
        self.open.contains_key(&id)
    }

    pub(crate) fn get(&self, id: ExchangeId) -> Option<&Exchange> {
        self.open.get(&id)
    }

    pub(crate) fn get_mut(&mut self, id: ExchangeId) -> Option<&mut Exchange> {
        self.open.get_mut(&id)
    }

    pub(crate) fn values(&self) -> impl Iterator<Item = &Exchange> {
        self.open.values()
    }

    /// Forgets an exchange that ended (its body ended, it failed, the connection acted on
    /// it). Pair it with [`abort`](Self::abort) when the adapter must stop it too.
    pub(crate) fn remove(&mut self, id: ExchangeId) -> Option<Exchange> {
        self.open.remove(&id)
    }

    /// Tells the adapter to drop exchange `id` (stop reading, close the connection). An id
    /// the adapter never started or already finished is ignored there.
    pub(crate) fn abort(&mut self, id: ExchangeId) {
        self.aborts.push_back(id);
    }

    /// Forgets and aborts `id`, if open; returns it.
    pub(crate) fn take(&mut self, id: ExchangeId) -> Option<Exchange> {
        let x = self.open.remove(&id)?;
        self.aborts.push_back(id);
        Some(x)
    }

    /// Forgets and aborts every exchange of request `handle`.
    pub(crate) fn abort_request(&mut self, handle: RequestHandle) {
        self.abort_where(|x| x.purpose == Purpose::Request(handle));
    }

    /// Forgets and aborts every exchange for which `pred` holds. A request already queued for
    /// the adapter stays queued: it is handed out, then dropped.
    pub(crate) fn abort_where(&mut self, mut pred: impl FnMut(&Exchange) -> bool) {
        let ids: Vec<ExchangeId> = self
            .open
            .iter()
            .filter(|(_, x)| pred(x))
            .map(|(id, _)| *id)
            .collect();
        for id in ids {
            self.open.remove(&id);
            self.aborts.push_back(id);
        }
    }

    /// Keeps only the exchanges for which `keep` holds: the others are forgotten and
    /// aborted, and only the kept ones' requests stay queued for the adapter.
    pub(crate) fn keep_only(&mut self, mut keep: impl FnMut(&Exchange) -> bool) {
        let kept: Vec<ExchangeId> = self
            .open
            .iter()
            .filter(|(_, x)| keep(x))
            .map(|(id, _)| *id)
            .collect();
        self.ready.retain(|r| kept.contains(&r.id));
        let dropped: Vec<ExchangeId> = self
            .open
            .keys()
            .filter(|id| !kept.contains(id))
            .copied()
            .collect();
        for id in &dropped {
            self.open.remove(id);
        }
        self.aborts.extend(dropped);
    }

    /// Forgets and aborts every exchange; nothing more is handed out.
    pub(crate) fn abort_all(&mut self) {
        self.ready.clear();
        let open = std::mem::take(&mut self.open);
        self.aborts.extend(open.into_keys());
    }

    /// The next request for the adapter.
    pub(crate) fn poll_ready(&mut self) -> Option<HttpRequest> {
        self.ready.pop_front()
    }

    /// The next exchange the adapter drops.
    pub(crate) fn poll_abort(&mut self) -> Option<ExchangeId> {
        self.aborts.pop_front()
    }

    /// The exchanges whose deadline is at or before `now`.
    pub(crate) fn due(&self, now: Instant) -> Vec<ExchangeId> {
        self.open
            .iter()
            .filter(|(_, x)| x.deadline.is_some_and(|d| now >= d))
            .map(|(id, _)| *id)
            .collect()
    }

    /// The earliest exchange deadline.
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        self.open.values().filter_map(|x| x.deadline).min()
    }

    /// Bytes held for bodies being read (JSON bodies, error excerpts).
    pub(crate) fn buffered_len(&self) -> usize {
        self.open
            .values()
            .map(|x| match &x.read {
                Body::Json(b) => b.len(),
                Body::Error { excerpt, .. } => excerpt.len(),
                _ => 0,
            })
            .sum()
    }
}
