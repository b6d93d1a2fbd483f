//! Runs one class's stream through the stdio path a few times, for a profiler:
//! `valgrind --tool=callgrind target/release/examples/profile_decode result_200B 3`;
//! with `BASELINE=borrowed` or `BASELINE=value` it runs that baseline instead; with
//! `ORDER=jsonrpc-last` every message has its `jsonrpc` member last, with `ORDER=typescript`
//! the members are in the order the TypeScript SDK writes them, with `ORDER=spaced` the
//! envelope has a space after each colon and comma (as Python's `json.dumps` writes).
//! `benches/callgrind_ratios.sh` turns this into instruction-count ratios per class.

use mcp_bench::setup;
use mcp_bench::workload::{Class, chunks, stream};
use mcp_proto::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let name = args.next().unwrap_or_else(|| "result_200B".into());
    let rounds: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(3);
    let class = Class::ALL
        .into_iter()
        .find(|c| c.name() == name)
        .unwrap_or_else(|| panic!("unknown class {name}"));
    let s = match std::env::var("ORDER").as_deref() {
        Ok("jsonrpc-last") => stream(class).jsonrpc_last(),
        Ok("typescript") => stream(class).typescript_order(),
        Ok("spaced") => stream(class).spaced(),
        Ok("") | Err(_) => stream(class),
        Ok(other) => panic!("unknown ORDER {other}"),
    };
    let bytes = s.ndjson();
    let now = Instant::now();
    let mut seen = 0;
    let baseline = match std::env::var("BASELINE").as_deref() {
        Ok("value") => Some(mcp_bench::baseline::value as fn(&[u8]) -> usize),
        Ok(_) => Some(mcp_bench::baseline::borrowed as fn(&[u8]) -> usize),
        Err(_) => None,
    };
    if let Some(parse) = baseline {
        for _ in 0..rounds {
            let mut lines = mcp_bench::baseline::NaiveLines::default();
            for part in chunks(&bytes, 64 * 1024) {
                lines.feed(part, |l| seen += parse(l));
            }
        }
        println!("{seen}");
        return;
    }
    for _ in 0..rounds {
        let mut conn = setup::ready_connection(now, &s);
        for part in chunks(&bytes, 64 * 1024) {
            conn.handle_bytes(now, part);
            seen += setup::drain_events(conn.session_mut());
        }
    }
    println!("{seen}");
}
