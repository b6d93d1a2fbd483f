//! What a host, a client and the user are told when something goes wrong around `mcp bridge`
//! (and `mcp demo-server --listen`, which shares the HTTP server): every server of a config
//! file failing, a `--listen` bridge whose upstream is down or killed, a request to the
//! wrong path, a wrong bearer token, a body that is not JSON-RPC. The built binary, as a
//! user runs it; our own client (`mcp --url`) and raw HTTP/1.1 on 127.0.0.1.

mod common;

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::process::{Command, Output, Stdio};

use common::bridge_host::{MCP, scratch_dir};
use common::listening::Listening;
use common::raw_http::post_text;
use common::run::mcp;
use serde_json::{Value, json};

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"host","version":"1"}}}"#;

/// The `--json` error object of `out` (stdout).
fn json_error(out: &Output) -> Value {
    let value: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "a JSON error object on stdout ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    value["error"].clone()
}

/// A loopback port nothing listens on (bound, then freed).
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("local addr").port()
}

/// Every server of the file fails to start: the host's `initialize` is refused naming each
/// server with its reason (in the message and in `data.servers`), the terminal says the
/// same with a hint about the entries (not about a closed connection), and the bridge
/// exits 3.
#[test]
fn every_server_failing_names_each_one_to_the_host_and_the_user() {
    let dir = scratch_dir("bridge-errors", "none-up");
    let config = json!({"mcpServers": {
        "gone": {"command": "mcp-no-such-server-program"},
        "quits": {"command": "sh", "args": ["-c", "echo cannot open the db >&2; exit 2"]},
        "typo": {"comand": "x"},
    }});
    let file = dir.join("servers.json");
    std::fs::write(&file, config.to_string()).expect("write config");
    let mut bridge = Command::new(MCP)
        .args(["bridge", "--config", file.to_str().expect("utf-8 path")])
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn mcp bridge --config");
    let mut stdin = bridge.stdin.take().expect("piped stdin");
    writeln!(stdin, "{INITIALIZE}").expect("send initialize");
    let out = bridge.wait_with_output().expect("the bridge's output");
    drop(stdin);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");

    let answer: Value = serde_json::from_slice(&out.stdout).expect("one JSON-RPC line");
    assert_eq!(answer["id"], 1);
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    for said in [
        r#"server "gone": could not start `mcp-no-such-server-program`"#,
        r#"server "quits": exited with code 2: cannot open the db"#,
        r#"server "typo": configuration error"#,
    ] {
        assert!(message.contains(said), "{said:?} in {message}");
    }
    let servers = &answer["error"]["data"]["servers"];
    let names: Vec<&str> = servers
        .as_array()
        .expect("data.servers")
        .iter()
        .filter_map(|s| s["name"].as_str())
        .collect();
    assert_eq!(names, ["typo", "gone", "quits"], "{servers}");
    assert!(
        servers[2]["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("cannot open the db")
    );

    assert!(
        stderr.contains("error: no server of the config file came up: server "),
        "{stderr}"
    );
    assert!(
        stderr.contains("hint: fix the entry of each server named above"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("tools --all"),
        "no command that lists them again: {stderr}"
    );
    assert!(
        !stderr.contains("connection ended"),
        "no closed-connection hint: {stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `mcp tools --all` of a file whose every server fails says the same, with `--json` each
/// server in `servers`.
#[test]
fn tools_all_with_no_server_up_names_each_one() {
    let dir = scratch_dir("bridge-errors", "tools-all");
    let config = json!({"mcpServers": {"quits": {"command": "false"}}});
    let file = dir.join("servers.json");
    std::fs::write(&file, config.to_string()).expect("write config");
    let out = Command::new(MCP)
        .args([
            "--config",
            file.to_str().expect("utf-8 path"),
            "tools",
            "--all",
            "--json",
        ])
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .stdin(Stdio::null())
        .output()
        .expect("run mcp tools --all");
    assert_eq!(out.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(r#"no server of the config file came up: server "quits": failed: "#),
        "{stderr}"
    );
    assert!(!stderr.contains("--era legacy"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A `--listen --url` bridge whose upstream is down answers `initialize` with an error that
/// names the upstream; our client says the bridge is up and its upstream failed, and does
/// not hint at the URL it used.
#[test]
fn a_listen_bridge_whose_upstream_is_down_names_the_upstream_not_the_bridges_url() {
    let upstream = format!("http://127.0.0.1:{}/mcp", closed_port());
    let bridge = Listening::bridge(&["--url", &upstream], &[]);

    let raw = post_text(&bridge.url, "/mcp", &[], INITIALIZE);
    let error = &raw.json()["error"];
    assert_eq!(error["code"], -32603, "{error}");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("mcp bridge: the upstream server failed: could not connect to ")
            && message.contains(&upstream),
        "{message}"
    );
    assert_eq!(error["data"]["mcpBridge"]["upstream"], upstream.as_str());
    assert_eq!(error["data"]["mcpBridge"]["failure"], "connection_refused");

    let out = mcp(&["--url", &bridge.url, "tools", "--json"]);
    assert_eq!(out.status.code(), Some(3));
    let error = json_error(&out);
    assert_eq!(error["code"], "upstream_failed", "{error}");
    assert_eq!(error["upstream"], upstream.as_str());
    assert_eq!(error["upstreamCode"], "connection_refused");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(&format!("the bridge at {} is up", bridge.url)),
        "{message}"
    );
    let hint = error["hint"].as_str().unwrap_or_default();
    assert!(hint.contains(&upstream), "the upstream named: {hint}");
    assert!(
        !hint.contains("is the URL right") && !hint.contains("is the server running"),
        "the client's own URL is not blamed: {hint}"
    );
}

/// A `--listen` session whose stdio server is killed by a signal: the call in flight is
/// answered with which signal killed the bridge's server process, and the client says so.
#[test]
fn a_listen_sessions_killed_server_is_named_with_its_signal() {
    let dir = scratch_dir("bridge-errors", "killed");
    let pid_file = dir.join("pid");
    let script = format!(
        "echo $$ > '{}'; exec '{MCP}' demo-server",
        pid_file.display()
    );
    // `-v`: the wire trace on stderr says when the call reached the server.
    let bridge = Listening::bridge(&["-v", "--", "sh", "-c", &script], &[]);
    let client = Command::new(MCP)
        .args([
            "--url",
            &bridge.url,
            "call",
            "--json",
            "slow",
            "steps=100",
            "delay_ms=600",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn mcp call");
    // The call itself (`mcp call` lists the tools first: killed then, it would be a new
    // session's server that serves the call).
    bridge.wait_stderr(r#""method":"tools/call""#);
    let pid = std::fs::read_to_string(&pid_file).expect("the server's pid");
    let status = Command::new("kill")
        .args(["-TERM", pid.trim()])
        .status()
        .expect("run kill");
    assert!(status.success());

    let out = client.wait_with_output().expect("the client's output");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    let error = json_error(&out);
    assert_eq!(error["code"], "upstream_failed", "{error}");
    assert_eq!(error["upstreamCode"], "server_exited", "{error}");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("tools/call: the bridge at ")
            && message.contains("was killed by signal 15 (SIGTERM)"),
        "{message}"
    );
    let hint = error["hint"].as_str().unwrap_or_default();
    assert!(hint.contains("server process"), "{hint}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A request to another path than `/mcp` gets a 404 that names the endpoint, from the
/// demo server and from the bridge; our client shows it.
#[test]
fn a_wrong_path_is_told_where_the_endpoint_is() {
    let demo = Listening::demo();
    let bridge = Listening::bridge(&["--", MCP, "demo-server"], &[]);
    for url in [&demo.url, &bridge.url] {
        for path in ["/sse", "/"] {
            let reply = post_text(url, path, &[], INITIALIZE);
            assert_eq!(reply.status, 404);
            assert_eq!(
                reply.body,
                format!("no MCP endpoint at {path}; this server's MCP endpoint is /mcp")
            );
        }
    }
    let sse = demo.url.replace("/mcp", "/sse");
    let out = mcp(&["--url", &sse, "tools"]);
    assert_eq!(out.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no MCP endpoint at /sse; this server's MCP endpoint is /mcp"),
        "{stderr}"
    );
}

/// A wrong bearer token is told apart from a missing one: by the bridge (`invalid_token`
/// in the challenge, the body) and by our client (`auth_failed`, not `login_required`);
/// the token is echoed nowhere.
#[test]
fn a_wrong_bearer_token_is_not_called_missing() {
    let bridge = Listening::bridge(
        &[
            "--bearer-token-env",
            "BRIDGE_ERRORS_TOKEN",
            "--",
            MCP,
            "demo-server",
        ],
        &[("BRIDGE_ERRORS_TOKEN", "s3cret")],
    );
    let missing = post_text(&bridge.url, "/mcp", &[], INITIALIZE);
    assert_eq!(missing.status, 401);
    assert_eq!(missing.header("www-authenticate"), Some("Bearer"));
    let said = missing.json()["error"]["message"].to_string();
    assert!(said.contains("the request has none"), "{said}");

    let wrong = post_text(
        &bridge.url,
        "/mcp",
        &[("Authorization", "Bearer wrong-t0ken")],
        INITIALIZE,
    );
    assert_eq!(wrong.status, 401);
    let challenge = wrong.header("www-authenticate").unwrap_or_default();
    assert!(
        challenge.contains(r#"error="invalid_token""#),
        "{challenge}"
    );
    let said = wrong.json()["error"]["message"].to_string();
    assert!(
        said.contains("is not the one this server requires"),
        "{said}"
    );
    assert!(!wrong.body.contains("wrong-t0ken") && !challenge.contains("wrong-t0ken"));

    let out = mcp(&["--url", &bridge.url, "tools", "--json"]);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(json_error(&out)["code"], "login_required");

    let out = mcp(&[
        "--url",
        &bridge.url,
        "-H",
        "Authorization: Bearer wrong-t0ken",
        "tools",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(3));
    let error = json_error(&out);
    assert_eq!(error["code"], "auth_failed", "{error}");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("refused the access token sent"),
        "{message}"
    );
    let everything = format!("{}{}", error, String::from_utf8_lossy(&out.stderr));
    assert!(!everything.contains("wrong-t0ken"), "{everything}");
    assert!(!everything.contains("mcp login"), "{everything}");
}

/// A body that is not JSON gets -32700 and a JSON value that is not JSON-RPC -32600, both
/// with HTTP 400, from the demo server and from the bridge.
#[test]
fn garbage_is_a_parse_error_and_json_that_is_not_json_rpc_an_invalid_request() {
    let demo = Listening::demo();
    let bridge = Listening::bridge(&["--", MCP, "demo-server"], &[]);
    for url in [&demo.url, &bridge.url] {
        for (body, code) in [
            ("garbage", -32700),
            ("{\"jsonrpc\": ", -32700),
            ("{}", -32600),
            ("[]", -32600),
            ("42", -32600),
        ] {
            let reply = post_text(url, "/mcp", &[], body);
            assert_eq!(reply.status, 400, "{body}");
            let error = &reply.json()["error"];
            assert_eq!(error["code"], code, "{body}: {error}");
        }
    }
}

/// A web server that is no MCP server, on 127.0.0.1: POST gets `post` (status line and
/// body), GET gets `get`; each answer closes its connection. Serves until the test ends.
fn web_server(post: (&'static str, &'static str), get: (&'static str, &'static str)) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}/mcp", listener.local_addr().expect("local addr"));
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().expect("clone the stream"));
            let mut first = String::new();
            if reader.read_line(&mut first).is_err() {
                continue;
            }
            // The head, then the body it announces.
            let mut length = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
                    break;
                }
                if let Some((name, value)) = line.split_once(':')
                    && name.eq_ignore_ascii_case("content-length")
                {
                    length = value.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            let (status, page) = if first.starts_with("POST") { post } else { get };
            let answer = format!(
                "HTTP/1.1 {status}\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n{page}",
                page.len()
            );
            let _ = stream.write_all(answer.as_bytes());
        }
    });
    url
}

/// `mcp --url` and `mcp bridge --url` pointed at a web server that is no MCP server: the
/// error says so plainly, with what each attempt got (both when the legacy fallback was
/// tried too), and hints at the URL.
#[test]
fn a_web_server_that_is_no_mcp_server_is_said_to_be_one() {
    let express = web_server(
        ("404 Not Found", "Cannot POST /mcp"),
        ("404 Not Found", "Cannot GET /mcp"),
    );
    let listing = web_server(
        ("404 Not Found", "Cannot POST /mcp"),
        (
            "200 OK",
            "<html><body>Directory listing for /</body></html>",
        ),
    );
    let python = web_server(
        (
            "501 Not Implemented",
            "Error response. Message: Unsupported method ('POST').",
        ),
        (
            "200 OK",
            "<html><body>Directory listing for /</body></html>",
        ),
    );
    for (url, said) in [
        (
            &express,
            "the initialize POST got HTTP 404 Not Found, and the legacy HTTP+SSE GET tried next \
             failed: HTTP 404 Not Found: Cannot GET /mcp",
        ),
        (
            &listing,
            "the initialize POST got HTTP 404 Not Found, and the legacy HTTP+SSE GET tried next \
             failed: HTTP 200 with text/html, not a text/event-stream stream",
        ),
        (
            &python,
            "it answered the initialize POST with HTTP 501 Not Implemented: Error response. \
             Message: Unsupported method ('POST').",
        ),
    ] {
        let out = mcp(&["--url", url, "tools", "--json"]);
        assert_eq!(out.status.code(), Some(3));
        let error = json_error(&out);
        assert_eq!(error["code"], "not_mcp", "{error}");
        assert_eq!(
            error["message"],
            format!("{url} does not look like an MCP server: {said}")
        );
        assert!(error["hint"].as_str().unwrap_or_default().contains("/mcp"));

        // Through the stdio bridge, the host is told the same of its upstream.
        let mut bridge = Command::new(MCP)
            .args(["bridge", "--url", url])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn mcp bridge --url");
        let mut stdin = bridge.stdin.take().expect("piped stdin");
        writeln!(stdin, "{INITIALIZE}").expect("send initialize");
        let out = bridge.wait_with_output().expect("the bridge's output");
        drop(stdin);
        assert_eq!(out.status.code(), Some(3));
        let answer: Value = serde_json::from_slice(&out.stdout).expect("one JSON-RPC line");
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(&format!("does not look like an MCP server: {said}")),
            "{message}"
        );
        assert_eq!(answer["error"]["data"]["mcpBridge"]["failure"], "not_mcp");
    }
}
