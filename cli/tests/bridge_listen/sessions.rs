//! A session's own child: made for it, ended with it (DELETE, or its death), started with
//! the host's own protocol version and identity.

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::bridge_host::group_alive;
use crate::common::listening::Listening;
use crate::common::raw_http::{call, exchange, initialize_body, open_session, start_exchange};
use crate::harness::{GUARD, Listener, MCP};

#[test]
fn our_own_client_uses_the_bridge_over_http() {
    let bridge = Listener::start("client", &[], &[]);
    let out = Command::new(MCP)
        .args([
            "--url",
            &bridge.url,
            "call",
            "--json",
            "echo",
            "text=over http",
        ])
        .output()
        .expect("run mcp call");
    assert!(out.status.success(), "{out:?}");
    let result: Value = serde_json::from_slice(&out.stdout).expect("JSON output");
    assert_eq!(result["content"][0]["text"], "over http", "{result}");
    // The session's upstream saw our client's identity, not the bridge's.
    let init = bridge.wait_upstream("our client's initialize", |m| {
        m["method"] == "initialize" && m["params"]["clientInfo"]["name"] != "mcp-bridge"
    });
    assert_eq!(init["params"]["clientInfo"]["name"], "mcp-term", "{init}");

    let slow = Command::new(MCP)
        .args([
            "--url",
            &bridge.url,
            "call",
            "--json",
            "slow",
            "steps=2",
            "delay_ms=1",
        ])
        .output()
        .expect("run mcp call");
    assert!(slow.status.success(), "{slow:?}");
    let result: Value = serde_json::from_slice(&slow.stdout).expect("JSON output");
    assert_eq!(result["content"][0]["text"], "finished 2 steps", "{result}");
    // Each client closed its session (DELETE): no child is left.
    bridge.wait_groups(0);
}

#[test]
fn each_session_has_its_own_child_and_delete_ends_it_cancelling_its_call() {
    let bridge = Listener::start("sessions", &[], &[]);
    // No child before a host arrives.
    assert!(bridge.live_groups().is_empty(), "no startup connection");
    let first = open_session(&bridge.url, "host-one", &[]);
    let second = open_session(&bridge.url, "host-two", &[]);
    let groups = bridge.wait_groups(2);

    let echoed = call(&bridge.url, &second, 2, "echo", &json!({"text": "two"}));
    assert_eq!(
        echoed.messages.last().expect("an answer")["result"]["content"][0]["text"],
        "two"
    );

    // A long call on the first session, then its DELETE: the call is cancelled upstream
    // and the first child ends; the second lives on.
    let url = bridge.url.clone();
    let running = start_exchange(
        &url,
        "POST",
        &[
            ("Mcp-Session-Id", &first),
            ("MCP-Protocol-Version", "2025-06-18"),
        ],
        Some(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "slow", "arguments": {"steps": 100, "delay_ms": 1000}}})),
    );
    let slow = bridge.wait_upstream("the slow call", |m| {
        m["method"] == "tools/call" && m["params"]["name"] == "slow"
    });
    let deleted = exchange(&bridge.url, "DELETE", &[("Mcp-Session-Id", &first)], None);
    assert_eq!(deleted.status, 200);
    let cancelled = bridge.wait_upstream("the cancellation", |m| {
        m["method"] == "notifications/cancelled"
    });
    assert_eq!(cancelled["params"]["requestId"], slow["id"], "{cancelled}");
    assert_eq!(
        cancelled["params"]["reason"], "the host disconnected",
        "{cancelled}"
    );
    drop(running);
    let left = bridge.wait_groups(1);
    assert!(groups.contains(&left[0]));

    // The ended session is unknown now; the other one still answers.
    let gone = call(&bridge.url, &first, 4, "echo", &json!({"text": "x"}));
    assert_eq!(gone.status, 404);
    let still = call(&bridge.url, &second, 5, "echo", &json!({"text": "still"}));
    assert_eq!(
        still.messages.last().expect("an answer")["result"]["content"][0]["text"],
        "still"
    );
}

#[test]
fn a_dead_child_closes_its_session_only() {
    let bridge = Listener::start("dies", &[], &[]);
    bridge.wait_groups(0);
    let first = open_session(&bridge.url, "host-one", &[]);
    let second = open_session(&bridge.url, "host-two", &[]);
    let groups = bridge.wait_groups(2);
    // Which child is the first session's: the one whose input has host-one's initialize
    // cannot be told from a shared log, so kill either and find which session died.
    let killed = groups[0];
    Command::new("kill")
        .args(["-KILL", "--", &format!("-{killed}")])
        .status()
        .expect("run kill");
    bridge.wait_groups(1);
    let started = Instant::now();
    let (dead, alive) = loop {
        let a = call(&bridge.url, &first, 2, "echo", &json!({"text": "a"}));
        let b = call(&bridge.url, &second, 3, "echo", &json!({"text": "b"}));
        match (a.status, b.status) {
            (404, 200) => break (a, b),
            (200, 404) => break (b, a),
            _ => assert!(
                started.elapsed() < GUARD,
                "no session was closed: {} {}",
                a.status,
                b.status
            ),
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(dead.status, 404);
    assert!(alive.messages.last().expect("an answer")["result"]["content"][0]["text"].is_string());
    // stderr names the session whose upstream ended, and says the bridge closed it.
    let said = bridge.until_stderr("closed: closed by the bridge");
    assert!(
        said.iter()
            .any(|l| l.contains("bridge: host session ") && l.contains(": its upstream ended: ")),
        "{said:#?}"
    );
    // The bridge itself serves on.
    let third = open_session(&bridge.url, "host-three", &[]);
    let ok = call(&bridge.url, &third, 4, "echo", &json!({"text": "new"}));
    assert_eq!(ok.status, 200);
}

#[test]
fn a_server_that_cannot_start_fails_that_hosts_initialize_without_a_session_id_and_the_bridge_serves_on()
 {
    let mut bridge = Listening::start(
        &[
            "bridge",
            "--listen",
            "127.0.0.1:0",
            "--",
            "sh",
            "-c",
            "echo broken >&2; exit 1",
        ],
        &[],
    )
    .url_first();
    let url = bridge.url.clone();
    for host in ["first", "second"] {
        let init = exchange(&url, "POST", &[], Some(&initialize_body(host)));
        assert_eq!(init.status, 200, "{:?}", init.messages);
        let error = &init.messages[0]["error"];
        assert_eq!(error["code"], -32603, "{:?}", init.messages);
        let message = error["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("the upstream server failed") && message.contains("broken"),
            "why, with the server's own words: {message}"
        );
        // A refused initialize opens no session: no id the host could only get 404 for.
        assert_eq!(
            init.header("mcp-session-id"),
            None,
            "a failed initialize hands out no session id"
        );
    }
    assert_eq!(
        bridge.child.try_wait().expect("try_wait"),
        None,
        "the bridge serves on"
    );
}

/// The protocol version each host asked for reaches its upstream with its identity, and
/// each host is answered the version its upstream agreed.
#[test]
fn each_host_sees_its_own_version_and_the_server_sees_each_hosts_identity() {
    let bridge = Listener::start("versions", &[], &[]);
    let mut sessions = Vec::new();
    for (name, version, caps) in [
        ("old-host", "2025-03-26", json!({})),
        (
            "new-host",
            "2025-11-25",
            json!({"roots": {}, "elicitation": {}}),
        ),
    ] {
        let init = exchange(
            &bridge.url,
            "POST",
            &[],
            Some(
                &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": version, "capabilities": caps,
                "clientInfo": {"name": name, "version": "7.0"}}}),
            ),
        );
        assert_eq!(init.status, 200, "{:?}", init.messages);
        let result = &init.messages[0]["result"];
        assert_eq!(result["protocolVersion"], version, "{result}");
        assert_eq!(result["serverInfo"]["name"], "mcp-demo", "{result}");
        assert!(result["instructions"].is_string(), "{result}");
        sessions.push(
            init.header("mcp-session-id")
                .expect("a session id")
                .to_owned(),
        );
        let seen = bridge.wait_upstream(name, |m| {
            m["method"] == "initialize" && m["params"]["clientInfo"]["name"] == name
        });
        assert_eq!(seen["params"]["protocolVersion"], version, "{seen}");
        assert_eq!(seen["params"]["clientInfo"]["version"], "7.0", "{seen}");
        assert_eq!(seen["params"]["capabilities"], caps, "{seen}");
    }
    assert_ne!(sessions[0], sessions[1]);
    bridge.wait_groups(2);
}

/// Past `--max-sessions` a new host is turned away with 503 and a JSON-RPC error that says
/// why, stderr says so, and a session's DELETE makes room again.
#[test]
fn past_max_sessions_a_new_host_gets_503_and_stderr_says_so() {
    let mut bridge = Listener::start("max-sessions", &["--max-sessions", "1"], &[]);
    let first = open_session(&bridge.url, "host-one", &[]);
    let refused = exchange(&bridge.url, "POST", &[], Some(&initialize_body("host-two")));
    assert_eq!(refused.status, 503, "{}", refused.body);
    let error = &refused.json()["error"];
    assert_eq!(error["code"], -32000, "{error}");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("too many sessions (open: 1,")),
        "{error}"
    );
    assert_eq!(refused.header("mcp-session-id"), None);
    bridge.wait_groups(1);

    let deleted = exchange(&bridge.url, "DELETE", &[("Mcp-Session-Id", &first)], None);
    assert_eq!(deleted.status, 200);
    open_session(&bridge.url, "host-three", &[]);

    let (_, lines) = bridge.stop("-TERM");
    assert!(
        lines.iter().any(|l| l.contains(
            "mcp bridge: refused a new host session: the session limit is reached (503; --max-sessions 1"
        )),
        "{lines:#?}"
    );
}

/// A host that sends `initialize` and leaves before it is answered (its server still
/// starting) frees its place and its child: no one ever learned that session's id, so no one
/// could use it or DELETE it.
#[test]
fn a_host_that_leaves_before_its_initialize_is_answered_frees_its_place_and_child() {
    let dir = std::env::temp_dir().join(format!("mcp-bridge-listen-left-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let groups = dir.join("groups");
    let script = format!(
        "echo $$ >> '{}'; sleep 2; exec '{MCP}' demo-server",
        groups.display()
    );
    let bridge = Listening::bridge(&["--max-sessions", "1", "--", "sh", "-c", &script], &[]);
    let url = bridge.url.clone();
    let recorded = || -> Vec<i32> {
        std::fs::read_to_string(&groups)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    };

    let leaving = start_exchange(&url, "POST", &[], Some(&initialize_body("gone")));
    let started = Instant::now();
    let child = loop {
        if let Some(&g) = recorded().first() {
            break g;
        }
        assert!(started.elapsed() < GUARD, "the host's server never started");
        std::thread::sleep(Duration::from_millis(20));
    };
    drop(leaving);
    while group_alive(child) {
        assert!(
            started.elapsed() < GUARD,
            "the child of a session nobody can reach lives on"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let next = exchange(&url, "POST", &[], Some(&initialize_body("next")));
    assert_eq!(next.status, 200, "{}", next.body);
    assert!(next.header("mcp-session-id").is_some());

    drop(bridge);
    for g in recorded() {
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{g}")])
            .status();
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A session its host abandons (no DELETE, no request, no stream) ends after
/// `--session-idle`: its child is shut down and its id gets 404.
#[test]
fn an_abandoned_session_ends_after_session_idle() {
    let bridge = Listener::start("session-idle", &["--session-idle", "1s"], &[]);
    let abandoned = open_session(&bridge.url, "host-one", &[]);
    bridge.wait_groups(1);
    bridge.wait_groups(0);
    let gone = call(&bridge.url, &abandoned, 2, "echo", &json!({"text": "x"}));
    assert_eq!(gone.status, 404, "{}", gone.body);
}
