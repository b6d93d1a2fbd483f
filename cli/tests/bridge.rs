//! `mcp bridge --url URL` as a host runs it: the built binary on piped stdin/stdout, in front
//! of a scripted Streamable HTTP server on 127.0.0.1 that records every request. What the host
//! sees is what the server said (identity, capabilities, instructions, version, results,
//! errors, progress); what the server sees is the host (client info, capabilities); a
//! cancellation, a server-to-client request and the host leaving are forwarded.

mod common;

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::bridge_host::{BridgeHost, GUARD, MCP, scratch_dir};
use common::browser::BROWSER;
use common::listening::Listening;
use mcp_driver::testing::http_server::{RecordedRequest, ScriptedHttpServer, ScriptedReply};
use mcp_driver::testing::oauth_server::OAuthServer;
use serde_json::{Value, json};

/// The scripted upstream server: a session id, `tools` and `logging`, an `echo` tool, and
/// tools/call behaviours by name (`progress`, `fail`, `slow`, `ask`).
fn upstream() -> ScriptedHttpServer {
    ScriptedHttpServer::start(|req: &RecordedRequest| {
        match req.method.as_str() {
            "DELETE" => return ScriptedReply::status(200),
            "GET" => return ScriptedReply::status(405),
            _ => {}
        }
        let body = req.json().unwrap_or(Value::Null);
        let id = body.get("id").cloned().unwrap_or(Value::Null);
        let Some(method) = body.get("method").and_then(Value::as_str) else {
            // A response (the host's answer to the server's request): accepted.
            return ScriptedReply::status(202);
        };
        let ok = |result: Value| {
            ScriptedReply::json(&json!({"jsonrpc": "2.0", "id": id, "result": result}))
        };
        match method {
            "initialize" => ok(json!({
                "protocolVersion": "2025-03-26",
                "capabilities": {"tools": {"listChanged": true}, "logging": {}},
                "serverInfo": {"name": "scripted-upstream", "version": "9.9"},
                "instructions": "be nice"
            }))
            .with_header("mcp-session-id", "sess-1"),
            m if m.starts_with("notifications/") => ScriptedReply::status(202),
            "tools/list" => ok(json!({"tools": [
                {"name": "echo", "inputSchema": {"type": "object"}, "x-extra": [1, 2]}
            ]})),
            "tools/call" => match body["params"]["name"].as_str() {
                Some("progress") => {
                    let token = body["params"]["_meta"]["progressToken"].clone();
                    let progress = |n: u32| {
                        ScriptedReply::data(&json!({"jsonrpc": "2.0", "method": "notifications/progress",
                            "params": {"progressToken": token, "progress": n, "total": 2, "message": format!("step {n}")}}))
                    };
                    let log = ScriptedReply::data(&json!({"jsonrpc": "2.0", "method": "notifications/message",
                        "params": {"level": "warning", "logger": "up", "data": {"note": "halfway"}}}));
                    ScriptedReply::sse([
                        progress(1),
                        log,
                        progress(2),
                        ScriptedReply::data(&json!({"jsonrpc": "2.0", "id": id,
                            "result": {"content": [{"type": "text", "text": "done"}]}})),
                    ])
                }
                Some("fail") => ScriptedReply::json(&json!({"jsonrpc": "2.0", "id": id,
                    "error": {"code": -32042, "message": "needs more", "data": {"why": "scripted"}}})),
                Some("ask") => ScriptedReply::sse([ScriptedReply::data(&json!({"jsonrpc": "2.0",
                    "id": "up-1", "method": "sampling/createMessage",
                    "params": {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 5}}))])
                .held_open(),
                Some("roots") => ScriptedReply::sse([ScriptedReply::data(&json!({"jsonrpc": "2.0",
                    "id": "up-2", "method": "roots/list"}))])
                .held_open(),
                // `slow`: never answered.
                _ => ScriptedReply::sse(Vec::<String>::new()).held_open(),
            },
            _ => ScriptedReply::json(&json!({"jsonrpc": "2.0", "id": id,
                "error": {"code": -32601, "message": "method not found"}})),
        }
    })
}

/// The scratch directory of test `name` (its token store is `tokens.json` there).
fn test_dir(name: &str) -> PathBuf {
    scratch_dir("bridge-test", name)
}

/// `mcp bridge --url URL` with a host on its stdio, its token store in `dir`.
fn start(url: &str, dir: PathBuf) -> BridgeHost {
    let mut command = Command::new(MCP);
    command
        .args(["bridge", "--url", url])
        // No stored token from the user's own store.
        .env("MCP_TOKEN_STORE", dir.join("tokens.json"))
        .stderr(Stdio::inherit());
    BridgeHost::spawn(command, dir)
}

/// Waits until the server has received a request that `pred` accepts, and returns it.
fn wait_for(
    server: &ScriptedHttpServer,
    what: &str,
    pred: impl Fn(&RecordedRequest) -> bool,
) -> RecordedRequest {
    let started = Instant::now();
    loop {
        if let Some(r) = server.requests().into_iter().find(|r| pred(r)) {
            return r;
        }
        assert!(
            started.elapsed() < GUARD,
            "the server never got {what}: {:?}",
            server.requests()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn rpc(server: &ScriptedHttpServer, method: &str) -> Vec<Value> {
    server
        .requests()
        .iter()
        .filter(|r| r.rpc_method().as_deref() == Some(method))
        .filter_map(RecordedRequest::json)
        .collect()
}

#[test]
fn the_host_sees_the_server_as_it_is_and_the_server_sees_the_host() {
    let server = upstream();
    let mut bridge = start(&server.url("/mcp"), test_dir("identity"));
    let host_caps = json!({"sampling": {}, "experimental": {"host.feature": {"level": 2}}});
    let result = bridge.initialize(&host_caps);
    assert_eq!(
        result["serverInfo"],
        json!({"name": "scripted-upstream", "version": "9.9"}),
        "{result}"
    );
    assert_eq!(
        result["protocolVersion"], "2025-03-26",
        "the version the server agreed: {result}"
    );
    assert_eq!(result["instructions"], "be nice", "{result}");
    assert_eq!(
        result["capabilities"],
        json!({"tools": {"listChanged": true}, "logging": {}}),
        "{result}"
    );

    let upstream_init = &rpc(&server, "initialize")[0]["params"];
    assert_eq!(
        upstream_init["clientInfo"],
        json!({"name": "host-app", "version": "3.1"})
    );
    assert_eq!(upstream_init["capabilities"], host_caps);
    assert_eq!(upstream_init["protocolVersion"], "2025-06-18");

    // A result as the server wrote it, unknown fields included.
    bridge.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let (list, _) = bridge.answer(2);
    assert_eq!(
        list["result"]["tools"],
        json!([{"name": "echo", "inputSchema": {"type": "object"}, "x-extra": [1, 2]}])
    );

    // Progress under the host's own token, before the answer.
    bridge.send(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "progress", "arguments": {}, "_meta": {"progressToken": "host-tok"}}}));
    let (call, before) = bridge.answer(3);
    assert_eq!(call["result"]["content"][0]["text"], "done", "{call}");
    // The server's log message, as it sent it.
    let log: Vec<&Value> = before
        .iter()
        .filter(|l| l["method"] == "notifications/message")
        .collect();
    assert_eq!(log.len(), 1, "{before:?}");
    assert_eq!(
        log[0]["params"],
        json!({"level": "warning", "logger": "up", "data": {"note": "halfway"}})
    );
    let progress: Vec<&Value> = before
        .iter()
        .filter(|l| l["method"] == "notifications/progress")
        .collect();
    assert_eq!(progress.len(), 2, "{before:?}");
    for (n, p) in progress.iter().enumerate() {
        assert_eq!(p["params"]["progressToken"], "host-tok", "{p}");
        // The value, not its spelling: the bridge writes numbers as floats (`1.0`).
        assert_eq!(
            p["params"]["progress"].as_f64(),
            Some(n as f64 + 1.0),
            "{p}"
        );
        assert_eq!(p["params"]["total"].as_f64(), Some(2.0), "{p}");
        assert_eq!(p["params"]["message"], format!("step {}", n + 1), "{p}");
    }

    // The server's error object as it was: code, message, data.
    bridge.send(&json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "fail", "arguments": {}}}));
    let (failed, _) = bridge.answer(4);
    assert_eq!(
        failed["error"],
        json!({"code": -32042, "message": "needs more", "data": {"why": "scripted"}}),
        "{failed}"
    );

    // The host leaves: the upstream session is deleted, the bridge exits 0.
    assert_eq!(bridge.finish(), 0);
    let delete = wait_for(&server, "a DELETE", |r| r.method == "DELETE");
    assert_eq!(delete.header("mcp-session-id"), Some("sess-1"));
}

#[test]
fn a_cancel_from_the_host_and_the_host_leaving_cancel_the_upstream_calls() {
    let server = upstream();
    let mut bridge = start(&server.url("/mcp"), test_dir("cancel"));
    bridge.initialize(&json!({}));
    bridge.send(&json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "slow", "arguments": {}}}));
    let call = wait_for(&server, "the slow call", |r| {
        r.rpc_method().as_deref() == Some("tools/call")
    });
    let wire_id = call.rpc_id().expect("a request id");
    bridge.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7, "reason": "user stop"}}));
    let cancelled = wait_for(&server, "notifications/cancelled", |r| {
        r.rpc_method().as_deref() == Some("notifications/cancelled")
    });
    let params = &cancelled.json().expect("json")["params"];
    assert_eq!(params["requestId"], wire_id, "{params}");
    assert_eq!(params["reason"], "user stop", "the host's reason: {params}");

    // A second slow call still running when the host closes stdin.
    bridge.send(&json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "slow", "arguments": {}}}));
    let started = Instant::now();
    while rpc(&server, "tools/call").len() < 2 {
        assert!(
            started.elapsed() < GUARD,
            "the second call never reached the server"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let second_id = rpc(&server, "tools/call")[1]["id"].clone();
    assert_eq!(bridge.finish(), 0);
    let cancels = rpc(&server, "notifications/cancelled");
    assert!(
        cancels.iter().any(|c| c["params"]["requestId"] == second_id
            && c["params"]["reason"] == "the host disconnected"),
        "the call still running was not cancelled upstream: {cancels:?}"
    );
    wait_for(&server, "a DELETE", |r| r.method == "DELETE");
}

#[test]
fn the_servers_sampling_request_goes_to_the_host_and_its_answer_back() {
    let server = upstream();
    let mut bridge = start(&server.url("/mcp"), test_dir("sampling"));
    bridge.initialize(&json!({"sampling": {}}));
    bridge.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "ask", "arguments": {}}}));
    let request = bridge.recv();
    assert_eq!(request["method"], "sampling/createMessage", "{request}");
    assert_eq!(request["params"]["maxTokens"], 5, "{request}");
    let answer = json!({"role": "assistant", "content": {"type": "text", "text": "hello"}, "model": "host-model"});
    bridge.send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": answer}));
    let reply = wait_for(&server, "the host's sampling answer", |r| {
        r.json()
            .is_some_and(|b| b["id"] == "up-1" && b.get("result").is_some())
    });
    assert_eq!(reply.json().expect("json")["result"], answer);
    assert_eq!(bridge.finish(), 0);
}

#[test]
fn an_unreachable_server_fails_the_hosts_initialize_and_exits_3() {
    // Port 9 (discard) is closed on a test machine's loopback: connecting is refused.
    let mut bridge = start("http://127.0.0.1:9/mcp", test_dir("unreachable"));
    bridge.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "h", "version": "1"}}}));
    let answer = bridge.recv();
    assert_eq!(answer["id"], 1, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("could not connect to http://127.0.0.1:9/mcp"),
        "{answer}"
    );
    // The terminal's hints (`-v`, the stderr shown above) are for the terminal, not the host.
    assert!(
        !message.contains("-v") && !message.contains("above"),
        "{answer}"
    );
    assert_eq!(bridge.finish(), 3);
}

/// The server going away mid-call (`mcp demo-server --listen`, killed): the host's answer
/// says what happened to the connection, with the URL, in words for a person (not the HTTP
/// client's internals such as hyper's "SendRequest"); a call after that, that nothing listens.
#[test]
fn a_server_gone_mid_call_is_said_plainly_with_its_url() {
    let mut server = Listening::demo();
    let url = server.url.clone();
    let mut bridge = start(&url, test_dir("gone"));
    bridge.initialize(&json!({}));
    bridge.send(
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "slow", "arguments": {"steps": 100, "delay_ms": 1000},
        "_meta": {"progressToken": "p"}}}),
    );
    // The first progress update: the call is running at the server.
    assert_eq!(bridge.recv()["method"], "notifications/progress");
    server.child.kill().expect("kill the server");
    server.child.wait().expect("reap the server");
    let (answer, _) = bridge.answer(2);
    assert_eq!(
        answer["error"]["message"],
        format!("mcp bridge: the server at {url} closed the connection: no response received"),
        "{answer}"
    );
    bridge.send(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}));
    let (answer, _) = bridge.answer(3);
    assert_eq!(
        answer["error"]["message"],
        format!("mcp bridge: could not connect to {url}: connection refused"),
        "{answer}"
    );
}

#[test]
fn requests_before_initialize_are_refused_and_ping_is_answered() {
    let server = upstream();
    let mut bridge = start(&server.url("/mcp"), test_dir("early"));
    bridge.send(&json!({"jsonrpc": "2.0", "id": "p", "method": "ping"}));
    assert_eq!(
        bridge.recv(),
        json!({"jsonrpc": "2.0", "id": "p", "result": {}})
    );
    bridge.send(&json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list"}));
    let refused = bridge.recv();
    assert_eq!(refused["id"], 5, "{refused}");
    assert!(refused["error"]["code"].is_i64(), "{refused}");
    assert!(
        server.requests().is_empty(),
        "nothing goes upstream before initialize"
    );
    bridge.initialize(&json!({}));
    assert_eq!(bridge.finish(), 0);
}

/// (Without a stored token the bridge logs in when a terminal is present, else it says to
/// run `mcp login`: `bridge_login.rs`, which controls the terminal.)
#[test]
fn the_stored_oauth_token_is_used() {
    let server = OAuthServer::start(3600);
    let url = server.mcp_url();

    // After `mcp login`, the bridge sends the stored token.
    let dir = test_dir("oauth-login");
    let script = dir.join("browser.sh");
    std::fs::write(&script, BROWSER).expect("browser script");
    let login = Command::new(MCP)
        .args(["login", "--url", &url])
        .env("MCP_TOKEN_STORE", dir.join("tokens.json"))
        .env("MCP_BROWSER", format!("bash {}", script.display()))
        .stdin(Stdio::null())
        .output()
        .expect("run mcp login");
    assert!(
        login.status.success(),
        "{}",
        String::from_utf8_lossy(&login.stderr)
    );
    let mut bridge = start(&url, dir);
    bridge.initialize(&json!({}));
    bridge.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let (list, _) = bridge.answer(2);
    assert_eq!(list["result"]["tools"][0]["name"], "echo", "{list}");
    assert_eq!(bridge.finish(), 0);
}

#[test]
fn the_servers_roots_request_is_answered_by_the_host() {
    let server = upstream();
    let mut bridge = start(&server.url("/mcp"), test_dir("roots"));
    bridge.initialize(&json!({"roots": {"listChanged": true}}));
    bridge.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "roots", "arguments": {}}}));
    let request = bridge.recv();
    assert_eq!(request["method"], "roots/list", "{request}");
    let roots = json!([{"uri": "file:///work/project", "name": "project"}]);
    bridge.send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": {"roots": roots}}));
    let reply = wait_for(&server, "the host's roots", |r| {
        r.json()
            .is_some_and(|b| b["id"] == "up-2" && b.get("result").is_some())
    });
    assert_eq!(reply.json().expect("json")["result"]["roots"], roots);
    // The host's notification reaches the server.
    bridge.send(&json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}));
    wait_for(&server, "roots/list_changed", |r| {
        r.rpc_method().as_deref() == Some("notifications/roots/list_changed")
    });
    assert_eq!(bridge.finish(), 0);
}

#[test]
fn bridge_listen_gives_each_http_session_its_own_upstream_session_as_that_host() {
    let server = upstream();
    let dir = test_dir("listen-url");
    let tokens = dir.join("tokens.json");
    let tokens = tokens.to_str().expect("a UTF-8 path");
    let bridge = Listening::bridge(
        &["--url", &server.url("/mcp")],
        &[("MCP_TOKEN_STORE", tokens)],
    );
    let url = &bridge.url;
    assert!(url.starts_with("http://127.0.0.1:"), "{url:?}");
    // No upstream session before a host initializes.
    assert!(
        rpc(&server, "initialize").is_empty(),
        "no startup connection"
    );

    // Our client as the host: its session gets an upstream session of its own, as itself.
    let out = Command::new(MCP)
        .args(["--url", url, "tools", "--json"])
        .output()
        .expect("run mcp tools");
    assert!(out.status.success(), "{out:?}");
    let tools: Value = serde_json::from_slice(&out.stdout).expect("JSON output");
    assert!(tools.to_string().contains("echo"), "{tools}");
    let inits = rpc(&server, "initialize");
    assert_eq!(inits.len(), 1, "the host's alone: {inits:?}");
    assert_eq!(inits[0]["params"]["clientInfo"]["name"], "mcp-term");
    // The host's DELETE ends its session, and with it the upstream session.
    let started = Instant::now();
    while server
        .requests()
        .iter()
        .filter(|r| r.method == "DELETE")
        .count()
        < 1
    {
        assert!(
            started.elapsed() < GUARD,
            "the host's upstream session was not deleted"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(bridge);
    let _ = std::fs::remove_dir_all(&dir);
}

/// An HTTP upstream that goes down and comes back: each request meanwhile gets the reason,
/// and stderr says when it was lost and when it is back, in the words a config file's stdio
/// server gets (`server "URL" was lost; reconnecting (attempt 1)`, `... is ready`), the
/// loss once however many requests find it down.
#[test]
fn a_lost_http_upstream_and_its_return_are_said_on_stderr() {
    let demo = Listening::demo();
    let url = demo.url.clone();
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let dir = test_dir("lost-http");
    let mut command = Command::new(MCP);
    command
        .args(["bridge", "--url", &url])
        .env("MCP_TOKEN_STORE", dir.join("tokens.json"))
        .stderr(common::bridge_host::stderr_file(&dir));
    let mut host = BridgeHost::spawn(command, dir);
    host.initialize(&json!({}));
    let echo = json!({"name": "echo", "arguments": {"text": "hi"}});
    host.call("tools/call", echo.clone());
    drop(demo);
    for _ in 0..2 {
        let id = host.request("tools/call", echo.clone());
        let (answer, _) = host.answer(id);
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("connection refused"), "{answer}");
    }
    let lost = format!(r#"mcp bridge: server "{url}" was lost; reconnecting (attempt 1)"#);
    assert_eq!(host.stderr().matches(&lost).count(), 1, "{}", host.stderr());
    assert!(!host.stderr().contains("is ready"), "{}", host.stderr());
    let _back = Listening::demo_on(&addr);
    host.call("tools/call", echo);
    let stderr = host.stderr();
    let ready = format!(r#"mcp bridge: server "{url}" is ready"#);
    assert!(
        stderr.find(&lost) < stderr.find(&ready) && stderr.contains(&ready),
        "{stderr}"
    );
    assert_eq!(host.finish(), 0);
}
