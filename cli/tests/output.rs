//! What `mcp` writes when its stdout is a pipe (byte for byte what the server sent), how wide
//! it renders, and when it uses colour. Runs the built binary against `mcp demo-server`.

use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

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

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
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
