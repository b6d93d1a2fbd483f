//! `mcp bridge --config FILE` with servers that do not simply come up: unreachable at the
//! first connect, still starting on a first run, crash-looping, a program that does not
//! exist. Each is reported with its reason, and a call to it waits only while waiting can
//! help.

use std::path::Path;
use std::time::Instant;

use serde_json::{Value, json};

use crate::host::{GUARD, MCP, start_bridge, test_dir, text, write_servers};

/// A local port with nothing listening on it (bound, then let go).
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("address").port()
}

/// Waits (within the guard) until `path` exists.
fn wait_for_file(path: &Path) {
    let started = Instant::now();
    while !path.exists() {
        assert!(
            started.elapsed() < GUARD,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

fn error_message(answer: &Value) -> &str {
    answer["error"]["message"].as_str().unwrap_or_default()
}

/// An HTTP entry whose connection is refused is reported at once with the reason `mcp tools
/// --all` gives (not "still connecting" at the start-up deadline), the others serve, and a
/// call to it gets that reason at once; `tools --all` still says `failed`.
#[test]
fn a_refused_server_is_reported_at_once_with_its_reason() {
    let dir = test_dir("refused");
    let url = format!("http://127.0.0.1:{}/mcp", closed_port());
    write_servers(
        &dir,
        json!({
            "alpha": {"command": MCP, "args": ["demo-server"]},
            "down": {"url": url},
        }),
    );
    // A start-up deadline longer than the guard: only a start that does not wait for `down`
    // answers `initialize` in time.
    let mut host = start_bridge(&dir, &["--connect-timeout", "60s"]);
    host.initialize(&json!({}));
    let stderr = host.stderr();
    let refused =
        format!(r#"server "down" failed: could not connect to {url}: connection refused"#);
    assert!(stderr.contains(&refused), "{stderr}");
    assert!(stderr.contains("retrying in the background"), "{stderr}");
    assert!(!stderr.contains("still connecting"), "{stderr}");
    let tools = host.tool_names();
    assert!(tools.contains(&"alpha__echo".to_owned()), "{tools:?}");
    let id = host.request(
        "tools/call",
        json!({"name": "down__echo", "arguments": {"text": "x"}}),
    );
    let (answer, _) = host.answer(id);
    let message = error_message(&answer);
    assert!(
        message.contains(r#"server "down" is unreachable: could not connect to"#)
            && message.contains("connection refused"),
        "{answer}"
    );
    assert_eq!(host.finish(), 0);

    // `mcp tools --all` keeps its one attempt and its words.
    let listed = std::process::Command::new(MCP)
        .args(["tools", "--all", "--config"])
        .arg(dir.join("servers.json"))
        .env("XDG_CACHE_HOME", dir.join("cache-cli"))
        .output()
        .expect("run mcp tools --all");
    let said = String::from_utf8_lossy(&listed.stderr);
    assert!(
        said.contains(&format!("could not connect to {url}: connection refused")),
        "{said}"
    );
}

/// On a first run (no tool cache), a call to a server still starting waits for it, then is
/// routed; a tool it came up without is an unknown tool; a server that fails while the call
/// waits gives its reason.
#[test]
fn a_call_to_a_server_still_starting_waits_for_it() {
    let dir = test_dir("starting");
    let go = dir.join("go");
    let gate = format!("while [ ! -e '{}' ]; do sleep 0.05; done", go.display());
    write_servers(
        &dir,
        json!({
            "quick": {"command": MCP, "args": ["demo-server"]},
            "late": {"command": "sh", "args": ["-c", format!("{gate}; exec '{MCP}' demo-server")]},
            "dies": {"command": "sh", "args": ["-c", format!("{gate}; echo 'no licence' >&2; exit 4")]},
        }),
    );
    let mut host = start_bridge(&dir, &["--connect-timeout", "200ms"]);
    host.initialize(&json!({}));
    let tools = host.tool_names();
    assert!(!tools.iter().any(|t| t.starts_with("late__")), "{tools:?}");
    let echo = host.request(
        "tools/call",
        json!({"name": "late__echo", "arguments": {"text": "waited"}}),
    );
    let missing = host.request("tools/call", json!({"name": "late__nope", "arguments": {}}));
    let failing = host.request("tools/call", json!({"name": "dies__echo", "arguments": {}}));
    // The calls are in: a ping's answer comes after they were taken.
    host.call("ping", json!({}));
    std::fs::write(&go, "").expect("let the servers start");
    let mut answers = std::collections::HashMap::new();
    while answers.len() < 3 {
        let line = host.recv();
        if let Some(id) = line["id"].as_i64()
            && line.get("method").is_none()
        {
            answers.insert(id, line);
        }
    }
    assert_eq!(
        text(&answers[&echo]["result"]),
        "waited",
        "{:?}",
        answers[&echo]
    );
    assert_eq!(
        error_message(&answers[&missing]),
        "unknown tool: late__nope"
    );
    let failed = error_message(&answers[&failing]);
    assert!(
        failed.contains(r#"server "dies""#) && failed.contains("exited with code 4: no licence"),
        "{failed}"
    );
    assert_eq!(host.finish(), 0);
}

/// A server that keeps failing after it was lost: a call that waits for it in vain says what
/// it last failed with (its exit status and last stderr line).
#[test]
fn a_crash_looping_server_gives_its_last_failure() {
    let dir = test_dir("crash-loop");
    let broken = dir.join("broken");
    let tried = dir.join("tried");
    let pid = dir.join("flaky.pid");
    let flaky = format!(
        "if [ -e '{broken}' ]; then touch '{tried}'; echo 'lost the database' >&2; exit 7; fi; \
         echo $$ > '{pid}'; exec '{MCP}' demo-server",
        broken = broken.display(),
        tried = tried.display(),
        pid = pid.display(),
    );
    write_servers(
        &dir,
        json!({
            "alpha": {"command": MCP, "args": ["demo-server"]},
            "flaky": {"command": "sh", "args": ["-c", flaky]},
        }),
    );
    let mut host = start_bridge(&dir, &["--timeout", "1s"]);
    host.initialize(&json!({}));
    assert!(host.tool_names().contains(&"flaky__echo".to_owned()));
    // From now on it exits at start; it is killed, and its reconnects fail.
    std::fs::write(&broken, "").expect("break it");
    let pid = std::fs::read_to_string(&pid).expect("flaky's pid");
    let killed = std::process::Command::new("kill")
        .args(["-TERM", pid.trim()])
        .status()
        .expect("run kill");
    assert!(killed.success());
    wait_for_file(&tried);
    let id = host.request(
        "tools/call",
        json!({"name": "flaky__echo", "arguments": {"text": "x"}}),
    );
    let (answer, _) = host.answer(id);
    let message = error_message(&answer);
    assert!(
        message.starts_with(r#"mcp bridge: server "flaky" is still not ready after 1s"#)
            && message.contains("exited with code 7: lost the database"),
        "{answer}"
    );
    assert_eq!(host.finish(), 0);
}

/// An entry whose program does not exist is named as a single server's is: the program, and
/// the PATH hint.
#[test]
fn a_missing_program_is_named_with_a_path_hint() {
    let dir = test_dir("missing-program");
    write_servers(
        &dir,
        json!({
            "alpha": {"command": MCP, "args": ["demo-server"]},
            "broken": {"command": "no-such-server"},
        }),
    );
    let mut host = start_bridge(&dir, &[]);
    host.initialize(&json!({}));
    let stderr = host.stderr();
    assert!(
        stderr.contains(
            r#"server "broken" failed: could not start `no-such-server`: No such file or directory"#
        ) && stderr.contains("is `no-such-server` installed and on PATH?"),
        "{stderr}"
    );
    assert_eq!(host.finish(), 0);
}

/// A local HTTP server that answers every request with `503 Service Unavailable`, on a
/// thread of its own for the rest of the test run.
fn busy_server() -> String {
    use std::io::{Read as _, Write as _};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}/mcp", listener.local_addr().expect("address"));
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            // The request head (and a small body) in one read is enough to answer.
            let mut buf = [0u8; 8192];
            let _ = stream.read(&mut buf);
            let _ = stream.write_all(
                b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
            );
        }
    });
    url
}

/// An HTTP server that answers with an error status before it was ever ready was reached:
/// it is reported as failed (not unreachable), still retried, and a call to it gets that
/// reason at once.
#[test]
fn a_server_answering_503_at_start_is_failed_and_retried() {
    let dir = test_dir("busy");
    let url = busy_server();
    write_servers(
        &dir,
        json!({
            "alpha": {"command": MCP, "args": ["demo-server"]},
            "busy": {"url": url},
        }),
    );
    // A start-up deadline longer than the guard: only a start that does not wait for `busy`
    // answers `initialize` in time.
    let mut host = start_bridge(&dir, &["--connect-timeout", "60s"]);
    host.initialize(&json!({}));
    let stderr = host.stderr();
    assert!(stderr.contains(r#"server "busy" failed: "#), "{stderr}");
    assert!(stderr.contains("503"), "{stderr}");
    assert!(stderr.contains("retrying in the background"), "{stderr}");
    let id = host.request(
        "tools/call",
        json!({"name": "busy__echo", "arguments": {"text": "x"}}),
    );
    let (answer, _) = host.answer(id);
    let message = error_message(&answer);
    assert!(
        message.contains(r#"server "busy" failed: "#)
            && message.contains("503")
            && message.contains("retrying in the background"),
        "{answer}"
    );
    assert_eq!(host.finish(), 0);
}
