//! End to end over Streamable HTTP on 127.0.0.1, in one run, against one echo server process
//! (`mcp_bench::echo_http`, this binary started as `e2e_http echo-server`):
//!
//! - (a) this client (`mcp_tokio::Client` over HTTP, initialize era pinned to 2025-11-25),
//!   and (a') the same on the async-std adapter (`mcp_async_std`, under `smol::block_on`),
//! - (b) the official Rust SDK's client (`rmcp`, `StreamableHttpClientTransport` with reqwest,
//!   its default config: at most 16 POSTs in progress), and (b') the same with
//!   `max_concurrent_requests(256)`,
//! - (c) the server-bound limit: a load generator (hyper client connections, one POST at a
//!   time on each of `k` keep-alive connections, bodies counted, not parsed as MCP).
//!
//! ```text
//! cargo run --release -p mcp-bench --bin e2e_http -- [--seq N] [--calls N] [--repeat N] [--only ours,async-std,rmcp,rmcp256,load]
//! ```

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::Instant;

use http_body_util::{BodyExt as _, Full};
use hyper::body::Bytes;
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;
use mcp_bench::e2e::{
    Row, WINDOWS, cpu_time, percentiles, pipelined, print_ratio, print_table, sequential,
};
use mcp_bench::{echo, echo_http};
use mcp_tokio::mcp_proto::session::ProtocolVersion;
use mcp_tokio::mcp_proto::types::ContentBlock;

const MESSAGE: &str = "hello from the end-to-end benchmark";

struct Options {
    seq: usize,
    calls: usize,
    repeat: usize,
    only: Vec<String>,
}

impl Options {
    fn wants(&self, row: &str) -> bool {
        self.only.is_empty() || self.only.iter().any(|r| r == row)
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("echo-server") {
        return echo_http::run_child();
    }
    let mut o = Options {
        seq: 5_000,
        calls: 20_000,
        repeat: 3,
        only: Vec::new(),
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut num = || it.next().and_then(|v| v.parse().ok()).filter(|&n| n > 0);
        let ok = match a.as_str() {
            "--seq" => num().map(|n| o.seq = n),
            "--calls" => num().map(|n| o.calls = n),
            "--repeat" => num().map(|n| o.repeat = n),
            "--only" => it
                .next()
                .map(|v| o.only.extend(v.split(',').map(str::to_owned))),
            _ => None,
        };
        if ok.is_none() {
            eprintln!(
                "bad argument {a:?}\nusage: e2e_http [--seq N] [--calls N] [--repeat N] [--only ours,async-std,rmcp,rmcp256,load]"
            );
            return ExitCode::FAILURE;
        }
    }
    run(&o);
    ExitCode::SUCCESS
}

/// The echo server process and its URL; killed on drop.
struct Server {
    child: Child,
    url: String,
    port: u16,
}

impl Server {
    fn start() -> Server {
        // Invariant: a running program has a path (Linux /proc/self/exe).
        let exe = std::env::current_exe().expect("the benchmark's own path");
        let mut child = Command::new(exe)
            .arg("echo-server")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawning the echo server");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("piped stdout"))
            .read_line(&mut line)
            .expect("reading the server's port");
        let port: u16 = line.trim().parse().expect("the server prints its port");
        Server {
            child,
            url: format!("http://127.0.0.1:{port}{}", echo_http::PATH),
            port,
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn run(o: &Options) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let server = Server::start();
    println!(
        "e2e_http: {} sequential calls, {} pipelined calls per window, best of {}, current-thread runtime, server on 127.0.0.1:{}",
        o.seq, o.calls, o.repeat, server.port
    );
    let (mut ours, mut async_std, mut rmcp, mut rmcp256, mut load) = Default::default();
    for round in 0..o.repeat {
        eprintln!("round {}/{}", round + 1, o.repeat);
        if o.wants("ours") {
            ours = Row::best(ours, rt.block_on(measure_ours(o, &server.url)));
        }
        if o.wants("async-std") {
            let row = smol::block_on(measure_async_std(o, &server.url));
            async_std = Row::best(async_std, row);
        }
        if o.wants("rmcp") {
            rmcp = Row::best(rmcp, rt.block_on(measure_rmcp(o, &server.url, None)));
        }
        if o.wants("rmcp256") {
            rmcp256 = Row::best(
                rmcp256,
                rt.block_on(measure_rmcp(o, &server.url, Some(256))),
            );
        }
        if o.wants("load") {
            load = Row::best(load, rt.block_on(measure_load(o, server.port)));
        }
    }
    print_table(&[
        ("(a) mcp-tokio (this client)", ours),
        ("(a') mcp-async-std (this client, smol)", async_std),
        ("(b) rmcp 3.11, defaults (16 POSTs)", rmcp),
        ("(b') rmcp 3.11, max_concurrent_requests 256", rmcp256),
        ("(c) server-bound (load generator)", load),
    ]);
    println!();
    println!(
        "| ratio | seq p50 | seq p99 | 1 in flight | 16 in flight | 256 in flight | CPU/call at 256 |"
    );
    println!("|---|---|---|---|---|---|---|");
    print_ratio("ours / rmcp", ours, rmcp);
    print_ratio("ours on async-std / rmcp", async_std, rmcp);
    print_ratio("ours / rmcp (256 POSTs)", ours, rmcp256);
    print_ratio("ours / server-bound", ours, load);
    print_ratio("rmcp / server-bound", rmcp, load);
}

fn check_text(text: Option<&str>) {
    assert_eq!(text, Some(MESSAGE), "the echo server echoes the message");
}

async fn measure_ours(o: &Options, url: &str) -> Row {
    let client = mcp_tokio::ClientBuilder::new()
        .protocol_version(ProtocolVersion::V2025_11_25)
        .http(url)
        .await
        .expect("this client connects to the echo server");
    measure_client(o, client).await
}

/// This client on the async-std adapter (hyper over smol's TCP, its own connection pool),
/// run under `smol::block_on`.
async fn measure_async_std(o: &Options, url: &str) -> Row {
    let client = mcp_async_std::ClientBuilder::new()
        .runtime(mcp_async_std::SmolRuntime::smol())
        .protocol_version(ProtocolVersion::V2025_11_25)
        .http(url)
        .await
        .expect("this client connects to the echo server");
    measure_client(o, client).await
}

/// Sequential latency and pipelined throughput of one connected client, then its close.
async fn measure_client<R: mcp_driver::Runtime>(o: &Options, client: mcp_driver::Client<R>) -> Row {
    assert_eq!(client.protocol_version(), ProtocolVersion::V2025_11_25);
    let args = serde_json::json!({ "message": MESSAGE });
    let call = || {
        let (client, args) = (&client, &args);
        async move {
            let r = client.call_tool("echo", args).await.expect("echo succeeds");
            check_text(match r.content.first() {
                Some(ContentBlock::Text(t)) => Some(t.text.as_str()),
                _ => None,
            });
        }
    };
    let (p50, p99) = sequential(o.seq, call).await;
    let (mut rate, mut cpu) = ([None; 3], [None; 3]);
    for (i, k) in WINDOWS.into_iter().enumerate() {
        let (r, c) = pipelined(k, o.calls, call).await;
        (rate[i], cpu[i]) = (Some(r), Some(c));
    }
    client.close().await;
    Row {
        p50,
        p99,
        rate,
        cpu,
    }
}

async fn measure_rmcp(o: &Options, url: &str, max_posts: Option<usize>) -> Row {
    use rmcp::ServiceExt as _;
    use rmcp::model::{CallToolRequestParams, ClientConfig, ProtocolVersion as V};
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

    let mut config = StreamableHttpClientTransportConfig::with_uri(url);
    if let Some(n) = max_posts {
        config = config.max_concurrent_requests(n);
    }
    let transport = StreamableHttpClientTransport::from_config(config);
    let service = ClientConfig::default()
        .with_protocol_version(V::V_2025_11_25)
        .serve(transport)
        .await
        .expect("rmcp connects to the echo server");
    let args = serde_json::json!({ "message": MESSAGE })
        .as_object()
        .cloned()
        .expect("an object");
    let call = || {
        let (service, args) = (&service, &args);
        async move {
            let r = service
                .call_tool(CallToolRequestParams::new("echo").with_arguments(args.clone()))
                .await
                .expect("echo succeeds");
            check_text(
                r.content
                    .first()
                    .and_then(|c| c.as_text())
                    .map(|t| t.text.as_str()),
            );
        }
    };
    let (p50, p99) = sequential(o.seq, call).await;
    let (mut rate, mut cpu) = ([None; 3], [None; 3]);
    for (i, k) in WINDOWS.into_iter().enumerate() {
        let (r, c) = pipelined(k, o.calls, call).await;
        (rate[i], cpu[i]) = (Some(r), Some(c));
    }
    let _ = service.cancel().await;
    Row {
        p50,
        p99,
        rate,
        cpu,
    }
}

/// One keep-alive connection of the load generator.
type Sender = http1::SendRequest<Full<Bytes>>;

async fn connect(port: u16) -> Sender {
    let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("connecting to the echo server");
    let _ = tcp.set_nodelay(true);
    let (sender, conn) = http1::handshake(TokioIo::new(tcp))
        .await
        .expect("an HTTP/1.1 connection");
    tokio::spawn(conn);
    sender
}

/// One POST of a `tools/call` with the session id; the answer's body is read whole and its
/// status checked, not parsed.
async fn post(sender: &mut Sender, port: u16, body: &Bytes) {
    let req = hyper::Request::post(echo_http::PATH)
        .header(hyper::header::HOST, format!("127.0.0.1:{port}"))
        .header(hyper::header::CONTENT_TYPE, "application/json")
        .header(hyper::header::ACCEPT, "application/json, text/event-stream")
        .header("mcp-session-id", echo_http::SESSION_ID)
        .header("mcp-protocol-version", "2025-11-25")
        .body(Full::new(body.clone()))
        .expect("a valid request");
    let resp = sender.send_request(req).await.expect("the server answers");
    assert_eq!(resp.status(), hyper::StatusCode::OK);
    let body = resp.into_body().collect().await.expect("a body").to_bytes();
    assert!(body.len() > MESSAGE.len());
}

/// The server-bound limit: `k` keep-alive connections, each one POST at a time, `calls`
/// in all (the handshake is skipped: the server does not check sessions).
async fn measure_load(o: &Options, port: u16) -> Row {
    let body = Bytes::from(echo::call_line(1, MESSAGE));
    let mut one = connect(port).await;
    let mut samples = Vec::with_capacity(o.seq);
    let warm = (o.seq / 10).max(100);
    for i in 0..warm + o.seq {
        let t = Instant::now();
        post(&mut one, port, &body).await;
        if i >= warm {
            samples.push(t.elapsed());
        }
    }
    let (p50, p99) = percentiles(samples);
    let (mut rate, mut cpu) = ([None; 3], [None; 3]);
    for (i, k) in WINDOWS.into_iter().enumerate() {
        let mut senders = Vec::with_capacity(k);
        for _ in 0..k {
            senders.push(connect(port).await);
        }
        let cpu_start = cpu_time();
        let start = Instant::now();
        let per = o.calls / k;
        let tasks: Vec<_> = senders
            .into_iter()
            .enumerate()
            .map(|(j, mut s)| {
                let body = body.clone();
                let n = per + usize::from(j < o.calls % k);
                tokio::spawn(async move {
                    for _ in 0..n {
                        post(&mut s, port, &body).await;
                    }
                })
            })
            .collect();
        for t in tasks {
            t.await.expect("a load task");
        }
        rate[i] = Some(o.calls as f64 / start.elapsed().as_secs_f64());
        cpu[i] = Some((cpu_time() - cpu_start) / o.calls as u32);
    }
    Row {
        p50,
        p99,
        rate,
        cpu,
    }
}
