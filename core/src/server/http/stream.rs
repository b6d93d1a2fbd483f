//! One response stream of a session: how its messages are framed (one JSON answer, or SSE
//! events with ids), and the bounded log of its events kept for `Last-Event-ID` resumption.

use crate::time::Duration;
use std::collections::VecDeque;

/// The SSE event id of event `seq` of stream `stream`: the stream is part of the id, so ids
/// are unique across the session's streams and a resumption names the stream it resumes
/// (2025-11-25 asks for both).
#[must_use]
pub(crate) fn event_id(stream: u64, seq: u64) -> String {
    format!("{stream}-{seq}")
}

/// Parses an event id made by [`event_id`]; `None` for anything else.
#[must_use]
pub(crate) fn parse_event_id(id: &str) -> Option<(u64, u64)> {
    let (stream, seq) = id.trim().split_once('-')?;
    Some((stream.parse().ok()?, seq.parse().ok()?))
}

/// Appends one SSE `message` event carrying `data` (compact JSON: no line breaks) to `out`.
pub(crate) fn encode_event(out: &mut Vec<u8>, id: &str, data: &[u8]) {
    out.extend_from_slice(b"id: ");
    out.extend_from_slice(id.as_bytes());
    out.extend_from_slice(b"\nevent: message\ndata: ");
    out.extend_from_slice(data);
    out.extend_from_slice(b"\n\n");
}

/// The priming event of a 2025-11-25 stream: an id and empty data, so a client can resume
/// even before the first message; with `retry`, the delay a client waits before it
/// reconnects, in whole milliseconds.
pub(crate) fn encode_priming(out: &mut Vec<u8>, id: &str, retry: Option<Duration>) {
    out.extend_from_slice(b"id: ");
    out.extend_from_slice(id.as_bytes());
    if let Some(retry) = retry {
        out.extend_from_slice(format!("\nretry: {}", retry.as_millis()).as_bytes());
    }
    out.extend_from_slice(b"\ndata: \n\n");
}

/// The events of one stream, numbered from 1, the oldest dropped past either bound.
#[derive(Debug, Default)]
pub(crate) struct EventLog {
    /// The number of the last event appended.
    pub(crate) last_seq: u64,
    events: VecDeque<(u64, Vec<u8>)>,
    bytes: usize,
}

impl EventLog {
    /// Appends a message; returns its number. The oldest events go past `max_events` or
    /// `max_bytes` (the newest one is always kept).
    pub(crate) fn push(&mut self, data: Vec<u8>, max_events: usize, max_bytes: usize) -> u64 {
        self.last_seq += 1;
        self.bytes += data.len();
        self.events.push_back((self.last_seq, data));
        while self.events.len() > 1 && (self.events.len() > max_events || self.bytes > max_bytes) {
            if let Some((_, old)) = self.events.pop_front() {
                self.bytes -= old.len();
            }
        }
        if max_events == 0 {
            // Nothing is kept for replay; the newest is still returned to the live stream
            // by its caller, which encodes it before this entry goes.
            self.clear();
        }
        self.last_seq
    }

    /// The events after `seq`, oldest first.
    pub(crate) fn after(&self, seq: u64) -> impl Iterator<Item = (u64, &[u8])> {
        self.events
            .iter()
            .filter(move |(s, _)| *s > seq)
            .map(|(s, d)| (*s, d.as_slice()))
    }

    /// The bytes held.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    fn clear(&mut self) {
        self.events.clear();
        self.bytes = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_ids_round_trip_and_reject_others() {
        assert_eq!(parse_event_id(&event_id(3, 17)), Some((3, 17)));
        for bad in [
            "",
            "3",
            "a-1",
            "3-",
            "-1",
            "3-1-2",
            "99999999999999999999-1",
        ] {
            assert_eq!(parse_event_id(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_log_keeps_the_newest_within_both_bounds() {
        let mut log = EventLog::default();
        for i in 0..10u8 {
            log.push(vec![i; 10], 4, 1000);
        }
        let kept: Vec<u64> = log.after(0).map(|(s, _)| s).collect();
        assert_eq!(kept, [7, 8, 9, 10]);
        assert_eq!(log.after(8).count(), 2);
        log.push(vec![0; 35], 4, 40);
        assert!(log.bytes() <= 45, "{}", log.bytes());
        assert_eq!(log.after(0).last().map(|(s, _)| s), Some(11));
    }

    #[test]
    fn sse_framing() {
        let mut out = Vec::new();
        encode_event(&mut out, "1-2", br#"{"a":1}"#);
        assert_eq!(out, b"id: 1-2\nevent: message\ndata: {\"a\":1}\n\n");
    }
}
