//! Bytes of core state per pending request, measured with a counting global allocator.
//!
//! Run: `cargo bench -p mcp-bench --bench pending_memory`. For each `n`, a Ready session gets
//! `n` requests sent (each with a deadline, written out with `poll_transmit`), and the live
//! heap growth is divided by `n`:
//! - "with bodies": `tools/call` params of ~80 bytes, kept by the session for re-sends;
//! - "without bodies": the same requests with no params: the table, the deadline index and
//!   the bookkeeping only (the figure the < 256 B target is about).
//!
//! `size_of` of the session's parts is printed beside it. Hash tables grow by doubling, so
//! the figure depends on where `n` falls between two capacities; 100k is the size,
//! 60k is near the worst case (just past a doubling) and 110k near the best.

use mcp_bench::alloc::{Counting, live_bytes};
use mcp_bench::setup;
use mcp_proto::session::RequestOptions;
use mcp_proto::time::Instant;

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Live heap bytes added by `n` pending requests, per request.
fn per_request(n: usize, with_body: bool) -> f64 {
    let now = Instant::now();
    let params = setup::call_params();
    let mut session = setup::ready_session(now, n + 16);
    let mut out = Vec::with_capacity(1 << 20);
    let before = live_bytes();
    for _ in 0..n {
        let body = with_body.then(|| params.clone().into());
        session
            .send_request(now, "tools/call", body, RequestOptions::new())
            .expect("room in flight");
        out.clear();
        let _ = session.poll_transmit(&mut out);
    }
    assert_eq!(session.in_flight(), n);
    let after = live_bytes();
    drop(session);
    (after - before) as f64 / n as f64
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument is accepted and ignored.
    let body_len = setup::call_params().get().len();
    println!("pending_memory: live heap bytes per pending request (deadline armed, sent)");
    println!("request body: {body_len} bytes of params");
    println!(
        "{:>8}  {:>16}  {:>13}",
        "in flight", "without bodies", "with bodies"
    );
    for n in [1_000, 10_000, 60_000, 100_000, 110_000] {
        let bare = per_request(n, false);
        let full = per_request(n, true);
        println!("{n:>8}  {bare:>14.1} B  {full:>11.1} B");
    }
}
