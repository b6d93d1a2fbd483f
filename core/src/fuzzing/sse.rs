//! The SSE decoder alone: chunking invariance, bounded buffering and bounded events.

use std::time::Duration;

use crate::framing::sse::{SseDecoder, SseItem};

/// An owned, comparable copy of an [`SseItem`].
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
    },
    /// The end of one body, with the state a reconnection would carry over.
    Finished {
        last_event_id: Option<String>,
        retry: Option<Duration>,
    },
}

/// Everything one run produced, to compare runs with different chunkings.
type Run = Vec<Item>;

/// Feeds `bodies` (each ended with `finish`, as on a reconnection) in chunks of the given sizes
/// (cycled) and checks the per-item invariants on the way.
fn run(limit: usize, bodies: [&[u8]; 2], chunk_sizes: &[usize]) -> Run {
    let mut dec = SseDecoder::with_max_event_size(limit);
    let mut out = Vec::new();
    let mut i = 0;
    let sink = |item: SseItem<'_>, out: &mut Vec<Item>| {
        out.push(match item {
            SseItem::Event(e) => {
                assert!(!e.data.is_empty(), "an empty event is never delivered");
                assert!(
                    e.data.len() <= limit,
                    "event data of {} bytes over the limit {limit}",
                    e.data.len()
                );
                assert!(!e.event.is_empty(), "the event type defaults to `message`");
                Item::Event {
                    event: e.event.to_owned(),
                    data: e.data.to_owned(),
                    id: e.id.map(str::to_owned),
                }
            }
            SseItem::Retry(d) => Item::Retry(d),
            SseItem::TooLarge {
                discarded,
                limit: reported,
            } => {
                assert_eq!(reported, limit, "TooLarge reports the limit in force");
                Item::TooLarge { discarded }
            }
        });
    };
    for body in bodies {
        let mut rest = body;
        while !rest.is_empty() {
            let size = chunk_sizes
                .get(i % chunk_sizes.len().max(1))
                .copied()
                .unwrap_or(rest.len())
                .clamp(1, rest.len());
            let (chunk, tail) = rest.split_at(size);
            dec.decode(chunk, |item| sink(item, &mut out));
            assert!(
                dec.buffered_len() <= limit.max(2),
                "buffered {} bytes with a limit of {limit}",
                dec.buffered_len()
            );
            rest = tail;
            i += 1;
        }
        dec.finish(|item| sink(item, &mut out));
        assert_eq!(dec.buffered_len(), 0, "nothing is held between bodies");
        out.push(Item::Finished {
            last_event_id: dec.last_event_id().map(str::to_owned),
            retry: dec.retry(),
        });
    }
    out
}

/// The SSE decoder on arbitrary bytes.
///
/// Layout of `data`: byte 0 picks the event size limit (1..=128 bytes, or 4096), byte 1 where
/// the input splits into two bodies (a reconnection in between), bytes 2..10 the chunk sizes;
/// the rest is the input. Checks that one chunk, byte by byte and the chosen chunks give the same
/// items and the same final last event id and retry; that [`SseDecoder::buffered_len`] never
/// exceeds the limit; that no delivered event's data exceeds it; and that nothing is reported
/// too large when no event could reach the limit.
pub fn sse(data: &[u8]) {
    let (head, input) = data.split_at(data.len().min(10));
    let limit = match head.first() {
        Some(&b) if b < 128 => usize::from(b) + 1,
        _ => 4096,
    };
    let split = head
        .get(1)
        .map_or(input.len(), |&b| input.len() * usize::from(b) / 255);
    let bodies = {
        let (a, b) = input.split_at(split);
        [a, b]
    };
    let sizes: Vec<usize> = head
        .get(2..)
        .unwrap_or_default()
        .iter()
        .map(|&b| usize::from(b) + 1)
        .collect();

    let whole = run(limit, bodies, &[usize::MAX]);
    assert_eq!(whole, run(limit, bodies, &[1]), "one chunk vs byte by byte");
    assert_eq!(
        whole,
        run(limit, bodies, &sizes),
        "one chunk vs chosen chunks"
    );

    // Lossy decoding turns one invalid byte into at most three (U+FFFD), so an input shorter
    // than a third of the limit can never fill an event.
    if input.len().saturating_mul(3) < limit {
        assert!(
            !whole.iter().any(|i| matches!(i, Item::TooLarge { .. })),
            "TooLarge for an input of {} bytes with a limit of {limit}",
            input.len()
        );
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    /// Pieces of real MCP SSE bodies, to mix with random bytes.
    const PIECES: &[&str] = &[
        "id: 0\ndata: \n\n",
        "id: 1\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\r\n\r\n",
        "event: message\ndata: {\"jsonrpc\":\"2.0\",\n",
        "data: \"method\":\"notifications/progress\"}\n\n",
        "retry: 3000\n",
        "retry: 1x\n",
        ": keep-alive\n\n",
        "id\n\n",
        "id: a\0b\n",
        "\u{feff}data: x\n\n",
        "data\n\n",
        "\r",
        "\n",
        "\r\n",
    ];

    fn realistic_input() -> impl Strategy<Value = Vec<u8>> {
        prop::collection::vec(
            prop_oneof![
                3 => prop::sample::select(PIECES).prop_map(|p| p.as_bytes().to_vec()),
                1 => prop::collection::vec(any::<u8>(), 0..24),
            ],
            0..16,
        )
        .prop_map(|parts| parts.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn sse_decoder_holds_its_invariants_on_random_bytes(
            data in prop::collection::vec(any::<u8>(), 0..1500),
        ) {
            super::sse(&data);
        }

        #[test]
        fn sse_decoder_holds_its_invariants_on_realistic_bodies(
            head in prop::collection::vec(any::<u8>(), 10),
            input in realistic_input(),
        ) {
            let mut data = head;
            data.extend_from_slice(&input);
            super::sse(&data);
        }
    }

    #[test]
    fn a_priming_event_then_a_message_keeps_the_id_across_bodies() {
        // limit 4096, split after the first body, chunks of 3 bytes.
        let mut data = vec![200, 0, 2, 2, 2, 2, 2, 2, 2, 2];
        let body = b"id: 7\ndata: \n\nretry: 10\ndata: {\"id\":1}\n\n";
        data.extend_from_slice(body);
        super::sse(&data);
        let items = super::run(4096, [&body[..], b"data: x\n\n"], &[3]);
        assert!(items.contains(&super::Item::Event {
            event: "message".into(),
            data: "x".into(),
            id: Some("7".into()),
        }));
    }

    #[test]
    fn an_event_over_a_tiny_limit_is_dropped_and_reported() {
        let items = super::run(10, [b"data: 12345\n\ndata: ab\n\n", b""], &[1]);
        assert_eq!(items[0], super::Item::TooLarge { discarded: 11 });
        assert!(matches!(&items[1], super::Item::Event { data, .. } if data == "ab"));
    }
}
