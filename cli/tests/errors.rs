//! Errors by class, the `--json` error object, and tool arguments typed from the schema: the
//! built `mcp` binary against `mcp demo-server` (stdio) and a scripted Streamable HTTP
//! server on 127.0.0.1 that answers like a TypeScript or Python SDK server would.

use std::io::Write as _;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use mcp_driver::testing::http_server::{RecordedRequest, ScriptedHttpServer, ScriptedReply};
use mcp_driver::testing::http_suite::{rpc_result, standard_reply};
use serde_json::{Value, json};

mod common;
use common::run::{demo, json_out, mcp, stderr, stdout};

const MCP: &str = env!("CARGO_BIN_EXE_mcp");

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mcp-cli-errors-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn error(code: i64, message: &str, request: &RecordedRequest) -> ScriptedReply {
    ScriptedReply::json(&json!({
        "jsonrpc": "2.0", "id": request.rpc_id(),
        "error": { "code": code, "message": message },
    }))
}

fn text_result(request: &RecordedRequest, text: &str, is_error: bool) -> ScriptedReply {
    ScriptedReply::json(&rpc_result(
        request,
        json!({ "content": [{ "type": "text", "text": text }], "isError": is_error }),
    ))
}

/// A Streamable HTTP server with the habits of the SDKs:
/// - `echo {message: string, count?: integer, tags?: array}` answers with its arguments as
///   JSON text (so a test sees the types that were sent);
/// - `add {a, b: number}` always answers -32602 with a TypeScript-style message that already
///   carries the `MCP error -32602:` prefix;
/// - `strict {n}` answers `isError` with a -32602 text, as TypeScript servers report input
///   validation errors;
/// - `boom` answers HTTP 500, `ping` a -32603 with the prefix in its message;
/// - an unlisted tool whose name starts with `py` gets a Python-style `isError` result
///   (`Unknown tool: …`), any other unlisted tool a TypeScript-style -32602.
fn sdk_like_server() -> ScriptedHttpServer {
    ScriptedHttpServer::start(|request| {
        if let Some(reply) = standard_reply(request, "sess-errors") {
            return reply;
        }
        let body = request.json().unwrap_or_default();
        match request.rpc_method().as_deref() {
            Some("tools/list") => ScriptedReply::json(&rpc_result(
                request,
                json!({ "tools": [
                    { "name": "echo", "inputSchema": { "type": "object",
                        "properties": {
                            "message": { "type": "string" },
                            "count": { "type": "integer" },
                            "tags": { "type": "array", "items": { "type": "string" } },
                        },
                        "required": ["message"] } },
                    { "name": "add", "inputSchema": { "type": "object",
                        "properties": { "a": { "type": "number" }, "b": { "type": "number" } },
                        "required": ["a", "b"] } },
                    { "name": "boom", "inputSchema": { "type": "object" } },
                    { "name": "strict", "inputSchema": { "type": "object",
                        "properties": { "n": {} }, "required": ["n"] } },
                ]}),
            )),
            Some("tools/call") => {
                let name = body["params"]["name"].as_str().unwrap_or_default();
                match name {
                    "echo" => text_result(request, &body["params"]["arguments"].to_string(), false),
                    "add" => error(
                        -32602,
                        "MCP error -32602: Invalid arguments for tool add: b: Expected number",
                        request,
                    ),
                    "strict" => text_result(
                        request,
                        "MCP error -32602: Input validation error: n must be positive",
                        true,
                    ),
                    "boom" => ScriptedReply::status(500)
                        .with_header("content-type", "text/plain")
                        .with_body(b"upstream exploded".to_vec()),
                    py if py.starts_with("py") => {
                        text_result(request, &format!("Unknown tool: {py}"), true)
                    }
                    other => error(
                        -32602,
                        &format!("MCP error -32602: Tool {other} not found"),
                        request,
                    ),
                }
            }
            Some("ping") => error(-32603, "MCP error -32603: internal boom", request),
            _ => error(-32601, "Method not found", request),
        }
    })
}

fn tool_calls(server: &ScriptedHttpServer) -> usize {
    server
        .requests()
        .iter()
        .filter(|r| r.rpc_method().as_deref() == Some("tools/call"))
        .count()
}

#[test]
fn a_misspelt_tool_prompt_or_resource_gets_did_you_mean() {
    let o = demo(&["call", "ecko", "text=hi"]);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(stdout(&o).is_empty(), "{}", stdout(&o));
    let err = stderr(&o);
    assert!(
        err.contains("error: tool `ecko` not found on mcp-demo"),
        "{err}"
    );
    assert!(err.contains("hint: did you mean `echo`?"), "{err}");
    assert!(!err.contains("the tool ran"), "{err}");

    let o = demo(&["prompt", "summarise", "text=x"]);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("prompt `summarise` not found"), "{err}");
    assert!(
        err.contains("did you mean `summarize`? `mcp prompts`"),
        "{err}"
    );
    assert!(!err.contains("mcp tools"), "{err}");

    let o = demo(&["read", "demo://readm"]);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("resource `demo://readm` not found"), "{err}");
    assert!(
        err.contains("did you mean `demo://readme`? `mcp resources`"),
        "{err}"
    );
    assert!(!err.contains("mcp tools"), "{err}");

    // A URI that a template matches is not "not found" by the list.
    let o = demo(&["read", "demo://notes/x"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn not_found_over_a_json_rpc_error_or_an_is_error_result() {
    let server = sdk_like_server();
    let url = server.url("/mcp");
    // TypeScript style: -32602 "MCP error -32602: Tool ehco not found".
    let o = mcp(&["--url", &url, "call", "ehco", "message=hi"]);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("tool `ehco` not found"), "{err}");
    assert!(err.contains("did you mean `echo`?"), "{err}");
    // Python style: isError with "Unknown tool: pyecho"; nothing goes to stdout.
    let o = mcp(&["--url", &url, "call", "pyecho", "--json"]);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    let v = json_out(&o);
    assert_eq!(v["error"]["code"], "tool_not_found");
    assert_eq!(v["error"]["didYouMean"], json!(["echo"]));
    assert_eq!(v["error"]["serverMessage"], "Unknown tool: pyecho");
}

#[test]
fn invalid_params_lists_the_required_arguments_and_prints_the_prefix_once() {
    let server = sdk_like_server();
    let url = server.url("/mcp");
    let o = mcp(&["--url", &url, "call", "add", "a=1", "b=2"]);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("the server rejected the arguments: Invalid arguments for tool add"),
        "{err}"
    );
    assert!(err.contains("hint: `add` requires `a`, `b`"), "{err}");
    assert!(!err.contains("MCP error -32602: MCP error"), "{err}");
    assert_eq!(err.matches("MCP error -32602").count(), 0, "{err}");

    let o = mcp(&["--url", &url, "call", "add", "a=1", "b=2", "--json"]);
    let v = json_out(&o);
    assert_eq!(v["error"]["code"], "invalid_params");
    assert_eq!(v["error"]["rpcCode"], -32602);
    assert_eq!(v["error"]["required"], json!(["a", "b"]));
    // A TypeScript input validation error arrives as isError with a -32602 text.
    let o = mcp(&["--url", &url, "call", "strict", "n=-1", "--json"]);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    let v = json_out(&o);
    assert_eq!(v["error"]["code"], "invalid_params");
    assert_eq!(v["error"]["required"], json!(["n"]));
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .ends_with("rejected the arguments: Input validation error: n must be positive"),
        "{v}"
    );
    // Any other JSON-RPC error: the code once, the server's words after it.
    let o = mcp(&["--url", &url, "ping"]);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("error: ping failed: MCP error -32603: internal boom\n"),
        "{err}"
    );
    assert_eq!(err.matches("MCP error").count(), 1, "{err}");
}

#[test]
fn a_url_without_a_scheme_is_a_usage_error_before_connecting() {
    // Something listens on the port: it must see no connection.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let bare = format!("127.0.0.1:{port}/mcp");
    let o = mcp(&["--url", &bare, "tools"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("it has no http:// or https:// scheme"),
        "{err}"
    );
    assert!(
        err.contains(&format!("did you mean --url http://{bare} ?")),
        "{err}"
    );
    assert!(!err.contains("crashed"), "{err}");
    assert_eq!(
        listener.accept().map(drop).map_err(|e| e.kind()),
        Err(std::io::ErrorKind::WouldBlock),
        "mcp connected"
    );
    let o = mcp(&["--url", &bare, "tools", "--json"]);
    let v = json_out(&o);
    assert_eq!(v["error"]["code"], "invalid_url");
    assert_eq!(v["error"]["exit"], 2);
    assert_eq!(v["error"]["didYouMean"], json!([format!("http://{bare}")]));
}

#[test]
fn bad_arguments_are_usage_errors_before_the_server_starts() {
    let marker = temp("started");
    let _ = std::fs::remove_file(&marker);
    let touch = format!("touch '{}'", marker.display());
    for args in [
        vec!["call", "echo", "novalue"],
        vec!["call", "echo", "--args", "{not json"],
        vec!["call", "echo", "--args", "@/nonexistent/args.json"],
        vec!["prompt", "summarize", "novalue"],
    ] {
        let o = Command::new(MCP)
            .args(&args)
            .args(["--", "sh", "-c", &touch])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(!marker.exists(), "{args:?} started the server");
    }
}

#[test]
fn json_errors_are_one_object_with_a_stable_code() {
    let o = demo(&["call", "ecko", "--json"]);
    assert_eq!(o.status.code(), Some(4));
    let v = json_out(&o);
    let e = &v["error"];
    assert_eq!(e["code"], "tool_not_found");
    assert_eq!(e["exit"], 4);
    assert_eq!(e["didYouMean"], json!(["echo"]));
    assert!(e["message"].as_str().unwrap().contains("ecko"));
    assert!(e["hint"].as_str().unwrap().contains("did you mean"));
    // The human line is still on stderr.
    assert!(stderr(&o).contains("error: tool `ecko` not found"));

    let o = demo(&["call", "add", "a=1", "--json"]);
    assert_eq!(o.status.code(), Some(2));
    let v = json_out(&o);
    assert_eq!(v["error"]["code"], "missing_argument");
    assert_eq!(v["error"]["missing"], json!(["b"]));
    assert_eq!(v["error"]["required"], json!(["a", "b"]));

    let o = demo(&["prompt", "summarise", "--json"]);
    assert_eq!(json_out(&o)["error"]["code"], "prompt_not_found");
    let o = demo(&["read", "demo://readm", "--json"]);
    assert_eq!(json_out(&o)["error"]["code"], "resource_not_found");

    // clap's own usage errors too.
    let o = mcp(&["tools", "--no-such-flag", "--json"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(json_out(&o)["error"]["code"], "usage");

    // A tool's isError result is the JSON output itself: no second object.
    let o = demo(&["call", "fail", "message=boom", "--json"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(json_out(&o)["isError"], true);
}

#[test]
fn a_string_parameter_gets_a_string() {
    // The demo's echo refuses anything but a string `text`.
    let o = demo(&["call", "echo", "text=123", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = json_out(&o);
    assert_eq!(v["content"][0]["text"], json!("123"));
    assert_ne!(v["isError"], true);
    // The scripted echo answers with the arguments it got: their JSON types.
    let server = sdk_like_server();
    let url = server.url("/mcp");
    let o = mcp(&[
        "--url",
        &url,
        "call",
        "echo",
        "message=123",
        "count=7",
        r#"tags=["a"]"#,
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let sent: Value =
        serde_json::from_str(json_out(&o)["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(sent, json!({ "message": "123", "count": 7, "tags": ["a"] }));
    // `load` types its arguments the same way: every call succeeds.
    let o = demo(&["load", "echo", "text=123", "-n", "3", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = json_out(&o);
    assert_eq!(
        (v["calls"].as_u64(), v["errors"].as_u64()),
        (Some(3), Some(0)),
        "{v}"
    );
    // A value that is not of the schema's type is a local error.
    let o = mcp(&["--url", &url, "call", "echo", "message=x", "count=many"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("argument `count` must be an integer"),
        "{}",
        stderr(&o)
    );
    assert_eq!(tool_calls(&server), 1);
}

#[test]
fn arguments_from_a_file_and_from_stdin() {
    let path = temp("args.json");
    std::fs::write(&path, r#"{"text": "from a file"}"#).unwrap();
    let file_arg = format!("@{}", path.display());
    let o = demo(&["call", "echo", "-a", &file_arg, "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(json_out(&o)["content"][0]["text"], "from a file");
    // Pairs still win over the file.
    let o = demo(&["call", "echo", "-a", &file_arg, "text=pair", "--json"]);
    assert_eq!(json_out(&o)["content"][0]["text"], "pair");

    let mut child = Command::new(MCP)
        .args([
            "call",
            "echo",
            "-a",
            "-",
            "--json",
            "--",
            MCP,
            "demo-server",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(br#"{"text": "from stdin"}"#)
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(json_out(&o)["content"][0]["text"], "from stdin");

    // Not an object: a usage error.
    std::fs::write(&path, "[1, 2]").unwrap();
    let o = demo(&["call", "echo", "-a", &file_arg]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("must be a JSON object"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_missing_required_argument_exits_2_without_calling() {
    let o = demo(&["call", "add", "a=1"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("`add`: missing required argument `b`"),
        "{err}"
    );
    assert!(err.contains("`add` takes: a: number, b: number"), "{err}");
    let server = sdk_like_server();
    let o = mcp(&["--url", &server.url("/mcp"), "call", "echo", "count=1"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("missing required argument `message`"));
    assert_eq!(tool_calls(&server), 0, "the call was made");
    // A prompt's required argument (the demo refuses the prompt without it).
    let o = demo(&["prompt", "summarize"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("`summarize`: missing required argument `text`"),
        "{err}"
    );
    assert!(err.contains("takes: text, style?"), "{err}");
    // An unknown key of a closed schema, with the name meant.
    let o = demo(&["call", "echo", "txt=hi"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("did you mean `text`?"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn http_errors_say_what_happened_at_the_http_level() {
    // Refused: a port that was just free.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let o = mcp(&["--url", &url, "--connect-timeout", "10s", "tools"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains(&format!("could not connect to {url}: connection refused")),
        "{err}"
    );
    assert!(!err.contains("stderr"), "{err}");
    let o = mcp(&["--url", &url, "--connect-timeout", "10s", "tools", "--json"]);
    assert_eq!(json_out(&o)["error"]["code"], "connection_refused");

    // HTTP 500 on a request, after a good handshake.
    let server = sdk_like_server();
    let url = server.url("/mcp");
    let o = mcp(&["--url", &url, "call", "boom"]);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("HTTP 500 Internal Server Error: upstream exploded"),
        "{err}"
    );
    assert!(err.contains("the server failed (HTTP 500)"), "{err}");
    assert!(
        !err.contains("stderr") && !err.contains("closed the connection"),
        "{err}"
    );
    let o = mcp(&["--url", &url, "call", "boom", "--json"]);
    let v = json_out(&o);
    assert_eq!(v["error"]["code"], "http_error");
    assert_eq!(v["error"]["httpStatus"], 500);

    // HTTP 500 while connecting.
    let failing = ScriptedHttpServer::start(|_| ScriptedReply::status(500));
    let o = mcp(&["--url", &failing.url("/mcp"), "tools"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("HTTP 500"), "{err}");
    assert!(!err.contains("stderr"), "{err}");
}

/// A Streamable HTTP server whose tools declare an `outputSchema` (`{"sum": number}`,
/// required): `good` keeps it, `bad` answers `{"sum": "five", "extra": …}` with the sum as
/// text, `bare` sends no `structuredContent` at all.
fn output_schema_server() -> ScriptedHttpServer {
    ScriptedHttpServer::start(|request| {
        if let Some(reply) = standard_reply(request, "sess-schema") {
            return reply;
        }
        let body = request.json().unwrap_or_default();
        let schema = json!({ "type": "object",
            "properties": { "sum": { "type": "number" } }, "required": ["sum"] });
        match request.rpc_method().as_deref() {
            Some("tools/list") => {
                let tool = |name: &str| {
                    json!({ "name": name, "inputSchema": { "type": "object" },
                        "outputSchema": schema })
                };
                ScriptedReply::json(&rpc_result(
                    request,
                    json!({ "tools": [tool("good"), tool("bad"), tool("bare")] }),
                ))
            }
            Some("tools/call") => {
                let structured = match body["params"]["name"].as_str().unwrap_or_default() {
                    "good" => json!({ "sum": 5 }),
                    "bad" => json!({ "sum": "five" }),
                    _ => Value::Null,
                };
                let mut result = json!({ "content": [{ "type": "text", "text": "five" }] });
                if !structured.is_null() {
                    result["structuredContent"] = structured;
                }
                ScriptedReply::json(&rpc_result(request, result))
            }
            _ => error(-32601, "Method not found", request),
        }
    })
}

#[test]
fn a_result_that_breaks_its_output_schema_exits_4_naming_the_pointer() {
    let server = output_schema_server();
    let url = server.url("/mcp");

    let o = mcp(&["--url", &url, "call", "good"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));

    let o = mcp(&["--url", &url, "call", "bad"]);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(stdout(&o).is_empty(), "{}", stdout(&o));
    let err = stderr(&o);
    assert!(
        err.contains("error: tool `bad`: the result does not match the tool's outputSchema: at /sum: \"five\" is not of type \"number\""),
        "{err}"
    );
    assert!(
        err.contains("hint: the server's result breaks the schema it declares for `bad`"),
        "{err}"
    );
    assert!(err.contains("--no-output-check"), "{err}");

    let o = mcp(&["--url", &url, "call", "bad", "--json"]);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    let e = &json_out(&o)["error"];
    assert_eq!(e["code"], "output_schema_mismatch");
    assert_eq!(e["exit"], 4);
    assert_eq!(e["tool"], "bad");
    assert_eq!(e["violations"][0]["pointer"], "/sum");
    assert_eq!(e["violationCount"], 1);

    let o = mcp(&["--url", &url, "call", "bare", "--json"]);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    let e = &json_out(&o)["error"];
    assert_eq!(e["violations"][0]["pointer"], "");
    assert!(
        e["message"]
            .as_str()
            .unwrap_or_default()
            .contains("structuredContent is missing"),
        "{e}"
    );

    // The opt-out shows the result as the server sent it.
    let o = mcp(&["--url", &url, "call", "bad", "--no-output-check", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(json_out(&o)["structuredContent"]["sum"], "five");

    // The demo server's `add` keeps its own schema.
    let o = demo(&["call", "add", "a=2", "b=3", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(json_out(&o)["structuredContent"]["sum"], 5.0);
}

#[test]
fn complete_of_a_misspelt_prompt_suggests_the_listed_one() {
    let o = demo(&["--json", "complete", "prompt:sumarize", "text", "x"]);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    let error = &json_out(&o)["error"];
    assert_eq!(error["code"], "prompt_not_found", "{error}");
    assert_eq!(error["didYouMean"], json!(["summarize"]), "{error}");
    // The right name completes.
    let o = demo(&["complete", "prompt:summarize", "style", "b"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).lines().any(|l| l.starts_with('b')),
        "{}",
        stdout(&o)
    );
}

/// `${VAR}` in a `--header` value is taken from the environment (so a token stays out of
/// the command line, `mcp bridge` included), `$$` is one literal `$`; an undefined variable
/// is a usage error naming the header and the variable, never quoting a header's value,
/// before anything connects.
#[test]
fn header_values_expand_environment_variables() {
    let server = sdk_like_server();
    let url = server.url("/mcp");
    let run = |extra: &[&str], env: &[(&str, &str)]| {
        let mut command = Command::new(MCP);
        command
            .args(["--url", &url])
            .args(extra)
            .stdin(Stdio::null());
        command.env_remove("MCP_F2_UNSET");
        for (k, v) in env {
            command.env(k, v);
        }
        command.output().expect("run mcp")
    };
    let token = [("MCP_F2_TOKEN", "tok-123")];
    let o = run(
        &[
            "-H",
            "Authorization: Bearer ${MCP_F2_TOKEN}",
            "-H",
            "X-Literal: $${HOME}",
            "tools",
        ],
        &token,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let first = server.requests().into_iter().next().expect("a request");
    assert_eq!(first.header("authorization"), Some("Bearer tok-123"));
    assert_eq!(first.header("x-literal"), Some("${HOME}"));

    let before = server.requests().len();
    let o = run(
        &[
            "-H",
            "X-Other: other-secret-value",
            "-H",
            "X-Key: ${MCP_F2_UNSET}",
            "tools",
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("--header X-Key: the environment variable MCP_F2_UNSET is not set"),
        "{err}"
    );
    assert!(!err.contains("other-secret-value"), "{err}");
    assert_eq!(server.requests().len(), before, "mcp connected");

    // The bridge sends the expanded header upstream.
    let mut bridge = Command::new(MCP)
        .args([
            "bridge",
            "--url",
            &url,
            "-H",
            "Authorization: Bearer ${MCP_F2_TOKEN}",
        ])
        .env("MCP_F2_TOKEN", "tok-bridge")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run mcp bridge");
    let mut stdin = bridge.stdin.take().expect("stdin");
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "host", "version": "1"}}})
    )
    .expect("write");
    drop(stdin);
    let o = bridge.wait_with_output().expect("bridge ends");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains(r#""id":1,"result""#), "{}", stdout(&o));
    let sent: Vec<_> = server
        .requests()
        .iter()
        .filter_map(|r| r.header("authorization").map(str::to_owned))
        .collect();
    assert!(sent.iter().any(|h| h == "Bearer tok-bridge"), "{sent:?}");
}

/// An `https://` URL to a plain-HTTP port is a TLS failure (`tls_failed`) saying that the
/// server does not speak TLS and which `http://` URL to try, not the HTTP client's chain.
#[test]
fn https_to_a_plain_http_port_says_try_http() {
    let server = sdk_like_server();
    let plain = server.url("/mcp");
    let https = plain.replacen("http://", "https://", 1);
    let o = mcp(&["--url", &https, "--json", "tools"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let v = json_out(&o);
    assert_eq!(v["error"]["code"], "tls_failed", "{v}");
    let message = v["error"]["message"].as_str().unwrap_or_default();
    let host = plain
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    // This server closes the connection on the ClientHello (`mcp demo-server` answers it in
    // plain text: "does not speak TLS").
    assert!(
        message.contains(&format!("the server at {host} closed the connection during the TLS handshake: it may not speak TLS"))
            && message.contains(&format!("try {plain}")),
        "{message}"
    );
    assert!(!message.contains("error sending request"), "{message}");
}
