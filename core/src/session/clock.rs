//! The session's "active" clock and the ordered index of request deadlines.
//!
//! Request deadlines are kept in active time: time since the session started, minus the time
//! spent with deadlines paused (while the host answers an elicitation or a sampling request on
//! the user's behalf, the requests that wait on it must not time out). Pausing therefore costs
//! nothing per request: the whole index shifts at once.

use std::collections::BTreeSet;

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

/// Request deadlines in active time, ordered: O(log n) insert, remove and earliest.
#[derive(Debug, Default)]
pub(crate) struct DeadlineIndex {
    set: BTreeSet<(Duration, RequestHandle)>,
}

impl DeadlineIndex {
    pub(crate) fn insert(&mut self, at: Duration, handle: RequestHandle) {
        self.set.insert((at, handle));
    }

    pub(crate) fn remove(&mut self, at: Duration, handle: RequestHandle) {
        self.set.remove(&(at, handle));
    }

    pub(crate) fn earliest(&self) -> Option<Duration> {
        self.set.first().map(|&(at, _)| at)
    }

    /// Removes and returns the earliest deadline if it is due at active time `now`.
    pub(crate) fn pop_due(&mut self, now: Duration) -> Option<RequestHandle> {
        match self.set.first() {
            Some(&(at, handle)) if at <= now => {
                self.set.pop_first();
                Some(handle)
            }
            _ => None,
        }
    }

    pub(crate) fn clear(&mut self) {
        self.set.clear();
    }
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
}
