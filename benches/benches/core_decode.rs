//! Stdio decode throughput: the real client path against two `serde_json` baselines.
//!
//! Each class's stream is newline-delimited bytes fed in 64 KiB chunks through
//! (a) `StdioConnection::handle_bytes` (session Ready, every response matching a pending
//! request, events drained), (b) a memchr line split + a borrowed envelope parse
//! (`&RawValue` payloads), (c) a memchr line split + `serde_json::Value`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use mcp_bench::baseline::{self, NaiveLines};
use mcp_bench::setup;
use mcp_bench::workload::{Class, chunks, stream};
use mcp_proto::time::Instant;

const CHUNK: usize = 64 * 1024;

fn core_decode(c: &mut Criterion) {
    let now = Instant::now();
    for class in Class::ALL {
        let s = stream(class);
        let bytes = s.ndjson();
        let parts = chunks(&bytes, CHUNK);
        let mut g = c.benchmark_group(format!("core_decode/{}", class.name()));
        g.throughput(Throughput::Bytes(bytes.len() as u64));

        g.bench_function("a_stdio_session", |b| {
            b.iter_batched(
                || setup::ready_connection(now, &s),
                |mut conn| {
                    let mut seen = 0;
                    for part in &parts {
                        conn.handle_bytes(now, part);
                        seen += setup::drain_events(conn.session_mut());
                    }
                    black_box(seen);
                    conn
                },
                BatchSize::PerIteration,
            );
        });

        g.bench_function("b_borrowed_envelope", |b| {
            b.iter(|| {
                let mut lines = NaiveLines::default();
                let mut seen = 0;
                for part in &parts {
                    lines.feed(part, |l| seen += baseline::borrowed(l));
                }
                black_box(seen)
            });
        });

        g.bench_function("c_value", |b| {
            b.iter(|| {
                let mut lines = NaiveLines::default();
                let mut seen = 0;
                for part in &parts {
                    lines.feed(part, |l| seen += baseline::value(l));
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
        .measurement_time(Duration::from_secs(3))
        .sample_size(30);
    targets = core_decode
}
criterion_main!(benches);
