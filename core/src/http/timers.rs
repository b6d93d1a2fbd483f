//! [`TimerTable`]: the HTTP connection's own timers in one table, as quinn-proto keeps its
//! connection timers. [`Connection::poll_timeout`](super::Connection::poll_timeout) is the
//! table's minimum (with the session's own deadline), and
//! [`Connection::handle_timeout`](super::Connection::handle_timeout) fires the kinds that
//! expired.
//!
//! Each slot holds the earliest deadline of its kind; the tables that own the deadlines
//! (exchanges, streams, delayed retries, the close, the ready hold) are read back into it by
//! `Connection::refresh_timers` at the end of every input, command and output call that can
//! change one (the pump, `handle_timeout`), so the table is current whenever the host reads
//! `poll_timeout`.

use crate::time::Instant;

/// A kind of timer of the HTTP connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Timer {
    /// An exchange that is not a request ran out of time (it is aborted and fails).
    Exchange = 0,
    /// A dropped SSE stream is due to be resumed.
    Reconnect = 1,
    /// A POST answered 429 / 503 is due to be sent again.
    Retry = 2,
    /// The close (cancellations, then the DELETE) gives up.
    Close = 3,
    /// The wait for the listener is over: the held `Ready` and what followed it are released.
    ReadyHold = 4,
}

/// The earliest deadline of each [`Timer`] kind.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct TimerTable {
    data: [Option<Instant>; 5],
}

impl TimerTable {
    /// Sets (or, with `None`, stops) timer `timer`.
    pub(crate) fn set(&mut self, timer: Timer, at: Option<Instant>) {
        self.data[timer as usize] = at;
    }

    /// When `timer` fires.
    pub(crate) fn get(&self, timer: Timer) -> Option<Instant> {
        self.data[timer as usize]
    }

    /// Whether `timer` is set and due at `now`.
    pub(crate) fn is_expired(&self, timer: Timer, now: Instant) -> bool {
        self.get(timer).is_some_and(|at| now >= at)
    }

    /// The earliest deadline in the table.
    pub(crate) fn next_timeout(&self) -> Option<Instant> {
        self.data.iter().filter_map(|&t| t).min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn the_next_timeout_is_the_minimum_and_expiry_is_inclusive() {
        let t0 = Instant::now();
        let mut table = TimerTable::default();
        assert_eq!(table.next_timeout(), None);
        table.set(Timer::Close, Some(t0 + Duration::from_secs(5)));
        table.set(Timer::Exchange, Some(t0 + Duration::from_secs(2)));
        assert_eq!(table.next_timeout(), Some(t0 + Duration::from_secs(2)));
        assert!(!table.is_expired(Timer::Exchange, t0 + Duration::from_secs(1)));
        assert!(table.is_expired(Timer::Exchange, t0 + Duration::from_secs(2)));
        assert!(!table.is_expired(Timer::Retry, t0 + Duration::from_secs(9)));
        table.set(Timer::Exchange, None);
        assert_eq!(table.next_timeout(), Some(t0 + Duration::from_secs(5)));
    }
}
