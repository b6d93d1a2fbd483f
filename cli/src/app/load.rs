//! `mcp load`: one tool called repeatedly, with a concurrency, a count or a duration.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use mcp_tokio::Client;
use serde_json::{Map, Value};
use tokio::task::JoinSet;

use super::connect::call_error;
use super::output::Out;
use super::ui::Ui;
use crate::exit::{CliError, Exit};
use crate::load_stats::LoadStats;

/// The calls when neither `--count` nor `--duration` is given.
pub const DEFAULT_COUNT: u64 = 100;

/// What to run.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The tool.
    pub tool: String,
    /// Its arguments, the same for every call.
    pub arguments: Map<String, Value>,
    /// Calls in flight at once.
    pub concurrency: u32,
    /// Stop after this many calls.
    pub count: Option<u64>,
    /// Stop starting calls after this long.
    pub duration: Option<Duration>,
}

/// Runs the plan and prints the summary. A lost connection ends the run early: the summary
/// of what finished is printed, then the error is returned.
pub async fn run(ui: &Ui, out: &Out, client: &Client, plan: Plan) -> Result<Exit, CliError> {
    let total = match (plan.count, plan.duration) {
        (Some(n), _) => Some(n),
        (None, None) => Some(DEFAULT_COUNT),
        (None, Some(_)) => None,
    };
    let workers = match total {
        Some(n) => u64::from(plan.concurrency).min(n.max(1)),
        None => u64::from(plan.concurrency),
    };
    ui.info(&match (total, plan.duration) {
        (Some(n), _) => format!("calling {} {n} times, {workers} at a time", plan.tool),
        (None, Some(d)) => format!(
            "calling {} for {}, {workers} at a time",
            plan.tool,
            crate::load_stats::format_latency(d)
        ),
        (None, None) => unreachable!("a count is set when no duration is"),
    });
    let started = Instant::now();
    let deadline = plan.duration.map(|d| started + d);
    let next = Arc::new(AtomicU64::new(0));
    let arguments = Arc::new(Value::Object(plan.arguments));
    let tool: Arc<str> = plan.tool.into();
    // One recorder shared by every worker: a histogram is ~190 KB, so one per worker made
    // `-c 10000` cost over a gigabyte. The lock is held for one histogram increment.
    let stats = Arc::new(Mutex::new(LoadStats::new()));
    let mut set = JoinSet::new();
    for _ in 0..workers {
        let (client, next, arguments, tool, stats) = (
            client.clone(),
            next.clone(),
            arguments.clone(),
            tool.clone(),
            stats.clone(),
        );
        set.spawn(async move {
            let mut lost = None;
            loop {
                if total.is_some_and(|t| next.fetch_add(1, Ordering::Relaxed) >= t)
                    || deadline.is_some_and(|d| Instant::now() >= d)
                {
                    break;
                }
                let t0 = Instant::now();
                let result = client.call_tool(&*tool, &*arguments).await;
                let failed = !matches!(&result, Ok(r) if r.is_error != Some(true));
                let latency = t0.elapsed();
                // A poisoned lock only means another worker panicked mid-increment; the
                // counts stay usable.
                stats
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .record(latency, failed);
                if let Err(e) = result
                    && e.is_connection_lost()
                {
                    lost = Some(call_error(e));
                    break;
                }
            }
            lost
        });
    }
    let mut lost = None;
    while let Some(done) = set.join_next().await {
        // A worker only ends by returning; a panic in one is a bug worth surfacing.
        let l = done.map_err(|e| CliError::closed(format!("a load worker failed: {e}")))?;
        lost = lost.or(l);
    }
    let summary = stats
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .summary(started.elapsed());
    if ui.json {
        out.json(&summary.to_json())?;
    } else {
        out.text(&summary.render(ui.width))?;
    }
    match lost {
        Some(e) => Err(e),
        None => Ok(Exit::Ok),
    }
}
