//! [`ExchangeTable`]: the exchanges of one connection, from the moment the connection asks for
//! one ([`Connection::poll_exchange`](super::Connection::poll_exchange)) until it ended or the
//! adapter was told to drop it ([`Connection::poll_abort`](super::Connection::poll_abort)).

use std::collections::{BTreeMap, BTreeSet, VecDeque};

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
    /// When it is aborted unless answered. Private: the table indexes it, so it changes only
    /// through [`ExchangeTable::clear_deadline`].
    deadline: Option<Instant>,
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
///
/// The deadlines of the open exchanges are also kept in order in `deadlines`, so the earliest
/// one is read without a scan (the connection reads it after every input and output call, and
/// most exchanges, the requests, have none). Every change to `open` goes through a method
/// that keeps the two in step; `next_deadline_by_scan` is the plain reference a test holds
/// equal to the index.
#[derive(Debug, Default)]
pub(crate) struct ExchangeTable {
    open: BTreeMap<ExchangeId, Exchange>,
    /// `(deadline, id)` of every open exchange that has a deadline.
    deadlines: BTreeSet<(Instant, ExchangeId)>,
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
        if let Some(d) = x.deadline {
            self.deadlines.insert((d, request.id));
        }
        if let Some(old) = self.open.insert(request.id, x) {
            // Ids come from `next_id` and are never reused, so this is unreachable; the index
            // stays right anyway.
            self.unindex(request.id, &old);
        }
        self.ready.push_back(request);
    }

    /// Drops `x` (open under `id`, now removed) from the deadline index.
    fn unindex(&mut self, id: ExchangeId, x: &Exchange) {
        if let Some(d) = x.deadline {
            self.deadlines.remove(&(d, id));
        }
    }

    /// Removes `id` from `open` and from the deadline index.
    fn remove_open(&mut self, id: ExchangeId) -> Option<Exchange> {
        let x = self.open.remove(&id)?;
        self.unindex(id, &x);
        Some(x)
    }

    /// Exchange `id` no longer ends at a deadline (its long-lived stream was accepted).
    pub(crate) fn clear_deadline(&mut self, id: ExchangeId) {
        if let Some(x) = self.open.get_mut(&id)
            && let Some(d) = x.deadline.take()
        {
            self.deadlines.remove(&(d, id));
        }
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
        self.remove_open(id)
    }

    /// Tells the adapter to drop exchange `id` (stop reading, close the connection). An id
    /// the adapter never started or already finished is ignored there.
    pub(crate) fn abort(&mut self, id: ExchangeId) {
        self.aborts.push_back(id);
    }

    /// Forgets and aborts `id`, if open; returns it.
    pub(crate) fn take(&mut self, id: ExchangeId) -> Option<Exchange> {
        let x = self.remove_open(id)?;
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
            self.remove_open(id);
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
        for &id in &dropped {
            self.remove_open(id);
        }
        self.aborts.extend(dropped);
    }

    /// Forgets and aborts every exchange; nothing more is handed out.
    pub(crate) fn abort_all(&mut self) {
        self.ready.clear();
        self.deadlines.clear();
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
    /// In id order.
    pub(crate) fn due(&self, now: Instant) -> Vec<ExchangeId> {
        let mut due: Vec<ExchangeId> = self
            .deadlines
            .iter()
            .take_while(|(d, _)| now >= *d)
            .map(|&(_, id)| id)
            .collect();
        due.sort_unstable();
        due
    }

    /// The earliest exchange deadline.
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        self.deadlines.first().map(|&(d, _)| d)
    }

    /// [`next_deadline`](Self::next_deadline) by a scan of every open exchange: the
    /// reference the index is held to.
    #[cfg(test)]
    pub(crate) fn next_deadline_by_scan(&self) -> Option<Instant> {
        self.open.values().filter_map(|x| x.deadline).min()
    }

    /// [`due`](Self::due) by a scan of every open exchange: the reference the index is held
    /// to.
    #[cfg(test)]
    pub(crate) fn due_by_scan(&self, now: Instant) -> Vec<ExchangeId> {
        self.open
            .iter()
            .filter(|(_, x)| x.deadline.is_some_and(|d| now >= d))
            .map(|(id, _)| *id)
            .collect()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::headers::HeaderList;
    use crate::session::MessageKind;
    use proptest::prelude::*;
    use std::time::Duration;

    /// A change to the table, on the `n`-th exchange ever opened (modulo how many there are).
    #[derive(Clone, Debug)]
    enum Op {
        Open(Option<u8>),
        Remove(usize),
        Take(usize),
        ClearDeadline(usize),
        AbortWhereLate,
        KeepOnlyEarly,
        AbortAll,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => proptest::option::of(0u8..20).prop_map(Op::Open),
            2 => any::<usize>().prop_map(Op::Remove),
            1 => any::<usize>().prop_map(Op::Take),
            2 => any::<usize>().prop_map(Op::ClearDeadline),
            1 => Just(Op::AbortWhereLate),
            1 => Just(Op::KeepOnlyEarly),
            1 => Just(Op::AbortAll),
        ]
    }

    fn open(table: &mut ExchangeTable, deadline: Option<Instant>) -> ExchangeId {
        let url = Url::parse("http://localhost/mcp").expect("a valid URL");
        let purpose = Purpose::Message(MessageKind::Notification);
        let id = table.next_id();
        let mut x = Exchange::new(Method::Post, url.clone(), Vec::new(), purpose, 0);
        if let Some(d) = deadline {
            x = x.with_deadline(d);
        }
        let request = HttpRequest {
            id,
            method: Method::Post,
            url,
            headers: HeaderList::new(),
            body: Vec::new(),
            purpose,
        };
        table.insert(request, x);
        id
    }

    proptest! {
        /// The deadline index answers as a scan of every open exchange does, whatever
        /// sequence of opens, removals, aborts and cleared deadlines came before.
        #[test]
        fn the_deadline_index_agrees_with_a_scan(ops in proptest::collection::vec(op(), 0..60)) {
            let t0 = Instant::now();
            let at = |s: u8| t0 + Duration::from_secs(u64::from(s));
            let mut table = ExchangeTable::default();
            let mut ids = Vec::new();
            for op in ops {
                let pick = |n: usize| ids.get(n % ids.len().max(1)).copied();
                match op {
                    Op::Open(d) => ids.push(open(&mut table, d.map(at))),
                    Op::Remove(n) => if let Some(id) = pick(n) { table.remove(id); },
                    Op::Take(n) => if let Some(id) = pick(n) { table.take(id); },
                    Op::ClearDeadline(n) => if let Some(id) = pick(n) { table.clear_deadline(id); },
                    Op::AbortWhereLate => table.abort_where(|x| x.deadline.is_some_and(|d| d > at(9))),
                    Op::KeepOnlyEarly => table.keep_only(|x| x.deadline.is_none_or(|d| d < at(14))),
                    Op::AbortAll => table.abort_all(),
                }
                prop_assert_eq!(table.next_deadline(), table.next_deadline_by_scan());
                for s in [0, 5, 10, 19, 25] {
                    prop_assert_eq!(table.due(at(s)), table.due_by_scan(at(s)));
                }
            }
        }
    }
}
