//! What the end-to-end benchmark binaries share: a table row, sequential and pipelined
//! drivers of any async call, percentiles, the process's CPU time, and the table printers.

use std::cell::Cell;
use std::future::Future;
use std::time::{Duration, Instant};

use futures_util::StreamExt as _;
use futures_util::stream::FuturesUnordered;

/// The pipelined windows (calls in flight) every end-to-end table has a column for.
pub const WINDOWS: [usize; 3] = [1, 16, 256];

/// One row of the table.
#[derive(Clone, Copy, Default)]
pub struct Row {
    /// Median sequential round trip.
    pub p50: Option<Duration>,
    /// 99th percentile sequential round trip.
    pub p99: Option<Duration>,
    /// Calls per second at each of `WINDOWS`.
    pub rate: [Option<f64>; 3],
    /// CPU time of the client process per call (`cpu_time`) at each of `WINDOWS`.
    pub cpu: [Option<Duration>; 3],
}

impl Row {
    /// Keeps the best of two measurements, cell by cell.
    pub fn best(self, other: Row) -> Row {
        let min = |a: Option<Duration>, b: Option<Duration>| match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let max = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        Row {
            p50: min(self.p50, other.p50),
            p99: min(self.p99, other.p99),
            rate: [0, 1, 2].map(|i| max(self.rate[i], other.rate[i])),
            cpu: [0, 1, 2].map(|i| min(self.cpu[i], other.cpu[i])),
        }
    }
}

/// `a / b` cell by cell: above 1 is `a` slower for latencies, faster for throughput.
pub fn print_ratio(name: &str, a: Row, b: Row) {
    let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.2}", a / b),
        _ => "-".into(),
    };
    let secs = |d: Option<Duration>| d.map(|d| d.as_secs_f64());
    println!(
        "| {name} | {} | {} | {} | {} | {} | {} |",
        ratio(secs(a.p50), secs(b.p50)),
        ratio(secs(a.p99), secs(b.p99)),
        ratio(a.rate[0], b.rate[0]),
        ratio(a.rate[1], b.rate[1]),
        ratio(a.rate[2], b.rate[2]),
        ratio(secs(a.cpu[2]), secs(b.cpu[2])),
    );
}

/// Prints the absolute table, one line per row.
pub fn print_table(rows: &[(&str, Row)]) {
    let lat =
        |d: Option<Duration>| d.map_or("-".into(), |d| format!("{:.1} µs", d.as_secs_f64() * 1e6));
    let rate = |r: Option<f64>| r.map_or("-".into(), |r| format!("{:.0}/s", r));
    let cpu =
        |d: Option<Duration>| d.map_or("-".into(), |d| format!("{:.2}", d.as_secs_f64() * 1e6));
    println!();
    println!(
        "| client | seq p50 | seq p99 | 1 in flight | 16 in flight | 256 in flight | client CPU µs/call at 1 / 16 / 256 |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (name, row) in rows {
        println!(
            "| {name} | {} | {} | {} | {} | {} | {} / {} / {} |",
            lat(row.p50),
            lat(row.p99),
            rate(row.rate[0]),
            rate(row.rate[1]),
            rate(row.rate[2]),
            cpu(row.cpu[0]),
            cpu(row.cpu[1]),
            cpu(row.cpu[2]),
        );
    }
}

/// The p50 and p99 of `samples` (`None` when empty).
pub fn percentiles(mut samples: Vec<Duration>) -> (Option<Duration>, Option<Duration>) {
    samples.sort_unstable();
    let at = |q: f64| {
        let i = ((samples.len() as f64 - 1.0) * q).round() as usize;
        samples.get(i).copied()
    };
    (at(0.50), at(0.99))
}

/// Sequential round trips: `n` calls after a warm-up, one at a time.
pub async fn sequential<F, Fut>(n: usize, mut call: F) -> (Option<Duration>, Option<Duration>)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = ()>,
{
    for _ in 0..(n / 10).max(100) {
        call().await;
    }
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        call().await;
        samples.push(t.elapsed());
    }
    percentiles(samples)
}

/// `m` calls with `k` in flight; calls per second and CPU time per call.
///
/// `k` callers, each making its calls one after another until `m` are made: as many in
/// flight as with a call pushed into a `FuturesUnordered` each time one finishes, without
/// charging the client a task allocation and a move of its call future per call (that
/// harness spent about a tenth of the client's CPU time on itself at 256 in flight).
pub async fn pipelined<F, Fut>(k: usize, m: usize, call: F) -> (f64, Duration)
where
    F: Fn() -> Fut,
    Fut: Future<Output = ()>,
{
    let cpu = cpu_time();
    let start = Instant::now();
    let issued = Cell::new(0);
    let caller = || async {
        while issued.get() < m {
            issued.set(issued.get() + 1);
            call().await;
        }
    };
    let mut running: FuturesUnordered<_> = (0..k.min(m)).map(|_| caller()).collect();
    while running.next().await.is_some() {}
    let rate = m as f64 / start.elapsed().as_secs_f64();
    (rate, (cpu_time() - cpu) / m as u32)
}

/// CPU time used by this process so far, every thread included: the sum of the first field
/// of `/proc/self/task/*/schedstat` (nanoseconds on a CPU). Zero where there is no `/proc`.
pub fn cpu_time() -> Duration {
    cpu_time_of("self").unwrap_or(Duration::ZERO)
}

/// CPU time used so far by the process `pid` (a number, or `"self"`), every live thread
/// included, as [`cpu_time`] reads it; `None` when it cannot be read (no such process, no
/// `/proc`).
pub fn cpu_time_of(pid: &str) -> Option<Duration> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    let ns: u64 = tasks
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum();
    Some(Duration::from_nanos(ns))
}
