//! Pending-request scaling: the cost of one operation with 1k, 10k and 100k requests in
//! flight, each with a deadline, resolved in a seeded random order.
//!
//! One "iteration" is one operation. The session is kept near `n` in flight: a batch of
//! `n / 10` (at least 100) operations is timed, then the table is restored untimed.
//! - `send`: `send_request` + `poll_transmit` (the request written out);
//! - `respond`: `handle_message` of a response to a random pending request + its event;
//! - `cancel`: `cancel` of a random pending request + the `notifications/cancelled` written
//!   + its event;
//! - `timeout`: one `handle_timeout` that fires the whole batch (time divided by the batch).

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use mcp_bench::{Rng, setup};
use mcp_proto::session::{RequestHandle, RequestOptions, Session};
use mcp_proto::time::Instant;

const SIZES: [usize; 3] = [1_000, 10_000, 100_000];
const TIMEOUT: Duration = Duration::from_secs(3600);

/// A Ready session with `n` requests in flight, and the bookkeeping to pick them at random.
struct Table {
    session: Session,
    /// Pending handles (wire id = handle) and when they were sent, in no particular order.
    pending: Vec<(RequestHandle, Duration)>,
    rng: Rng,
    params: Box<serde_json::value::RawValue>,
    out: Vec<u8>,
    t0: Instant,
    /// Virtual time: each send advances it by 1 µs, so deadlines are distinct and ordered.
    clock: Duration,
}

impl Table {
    fn new(n: usize) -> Table {
        let t0 = Instant::now();
        let mut t = Table {
            session: setup::ready_session(t0, n * 2 + 1000),
            pending: Vec::with_capacity(n * 2),
            rng: Rng::new(0x5eed + n as u64),
            params: setup::call_params(),
            out: Vec::with_capacity(1 << 16),
            t0,
            clock: Duration::ZERO,
        };
        t.send(n);
        t
    }

    fn now(&self) -> Instant {
        self.t0 + self.clock
    }

    fn send(&mut self, k: usize) {
        for _ in 0..k {
            self.clock += Duration::from_micros(1);
            let h = self
                .session
                .send_request(
                    self.now(),
                    "tools/call",
                    Some(self.params.clone().into()),
                    RequestOptions::new().timeout(TIMEOUT),
                )
                .expect("room in flight");
            self.out.clear();
            let _ = self.session.poll_transmit(&mut self.out);
            self.pending.push((h, self.clock));
        }
    }

    /// Removes `k` random handles from the bookkeeping.
    fn pick(&mut self, k: usize) -> Vec<RequestHandle> {
        (0..k)
            .map(|_| {
                let i = self.rng.below(self.pending.len());
                self.pending.swap_remove(i).0
            })
            .collect()
    }

    fn drain(&mut self) -> usize {
        let mut n = 0;
        self.out.clear();
        while self.session.poll_transmit(&mut self.out).is_some() {}
        while let Some(e) = self.session.poll_event() {
            black_box(&e);
            n += 1;
        }
        n
    }
}

fn batch(n: usize) -> usize {
    (n / 10).max(100)
}

fn run(
    n: usize,
    iters: u64,
    mut op: impl FnMut(&mut Table, usize) -> Duration,
    t: &mut Table,
) -> Duration {
    let mut total = Duration::ZERO;
    let mut done = 0u64;
    while done < iters {
        let k = batch(n).min((iters - done) as usize);
        total += op(t, k);
        done += k as u64;
    }
    total
}

fn pending_scaling(c: &mut Criterion) {
    let mut g = c.benchmark_group("pending_scaling");
    for n in SIZES {
        let mut t = Table::new(n);
        g.bench_with_input(BenchmarkId::new("send", n), &n, |b, &n| {
            b.iter_custom(|iters| {
                run(
                    n,
                    iters,
                    |t, k| {
                        let start = std::time::Instant::now();
                        t.send(k);
                        let spent = start.elapsed();
                        // Restore: answer k random requests (untimed).
                        for h in t.pick(k) {
                            let line = response_line(h);
                            t.session.handle_message(t.now(), line.as_bytes());
                        }
                        t.drain();
                        spent
                    },
                    &mut t,
                )
            });
        });

        g.bench_with_input(BenchmarkId::new("respond", n), &n, |b, &n| {
            b.iter_custom(|iters| {
                run(
                    n,
                    iters,
                    |t, k| {
                        let lines: Vec<String> = t.pick(k).into_iter().map(response_line).collect();
                        let now = t.now();
                        let start = std::time::Instant::now();
                        for line in &lines {
                            t.session.handle_message(now, line.as_bytes());
                            while let Some(e) = t.session.poll_event() {
                                black_box(e);
                            }
                        }
                        let spent = start.elapsed();
                        t.send(k);
                        spent
                    },
                    &mut t,
                )
            });
        });

        g.bench_with_input(BenchmarkId::new("cancel", n), &n, |b, &n| {
            b.iter_custom(|iters| {
                run(
                    n,
                    iters,
                    |t, k| {
                        let victims = t.pick(k);
                        let now = t.now();
                        let start = std::time::Instant::now();
                        for h in victims {
                            t.session.cancel(now, h, None).expect("pending");
                            t.out.clear();
                            while t.session.poll_transmit(&mut t.out).is_some() {}
                            while let Some(e) = t.session.poll_event() {
                                black_box(e);
                            }
                        }
                        let spent = start.elapsed();
                        t.send(k);
                        spent
                    },
                    &mut t,
                )
            });
        });

        g.bench_with_input(BenchmarkId::new("timeout", n), &n, |b, &n| {
            b.iter_custom(|iters| {
                run(
                    n,
                    iters,
                    |t, k| {
                        // The k oldest deadlines: the first k requests still pending in send order.
                        t.pending.sort_unstable();
                        let (_, sent) = t.pending[k - 1];
                        t.pending.drain(..k);
                        let fire_at = t.t0 + sent + TIMEOUT;
                        let start = std::time::Instant::now();
                        t.session.handle_timeout(fire_at);
                        let fired = t.drain();
                        let spent = start.elapsed();
                        assert_eq!(fired, k, "exactly the batch timed out");
                        // Later sends must stay after the fired instant.
                        t.clock = t.clock.max(fire_at - t.t0);
                        t.send(k);
                        spent
                    },
                    &mut t,
                )
            });
        });
    }
    g.finish();
}

fn response_line(h: RequestHandle) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"content":[{{"type":"text","text":"ok"}}]}}}}"#,
        h.get()
    )
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20);
    targets = pending_scaling
}
criterion_main!(benches);
