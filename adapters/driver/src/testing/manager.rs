//! [`Manager`] test bodies, generic over the runtime, over several stdio servers at once.
//!
//! `script` is the Python fixture server (`adapters/tokio/tests/fixtures/stdio_server.py`);
//! `dir` is a fresh directory for the cache and the fixture's pid and delay files. The bodies
//! panic on failure; the caller bounds each with a timeout. The `/proc` checks are Linux-only.

use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

use mcp_manager::config::{HttpConfig, ServerConfig, StdioConfig, TimeoutConfig, TransportConfig};
use mcp_manager::reconnect::{ReconnectConfig, ServerStatus};
use mcp_proto::types::ContentBlock;
use serde_json::json;

use super::suite::{pid_dead, sleep, within};
use crate::manager::{Manager, ManagerBuilder, ManagerError, NamespacedTool, cache_key};
use crate::{ClientBuilder, Runtime};

/// A stdio server `command args...`.
pub fn stdio_config(name: &str, command: &str, args: &[&str]) -> ServerConfig {
    let mut stdio = StdioConfig::new(command);
    stdio.args = args.iter().map(|a| (*a).to_owned()).collect();
    ServerConfig {
        name: name.to_owned(),
        transport: TransportConfig::Stdio(stdio),
        timeouts: TimeoutConfig::default(),
    }
}

/// The fixture server with extra flags.
pub fn fixture(name: &str, script: &Path, flags: &[&str]) -> ServerConfig {
    let script = script.to_str().expect("UTF-8 fixture path");
    let mut args = vec![script];
    args.extend_from_slice(flags);
    stdio_config(name, "python3", &args)
}

/// A manager builder with short shutdown graces and quick reconnects.
pub fn builder<R: Runtime>(rt: &R, dir: &Path) -> ManagerBuilder<R> {
    Manager::builder(rt.clone())
        .cache_dir(dir.join("cache"))
        .startup_deadline(Duration::from_secs(20))
        .reconnect(ReconnectConfig {
            initial: Duration::from_millis(50),
            max: Duration::from_millis(200),
            ..ReconnectConfig::default()
        })
        .client_builder(|_| {
            ClientBuilder::new()
                .shutdown_graces(Duration::from_millis(300), Duration::from_millis(500))
        })
}

fn status_of<R: Runtime>(m: &Manager<R>, server: &str) -> ServerStatus {
    m.status()
        .into_iter()
        .find(|(n, _)| n == server)
        .map(|(_, s)| s)
        .expect("server is configured")
}

fn tools_of(tools: &[NamespacedTool], server: &str) -> Vec<NamespacedTool> {
    tools
        .iter()
        .filter(|t| t.server == server)
        .cloned()
        .collect()
}

/// The model-facing name of `server`'s `tool`.
fn name_of<R: Runtime>(m: &Manager<R>, server: &str, tool: &str) -> String {
    m.tools()
        .into_iter()
        .find(|t| t.server == server && t.tool.name == tool)
        .map(|t| t.name)
        .unwrap_or_else(|| panic!("{server} has no tool {tool} now"))
}

async fn text<R: Runtime>(m: &Manager<R>, name: &str, args: serde_json::Value) -> String {
    let result = m.call_tool(name, args).await.expect("tool call");
    match &result.content[0] {
        ContentBlock::Text(t) => t.text.clone(),
        other => panic!("expected text, got {other:?}"),
    }
}

/// Waits up to `limit` for `server` to reach a status matching `f`.
async fn wait_status<R: Runtime>(
    rt: &R,
    m: &Manager<R>,
    server: &str,
    limit: Duration,
    f: impl Fn(&ServerStatus) -> bool,
) {
    let end = rt.now() + limit;
    while rt.now() < end {
        if f(&status_of(m, server)) {
            return;
        }
        sleep(rt, Duration::from_millis(20)).await;
    }
    panic!(
        "{server} did not reach the expected status within {limit:?}: {:?}",
        status_of(m, server)
    );
}

/// A slow server (initialize delayed 5 s) does not hold up start-up beyond the deadline: the
/// others are live, it is served from the cache written by a first run, calls to it fail at
/// once naming it, and its live tools replace the cached ones when it connects.
pub async fn slow_server_served_from_cache<R: Runtime>(rt: R, script: &Path, dir: &Path) {
    let delay = dir.join("delay");
    let delay_arg = delay.to_str().expect("UTF-8 path");
    let configs = vec![
        fixture("fast1", script, &[]),
        fixture("fast2", script, &[]),
        fixture("slow", script, &["--delay-file", delay_arg]),
    ];
    // First run: everything is quick; the cache is written.
    let first = builder(&rt, dir).add_all(configs.clone()).build();
    let t0 = rt.now();
    let summary = first.start().await;
    // On an idle machine the fixture is ready in ~50 ms; under load (a shared 2-core CI box)
    // it can take a second, so the deadline scales with what this run measured.
    let deadline = ((rt.now() - t0) * 3).clamp(Duration::from_millis(500), Duration::from_secs(4));
    assert_eq!(summary.live, ["fast1", "fast2", "slow"], "{summary:?}");
    let slow_file = dir.join("cache").join(cache_key(&configs[2]).file_name());
    assert!(
        slow_file.exists(),
        "the slow server's cache file was written"
    );
    first.shutdown().await;

    std::fs::write(&delay, "6").expect("write the delay file");
    let manager = builder(&rt, dir)
        .startup_deadline(deadline)
        .add_all(configs)
        .build();
    let started = rt.now();
    let summary = manager.start().await;
    let took = rt.now() - started;
    assert!(
        took >= deadline && took < deadline + Duration::from_secs(1),
        "start-up took {took:?} with a {deadline:?} deadline"
    );
    assert_eq!(summary.live, ["fast1", "fast2"], "{summary:?}");
    assert_eq!(summary.from_cache, ["slow"], "{summary:?}");
    assert_eq!(status_of(&manager, "slow"), ServerStatus::Connecting);

    let tools = manager.tools();
    let slow = tools_of(&tools, "slow");
    assert_eq!(slow.len(), 5, "the cached list: {slow:?}");
    assert!(slow.iter().all(|t| t.from_cache));
    assert!(tools_of(&tools, "fast1").iter().all(|t| !t.from_cache));
    assert_eq!(tools_of(&tools, "fast2").len(), 5);

    // The slow server's tools are listed but not callable yet; the others are.
    let slow_echo = name_of(&manager, "slow", "echo");
    match manager.call_tool(&slow_echo, json!({"text": "x"})).await {
        Err(ManagerError::NotReady { server, status }) => {
            assert_eq!(server, "slow");
            assert_eq!(status, ServerStatus::Connecting);
        }
        other => panic!("expected NotReady, got {other:?}"),
    }
    let fast_echo = name_of(&manager, "fast1", "echo");
    assert_eq!(
        text(&manager, &fast_echo, json!({"text": "hi"})).await,
        "hi"
    );

    wait_status(&rt, &manager, "slow", Duration::from_secs(15), |s| {
        *s == ServerStatus::Ready
    })
    .await;
    let slow = tools_of(&manager.tools(), "slow");
    assert_eq!(slow.len(), 5);
    assert!(slow.iter().all(|t| !t.from_cache), "live tools now");
    assert_eq!(
        text(&manager, &slow_echo, json!({"text": "late"})).await,
        "late"
    );
    manager.shutdown().await;
}

/// A server whose config changed (one more argument) misses the cache: after the deadline it
/// is pending, with no tools.
pub async fn changed_config_misses_cache<R: Runtime>(rt: R, script: &Path, dir: &Path) {
    let delay = dir.join("delay");
    let delay_arg = delay.to_str().expect("UTF-8 path");
    let before = fixture("srv", script, &["--delay-file", delay_arg]);
    let first = builder(&rt, dir).add(before.clone()).build();
    assert_eq!(first.start().await.live, ["srv"]);
    first.shutdown().await;

    std::fs::write(&delay, "5").expect("write the delay file");
    let after = fixture("srv", script, &["--delay-file", delay_arg, "--banner"]);
    assert_ne!(cache_key(&before), cache_key(&after));
    let manager = builder(&rt, dir)
        .startup_deadline(Duration::from_millis(300))
        .add(after)
        .build();
    let summary = manager.start().await;
    assert_eq!(summary.pending, ["srv"], "{summary:?}");
    assert!(summary.from_cache.is_empty());
    assert!(manager.tools().is_empty(), "{:?}", manager.tools());

    // The unchanged config still hits.
    let same = builder(&rt, &dir.join("other"))
        .cache_dir(dir.join("cache"))
        .startup_deadline(Duration::from_millis(300))
        .add(before)
        .build();
    assert_eq!(same.start().await.from_cache, ["srv"]);
    within(&rt, Duration::from_secs(10), async {
        manager.shutdown().await;
        same.shutdown().await;
    })
    .await
    .expect("shutdown of connecting servers is bounded");
}

/// A crashing server is reconnected and its tools come back, while another server is not
/// disturbed; a server that keeps crashing is given up after `max_attempts` (not permanently).
pub async fn crashing_server_reconnects<R: Runtime>(rt: R, script: &Path, dir: &Path) {
    let manager = builder(&rt, dir)
        .add(fixture("crashy", script, &[]))
        .add(fixture("steady", script, &[]))
        .add(fixture("doomed", script, &["--crash-after", "0.2"]))
        .reconnect(ReconnectConfig {
            initial: Duration::from_millis(50),
            max: Duration::from_millis(100),
            max_attempts: Some(2),
            ..ReconnectConfig::default()
        })
        .build();
    let mut changes = manager.status_changes();
    let summary = manager.start().await;
    assert!(summary.live.contains(&"crashy".to_owned()), "{summary:?}");
    let pid_tool = name_of(&manager, "crashy", "pid");
    let pid1: u32 = text(&manager, &pid_tool, json!({}))
        .await
        .parse()
        .expect("pid");

    let crash = name_of(&manager, "crashy", "crash");
    let err = manager.call_tool(&crash, json!({"code": 7})).await;
    assert!(err.is_err(), "the crash call has no answer: {err:?}");

    // Reconnecting, then ready again.
    let mut saw_reconnecting = false;
    let back = within(&rt, Duration::from_secs(10), async {
        while let Some(change) = changes.recv().await {
            let Ok(change) = change else { continue };
            if change.server != "crashy" {
                continue;
            }
            match change.status {
                ServerStatus::Reconnecting { .. } => saw_reconnecting = true,
                ServerStatus::Ready if saw_reconnecting => return true,
                _ => {}
            }
        }
        false
    })
    .await;
    assert_eq!(back, Some(true), "crashy was reconnected");
    assert!(pid_dead(pid1), "the crashed process is gone");
    let pid2: u32 = text(&manager, &pid_tool, json!({}))
        .await
        .parse()
        .expect("pid");
    assert_ne!(pid1, pid2, "a new process");
    assert_eq!(
        tools_of(&manager.tools(), "crashy").len(),
        5,
        "tools came back"
    );
    assert_eq!(status_of(&manager, "steady"), ServerStatus::Ready);
    let echo = name_of(&manager, "steady", "echo");
    assert_eq!(text(&manager, &echo, json!({"text": "ok"})).await, "ok");

    // Crashes 0.2 s after each handshake: 2 retries, then failed (not permanent).
    wait_status(&rt, &manager, "doomed", Duration::from_secs(10), |s| {
        matches!(s, ServerStatus::Failed { .. })
    })
    .await;
    match status_of(&manager, "doomed") {
        ServerStatus::Failed { reason, permanent } => {
            assert!(!permanent);
            assert!(reason.contains("gave up after 2 retries"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    manager.shutdown().await;
}

/// Two servers whose names sanitize alike, a very long name and a non-ASCII one, all with the
/// same tool names: every name is valid, distinct and routes to its own server.
pub async fn names_collide_and_long<R: Runtime>(rt: R, script: &Path, dir: &Path) {
    let long = "x".repeat(80);
    let servers = ["a.b", "a_b", long.as_str(), "日本", "context7"];
    let manager = builder(&rt, dir)
        .add_all(servers.iter().map(|s| fixture(s, script, &[])))
        .build();
    let summary = manager.start().await;
    assert_eq!(summary.live.len(), 5, "{summary:?}");
    let tools = manager.tools();
    assert_eq!(tools.len(), 25);
    let names: HashSet<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names.len(), 25, "distinct names: {names:?}");
    for t in &tools {
        assert!(
            !t.name.is_empty()
                && t.name.len() <= 64
                && t.name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'),
            "invalid name {:?}",
            t.name
        );
        assert_eq!(
            manager.resolve(&t.name),
            Some((t.server.clone(), t.tool.name.clone()))
        );
    }
    assert!(
        names.contains("a_b__echo"),
        "the plain pair keeps its plain name"
    );
    let mut pids = HashSet::new();
    for server in servers {
        let pid = text(&manager, &name_of(&manager, server, "pid"), json!({})).await;
        pids.insert(pid);
    }
    assert_eq!(pids.len(), 5, "each name reached its own server");
    assert!(matches!(
        manager.call_tool("nope__echo", json!({})).await,
        Err(ManagerError::UnknownTool(_))
    ));
    manager.shutdown().await;
}

/// Disconnecting a server that is still connecting stops its process before returning.
pub async fn disconnect_while_connecting<R: Runtime>(rt: R, script: &Path, dir: &Path) {
    let pid_file = dir.join("pid");
    let manager = builder(&rt, dir)
        .startup_deadline(Duration::from_millis(300))
        .add(fixture(
            "stuck",
            script,
            &[
                "--delay-init",
                "30",
                "--pid-file",
                pid_file.to_str().expect("UTF-8"),
            ],
        ))
        .add(fixture("ok", script, &[]))
        .build();
    let summary = manager.start().await;
    assert!(summary.pending.contains(&"stuck".to_owned()), "{summary:?}");
    let end = rt.now() + Duration::from_secs(5);
    let pid: u32 = loop {
        if let Ok(s) = std::fs::read_to_string(&pid_file) {
            break s.trim().parse().expect("pid");
        }
        assert!(rt.now() < end, "the stuck server never started");
        sleep(&rt, Duration::from_millis(20)).await;
    };
    assert!(!pid_dead(pid), "running while connecting");
    within(&rt, Duration::from_secs(8), manager.disconnect("stuck"))
        .await
        .expect("disconnect is bounded")
        .expect("known server");
    assert!(
        pid_dead(pid),
        "disconnect returned with the process still there"
    );
    assert_eq!(status_of(&manager, "stuck"), ServerStatus::Disabled);
    wait_status(&rt, &manager, "ok", Duration::from_secs(10), |s| {
        *s == ServerStatus::Ready
    })
    .await;
    assert!(matches!(
        manager.disconnect("nope").await,
        Err(ManagerError::UnknownServer(_))
    ));
    manager.shutdown().await;
}

/// With one connect slot, a server that hangs in its handshake holds it: the next server is
/// not even spawned until the first is disconnected (also a disconnect while waiting).
pub async fn connects_are_bounded<R: Runtime>(rt: R, script: &Path, dir: &Path) {
    // Two servers whose handshake never finishes, one connect slot: whichever takes the slot
    // first (the order is the scheduler's), the other must not be spawned until it is freed.
    let pid_files = [dir.join("a.pid"), dir.join("b.pid")];
    let arg = |p: &Path| p.to_str().expect("UTF-8").to_owned();
    let (a_arg, b_arg) = (arg(&pid_files[0]), arg(&pid_files[1]));
    let manager = builder(&rt, dir)
        .max_concurrent_connects(1)
        .startup_deadline(Duration::from_millis(300))
        .add(fixture(
            "a",
            script,
            &["--delay-init", "30", "--pid-file", &a_arg],
        ))
        .add(fixture(
            "b",
            script,
            &["--delay-init", "30", "--pid-file", &b_arg],
        ))
        .build();
    let summary = manager.start().await;
    let mut pending = summary.pending.clone();
    pending.sort();
    assert_eq!(pending, ["a", "b"], "{summary:?}");
    let end = rt.now() + Duration::from_secs(5);
    while !pid_files.iter().any(|p| p.exists()) {
        assert!(rt.now() < end, "no server was ever spawned");
        sleep(&rt, Duration::from_millis(20)).await;
    }
    sleep(&rt, Duration::from_millis(300)).await;
    let spawned: Vec<bool> = pid_files.iter().map(|p| p.exists()).collect();
    assert_eq!(
        spawned.iter().filter(|&&s| s).count(),
        1,
        "a second server was spawned beside the first: {spawned:?}"
    );
    let (first, second) = if spawned[0] { ("a", 1) } else { ("b", 0) };
    manager.disconnect(first).await.expect("known server");
    let end = rt.now() + Duration::from_secs(10);
    while !pid_files[second].exists() {
        assert!(rt.now() < end, "the freed slot was never used");
        sleep(&rt, Duration::from_millis(20)).await;
    }
    manager.shutdown().await;
}

/// A program that does not exist fails permanently and is never retried; the other server
/// does not wait for it.
pub async fn permanent_failure_not_retried<R: Runtime>(rt: R, script: &Path, dir: &Path) {
    let manager = builder(&rt, dir)
        .add(stdio_config(
            "missing",
            "/nonexistent/mcp-no-such-server",
            &[],
        ))
        .add(fixture("ok", script, &[]))
        .build();
    let mut changes = manager.status_changes();
    let summary = manager.start().await;
    assert_eq!(summary.live, ["ok"]);
    assert_eq!(summary.failed.len(), 1, "{summary:?}");
    assert_eq!(summary.failed[0].0, "missing");
    match status_of(&manager, "missing") {
        ServerStatus::Failed { permanent, reason } => {
            assert!(permanent, "{reason}");
            assert!(reason.contains("could not start"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    // Several backoff periods later: still failed, and no reconnect was ever scheduled.
    sleep(&rt, Duration::from_millis(400)).await;
    assert!(matches!(
        status_of(&manager, "missing"),
        ServerStatus::Failed { .. }
    ));
    let mut missing = Vec::new();
    while let Some(Some(Ok(change))) = within(&rt, Duration::from_millis(50), changes.recv()).await
    {
        if change.server == "missing" {
            missing.push(change.status);
        }
    }
    assert!(
        missing.iter().all(|s| !matches!(
            s,
            ServerStatus::Reconnecting { .. } | ServerStatus::Connecting
        )),
        "{missing:?}"
    );
    assert!(!missing.is_empty(), "the failure was announced");
    manager.shutdown().await;
}

/// A server whose first attempt cannot reach it (the connection is refused) is not waited for
/// until the start-up deadline: the start returns with it `unreachable`, with why, and the
/// manager keeps retrying it by the policy.
pub async fn unreachable_server_not_waited_for<R: Runtime>(rt: R, script: &Path, dir: &Path) {
    let refused = ServerConfig {
        name: "down".to_owned(),
        // Port 9 (discard) on loopback: nothing listens, the connection is refused.
        transport: TransportConfig::Http(HttpConfig::new("http://127.0.0.1:9/mcp")),
        timeouts: TimeoutConfig::default(),
    };
    let manager = builder(&rt, dir)
        // Longer than the test's guard: only a start that does not wait for it returns.
        .startup_deadline(Duration::from_secs(600))
        .add(refused)
        .add(fixture("ok", script, &[]))
        .build();
    let summary = manager.start().await;
    assert_eq!(summary.live, ["ok"], "{summary:?}");
    assert!(summary.failed.is_empty(), "{summary:?}");
    assert_eq!(summary.unreachable.len(), 1, "{summary:?}");
    assert_eq!(summary.unreachable[0].0, "down");
    assert!(
        matches!(
            status_of(&manager, "down"),
            ServerStatus::Reconnecting { .. } | ServerStatus::Connecting
        ),
        "still retried"
    );
    assert!(manager.unreachable("down").is_some());
    assert_eq!(manager.failed_before_ready("down"), None);
    assert_eq!(manager.unreachable("ok"), None);
    manager.shutdown().await;
}

/// A process that runs and exits before the handshake (a crash at start-up) is a failure of
/// that server, not unreachability: the start does not wait for it and reports it in
/// `failed` with its exit status and last stderr line; the policy still retries it, with
/// backoff.
pub async fn crash_at_start_is_failed_not_unreachable<R: Runtime>(
    rt: R,
    script: &Path,
    dir: &Path,
) {
    let manager = builder(&rt, dir)
        // Longer than the test's guard: only a start that does not wait for it returns.
        .startup_deadline(Duration::from_secs(600))
        .add(stdio_config(
            "crashy",
            "sh",
            &["-c", "echo 'fatal: no API key' >&2; exit 3"],
        ))
        .add(fixture("ok", script, &[]))
        .build();
    let summary = manager.start().await;
    assert_eq!(summary.live, ["ok"], "{summary:?}");
    assert!(summary.unreachable.is_empty(), "{summary:?}");
    assert_eq!(
        summary.failed,
        [(
            "crashy".to_owned(),
            "exited with code 3: fatal: no API key".to_owned()
        )]
    );
    assert!(
        matches!(
            status_of(&manager, "crashy"),
            ServerStatus::Reconnecting { .. } | ServerStatus::Connecting
        ),
        "still retried by the default policy"
    );
    assert_eq!(manager.unreachable("crashy"), None);
    assert_eq!(
        manager.failed_before_ready("crashy").as_deref(),
        Some("exited with code 3: fatal: no API key")
    );
    manager.shutdown().await;
}

/// `notifications/tools/list_changed` re-lists the server's tools and rewrites its cache file.
pub async fn list_changed_refreshes_tools<R: Runtime>(rt: R, script: &Path, dir: &Path) {
    let config = fixture("dyn", script, &[]);
    let manager = builder(&rt, dir).add(config.clone()).build();
    manager.start().await;
    assert_eq!(manager.tools().len(), 5);
    // `add_tool` is not listed: call it on the server's client directly.
    let client = manager.client("dyn").expect("dyn is ready");
    client
        .call_tool("add_tool", json!({"name": "fresh"}))
        .await
        .expect("add_tool");
    let end = rt.now() + Duration::from_secs(5);
    while manager.tools().len() != 6 {
        assert!(rt.now() < end, "the new tool never appeared");
        sleep(&rt, Duration::from_millis(20)).await;
    }
    assert_eq!(name_of(&manager, "dyn", "fresh"), "dyn__fresh");
    let file = dir.join("cache").join(cache_key(&config).file_name());
    let end = rt.now() + Duration::from_secs(5);
    loop {
        let bytes = std::fs::read(&file).unwrap_or_default();
        if String::from_utf8_lossy(&bytes).contains("\"fresh\"") {
            break;
        }
        assert!(rt.now() < end, "the cache file was not rewritten");
        sleep(&rt, Duration::from_millis(20)).await;
    }
    manager.shutdown().await;
}

/// Real servers at once (server-everything over stdio, the Python SDK peer, the fixture): all
/// connect, each one's tools are listed under its own prefix and calls reach the right one.
/// `everything` is the command line of server-everything (without `stdio`), `python` and
/// `py_server` the peer's interpreter and script.
pub async fn real_servers_at_once<R: Runtime>(
    rt: R,
    script: &Path,
    dir: &Path,
    everything: &str,
    python: &str,
    py_server: &str,
) {
    let mut words: Vec<&str> = everything.split_whitespace().collect();
    words.push("stdio");
    let manager = builder(&rt, dir)
        .startup_deadline(Duration::from_secs(30))
        .add(stdio_config("everything", words[0], &words[1..]))
        .add(stdio_config("py", python, &[py_server, "stdio"]))
        .add(fixture("fixture", script, &[]))
        .build();
    let summary = manager.start().await;
    assert_eq!(summary.live, ["everything", "py", "fixture"], "{summary:?}");
    let tools = manager.tools();
    for server in ["everything", "py", "fixture"] {
        assert!(!tools_of(&tools, server).is_empty(), "{server} has tools");
    }
    assert_eq!(
        text(&manager, "everything__echo", json!({"message": "hi"})).await,
        "Echo: hi"
    );
    assert!(
        text(&manager, "py__echo", json!({"text": "py"}))
            .await
            .contains("py")
    );
    assert_eq!(
        text(&manager, "fixture__echo", json!({"text": "fx"})).await,
        "fx"
    );
    manager.shutdown().await;
}

async fn call_text<R: Runtime>(
    client: &crate::Client<R>,
    tool: &str,
    args: serde_json::Value,
) -> String {
    let result = client.call_tool(tool, args).await.expect("tool call");
    match &result.content[0] {
        ContentBlock::Text(t) => t.text.clone(),
        other => panic!("expected text, got {other:?}"),
    }
}

/// The next item of `sub`, within a generous bound.
async fn next_item<R: Runtime>(
    rt: &R,
    sub: &mut crate::Subscription,
) -> Option<Result<mcp_proto::session::ServerNotification, crate::Missed>> {
    within(rt, Duration::from_secs(20), sub.recv())
        .await
        .expect("the subscription delivers in time")
}

fn assert_updated(
    item: Option<Result<mcp_proto::session::ServerNotification, crate::Missed>>,
    uri: &str,
) {
    match item {
        Some(Ok(n)) if n.method == "notifications/resources/updated" => {
            let params: serde_json::Value = n
                .params
                .as_deref()
                .and_then(|p| serde_json::from_str(p.get()).ok())
                .unwrap_or_default();
            assert_eq!(params["uri"], uri, "{params}");
        }
        other => panic!("expected an update of {uri}, got {other:?}"),
    }
}

/// A subscription opened through the manager survives the server being killed: the manager
/// restarts it, subscribes again on the new process and restores the log level; the caller
/// sees a gap (`Missed::Gap`, cause `Reconnected`) and then the new process's updates on the
/// same `Subscription`. When the manager stops the server, the stream ends and `close` says
/// why.
pub async fn subscription_survives_restart<R: Runtime>(rt: R, script: &Path, dir: &Path) {
    use crate::{GapCause, Missed};
    const URI: &str = "fixture://counter";
    let manager = builder(&rt, dir).add(fixture("sub", script, &[])).build();
    let summary = manager.start().await;
    assert_eq!(summary.live, ["sub"], "{summary:?}");
    manager
        .set_log_level("sub", mcp_proto::types::LoggingLevel::Debug)
        .await
        .expect("set the log level");
    let unknown = manager.subscribe("nope", URI).await;
    assert!(
        matches!(&unknown, Err(ManagerError::UnknownServer(s)) if s == "nope"),
        "{unknown:?}"
    );
    let mut sub = manager.subscribe("sub", URI).await.expect("subscribe");
    assert_eq!(sub.uri(), Some(URI));

    let first = manager.client("sub").expect("sub is ready");
    call_text(&first, "touch", json!({"uri": URI})).await;
    assert_updated(next_item(&rt, &mut sub).await, URI);
    let pid1: u32 = call_text(&first, "pid", json!({}))
        .await
        .parse()
        .expect("pid");

    // Killed from outside: no goodbye, no answer.
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &pid1.to_string()])
        .status()
        .expect("run kill");
    assert!(killed.success(), "kill -KILL {pid1}");

    // The gap comes once the new process took the subscription again.
    match next_item(&rt, &mut sub).await {
        Some(Err(Missed::Gap(gap))) => {
            assert_eq!(gap.cause, GapCause::Reconnected);
            assert!(gap.since <= gap.until, "{gap:?}");
        }
        other => panic!("expected a gap, got {other:?}"),
    }
    let second = manager.client("sub").expect("sub is ready again");
    let pid2: u32 = call_text(&second, "pid", json!({}))
        .await
        .parse()
        .expect("pid");
    assert_ne!(pid1, pid2, "a new process");
    assert!(pid_dead(pid1), "the killed process is gone");
    assert_eq!(
        call_text(&second, "level", json!({})).await,
        "debug",
        "the log level was restored on the new process"
    );
    // The new process only sends the update because it was subscribed again.
    call_text(&second, "touch", json!({"uri": URI})).await;
    assert_updated(next_item(&rt, &mut sub).await, URI);

    // Stopped for good: the stream ends, and `close` says the connection is gone.
    manager.disconnect("sub").await.expect("disconnect");
    let end = next_item(&rt, &mut sub).await;
    assert!(end.is_none(), "the stream ends: {end:?}");
    let closed = sub.close().await;
    assert!(
        matches!(&closed, Err(e) if e.is_connection_lost()),
        "{closed:?}"
    );
    manager.shutdown().await;
}

/// A restarted server that refuses the subscription (its resource is gone) ends the
/// manager's subscription, and `close` gives the server's refusal.
pub async fn subscription_refused_after_restart<R: Runtime>(rt: R, script: &Path, dir: &Path) {
    const URI: &str = "fixture://counter";
    let refuse = dir.join("refuse");
    let refuse_arg = refuse.to_str().expect("UTF-8 path");
    let manager = builder(&rt, dir)
        .add(fixture("sub", script, &["--refuse-file", refuse_arg]))
        .build();
    let summary = manager.start().await;
    assert_eq!(summary.live, ["sub"], "{summary:?}");
    let mut sub = manager.subscribe("sub", URI).await.expect("subscribe");
    let first = manager.client("sub").expect("sub is ready");
    let pid: u32 = call_text(&first, "pid", json!({}))
        .await
        .parse()
        .expect("pid");
    // The next process will not have the resource.
    std::fs::write(&refuse, "1").expect("write the refuse file");
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .expect("run kill");
    assert!(killed.success(), "kill -KILL {pid}");
    let end = next_item(&rt, &mut sub).await;
    assert!(end.is_none(), "the subscription ends: {end:?}");
    match sub.close().await {
        Err(crate::Error::Remote { code, .. }) => assert_eq!(code, -32002),
        other => panic!("expected the server's refusal, got {other:?}"),
    }
    // The server itself is fine.
    let second = manager.client("sub").expect("sub is ready again");
    let pid2: u32 = call_text(&second, "pid", json!({}))
        .await
        .parse()
        .expect("pid");
    assert_ne!(pid, pid2);
    manager.shutdown().await;
}
