//! `mcp demo-server --listen 127.0.0.1:0` (the built binary) used by the built `mcp` client
//! over Streamable HTTP: the URL line on stderr, tools and calls, progress, the resource
//! subscription's updates on the GET stream (and in protocol 2026-07-28 on a listen's own
//! stream), stateless mode, the bearer token, SIGTERM and Ctrl-C, the hints of an address
//! that cannot be listened on.
//! Only 127.0.0.1 is used; the servers are killed when a test ends.

use std::io::{BufRead as _, BufReader, Read};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use serde_json::Value;

mod common;
use common::listening::Listening;
use common::port_in_use::{assert_port_in_use, taken_address};
use common::run::{stderr, stdout};

const MCP: &str = env!("CARGO_BIN_EXE_mcp");

/// How long a line the test waits for may take (an anti-hang guard, not a timing).
const GUARD: Duration = Duration::from_secs(30);

/// `mcp --url URL ARGS` against `server`.
fn mcp_at(server: &Listening, args: &[&str]) -> Output {
    Command::new(MCP)
        .args(["--url", &server.url])
        .args(args)
        .env("COLUMNS", "100")
        .stdin(Stdio::null())
        .output()
        .expect("run mcp")
}

/// The lines `from` yields, read on a thread of their own (so its writer never blocks).
fn lines_of(from: impl Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        for line in BufReader::new(from).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    rx
}

/// Runs `mcp --url URL [era] watch --subscribe demo://clock --json` against `server` and
/// waits for the first `notifications/resources/updated` it prints: the running watch (the
/// caller kills it) and that notification.
fn watch_the_clock(server: &Listening, era: &[&str]) -> (Child, Value) {
    let mut watch = Command::new(MCP)
        .args(["--url", &server.url])
        .args(era)
        .args(["watch", "--subscribe", "demo://clock", "--json"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("run mcp watch");
    let rx = lines_of(watch.stdout.take().expect("piped stdout"));
    let update = loop {
        let line = rx.recv_timeout(GUARD).expect("a notification line");
        let v: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
        if v["method"] == "notifications/resources/updated" {
            break v;
        }
    };
    (watch, update)
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", stdout(o)))
}

#[test]
fn the_url_line_names_the_bound_port_and_the_endpoint() {
    let server = Listening::demo_with(&[], &[]);
    let rest = server
        .url
        .strip_prefix("http://127.0.0.1:")
        .and_then(|r| r.strip_suffix("/mcp"))
        .unwrap_or_else(|| panic!("{:?}", server.url));
    let port: u16 = rest.parse().expect("a port");
    assert_ne!(port, 0, "the port the OS chose");
}

#[test]
fn tools_and_calls_over_http() {
    let server = Listening::demo_with(&[], &[]);
    let o = mcp_at(&server, &["tools", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let names: Vec<String> = json(&o)["tools"]
        .as_array()
        .expect("a tools array")
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect();
    for tool in ["echo", "add", "slow", "ask", "image", "fail"] {
        assert!(names.iter().any(|n| n == tool), "{tool} in {names:?}");
    }
    let o = mcp_at(&server, &["call", "add", "a=2", "b=3", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(json(&o)["structuredContent"]["sum"], 5.0);
    // Progress notifications go on the call's own SSE stream, then the answer.
    let o = mcp_at(&server, &["call", "slow", "steps=3", "delay_ms=10"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("finished 3 steps"), "{}", stdout(&o));
    let o = mcp_at(&server, &["read", "demo://readme"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("MCP demo server"), "{}", stdout(&o));
    let o = mcp_at(&server, &["call", "fail"]);
    assert_ne!(o.status.code(), Some(0), "a tool error is an error");
}

#[test]
fn resource_updates_arrive_on_the_get_stream() {
    let server = Listening::demo_with(&[], &[]);
    let (mut watch, update) = watch_the_clock(&server, &[]);
    assert_eq!(update["params"]["uri"], "demo://clock");
    let _ = watch.kill();
    let _ = watch.wait();
}

/// Protocol 2026-07-28 (`--modern`, `--era modern`): the subscription is a
/// `subscriptions/listen` POST whose SSE stream carries the clock's updates, tagged with the
/// listen's id; the client going away ends the listen.
#[test]
fn a_modern_listen_gets_the_updates_on_its_own_stream() {
    let server = Listening::demo_with(&["--modern"], &[]);
    let (mut watch, update) = watch_the_clock(&server, &["--era", "modern"]);
    assert_eq!(update["params"]["uri"], "demo://clock");
    assert!(
        update["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"].is_number(),
        "{update}"
    );
    let _ = watch.kill();
    let _ = watch.wait();
    // The server heard the listen open, and end once its stream was gone.
    let mut heard = Vec::new();
    while !heard
        .iter()
        .any(|l: &String| l.contains("ended: Cancelled"))
    {
        let line = server
            .stderr
            .recv_timeout(GUARD)
            .unwrap_or_else(|_| panic!("the listen never ended: {heard:?}"));
        heard.push(line);
    }
    assert!(
        heard
            .iter()
            .any(|l| l.contains("opened: [\"demo://clock\"]")),
        "{heard:?}"
    );
}

#[test]
fn stateless_mode_serves_each_post_alone() {
    let server = Listening::demo_with(&["--stateless"], &[]);
    let o = mcp_at(&server, &["call", "add", "a=20", "b=22", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(json(&o)["structuredContent"]["sum"], 42.0);
    let o = mcp_at(&server, &["tools", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(json(&o)["tools"].as_array().is_some_and(|t| !t.is_empty()));
}

#[test]
fn the_bearer_token_comes_from_the_environment_and_is_required() {
    let server = Listening::demo_with(
        &["--bearer-token-env", "DEMO_TEST_TOKEN"],
        &[("DEMO_TEST_TOKEN", "tok-123")],
    );
    let o = mcp_at(&server, &["tools"]);
    assert_ne!(o.status.code(), Some(0), "refused without the token");
    assert!(stderr(&o).contains("needs authorization"), "{}", stderr(&o));
    // A static token, no OAuth: the hint says how to send it, not to log in.
    assert!(
        stderr(&o).contains("-H 'Authorization: Bearer ***' (*** = your token)"),
        "{}",
        stderr(&o)
    );
    assert!(!stderr(&o).contains("mcp login"), "{}", stderr(&o));
    let o = mcp_at(
        &server,
        &[
            "-H",
            "Authorization: Bearer tok-123",
            "call",
            "add",
            "a=1",
            "b=1",
            "--json",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(json(&o)["structuredContent"]["sum"], 2.0);

    // A token that was sent and refused is `auth_failed`, and the hint says so: it does not
    // ask for a token the user already sends.
    let o = mcp_at(
        &server,
        &["-H", "Authorization: Bearer wrong", "--json", "ping"],
    );
    assert_eq!(o.status.code(), Some(3), "{}", stdout(&o));
    let error = &json(&o)["error"];
    assert_eq!(error["code"], "auth_failed", "{error}");
    let hint = error["hint"].as_str().unwrap_or_default();
    assert!(hint.contains("refused the token that was sent"), "{hint}");
    assert!(!hint.contains("send it"), "{hint}");
    assert!(
        !stdout(&o).contains("wrong"),
        "the token is masked: {}",
        stdout(&o)
    );

    // `mcp login` on a server that offers no OAuth says that, as `mcp tools` does, instead
    // of the failure of an OAuth registration the server never offered.
    let store = std::env::temp_dir().join(format!("mcp-demo-http-tok-{}.json", std::process::id()));
    let o = mcp_at(
        &server,
        &[
            "--token-store",
            store.to_str().expect("a UTF-8 temp path"),
            "login",
            "--no-browser",
            "--wait",
            "2s",
        ],
    );
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("offers no OAuth login")
            && stderr(&o).contains("-H 'Authorization: Bearer ***'"),
        "{}",
        stderr(&o)
    );
    assert!(
        !stderr(&o).contains("Registration failed"),
        "{}",
        stderr(&o)
    );
    assert!(!store.exists(), "nothing stored");

    // `tools --all` of a config with this server and no token says what to do, as the
    // single-server path does.
    let config =
        std::env::temp_dir().join(format!("mcp-demo-http-cfg-{}.json", std::process::id()));
    let entries = serde_json::json!({ "mcpServers": { "protected": { "url": server.url } } });
    std::fs::write(&config, entries.to_string()).expect("write the config");
    let o = Command::new(MCP)
        .args([
            "--config",
            config.to_str().expect("UTF-8"),
            "tools",
            "--all",
        ])
        .env("MCP_TOKEN_STORE", &store)
        .stdin(Stdio::null())
        .output()
        .expect("run mcp");
    let _ = std::fs::remove_file(&config);
    assert!(
        stdout(&o).contains(&format!(
            "protected: failed: needs authorization (HTTP status 401): run: mcp login --url {}",
            server.url
        )),
        "{}",
        stdout(&o)
    );

    // A server meant to be protected never starts open.
    let o = Command::new(MCP)
        .args(["demo-server", "--listen", "127.0.0.1:0"])
        .args(["--bearer-token-env", "DEMO_TEST_TOKEN_UNSET"])
        .env_remove("DEMO_TEST_TOKEN_UNSET")
        .stdin(Stdio::null())
        .output()
        .expect("run mcp");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("DEMO_TEST_TOKEN_UNSET"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn sigterm_and_ctrl_c_end_the_server_cleanly() {
    for signal in ["-TERM", "-INT"] {
        let mut server = Listening::demo_with(&[], &[]);
        let o = mcp_at(&server, &["ping"]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let pid = server.child.id().to_string();
        let killed = Command::new("kill")
            .args([signal, &pid])
            .status()
            .expect("run kill");
        assert!(killed.success());
        let status = server.child.wait().expect("wait");
        assert_eq!(status.code(), Some(0), "{signal}");
        // One line says so, no error. (The reader ends with the server's stderr.)
        let said: Vec<String> = server.stderr.iter().filter(|l| !l.is_empty()).collect();
        assert_eq!(
            said,
            ["mcp demo-server: stopping: closing every session"],
            "{signal}"
        );
    }
}

#[test]
fn a_port_in_use_or_a_bare_port_gets_a_hint_of_what_to_do() {
    let (_taken, addr) = taken_address();
    let run = |addr: &str| {
        Command::new(MCP)
            .args(["demo-server", "--listen", addr])
            .stdin(Stdio::null())
            .output()
            .expect("run mcp demo-server")
    };
    assert_port_in_use(&run(&addr), &addr);
    let o = run("8080");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("use 127.0.0.1:8080"), "{}", stderr(&o));
}

#[test]
fn a_tool_asks_the_client_on_its_own_call_and_hears_the_answer() {
    let server = Listening::demo_with(&[], &[]);
    // Without a terminal the client declines; that answer travels back to the tool.
    let o = mcp_at(&server, &["call", "model", "prompt=hello"]);
    assert!(
        stderr(&o).contains("declined the server's sampling request"),
        "the client got the request: {}",
        stderr(&o)
    );
    assert!(
        format!("{}{}", stdout(&o), stderr(&o)).contains("the client declined to sample"),
        "the tool got the answer: {} {}",
        stdout(&o),
        stderr(&o)
    );
}
