//! The active clock and the index of request deadlines, shared by the client and server sessions.
//!
//! Request deadlines are kept in active time: time since the session started, minus the time
//! spent with deadlines paused (while the host answers an elicitation or a sampling request on
//! the user's behalf, the requests that wait on it must not time out). Pausing therefore costs
//! nothing per request: the whole index shifts at once.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use super::RequestHandle;
use crate::time::{Duration, Instant, saturating_add};

/// Converts caller instants to active time and back.
#[derive(Debug)]
pub(crate) struct ActiveClock {
    epoch: Instant,
    paused_total: Duration,
    paused_since: Option<Instant>,
    pause_depth: usize,
}

impl ActiveClock {
    pub(crate) fn new(epoch: Instant) -> Self {
        ActiveClock {
            epoch,
            paused_total: Duration::ZERO,
            paused_since: None,
            pause_depth: 0,
        }
    }

    /// Active time at `now`. Saturates instead of panicking on instants from before the epoch.
    pub(crate) fn active(&self, now: Instant) -> Duration {
        let elapsed = now.saturating_duration_since(self.epoch);
        let paused_now = self
            .paused_since
            .map_or(Duration::ZERO, |since| now.saturating_duration_since(since));
        elapsed
            .saturating_sub(self.paused_total)
            .saturating_sub(paused_now)
    }

    /// The instant at which active time reaches `active`, or `None` while paused (active time
    /// does not advance, so no deadline can be reached).
    pub(crate) fn instant_of(&self, active: Duration) -> Option<Instant> {
        if self.paused_since.is_some() {
            return None;
        }
        Some(saturating_add(
            saturating_add(self.epoch, active),
            self.paused_total,
        ))
    }

    /// Starts (or nests) a pause.
    pub(crate) fn pause(&mut self, now: Instant) {
        self.pause_depth += 1;
        if self.pause_depth == 1 {
            self.paused_since = Some(now);
        }
    }

    /// Ends one level of pause; active time resumes when the last one ends.
    pub(crate) fn resume(&mut self, now: Instant) {
        if self.pause_depth == 0 {
            return;
        }
        self.pause_depth -= 1;
        if self.pause_depth == 0
            && let Some(since) = self.paused_since.take()
        {
            self.paused_total = self
                .paused_total
                .saturating_add(now.saturating_duration_since(since));
        }
    }

    pub(crate) fn is_paused(&self) -> bool {
        self.pause_depth > 0
    }
}

/// Request deadlines in active time: a sorted run plus a min-heap, with lazy deletion.
///
/// Most deadlines arrive in order (one timeout for every request, active time never goes
/// back), so an entry not earlier than the last one is appended to `run`, a queue sorted by
/// construction: O(1) insert and pop. Any other entry goes to `heap`: O(log n). The earliest
/// entry is the smaller of the two fronts. Removing the earliest entry, or the last of the
/// run, drops it at once; removing any other only counts it as stale, and stale entries are
/// dropped when they reach the front, so [`earliest`](Self::earliest) is always a live
/// deadline. `stale` is exact: with none held, every entry is live. Entries are two `u64`s (times as nanoseconds of active time). Which entries are
/// live is the pending table's knowledge, passed in as `live(at, handle)`: a request whose
/// armed deadline is `at`. When stale entries outnumber live ones both parts are rebuilt from
/// the live ones, so cancelled requests cannot make the index grow without bound (at most
/// about twice the live entries, plus [`COMPACT_MIN`]).
///
/// Callers guarantee that a handle never has two entries with the same `at` at once (a
/// re-armed deadline that did not move is left alone), so a stale entry is never mistaken for
/// a live one, and `(at, handle)` names one entry.
#[derive(Debug, Default)]
pub(crate) struct DeadlineIndex {
    run: VecDeque<(u64, u64)>,
    heap: BinaryHeap<Reverse<(u64, u64)>>,
    stale: usize,
}

/// Below this many entries the index is never compacted (rebuilding costs more than it saves).
const COMPACT_MIN: usize = 64;

impl DeadlineIndex {
    /// Arms `handle` at active time `at` (nanoseconds).
    pub(crate) fn insert(&mut self, at: u64, handle: RequestHandle) {
        if self.run.back().is_none_or(|&(last, _)| at >= last) {
            self.run.push_back((at, handle.0));
        } else {
            self.heap.push(Reverse((at, handle.0)));
        }
    }

    /// Disarms the entry `(at, handle)`, inserted and not popped; call after the pending
    /// table stopped naming it (`live(at, handle)` is false from now on).
    ///
    /// The entry is dropped at once when it is the earliest (requests answered in the order
    /// they were sent) or the last of the sorted run (one sent just before); any other is
    /// counted stale and left for later ([`remove_lazily`](Self::remove_lazily), the plain
    /// path this one is held equal to by a property test). Either way
    /// [`earliest`](Self::earliest) stays live.
    pub(crate) fn remove(
        &mut self,
        at: u64,
        handle: RequestHandle,
        live: impl Fn(u64, RequestHandle) -> bool,
    ) {
        let entry = (at, handle.0);
        if self.front() == Some(entry) {
            self.pop_front();
            // With no stale entry held, the new front is live: no lookup needed.
            if self.stale > 0 {
                self.settle(&live);
            }
        } else if self.run.back() == Some(&entry) {
            // The run stays sorted without its last entry; the front did not move.
            self.run.pop_back();
        } else {
            self.remove_lazily(live);
        }
    }

    /// [`remove`](Self::remove) by lazy deletion alone: counts one entry stale, drops stale
    /// entries from the front, and rebuilds both parts from the live entries when stale ones
    /// outnumber them.
    fn remove_lazily(&mut self, live: impl Fn(u64, RequestHandle) -> bool) {
        self.stale += 1;
        self.settle(&live);
        if self.stale > self.len() / 2 && self.len() >= COMPACT_MIN {
            self.run
                .retain(|&(at, handle)| live(at, RequestHandle(handle)));
            self.heap
                .retain(|&Reverse((at, handle))| live(at, RequestHandle(handle)));
            self.stale = 0;
        }
    }

    /// The earliest live deadline (active time, nanoseconds).
    pub(crate) fn earliest(&self) -> Option<u64> {
        self.front().map(|(at, _)| at)
    }

    /// Removes and returns the earliest live deadline's handle if it is due at active time
    /// `now`. The caller then disarms that request in its table.
    pub(crate) fn pop_due(
        &mut self,
        now: u64,
        live: impl Fn(u64, RequestHandle) -> bool,
    ) -> Option<RequestHandle> {
        while let Some((at, handle)) = self.front() {
            if at > now {
                return None;
            }
            self.pop_front();
            let handle = RequestHandle(handle);
            if live(at, handle) {
                // The popped entry is the caller's to disarm; skip stale ones behind it so
                // `earliest` stays live (with none held, every entry behind it is live).
                if self.stale > 0 {
                    self.settle(&|a, h| h != handle && live(a, h));
                }
                return Some(handle);
            }
            self.stale = self.stale.saturating_sub(1);
        }
        None
    }

    /// The earliest entry, live or stale (the run wins ties).
    fn front(&self) -> Option<(u64, u64)> {
        match (self.run.front(), self.heap.peek()) {
            (Some(&r), Some(&Reverse(h))) => Some(if h.0 < r.0 { h } else { r }),
            (Some(&r), None) => Some(r),
            (None, Some(&Reverse(h))) => Some(h),
            (None, None) => None,
        }
    }

    /// Drops the entry [`front`](Self::front) returns.
    fn pop_front(&mut self) {
        let from_heap = match (self.run.front(), self.heap.peek()) {
            (Some(r), Some(Reverse(h))) => h.0 < r.0,
            (None, Some(_)) => true,
            _ => false,
        };
        if from_heap {
            self.heap.pop();
        } else {
            self.run.pop_front();
        }
    }

    /// Drops stale entries from the front.
    fn settle(&mut self, live: &impl Fn(u64, RequestHandle) -> bool) {
        while let Some((at, handle)) = self.front() {
            if live(at, RequestHandle(handle)) {
                break;
            }
            self.pop_front();
            self.stale = self.stale.saturating_sub(1);
        }
    }

    pub(crate) fn clear(&mut self) {
        self.run.clear();
        self.heap.clear();
        self.stale = 0;
    }

    /// Entries held, live and stale.
    pub(crate) fn len(&self) -> usize {
        self.run.len() + self.heap.len()
    }
}

/// A duration as nanoseconds, saturating at `u64::MAX` (about 584 years).
pub(crate) fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pause_shifts_every_deadline() {
        let t0 = Instant::now();
        let mut c = ActiveClock::new(t0);
        let s = Duration::from_secs(1);
        assert_eq!(c.active(t0 + 5 * s), 5 * s);
        c.pause(t0 + 5 * s);
        assert!(c.is_paused());
        assert_eq!(c.active(t0 + 9 * s), 5 * s);
        assert_eq!(c.instant_of(6 * s), None);
        c.pause(t0 + 6 * s);
        c.resume(t0 + 7 * s);
        assert!(c.is_paused(), "nested pause still holds");
        c.resume(t0 + 10 * s);
        assert_eq!(c.active(t0 + 10 * s), 5 * s);
        assert_eq!(c.instant_of(6 * s), Some(t0 + 11 * s));
        c.resume(t0 + 12 * s); // unbalanced resume is ignored
        assert_eq!(c.active(t0 + 12 * s), 7 * s);
    }

    #[test]
    fn instants_before_the_epoch_saturate() {
        let t0 = Instant::now() + Duration::from_secs(10);
        let c = ActiveClock::new(t0);
        assert_eq!(c.active(t0 - Duration::from_secs(5)), Duration::ZERO);
    }

    #[test]
    fn deadline_heap_stays_bounded_and_its_top_live() {
        use std::cell::RefCell;
        use std::collections::HashMap;
        // handle -> armed deadline: the pending table's part.
        let armed = RefCell::new(HashMap::new());
        let live = |at: u64, h: RequestHandle| armed.borrow().get(&h.0) == Some(&at);
        let mut index = DeadlineIndex::default();
        for n in 0..10_000u64 {
            armed.borrow_mut().insert(n, 1_000 + n);
            index.insert(1_000 + n, RequestHandle(n));
            // Cancel all but every tenth, each once the next is armed (neither the earliest
            // nor the latest entry, so counted stale): the index must not keep them all.
            if n > 0 && (n - 1) % 10 != 0 {
                armed.borrow_mut().remove(&(n - 1));
                index.remove(1_000 + n - 1, RequestHandle(n - 1), live);
            }
            let live_count = armed.borrow().len();
            assert!(index.len() <= 2 * live_count + COMPACT_MIN, "{n}");
            assert_eq!(
                index.earliest(),
                Some(1_000),
                "the top is the live handle 0"
            );
        }
        // Cancelling the earliest moves the top to the next live deadline at once.
        armed.borrow_mut().remove(&0);
        index.remove(1_000, RequestHandle(0), live);
        assert_eq!(index.earliest(), Some(1_010));
        // Pops come in deadline order, live entries only, each once.
        let mut popped = Vec::new();
        while let Some(h) = index.pop_due(1_100, live) {
            armed.borrow_mut().remove(&h.0);
            popped.push(h.0);
        }
        assert_eq!(popped, (1..=10).map(|k| k * 10).collect::<Vec<_>>());
        assert_eq!(index.earliest(), Some(1_110));
        // Out-of-order deadlines (a shorter timeout after a longer one) come out in order.
        for (h, at) in [(50_000, 900), (50_001, 500), (50_002, 700)] {
            armed.borrow_mut().insert(h, at);
            index.insert(at, RequestHandle(h));
        }
        assert_eq!(index.earliest(), Some(500));
        let mut popped = Vec::new();
        while let Some(h) = index.pop_due(1_200, live) {
            armed.borrow_mut().remove(&h.0);
            popped.push(h.0);
        }
        assert_eq!(popped[..4], [50_001, 50_002, 50_000, 110]);
    }

    /// One step of a run of the index (see the property test below).
    #[derive(Clone, Debug)]
    enum Op {
        /// A new request armed `delta` after the latest deadline so far (in order), or at
        /// `earlier` when that is earlier (a shorter timeout after a longer one).
        Arm { delta: u64, earlier: Option<u64> },
        /// The earliest, the latest or any armed request answered or cancelled.
        Disarm(Pick),
        /// An armed request moved later by `delta` (progress reset its timeout).
        Rearm(Pick, u64),
        /// Every deadline due at `at` popped.
        PopDue(u64),
    }

    #[derive(Clone, Copy, Debug)]
    enum Pick {
        Earliest,
        Latest,
        Any(usize),
    }

    fn op() -> impl proptest::strategy::Strategy<Value = Op> {
        use proptest::prelude::*;
        let pick = prop_oneof![
            Just(Pick::Earliest),
            Just(Pick::Latest),
            any::<usize>().prop_map(Pick::Any),
        ];
        prop_oneof![
            4 => (0u64..4, proptest::option::weighted(0.2, 0u64..200))
                .prop_map(|(delta, earlier)| Op::Arm { delta, earlier }),
            3 => pick.clone().prop_map(Op::Disarm),
            1 => (pick, 1u64..50).prop_map(|(p, d)| Op::Rearm(p, d)),
            1 => (0u64..300).prop_map(Op::PopDue),
        ]
    }

    proptest::proptest! {
        /// `remove` (which drops the earliest or latest entry at once) keeps the index
        /// equal to one that only ever removes lazily (`remove_lazily`), and both equal to
        /// the table of armed deadlines: the same earliest deadline after every step, the
        /// same requests popped, in deadline order, and an exact count of stale entries.
        #[test]
        fn removal_at_once_matches_lazy_removal(ops in proptest::collection::vec(op(), 0..300)) {
            use std::cell::RefCell;
            use std::collections::{BTreeSet, HashMap};
            // handle -> armed deadline: the pending table's part, one table per index (the
            // same but while deadlines are popped).
            let tables: [RefCell<HashMap<u64, u64>>; 2] = Default::default();
            let live = |t: usize| {
                let table = &tables[t];
                move |at: u64, h: RequestHandle| table.borrow().get(&h.0) == Some(&at)
            };
            // Every (at, handle) ever inserted: a handle never gets the same instant twice.
            let mut used = BTreeSet::new();
            let mut indexes = [DeadlineIndex::default(), DeadlineIndex::default()];
            let (mut next, mut latest) = (0u64, 0u64);
            let pick = |p: Pick| -> Option<(u64, u64)> {
                let table = tables[0].borrow();
                let mut all: Vec<(u64, u64)> = table.iter().map(|(&h, &at)| (at, h)).collect();
                all.sort_unstable();
                match p {
                    Pick::Earliest => all.first().copied(),
                    Pick::Latest => all.last().copied(),
                    Pick::Any(i) => (!all.is_empty()).then(|| all[i % all.len()]),
                }
            };
            // Index 0 removes with `remove`, index 1 with `remove_lazily` only.
            let disarm = |indexes: &mut [DeadlineIndex; 2], at: u64, h: u64| {
                for table in &tables {
                    table.borrow_mut().remove(&h);
                }
                indexes[0].remove(at, RequestHandle(h), live(0));
                indexes[1].remove_lazily(live(1));
            };
            for op in ops {
                match op {
                    Op::Arm { delta, earlier } => {
                        let at = earlier.filter(|&e| e < latest).unwrap_or(latest + delta);
                        latest = latest.max(at);
                        next += 1;
                        used.insert((at, next));
                        for (table, index) in tables.iter().zip(&mut indexes) {
                            table.borrow_mut().insert(next, at);
                            index.insert(at, RequestHandle(next));
                        }
                    }
                    Op::Disarm(p) => {
                        let Some((at, h)) = pick(p) else { continue };
                        disarm(&mut indexes, at, h);
                    }
                    Op::Rearm(p, delta) => {
                        let Some((old, h)) = pick(p) else { continue };
                        let at = old + delta;
                        if !used.insert((at, h)) {
                            continue;
                        }
                        latest = latest.max(at);
                        disarm(&mut indexes, old, h);
                        for (table, index) in tables.iter().zip(&mut indexes) {
                            table.borrow_mut().insert(h, at);
                            index.insert(at, RequestHandle(h));
                        }
                    }
                    Op::PopDue(now) => {
                        let mut popped = [Vec::new(), Vec::new()];
                        for (t, index) in indexes.iter_mut().enumerate() {
                            while let Some(h) = index.pop_due(now, live(t)) {
                                // The caller disarms the popped request in its table.
                                let at = tables[t].borrow_mut().remove(&h.0);
                                popped[t].push((at, h.0));
                            }
                        }
                        for order in &popped {
                            proptest::prop_assert!(order.windows(2).all(|w| w[0].0 <= w[1].0));
                        }
                        let [mut a, mut b] = popped;
                        a.sort_unstable();
                        b.sort_unstable();
                        proptest::prop_assert_eq!(a, b);
                    }
                }
                let table = tables[0].borrow();
                proptest::prop_assert_eq!(&*table, &*tables[1].borrow());
                let earliest = table.values().min().copied();
                for index in &indexes {
                    proptest::prop_assert_eq!(index.earliest(), earliest);
                    proptest::prop_assert_eq!(index.stale, index.len() - table.len());
                    proptest::prop_assert!(index.len() <= 2 * table.len() + COMPACT_MIN);
                }
            }
        }
    }
}
