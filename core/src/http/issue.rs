//! Turning queued messages and stream attempts into exchange descriptions: the POST slots,
//! the headers of the moment, re-issues after 429 / 503.

use super::connection::Connection;
use super::exchange::{ExchangeId, HttpRequest, Method, Purpose, StreamId};
use super::exchange_table::{Body, Exchange};
use super::headers::{ACCEPT, CONTENT_TYPE, HeaderList, LAST_EVENT_ID};
use super::origin::same_origin;
use super::post_queue::QueuedPost;
use super::streams::Origin;
use super::transport_choice::Phase;
use crate::session::SessionState;
use crate::time::{Instant, saturating_add};

const ACCEPT_POST: &str = "application/json, text/event-stream";
const ACCEPT_SSE: &str = "text/event-stream";

impl Connection {
    /// Starts queued POSTs while the transport and the POST limit allow.
    pub(crate) fn start_posts(&mut self, now: Instant) {
        if self.posts.is_empty() {
            return;
        }
        // Counted once a call, not once a queued POST: with many requests waiting for a POST
        // slot, counting each time was a scan of every exchange per POST started.
        let (mut open_posts, mut initialized_open) = (0, false);
        for x in self.exchanges.values().filter(|x| x.method == Method::Post) {
            open_posts += 1;
            // Its status is enough: servers answer it once they have handled it.
            initialized_open |= x.initialized && matches!(x.read, Body::Head);
        }
        loop {
            let Some(front) = self.posts.front() else {
                return;
            };
            let init = front.purpose == Purpose::Initialize;
            // Handshake order across separate POSTs: a server registers what depends on the
            // client's capabilities when it handles `notifications/initialized` (server-everything
            // adds its sampling and elicitation tools then), so a request POSTed beside it
            // could overtake it and find them missing. Requests wait for its answer's head.
            let held_by_initialized =
                initialized_open && matches!(front.purpose, Purpose::Request(_));
            let allowed = match self.transport.phase {
                Phase::Probing => init && open_posts == 0,
                Phase::Up(_) => {
                    open_posts < self.config.max_concurrent_posts
                        && (init || self.session.state() != SessionState::Handshaking)
                        && !held_by_initialized
                }
                _ => false,
            };
            if !allowed {
                // `initialize` jumps the queue: everything else waits for the handshake.
                if !init
                    && self.posts.has_initialize()
                    && matches!(self.transport.phase, Phase::Probing | Phase::Up(_))
                    && open_posts < self.config.max_concurrent_posts
                    && self.posts.initialize_first()
                {
                    continue;
                }
                return;
            }
            let Some(post) = self.posts.pop_front() else {
                return;
            };
            // Open from here on. (If it failed at once the count is one too high, which only
            // holds the rest back until the next call counts again.)
            open_posts += 1;
            initialized_open |= post.initialized;
            self.issue_post(now, post);
        }
    }

    pub(crate) fn issue_post(&mut self, now: Instant, post: QueuedPost) {
        let url = self.transport.post_url(&self.config.url);
        let generation = self.identity.generation();
        let mut x = Exchange::new(Method::Post, url, post.body, post.purpose, generation);
        if let Purpose::Message(_) = post.purpose {
            x = x.with_deadline(saturating_add(now, self.config.exchange_timeout));
        }
        x.retries = post.retries;
        x.initialized = post.initialized;
        self.issue(x);
    }

    /// A GET of stream `sid` (the listener, a resumption), with `Last-Event-ID` when known.
    pub(crate) fn issue_get(&mut self, now: Instant, sid: StreamId, purpose: Purpose) {
        let last_event_id = self
            .streams
            .get(sid)
            .and_then(|s| s.resume_id())
            .map(str::to_owned);
        let mut x = self.new_get(now, purpose);
        x.last_event_id = last_event_id;
        let id = self.issue(x);
        if let Some(s) = self.streams.get_mut(sid) {
            s.attach(id, self.config.max_event);
        }
    }

    pub(crate) fn start_legacy(&mut self, now: Instant) {
        self.transport.phase = Phase::LegacyConnecting;
        let Some(sid) = self.new_stream(Origin::Legacy) else {
            return;
        };
        let id = self.issue(self.new_get(now, Purpose::LegacyConnect));
        if let Some(s) = self.streams.get_mut(sid) {
            s.attach(id, self.config.max_event);
        }
    }

    /// A GET of the configured URL for `purpose`, bounded by the exchange timeout until its
    /// stream opens.
    fn new_get(&self, now: Instant, purpose: Purpose) -> Exchange {
        let (url, generation) = (self.config.url.clone(), self.identity.generation());
        Exchange::new(Method::Get, url, Vec::new(), purpose, generation)
            .with_deadline(saturating_add(now, self.config.exchange_timeout))
    }

    /// Registers an exchange and queues its request description, with the headers of the
    /// moment (session id, protocol version, custom headers on the configured origin).
    pub(crate) fn issue(&mut self, mut x: Exchange) -> ExchangeId {
        let id = self.exchanges.next_id();
        // Room for the extra headers and those the connection usually adds (Accept,
        // Content-Type, the session id or the 2026-07-28 message headers, the protocol
        // version, Last-Event-ID): one allocation for the list.
        let mut headers = HeaderList::with_capacity(self.config.extra_headers.len() + 6);
        if same_origin(&x.url, &self.config.url) {
            for (n, v) in self.config.extra_headers.iter() {
                headers.append(n, v);
            }
        }
        match x.method {
            Method::Post => {
                headers.insert(ACCEPT, ACCEPT_POST);
                headers.insert(CONTENT_TYPE, "application/json");
            }
            Method::Get => headers.insert(ACCEPT, ACCEPT_SSE),
            Method::Delete => {}
        }
        let streamable = x.purpose != Purpose::LegacyConnect && !self.transport.is_legacy();
        // `|=`: a redirected exchange that carried the id once still counts as having done so.
        x.had_session_id |=
            self.identity
                .stamp(&mut headers, &self.session, streamable, x.purpose, &x.body);
        if let Some(last) = &x.last_event_id {
            headers.insert(LAST_EVENT_ID, last.clone());
        }
        let request = HttpRequest {
            id,
            method: x.method,
            url: x.url.clone(),
            headers,
            body: x.body.clone(),
            purpose: x.purpose,
        };
        self.exchanges.insert(request, x);
        id
    }

    /// Re-issues a POST after 429 / 503.
    pub(crate) fn reissue(&mut self, now: Instant, post: QueuedPost) {
        if let Purpose::Request(h) = post.purpose
            && !self.session.is_pending(h)
        {
            return;
        }
        if self.transport.is_over() {
            return;
        }
        self.issue_post(now, post);
    }
}
