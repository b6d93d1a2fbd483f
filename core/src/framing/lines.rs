//! Newline-delimited JSON framing, as MCP's stdio transport uses it.
//!
//! On stdio every JSON-RPC message is one line: the message itself may not contain a raw
//! newline, and messages are separated by `\n` (a `\r` before it is tolerated). This module
//! only frames: [`LineDecoder`] turns a byte stream, cut into chunks anywhere, into lines, and
//! [`encode_line`] writes one message as one line. Whether a line is valid JSON-RPC is the
//! session's business; the decoder only guarantees that a [`Line::Message`] is valid UTF-8,
//! not blank, and no longer than the configured limit.
//!
//! # Rules
//!
//! - `\n` ends a line. One `\r` directly before it (CRLF) is stripped, and so is a lone `\r`
//!   at the very end of the stream. A `\r` anywhere else is part of the line.
//! - Lines made only of JSON whitespace (space, tab, `\r`) are skipped without a report.
//! - A line longer than the limit (counted without its `\n` and a final `\r`) is dropped while
//!   it streams in, so at most about `limit` bytes are ever buffered, and reported once as
//!   [`Line::TooLong`] when its `\n` (or the end of the stream) arrives. Decoding carries on
//!   with the next line.
//! - A line that is not UTF-8 is dropped and reported as [`Line::InvalidUtf8`].
//!
//! The output does not depend on how the input is cut into chunks: one chunk, byte by byte
//! or anything in between gives the same sequence of items.

use memchr::{memchr, memchr_iter, memchr2};

/// The default maximum line length: 16 MiB.
///
/// Large enough for big tool results (base64 images, long resource contents), small enough
/// that a server printing garbage without newlines cannot exhaust the client's memory.
pub const DEFAULT_MAX_LINE_LEN: usize = 16 * 1024 * 1024;

/// One framed item produced by [`LineDecoder`].
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Line<'a> {
    /// A complete line, without its `\n` / `\r\n`: not blank, at most the limit long, and
    /// UTF-8 (checked once here, so the JSON parser need not check it again). It borrows the
    /// input chunk whenever the line lay entirely inside that chunk.
    Message(&'a str),
    /// A line longer than `limit` was dropped.
    ///
    /// `discarded` counts the bytes of the line before its `\n` (a final `\r` included).
    /// Reported once per line, when its end is reached or at [`LineDecoder::finish`].
    TooLong {
        /// How many bytes of the line were dropped.
        discarded: usize,
        /// The limit in force ([`LineDecoder::max_line_len`]).
        limit: usize,
    },
    /// A line that is not valid UTF-8 was dropped.
    InvalidUtf8 {
        /// The length of the line (without its line ending).
        len: usize,
        /// The length of its longest valid UTF-8 prefix, as [`std::str::Utf8Error`] reports it.
        valid_up_to: usize,
        /// The line's bytes (without its line ending), so that what can be read of it (the id
        /// of a response) is not lost with it.
        bytes: &'a [u8],
    },
}

/// Splits a byte stream into lines with bounded memory.
///
/// Feed each chunk read from the peer to [`decode`](Self::decode), and call
/// [`finish`](Self::finish) once at end of stream. Items come out through the `sink`
/// callback so that complete lines can be handed out as slices of the chunk itself: when no
/// partial line is buffered, nothing is copied except the incomplete tail of the chunk.
///
/// Memory use is bounded by the limit: [`buffered_len`](Self::buffered_len) never exceeds
/// `max_line_len() + 1` (the `+ 1` is a `\r` that may turn out to be part of a CRLF).
///
/// ```
/// use mcp_proto::framing::lines::{Line, LineDecoder};
///
/// let mut decoder = LineDecoder::new();
/// let mut messages = Vec::new();
/// for chunk in [&b"{\"id\":1}\r\n{\"id\""[..], b":2}\n\n{\"id\":3}"] {
///     decoder.decode(chunk, |line| {
///         if let Line::Message(m) = line {
///             messages.push(m.to_owned());
///         }
///     });
/// }
/// decoder.finish(|line| {
///     if let Line::Message(m) = line {
///         messages.push(m.to_owned());
///     }
/// });
/// assert_eq!(messages, [r#"{"id":1}"#, r#"{"id":2}"#, r#"{"id":3}"#]);
/// ```
#[derive(Debug, Clone)]
pub struct LineDecoder {
    /// The incomplete line carried over between chunks.
    ///
    /// Invariant: it could still become an acceptable line, i.e. `fits(buf.len(), last byte)`.
    buf: Vec<u8>,
    /// `Some(n)` while an over-long line is being skipped: `n` bytes of it were dropped so far.
    /// `buf` is empty in this state.
    discarding: Option<usize>,
    max: usize,
}

impl Default for LineDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl LineDecoder {
    /// A decoder with the [`DEFAULT_MAX_LINE_LEN`] limit.
    pub fn new() -> Self {
        Self::with_max_line_len(DEFAULT_MAX_LINE_LEN)
    }

    /// A decoder that drops lines longer than `max` bytes (line ending not counted).
    ///
    /// `max == 0` is allowed and rejects every non-empty line.
    pub fn with_max_line_len(max: usize) -> Self {
        Self {
            buf: Vec::new(),
            discarding: None,
            max,
        }
    }

    /// The maximum accepted line length in bytes, line ending not counted.
    pub fn max_line_len(&self) -> usize {
        self.max
    }

    /// The number of bytes held for an incomplete line (at most `max_line_len() + 1`).
    pub fn buffered_len(&self) -> usize {
        self.buf.len()
    }

    /// Feeds one chunk of the stream; calls `sink` once per framed item, in stream order.
    ///
    /// Chunks may be cut anywhere, including inside a UTF-8 sequence or between `\r` and
    /// `\n`. An empty chunk does nothing (it does not mean end of stream; use
    /// [`finish`](Self::finish)).
    pub fn decode<F: FnMut(Line<'_>)>(&mut self, chunk: &[u8], mut sink: F) {
        let mut rest = chunk;

        if let Some(dropped) = self.discarding {
            match memchr(b'\n', rest) {
                None => {
                    self.discarding = Some(dropped.saturating_add(rest.len()));
                    return;
                }
                Some(i) => {
                    self.discarding = None;
                    sink(Line::TooLong {
                        discarded: dropped.saturating_add(i),
                        limit: self.max,
                    });
                    rest = &rest[i + 1..];
                }
            }
        }

        if !self.buf.is_empty() {
            let Some(i) = memchr(b'\n', rest) else {
                self.push_partial(rest);
                return;
            };
            let head = &rest[..i];
            let total = self.buf.len().saturating_add(head.len());
            let last = head.last().or(self.buf.last()).copied();
            if fits(total, last, self.max) {
                // Bounded by the limit (+ 1) thanks to the `fits` check just above.
                super::extend_within(&mut self.buf, head, self.max.saturating_add(1));
                emit_line(&self.buf, self.max, &mut sink);
            } else {
                // Do not copy what will be dropped anyway.
                sink(Line::TooLong {
                    discarded: total,
                    limit: self.max,
                });
            }
            self.buf.clear();
            rest = &rest[i + 1..];
        }

        // Fast path: nothing is buffered, so complete lines are slices of `chunk`.
        let mut start = 0;
        for i in memchr_iter(b'\n', rest) {
            emit_line(&rest[start..i], self.max, &mut sink);
            start = i + 1;
        }
        self.push_partial(&rest[start..]);
    }

    /// Ends the stream: delivers a final line that had no trailing newline (or reports it as
    /// too long), then resets the decoder so it can be reused for a new stream.
    pub fn finish<F: FnMut(Line<'_>)>(&mut self, mut sink: F) {
        if let Some(dropped) = self.discarding.take() {
            sink(Line::TooLong {
                discarded: dropped,
                limit: self.max,
            });
        } else if !self.buf.is_empty() {
            emit_line(&self.buf, self.max, &mut sink);
        }
        self.buf.clear();
    }

    /// Appends bytes of a line whose end has not arrived yet, switching to discard mode as
    /// soon as the line can no longer fit.
    fn push_partial(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        if let Some(dropped) = self.discarding {
            self.discarding = Some(dropped.saturating_add(bytes.len()));
            return;
        }
        let total = self.buf.len().saturating_add(bytes.len());
        if fits(total, bytes.last().copied(), self.max) {
            super::extend_within(&mut self.buf, bytes, self.max.saturating_add(1));
        } else {
            self.discarding = Some(total);
            self.buf.clear();
        }
    }
}

/// Whether a line of `total` bytes (line ending excluded, a final `\r` included) whose last
/// byte is `last` is within `max` once a final `\r` is stripped.
///
/// For an incomplete line this says whether it can still become acceptable: a final `\r` may
/// be the start of a CRLF, and any further byte other than `\n` makes it too long.
fn fits(total: usize, last: Option<u8>, max: usize) -> bool {
    total <= max || (total - 1 == max && last == Some(b'\r'))
}

/// Classifies one complete line (without its `\n`) and hands it to `sink`, or skips it if
/// it is blank.
fn emit_line<F: FnMut(Line<'_>)>(line: &[u8], max: usize, sink: &mut F) {
    let content = line.strip_suffix(b"\r").unwrap_or(line);
    if content.len() > max {
        sink(Line::TooLong {
            discarded: line.len(),
            limit: max,
        });
        return;
    }
    // `\n` cannot occur inside a line; JSON whitespace is the other three.
    if content.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r')) {
        return;
    }
    if let Ok(text) = simdutf8::basic::from_utf8(content) {
        return sink(Line::Message(text));
    }
    // Invalid (rare): std's check says where the valid part ends.
    match std::str::from_utf8(content) {
        Ok(text) => sink(Line::Message(text)),
        Err(e) => sink(Line::InvalidUtf8 {
            len: content.len(),
            valid_up_to: e.valid_up_to(),
            bytes: content,
        }),
    }
}

/// Appends `message` and a `\n` to `out`.
///
/// Raw `\n` / `\r` bytes inside `message` can only be insignificant JSON whitespace (inside
/// strings they must be escaped), so they are written as spaces: the output is always exactly
/// one line, and a pretty-printed JSON message stays the same JSON value.
pub fn encode_line(out: &mut Vec<u8>, message: &[u8]) {
    out.reserve(message.len() + 1);
    if memchr2(b'\n', b'\r', message).is_none() {
        out.extend_from_slice(message);
    } else {
        out.extend(
            message
                .iter()
                .map(|&b| if b == b'\n' || b == b'\r' { b' ' } else { b }),
        );
    }
    out.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// An owned copy of a [`Line`], so tests can collect items.
    #[derive(Debug, Clone, PartialEq, Eq)]
    enum Item {
        Message(Vec<u8>),
        TooLong { discarded: usize, limit: usize },
        InvalidUtf8 { len: usize, valid_up_to: usize },
    }

    impl From<Line<'_>> for Item {
        fn from(line: Line<'_>) -> Self {
            match line {
                Line::Message(m) => Item::Message(m.as_bytes().to_vec()),
                Line::TooLong { discarded, limit } => Item::TooLong { discarded, limit },
                Line::InvalidUtf8 {
                    len, valid_up_to, ..
                } => Item::InvalidUtf8 { len, valid_up_to },
            }
        }
    }

    fn msg(s: &str) -> Item {
        Item::Message(s.as_bytes().to_vec())
    }

    /// Decodes `chunks` in order, then finishes; checks the memory bound after each chunk.
    fn decode_chunks<'c>(
        dec: &mut LineDecoder,
        chunks: impl IntoIterator<Item = &'c [u8]>,
    ) -> Vec<Item> {
        let mut items = Vec::new();
        for chunk in chunks {
            dec.decode(chunk, |l| items.push(Item::from(l)));
            assert!(
                dec.buffered_len() <= dec.max_line_len().saturating_add(1),
                "buffered {} > limit {} + 1",
                dec.buffered_len(),
                dec.max_line_len()
            );
        }
        dec.finish(|l| items.push(Item::from(l)));
        assert_eq!(dec.buffered_len(), 0);
        items
    }

    fn decode_all(max: usize, input: &[u8]) -> Vec<Item> {
        decode_chunks(&mut LineDecoder::with_max_line_len(max), [input])
    }

    fn decode_bytewise(max: usize, input: &[u8]) -> Vec<Item> {
        decode_chunks(&mut LineDecoder::with_max_line_len(max), input.chunks(1))
    }

    #[test]
    fn lf_and_crlf() {
        let input = b"{\"a\":1}\n{\"b\":2}\r\n{\"c\":3}\n";
        let expected = vec![msg("{\"a\":1}"), msg("{\"b\":2}"), msg("{\"c\":3}")];
        assert_eq!(decode_all(100, input), expected);
        assert_eq!(decode_bytewise(100, input), expected);
    }

    #[test]
    fn crlf_split_between_cr_and_lf() {
        let mut dec = LineDecoder::new();
        let items = decode_chunks(&mut dec, [&b"{}\r"[..], b"\n[]\r", b"\n"]);
        assert_eq!(items, vec![msg("{}"), msg("[]")]);
    }

    #[test]
    fn cr_inside_a_line_is_kept() {
        assert_eq!(decode_all(100, b"a\rb\n"), vec![msg("a\rb")]);
        // Only one final `\r` is a line ending; the one before it is content.
        assert_eq!(decode_all(100, b"ab\r\r\n"), vec![msg("ab\r")]);
    }

    #[test]
    fn blank_and_whitespace_lines_are_skipped() {
        let input = b"\n\r\n  \t \n \r \r\n{}\n\n";
        assert_eq!(decode_all(100, input), vec![msg("{}")]);
        assert_eq!(decode_bytewise(100, input), vec![msg("{}")]);
        // Form feed is not JSON whitespace: delivered, and the session rejects it.
        assert_eq!(decode_all(100, b"\x0c\n"), vec![msg("\x0c")]);
    }

    #[test]
    fn final_line_without_newline_is_delivered_at_finish() {
        let mut dec = LineDecoder::new();
        let mut items = Vec::new();
        dec.decode(b"{}\n{\"x\":", |l| items.push(Item::from(l)));
        dec.decode(b"1}", |l| items.push(Item::from(l)));
        assert_eq!(items, vec![msg("{}")]);
        assert_eq!(dec.buffered_len(), 7);
        dec.finish(|l| items.push(Item::from(l)));
        assert_eq!(items, vec![msg("{}"), msg("{\"x\":1}")]);
        assert_eq!(dec.buffered_len(), 0);
    }

    #[test]
    fn lone_trailing_cr_is_stripped_at_finish() {
        assert_eq!(decode_all(100, b"{}\r"), vec![msg("{}")]);
        assert_eq!(decode_all(100, b"\r"), vec![]);
        assert_eq!(decode_all(100, b""), vec![]);
    }

    #[test]
    fn finish_resets_for_reuse() {
        let mut dec = LineDecoder::with_max_line_len(4);
        assert_eq!(
            decode_chunks(&mut dec, [&b"abcdefgh"[..]]),
            vec![Item::TooLong {
                discarded: 8,
                limit: 4
            }]
        );
        assert_eq!(decode_chunks(&mut dec, [&b"ab\n"[..]]), vec![msg("ab")]);
    }

    #[test]
    fn limit_exactly_at_the_boundary_is_accepted() {
        for input in [&b"abcd\n"[..], b"abcd\r\n", b"abcd", b"abcd\r"] {
            assert_eq!(decode_all(4, input), vec![msg("abcd")], "{input:?}");
            assert_eq!(decode_bytewise(4, input), vec![msg("abcd")], "{input:?}");
        }
        // A split right after the `\r` of a line that is exactly at the limit.
        let mut dec = LineDecoder::with_max_line_len(4);
        let items = decode_chunks(&mut dec, [&b"abcd\r"[..], b"\n"]);
        assert_eq!(items, vec![msg("abcd")]);
    }

    #[test]
    fn one_byte_over_the_limit_is_too_long() {
        let too_long = |discarded| {
            vec![Item::TooLong {
                discarded,
                limit: 4,
            }]
        };
        for (input, discarded) in [
            (&b"abcde\n"[..], 5),
            (b"abcde\r\n", 6),
            (b"abcde", 5),
            (b"abcd\rx\n", 6),
        ] {
            assert_eq!(decode_all(4, input), too_long(discarded), "{input:?}");
            assert_eq!(decode_bytewise(4, input), too_long(discarded), "{input:?}");
        }
    }

    #[test]
    fn zero_limit_rejects_every_non_empty_line() {
        assert_eq!(
            decode_all(0, b"\n\r\nx\n"),
            vec![Item::TooLong {
                discarded: 1,
                limit: 0
            }]
        );
    }

    #[test]
    fn over_long_line_is_discarded_while_streaming_then_resyncs() {
        let mut dec = LineDecoder::with_max_line_len(8);
        let mut items = Vec::new();
        dec.decode(b"{}\n0123456", |l| items.push(Item::from(l)));
        assert_eq!(dec.buffered_len(), 7);
        // A megabyte without a newline: nothing more is buffered.
        let garbage = vec![b'x'; 1 << 20];
        dec.decode(&garbage, |l| items.push(Item::from(l)));
        assert_eq!(dec.buffered_len(), 0);
        dec.decode(&garbage, |l| items.push(Item::from(l)));
        assert_eq!(items, vec![msg("{}")]);
        dec.decode(b"yy\n[1]\n[2", |l| items.push(Item::from(l)));
        dec.finish(|l| items.push(Item::from(l)));
        assert_eq!(
            items,
            vec![
                msg("{}"),
                Item::TooLong {
                    discarded: 7 + (2 << 20) + 2,
                    limit: 8
                },
                msg("[1]"),
                msg("[2"),
            ]
        );
    }

    #[test]
    fn over_long_buffered_line_completed_in_one_chunk_is_not_copied() {
        let mut dec = LineDecoder::with_max_line_len(8);
        let mut items = Vec::new();
        dec.decode(b"0123", |l| items.push(Item::from(l)));
        dec.decode(b"456789abc\nok\n", |l| items.push(Item::from(l)));
        assert_eq!(
            items,
            vec![
                Item::TooLong {
                    discarded: 13,
                    limit: 8
                },
                msg("ok")
            ]
        );
    }

    #[test]
    fn invalid_utf8_is_reported_and_skipped() {
        let input = b"{\"a\":\"\xff\"}\n{}\n";
        let expected = vec![
            Item::InvalidUtf8 {
                len: 9,
                valid_up_to: 6,
            },
            msg("{}"),
        ];
        assert_eq!(decode_all(100, input), expected);
        assert_eq!(decode_bytewise(100, input), expected);
        // A truncated sequence at end of stream is invalid too.
        assert_eq!(
            decode_all(100, b"{\xe2\x82"),
            vec![Item::InvalidUtf8 {
                len: 3,
                valid_up_to: 1
            }]
        );
    }

    #[test]
    fn utf8_sequence_split_across_chunks_is_valid() {
        let euro = "[\"€\"]".as_bytes();
        let mut dec = LineDecoder::new();
        let items = decode_chunks(&mut dec, [&euro[..3], &euro[3..], b"\n"]);
        assert_eq!(items, vec![msg("[\"€\"]")]);
    }

    #[test]
    fn complete_lines_are_borrowed_from_the_chunk() {
        let mut dec = LineDecoder::new();
        let chunk = b"{\"a\":1}\n{\"b\":2}\r\n{\"c\"";
        let range = chunk.as_ptr_range();
        let mut borrowed = 0;
        dec.decode(chunk, |l| {
            let Line::Message(m) = l else {
                panic!("unexpected {l:?}")
            };
            assert!(range.contains(&m.as_ptr()), "copied: {m:?}");
            borrowed += 1;
        });
        assert_eq!(borrowed, 2);
        // Only the incomplete tail was copied.
        assert_eq!(dec.buffered_len(), 4);

        // Once the tail is completed, the lines after it are borrowed again.
        let chunk2 = b":3}\n{\"d\":4}\n";
        let range2 = chunk2.as_ptr_range();
        let mut seen = Vec::new();
        dec.decode(chunk2, |l| {
            let Line::Message(m) = l else {
                panic!("unexpected {l:?}")
            };
            seen.push((m.as_bytes().to_vec(), range2.contains(&m.as_ptr())));
        });
        assert_eq!(
            seen,
            vec![
                (b"{\"c\":3}".to_vec(), false),
                (b"{\"d\":4}".to_vec(), true)
            ]
        );
    }

    #[test]
    fn encode_line_writes_exactly_one_line() {
        let mut out = b"prefix\n".to_vec();
        encode_line(&mut out, b"{\"a\":1}");
        assert_eq!(out, b"prefix\n{\"a\":1}\n");

        let mut out = Vec::new();
        encode_line(&mut out, b"{\r\n  \"a\": \"x\\ny\"\n}");
        assert_eq!(out, b"{    \"a\": \"x\\ny\" }\n");
    }

    #[test]
    fn encoded_pretty_json_round_trips() {
        let value = serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": {"text": "a\nb\r\n"}});
        let pretty = serde_json::to_vec_pretty(&value).unwrap();
        assert!(pretty.contains(&b'\n'));
        let mut wire = Vec::new();
        encode_line(&mut wire, &pretty);
        let items = decode_all(DEFAULT_MAX_LINE_LEN, &wire);
        let [Item::Message(m)] = &items[..] else {
            panic!("expected one message, got {items:?}")
        };
        assert_eq!(
            serde_json::from_slice::<serde_json::Value>(m).unwrap(),
            value
        );
    }

    #[test]
    fn default_limit() {
        assert_eq!(LineDecoder::new().max_line_len(), DEFAULT_MAX_LINE_LEN);
        assert_eq!(LineDecoder::default().max_line_len(), DEFAULT_MAX_LINE_LEN);
        assert_eq!(DEFAULT_MAX_LINE_LEN, 16 * 1024 * 1024);
    }

    /// An independent model of the rules: split the whole input on `\n`, classify each line.
    fn model(max: usize, input: &[u8]) -> Vec<Item> {
        let mut lines: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
        // `split` yields a final piece after the last `\n`; it is an unterminated line unless empty.
        if lines.last().is_some_and(|l| l.is_empty()) {
            lines.pop();
        }
        let mut items = Vec::new();
        for line in lines {
            let content = line.strip_suffix(b"\r").unwrap_or(line);
            if content.len() > max {
                items.push(Item::TooLong {
                    discarded: line.len(),
                    limit: max,
                });
            } else if content.iter().all(|b| b" \t\r".contains(b)) {
            } else {
                match std::str::from_utf8(content) {
                    Ok(_) => items.push(Item::Message(content.to_vec())),
                    Err(e) => items.push(Item::InvalidUtf8 {
                        len: content.len(),
                        valid_up_to: e.valid_up_to(),
                    }),
                }
            }
        }
        items
    }

    /// Line contents biased towards the interesting bytes.
    fn line_bytes() -> impl Strategy<Value = Vec<u8>> {
        let byte = prop_oneof![
            4 => Just(b'a'),
            2 => Just(b' '),
            2 => Just(b'\r'),
            1 => Just(b'\t'),
            1 => Just(0xe2u8),
            1 => Just(0x82u8),
            1 => Just(0xacu8),
            1 => Just(0xffu8),
            1 => any::<u8>().prop_filter("no newline", |b| *b != b'\n'),
        ];
        prop::collection::vec(byte, 0..24)
    }

    fn stream() -> impl Strategy<Value = Vec<u8>> {
        (
            prop::collection::vec((line_bytes(), any::<bool>()), 0..12),
            any::<bool>(),
        )
            .prop_map(|(lines, terminate_last)| {
                let mut out = Vec::new();
                let n = lines.len();
                for (i, (line, crlf)) in lines.into_iter().enumerate() {
                    out.extend_from_slice(&line);
                    if crlf {
                        out.push(b'\r');
                    }
                    if i + 1 < n || terminate_last {
                        out.push(b'\n');
                    }
                }
                out
            })
    }

    proptest! {
        #[test]
        fn chunking_does_not_change_the_items(
            input in stream(),
            max in 0usize..32,
            cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..8),
        ) {
            let expected = model(max, &input);
            prop_assert_eq!(&decode_all(max, &input), &expected);
            prop_assert_eq!(&decode_bytewise(max, &input), &expected);

            let mut points: Vec<usize> = cuts.iter().map(|i| i.index(input.len() + 1)).collect();
            points.sort_unstable();
            let mut chunks = Vec::new();
            let mut prev = 0;
            for p in points {
                chunks.push(&input[prev..p]);
                prev = p;
            }
            chunks.push(&input[prev..]);
            let mut dec = LineDecoder::with_max_line_len(max);
            prop_assert_eq!(&decode_chunks(&mut dec, chunks), &expected);
        }

        #[test]
        fn encode_then_decode_round_trips(
            messages in prop::collection::vec(".{0,40}", 0..8),
        ) {
            let mut wire = Vec::new();
            for m in &messages {
                encode_line(&mut wire, m.as_bytes());
            }
            prop_assert_eq!(wire.iter().filter(|&&b| b == b'\n').count(), messages.len());
            let expected: Vec<Item> = messages
                .iter()
                .map(|m| m.replace(['\n', '\r'], " "))
                .filter(|m| !m.trim_matches([' ', '\t']).is_empty())
                .map(|m| Item::Message(m.into_bytes()))
                .collect();
            prop_assert_eq!(decode_all(DEFAULT_MAX_LINE_LEN, &wire), expected);
        }
    }
}
