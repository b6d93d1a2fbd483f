//! The EventSource (server-sent events) grammar, as a chunk-boundary-safe push decoder.
//!
//! [`SseDecoder`] follows the WHATWG HTML "Server-sent events" parsing rules
//! (§9.2.6 "Interpreting an event stream"):
//!
//! - one optional UTF-8 byte order mark, only at the very start of the stream, is skipped;
//! - lines end with CR, LF or CRLF; a CR at the end of one chunk followed by an LF at the start of
//!   the next is one line end;
//! - a line starting with `:` is a comment; `name: value` is a field, with one leading space of
//!   the value stripped; a line without `:` is a field with an empty value;
//! - `data` appends the value and `\n` to the data buffer, `event` sets the event type, `id` sets
//!   the last event id buffer (ignored when the value contains NUL), `retry` sets the
//!   reconnection time (ASCII digits only, otherwise ignored); other fields are ignored;
//! - an empty line dispatches: the last event id is committed (even when there is no data), and an
//!   event with data is delivered with its final `\n` removed and type `message` when none was set;
//! - at the end of the stream an unfinished event (and an unterminated last line) is discarded.
//!
//! Invalid UTF-8 is decoded lossily, line by line, which gives the same text as decoding the whole
//! stream first: CR and LF are ASCII and always end a broken multi-byte sequence.
//!
//! One deliberate difference from a browser: an event whose data is empty *after* its trailing
//! `\n` is removed (`data:` alone, or the MCP 2025-11-25 priming event `id: X` / `data: `) is not
//! delivered, because it can never carry a JSON-RPC message. Its `id` still becomes the last event
//! id, which is the only thing a priming event is for.
//!
//! # Memory
//!
//! The decoder never holds more than the configured maximum event size for the event in progress
//! (see [`SseDecoder::buffered_len`]), whatever the input: a line, or an event, that would exceed it
//! is dropped up to the blank line that ends it and reported once as [`SseItem::TooLarge`].

use std::time::Duration;

/// The default maximum size of one event, 16 MiB: the same bound as the stdio line framing.
pub const DEFAULT_MAX_EVENT_SIZE: usize = 16 * 1024 * 1024;

const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// One thing the decoder found in the stream, handed to the `sink` of
/// [`SseDecoder::decode`] / [`SseDecoder::finish`] in stream order.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SseItem<'a> {
    /// A dispatched event with non-empty data.
    Event(SseEvent<'a>),
    /// A valid `retry` field, reported as soon as its line is read (the spec applies it at once,
    /// not at dispatch). The value is the server's, unclamped: clamp it before arming a timer.
    Retry(Duration),
    /// An event (or a single line) longer than the limit was dropped, from its first line up to the
    /// blank line that ended it (or the end of the stream, see [`SseDecoder::finish`]).
    ///
    /// Lines read before the limit was crossed keep their effect (an `id` is still committed at
    /// the blank line, a `retry` was already reported); lines after it are skipped unread.
    TooLarge {
        /// Bytes of the dropped event's lines, line ends not counted.
        discarded: usize,
        /// The limit in force, as passed to [`SseDecoder::with_max_event_size`].
        limit: usize,
    },
}

/// A dispatched server-sent event. Borrows from the decoder; copy what you keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SseEvent<'a> {
    /// The event type: the last `event` field of this event, or `"message"` when there was none
    /// (or it was empty).
    pub event: &'a str,
    /// The `data` lines joined with `\n`, without a trailing `\n`. Never empty.
    pub data: &'a str,
    /// The last event id in force at dispatch (set by this event or an earlier one), as
    /// [`SseDecoder::last_event_id`] returns it right after this event.
    pub id: Option<&'a str>,
}

/// Where the decoder is with respect to the optional byte order mark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BomState {
    /// At the start of the stream; this many bytes of a BOM have been seen and held back.
    Start(u8),
    /// Past the start of the stream.
    Done,
}

/// A push decoder for one `text/event-stream` body (and, after [`finish`](Self::finish), the
/// next one on a reconnection, keeping the last event id and retry).
///
/// Feed body bytes with [`decode`](Self::decode) in chunks of any size: the items delivered, and
/// the final [`last_event_id`](Self::last_event_id) and [`retry`](Self::retry), do not depend on
/// where the chunks are split. Call [`finish`](Self::finish) when the body ends.
#[derive(Debug, Clone)]
pub struct SseDecoder {
    limit: usize,
    bom: BomState,
    /// The previous byte was a CR, so an LF at the start of the next input is part of its line end.
    after_cr: bool,
    /// Bytes of the current line (empty while discarding).
    line: Vec<u8>,
    /// Raw length of the current line, counted even while discarding, to recognise blank lines.
    line_len: usize,
    /// Raw length of all non-blank lines since the last blank line.
    event_len: usize,
    /// The event in progress is too large and is being skipped up to its blank line.
    discarding: bool,
    data: String,
    event_type: String,
    /// An `id` seen in the event in progress, committed to `last_event_id` at dispatch.
    pending_id: Option<String>,
    last_event_id: Option<String>,
    retry: Option<Duration>,
}

impl Default for SseDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl SseDecoder {
    /// A decoder with the [`DEFAULT_MAX_EVENT_SIZE`] limit.
    pub fn new() -> Self {
        Self::with_max_event_size(DEFAULT_MAX_EVENT_SIZE)
    }

    /// A decoder that holds at most `n` bytes for one event (its current line, data and event
    /// type together); larger events are dropped and reported as [`SseItem::TooLarge`].
    pub fn with_max_event_size(n: usize) -> Self {
        Self {
            limit: n,
            bom: BomState::Start(0),
            after_cr: false,
            line: Vec::new(),
            line_len: 0,
            event_len: 0,
            discarding: false,
            data: String::new(),
            event_type: String::new(),
            pending_id: None,
            last_event_id: None,
            retry: None,
        }
    }

    // ----- (A) getters -----

    /// The last event id string: the value to send as `Last-Event-ID` when reconnecting.
    ///
    /// `None` until an event carrying an `id` field was dispatched (by its blank line; an `id`
    /// line in an event that the stream never finished does not count). `Some("")` when the
    /// server reset it with an empty `id` field: then send no `Last-Event-ID` header.
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_event_id.as_deref()
    }

    /// The last valid `retry` field of any stream this decoder has read, in milliseconds as the
    /// server sent it (saturating at `u64::MAX` ms), unclamped.
    pub fn retry(&self) -> Option<Duration> {
        self.retry
    }

    /// Bytes currently held for the event in progress (the current line, the data and event type
    /// buffers, and up to two bytes of a possible BOM). Never more than the limit, or 2 if the
    /// limit is smaller than that.
    pub fn buffered_len(&self) -> usize {
        let bom = match self.bom {
            BomState::Start(n) => usize::from(n),
            BomState::Done => 0,
        };
        self.line.len() + self.data.len() + self.event_type.len() + bom
    }

    // ----- (B) inputs -----

    /// Decodes the next `chunk` of the body and hands every item it completes to `sink`, in order.
    pub fn decode<F: FnMut(SseItem<'_>)>(&mut self, chunk: &[u8], mut sink: F) {
        let mut chunk = self.skip_bom(chunk);
        while !chunk.is_empty() {
            if self.after_cr {
                self.after_cr = false;
                if chunk[0] == b'\n' {
                    chunk = &chunk[1..];
                    continue;
                }
            }
            match memchr::memchr2(b'\r', b'\n', chunk) {
                Some(i) => {
                    self.push_line_bytes(&chunk[..i]);
                    self.after_cr = chunk[i] == b'\r';
                    self.end_line(&mut sink);
                    chunk = &chunk[i + 1..];
                }
                None => {
                    self.push_line_bytes(chunk);
                    break;
                }
            }
        }
    }

    /// Ends the current body: an unfinished event and an unterminated last line are discarded
    /// (as the spec says), except that an event already being dropped for its size is reported as
    /// [`SseItem::TooLarge`].
    ///
    /// The decoder is then ready for the next body (a reconnection): a BOM is expected again, and
    /// [`last_event_id`](Self::last_event_id) and [`retry`](Self::retry) are kept.
    pub fn finish<F: FnMut(SseItem<'_>)>(&mut self, mut sink: F) {
        if self.discarding {
            sink(SseItem::TooLarge {
                discarded: self.event_len,
                limit: self.limit,
            });
        }
        self.bom = BomState::Start(0);
        self.after_cr = false;
        self.line.clear();
        self.line_len = 0;
        self.reset_event();
    }

    // ----- internals -----

    /// Strips a leading BOM, holding back a partial one until it is known not to be a BOM; then
    /// its bytes are ordinary line bytes (they are not CR or LF).
    fn skip_bom<'c>(&mut self, mut chunk: &'c [u8]) -> &'c [u8] {
        while let BomState::Start(n) = self.bom {
            let Some(&b) = chunk.first() else {
                return chunk;
            };
            let n = usize::from(n);
            if b == BOM[n] {
                chunk = &chunk[1..];
                self.bom = if n + 1 == BOM.len() {
                    BomState::Done
                } else {
                    // n + 1 < 3 here, so it fits in a u8.
                    BomState::Start((n + 1) as u8)
                };
            } else {
                self.bom = BomState::Done;
                self.push_line_bytes(&BOM[..n]);
            }
        }
        chunk
    }

    fn push_line_bytes(&mut self, bytes: &[u8]) {
        self.line_len = self.line_len.saturating_add(bytes.len());
        self.event_len = self.event_len.saturating_add(bytes.len());
        if self.discarding || bytes.is_empty() {
            return;
        }
        let held = self.line.len() + self.data.len() + self.event_type.len();
        if bytes.len() > self.limit.saturating_sub(held) {
            self.start_discarding();
        } else {
            // The line's share of the limit is what the data and event type leave.
            let room = self.limit - self.data.len() - self.event_type.len();
            super::extend_within(&mut self.line, bytes, room);
        }
    }

    fn start_discarding(&mut self) {
        self.discarding = true;
        self.line.clear();
        self.data.clear();
        self.event_type.clear();
        // Give back the memory of a large event rather than keep it for the whole stream.
        self.line.shrink_to(1024);
        self.data.shrink_to(1024);
    }

    fn end_line<F: FnMut(SseItem<'_>)>(&mut self, sink: &mut F) {
        if self.line_len == 0 {
            self.dispatch(sink);
        } else if !self.discarding {
            let line = std::mem::take(&mut self.line);
            self.process_line(&line, sink);
            self.line = line;
            self.line.clear();
        }
        self.line_len = 0;
    }

    fn process_line<F: FnMut(SseItem<'_>)>(&mut self, line: &[u8], sink: &mut F) {
        let (name, value) = match memchr::memchr(b':', line) {
            Some(0) => return, // a comment
            Some(i) => {
                let value = &line[i + 1..];
                (&line[..i], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &[][..]),
        };
        // Field names compare as bytes: lossy decoding never turns other bytes into ASCII, and
        // never produces NUL, so these checks equal the spec's checks on decoded text.
        match name {
            b"data" => {
                let value = lossy_utf8(value);
                let held = self.data.len() + self.event_type.len();
                if value.len() >= self.limit.saturating_sub(held) {
                    // The joining `\n` counts too, hence `>=`.
                    self.start_discarding();
                } else {
                    self.data.push_str(&value);
                    self.data.push('\n');
                }
            }
            b"event" => {
                let value = lossy_utf8(value);
                if value.len() > self.limit.saturating_sub(self.data.len()) {
                    self.start_discarding();
                } else {
                    self.event_type.clear();
                    self.event_type.push_str(&value);
                }
            }
            b"id" if !value.contains(&0) => {
                self.pending_id = Some(lossy_utf8(value).into_owned());
            }
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                let ms = value.iter().fold(0u64, |acc, &d| {
                    acc.saturating_mul(10).saturating_add(u64::from(d - b'0'))
                });
                let retry = Duration::from_millis(ms);
                self.retry = Some(retry);
                sink(SseItem::Retry(retry));
            }
            // Unknown fields, and `id` / `retry` values the spec says to ignore.
            _ => {}
        }
    }

    fn dispatch<F: FnMut(SseItem<'_>)>(&mut self, sink: &mut F) {
        if let Some(id) = self.pending_id.take() {
            self.last_event_id = Some(id);
        }
        if self.discarding {
            sink(SseItem::TooLarge {
                discarded: self.event_len,
                limit: self.limit,
            });
        } else if self.data.len() > 1 {
            // Non-empty data always ends with the `\n` appended after each `data` line.
            let data = &self.data[..self.data.len() - 1];
            let event = if self.event_type.is_empty() {
                "message"
            } else {
                &self.event_type
            };
            sink(SseItem::Event(SseEvent {
                event,
                data,
                id: self.last_event_id.as_deref(),
            }));
        }
        self.reset_event();
    }

    /// Forgets the event in progress (but not the committed last event id or retry).
    fn reset_event(&mut self) {
        self.data.clear();
        self.event_type.clear();
        self.pending_id = None;
        self.discarding = false;
        self.event_len = 0;
    }
}

/// `String::from_utf8_lossy`, with valid input (nearly always) checked by SIMD first.
fn lossy_utf8(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    match simdutf8::basic::from_utf8(bytes) {
        Ok(text) => std::borrow::Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// An owned copy of an [`SseItem`], so tests can collect and compare them.
    #[derive(Debug, Clone, PartialEq, Eq)]
    enum Item {
        Event {
            event: String,
            data: String,
            id: Option<String>,
        },
        Retry(Duration),
        TooLarge {
            discarded: usize,
            limit: usize,
        },
    }

    fn own(item: SseItem<'_>) -> Item {
        match item {
            SseItem::Event(e) => Item::Event {
                event: e.event.to_owned(),
                data: e.data.to_owned(),
                id: e.id.map(str::to_owned),
            },
            SseItem::Retry(d) => Item::Retry(d),
            SseItem::TooLarge { discarded, limit } => Item::TooLarge { discarded, limit },
        }
    }

    fn ev(event: &str, data: &str, id: Option<&str>) -> Item {
        Item::Event {
            event: event.to_owned(),
            data: data.to_owned(),
            id: id.map(str::to_owned),
        }
    }

    /// Feeds `chunks` then finishes, returning the items and the decoder.
    fn run_chunks(dec: &mut SseDecoder, chunks: &[&[u8]]) -> Vec<Item> {
        let mut out = Vec::new();
        for c in chunks {
            dec.decode(c, |i| out.push(own(i)));
        }
        dec.finish(|i| out.push(own(i)));
        out
    }

    fn run(input: &[u8]) -> (Vec<Item>, SseDecoder) {
        let mut dec = SseDecoder::new();
        let items = run_chunks(&mut dec, &[input]);
        (items, dec)
    }

    #[test]
    fn simple_event_with_default_type() {
        let (items, dec) = run(b"data: hello\n\n");
        assert_eq!(items, vec![ev("message", "hello", None)]);
        assert_eq!(dec.last_event_id(), None);
    }

    #[test]
    fn event_type_and_id() {
        let (items, dec) = run(b"event: ping\nid: 7\ndata: x\n\n");
        assert_eq!(items, vec![ev("ping", "x", Some("7"))]);
        assert_eq!(dec.last_event_id(), Some("7"));
    }

    #[test]
    fn event_type_resets_between_events_but_id_persists() {
        let (items, _) = run(b"event: a\nid: 1\ndata: x\n\ndata: y\n\n");
        assert_eq!(
            items,
            vec![ev("a", "x", Some("1")), ev("message", "y", Some("1"))]
        );
    }

    #[test]
    fn empty_event_field_means_message() {
        let (items, _) = run(b"event:\ndata: x\n\n");
        assert_eq!(items, vec![ev("message", "x", None)]);
    }

    #[test]
    fn multi_line_data_joined_with_lf() {
        let (items, _) = run(b"data: a\ndata:b\ndata:  c\ndata\n\n");
        assert_eq!(items, vec![ev("message", "a\nb\n c\n", None)]);
    }

    #[test]
    fn only_one_leading_space_stripped_and_colons_in_value_kept() {
        let (items, _) = run(b"data:   {\"a\":1}\n\n");
        assert_eq!(items, vec![ev("message", "  {\"a\":1}", None)]);
    }

    #[test]
    fn line_ends_cr_lf_crlf_mixed() {
        let (items, _) = run(b"data: a\rdata: b\r\ndata: c\n\r\ndata: d\r\r");
        assert_eq!(
            items,
            vec![ev("message", "a\nb\nc", None), ev("message", "d", None)]
        );
    }

    #[test]
    fn cr_lf_split_across_chunks_is_one_line_end() {
        let mut dec = SseDecoder::new();
        // If the LF were a second line end it would dispatch "a" on its own.
        let items = run_chunks(&mut dec, &[b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n"]);
        assert_eq!(items, vec![ev("message", "a\nb", None)]);
    }

    #[test]
    fn cr_then_cr_is_two_line_ends() {
        let mut dec = SseDecoder::new();
        let items = run_chunks(&mut dec, &[b"data: a\r", b"\r"]);
        assert_eq!(items, vec![ev("message", "a", None)]);
    }

    #[test]
    fn comments_are_ignored() {
        let (items, _) = run(b": keep-alive\n:\ndata: x\n: inside\n\n: after\n\n");
        assert_eq!(items, vec![ev("message", "x", None)]);
    }

    #[test]
    fn field_without_colon_has_empty_value() {
        // `data` alone appends an empty line; `id` alone sets the id to "".
        let (items, dec) = run(b"id: 5\ndata: x\n\nid\ndata\ndata\n\n");
        assert_eq!(
            items,
            vec![ev("message", "x", Some("5")), ev("message", "\n", Some(""))]
        );
        assert_eq!(dec.last_event_id(), Some(""));
    }

    #[test]
    fn unknown_fields_and_case_mismatch_ignored() {
        let (items, _) = run(b"Data: no\nfoo: bar\nDATA: no\ndata: yes\n\n");
        assert_eq!(items, vec![ev("message", "yes", None)]);
    }

    #[test]
    fn empty_data_is_not_dispatched() {
        let (items, _) = run(b"data:\n\ndata: \n\nevent: x\n\n\n\n");
        assert_eq!(items, vec![]);
    }

    #[test]
    fn priming_event_sets_id_without_event() {
        let mut dec = SseDecoder::new();
        let mut out = Vec::new();
        dec.decode(b"id: 0f3c-1\ndata: \n\n", |i| out.push(own(i)));
        assert_eq!(out, vec![]);
        assert_eq!(dec.last_event_id(), Some("0f3c-1"));
        dec.decode(b"data: {}\n\n", |i| out.push(own(i)));
        assert_eq!(out, vec![ev("message", "{}", Some("0f3c-1"))]);
    }

    #[test]
    fn id_is_committed_at_dispatch_not_before() {
        let mut dec = SseDecoder::new();
        dec.decode(b"id: 1\n\nid: 2\ndata: x\n", |_| {});
        assert_eq!(dec.last_event_id(), Some("1"));
        // The stream ends before the blank line: the unfinished event and its id are dropped.
        let mut out = Vec::new();
        dec.finish(|i| out.push(own(i)));
        assert_eq!(out, vec![]);
        assert_eq!(dec.last_event_id(), Some("1"));
        // The next stream (a reconnection) dispatches nothing stale.
        dec.decode(b"data: y\n\n", |i| out.push(own(i)));
        assert_eq!(out, vec![ev("message", "y", Some("1"))]);
    }

    #[test]
    fn id_with_nul_is_ignored() {
        let (items, dec) = run(b"id: 1\ndata: a\n\nid: 2\0x\ndata: b\n\n");
        assert_eq!(
            items,
            vec![ev("message", "a", Some("1")), ev("message", "b", Some("1"))]
        );
        assert_eq!(dec.last_event_id(), Some("1"));
    }

    #[test]
    fn retry_digits_only() {
        let (items, dec) =
            run(b"retry: 500\nretry: 12a\nretry: -1\nretry:\nretry: 1.5\nretry:  7\n\n");
        assert_eq!(items, vec![Item::Retry(Duration::from_millis(500))]);
        assert_eq!(dec.retry(), Some(Duration::from_millis(500)));
    }

    #[test]
    fn retry_reported_before_dispatch_and_saturates() {
        let mut dec = SseDecoder::new();
        let mut out = Vec::new();
        dec.decode(b"retry: 99999999999999999999999999\ndata: x\n", |i| {
            out.push(own(i))
        });
        assert_eq!(out, vec![Item::Retry(Duration::from_millis(u64::MAX))]);
        dec.decode(b"retry: 0\n", |i| out.push(own(i)));
        assert_eq!(dec.retry(), Some(Duration::ZERO));
    }

    #[test]
    fn bom_stripped_only_at_start() {
        let (items, _) = run(b"\xEF\xBB\xBFdata: a\n\n\xEF\xBB\xBFdata: b\n\n");
        // The second BOM is part of a field name, so that field is unknown and ignored.
        assert_eq!(items, vec![ev("message", "a", None)]);
    }

    #[test]
    fn bom_split_across_chunks() {
        let mut dec = SseDecoder::new();
        let items = run_chunks(&mut dec, &[b"\xEF", b"\xBB", b"\xBFdata: a\n\n"]);
        assert_eq!(items, vec![ev("message", "a", None)]);
    }

    #[test]
    fn partial_bom_is_ordinary_bytes() {
        // EF BB followed by 'd' is not a BOM: it stays in the line (lossily decoded), so the
        // field name is not `data`.
        let (items, _) = run(b"\xEF\xBBdata: a\n\ndata: b\n\n");
        assert_eq!(items, vec![ev("message", "b", None)]);
        let (items, _) = run(b"\xEF\xBB\n\xEF\xBB\xBFdata: c\n\n");
        assert_eq!(items, vec![]);
    }

    #[test]
    fn bom_expected_again_after_finish() {
        let mut dec = SseDecoder::new();
        let mut out = Vec::new();
        dec.decode(b"\xEF\xBB\xBFdata: a\n\n", |i| out.push(own(i)));
        dec.finish(|i| out.push(own(i)));
        dec.decode(b"\xEF\xBB\xBFdata: b\n\n", |i| out.push(own(i)));
        assert_eq!(
            out,
            vec![ev("message", "a", None), ev("message", "b", None)]
        );
    }

    #[test]
    fn invalid_utf8_is_replaced() {
        let (items, _) = run(b"data: a\xFFb\xE2\x82\n\n");
        assert_eq!(items, vec![ev("message", "a\u{FFFD}b\u{FFFD}", None)]);
    }

    #[test]
    fn unterminated_last_line_is_discarded_at_finish() {
        let (items, dec) = run(b"data: a\n\nid: 3\n\ndata: b\n\ndata: c");
        assert_eq!(
            items,
            vec![ev("message", "a", None), ev("message", "b", Some("3"))]
        );
        assert_eq!(dec.buffered_len(), 0);
    }

    #[test]
    fn too_large_event_dropped_up_to_blank_line() {
        let mut dec = SseDecoder::with_max_event_size(16);
        let items = run_chunks(
            &mut dec,
            &[b"id: 1\ndata: 0123456789\ndata: 0123456789\nid: 2\n\ndata: ok\n\n"],
        );
        assert_eq!(
            items,
            vec![
                Item::TooLarge {
                    discarded: 5 + 16 + 16 + 5,
                    limit: 16
                },
                ev("message", "ok", Some("1")),
            ]
        );
    }

    #[test]
    fn huge_line_without_newline_is_not_buffered() {
        let mut dec = SseDecoder::with_max_event_size(1024);
        let chunk = vec![b'x'; 4096];
        let mut out = Vec::new();
        for _ in 0..256 {
            dec.decode(&chunk, |i| out.push(own(i)));
            assert!(dec.buffered_len() <= 1024);
        }
        assert_eq!(out, vec![]);
        dec.decode(b"\n\ndata: after\n\n", |i| out.push(own(i)));
        assert_eq!(
            out,
            vec![
                Item::TooLarge {
                    discarded: 4096 * 256,
                    limit: 1024
                },
                ev("message", "after", None),
            ]
        );
    }

    #[test]
    fn too_large_at_end_of_stream_is_reported() {
        let mut dec = SseDecoder::with_max_event_size(4);
        let items = run_chunks(&mut dec, &[b"data: toolong"]);
        assert_eq!(
            items,
            vec![Item::TooLarge {
                discarded: 13,
                limit: 4
            }]
        );
    }

    #[test]
    fn event_exactly_at_limit_is_kept() {
        // "data: abcd" holds 10 bytes as a line; then data buffer "abcd\n" is 5.
        let mut dec = SseDecoder::with_max_event_size(10);
        let items = run_chunks(&mut dec, &[b"data: abcd\n\n"]);
        assert_eq!(items, vec![ev("message", "abcd", None)]);
        let mut dec = SseDecoder::with_max_event_size(9);
        let items = run_chunks(&mut dec, &[b"data: abcd\n\n"]);
        assert_eq!(
            items,
            vec![Item::TooLarge {
                discarded: 10,
                limit: 9
            }]
        );
    }

    #[test]
    fn comment_lines_do_not_accumulate() {
        let mut dec = SseDecoder::with_max_event_size(32);
        let mut out = Vec::new();
        for _ in 0..1000 {
            dec.decode(b": keep-alive keep-alive\n", |i| out.push(own(i)));
        }
        dec.decode(b"data: x\n\n", |i| out.push(own(i)));
        assert_eq!(out, vec![ev("message", "x", None)]);
    }

    /// Byte soup biased towards the grammar's tokens.
    fn sse_bytes() -> impl Strategy<Value = Vec<u8>> {
        let token = prop_oneof![
            Just(&b"data"[..]),
            Just(&b"data: "[..]),
            Just(&b"id: "[..]),
            Just(&b"id"[..]),
            Just(&b"event: "[..]),
            Just(&b"retry: "[..]),
            Just(&b":"[..]),
            Just(&b" "[..]),
            Just(&b"\r"[..]),
            Just(&b"\n"[..]),
            Just(&b"\r\n"[..]),
            Just(&b"\0"[..]),
            Just(&b"\xEF\xBB\xBF"[..]),
            Just(&b"\xEF"[..]),
            Just(&b"42"[..]),
            Just(&b"x"[..]),
            Just(&b"\xFF\xE2\x82"[..]),
        ]
        .prop_map(<[u8]>::to_vec);
        let any = proptest::collection::vec(any::<u8>(), 0..4);
        proptest::collection::vec(prop_oneof![4 => token, 1 => any], 0..80)
            .prop_map(|parts| parts.concat())
    }

    fn outcome(
        dec: &mut SseDecoder,
        input: &[u8],
        cuts: &[usize],
        limit: usize,
    ) -> (Vec<Item>, Option<String>, Option<Duration>) {
        let mut out = Vec::new();
        let mut start = 0;
        for &cut in cuts.iter().chain(std::iter::once(&input.len())) {
            let cut = cut.clamp(start, input.len());
            dec.decode(&input[start..cut], |i| out.push(own(i)));
            assert!(
                dec.buffered_len() <= limit.max(2),
                "buffered {} > {limit}",
                dec.buffered_len()
            );
            start = cut;
        }
        dec.finish(|i| out.push(own(i)));
        (out, dec.last_event_id().map(str::to_owned), dec.retry())
    }

    proptest! {
        #[test]
        fn chunking_does_not_change_the_outcome(
            input in sse_bytes(),
            mut cuts in proptest::collection::vec(0usize..400, 0..12),
            limit in prop_oneof![Just(DEFAULT_MAX_EVENT_SIZE), 0usize..40],
        ) {
            cuts.sort_unstable();
            let whole = outcome(&mut SseDecoder::with_max_event_size(limit), &input, &[], limit);
            let bytewise: Vec<usize> = (1..input.len()).collect();
            let single = outcome(&mut SseDecoder::with_max_event_size(limit), &input, &bytewise, limit);
            let split = outcome(&mut SseDecoder::with_max_event_size(limit), &input, &cuts, limit);
            prop_assert_eq!(&whole, &single);
            prop_assert_eq!(&whole, &split);
        }

        #[test]
        fn events_respect_the_limit(input in sse_bytes(), limit in 0usize..40) {
            let (items, _, _) = outcome(&mut SseDecoder::with_max_event_size(limit), &input, &[], limit);
            for item in items {
                if let Item::Event { event, data, .. } = item {
                    prop_assert!(!data.is_empty());
                    // An explicit `event: message` is not counted: the check is a lower bound.
                    let type_len = if event == "message" { 0 } else { event.len() };
                    prop_assert!(data.len() + 1 + type_len <= limit);
                }
            }
        }
    }
}
