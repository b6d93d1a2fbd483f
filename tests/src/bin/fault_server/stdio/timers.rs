//! What the stdio server does later: answers held back by `slow`, `sleep` answers, progress
//! steps. Ordered by instant, then by the order they were added.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::time::Instant;

use mcp_proto::jsonrpc::Id;
use mcp_proto::server::ClientRequestId;
use serde_json::value::RawValue;

use crate::faults::Shape;

/// One thing to do when its instant comes.
pub(super) enum Due {
    /// An answer the session already produced, held back by `slow`: written as `shape` says.
    Write { line: Vec<u8>, shape: Shape },
    /// `sleep`: answer `id` with `result` now, unless the client cancelled it meanwhile.
    Answer {
        id: ClientRequestId,
        /// The client's id for it, for the log once the session has forgotten it.
        wire_id: Id,
        result: Box<RawValue>,
        shape: Shape,
    },
    /// `progress`: report step `step` of `steps` on `id` (then the next, then the answer).
    Progress {
        id: ClientRequestId,
        step: u64,
        steps: u64,
        shape: Shape,
    },
}

struct Timer {
    at: Instant,
    seq: u64,
    due: Due,
}

impl PartialEq for Timer {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}

impl Eq for Timer {}

impl PartialOrd for Timer {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Timer {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.at, self.seq).cmp(&(other.at, other.seq))
    }
}

/// The pending timers.
#[derive(Default)]
pub(super) struct Timers {
    heap: BinaryHeap<Reverse<Timer>>,
    next_seq: u64,
}

impl Timers {
    /// Runs `due` at `at` (after the timers already added for the same instant).
    pub(super) fn add(&mut self, at: Instant, due: Due) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Reverse(Timer { at, seq, due }));
    }

    /// The instant of the earliest timer.
    pub(super) fn next_at(&self) -> Option<Instant> {
        self.heap.peek().map(|Reverse(t)| t.at)
    }

    /// The earliest timer, if it is due at `now`.
    pub(super) fn pop_due(&mut self, now: Instant) -> Option<Due> {
        if self.next_at()? > now {
            return None;
        }
        self.heap.pop().map(|Reverse(t)| t.due)
    }
}
