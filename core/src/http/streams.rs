//! Logical SSE streams: per-stream last event id, replay detection, and the reconnection
//! schedule (`retry` from the server, else a capped backoff, bounded attempts).

use std::collections::VecDeque;

use super::backoff::Backoff;
use super::exchange::{ConnectionConfig, ExchangeId, StreamId};
use crate::framing::sse::SseDecoder;
use crate::session::RequestHandle;
use crate::time::{Duration, Instant, saturating_add};

/// Event ids remembered per stream to recognise replays.
const RECENT_IDS: usize = 64;
/// The shortest wait before a reconnection.
const MIN_DELAY: Duration = Duration::from_millis(1);
/// Longest event id kept (longer ids are still sent back, but not remembered for replays).
const MAX_ID_LEN: usize = 1024;

/// What a stream carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Origin {
    /// The reply stream of a POST: of a request, or of `initialize` (`None`).
    Post(Option<RequestHandle>),
    /// The GET listener.
    Listen,
    /// The legacy HTTP+SSE stream.
    Legacy,
}

#[derive(Debug)]
pub(crate) struct Stream {
    pub(crate) origin: Origin,
    /// The decoder of the current exchange: fresh per exchange, so an event without an `id`
    /// field is never mistaken for a replay of the previous id.
    pub(crate) decoder: SseDecoder,
    /// The id in force in the current exchange (to see which events set a new one).
    current_id: Option<String>,
    /// The last event id of the stream, across exchanges: the `Last-Event-ID` to resume with.
    pub(crate) last_event_id: Option<String>,
    recent: VecDeque<String>,
    pub(crate) retry: Option<Duration>,
    backoff: Backoff,
    /// Whether the current exchange delivered anything new.
    pub(crate) productive: bool,
    pub(crate) exchange: Option<ExchangeId>,
    pub(crate) reconnect_at: Option<Instant>,
    /// The session generation the stream belongs to.
    pub(crate) generation: u32,
    /// For the reply to a handshake request: that request's wire id (a re-issued handshake
    /// waits on another stream).
    pub(crate) handshake_wire: Option<u64>,
    /// The server accepted an exchange of this stream once (a listener that worked): a 404
    /// to a later one means the session is gone, not that there is no listener.
    pub(crate) accepted: bool,
    /// When the stream last lost its exchange, until the server accepts a new one: what the
    /// server sent since may be lost.
    pub(crate) dropped_at: Option<Instant>,
}

impl Stream {
    pub(crate) fn new(
        origin: Origin,
        config: &ConnectionConfig,
        id: StreamId,
        generation: u32,
    ) -> Self {
        let mut backoff = Backoff::new(
            config.reconnect_initial,
            config.reconnect_max,
            2,
            Some(config.reconnect_attempts),
        );
        if config.jitter_seed != 0 {
            backoff = backoff.with_jitter(config.jitter_seed ^ id.0);
        }
        Self {
            origin,
            decoder: SseDecoder::with_max_event_size(config.max_event),
            current_id: None,
            last_event_id: None,
            recent: VecDeque::new(),
            retry: None,
            backoff,
            productive: false,
            exchange: None,
            reconnect_at: None,
            generation,
            handshake_wire: None,
            accepted: false,
            dropped_at: None,
        }
    }

    /// Starts reading a new exchange of this stream.
    pub(crate) fn attach(&mut self, exchange: ExchangeId, max_event: usize) {
        self.exchange = Some(exchange);
        self.decoder = SseDecoder::with_max_event_size(max_event);
        self.current_id = None;
        self.productive = false;
        self.reconnect_at = None;
    }

    /// Records an event's id in force; returns `false` when the event is a replay of one
    /// already delivered on this stream (it set an id seen before).
    pub(crate) fn accept(&mut self, id: Option<&str>) -> bool {
        if id == self.current_id.as_deref() {
            // No new id: an event without an `id` field (ids are unique per event).
            self.productive = true;
            return true;
        }
        self.current_id = id.map(str::to_owned);
        let Some(id) = id else {
            self.productive = true;
            return true;
        };
        if !id.is_empty() && self.recent.iter().any(|r| r == id) {
            return false;
        }
        self.productive = true;
        self.remember(id.to_owned());
        true
    }

    /// Adopts an id the decoder committed without dispatching an event (a priming event:
    /// `id` with empty `data`).
    pub(crate) fn sync_id(&mut self) {
        let Some(id) = self.decoder.last_event_id() else {
            return;
        };
        if Some(id) == self.current_id.as_deref() {
            return;
        }
        let id = id.to_owned();
        self.current_id = Some(id.clone());
        if id.is_empty() || !self.recent.contains(&id) {
            self.productive = true;
            self.remember(id);
        }
    }

    fn remember(&mut self, id: String) {
        if !id.is_empty() && id.len() <= MAX_ID_LEN {
            if self.recent.len() == RECENT_IDS {
                self.recent.pop_front();
            }
            self.recent.push_back(id.clone());
        }
        self.last_event_id = Some(id);
    }

    /// The `Last-Event-ID` to resume with, if the stream has one.
    pub(crate) fn resume_id(&self) -> Option<&str> {
        self.last_event_id.as_deref().filter(|id| !id.is_empty())
    }

    /// Schedules the next attempt after the current exchange dropped; `None` when the attempts
    /// are used up. A productive exchange restarts the attempt count and waits exactly the
    /// server's `retry` (or the first backoff step); an unproductive one waits the larger of
    /// `retry` and the growing backoff.
    pub(crate) fn schedule(&mut self, now: Instant) -> Option<Instant> {
        self.exchange = None;
        let delay = if self.productive {
            self.backoff.reset();
            let step = self.backoff.next_delay()?;
            self.retry.unwrap_or(step)
        } else {
            let step = self.backoff.next_delay()?;
            self.retry.map_or(step, |r| r.max(step))
        };
        self.productive = false;
        // `retry: 0` must not become a reconnection loop within one tick.
        let at = saturating_add(now, delay.max(MIN_DELAY));
        self.reconnect_at = Some(at);
        Some(at)
    }

    /// Bytes held by the decoder and the id memory.
    pub(crate) fn buffered_len(&self) -> usize {
        self.decoder.buffered_len()
            + self.recent.iter().map(String::len).sum::<usize>()
            + self.last_event_id.as_ref().map_or(0, String::len)
            + self.current_id.as_ref().map_or(0, String::len)
    }
}

/// The logical SSE streams of one connection and which one is the GET listener. Ids are never
/// reused; at most `max_streams` are open.
#[derive(Debug, Default)]
pub(crate) struct StreamTable {
    open: std::collections::BTreeMap<StreamId, Stream>,
    next: u64,
    /// The GET listener, while it is open or being opened.
    listener: Option<StreamId>,
    /// The session became ready on Streamable HTTP: the listener is to be opened at the end
    /// of the pump (after `notifications/initialized` was queued, so that goes first).
    listener_wanted: bool,
}

impl StreamTable {
    /// A new stream of `origin`, unless `config.max_streams` are open.
    pub(crate) fn open(
        &mut self,
        origin: Origin,
        config: &ConnectionConfig,
        generation: u32,
    ) -> Option<StreamId> {
        if self.open.len() >= config.max_streams {
            return None;
        }
        let sid = StreamId(self.next);
        self.next += 1;
        self.open
            .insert(sid, Stream::new(origin, config, sid, generation));
        Some(sid)
    }

    pub(crate) fn get(&self, sid: StreamId) -> Option<&Stream> {
        self.open.get(&sid)
    }

    pub(crate) fn get_mut(&mut self, sid: StreamId) -> Option<&mut Stream> {
        self.open.get_mut(&sid)
    }

    pub(crate) fn ids(&self) -> Vec<StreamId> {
        self.open.keys().copied().collect()
    }

    /// Forgets stream `sid` (and that it was the listener); returns it.
    pub(crate) fn remove(&mut self, sid: StreamId) -> Option<Stream> {
        if self.listener == Some(sid) {
            self.listener = None;
        }
        self.open.remove(&sid)
    }

    /// Forgets every stream.
    pub(crate) fn clear(&mut self) {
        self.open.clear();
        self.listener = None;
    }

    /// The GET listener.
    pub(crate) fn listener(&self) -> Option<StreamId> {
        self.listener
    }

    /// Asks for the listener to be opened at the end of the pump (`wanted`), or not.
    pub(crate) fn want_listener(&mut self, wanted: bool) {
        self.listener_wanted = wanted;
    }

    /// Whether the listener is to be opened at the end of the pump.
    pub(crate) fn listener_wanted(&self) -> bool {
        self.listener_wanted
    }

    /// Takes the wish to open the listener (the pump acts on it once).
    pub(crate) fn take_listener_wish(&mut self) -> bool {
        std::mem::take(&mut self.listener_wanted)
    }

    /// Sets (or forgets) which stream is the GET listener.
    pub(crate) fn set_listener(&mut self, sid: Option<StreamId>) {
        self.listener = sid;
    }

    /// The stream reading exchange `id`.
    pub(crate) fn of_exchange(&self, id: ExchangeId) -> Option<StreamId> {
        self.open
            .iter()
            .find(|(_, s)| s.exchange == Some(id))
            .map(|(sid, _)| *sid)
    }

    /// The streams of the reply POSTs of request `handle`.
    pub(crate) fn of_request(&self, handle: RequestHandle) -> Vec<StreamId> {
        self.open
            .iter()
            .filter(|(_, s)| s.origin == Origin::Post(Some(handle)))
            .map(|(sid, _)| *sid)
            .collect()
    }

    /// The streams due to reconnect at `now`.
    pub(crate) fn due(&self, now: Instant) -> Vec<StreamId> {
        self.open
            .iter()
            .filter(|(_, s)| s.reconnect_at.is_some_and(|d| now >= d))
            .map(|(sid, _)| *sid)
            .collect()
    }

    /// When the next reconnection is due.
    pub(crate) fn next_reconnect(&self) -> Option<Instant> {
        self.open.values().filter_map(|s| s.reconnect_at).min()
    }

    /// Bytes the streams' decoders hold.
    pub(crate) fn buffered_len(&self) -> usize {
        self.open.values().map(Stream::buffered_len).sum()
    }
}
