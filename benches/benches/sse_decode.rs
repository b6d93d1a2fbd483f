//! SSE decode throughput: `SseDecoder` against a naive `\n\n` splitter, and the full path
//! (decoder + `Session::handle_message`, events drained).
//!
//! The same messages as `core_decode`, framed as `event: message` / `id:` (every fourth) /
//! `data:` events and fed in 64 KiB chunks.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use mcp_bench::baseline::{self, NaiveSse};
use mcp_bench::setup;
use mcp_bench::workload::{Class, chunks, stream};
use mcp_proto::framing::sse::{SseDecoder, SseItem};
use mcp_proto::time::Instant;

const CHUNK: usize = 64 * 1024;

fn sse_decode(c: &mut Criterion) {
    let now = Instant::now();
    for class in Class::ALL {
        let s = stream(class);
        let bytes = s.sse();
        let parts = chunks(&bytes, CHUNK);
        let mut g = c.benchmark_group(format!("sse_decode/{}", class.name()));
        g.throughput(Throughput::Bytes(bytes.len() as u64));

        g.bench_function("decoder", |b| {
            b.iter(|| {
                let mut dec = SseDecoder::new();
                let mut seen = 0;
                for part in &parts {
                    dec.decode(part, |item| {
                        if let SseItem::Event(e) = item {
                            seen += e.data.len();
                        }
                    });
                }
                black_box(seen)
            });
        });

        g.bench_function("naive_split", |b| {
            b.iter(|| {
                let mut dec = NaiveSse::default();
                let mut seen = 0;
                for part in &parts {
                    dec.feed(part, |data| seen += data.len());
                }
                black_box(seen)
            });
        });

        g.bench_function("decoder_session", |b| {
            b.iter_batched(
                || setup::ready_session_for(now, &s),
                |mut session| {
                    let mut dec = SseDecoder::new();
                    let mut seen = 0;
                    for part in &parts {
                        dec.decode(part, |item| {
                            if let SseItem::Event(e) = item {
                                session.handle_message_str(now, e.data);
                            }
                        });
                        seen += setup::drain_events(&mut session);
                    }
                    black_box(seen);
                    session
                },
                BatchSize::PerIteration,
            );
        });

        g.bench_function("naive_borrowed_envelope", |b| {
            b.iter(|| {
                let mut dec = NaiveSse::default();
                let mut seen = 0;
                for part in &parts {
                    dec.feed(part, |data| seen += baseline::borrowed(data));
                }
                black_box(seen)
            });
        });
        g.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20);
    targets = sse_decode
}
criterion_main!(benches);
