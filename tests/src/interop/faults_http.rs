//! The HTTP rows of the fault matrix, against `fault_server --http` (modes in
//! `tests/README.md`): each asserts the typed outcome within a time bound, that the connection
//! still serves other requests as designed, and that the server process is gone at the end.
//!
//! The server binds a free port of 127.0.0.1 itself and names its URL in its `--log` file, so
//! these rows need no network namespace and no port guessing. The heap side of the 1 GiB body
//! row is measured with a counting allocator in `tests/tests/memory_bounded.rs`.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_driver::mcp_proto::http::TransportMode;
use mcp_driver::mcp_proto::http::error::MAX_BODY_EXCERPT;
use mcp_driver::{CallOptions, Client, ClientBuilder, ConnectionState, Error, Runtime};
use serde_json::{Value, json};

use super::faults::CLOSE_BOUND;
use super::{Spawned, bounded, eventually, text};
use crate::peers::{PeerProcess, ProcessTag};

/// Bytes a cut-off huge body may have cost the server before the client hung up: the body
/// limit plus both sides' socket buffers, far below the 1 GiB on offer.
pub const CUT_BOUND: u64 = 64 << 20;

/// A `fault_server --http` for one test: the client connected to it, and its log.
pub struct HttpFault<R: Runtime> {
    /// The client, the server process (killed with its group in `finish`) and its pids.
    pub spawned: Spawned<R>,
    /// Every request body the server received, plus `# ` events.
    pub log: PathBuf,
}

impl<R: Runtime> HttpFault<R> {
    /// Starts `fault_server --http --log <tmp> <mode...>` in its own process group, waits for
    /// its URL in the log and connects with Streamable HTTP and `builder`.
    ///
    /// # Panics
    ///
    /// When the server does not start listening within 5 s or the handshake fails.
    pub async fn start_with(rt: &R, bin: &Path, mode: &[&str], builder: ClientBuilder<R>) -> Self {
        let tag = ProcessTag::new(mode[0]);
        let (k, v) = tag.env();
        let log = std::env::temp_dir().join(format!("mcp-fault-http-{v}.log"));
        let _ = std::fs::remove_file(&log);
        let log_s = log.to_str().expect("the temp dir is a utf-8 path");
        let mut args = vec!["--http", "--log", log_s];
        args.extend_from_slice(mode);
        let bin_s = bin.to_str().expect("the binary's path is utf-8");
        let mut server = PeerProcess::spawn(bin_s, &args, &[(&k, &v)])
            .unwrap_or_else(|e| panic!("spawn {bin_s} {args:?}: {e}"));
        let mut url = None;
        let listening = eventually(rt, || {
            url = read_lines(&log)
                .iter()
                .find_map(|l| l.strip_prefix("# listening ").map(str::to_owned));
            url.is_some()
        })
        .await;
        assert!(
            listening,
            "fault_server --http {mode:?} did not listen (running: {}): {:?}",
            server.is_running(),
            read_lines(&log)
        );
        let url = url.expect("found just above");
        assert!(url.starts_with("http://127.0.0.1:"), "{url}");
        let client = builder
            .runtime(rt.clone())
            .name(format!("fault-http-{}", mode[0]))
            .http_transport(TransportMode::Streamable)
            .http(&url)
            .await
            .unwrap_or_else(|e| panic!("connect to {url} ({mode:?}): {e}"));
        let pids = tag.pids();
        assert!(pids.contains(&server.id()), "{pids:?}");
        let spawned = Spawned {
            client,
            tag,
            pids,
            server: Some(server),
        };
        HttpFault { spawned, log }
    }

    /// [`start_with`](Self::start_with) with a default builder.
    ///
    /// # Panics
    ///
    /// See [`start_with`](Self::start_with).
    pub async fn start(rt: &R, bin: &Path, mode: &[&str]) -> Self {
        Self::start_with(rt, bin, mode, ClientBuilder::new()).await
    }

    /// The client.
    #[must_use]
    pub fn client(&self) -> &Client<R> {
        &self.spawned.client
    }

    /// The log's lines so far.
    #[must_use]
    pub fn log_lines(&self) -> Vec<String> {
        read_lines(&self.log)
    }

    /// The server's `# ` events so far, without the `# `.
    #[must_use]
    pub fn events(&self) -> Vec<String> {
        self.log_lines()
            .iter()
            .filter_map(|l| l.strip_prefix("# ").map(str::to_owned))
            .collect()
    }

    /// The JSON-RPC messages the server received, in order.
    #[must_use]
    pub fn received(&self) -> Vec<Value> {
        self.log_lines()
            .iter()
            .filter(|l| !l.starts_with("# "))
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// The ids of the `method` requests the server received, in order.
    #[must_use]
    pub fn request_ids(&self, method: &str) -> Vec<Value> {
        self.received()
            .into_iter()
            .filter(|m| m["method"] == method && m.get("id").is_some())
            .map(|m| m["id"].clone())
            .collect()
    }

    /// Waits (up to 5 s) for an event starting with `prefix`; returns it.
    ///
    /// # Panics
    ///
    /// When none comes.
    pub async fn wait_event(&self, rt: &R, prefix: &str) -> String {
        let mut found = None;
        let ok = eventually(rt, || {
            found = self.events().into_iter().find(|e| e.starts_with(prefix));
            found.is_some()
        })
        .await;
        assert!(ok, "no `# {prefix}...` in the log: {:?}", self.events());
        found.expect("found just above")
    }

    /// Closes within [`CLOSE_BOUND`], kills the server's process group, checks every process
    /// is gone and removes the log.
    pub async fn finish(self, rt: &R) {
        self.spawned.finish(rt, CLOSE_BOUND).await;
        let _ = std::fs::remove_file(&self.log);
    }
}

fn read_lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The number after `label ` in a server event (`... 123 bytes written ...`).
fn number_before(event: &str, label: &str) -> u64 {
    event
        .split(label)
        .next()
        .and_then(|head| head.split_whitespace().last())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no number before {label:?} in {event:?}"))
}

/// The server forgets the session at the first `tools/call` (404): the client initializes a
/// new session and the call succeeds on it, re-sent once under a fresh wire id; later calls
/// use the new session.
pub async fn fault_http_session_expired<R: Runtime>(rt: R, bin: PathBuf) {
    let f = HttpFault::start(&rt, &bin, &["expire_session"]).await;
    let c = f.client();
    let r = bounded(
        &rt,
        Duration::from_secs(10),
        "a call across a session expiry",
        c.call_tool("echo", json!({"message": "again"})),
    )
    .await
    .expect("the call succeeds on the new session");
    assert_eq!(text(&r), "again");
    assert_eq!(f.request_ids("initialize").len(), 2, "{:?}", f.log_lines());
    let calls = f.request_ids("tools/call");
    assert_eq!(
        calls.len(),
        2,
        "sent, then re-sent once: {:?}",
        f.log_lines()
    );
    assert_ne!(calls[0], calls[1], "the re-sent call has a fresh wire id");
    let events = f.events();
    let expired = events
        .iter()
        .position(|e| e.starts_with("session fault-1 expired at request"))
        .unwrap_or_else(|| panic!("no expiry: {events:?}"));
    assert!(
        events[expired..]
            .iter()
            .any(|e| e.starts_with("POST /mcp session=fault-2")),
        "{events:?}"
    );
    let r = c
        .call_tool("add", json!({"a": 2, "b": 3}))
        .await
        .expect("a call on the new session");
    assert_eq!(text(&r), "5");
    c.ping().await.expect("ping");
    assert_eq!(c.state(), ConnectionState::Ready);
    assert_eq!(f.request_ids("initialize").len(), 2, "no third session");
    f.finish(&rt).await;
}

/// 500 with a body: each call fails with `Error::Http` carrying the status and the body's
/// text; the connection is not lost and other requests are answered.
pub async fn fault_http_status_500<R: Runtime>(rt: R, bin: PathBuf) {
    let f = HttpFault::start(&rt, &bin, &["status_500"]).await;
    let c = f.client();
    for i in 0..2 {
        let err = bounded(
            &rt,
            Duration::from_secs(5),
            "a call answered 500",
            c.call_tool("echo", json!({ "message": format!("m{i}") })),
        )
        .await
        .expect_err("500 is an error");
        match &err {
            Error::Http { method, source, .. } => {
                assert_eq!(method, "tools/call");
                assert_eq!(source.status, 500);
                assert!(
                    source
                        .body_excerpt
                        .starts_with("fault_server: internal error while handling request "),
                    "{:?}",
                    source.body_excerpt
                );
            }
            other => panic!("expected Error::Http, got {other:?}"),
        }
        assert_eq!(err.http_status().map(|s| s.status), Some(500));
        assert!(!err.is_connection_lost(), "{err}");
        c.ping().await.expect("ping after a 500");
    }
    assert_eq!(c.state(), ConnectionState::Ready);
    assert_eq!(f.request_ids("tools/call").len(), 2, "no retry of a 500");
    f.finish(&rt).await;
}

/// Collects the progress values of one call.
fn progress_log() -> (Arc<Mutex<Vec<f64>>>, CallOptions) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    let options = CallOptions::new()
        .timeout(Duration::from_secs(20))
        .on_progress(move |p| {
            sink.lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(p.progress);
        });
    (seen, options)
}

fn values(seen: &Mutex<Vec<f64>>) -> Vec<f64> {
    seen.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone()
}

/// The reply stream breaks off after an event with an id: the client resumes with a GET
/// carrying that `Last-Event-ID` and gets the rest and the answer, each once.
pub async fn fault_http_sse_drop<R: Runtime>(rt: R, bin: PathBuf) {
    let f = HttpFault::start(&rt, &bin, &["sse_drop"]).await;
    let c = f.client();
    let (seen, options) = progress_log();
    let r = bounded(
        &rt,
        Duration::from_secs(10),
        "an answer on the resumed stream",
        c.call_tool_with("progress", json!({"steps": 2}), options),
    )
    .await
    .expect("the answer arrives on the resumed stream");
    assert_eq!(text(&r), "2 steps done");
    // The first exchange carried the priming event and progress 1 (id s1-1).
    let resumed = f
        .wait_event(&rt, "GET /mcp session=fault-1 last-event-id=s")
        .await;
    assert_eq!(resumed, "GET /mcp session=fault-1 last-event-id=s1-1");
    assert!(eventually(&rt, || values(&seen).len() >= 2).await);
    assert_eq!(values(&seen), vec![1.0, 2.0], "each progress event once");
    // Without progress: only the priming event's id to resume from.
    let r = bounded(
        &rt,
        Duration::from_secs(10),
        "an answer after a priming event only",
        c.call_tool("echo", json!({"message": "primed"})),
    )
    .await
    .expect("the answer arrives on the resumed stream");
    assert_eq!(text(&r), "primed");
    let gets: Vec<String> = f
        .events()
        .into_iter()
        .filter(|e| e.starts_with("GET ") && !e.ends_with("last-event-id=-"))
        .collect();
    assert_eq!(
        gets,
        [
            "GET /mcp session=fault-1 last-event-id=s1-1",
            "GET /mcp session=fault-1 last-event-id=s2-0"
        ],
        "one resume per broken stream"
    );
    assert_eq!(f.request_ids("tools/call").len(), 2, "nothing re-sent");
    c.ping().await.expect("ping");
    f.finish(&rt).await;
}

/// The resuming GET replays the events already delivered before the new ones: two concurrent
/// calls each see every progress value exactly once, in order, and their own answer.
pub async fn fault_http_sse_replay<R: Runtime>(rt: R, bin: PathBuf) {
    let f = HttpFault::start(&rt, &bin, &["sse_replay"]).await;
    let c = f.client();
    let (seen_a, options_a) = progress_log();
    let (seen_b, options_b) = progress_log();
    let (a, b) = bounded(
        &rt,
        Duration::from_secs(10),
        "answers after replayed streams",
        futures_util::future::join(
            c.call_tool_with("progress", json!({"steps": 4}), options_a),
            c.call_tool_with("progress", json!({"steps": 6}), options_b),
        ),
    )
    .await;
    assert_eq!(text(&a.expect("call a")), "4 steps done");
    assert_eq!(text(&b.expect("call b")), "6 steps done");
    assert!(
        eventually(&rt, || values(&seen_a).len() >= 4
            && values(&seen_b).len() >= 6)
        .await
    );
    assert_eq!(
        values(&seen_a),
        vec![1.0, 2.0, 3.0, 4.0],
        "no loss, no duplicate"
    );
    assert_eq!(
        values(&seen_b),
        vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
        "no loss, no duplicate"
    );
    let replays = f
        .events()
        .into_iter()
        .filter(|e| e.starts_with("resuming after ") && e.ends_with("from index 0"))
        .count();
    assert_eq!(replays, 2, "both streams were replayed: {:?}", f.events());
    assert_eq!(f.request_ids("tools/call").len(), 2, "nothing re-sent");
    c.ping().await.expect("ping");
    f.finish(&rt).await;
}

/// An open reply stream that sends nothing: each call times out with `Error::Timeout`, the
/// server receives `notifications/cancelled` for it, and the client hangs up the stream.
pub async fn fault_http_silent_stream<R: Runtime>(rt: R, bin: PathBuf) {
    let f = HttpFault::start(&rt, &bin, &["silent_stream"]).await;
    let c = f.client();
    let timeout = Duration::from_millis(300);
    let started = Instant::now();
    let calls = (0..2).map(|i| {
        c.call_tool_with(
            "echo",
            json!({ "message": format!("lost {i}") }),
            CallOptions::new().timeout(timeout),
        )
    });
    let results = bounded(
        &rt,
        Duration::from_secs(5),
        "the timeouts",
        futures_util::future::join_all(calls),
    )
    .await;
    let took = started.elapsed();
    assert!(took >= timeout && took < Duration::from_secs(3), "{took:?}");
    for r in results {
        match r {
            Err(Error::Timeout { after, method, .. }) => {
                assert_eq!(after, timeout);
                assert_eq!(method, "tools/call");
            }
            other => panic!("expected Timeout, got {other:?}"),
        }
    }
    let ids = f.request_ids("tools/call");
    assert_eq!(ids.len(), 2, "{:?}", f.log_lines());
    let cancelled = eventually(&rt, || {
        let got: Vec<Value> = f
            .received()
            .iter()
            .filter(|m| m["method"] == "notifications/cancelled")
            .map(|m| m["params"]["requestId"].clone())
            .collect();
        ids.iter().all(|id| got.contains(id))
    })
    .await;
    assert!(
        cancelled,
        "not every call was cancelled: {:?}",
        f.log_lines()
    );
    for id in &ids {
        f.wait_event(
            &rt,
            &format!("silent stream for request {id} ended, client hung up: true"),
        )
        .await;
    }
    c.ping().await.expect("ping");
    assert_eq!(c.state(), ConnectionState::Ready);
    f.finish(&rt).await;
}

/// A 1 GiB JSON answer, made by the server as it writes: the client stops reading at its
/// body limit (the default 4 MiB) and fails the call with `Error::InvalidResponse`; the server
/// sees it hang up long before the end; a ping sent meanwhile and later requests succeed.
pub async fn fault_http_huge_body<R: Runtime>(rt: R, bin: PathBuf) {
    let f = HttpFault::start(&rt, &bin, &["huge_body", "1024"]).await;
    let c = f.client();
    let limit = mcp_driver::mcp_proto::http::ConnectionConfig::new(
        url::Url::parse("http://127.0.0.1/").expect("a valid URL"),
    )
    .max_body;
    let started = Instant::now();
    let huge = c.call_tool_with(
        "echo",
        json!({"message": "big"}),
        CallOptions::new().timeout(Duration::from_secs(30)),
    );
    let alongside = async {
        super::sleep(&rt, Duration::from_millis(20)).await;
        c.ping().await
    };
    let (huge, ping) = bounded(
        &rt,
        Duration::from_secs(30),
        "a call answered with 1 GiB",
        futures_util::future::join(huge, alongside),
    )
    .await;
    let took = started.elapsed();
    ping.expect("a ping alongside the huge body");
    let err = huge.expect_err("a body over the limit is an error");
    match &err {
        Error::InvalidResponse { method, detail, .. } => {
            assert_eq!(method, "tools/call");
            assert!(
                detail.contains(&format!("larger than {limit} bytes")),
                "{detail}"
            );
        }
        other => panic!("expected Error::InvalidResponse, got {other:?}"),
    }
    assert!(!err.is_connection_lost(), "{err}");
    assert!(took < Duration::from_secs(15), "cut off late: {took:?}");
    let done = f.wait_event(&rt, "huge body for request ").await;
    eprintln!("fault_http_huge_body: {took:?}, server: {done}");
    assert!(done.ends_with("client hung up: true"), "{done}");
    let written = number_before(&done, "bytes written");
    assert!(
        written < CUT_BOUND,
        "the server wrote {written} bytes before the client hung up"
    );
    c.ping().await.expect("ping after the huge body");
    assert_eq!(c.list_tools().await.expect("tools/list").len(), 3);
    assert_eq!(c.state(), ConnectionState::Ready);
    f.finish(&rt).await;
}

/// An SSE reply whose first event is 64 MiB (four times the default 16 MiB event limit) and
/// whose second event is the answer: the decoder drops the huge event without buffering it
/// whole, reads on, and the call gets its answer; the stream is read to its end (the server
/// sees no hang-up) and the connection carries on. Heap: `tests/memory_bounded.rs`.
pub async fn fault_http_huge_event<R: Runtime>(rt: R, bin: PathBuf) {
    let f = HttpFault::start(&rt, &bin, &["huge_event", "64"]).await;
    let c = f.client();
    let started = Instant::now();
    let r = bounded(
        &rt,
        Duration::from_secs(60),
        "a call answered after a 64 MiB event",
        c.call_tool_with(
            "echo",
            json!({"message": "after the huge event"}),
            CallOptions::new().timeout(Duration::from_secs(60)),
        ),
    )
    .await
    .expect("the answer after the oversize event");
    let took = started.elapsed();
    assert_eq!(text(&r), "after the huge event");
    let done = f.wait_event(&rt, "huge event for request ").await;
    eprintln!("fault_http_huge_event: {took:?}, server: {done}");
    assert!(done.ends_with("client hung up: false"), "{done}");
    assert!(number_before(&done, "bytes written") > 64 << 20, "{done}");
    c.ping().await.expect("ping after the huge event");
    assert_eq!(c.state(), ConnectionState::Ready);
    f.finish(&rt).await;
}

/// A 1 GiB 500 body: the call fails with `Error::Http` (500) as soon as the 2 KiB excerpt is
/// full, without reading the rest; later requests succeed.
pub async fn fault_http_huge_error<R: Runtime>(rt: R, bin: PathBuf) {
    let f = HttpFault::start(&rt, &bin, &["huge_error", "1024"]).await;
    let c = f.client();
    let started = Instant::now();
    let err = bounded(
        &rt,
        Duration::from_secs(30),
        "a call answered with a 1 GiB 500",
        c.call_tool_with(
            "echo",
            json!({"message": "big"}),
            CallOptions::new().timeout(Duration::from_secs(30)),
        ),
    )
    .await
    .expect_err("500 is an error");
    let took = started.elapsed();
    match &err {
        Error::Http { source, .. } => {
            assert_eq!(source.status, 500);
            assert!(source.body_excerpt.len() <= MAX_BODY_EXCERPT);
            assert!(
                source
                    .body_excerpt
                    .starts_with("fault_server: a huge error body eee"),
                "{:?}",
                &source.body_excerpt[..64.min(source.body_excerpt.len())]
            );
        }
        other => panic!("expected Error::Http, got {other:?}"),
    }
    assert!(!err.is_connection_lost(), "{err}");
    assert!(took < Duration::from_secs(15), "cut off late: {took:?}");
    let done = f.wait_event(&rt, "huge error body for request ").await;
    eprintln!("fault_http_huge_error: {took:?}, server: {done}");
    assert!(done.ends_with("client hung up: true"), "{done}");
    let written = number_before(&done, "bytes written");
    assert!(
        written < CUT_BOUND,
        "the server wrote {written} bytes before the client hung up"
    );
    c.ping().await.expect("ping after the huge error");
    f.finish(&rt).await;
}
