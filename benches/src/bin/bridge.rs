//! What a bridge costs, in one run: `mcp bridge` beside the Node bridges people use for the
//! same jobs, each against a direct connection to the same echo server.
//!
//! - **remote** (the `mcp-remote` job: a host speaks stdio, the server is remote over
//!   Streamable HTTP): the echo server's HTTP mode (`mcp_bench::echo_http`, this binary started
//!   as `bridge echo-http`), reached (a) directly by this client over HTTP, (b) through
//!   `mcp bridge --url URL`, (c) through `mcp-remote URL --allow-http --transport http-only`.
//! - **gateway** (the `supergateway` job: a host speaks Streamable HTTP, the server is a stdio
//!   process): the echo server on stdio (`bridge echo-stdio`), reached (b) through `mcp bridge --listen 127.0.0.1:0 -- ECHO`, (c) through
//!   `supergateway --stdio ECHO --outputTransport streamableHttp --stateful`; (a) the
//!   direct row is the same echo answers from the echo server's HTTP mode, so that the host
//!   speaks HTTP on every row.
//!
//! For each: the median sequential round trip of `tools/call` (and what the bridge adds to the
//! direct one), calls per second with 16 in flight (and the ratio to direct), and the bridge
//! process's peak resident memory (`VmHWM`; the echo server the gateways start is not counted).
//! And the bridge process's CPU time per call, sequential and at 16 in flight (every thread's
//! time on a CPU, from `/proc/PID/task/*/schedstat`), with the kernel's share of it
//! (`stime / (utime + stime)` of `/proc/PID/stat`): on a machine with fewer cores than the
//! host, bridge and server have busy threads, the throughput ratio follows it, and unlike the
//! wall-clock columns it does not move with the machine's other load.
//! The host is always this crate's client (`mcp_tokio::Client`), so the rows differ only by
//! the bridge in the middle. It runs on one thread (a current-thread runtime), as the hosts
//! that start bridges do (a desktop app's or an IDE's Node event loop, a Python asyncio loop):
//! on a machine with two cores, a host whose calls hop between worker threads keeps both
//! cores busy with its own wake-ups and the bridge waits for one, which measures the machine's
//! scheduler more than the bridge. `--host-threads N` runs it on N worker threads instead.
//!
//! ```text
//! cargo build --release -p mcp-term -p mcp-bench
//! bash scripts/install-peers --bridges && . .peers/env.sh
//! scripts/netns-run target/release/bridge [--seq N] [--calls N] [--repeat N] [--only remote,gateway] [--host-threads N] [--mcp PATH]
//! ```
//!
//! `netns-run` because supergateway binds every interface: inside a loopback-only namespace
//! nothing is reachable from outside. Without `.peers/npm-bridges` (installed only by
//! `install-peers --bridges`) the Node rows say they are skipped and the rest runs.

use std::cell::Cell;
use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use mcp_bench::e2e::{cpu_time_of, pipelined, sequential};
use mcp_bench::{echo, echo_http};
use mcp_tokio::mcp_driver::process::{Signal, StdioCommand, signal_group};
use mcp_tokio::mcp_proto::session::ProtocolVersion;
use mcp_tokio::mcp_proto::types::ContentBlock;

const MESSAGE: &str = "hello from the bridge benchmark";

/// Calls in flight for the throughput column.
const IN_FLIGHT: usize = 16;

struct Options {
    seq: usize,
    calls: usize,
    repeat: usize,
    only: Vec<String>,
    /// The host's worker threads: 1 is a current-thread runtime.
    host_threads: usize,
    mcp: PathBuf,
}

impl Options {
    fn wants(&self, job: &str) -> bool {
        self.only.is_empty() || self.only.iter().any(|j| j == job)
    }
}

const USAGE: &str = "usage: bridge [--seq N] [--calls N] [--repeat N] [--only remote,gateway] [--host-threads N] [--mcp PATH]";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("echo-http") => return echo_http::run_child(),
        Some("echo-stdio") => return serve_stdio(),
        _ => {}
    }
    let mut o = Options {
        seq: 2_000,
        calls: 20_000,
        repeat: 3,
        only: Vec::new(),
        host_threads: 1,
        mcp: default_mcp(),
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut num = || it.next().and_then(|v| v.parse().ok()).filter(|&n| n > 0);
        let ok = match a.as_str() {
            "--seq" => num().map(|n| o.seq = n),
            "--calls" => num().map(|n| o.calls = n),
            "--repeat" => num().map(|n| o.repeat = n),
            "--host-threads" => num().map(|n| o.host_threads = n),
            "--only" => it
                .next()
                .map(|v| o.only.extend(v.split(',').map(str::to_owned))),
            "--mcp" => it.next().map(|v| o.mcp = PathBuf::from(v)),
            _ => None,
        };
        if ok.is_none() {
            eprintln!("bad argument {a:?}\n{USAGE}");
            return ExitCode::FAILURE;
        }
    }
    if !o.mcp.is_file() {
        eprintln!(
            "no `mcp` binary at {} (build it: cargo build --release -p mcp-term, or pass --mcp PATH)",
            o.mcp.display()
        );
        return ExitCode::FAILURE;
    }
    let mut builder = if o.host_threads == 1 {
        tokio::runtime::Builder::new_current_thread()
    } else {
        let mut b = tokio::runtime::Builder::new_multi_thread();
        b.worker_threads(o.host_threads);
        b
    };
    let rt = builder
        .enable_all()
        .build()
        // Invariant: building a runtime only fails when the OS refuses threads or fds.
        .expect("a tokio runtime");
    println!(
        "bridge bench: {} sequential calls, {} calls at {IN_FLIGHT} in flight, best of {}, the host on {}",
        o.seq,
        o.calls,
        o.repeat,
        match o.host_threads {
            1 => "one thread".to_owned(),
            n => format!("{n} worker threads"),
        }
    );
    let node = NodeBridges::find();
    if let Err(why) = &node {
        println!("mcp-remote, supergateway: skipped ({why})");
    }
    if o.wants("remote") {
        rt.block_on(remote(&o, node.as_ref().ok()));
    }
    if o.wants("gateway") {
        rt.block_on(gateway(&o, node.as_ref().ok()));
    }
    ExitCode::SUCCESS
}

/// `target/release/mcp` beside this binary (both are built into the same directory).
fn default_mcp() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(|d| d.join("mcp")))
        .unwrap_or_else(|| PathBuf::from("target/release/mcp"))
}

fn exe() -> String {
    // Invariant: a running program has a path (Linux /proc/self/exe).
    std::env::current_exe()
        .expect("the benchmark's own path")
        .to_string_lossy()
        .into_owned()
}

/// Node 22 and the installed `mcp-remote` and `supergateway` entry points.
struct NodeBridges {
    node: String,
    mcp_remote: String,
    supergateway: String,
}

impl NodeBridges {
    fn find() -> Result<NodeBridges, String> {
        let dir = std::env::var("MCP_PEERS_DIR")
            .map_err(|_| "MCP_PEERS_DIR unset: source .peers/env.sh".to_owned())?;
        let dir = Path::new(&dir);
        let node = dir.join("npm/node_modules/node/bin/node");
        let modules = dir.join("npm-bridges/node_modules");
        let mcp_remote = modules.join("mcp-remote/dist/proxy.js");
        let supergateway = modules.join("supergateway/dist/index.js");
        for f in [&node, &mcp_remote, &supergateway] {
            if !f.is_file() {
                return Err(format!(
                    "{} missing: run scripts/install-peers --bridges",
                    f.display()
                ));
            }
        }
        let s = |p: PathBuf| p.to_string_lossy().into_owned();
        Ok(NodeBridges {
            node: s(node),
            mcp_remote: s(mcp_remote),
            supergateway: s(supergateway),
        })
    }
}

/// One measured row: latency, throughput at [`IN_FLIGHT`], the bridge's peak RSS and CPU
/// time per call.
#[derive(Clone, Copy, Default)]
struct Figures {
    p50: Option<Duration>,
    rate: Option<f64>,
    rss_kib: Option<u64>,
    cpu: Option<BridgeCpu>,
}

/// The bridge process's CPU time per call (see [`BridgeCpu::measure`]).
#[derive(Clone, Copy)]
struct BridgeCpu {
    /// Per sequential call (the warm-up calls included: they are calls like the others).
    sequential: Duration,
    /// Per call at [`IN_FLIGHT`] in flight.
    pipelined: Duration,
    /// The kernel's share of the bridge's CPU time over both, 0 to 1.
    kernel_share: Option<f64>,
}

/// A reading of a process's CPU counters.
#[derive(Clone, Copy)]
struct CpuReading {
    /// On a CPU, every thread (`schedstat`, nanoseconds).
    on_cpu: Duration,
    /// `utime` and `stime` of `/proc/PID/stat`, in clock ticks.
    ticks: Option<(u64, u64)>,
}

impl CpuReading {
    fn of(pid: u32) -> Option<CpuReading> {
        Some(CpuReading {
            on_cpu: cpu_time_of(&pid.to_string())?,
            ticks: user_and_system_ticks(pid),
        })
    }
}

/// `utime` and `stime` (fields 14 and 15) of `/proc/PID/stat`, in clock ticks.
fn user_and_system_ticks(pid: u32) -> Option<(u64, u64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: count after it.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11);
    Some((fields.next()?.parse().ok()?, fields.next()?.parse().ok()?))
}

impl BridgeCpu {
    /// From readings before the sequential calls, between, and after the pipelined ones.
    fn measure(
        before: CpuReading,
        between: CpuReading,
        after: CpuReading,
        calls: (usize, usize),
    ) -> Option<BridgeCpu> {
        let per = |a: Duration, b: Duration, n: usize| {
            u32::try_from(n)
                .ok()
                .filter(|&n| n > 0)
                .map(|n| b.saturating_sub(a) / n)
        };
        let kernel_share = match (before.ticks, after.ticks) {
            (Some((u0, s0)), Some((u1, s1))) if u1 + s1 > u0 + s0 => {
                Some((s1 - s0) as f64 / ((u1 + s1) - (u0 + s0)) as f64)
            }
            _ => None,
        };
        Some(BridgeCpu {
            sequential: per(before.on_cpu, between.on_cpu, calls.0)?,
            pipelined: per(between.on_cpu, after.on_cpu, calls.1)?,
            kernel_share,
        })
    }
}

impl Figures {
    fn best(self, other: Figures) -> Figures {
        Figures {
            p50: match (self.p50, other.p50) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            },
            rate: match (self.rate, other.rate) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            },
            rss_kib: self.rss_kib.max(other.rss_kib),
            // The run that cost the bridge least at 16 in flight (the other runs paid for
            // the machine's other load too).
            cpu: match (self.cpu, other.cpu) {
                (Some(a), Some(b)) if b.pipelined < a.pipelined => Some(b),
                (Some(a), _) => Some(a),
                (None, b) => b,
            },
        }
    }
}

fn print_rows(job: &str, direct: Figures, rows: &[(&str, Option<Figures>)]) {
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!();
    println!("### {job}");
    println!();
    println!(
        "| path | p50 | added p50 | calls/s at {IN_FLIGHT} in flight | of direct | bridge peak RSS | bridge CPU µs/call, seq / at {IN_FLIGHT} (kernel share) |"
    );
    println!("|---|---|---|---|---|---|---|");
    let cell = |name: &str, f: Figures, is_direct: bool| {
        let p50 = f.p50.map_or("-".into(), |d| format!("{:.1} µs", us(d)));
        let added = match (f.p50, direct.p50, is_direct) {
            (_, _, true) => "".into(),
            (Some(a), Some(d), _) => format!("{:+.1} µs", us(a) - us(d)),
            _ => "-".into(),
        };
        let rate = f.rate.map_or("-".into(), |r| format!("{r:.0}"));
        let ratio = match (f.rate, direct.rate, is_direct) {
            (_, _, true) => "".into(),
            (Some(r), Some(d), _) if d > 0.0 => format!("{:.2}x", r / d),
            _ => "-".into(),
        };
        let rss = f
            .rss_kib
            .map_or("".into(), |k| format!("{:.1} MiB", k as f64 / 1024.0));
        let cpu = f.cpu.map_or("".into(), |c| {
            let share = c
                .kernel_share
                .map_or(String::new(), |k| format!(" ({:.0}% kernel)", k * 100.0));
            format!("{:.1} / {:.1}{share}", us(c.sequential), us(c.pipelined))
        });
        println!("| {name} | {p50} | {added} | {rate} | {ratio} | {rss} | {cpu} |");
    };
    cell("direct", direct, true);
    for (name, f) in rows {
        match f {
            Some(f) => cell(name, *f, false),
            None => println!("| {name} | skipped | | | | | |"),
        }
    }
}

// --- the jobs ---------------------------------------------------------------------------------

async fn remote(o: &Options, node: Option<&NodeBridges>) {
    let server = HttpEcho::start();
    let url = server.url.clone();
    let mcp = o.mcp.to_string_lossy().into_owned();
    let mut direct = Figures::default();
    let mut ours = Figures::default();
    let mut theirs = node.map(|_| Figures::default());
    for _ in 0..o.repeat {
        direct = direct.best(measure_http(o, &url, None).await);
        ours = ours.best(measure_stdio(o, &mcp, &["bridge", "--url", &url]).await);
        if let (Some(n), Some(t)) = (node, theirs.as_mut()) {
            let args = [
                n.mcp_remote.as_str(),
                &url,
                "--allow-http",
                "--transport",
                "http-only",
            ];
            *t = t.best(measure_stdio(o, &n.node, &args).await);
        }
    }
    print_rows(
        "remote: host on stdio, server over Streamable HTTP (the mcp-remote job)",
        direct,
        &[("mcp bridge --url", Some(ours)), ("mcp-remote", theirs)],
    );
}

async fn gateway(o: &Options, node: Option<&NodeBridges>) {
    let me = exe();
    let echo_cmd = format!("{me} echo-stdio");
    let mcp = o.mcp.to_string_lossy().into_owned();
    let mut direct = Figures::default();
    let mut ours = Figures::default();
    let mut theirs = node.map(|_| Figures::default());
    // Direct: the same echo answers served over HTTP by the echo server's HTTP mode, so
    // the host speaks HTTP on both rows and the difference is the bridge and its stdio hop.
    let server = HttpEcho::start();
    for _ in 0..o.repeat {
        direct = direct.best(measure_http(o, &server.url, None).await);
        {
            let bridge = Listening::mcp(&mcp, &me);
            let f = measure_http(o, &bridge.url, Some(bridge.pid)).await;
            ours = ours.best(f);
        }
        if let (Some(n), Some(t)) = (node, theirs.as_mut()) {
            let gw = Listening::supergateway(n, &echo_cmd);
            let f = measure_http(o, &gw.url, Some(gw.pid)).await;
            *t = t.best(f);
        }
    }
    print_rows(
        "gateway: host over Streamable HTTP, server on stdio (the supergateway job)",
        direct,
        &[
            ("mcp bridge --listen", Some(ours)),
            ("supergateway --stateful", theirs),
        ],
    );
}

// --- measuring one path -----------------------------------------------------------------------

/// Latency and throughput of one connected client; the peak RSS of `pid` after the load and
/// its CPU time per call.
async fn measure_client(o: &Options, client: mcp_tokio::Client, pid: Option<u32>) -> Figures {
    let args = serde_json::json!({ "message": MESSAGE });
    let made = Cell::new(0usize);
    let call = || {
        let (client, args, made) = (&client, &args, &made);
        async move {
            made.set(made.get() + 1);
            let r = client.call_tool("echo", args).await.expect("echo succeeds");
            let text = match r.content.first() {
                Some(ContentBlock::Text(t)) => Some(t.text.as_str()),
                _ => None,
            };
            assert_eq!(text, Some(MESSAGE), "the echo server echoes the message");
        }
    };
    let before = pid.and_then(CpuReading::of);
    let (p50, _) = sequential(o.seq, call).await;
    let between = pid.and_then(CpuReading::of);
    let sequential_calls = made.replace(0);
    let (rate, _) = pipelined(IN_FLIGHT, o.calls, call).await;
    let after = pid.and_then(CpuReading::of);
    let cpu = match (before, between, after) {
        (Some(b), Some(m), Some(a)) => BridgeCpu::measure(b, m, a, (sequential_calls, made.get())),
        _ => None,
    };
    let rss_kib = pid.and_then(peak_rss_kib);
    client.close().await;
    Figures {
        p50,
        rate: Some(rate),
        rss_kib,
        cpu,
    }
}

async fn measure_http(o: &Options, url: &str, pid: Option<u32>) -> Figures {
    let client = mcp_tokio::ClientBuilder::new()
        .protocol_version(ProtocolVersion::V2025_11_25)
        .http(url)
        .await
        .unwrap_or_else(|e| panic!("connecting to {url}: {e}"));
    measure_client(o, client, pid).await
}

/// A stdio path: `program args...` started under `sh`, which writes its pid to a file before
/// it `exec`s the program (same pid), so that the bridge's memory can be read.
async fn measure_stdio(o: &Options, program: &str, args: &[&str]) -> Figures {
    let pidfile = std::env::temp_dir().join(format!("mcp-bridge-bench-{}.pid", std::process::id()));
    let _ = std::fs::remove_file(&pidfile);
    let mut sh_args = vec![
        "-c".to_owned(),
        r#"echo $$ > "$0"; exec "$@""#.to_owned(),
        pidfile.to_string_lossy().into_owned(),
        program.to_owned(),
    ];
    sh_args.extend(args.iter().map(|a| (*a).to_owned()));
    let client = mcp_tokio::ClientBuilder::new()
        .protocol_version(ProtocolVersion::V2025_11_25)
        .stdio(StdioCommand::new("sh").args(sh_args))
        .await
        .unwrap_or_else(|e| panic!("connecting through {program} {args:?}: {e}"));
    let pid = std::fs::read_to_string(&pidfile)
        .ok()
        .and_then(|s| s.trim().parse().ok());
    let _ = std::fs::remove_file(&pidfile);
    let figures = measure_client(o, client, pid).await;
    // A bridge still exiting (Node's take a while after their stdin closes) keeps a core
    // busy, and on this kind of machine a core that never idles makes the next row's round
    // trips shorter: the next row starts once it is gone.
    if let Some(pid) = pid {
        until_gone(pid).await;
    }
    figures
}

/// Waits, up to 10 s, until process `pid` has exited (gone, or a zombie not reaped yet).
async fn until_gone(pid: u32) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok();
        // The state letter follows the command name's closing parenthesis.
        let running = state
            .as_deref()
            .and_then(|s| s.rsplit_once(')'))
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z'));
        if !running {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The peak resident set of a process (`VmHWM` in `/proc/PID/status`), in KiB.
fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

// --- the processes ----------------------------------------------------------------------------

/// The echo server's HTTP mode in a child process; killed on drop.
struct HttpEcho {
    child: Child,
    url: String,
}

impl HttpEcho {
    fn start() -> HttpEcho {
        let mut child = Command::new(exe())
            .arg("echo-http")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawning the echo server");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("piped stdout"))
            .read_line(&mut line)
            .expect("reading the server's port");
        let port: u16 = line.trim().parse().expect("the server prints its port");
        HttpEcho {
            child,
            url: format!("http://127.0.0.1:{port}{}", echo_http::PATH),
        }
    }
}

impl Drop for HttpEcho {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A bridge listening on HTTP in a child process; killed (with its process group) on drop.
struct Listening {
    child: Child,
    pid: u32,
    url: String,
}

impl Listening {
    /// `mcp bridge --listen 127.0.0.1:0 -- ECHO`; its URL is the first `http://` word on its
    /// stderr.
    fn mcp(mcp: &str, me: &str) -> Listening {
        let mut child = Command::new(mcp)
            .args(["bridge", "--listen", "127.0.0.1:0", "--", me, "echo-stdio"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .expect("spawning mcp bridge --listen");
        let stderr = child.stderr.take().expect("piped stderr");
        let mut lines = BufReader::new(stderr).lines();
        let url = loop {
            match lines.next() {
                Some(Ok(line)) => {
                    if let Some(url) = line.split_whitespace().find(|w| w.starts_with("http://")) {
                        break url.trim_end_matches(['.', ',', ')']).to_owned();
                    }
                }
                _ => panic!("mcp bridge --listen ended before printing its URL"),
            }
        };
        // Keep draining its stderr so that it never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        let pid = child.id();
        Listening { child, pid, url }
    }

    /// `supergateway --stdio ECHO --outputTransport streamableHttp --stateful --port P`, on
    /// a port found free just before; ready when a TCP connect succeeds.
    fn supergateway(n: &NodeBridges, echo_cmd: &str) -> Listening {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let child = Command::new(&n.node)
            .arg(&n.supergateway)
            .args(["--stdio", echo_cmd])
            .args(["--outputTransport", "streamableHttp", "--stateful"])
            .args(["--port", &port.to_string(), "--logLevel", "none"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("spawning supergateway");
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "supergateway did not listen in 30 s"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let pid = child.id();
        Listening {
            child,
            pid,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        // The whole group: the bridge and the echo server it started. (The driver's
        // `signal_group` refuses group 0, 1 and our own: never `kill -1`.)
        let _ = signal_group(self.pid, Signal::Term);
        let _ = self.child.wait();
    }
}

// --- the echo servers -------------------------------------------------------------------------

/// `bridge echo-stdio`: the echo server on stdio.
fn serve_stdio() -> ExitCode {
    match echo::serve(
        echo::Mode::Mcp,
        std::io::stdin().lock(),
        std::io::stdout().lock(),
    ) {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("echo-stdio: {e}");
            ExitCode::FAILURE
        }
    }
}
