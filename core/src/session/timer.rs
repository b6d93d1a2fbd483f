//! The session's timers in one table: [`Session::poll_timeout`] is the table's minimum and
//! [`Session::handle_timeout`] fires the timers that are due, in a fixed order.
//!
//! Each deadline stays with the part that owns it (the handshake its two, the outbound
//! backlog the stall deadline, the task table its expiry, the deadline index the request
//! deadlines in active time); the table is read from those owners whenever it is asked for,
//! so no code path has to remember to update it and it can never go stale.

use super::handshake::HandshakeTimer;
use super::{CloseReason, RequestError, Session};
use crate::rpc::clock::nanos;
use crate::time::{Duration, Instant};

/// One kind of session deadline. The order of [`Timer::ALL`] is the order they fire in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Timer {
    /// The Auto probe gives up on `server/discover` and falls back to `initialize`.
    Probe,
    /// The handshake gives up: the session closes.
    Handshake,
    /// The outbound queue has been full, unread, for too long: the session closes.
    Stall,
    /// A task the client runs for the server reached its ttl.
    TaskExpiry,
    /// The earliest request deadline (in active time: `None` while deadlines are paused).
    Request,
}

impl Timer {
    /// Every timer, in firing order: the probe's fallback first (it re-issues the
    /// handshake, which its own deadline may then close), request deadlines last.
    pub(crate) const ALL: [Timer; 5] = [
        Timer::Probe,
        Timer::Handshake,
        Timer::Stall,
        Timer::TaskExpiry,
        Timer::Request,
    ];

    fn index(self) -> usize {
        self as usize
    }
}

/// When each [`Timer`] fires, if armed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct TimerTable {
    at: [Option<Instant>; Timer::ALL.len()],
}

impl TimerTable {
    pub(crate) fn set(&mut self, timer: Timer, at: Option<Instant>) {
        self.at[timer.index()] = at;
    }

    pub(crate) fn get(&self, timer: Timer) -> Option<Instant> {
        self.at[timer.index()]
    }

    /// The earliest armed instant.
    pub(crate) fn earliest(&self) -> Option<Instant> {
        self.at.iter().flatten().min().copied()
    }

    /// Whether `timer` is armed and due at `now`.
    pub(crate) fn is_due(&self, timer: Timer, now: Instant) -> bool {
        self.get(timer).is_some_and(|at| now >= at)
    }
}

impl Session {
    /// The session's timers as their owners hold them now. Empty once closed.
    pub(crate) fn timers(&self) -> TimerTable {
        let mut table = TimerTable::default();
        if self.is_closed() {
            return table;
        }
        table.set(Timer::Probe, self.handshake.deadline(HandshakeTimer::Probe));
        table.set(
            Timer::Handshake,
            self.handshake.deadline(HandshakeTimer::Overall),
        );
        table.set(Timer::Stall, self.stall_deadline());
        table.set(Timer::TaskExpiry, self.receiver.next_expiry());
        let request = self
            .deadlines
            .earliest()
            .and_then(|at| self.clock.instant_of(Duration::from_nanos(at)));
        table.set(Timer::Request, request);
        table
    }

    /// Fires every timer of `table` due at `now`, in [`Timer::ALL`] order, and stops once the
    /// session closed. Request deadlines are checked even when their slot is empty: one that
    /// came due before deadlines were paused, and was not fired yet, still fires (active time
    /// already passed it).
    pub(super) fn fire_due(&mut self, table: &TimerTable, now: Instant) {
        for timer in Timer::ALL {
            if self.is_closed() {
                return;
            }
            if timer == Timer::Request || table.is_due(timer, now) {
                self.fire(timer, now);
            }
        }
    }

    fn fire(&mut self, timer: Timer, now: Instant) {
        match timer {
            Timer::Probe => {
                self.handshake.probe_fired();
                self.probe_timed_out(now);
            }
            Timer::Handshake => {
                let after = self.handshake.timeout();
                self.close_with(CloseReason::HandshakeTimeout { after });
            }
            Timer::Stall => self.check_stall(now),
            Timer::TaskExpiry => self.expire_tasks(now),
            Timer::Request => self.fire_request_deadlines(now),
        }
    }

    /// Completes every request whose deadline is due in active time at `now` with
    /// [`RequestError::Timeout`] (and tells the server).
    fn fire_request_deadlines(&mut self, now: Instant) {
        let active = nanos(self.clock.active(now));
        loop {
            let pending = &self.pending;
            let Some(handle) = self
                .deadlines
                .pop_due(active, |at, h| pending.is_armed(at, h))
            else {
                break;
            };
            let Some(p) = self.pending.get_mut(handle) else {
                continue;
            };
            // The index entry is gone already; forget it so `complete` does not remove it again.
            let total = p.armed().is_some_and(|(_, total)| total);
            p.set_armed(None);
            let after = if total {
                p.total.as_ref().map(|t| t.max)
            } else {
                p.timeout
            };
            let after = after.map_or(Duration::ZERO, |n| Duration::from_nanos(n.get()));
            self.finish(
                handle,
                Err(RequestError::Timeout { after, total }),
                Some("request timed out"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_minimum_is_the_earliest_armed_timer() {
        let t0 = Instant::now();
        let s = Duration::from_secs(1);
        let mut table = TimerTable::default();
        assert_eq!(table.earliest(), None);
        table.set(Timer::Request, Some(t0 + 5 * s));
        table.set(Timer::Stall, Some(t0 + 3 * s));
        table.set(Timer::Handshake, Some(t0 + 3 * s));
        assert_eq!(table.earliest(), Some(t0 + 3 * s));
        assert!(table.is_due(Timer::Stall, t0 + 3 * s));
        assert!(!table.is_due(Timer::Request, t0 + 4 * s));
        assert!(
            !table.is_due(Timer::Probe, t0 + 100 * s),
            "unarmed is never due"
        );
        table.set(Timer::Stall, None);
        table.set(Timer::Handshake, None);
        assert_eq!(table.earliest(), Some(t0 + 5 * s));
        assert_eq!(table.get(Timer::Request), Some(t0 + 5 * s));
    }
}
