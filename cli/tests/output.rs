//! What `mcp` writes when its stdout is a pipe (byte for byte what the server sent), how wide
//! it renders, and when it uses colour. Runs the built binary against `mcp demo-server`.

use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

mod common;
use common::run::stderr;

const MCP: &str = env!("CARGO_BIN_EXE_mcp");

/// `mcp ARGS -- <mcp> demo-server` with stdout a pipe, `envs` set and `COLUMNS` /
/// `NO_COLOR` / `CLICOLOR_FORCE` cleared unless given.
fn demo(args: &[&str], envs: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(MCP);
    cmd.args(args)
        .args(["--", MCP, "demo-server"])
        .env_remove("COLUMNS")
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("CLICOLOR")
        .stdin(Stdio::null());
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd.output().expect("run mcp")
}

/// `mcp call echo` with `text` passed inside `--args` (so it stays a string whatever it
/// looks like).
fn echo(text: &str, extra: &[&str]) -> Output {
    let args = json!({ "text": text }).to_string();
    let mut argv = vec!["call", "echo", "--args", &args];
    argv.extend_from_slice(extra);
    demo(&argv, &[])
}

#[test]
fn piped_text_is_byte_for_byte_what_the_server_sent() {
    let text = format!(
        "    four leading spaces\n\n  {}\n\tand a tab,   runs of   spaces, no final newline",
        "long ".repeat(60)
    );
    let o = echo(&text, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout), text);
    assert_eq!(o.stdout, text.as_bytes());
}

#[test]
fn a_json_result_parses_from_the_pipe() {
    // Long enough that any wrapping at a terminal width would break a string in two.
    let graph = json!({
        "entities": (0..20).map(|i| json!({
            "name": format!("entity number {i} with a rather long name that goes past column 80"),
            "observations": ["one", "two  with  spaces", "   indented"],
        })).collect::<Vec<_>>(),
        "relations": [],
    });
    let text = serde_json::to_string_pretty(&graph).unwrap();
    let o = echo(&text, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let parsed: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}",
            String::from_utf8_lossy(&o.stdout)
        )
    });
    assert_eq!(parsed, graph);
    // Compact JSON on one very long line too.
    let o = echo(&graph.to_string(), &[]);
    assert_eq!(o.stdout, graph.to_string().as_bytes());
}

#[test]
fn extras_go_to_stderr_not_into_the_piped_text() {
    // `add` returns text and structured content that the text does not carry.
    let o = demo(&["call", "add", "a=2", "b=3"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "2 + 3 = 5");
    assert!(
        stderr(&o).contains("structured content (see it with --json)"),
        "{}",
        stderr(&o)
    );
    // `-q`: nothing but the result.
    let o = demo(&["-q", "call", "add", "a=2", "b=3"], &[]);
    assert_eq!(String::from_utf8_lossy(&o.stdout), "2 + 3 = 5");
    assert_eq!(stderr(&o), "");
    // An image: no bytes and no summary on stdout; the summary on stderr says how to get it.
    let o = demo(&["call", "image"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!String::from_utf8_lossy(&o.stdout).contains("image/png"));
    assert!(stderr(&o).contains("[image/png, "), "{}", stderr(&o));
    assert!(stderr(&o).contains("--raw"), "{}", stderr(&o));
}

#[test]
fn output_file_of_an_image_gets_its_decoded_bytes() {
    let dir = std::env::temp_dir().join(format!("mcp-cli-output-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let file = dir.join("img.png");
    let path = file.to_str().expect("a UTF-8 temp path");
    let o = demo(&["call", "image", "-o", path], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let written = std::fs::read(&file).expect("the file is written");
    assert!(
        written.starts_with(b"\x89PNG\r\n\x1a\n"),
        "a PNG, not a rendering: {written:?}"
    );
    // The same bytes `--raw` writes to stdout.
    let raw = demo(&["call", "image", "--raw"], &[]);
    assert_eq!(raw.status.code(), Some(0), "{}", stderr(&raw));
    assert_eq!(raw.stdout, written);
    assert!(!stderr(&o).contains("use --raw"), "{}", stderr(&o));
    // A text result still goes to the file as sent.
    let o = demo(&["call", "add", "a=2", "b=3", "-o", path], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(&file).expect("written"),
        "2 + 3 = 5"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_piped_resource_is_written_as_sent() {
    let o = demo(&["read", "demo://readme", "--json"], &[]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let sent = v["contents"][0]["text"].as_str().unwrap().to_owned();
    let o = demo(&["read", "demo://readme"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout), sent);
}

mod http {
    //! A scripted MCP server on 127.0.0.1 (the driver's test kit) for what the demo server
    //! cannot show: long resource URIs, SSE answers, headers.

    use mcp_driver::testing::http_server::{RecordedRequest, ScriptedHttpServer, ScriptedReply};
    use mcp_driver::testing::http_suite::{rpc_result, standard_reply};
    use serde_json::Value;

    /// A server whose answers to anything but the handshake come from `answer` (a JSON
    /// reply); `None` is a 404.
    pub fn server(
        answer: impl Fn(&RecordedRequest, &str) -> Option<ScriptedReply> + Send + Sync + 'static,
    ) -> ScriptedHttpServer {
        ScriptedHttpServer::start(move |request| {
            if let Some(reply) = standard_reply(request, "sess-1") {
                return reply;
            }
            let method = request.rpc_method().unwrap_or_default();
            answer(request, &method).unwrap_or_else(|| ScriptedReply::status(404))
        })
    }

    /// A plain JSON answer with `result`.
    pub fn json(request: &RecordedRequest, result: Value) -> Option<ScriptedReply> {
        Some(ScriptedReply::json(&rpc_result(request, result)))
    }
}

const LONG_URI: &str =
    "file:///srv/projects/knowledge-base/notes/2026/december/meeting-with-the-platform-team.md";

fn resources_server() -> mcp_driver::testing::http_server::ScriptedHttpServer {
    http::server(|request, method| match method {
        "resources/list" => http::json(
            request,
            json!({"resources": [
                {"uri": LONG_URI, "name": "meeting-with-the-platform-team.md", "mimeType": "text/markdown",
                 "description": "Notes from the meeting about the migration, with action items and owners."},
                {"uri": "file:///srv/a.txt", "name": "a.txt"}
            ]}),
        ),
        "resources/templates/list" => http::json(request, json!({"resourceTemplates": []})),
        _ => None,
    })
}

fn mcp(args: &[&str], envs: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(MCP);
    cmd.args(args)
        .env_remove("COLUMNS")
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("CLICOLOR")
        .stdin(Stdio::null());
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd.output().expect("run mcp")
}

#[test]
fn tables_keep_the_whole_uri_at_120_columns() {
    let server = resources_server();
    let url = server.url("/mcp");
    let o = mcp(&["resources", "--url", &url], &[("COLUMNS", "120")]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    let row = text.lines().nth(2).unwrap_or_default();
    assert!(row.starts_with(&format!("{LONG_URI}  ")), "{text}");
    assert!(text.lines().all(|l| l.chars().count() <= 120), "{text}");
    // A pipe without $COLUMNS: nothing is cut or wrapped, whatever the length.
    let o = mcp(&["resources", "--url", &url], &[]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.lines().any(|l| l.starts_with(LONG_URI)
            && l.ends_with(
                "Notes from the meeting about the migration, with action items and owners."
            )),
        "{text}"
    );
}

const CANARY: &str = "canary-5ecr3t-9f8e7d";

/// A server that puts the canary in a JSON answer (`initialize`), in SSE data (the
/// `tools/call` answer, after a progress notification) and in a JSON-RPC error message
/// (`tools/call` of `broken`).
fn canary_server() -> mcp_driver::testing::http_server::ScriptedHttpServer {
    use mcp_driver::testing::http_server::ScriptedReply;
    use mcp_driver::testing::http_suite::{init_result, rpc_result};
    mcp_driver::testing::http_server::ScriptedHttpServer::start(|request| {
        let method = request.rpc_method().unwrap_or_default();
        match (request.method.as_str(), method.as_str()) {
            ("POST", "initialize") => {
                let mut answer = init_result(request);
                answer["result"]["_meta"] = json!({ "access_token": CANARY });
                // Text beyond ASCII next to what the masking looks at (quotes, backslashes).
                answer["result"]["instructions"] =
                    json!("Server – instructions 🎉 \"x \\é y\" é: ünïcode=ok");
                ScriptedReply::json(&answer).with_header("mcp-session-id", "sess-1")
            }
            ("POST", "server/discover") => ScriptedReply::json(&json!({
                "jsonrpc": "2.0", "id": request.rpc_id(),
                "error": {"code": -32601, "message": "Method not found"}
            })),
            // `call` lists the tools first (to type its arguments from their schemas).
            ("POST", "tools/list") => ScriptedReply::json(&rpc_result(
                request,
                json!({ "tools": [
                    { "name": "work", "inputSchema": { "type": "object" } },
                    { "name": "broken", "inputSchema": { "type": "object" } }
                ] }),
            )),
            ("POST", "tools/call") => {
                let name = request.json().unwrap()["params"]["name"].clone();
                if name == "broken" {
                    return ScriptedReply::json(&json!({
                        "jsonrpc": "2.0", "id": request.rpc_id(),
                        "error": {"code": -32000, "message": format!("login failed for {{\"password\": \"{CANARY}\"}}")}
                    }));
                }
                let token = request.json().unwrap()["params"]["_meta"]["progressToken"].clone();
                let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress",
                    "params": {"progressToken": token, "progress": 1, "total": 2}});
                let result = rpc_result(
                    request,
                    json!({
                        "content": [{"type": "text", "text": "done"}],
                        "structuredContent": {"apiKey": CANARY, "ok": true, "note": "– 🎉 \"a \\é\""}
                    }),
                );
                ScriptedReply::sse([
                    format!("event: message\nid: 1\ndata: {progress}"),
                    format!("event: message\nid: 2\ndata: {result}"),
                ])
            }
            ("POST", _) if request.rpc_id().is_none() => ScriptedReply::status(202),
            ("GET", _) => ScriptedReply::status(405),
            ("DELETE", _) => ScriptedReply::status(200),
            _ => ScriptedReply::status(404),
        }
    })
}

/// Asserts that the canary is nowhere in what the process printed.
fn assert_no_canary(o: &Output) {
    let all = format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(o));
    assert!(!all.contains(CANARY), "the canary leaked:\n{all}");
    assert!(!all.contains("9f8e7d"), "part of the canary leaked:\n{all}");
}

/// The `<-` / `->` lines of a trace.
fn messages(err: &str) -> Vec<&str> {
    err.lines()
        .filter(|l| l.starts_with("-> ") || l.starts_with("<- "))
        .collect()
}

#[test]
fn http_trace_shows_every_message_once_whole_and_masked() {
    let server = canary_server();
    let url = format!("{}?token={CANARY}", server.url("/mcp"));
    let header = format!("X-Api-Key: {CANARY}");
    let auth = format!("Authorization: Bearer {CANARY}");
    let o = mcp(
        &[
            "-v", "call", "work", "--url", &url, "-H", &header, "-H", &auth,
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_no_canary(&o);
    let err = stderr(&o);
    let lines = messages(&err);
    // In order, each once: the probe and its error, initialize and its (JSON, no newline)
    // answer, initialized, the call, the progress and the result (SSE).
    let expected: [(&str, &str); 8] = [
        ("-> ", r#""method":"server/discover""#),
        ("<- ", r#""code":-32601"#),
        ("-> ", r#""method":"initialize""#),
        ("<- ", r#""_meta":{"access_token":"***"}"#),
        ("-> ", r#""method":"notifications/initialized""#),
        ("-> ", r#""method":"tools/call""#),
        ("<- ", r#""method":"notifications/progress""#),
        ("<- ", r#""structuredContent":{"apiKey":"***","note":"#),
    ];
    let mut at = 0;
    for (arrow, needle) in expected {
        let found = lines[at..]
            .iter()
            .position(|l| l.starts_with(arrow) && l.contains(needle))
            .unwrap_or_else(|| panic!("{arrow}{needle} missing (in order) from\n{err}"));
        at += found + 1;
        let count = lines.iter().filter(|l| l.contains(needle)).count();
        assert_eq!(count, 1, "{needle} shown {count} times in\n{err}");
    }
    // Each message line is whole JSON.
    for line in &lines {
        serde_json::from_str::<Value>(&line[3..])
            .unwrap_or_else(|e| panic!("not one whole message ({e}): {line}"));
    }
    // No SSE framing and no headers at -v.
    assert!(!err.contains("data:") && !err.contains("event:"), "{err}");
    assert!(
        !err.lines()
            .any(|l| l.starts_with("> ") || l.starts_with("< ")),
        "{err}"
    );
    assert_eq!(String::from_utf8_lossy(&o.stdout), "done");
}

#[test]
fn http_trace_at_vv_adds_headers_and_framing_masked() {
    let server = canary_server();
    let url = format!("{}?token={CANARY}", server.url("/mcp"));
    let header = format!("X-Api-Key: {CANARY}");
    let auth = format!("Authorization: Bearer {CANARY}");
    let o = mcp(
        &[
            "-vv", "call", "work", "--url", &url, "-H", &header, "-H", &auth,
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_no_canary(&o);
    let err = stderr(&o);
    for want in [
        "> POST http://127.0.0.1:",
        "/mcp?token=***",
        "> x-api-key: ***",
        "> authorization: ***",
        "> mcp-session-id: sess-1",
        "< 200 (exchange ",
        "< content-type: text/event-stream",
        "< event: message",
        "< data: {",
    ] {
        assert!(err.contains(want), "{want:?} missing from\n{err}");
    }
    // The messages are still there, each once.
    let results = messages(&err)
        .iter()
        .filter(|l| l.contains("structuredContent"))
        .count();
    assert_eq!(results, 1, "{err}");
}

#[test]
fn errors_never_print_a_secret() {
    let server = canary_server();
    // In the server's error message (JSON inside the text) and in the URL's userinfo.
    let url = server
        .url("/mcp")
        .replace("http://", &format!("http://me:{CANARY}@"));
    let url = format!("{url}?api_key={CANARY}");
    let o = mcp(&["-v", "call", "broken", "--url", &url], &[]);
    assert_ne!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("login failed"), "{}", stderr(&o));
    assert_no_canary(&o);
    // A URL that cannot be reached, quoted by the error.
    let o = mcp(
        &[
            "tools",
            "--url",
            &format!("http://127.0.0.1:9/mcp?token={CANARY}"),
        ],
        &[],
    );
    assert_ne!(o.status.code(), Some(0));
    assert_no_canary(&o);
    // A usage error quoting a malformed header.
    let o = mcp(
        &[
            "tools",
            "--url",
            "http://127.0.0.1:9/mcp",
            "-H",
            &format!("Authorization Bearer {CANARY}"),
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("Authorization Bearer ***"),
        "{}",
        stderr(&o)
    );
    assert_no_canary(&o);
    // A `${VAR}` with a secret name expanded into a config file's URL.
    let dir = std::env::temp_dir().join(format!("mcp-cli-output-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("servers.json");
    std::fs::write(
        &config,
        r#"{"mcpServers": {"far": {"url": "http://127.0.0.1:9/${MY_API_KEY}/mcp"}}}"#,
    )
    .unwrap();
    let o = mcp(
        &[
            "-v",
            "--config",
            config.to_str().unwrap(),
            "--server",
            "far",
            "tools",
        ],
        &[("MY_API_KEY", CANARY)],
    );
    assert_ne!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("127.0.0.1:9"), "{}", stderr(&o));
    assert_no_canary(&o);
    // `tools --all`: a failing server's reason is on stdout (text and JSON): masked too.
    let all = dir.join("all.json");
    std::fs::write(
        &all,
        json!({"mcpServers": {
            "far": {"command": "/nonexistent/${MY_API_KEY}/server"},
            "near": {"command": MCP, "args": ["demo-server"]},
        }})
        .to_string(),
    )
    .unwrap();
    for extra in [None, Some("--json")] {
        let mut argv = vec!["--config", all.to_str().unwrap(), "tools", "--all"];
        argv.extend(extra);
        let o = mcp(&argv, &[("MY_API_KEY", CANARY)]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(out.contains("far"), "{out}");
        assert_no_canary(&o);
    }
}

#[test]
fn stdio_trace_shows_every_message_once_and_masked() {
    let args = json!({ "text": "hi", "access_token": CANARY }).to_string();
    let env = format!("API_TOKEN={CANARY}");
    let o = demo(&["-v", "--env", &env, "call", "echo", "--args", &args], &[]);
    assert_no_canary(&o);
    let err = stderr(&o);
    let lines = messages(&err);
    let expected: [(&str, &str); 6] = [
        ("-> ", r#""method":"server/discover""#),
        ("<- ", r#""error":{"code""#),
        ("-> ", r#""method":"initialize""#),
        ("<- ", r#""serverInfo""#),
        ("-> ", r#""method":"notifications/initialized""#),
        ("-> ", r#""access_token":"***""#),
    ];
    let mut at = 0;
    for (arrow, needle) in expected {
        let found = lines[at..]
            .iter()
            .position(|l| l.starts_with(arrow) && l.contains(needle))
            .unwrap_or_else(|| panic!("{arrow}{needle} missing (in order) from\n{err}"));
        at += found + 1;
        let count = lines.iter().filter(|l| l.contains(needle)).count();
        assert_eq!(count, 1, "{needle} shown {count} times in\n{err}");
    }
    // The call's answer, once, after the call (`call` lists the tools first, so its id is
    // whatever the call line says).
    let call: Value = lines
        .iter()
        .find(|l| l.starts_with("-> ") && l.contains(r#""method":"tools/call""#))
        .map(|l| serde_json::from_str(&l[3..]).expect("a whole message"))
        .unwrap_or_else(|| panic!("no tools/call in\n{err}"));
    let answer_id = format!(r#""id":{}"#, call["id"]);
    assert_eq!(
        lines[at..]
            .iter()
            .filter(|l| l.starts_with("<- ") && l.contains(&answer_id))
            .count(),
        1,
        "{err}"
    );
    for line in &lines {
        serde_json::from_str::<Value>(&line[3..])
            .unwrap_or_else(|e| panic!("not one whole message ({e}): {line}"));
    }
}

fn has_colour(bytes: &[u8]) -> bool {
    bytes.windows(2).any(|w| w == b"\x1b[")
}

#[test]
fn colour_only_when_asked_or_on_a_terminal() {
    // A pipe under `auto`: no colour on stdout or stderr.
    let o = demo(&["tools"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        !has_colour(&o.stdout),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let o = demo(&["call", "fail", "message=boom"], &[]);
    assert!(
        stderr(&o).lines().any(|l| l.starts_with("error: ")),
        "{}",
        stderr(&o)
    );
    assert!(
        !has_colour(&o.stderr) && !has_colour(&o.stdout),
        "{}",
        stderr(&o)
    );

    // `--color always`: the table header, the tool names and the labels; never the
    // server's text.
    let o = demo(&["--color", "always", "tools"], &[]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.starts_with("\x1b[1mNAME"), "{text:?}");
    assert!(text.contains("\n\x1b[1m\x1b[36mecho\x1b[0m\n"), "{text:?}");
    let o = demo(&["--color", "always", "call", "fail", "message=boom"], &[]);
    assert!(
        stderr(&o).contains("\n\x1b[1m\x1b[31merror:\x1b[0m "),
        "{:?}",
        stderr(&o)
    );
    assert!(
        stderr(&o).contains("\x1b[1m\x1b[32mhint:\x1b[0m "),
        "{:?}",
        stderr(&o)
    );
    assert_eq!(String::from_utf8_lossy(&o.stdout), "boom");
    // `always` beats NO_COLOR (an explicit flag wins).
    let o = demo(&["--color", "always", "tools"], &[("NO_COLOR", "1")]);
    assert!(has_colour(&o.stdout));

    // `auto` where colour is wanted (CLICOLOR_FORCE stands in for a terminal here) ...
    let o = demo(&["tools"], &[("CLICOLOR_FORCE", "1")]);
    assert!(has_colour(&o.stdout));
    // ... but not with NO_COLOR, nor with `never`.
    let o = demo(&["tools"], &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]);
    assert!(!has_colour(&o.stdout) && !has_colour(&o.stderr));
    let o = demo(&["--color", "never", "tools"], &[("CLICOLOR_FORCE", "1")]);
    assert!(!has_colour(&o.stdout));
}

/// A server that prints a banner on stdout before speaking JSON-RPC.
fn bannered(args: &[&str]) -> Output {
    let script = format!("echo 'Server v1 ready token=hunter2'; exec '{MCP}' demo-server");
    Command::new(MCP)
        .args(args)
        .args(["--", "sh", "-c", &script])
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .expect("run mcp")
}

#[test]
fn what_the_client_skips_is_a_warning_on_stderr_never_on_stdout() {
    let o = bannered(&["call", "echo", "text=hi"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "hi");
    let err = stderr(&o);
    // The server is named by its command line as typed (shell-quoted), its secret masked.
    let server = format!("sh -c \"echo 'Server v1 ready token=***'; exec '{MCP}' demo-server\"");
    assert!(
        err.contains(&format!(
            "warning: {server}: skipped a non-JSON message: Server v1 ready token=***"
        )),
        "{err}"
    );
    assert!(!err.contains("hunter2"), "{err}");
    // The era negotiation is routine: not a warning, shown from -vv as debug.
    assert!(!err.contains("changed protocol era"), "{err}");
    let o = bannered(&["-q", "call", "echo", "text=hi"]);
    assert!(
        stderr(&o).contains("skipped a non-JSON message"),
        "-q still warns"
    );
    let o = bannered(&["-vv", "call", "echo", "text=hi"]);
    assert!(
        stderr(&o).contains(&format!("debug: {server}: changed protocol era")),
        "{}",
        stderr(&o)
    );
}
