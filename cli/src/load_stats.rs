//! `mcp load` statistics: a latency histogram (p50 / p90 / p99 / max), throughput and the
//! error rate, rendered as a small table.

use std::time::Duration;

use hdrhistogram::Histogram;

use crate::render::{Column, Table};

/// The longest latency tracked exactly; longer calls are recorded as this (and counted in
/// `max` as measured). One hour is far beyond any sensible `--timeout`.
const HIGHEST_US: u64 = 3_600_000_000;

/// Latencies and outcomes of a load run.
///
/// Record every finished call with [`record`](Self::record); call durations are kept in
/// microseconds with three significant digits, so memory is constant whatever the count.
#[derive(Debug, Clone)]
pub struct LoadStats {
    latencies: Histogram<u64>,
    ok: u64,
    errors: u64,
    max: Duration,
}

impl Default for LoadStats {
    fn default() -> Self {
        Self::new()
    }
}

/// A summary of a run, in the units people read.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// Calls recorded.
    pub calls: u64,
    /// Calls that failed (JSON-RPC error, timeout or `isError`).
    pub errors: u64,
    /// `errors / calls`, 0 when there were no calls.
    pub error_rate: f64,
    /// Calls per second over `elapsed`.
    pub throughput: f64,
    /// Median latency.
    pub p50: Duration,
    /// 90th percentile latency.
    pub p90: Duration,
    /// 99th percentile latency.
    pub p99: Duration,
    /// The slowest call, exactly as measured.
    pub max: Duration,
}

impl LoadStats {
    /// Empty statistics.
    pub fn new() -> Self {
        LoadStats {
            // 1 µs .. 1 h at 3 significant digits: a constant, fixed-size allocation.
            latencies: Histogram::new_with_bounds(1, HIGHEST_US, 3)
                .expect("the bounds are constant and valid"),
            ok: 0,
            errors: 0,
            max: Duration::ZERO,
        }
    }

    /// Records one finished call: how long it took and whether it failed.
    pub fn record(&mut self, latency: Duration, failed: bool) {
        let us = u64::try_from(latency.as_micros())
            .unwrap_or(u64::MAX)
            .clamp(1, HIGHEST_US);
        self.latencies.saturating_record(us);
        self.max = self.max.max(latency);
        if failed {
            self.errors += 1;
        } else {
            self.ok += 1;
        }
    }

    /// Adds another run's records (per-worker statistics merged at the end).
    pub fn merge(&mut self, other: &LoadStats) {
        // Both histograms have the same bounds, so adding cannot fail.
        let _ = self.latencies.add(&other.latencies);
        self.ok += other.ok;
        self.errors += other.errors;
        self.max = self.max.max(other.max);
    }

    /// Calls recorded so far.
    pub fn calls(&self) -> u64 {
        self.ok + self.errors
    }

    /// The summary over a run that took `elapsed` of wall time.
    pub fn summary(&self, elapsed: Duration) -> Summary {
        let calls = self.calls();
        let q = |quantile: f64| {
            if calls == 0 {
                Duration::ZERO
            } else {
                Duration::from_micros(self.latencies.value_at_quantile(quantile)).min(self.max)
            }
        };
        let secs = elapsed.as_secs_f64();
        Summary {
            calls,
            errors: self.errors,
            error_rate: if calls == 0 {
                0.0
            } else {
                self.errors as f64 / calls as f64
            },
            throughput: if secs > 0.0 { calls as f64 / secs } else { 0.0 },
            p50: q(0.50),
            p90: q(0.90),
            p99: q(0.99),
            max: self.max,
        }
    }
}

/// `850µs`, `12.3ms`, `1.25s`.
pub fn format_latency(d: Duration) -> String {
    let us = d.as_micros();
    if us < 1000 {
        format!("{us}µs")
    } else if us < 1_000_000 {
        format!("{:.1}ms", us as f64 / 1000.0)
    } else {
        format!("{:.2}s", d.as_secs_f64())
    }
}

impl Summary {
    /// The summary as a two-column table, each line ending in `\n`.
    pub fn render(&self, width: usize) -> String {
        let mut table = Table::new(vec![Column::new("METRIC"), Column::right("VALUE")]);
        table
            .row(["calls".to_owned(), self.calls.to_string()])
            .row([
                "errors".to_owned(),
                format!("{} ({:.1}%)", self.errors, self.error_rate * 100.0),
            ])
            .row(["throughput".to_owned(), format!("{:.1}/s", self.throughput)])
            .row(["p50".to_owned(), format_latency(self.p50)])
            .row(["p90".to_owned(), format_latency(self.p90)])
            .row(["p99".to_owned(), format_latency(self.p99)])
            .row(["max".to_owned(), format_latency(self.max)]);
        table.render(width)
    }

    /// The summary as JSON (latencies in milliseconds), for `--json`.
    pub fn to_json(&self) -> serde_json::Value {
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        serde_json::json!({
            "calls": self.calls,
            "errors": self.errors,
            "errorRate": self.error_rate,
            "throughput": self.throughput,
            "p50Ms": ms(self.p50),
            "p90Ms": ms(self.p90),
            "p99Ms": ms(self.p99),
            "maxMs": ms(self.max),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn percentiles_of_one_to_a_hundred_ms() {
        let mut stats = LoadStats::new();
        for i in 1..=100 {
            stats.record(ms(i), i % 10 == 0);
        }
        let s = stats.summary(Duration::from_secs(2));
        assert_eq!((s.calls, s.errors), (100, 10));
        assert!((s.error_rate - 0.1).abs() < 1e-9);
        assert!((s.throughput - 50.0).abs() < 1e-9);
        // Three significant digits: within 0.1% of the exact order statistic.
        let close = |d: Duration, want: u64| {
            (d.as_micros() as i64 - want as i64 * 1000).abs() <= want as i64
        };
        assert!(close(s.p50, 50), "{:?}", s.p50);
        assert!(close(s.p90, 90), "{:?}", s.p90);
        assert!(close(s.p99, 99), "{:?}", s.p99);
        assert_eq!(s.max, ms(100));
    }

    #[test]
    fn empty_and_extreme() {
        let s = LoadStats::new().summary(Duration::ZERO);
        assert_eq!(
            (s.calls, s.p50, s.max, s.throughput, s.error_rate),
            (0, Duration::ZERO, Duration::ZERO, 0.0, 0.0)
        );
        let mut stats = LoadStats::new();
        stats.record(Duration::ZERO, false);
        stats.record(Duration::from_secs(10_000), false);
        let s = stats.summary(Duration::from_secs(1));
        assert_eq!(s.max, Duration::from_secs(10_000));
        assert!(s.p99 <= s.max);
    }

    #[test]
    fn merge_adds_workers() {
        let mut a = LoadStats::new();
        let mut b = LoadStats::new();
        a.record(ms(1), false);
        b.record(ms(3), true);
        b.record(ms(2), false);
        a.merge(&b);
        let s = a.summary(Duration::from_secs(1));
        assert_eq!((s.calls, s.errors, s.max), (3, 1, ms(3)));
        assert!(s.p50 >= ms(2) && s.p50 < ms(3));
    }

    #[test]
    fn latency_formatting() {
        assert_eq!(format_latency(Duration::from_micros(850)), "850µs");
        assert_eq!(format_latency(Duration::from_micros(12_340)), "12.3ms");
        assert_eq!(format_latency(Duration::from_millis(1250)), "1.25s");
    }

    #[test]
    fn table_and_json() {
        let mut stats = LoadStats::new();
        for i in 1..=4 {
            stats.record(ms(i * 10), i == 4);
        }
        let s = stats.summary(Duration::from_secs(1));
        assert_eq!(
            s.render(40),
            "\
METRIC          VALUE
──────────  ─────────
calls               4
errors      1 (25.0%)
throughput      4.0/s
p50            20.0ms
p90            40.0ms
p99            40.0ms
max            40.0ms
"
        );
        let json = s.to_json();
        assert_eq!(json["calls"], 4);
        assert_eq!(json["errorRate"], 0.25);
        assert_eq!(json["maxMs"], 40.0);
    }
}
