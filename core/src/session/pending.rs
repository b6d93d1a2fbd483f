//! The table of the client's pending requests, keyed by handle, with wire-id aliases.
//!
//! A request's handle is the wire id it was first sent with. A re-send (after an HTTP session
//! was lost, for instance) takes a fresh wire id from the same counter and records it as an
//! alias, so a response to either id finds the request, and the handle the caller holds never
//! changes.

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::num::NonZeroU64;

use super::RequestHandle;

/// Where a request is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stage {
    /// Waiting for the handshake to finish.
    Waiting,
    /// In the outbound queue, not yet handed to the transport.
    Queued,
    /// Handed to the transport: the server may be working on it.
    Sent,
    /// Issued past the in-flight cap: waits for room, deadline running (see
    /// [`admission`](super::admission)).
    Held,
}

/// One pending request: 80 bytes (checked by a test), since a table of them is most of the
/// core's memory per request in flight.
///
/// Times are nanoseconds of the session's active time ([`ActiveClock`](crate::rpc::clock::ActiveClock)):
/// `u64` instead of `Duration` (16 bytes), and never zero (a zero timeout is refused, so a
/// deadline is at least 1 ns after the epoch), which lets `Option` use the zero niche. The
/// rarely used total limit lives out of line.
#[derive(Debug)]
pub(crate) struct Pending {
    pub(crate) method: Cow<'static, str>,
    /// The params as sent (progress token included), kept for re-sends.
    pub(crate) params: Option<super::RawParams>,
    /// The wire id it was last sent with.
    pub(crate) wire: u64,
    /// The timeout per attempt, nanoseconds (restarted by progress when `total` is set).
    pub(crate) timeout: Option<NonZeroU64>,
    /// The deadline armed in the index (active nanoseconds).
    pub(crate) deadline: Option<NonZeroU64>,
    /// The maximum total time when progress resets the timeout.
    pub(crate) total: Option<Box<TotalLimit>>,
    pub(crate) stage: Stage,
    pub(crate) progress: bool,
    /// Whether the armed deadline is the total limit (not the per-attempt timeout).
    pub(crate) deadline_is_total: bool,
}

/// The limit of a request whose timeout progress resets.
#[derive(Debug)]
pub(crate) struct TotalLimit {
    /// The maximum total time, nanoseconds.
    pub(crate) max: NonZeroU64,
    /// Active time at which the request was sent, nanoseconds.
    pub(crate) sent_at: u64,
}

impl Pending {
    /// The armed deadline and whether it is the total limit.
    pub(crate) fn armed(&self) -> Option<(NonZeroU64, bool)> {
        self.deadline.map(|at| (at, self.deadline_is_total))
    }

    /// Records the deadline armed in the index.
    pub(crate) fn set_armed(&mut self, deadline: Option<(NonZeroU64, bool)>) {
        self.deadline = deadline.map(|(at, _)| at);
        self.deadline_is_total = deadline.is_some_and(|(_, total)| total);
    }
}

/// Nanoseconds of a nonzero duration (saturating at about 584 years); `None` for zero.
pub(crate) fn nonzero_nanos(d: crate::time::Duration) -> Option<NonZeroU64> {
    NonZeroU64::new(crate::rpc::clock::nanos(d))
}

/// Hashes the session's own counter values (handles, wire ids) with one multiplication.
///
/// SipHash (std's default) guards against keys chosen to collide; these keys are never the
/// peer's: every key inserted comes from the session's counter, and a peer-supplied id is
/// only ever looked up, which cannot lengthen a probe sequence. Multiplying by an odd
/// constant maps any run of consecutive counters to distinct low bits (the bucket) and
/// mixes them into the high bits (hashbrown's tag).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct CounterHasher(u64);

const MULTIPLIER: u64 = 0x9E37_79B9_7F4A_7C15;

impl Hasher for CounterHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(MULTIPLIER);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0 ^ n).wrapping_mul(MULTIPLIER);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// A map keyed by the session's counter values.
pub(crate) type CounterMap<K, V> = HashMap<K, V, BuildHasherDefault<CounterHasher>>;

/// A set of the session's counter values.
pub(crate) type CounterSet<K> = std::collections::HashSet<K, BuildHasherDefault<CounterHasher>>;

#[derive(Debug, Default)]
pub(crate) struct PendingRequests {
    entries: CounterMap<RequestHandle, Pending>,
    /// Wire ids other than the handle's own, for re-sent requests.
    aliases: CounterMap<u64, RequestHandle>,
}

impl PendingRequests {
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    pub(crate) fn insert(&mut self, handle: RequestHandle, pending: Pending) {
        self.entries.insert(handle, pending);
    }

    pub(crate) fn get(&self, handle: RequestHandle) -> Option<&Pending> {
        self.entries.get(&handle)
    }

    pub(crate) fn get_mut(&mut self, handle: RequestHandle) -> Option<&mut Pending> {
        self.entries.get_mut(&handle)
    }

    /// Whether `handle`'s armed deadline is `at` (active nanoseconds): the deadline index's
    /// test of which entries are live.
    pub(crate) fn is_armed(&self, at: u64, handle: RequestHandle) -> bool {
        self.entries
            .get(&handle)
            .and_then(|p| p.deadline)
            .is_some_and(|d| d.get() == at)
    }

    /// The request currently sent with wire id `wire`, if any.
    pub(crate) fn by_wire(&self, wire: u64) -> Option<RequestHandle> {
        if let Some(&h) = self.aliases.get(&wire) {
            return Some(h);
        }
        let h = RequestHandle(wire);
        match self.entries.get(&h) {
            Some(p) if p.wire == wire => Some(h),
            _ => None,
        }
    }

    /// The only pending request and its wire id, when there is exactly one and it was sent.
    pub(crate) fn sole_sent(&self) -> Option<(RequestHandle, u64)> {
        let mut all = self.entries.iter();
        match (all.next(), all.next()) {
            (Some((h, p)), None) if p.stage == Stage::Sent => Some((*h, p.wire)),
            _ => None,
        }
    }

    /// Whether any pending request was handed to the transport.
    pub(crate) fn any_sent(&self) -> bool {
        self.entries.values().any(|p| p.stage == Stage::Sent)
    }

    /// Gives a request a fresh wire id (for a re-send).
    #[allow(dead_code)] // used by the HTTP layer's re-initialize (next step of the HTTP work)
    pub(crate) fn rewire(&mut self, handle: RequestHandle, wire: u64) {
        if let Some(p) = self.entries.get_mut(&handle) {
            if p.wire != handle.0 {
                self.aliases.remove(&p.wire);
            }
            p.wire = wire;
            self.aliases.insert(wire, handle);
        }
    }

    pub(crate) fn remove(&mut self, handle: RequestHandle) -> Option<Pending> {
        let p = self.entries.remove(&handle)?;
        if p.wire != handle.0 {
            self.aliases.remove(&p.wire);
        }
        Some(p)
    }

    /// Removes every request, in handle order (deterministic event order on close).
    pub(crate) fn drain_sorted(&mut self) -> Vec<(RequestHandle, Pending)> {
        self.aliases.clear();
        let mut all: Vec<_> = self.entries.drain().collect();
        all.sort_unstable_by_key(|(h, _)| *h);
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::{BuildHasher, Hash};

    fn hash<T: Hash>(t: T) -> u64 {
        BuildHasherDefault::<CounterHasher>::default().hash_one(t)
    }

    #[test]
    fn consecutive_handles_fill_distinct_buckets_and_tags_vary() {
        let mask = (1u64 << 12) - 1;
        let mut buckets: Vec<u64> = (5000..5000 + 4096)
            .map(|n| hash(RequestHandle(n)) & mask)
            .collect();
        buckets.sort_unstable();
        buckets.dedup();
        assert_eq!(
            buckets.len(),
            4096,
            "a run of counters maps to distinct buckets"
        );
        let mut tags: Vec<u64> = (0..4096).map(|n| hash(n as u64) >> 57).collect();
        tags.sort_unstable();
        tags.dedup();
        assert_eq!(tags.len(), 128, "every 7-bit tag is used");
    }

    #[test]
    fn an_entry_stays_small() {
        assert!(std::mem::size_of::<Pending>() <= 80);
    }

    #[test]
    fn table_behaviour_is_unchanged() {
        let mut t = PendingRequests::default();
        for n in 1..=1000 {
            t.insert(
                RequestHandle(n),
                Pending {
                    method: Cow::Borrowed("m"),
                    params: None,
                    wire: n,
                    timeout: None,
                    deadline: None,
                    total: None,
                    stage: Stage::Sent,
                    progress: false,
                    deadline_is_total: false,
                },
            );
        }
        t.rewire(RequestHandle(7), 5000);
        assert_eq!(t.by_wire(5000), Some(RequestHandle(7)));
        assert_eq!(t.by_wire(7), None);
        assert_eq!(t.by_wire(8), Some(RequestHandle(8)));
        assert!(t.remove(RequestHandle(7)).is_some());
        assert_eq!(t.by_wire(5000), None);
        let drained = t.drain_sorted();
        assert_eq!(drained.len(), 999);
        assert!(drained.windows(2).all(|w| w[0].0 < w[1].0));
    }
}
