//! Workloads, baselines and session set-ups shared by the `mcp-proto` benchmarks.
//!
//! The benchmarks themselves are under `benches/` (run `cargo bench -p mcp-bench`); this
//! library only builds their inputs, so the inputs can be unit-tested. Set-up functions panic
//! when a session does not behave as the benchmark assumes: a benchmark that measured
//! diagnostics instead of the real path would report a false figure.
//!
//! The end-to-end benchmarks are binaries (`src/bin/`): `e2e_stdio` prints a table of this
//! client against `rmcp` and two limits, all against the [`echo`] server
//! (`cargo run --release -p mcp-bench --bin e2e_stdio`); `e2e_http` the same over Streamable
//! HTTP against [`echo_http`] (`cargo run --release -p mcp-bench --bin e2e_http`).

#![warn(missing_docs)]

pub mod alloc;
pub mod baseline;
pub mod e2e;
pub mod echo;
pub mod echo_http;
pub mod setup;
pub mod workload;

/// A small seeded PRNG (xorshift64*), so random orders are the same in every run.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a non-zero seed (zero is replaced by a fixed constant).
    pub fn new(seed: u64) -> Self {
        Rng(if seed == 0 {
            0x9E37_79B9_7F4A_7C15
        } else {
            seed
        })
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n` (`n > 0`; the slight modulo bias does not matter here).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{Class, chunks, stream};
    use mcp_proto::time::Instant;

    #[test]
    fn rng_is_seeded_and_spreads() {
        let a: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::new(7);
                move |_| r.next_u64()
            })
            .collect();
        let b: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::new(7);
                move |_| r.next_u64()
            })
            .collect();
        assert_eq!(a, b);
        let mut r = Rng::new(1);
        let mut hits = [0usize; 10];
        for _ in 0..10_000 {
            hits[r.below(10)] += 1;
        }
        assert!(hits.iter().all(|&h| (800..1200).contains(&h)), "{hits:?}");
    }

    /// The full stdio path sees every message as the event the benchmark expects, and the
    /// baselines see the same number of lines.
    #[test]
    fn every_class_completes_through_the_stdio_path() {
        let now = Instant::now();
        for class in Class::ALL {
            let s = stream(class);
            let bytes = s.ndjson();
            let mut c = setup::ready_connection(now, &s);
            let mut completed = 0u64;
            let mut progress = 0usize;
            for chunk in chunks(&bytes, 64 * 1024) {
                c.handle_bytes(now, chunk);
                while let Some(e) = c.poll_event() {
                    let mcp_proto::connection::Event::Session(e) = e else {
                        panic!("{}: a transport event", class.name());
                    };
                    match e {
                        mcp_proto::Event::Completed { result: Ok(_), .. } => completed += 1,
                        mcp_proto::Event::Progress { .. } => progress += 1,
                        other => panic!("{}: {other:?}", class.name()),
                    }
                }
            }
            assert_eq!(completed, s.responses, "{}", class.name());
            assert_eq!(completed as usize + progress, s.messages.len());
            assert_eq!(c.session().in_flight() as u64, s.progress_requests);

            let mut lines = 0;
            let mut naive = baseline::NaiveLines::default();
            for chunk in chunks(&bytes, 64 * 1024) {
                naive.feed(chunk, |l| {
                    assert!(baseline::borrowed(l) > 1);
                    lines += 1;
                });
            }
            assert_eq!(lines, s.messages.len());
        }
    }

    #[test]
    fn sse_paths_see_every_message() {
        let now = Instant::now();
        let s = stream(Class::Mixed);
        let bytes = s.sse();
        let mut dec = mcp_proto::framing::sse::SseDecoder::new();
        let mut session = setup::ready_session_for(now, &s);
        let mut naive = baseline::NaiveSse::default();
        let (mut a, mut b) = (0, 0);
        for chunk in chunks(&bytes, 64 * 1024) {
            dec.decode(chunk, |item| {
                if let mcp_proto::framing::sse::SseItem::Event(e) = item {
                    session.handle_message_str(now, e.data);
                    a += 1;
                }
            });
            naive.feed(chunk, |_| b += 1);
        }
        assert_eq!((a, b), (s.messages.len(), s.messages.len()));
        assert!(setup::drain_events(&mut session) > 0);
        assert_eq!(session.in_flight() as u64, s.progress_requests);
    }
}
