//! The stdio rows of the fault matrix, against the `fault_server` binary (modes in
//! `tests/README.md`): each asserts the typed outcome within a time bound, then that every
//! process of the server is gone.
//!
//! The memory side of the huge-line row (peak heap while a 64 MiB line is discarded) is
//! measured with a counting allocator in `tests/tests/memory_bounded.rs`, a test binary of its
//! own; here the same line goes through a real pipe and the connection must survive it.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mcp_driver::process::StdioCommand;
use mcp_driver::{CallOptions, ClientBuilder, ConnectionState, Error, Runtime};
use serde_json::{Value, json};

use super::{Spawned, bounded, eventually, text};
use crate::peers::{assert_gone, pid_gone};

/// Short graces keep the shutdown rows fast.
pub const STDIN_GRACE: Duration = Duration::from_millis(300);
/// See [`STDIN_GRACE`].
pub const TERM_GRACE: Duration = Duration::from_millis(300);
/// What `close()` may take at most: both graces plus the driver's margin.
pub const CLOSE_BOUND: Duration = Duration::from_secs(4);

/// A fault server for one test: the client, and the server's `--log` file.
pub struct Fault<R: Runtime> {
    /// The client and the server's processes.
    pub spawned: Spawned<R>,
    /// Every line the server received, plus `# ` events.
    pub log: PathBuf,
}

impl<R: Runtime> Fault<R> {
    /// Starts `fault_server --log <tmp> <mode...>` with short graces.
    ///
    /// # Panics
    ///
    /// When the handshake fails.
    pub async fn start(rt: &R, bin: &Path, mode: &[&str]) -> Self {
        Self::start_with(rt, bin, mode, ClientBuilder::new()).await
    }

    /// [`start`](Self::start) with a builder of the caller's.
    ///
    /// # Panics
    ///
    /// When the handshake fails.
    pub async fn start_with(rt: &R, bin: &Path, mode: &[&str], builder: ClientBuilder<R>) -> Self {
        let unique = crate::peers::ProcessTag::new(mode[0]).env().1;
        let log = std::env::temp_dir().join(format!("mcp-fault-{unique}.log"));
        let _ = std::fs::remove_file(&log);
        let command = StdioCommand::new(bin.to_str().expect("utf-8 path"))
            .args(["--log", log.to_str().expect("utf-8 path")])
            .args(mode.iter().copied());
        let builder = builder.shutdown_graces(STDIN_GRACE, TERM_GRACE);
        let spawned = Spawned::start(rt, builder, "fault", command).await;
        Fault { spawned, log }
    }

    /// The log's lines so far.
    #[must_use]
    pub fn log_lines(&self) -> Vec<String> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// The JSON messages the server received.
    #[must_use]
    pub fn received(&self) -> Vec<Value> {
        self.log_lines()
            .iter()
            .filter(|l| !l.starts_with("# "))
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// The pid after `# <prefix> ` in the log, once it is there.
    pub async fn logged_pid(&self, rt: &R, prefix: &str) -> u32 {
        let needle = format!("# {prefix} ");
        let mut pid = None;
        let found = eventually(rt, || {
            pid = self.log_lines().iter().find_map(|l| {
                l.strip_prefix(&needle)
                    .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
            });
            pid.is_some()
        })
        .await;
        assert!(found, "no `{needle}` in the log: {:?}", self.log_lines());
        pid.expect("found")
    }

    /// Closes within [`CLOSE_BOUND`], checks every process is gone, removes the log; returns
    /// how long `close()` took.
    pub async fn finish(self, rt: &R) -> Duration {
        let took = self.spawned.finish(rt, CLOSE_BOUND).await;
        let _ = std::fs::remove_file(&self.log);
        took
    }
}

fn client<R: Runtime>(f: &Fault<R>) -> &mcp_driver::Client<R> {
    &f.spawned.client
}

/// crash mid-request: the pending call and the one queued behind it fail with
/// `Error::Exited` carrying status 3 and the server's last stderr line; later calls too.
pub async fn fault_crash_mid_request<R: Runtime>(rt: R, bin: PathBuf) {
    let f = Fault::start(&rt, &bin, &["crash_mid_request"]).await;
    let c = client(&f);
    let started = Instant::now();
    let crash = c.call_tool("echo", json!({"message": "boom"}));
    let queued = async {
        super::sleep(&rt, Duration::from_millis(20)).await;
        c.ping().await
    };
    let (a, b) = bounded(
        &rt,
        Duration::from_secs(3),
        "the pending calls",
        futures_util::future::join(crash, queued),
    )
    .await;
    let elapsed = started.elapsed();
    match a {
        Err(Error::Exited { status, stderr, .. }) => {
            assert_eq!(status, "exited with status 3");
            let last = stderr.last().expect("stderr lines");
            assert!(
                last.contains("crash_mid_request: exiting with status 3 while handling request"),
                "{stderr:?}"
            );
        }
        other => panic!("expected Exited, got {other:?}"),
    }
    // The ping may have been answered before the crash (it is answered normally) or fail.
    if let Err(e) = b {
        assert!(matches!(e, Error::Exited { .. }), "{e:?}");
    }
    assert!(elapsed < Duration::from_secs(2), "{elapsed:?}");
    match c.ping().await {
        Err(e @ Error::Exited { .. }) => {
            assert!(e.to_string().contains("exited with status 3"), "{e}");
        }
        other => panic!("expected Exited, got {other:?}"),
    }
    f.finish(&rt).await;
}

/// garbage lines before and after every answer are skipped; every answer still arrives.
pub async fn fault_garbage<R: Runtime>(rt: R, bin: PathBuf) {
    let f = Fault::start(&rt, &bin, &["garbage"]).await;
    let c = client(&f);
    for i in 0..5 {
        let r = bounded(
            &rt,
            Duration::from_secs(3),
            "echo through garbage",
            c.call_tool("echo", json!({ "message": format!("m{i}") })),
        )
        .await
        .expect("echo");
        assert_eq!(text(&r), format!("m{i}"));
    }
    let r = c
        .call_tool("add", json!({"a": 2, "b": 3}))
        .await
        .expect("add");
    assert_eq!(text(&r), "5");
    assert_eq!(c.state(), ConnectionState::Ready);
    f.finish(&rt).await;
}

/// A 64 MiB line right after the handshake is discarded; the connection survives and later
/// answers arrive. (Peak heap for the same line: `tests/tests/memory_bounded.rs`.)
pub async fn fault_huge_line<R: Runtime>(rt: R, bin: PathBuf) {
    let f = Fault::start(&rt, &bin, &["huge_line", "64"]).await;
    let c = client(&f);
    let r = bounded(
        &rt,
        Duration::from_secs(30),
        "echo after a 64 MiB line",
        c.call_tool("echo", json!({"message": "after"})),
    )
    .await
    .expect("echo");
    assert_eq!(text(&r), "after");
    // Once more, per request, with a smaller line.
    let r = bounded(
        &rt,
        Duration::from_secs(30),
        "the huge_line tool",
        c.call_tool("huge_line", json!({"mib": 8})),
    )
    .await
    .expect("huge_line tool");
    assert_eq!(text(&r), "after a 8 MiB line");
    c.ping().await.expect("ping");
    f.finish(&rt).await;
}

/// Silence: calls time out with `Error::Timeout`, and the server receives
/// `notifications/cancelled` for each of them.
pub async fn fault_silent<R: Runtime>(rt: R, bin: PathBuf) {
    let f = Fault::start(&rt, &bin, &["silent"]).await;
    let c = client(&f);
    let timeout = Duration::from_millis(300);
    let started = Instant::now();
    let calls = (0..3).map(|i| {
        c.call_tool_with(
            "echo",
            json!({ "message": format!("lost {i}") }),
            CallOptions::new().timeout(timeout),
        )
    });
    let results = bounded(
        &rt,
        Duration::from_secs(3),
        "the timeouts",
        futures_util::future::join_all(calls),
    )
    .await;
    let took = started.elapsed();
    assert!(took >= timeout && took < timeout * 4, "{took:?}");
    for r in results {
        match r {
            Err(Error::Timeout { after, method, .. }) => {
                assert_eq!(after, timeout);
                assert_eq!(method, "tools/call");
            }
            other => panic!("expected Timeout, got {other:?}"),
        }
    }
    let ok = eventually(&rt, || {
        let got = f.received();
        let ids: Vec<&Value> = got
            .iter()
            .filter(|m| m["method"] == "tools/call")
            .map(|m| &m["id"])
            .collect();
        let cancelled: Vec<&Value> = got
            .iter()
            .filter(|m| m["method"] == "notifications/cancelled")
            .map(|m| &m["params"]["requestId"])
            .collect();
        ids.len() == 3 && ids.iter().all(|id| cancelled.contains(id))
    })
    .await;
    assert!(
        ok,
        "not every timed-out call was cancelled: {:?}",
        f.log_lines()
    );
    f.finish(&rt).await;
}

/// Slow answers within their timeout succeed, concurrently.
pub async fn fault_slow<R: Runtime>(rt: R, bin: PathBuf) {
    let f = Fault::start(&rt, &bin, &["slow", "300"]).await;
    let c = client(&f);
    let started = Instant::now();
    let calls = (0..4).map(|i| {
        c.call_tool_with(
            "echo",
            json!({ "message": format!("slow {i}") }),
            CallOptions::new().timeout(Duration::from_secs(3)),
        )
    });
    let results = bounded(
        &rt,
        Duration::from_secs(5),
        "slow answers",
        futures_util::future::join_all(calls),
    )
    .await;
    let took = started.elapsed();
    for (i, r) in results.into_iter().enumerate() {
        assert_eq!(text(&r.expect("slow answer")), format!("slow {i}"));
    }
    assert!(
        took >= Duration::from_millis(300) && took < Duration::from_millis(1100),
        "answered concurrently: {took:?}"
    );
    f.finish(&rt).await;
}

/// Every answer twice: each call gets one result and no error; the duplicate is dropped.
pub async fn fault_twice<R: Runtime>(rt: R, bin: PathBuf) {
    let f = Fault::start(&rt, &bin, &["twice"]).await;
    let c = client(&f);
    for i in 0..5 {
        let r = c
            .call_tool("add", json!({"a": i, "b": 1}))
            .await
            .expect("add");
        assert_eq!(text(&r), (i + 1).to_string());
    }
    c.ping().await.expect("ping");
    assert_eq!(c.state(), ConnectionState::Ready);
    f.finish(&rt).await;
}

/// Answers for ids nobody sent (numbers and strings, results and errors) are ignored; the
/// right answer still resolves each call.
pub async fn fault_unknown_ids<R: Runtime>(rt: R, bin: PathBuf) {
    let f = Fault::start(&rt, &bin, &["unknown_ids"]).await;
    let c = client(&f);
    let calls = (0..4).map(|i| c.call_tool("echo", json!({ "message": format!("u{i}") })));
    let results = bounded(
        &rt,
        Duration::from_secs(3),
        "calls among unknown ids",
        futures_util::future::join_all(calls),
    )
    .await;
    for (i, r) in results.into_iter().enumerate() {
        assert_eq!(text(&r.expect("echo")), format!("u{i}"));
    }
    c.ping().await.expect("ping");
    f.finish(&rt).await;
}

/// The server closes its stdout but keeps running: pending calls fail promptly with a
/// connection-lost error, and `close()` returns with the process gone.
pub async fn fault_close_stdout<R: Runtime>(rt: R, bin: PathBuf) {
    let f = Fault::start(&rt, &bin, &["echo"]).await;
    let c = client(&f);
    let pending = c.call_tool_with(
        "sleep",
        json!({"ms": 60_000}),
        CallOptions::new().no_timeout(),
    );
    let closer = async {
        super::sleep(&rt, Duration::from_millis(50)).await;
        c.call_tool_with("close_stdout", (), CallOptions::new().no_timeout())
            .await
    };
    let started = Instant::now();
    let (a, b) = bounded(
        &rt,
        Duration::from_secs(3),
        "calls after stdout closed",
        futures_util::future::join(pending, closer),
    )
    .await;
    let took = started.elapsed();
    for r in [a, b] {
        match r {
            Err(e) if e.is_connection_lost() => {
                // The driver says "closed its output" (the doc of `Error::Exited` says "stdout").
                assert!(e.to_string().contains("closed its output"), "{e}");
            }
            other => panic!("expected a closed error, got {other:?}"),
        }
    }
    assert!(took < Duration::from_secs(2), "{took:?}");
    assert!(c.ping().await.is_err_and(|e| e.is_connection_lost()));
    assert!(
        f.log_lines().iter().any(|l| l == "# stdout closed: true"),
        "{:?}",
        f.log_lines()
    );
    f.finish(&rt).await;
}

/// The server exits but leaves a grandchild holding its stdout: pending calls fail, `close()`
/// returns within its bound and the grandchild is gone.
pub async fn fault_grandchild_holds_stdout<R: Runtime>(rt: R, bin: PathBuf) {
    let f = Fault::start(&rt, &bin, &["grandchild", "exit"]).await;
    let server = f.spawned.pids[0];
    let grandchild = f.logged_pid(&rt, "grandchild").await;
    assert!(!pid_gone(grandchild), "the grandchild runs");
    let c = client(&f);
    // The server is gone but stdout stays open: the call must still end.
    let r = bounded(
        &rt,
        Duration::from_secs(5),
        "a call to an exited server",
        c.ping(),
    )
    .await;
    match r {
        Err(Error::Exited { status, .. }) => assert_eq!(status, "exited with status 0"),
        other => panic!("expected Exited, got {other:?}"),
    }
    let mut f = f;
    f.spawned.pids.push(grandchild);
    let took = f.finish(&rt).await;
    assert!(took < CLOSE_BOUND);
    assert!(pid_gone(server) && pid_gone(grandchild));
}

/// The same with the server still serving: `close()` takes the whole group down.
pub async fn fault_grandchild_stay<R: Runtime>(rt: R, bin: PathBuf) {
    let mut f = Fault::start(&rt, &bin, &["grandchild", "stay"]).await;
    let grandchild = f.logged_pid(&rt, "grandchild").await;
    client(&f).ping().await.expect("still serving");
    f.spawned.pids.push(grandchild);
    let took = f.finish(&rt).await;
    assert!(took < CLOSE_BOUND, "{took:?}");
}

/// A server ignoring SIGTERM (and stdin EOF) is killed with SIGKILL after both graces.
pub async fn fault_ignore_sigterm<R: Runtime>(rt: R, bin: PathBuf) {
    let f = Fault::start(&rt, &bin, &["ignore_sigterm"]).await;
    client(&f).ping().await.expect("ping");
    assert!(
        f.log_lines().iter().any(|l| l == "# SIGTERM ignored: true"),
        "{:?}",
        f.log_lines()
    );
    let pids = f.spawned.pids.clone();
    let c = client(&f).clone();
    let took = f.finish(&rt).await;
    assert!(
        took >= STDIN_GRACE + TERM_GRACE,
        "SIGKILL only after both graces: {took:?}"
    );
    assert!(
        took < STDIN_GRACE + TERM_GRACE + Duration::from_secs(2),
        "{took:?}"
    );
    assert_gone(&pids, Duration::from_millis(100), "killed");
    match c.state() {
        ConnectionState::Closed(_) => {}
        other => panic!("{other:?}"),
    }
}

/// 8 MiB of stderr right after the handshake does not stall the connection (stderr is
/// drained), and the stderr tail in a later exit error is bounded.
pub async fn fault_stderr_flood<R: Runtime>(rt: R, bin: PathBuf) {
    let f = Fault::start(&rt, &bin, &["stderr_flood", "8"]).await;
    let c = client(&f);
    let r = bounded(
        &rt,
        Duration::from_secs(10),
        "echo after a stderr flood",
        c.call_tool("echo", json!({"message": "not stalled"})),
    )
    .await
    .expect("echo");
    assert_eq!(text(&r), "not stalled");
    assert!(
        f.log_lines()
            .iter()
            .any(|l| l.starts_with("# stderr flood done: ")),
        "{:?}",
        f.log_lines()
    );
    match c.call_tool("crash_mid_request", ()).await {
        Err(Error::Exited { status, stderr, .. }) => {
            assert_eq!(status, "exited with status 3");
            assert!(stderr.len() <= 20, "{} lines", stderr.len());
            let bytes: usize = stderr.iter().map(String::len).sum();
            assert!(bytes <= 64 * 1024, "{bytes} bytes of stderr in the error");
            assert!(
                stderr
                    .last()
                    .is_some_and(|l| l.contains("crash_mid_request")),
                "{stderr:?}"
            );
            assert!(
                stderr.iter().any(|l| l.contains("stderr flood")),
                "{stderr:?}"
            );
        }
        other => panic!("expected Exited, got {other:?}"),
    }
    f.finish(&rt).await;
}

/// The `start pid N` events of the log, in order.
fn started_pids<R: Runtime>(f: &Fault<R>) -> Vec<u32> {
    f.log_lines()
        .iter()
        .filter_map(|l| l.strip_prefix("# start pid "))
        .filter_map(|rest| rest.split_whitespace().next()?.parse().ok())
        .collect()
}

/// Auto over stdio against a server that exits on the `server/discover` probe (the oldest
/// servers do): the driver starts it again and the `initialize` era is chosen at once, long
/// before the probe timeout; the first process is gone, calls work.
pub async fn fault_strict_handshake_auto<R: Runtime>(rt: R, bin: PathBuf) {
    use mcp_driver::mcp_proto::session::{Era, EraPolicy};
    let started = Instant::now();
    let builder = ClientBuilder::new().era_policy(EraPolicy::Auto {
        probe_timeout: Duration::from_secs(10),
    });
    let f = Fault::start_with(&rt, &bin, &["strict_handshake"], builder).await;
    let took = started.elapsed();
    let c = client(&f);
    assert_eq!(c.era(), Era::Initialize);
    assert!(took < Duration::from_secs(3), "handshake took {took:?}");
    let pids = started_pids(&f);
    assert_eq!(pids.len(), 2, "{:?}", f.log_lines());
    assert!(
        f.log_lines()
            .iter()
            .any(|l| l == "# strict_handshake: server/discover before initialize"),
        "{:?}",
        f.log_lines()
    );
    assert!(pid_gone(pids[0]), "the first process {} is left", pids[0]);
    let r = c
        .call_tool("echo", json!({"message": "again"}))
        .await
        .expect("call");
    assert_eq!(text(&r), "again");
    // The respawned process's stderr is what errors carry, not the first one's.
    f.finish(&rt).await;
}

/// Auto over stdio against a server that answers the probe with -32601: the `initialize`
/// era at once, one process, no respawn.
pub async fn fault_echo_auto<R: Runtime>(rt: R, bin: PathBuf) {
    use mcp_driver::mcp_proto::session::{Era, EraPolicy};
    let started = Instant::now();
    let builder = ClientBuilder::new().era_policy(EraPolicy::Auto {
        probe_timeout: Duration::from_secs(10),
    });
    let f = Fault::start_with(&rt, &bin, &["echo"], builder).await;
    let took = started.elapsed();
    assert_eq!(client(&f).era(), Era::Initialize);
    assert!(took < Duration::from_secs(2), "handshake took {took:?}");
    assert_eq!(started_pids(&f).len(), 1, "{:?}", f.log_lines());
    let methods: Vec<String> = f
        .received()
        .iter()
        .filter_map(|m| m.get("method")?.as_str().map(str::to_owned))
        .collect();
    assert_eq!(methods.first().map(String::as_str), Some("server/discover"));
    assert!(methods.iter().any(|m| m == "initialize"), "{methods:?}");
    f.finish(&rt).await;
}
