//! The stdio bodies of [`suite`](super::suite): a real child process (the Python fixture
//! server, `adapters/tokio/tests/fixtures/stdio_server.py`), its crash, exit, shutdown and
//! respawn. Re-exported by `suite`; the `/proc` checks are Linux-only.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;

use super::suite::{eventually, sleep};
use crate::{Client, ClientBuilder, Error, Runtime};
use mcp_proto::session::EraPolicy;
use mcp_proto::types::ContentBlock;

fn fixture_command(script: &Path, flags: &[&str]) -> crate::process::StdioCommand {
    crate::process::StdioCommand::new("python3")
        .args([script.to_string_lossy().into_owned()])
        .args(flags.iter().copied())
}

/// Whether `pid` is gone or a zombie not ours to reap (Linux `/proc`).
#[must_use]
pub fn pid_dead(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return true;
    };
    let state = stat
        .rfind(')')
        .and_then(|i| stat[i + 1..].trim_start().chars().next());
    matches!(state, Some('Z' | 'X') | None)
}

async fn text_of<R: Runtime>(client: &Client<R>, tool: &str) -> String {
    let r = client.call_tool(tool, ()).await.expect("tool call");
    match &r.content[0] {
        ContentBlock::Text(t) => t.text.clone(),
        other => panic!("expected text, got {other:?}"),
    }
}

/// stdio: two pages of tools, a call, and a banner line that is skipped.
pub async fn stdio_paging_call_banner<R: Runtime>(rt: R, script: &Path) {
    let client = ClientBuilder::new()
        .runtime(rt.clone())
        .stdio(fixture_command(script, &["--banner"]))
        .await
        .expect("connect");
    assert_eq!(client.server_info().name, "py-fixture");
    // Unnamed: its command line, as the docs of `ClientBuilder::name` say.
    let script_arg = script.to_str().expect("UTF-8 fixture path");
    let expected = format!("python3 {script_arg} --banner");
    if expected.chars().count() <= 60 {
        assert_eq!(client.server_name(), expected);
    } else {
        let shown = client.server_name().trim_end_matches('…');
        assert!(expected.starts_with(shown), "{}", client.server_name());
        assert!(client.server_name().ends_with('…'));
    }
    let names: Vec<_> = client
        .list_tools()
        .await
        .expect("list")
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, ["echo", "crash", "pid", "grandchild", "sleep"]);
    let r = client
        .call_tool("echo", json!({"text": "hi"}))
        .await
        .expect("echo");
    assert!(matches!(&r.content[0], ContentBlock::Text(t) if t.text == "hi"));
    client.close().await;
}

/// stdio: a crash mid-request fails it with the exit status and the last stderr lines.
pub async fn stdio_crash_mid_request<R: Runtime>(rt: R, script: &Path) {
    let client = ClientBuilder::new()
        .runtime(rt.clone())
        .name("fixture")
        .stdio(fixture_command(script, &[]))
        .await
        .expect("connect");
    // The crash comes while its own call is pending, with a second request queued behind it.
    let crash = client.call_tool("crash", json!({"code": 3}));
    let queued = async {
        sleep(&rt, Duration::from_millis(20)).await;
        client
            .call_tool("echo", json!({"text": "never answered"}))
            .await
    };
    let (a, b) = futures_util::future::join(crash, queued).await;
    for r in [a, b] {
        match r {
            Err(e @ Error::Exited { .. }) => {
                let msg = e.to_string();
                assert!(
                    msg.starts_with("server \"fixture\" exited with status 3"),
                    "{msg}"
                );
                assert!(msg.contains("fatal error: boom"), "{msg}");
            }
            other => panic!("expected an exit error, got {other:?}"),
        }
    }
    match client.ping().await {
        Err(Error::Exited { stderr, .. }) => assert!(stderr.iter().any(|l| l.contains("boom"))),
        other => panic!("expected an exit error, got {other:?}"),
    }
    // Why the connection ended, in the same words as the failed calls.
    match client.ended().await {
        Error::Exited { status, .. } => assert_eq!(status, "exited with status 3"),
        other => panic!("expected an exit error, got {other:?}"),
    }
    client.close().await;
}

/// stdio: a server that ignores stdin EOF and SIGTERM is killed within the bound, with its
/// grandchild, and reaped.
pub async fn stdio_close_within_bound<R: Runtime>(rt: R, script: &Path) {
    let client = ClientBuilder::new()
        .runtime(rt.clone())
        .shutdown_graces(Duration::from_millis(200), Duration::from_millis(200))
        .stdio(fixture_command(script, &["--stubborn"]))
        .await
        .expect("connect");
    let pid: u32 = text_of(&client, "pid").await.parse().expect("pid");
    let grandchild: u32 = text_of(&client, "grandchild").await.parse().expect("pid");
    assert!(!pid_dead(pid) && !pid_dead(grandchild));
    let started = Instant::now();
    client.close().await;
    let took = started.elapsed();
    assert!(took < Duration::from_secs(3), "close took {took:?}");
    assert!(
        took >= Duration::from_millis(350),
        "the graces were skipped: {took:?}"
    );
    assert!(pid_dead(pid), "the server is gone");
    assert!(
        eventually(&rt, || pid_dead(grandchild)).await,
        "the grandchild is gone"
    );
    assert!(matches!(client.state(), crate::ConnectionState::Closed(_)));
}

/// stdio: dropping every client without `close()` leaves no process, including a grandchild
/// behind a shell wrapper (`sh -c 'python3 server & wait'`).
pub async fn stdio_drop_without_close<R: Runtime>(rt: R, script: &Path) {
    // A background job's stdin is /dev/null: hand it the real one through fd 3.
    let line = format!("exec 3<&0; python3 '{}' <&3 3<&- & wait", script.display());
    let client = ClientBuilder::new()
        .runtime(rt.clone())
        .shutdown_graces(Duration::from_millis(200), Duration::from_millis(200))
        .stdio(crate::process::StdioCommand::new("sh").args(["-c", line.as_str()]))
        .await
        .expect("connect");
    let server_pid: u32 = text_of(&client, "pid").await.parse().expect("pid");
    let grandchild: u32 = text_of(&client, "grandchild").await.parse().expect("pid");
    let other = client.clone();
    drop(client);
    assert!(!pid_dead(server_pid), "a clone keeps the connection");
    other.ping().await.expect("the clone still works");
    drop(other);
    assert!(
        eventually(&rt, || pid_dead(server_pid)).await,
        "the python server is gone"
    );
    assert!(
        eventually(&rt, || pid_dead(grandchild)).await,
        "the grandchild is gone"
    );
}

/// stdio: a program that does not exist is a spawn error naming the server.
pub async fn stdio_spawn_error<R: Runtime>(rt: R) {
    match ClientBuilder::<R>::new()
        .runtime(rt)
        .name("missing")
        .stdio("/nonexistent/mcp-server --x")
        .await
    {
        Err(e @ Error::Spawn { .. }) => assert!(e.to_string().contains("\"missing\""), "{e}"),
        other => panic!("expected a spawn error, got {other:?}"),
    }
}

/// stdio, Auto era policy: a server that crashes at start-up (it exits with an error having
/// read nothing, not even the `server/discover` probe) is started once, not again for the
/// probe: the connection fails with its exit status and last stderr line. (`_script` keeps
/// the signature of the suite's other stdio tests.)
pub async fn stdio_crash_at_start_is_not_respawned<R: Runtime>(rt: R, _script: &Path) {
    let dir = std::env::temp_dir().join(format!(
        "mcp-crash-at-start-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let starts = dir.join("starts");
    let script = format!(
        "echo $$ >> '{}'; echo 'boom: no config' >&2; exit 2",
        starts.display()
    );
    let result = ClientBuilder::new()
        .runtime(rt)
        .name("crasher")
        .era_policy(EraPolicy::Auto {
            probe_timeout: Duration::from_secs(20),
        })
        .stdio(crate::process::StdioCommand::new("sh").args(["-c", script.as_str()]))
        .await;
    let error = match result {
        Ok(_) => panic!("a server that crashed at start-up connected"),
        Err(e) => e.to_string(),
    };
    assert!(error.contains("boom: no config"), "{error}");
    let started = std::fs::read_to_string(&starts).expect("starts file");
    assert_eq!(started.lines().count(), 1, "started once: {started}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// stdio, Auto era policy: a server of the initialize era that exits on the `server/discover`
/// probe is started again, once, and the session goes straight to `initialize` on it; the
/// first process is reaped, and a call made meanwhile is answered by the second.
pub async fn stdio_exit_on_the_era_probe_respawns<R: Runtime>(rt: R, script: &Path) {
    let dir = std::env::temp_dir().join(format!(
        "mcp-respawn-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let starts = dir.join("starts");
    let starts_arg = starts.to_string_lossy().into_owned();
    let client = ClientBuilder::new()
        .runtime(rt.clone())
        .name("old-server")
        .era_policy(EraPolicy::Auto {
            probe_timeout: Duration::from_secs(20),
        })
        .stdio(fixture_command(
            script,
            &["--exit-on-discover", "--starts-file", &starts_arg],
        ))
        .await
        .expect("connect after the respawn");
    assert_eq!(client.server_info().name, "py-fixture");
    let pids: Vec<u32> = std::fs::read_to_string(&starts)
        .expect("starts file")
        .lines()
        .map(|l| l.parse().expect("pid"))
        .collect();
    assert_eq!(pids.len(), 2, "started once, then once again: {pids:?}");
    assert_eq!(text_of(&client, "pid").await, pids[1].to_string());
    assert!(
        eventually(&rt, || pid_dead(pids[0])).await,
        "the process that exited on the probe is reaped"
    );
    client.close().await;
    assert!(
        eventually(&rt, || pid_dead(pids[1])).await,
        "the second process is gone after close"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
