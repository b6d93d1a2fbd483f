//! The memory of a pending `call_tool`, end to end: RSS growth of a process with `--calls`
//! (default 100 000) calls pending against a stdio server that never answers them, each call
//! issued from its own spawned task as a user writes it:
//!
//! ```text
//! let client = client.clone();
//! tokio::spawn(async move { client.call_tool("echo", json!({"message": ".."})).await });
//! ```
//!
//! on tokio (multi-thread runtime, as `#[tokio::main]` builds it) and on async-std (its global
//! executor), and the same with the official Rust SDK (`rmcp`, `Peer::call_tool`) on tokio. Each runtime is measured in a fresh process (this binary started as
//! `pending_rss measure <runtime>`), so that one measurement's freed memory cannot be reused by
//! the next. Printed per runtime: RSS growth per call (what the operating system charges the
//! process: tasks, futures, the client's and the core's tables, allocator overhead), the live
//! heap growth per call (counting allocator: the same without allocator slack and without the
//! stacks), and `size_of_val` of one `call_tool` future.
//!
//! Every call is first polled (so it is registered with the connection) before the figure is
//! taken, and the server has read every request line written by then (a flush notification
//! it answers comes back). Afterwards the client is closed and every call must fail with
//! `Error::Closed`: a call lost or answered twice fails the run.
//!
//! ```text
//! cargo run --release -p mcp-bench --bin pending_rss -- [--calls N] [--only tokio,async-std,rmcp]
//! ```
//!
//! The server is this very binary started as `pending_rss silent-server` ([`Mode::Silent`]).

use std::future::Future;
use std::pin::Pin;
use std::process::{Command, ExitCode};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::task::{Context, Poll};
use std::time::Duration;

use mcp_bench::alloc::{Counting, live_bytes};
use mcp_bench::echo::{self, FLUSH, Mode};

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The request timeout the client is configured with: armed for every call, and far longer
/// than a run.
const TIMEOUT: Duration = Duration::from_secs(3600);

/// The rows: this client on each runtime, and the official Rust SDK (`rmcp`) on tokio.
const RUNTIMES: [&str; 3] = ["tokio", "async-std", "rmcp"];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("silent-server") => {
            return match echo::serve(
                Mode::Silent,
                std::io::stdin().lock(),
                std::io::stdout().lock(),
            ) {
                Ok(_) => ExitCode::SUCCESS,
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("silent-server: {e}");
                    ExitCode::FAILURE
                }
            };
        }
        Some("measure") => {
            let (Some(runtime), Some(calls)) = (
                args.get(1),
                args.get(2).and_then(|n| n.parse::<usize>().ok()),
            ) else {
                eprintln!("usage: pending_rss measure <tokio|async-std|rmcp> <calls>");
                return ExitCode::FAILURE;
            };
            let figures = match runtime.as_str() {
                "tokio" => measure_tokio(calls),
                "async-std" => measure_async_std(calls),
                "rmcp" => measure_rmcp(calls),
                other => {
                    eprintln!("unknown runtime {other:?}");
                    return ExitCode::FAILURE;
                }
            };
            println!("{}", figures.line());
            return ExitCode::SUCCESS;
        }
        _ => {}
    }
    let (calls, only) = match parse(&args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}\nusage: pending_rss [--calls N] [--only tokio,async-std,rmcp]");
            return ExitCode::FAILURE;
        }
    };
    println!(
        "pending_rss: {calls} pending call_tool calls, one spawned task each, against a server that never answers"
    );
    println!(
        "| runtime | pending | RSS growth per pending call | live heap per pending call | call_tool future | failed on close |"
    );
    println!("|---|---|---|---|---|---|");
    let mut ok = true;
    // (A runtime whose calls did not all end with `Error::Closed` fails the run.)
    for runtime in RUNTIMES.into_iter().filter(|r| only.iter().any(|o| o == r)) {
        let out = Command::new(exe())
            .args(["measure", runtime, &calls.to_string()])
            .output()
            // Invariant: this binary can start itself (it is running).
            .expect("the benchmark starts itself");
        let text = String::from_utf8_lossy(&out.stdout);
        match (out.status.success(), Figures::parse(text.trim())) {
            (true, Some(f)) => {
                let per = |bytes: usize| bytes as f64 / f.pending.max(1) as f64;
                println!(
                    "| {runtime} | {} of {calls} | {:.0} B | {:.0} B | {} B | {} |",
                    f.pending,
                    per(f.rss),
                    per(f.heap),
                    f.future,
                    f.closed,
                );
                // Every pending call must end when the client closes, each exactly once.
                ok &= f.closed == f.pending;
            }
            _ => {
                ok = false;
                eprintln!(
                    "{runtime}: the measurement failed\n{}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        }
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn parse(args: &[String]) -> Result<(usize, Vec<String>), String> {
    let mut calls = 100_000;
    let mut only: Vec<String> = RUNTIMES.iter().map(|r| (*r).to_owned()).collect();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--calls" => {
                calls = it
                    .next()
                    .and_then(|v| v.parse().ok())
                    .filter(|&n| n > 0)
                    .ok_or("--calls needs a positive number")?;
            }
            "--only" => {
                only = it
                    .next()
                    .ok_or("--only needs a comma-separated list of runtimes")?
                    .split(',')
                    .map(str::to_owned)
                    .collect();
                if let Some(bad) = only.iter().find(|r| !RUNTIMES.contains(&r.as_str())) {
                    return Err(format!("unknown row {bad:?} (tokio, async-std, rmcp)"));
                }
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok((calls, only))
}

/// What one measuring process found.
struct Figures {
    /// RSS growth, bytes.
    rss: usize,
    /// Live heap growth, bytes.
    heap: usize,
    /// `size_of_val` of one `call_tool` future.
    future: usize,
    /// Calls pending when the figure was taken (the others failed at once).
    pending: usize,
    /// Calls that failed with `Error::Closed` when the client closed (all of them, or the
    /// run is wrong).
    closed: usize,
}

impl Figures {
    fn line(&self) -> String {
        format!(
            "{} {} {} {} {}",
            self.rss, self.heap, self.future, self.pending, self.closed
        )
    }

    fn parse(line: &str) -> Option<Self> {
        let mut n = line.split(' ').map(|w| w.parse::<usize>().ok());
        Some(Figures {
            rss: n.next()??,
            heap: n.next()??,
            future: n.next()??,
            pending: n.next()??,
            closed: n.next()??,
        })
    }
}

/// The server program: this binary.
fn exe() -> String {
    // Invariant: a running program has a path (Linux /proc/self/exe).
    std::env::current_exe()
        .expect("the benchmark's own path")
        .to_string_lossy()
        .into_owned()
}

/// The process's resident set, bytes (`VmRSS` of `/proc/self/status`).
fn rss() -> usize {
    // Invariant: Linux has /proc/self/status with a `VmRSS:   N kB` line.
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let kb = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<usize>().ok())
        .expect("a VmRSS line");
    kb * 1024
}

/// Counts the first poll of the call it wraps: low half of the counter, calls pending after
/// it; high half, calls that finished in it (refused at once).
struct FirstPoll<F> {
    call: F,
    counter: Option<Arc<AtomicUsize>>,
}

impl<F: Future> Future for FirstPoll<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        // SAFETY: `call` is structurally pinned (never moved out of `self`); `counter` is not
        // pinned and only taken.
        let this = unsafe { self.get_unchecked_mut() };
        // SAFETY: see above; `this` stays where it was pinned.
        let result = unsafe { Pin::new_unchecked(&mut this.call) }.poll(cx);
        if let Some(counter) = this.counter.take() {
            counter.fetch_add(if result.is_ready() { 1 << 32 } else { 1 }, Relaxed);
        }
        result
    }
}

/// A spawned call's outcome, as each runtime's join handle gives it.
trait Joined {
    /// Whether the call failed because the connection closed (and nothing else).
    fn ended_by_close(self) -> bool;
}

type CallResult = Result<mcp_tokio::types::CallToolResult, mcp_tokio::Error>;

impl Joined for CallResult {
    fn ended_by_close(self) -> bool {
        matches!(self, Err(mcp_tokio::Error::Closed { .. }))
    }
}

impl Joined for Result<CallResult, tokio::task::JoinError> {
    fn ended_by_close(self) -> bool {
        self.is_ok_and(Joined::ended_by_close)
    }
}

fn arguments() -> serde_json::Value {
    serde_json::json!({ "message": "hello from the pending-request benchmark" })
}

/// Before and after, around `issue` (which spawns every call and returns once each was
/// polled and the server read every line).
struct Probe {
    rss: usize,
    heap: usize,
}

impl Probe {
    fn now() -> Self {
        Probe {
            rss: rss(),
            heap: live_bytes(),
        }
    }
}

macro_rules! measure_with {
    ($client:expr, $calls:expr, $spawn:path, $sleep:expr) => {{
        let client = $client;
        let calls: usize = $calls;
        let future = std::mem::size_of_val(&client.call_tool("echo", arguments()));
        let mut notifications = client.notifications();
        let polled = Arc::new(AtomicUsize::new(0));
        let mut tasks = Vec::with_capacity(calls);
        let before = Probe::now();
        for _ in 0..calls {
            let client = client.clone();
            // Outside the task: not part of a call's cost, only the bench's own counter.
            let counter = polled.clone();
            tasks.push($spawn(async move {
                // The call as a user awaits it, plus the bench's counter of first polls
                // (8 bytes): once it reaches `calls`, every call is registered.
                FirstPoll {
                    call: client.call_tool("echo", arguments()),
                    counter: Some(counter),
                }
                .await
            }));
        }
        // Low half: calls pending after their first poll; high half: calls that finished in
        // it (refused at once).
        let count = |n: usize| (n & 0xFFFF_FFFF) + (n >> 32);
        while count(polled.load(Relaxed)) < calls {
            $sleep.await;
        }
        let pending = polled.load(Relaxed) & 0xFFFF_FFFF;
        // Every line written so far is read once the server's answer to this comes back.
        client
            .notify(FLUSH, ())
            .expect("the flush notification is sent");
        let _ = notifications.recv().await;
        let after = Probe::now();
        client.close().await;
        let mut closed = 0;
        for t in tasks {
            if Joined::ended_by_close(t.await) {
                closed += 1;
            }
        }
        Figures {
            rss: after.rss.saturating_sub(before.rss),
            heap: after.heap.saturating_sub(before.heap),
            future,
            pending,
            closed,
        }
    }};
}

fn measure_tokio(calls: usize) -> Figures {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        // Invariant: building a runtime only fails when the OS refuses threads or fds.
        .expect("a tokio runtime");
    rt.block_on(async {
        let client = mcp_tokio::ClientBuilder::new()
            .request_timeout(Some(TIMEOUT))
            .stdio(mcp_tokio::mcp_driver::process::StdioCommand::new(exe()).args(["silent-server"]))
            .await
            // Invariant: the server is this binary; failing to start it is a broken set-up.
            .expect("the client connects to the silent server");
        measure_with!(
            client,
            calls,
            tokio::spawn,
            tokio::time::sleep(Duration::from_millis(10))
        )
    })
}

fn measure_async_std(calls: usize) -> Figures {
    async_std::task::block_on(async {
        let client = mcp_async_std::ClientBuilder::new()
            .runtime(mcp_async_std::AsyncStdRuntime::async_std())
            .request_timeout(Some(TIMEOUT))
            .stdio(
                mcp_async_std::mcp_driver::process::StdioCommand::new(exe())
                    .args(["silent-server"]),
            )
            .await
            .expect("the client connects to the silent server");
        measure_with!(
            client,
            calls,
            async_std::task::spawn,
            async_std::task::sleep(Duration::from_millis(10))
        )
    })
}

/// The same measurement with `rmcp`: a `Peer` clone per spawned task, its `call_tool`; the
/// server has read everything once a `ping` sent after the calls is answered (rmcp has no
/// in-flight cap, so the ping is not held behind them).
fn measure_rmcp(calls: usize) -> Figures {
    use rmcp::ServiceExt as _;
    use rmcp::model::{CallToolRequestParams, ClientConfig, ClientRequest};
    use rmcp::transport::TokioChildProcess;

    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    rt.block_on(async {
        let mut cmd = tokio::process::Command::new(exe());
        cmd.arg("silent-server");
        let transport = TokioChildProcess::new(cmd).expect("rmcp spawns the silent server");
        let service = ClientConfig::default()
            .serve(transport)
            .await
            .expect("rmcp connects to the silent server");
        let peer = service.peer().clone();
        let params = || {
            let args = arguments().as_object().cloned().expect("an object");
            CallToolRequestParams::new("echo").with_arguments(args)
        };
        let future = std::mem::size_of_val(&peer.call_tool(params()));
        let polled = Arc::new(AtomicUsize::new(0));
        let mut tasks = Vec::with_capacity(calls);
        let before = Probe::now();
        for _ in 0..calls {
            let peer = peer.clone();
            let counter = polled.clone();
            tasks.push(tokio::spawn(async move {
                FirstPoll {
                    call: peer.call_tool(params()),
                    counter: Some(counter),
                }
                .await
            }));
        }
        while polled.load(Relaxed) & 0xFFFF_FFFF < calls {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        peer.send_request(ClientRequest::PingRequest(Default::default()))
            .await
            .expect("the silent server answers ping");
        let after = Probe::now();
        let _ = service.cancel().await;
        let mut closed = 0;
        for t in tasks {
            if matches!(t.await, Ok(Err(_))) {
                closed += 1;
            }
        }
        Figures {
            rss: after.rss.saturating_sub(before.rss),
            heap: after.heap.saturating_sub(before.heap),
            future,
            pending: polled.load(Relaxed) & 0xFFFF_FFFF,
            closed,
        }
    })
}
