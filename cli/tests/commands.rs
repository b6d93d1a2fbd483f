//! Runs the built `mcp` binary (never whatever `mcp` is on PATH) against `mcp demo-server`,
//! which the binary itself spawns over stdio: every subcommand, its output and exit code.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

mod common;
use common::run::{stderr, stdout};

const MCP: &str = env!("CARGO_BIN_EXE_mcp");

/// `mcp ARGS -- <mcp> demo-server`, with a fixed width and no terminal.
fn demo(args: &[&str]) -> Output {
    Command::new(MCP)
        .args(args)
        .args(["--", MCP, "demo-server"])
        .env("COLUMNS", "60")
        .stdin(Stdio::null())
        .output()
        .expect("run mcp")
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", stdout(o)))
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mcp-cli-cmd-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn info_human_and_json() {
    let o = demo(&["info"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("server        mcp-demo"), "{text}");
    assert!(text.contains("protocol      2025-11-25"), "{text}");
    assert!(text.contains("instructions:"), "{text}");
    let o = demo(&["info", "--json"]);
    let v = json(&o);
    assert_eq!(v["serverInfo"]["name"], "mcp-demo");
    assert_eq!(v["protocolVersion"], "2025-11-25");
    assert_eq!(v["capabilities"]["resources"]["subscribe"], true);
}

#[test]
fn tools_table_snapshot_at_60_columns() {
    let o = demo(&["tools"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    let table: String = text.split("\n\n").next().unwrap().to_owned() + "\n";
    assert_eq!(
        table,
        "\
NAME   TITLE            DESCRIPTION
─────  ───────────────  ────────────────────────────────────
echo                    Returns the text it is given.
add    Add two numbers  Adds a and b; the sum also comes
                        back as structured content.
slow                    Works for steps × delay_ms,
                        reporting progress after each step.
                        Cancellable.
ask                     Asks the user a question through
                        elicitation and returns the answer.
image                   Returns a small PNG image.
fail                    Always fails, with isError set, to
                        show how tool errors look.
model                   Asks the client's model (sampling)
                        to answer a prompt and returns the
                        reply.
"
    );
    assert!(
        text.contains(
            "\nslow\n  delay_ms: integer — Milliseconds per step [default: 200; 0\n      to 10000]\n  steps: integer — How many steps [default: 5; 1 to 100]\n"
        ),
        "{text}"
    );
    assert!(text.lines().all(|l| l.chars().count() <= 60), "{text}");
}

#[test]
fn tools_json_is_the_whole_list() {
    let v = json(&demo(&["tools", "--json"]));
    let names: Vec<&str> = v["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    // Two pages of four: the client follows the cursor. `model` is listed because the CLI
    // declares sampling; `roots` is not, because it declares roots only with --root.
    assert_eq!(
        names,
        ["echo", "add", "slow", "ask", "image", "fail", "model"]
    );
    assert_eq!(v["tools"][0]["inputSchema"]["required"][0], "text");
}

#[test]
fn call_outputs_and_exit_codes() {
    let o = demo(&["call", "add", "a=2", "b=3"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // A pipe gets the text as sent; the structured content is noted on stderr.
    assert_eq!(stdout(&o), "2 + 3 = 5");
    assert!(stderr(&o).contains("structured content"), "{}", stderr(&o));
    let v = json(&demo(&[
        "call",
        "add",
        "--args",
        r#"{"a": 1.5, "b": 1}"#,
        "--json",
    ]));
    assert_eq!(v["structuredContent"]["sum"], 2.5);

    let o = demo(&["call", "fail", "message=boom"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stdout(&o), "boom");
    assert!(stderr(&o).contains("error: the tool reported an error: boom"));
    let o = demo(&["call", "fail", "--json"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(json(&o)["isError"], true);

    let o = demo(&["call", "no_such_tool"]);
    assert_eq!(o.status.code(), Some(4));
    assert!(stdout(&o).is_empty());
    assert!(
        stderr(&o).contains("tool `no_such_tool` not found on mcp-demo"),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("hint:"));

    let o = demo(&["call", "add", "--args", "[1]"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn raw_and_output_write_the_image_bytes() {
    let path = temp("image.png");
    let o = demo(&["call", "image", "--raw", "--output", path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(o.stdout.is_empty());
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    let o = demo(&["call", "image", "--raw"]);
    assert_eq!(&o.stdout[..8], b"\x89PNG\r\n\x1a\n");
    let text = temp("echo.txt");
    let o = demo(&[
        "call",
        "echo",
        "text=hello",
        "--raw",
        "-o",
        text.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(std::fs::read_to_string(&text).unwrap(), "hello");
}

#[test]
fn progress_lines_snapshot_at_60_columns() {
    let o = demo(&["-v", "call", "slow", "steps=4", "delay_ms=20"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let bars: Vec<String> = stderr(&o)
        .lines()
        .filter(|l| l.starts_with("[#") || l.starts_with("[."))
        .map(str::to_owned)
        .collect();
    assert_eq!(
        bars,
        [
            "[###............]  25% 1/4 step 1 of 4",
            "[#######........]  50% 2/4 step 2 of 4",
            "[###########....]  75% 3/4 step 3 of 4",
            "[###############] 100% 4/4 step 4 of 4",
        ]
    );
    // Without -v and without a terminal, no bar at all.
    let o = demo(&["call", "slow", "steps=2", "delay_ms=10"]);
    assert!(!stderr(&o).contains("[#"), "{}", stderr(&o));
    assert_eq!(stdout(&o), "finished 2 steps");
}

#[test]
fn verbose_trace_shows_every_message_with_secrets_masked() {
    let o = Command::new(MCP)
        .args([
            "-v",
            "--env",
            "API_TOKEN=hunter2",
            "call",
            "echo",
            "text=hi",
            // As JSON: a `password=pw` pair is refused before sending (echo has no such argument).
            "--args",
            r#"{"password":"pw"}"#,
        ])
        .args(["--", MCP, "demo-server"])
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(err.contains("(env: API_TOKEN=***)"), "{err}");
    // `--era auto` (the default) probes first; the demo server is legacy and refuses it.
    assert!(
        err.contains(r#"-> {"id":0,"jsonrpc":"2.0","method":"server/discover""#),
        "{err}"
    );
    assert!(
        err.contains(r#"-> {"id":1,"jsonrpc":"2.0","method":"initialize""#),
        "{err}"
    );
    assert!(err.contains(r#""method":"tools/call""#), "{err}");
    assert!(err.contains(r#""password":"***""#), "{err}");
    assert!(err.contains("<- "), "{err}");
    assert!(!err.contains("hunter2") && !err.contains("\"pw\""), "{err}");
    // The trace goes to stderr only: the unknown `password` argument makes the call fail.
    assert!(!stdout(&o).contains("->"));
}

#[test]
fn resources_read_prompts_prompt_complete() {
    let o = demo(&["resources"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        stdout(&o),
        "\
URI            NAME    TYPE        DESCRIPTION
─────────────  ──────  ──────────  ───────────────────────
demo://readme  readme  text/plain  What this server offers
demo://clock   clock   text/plain  Ticks while subscribed

URI TEMPLATE         NAME   TYPE        DESCRIPTION
───────────────────  ─────  ──────────  ────────────────────
demo://notes/{name}  notes  text/plain  A note by name; any
                                        name works
"
    );
    let v = json(&demo(&["resources", "--json"]));
    assert_eq!(v["resources"][0]["uri"], "demo://readme");
    assert_eq!(
        v["resourceTemplates"][0]["uriTemplate"],
        "demo://notes/{name}"
    );

    let o = demo(&["read", "demo://readme"]);
    assert!(stdout(&o).starts_with("This is the MCP demo server"));
    let o = demo(&["read", "demo://nothing-here"]);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));

    let o = demo(&["prompts"]);
    assert!(
        stdout(&o).contains("summarize  text, style?"),
        "{}",
        stdout(&o)
    );
    let o = demo(&["prompt", "summarize", "text=hello", "style=formal"]);
    assert!(stdout(&o).contains("[user]\nSummarize the following text in a formal style"));
    let v = json(&demo(&["prompt", "summarize", "text=x", "--json"]));
    assert_eq!(v["messages"][0]["role"], "user");

    let o = demo(&["complete", "prompt:summarize", "style", "b"]);
    assert_eq!(stdout(&o), "brief\nbullet-points\n");
    let v = json(&demo(&[
        "complete",
        "demo://notes/{name}",
        "name",
        "",
        "--json",
    ]));
    assert_eq!(v["completion"]["values"].as_array().unwrap().len(), 3);
}

#[test]
fn ping_and_log_level() {
    let o = demo(&["ping"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).starts_with("pong from mcp-demo in "));
    let v = json(&demo(&["ping", "--json"]));
    assert!(v["latencyMs"].as_f64().unwrap() >= 0.0);
    let o = demo(&["log-level", "debug"]);
    assert_eq!(stdout(&o), "log level set to debug\n");
    assert_eq!(
        json(&demo(&["log-level", "error", "--json"]))["level"],
        "error"
    );
}

#[test]
fn log_messages_go_to_stderr_unless_quiet() {
    let o = demo(&["call", "fail", "message=m1"]);
    assert!(
        stderr(&o).contains("[warning] tools: fail: m1"),
        "{}",
        stderr(&o)
    );
    let o = demo(&["-q", "call", "fail", "message=m1"]);
    assert!(!stderr(&o).contains("[warning]"), "{}", stderr(&o));
}

#[test]
fn load_prints_the_histogram() {
    let o = demo(&[
        "load",
        "add",
        "a=1",
        "b=2",
        "--count",
        "50",
        "--concurrency",
        "4",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    for metric in ["calls", "errors", "throughput", "p50", "p90", "p99", "max"] {
        assert!(
            text.lines().any(|l| l.starts_with(metric)),
            "{metric} missing: {text}"
        );
    }
    assert!(
        text.lines()
            .any(|l| l.starts_with("calls") && l.ends_with(" 50")),
        "{text}"
    );
    let v = json(&demo(&["load", "fail", "-n", "10", "-c", "3", "--json"]));
    assert_eq!(v["calls"], 10);
    assert_eq!(v["errors"], 10);
    assert!(v["p99Ms"].as_f64().unwrap() <= v["maxMs"].as_f64().unwrap());
    let start = Instant::now();
    let v = json(&demo(&[
        "load",
        "echo",
        "text=x",
        "--duration",
        "300ms",
        "--json",
    ]));
    assert!(v["calls"].as_u64().unwrap() > 0);
    assert!(start.elapsed() < Duration::from_secs(20));
}

#[test]
fn lint_of_the_connected_server() {
    let o = demo(&["lint"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "no problems found\n");
    assert_eq!(json(&demo(&["lint", "--json"])), serde_json::json!([]));
}

#[test]
fn demo_completes_without_a_terminal() {
    let start = Instant::now();
    let o = Command::new(MCP)
        .arg("demo")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(start.elapsed() < Duration::from_secs(30));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    for step in [
        "1. ",
        "2. ",
        "3. ",
        "4. ",
        "5. ",
        "6. ",
        "7. ",
        "That's the tour",
    ] {
        assert!(text.contains(step), "{step} missing: {text}");
    }
    assert!(text.contains("finished 10 steps"));
    assert!(text.contains("(10 progress notifications received"));
    assert!(
        text.contains("The user said: (answered automatically"),
        "{text}"
    );
    assert!(stderr(&o).contains("answered automatically"));
}

#[test]
fn demo_prose_wraps_at_the_width_and_every_table_has_its_command() {
    let o = Command::new(MCP)
        .arg("demo")
        .env("COLUMNS", "120")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    for line in text.lines() {
        assert!(line.chars().count() <= 120, "wider than 120: {line:?}");
    }
    // No word is broken: the closing paragraph ends with its whole last sentence.
    assert!(
        text.trim_end().ends_with("`mcp --help` lists everything."),
        "{text}"
    );
    assert!(text.contains("lists everything"), "{text}");
    // The prompts table comes after its own command line.
    let command = text
        .find("$ mcp prompts -- mcp demo-server")
        .unwrap_or_else(|| panic!("no prompts command: {text}"));
    let table = text
        .find("NAME       ARGUMENTS")
        .expect("the prompts table");
    assert!(command < table, "{text}");
}

#[test]
fn config_file_server() {
    let path = temp("servers.json");
    let config = serde_json::json!({ "mcpServers": {
        "demo": { "command": MCP, "args": ["demo-server"] },
        "other": { "command": "true" }
    }});
    std::fs::write(&path, config.to_string()).unwrap();
    let p = path.to_str().unwrap();
    let o = Command::new(MCP)
        .args(["--config", p, "--server", "demo", "ping"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = Command::new(MCP)
        .args(["--config", p, "--server", "nope", "ping"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("it has: demo, other"), "{}", stderr(&o));
}

#[test]
fn connection_failures_and_timeouts() {
    let o = Command::new(MCP)
        .args(["ping", "--", "/nonexistent/mcp-server"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3));
    assert!(stderr(&o).contains("hint: is `/nonexistent/mcp-server` installed"));
    // A server that exits at once.
    let o = Command::new(MCP)
        .args(["ping", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    // Port 9 on loopback: refused, or (before HTTP lands in the driver) unsupported; exit 3.
    let o = Command::new(MCP)
        .args([
            "--url",
            "http://127.0.0.1:9/mcp",
            "--connect-timeout",
            "5s",
            "ping",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stderr(&o).contains("hint:"));
    // No progress within the timeout (progress restarts it).
    let o = demo(&[
        "--timeout",
        "200ms",
        "call",
        "slow",
        "steps=2",
        "delay_ms=2000",
    ]);
    assert_eq!(o.status.code(), Some(5), "{}", stderr(&o));
    let o = demo(&["--era", "modern", "info"]);
    assert_eq!(o.status.code(), Some(3));
    assert!(stderr(&o).contains("--era legacy"));
    let o = demo(&["--era", "legacy", "info", "--json"]);
    assert_eq!(json(&o)["protocolVersion"], "2025-11-25");
}

#[cfg(unix)]
fn interrupt_after(args: &[&str], after: Duration) -> Output {
    let child = Command::new(MCP)
        .args(args)
        .args(["--", MCP, "demo-server"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(after);
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    child.wait_with_output().unwrap()
}

#[cfg(unix)]
#[test]
fn ctrl_c_cancels_the_call_and_exits_130() {
    let start = Instant::now();
    let o = interrupt_after(
        &["-v", "call", "slow", "steps=100", "delay_ms=100"],
        Duration::from_millis(1500),
    );
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains(r#""method":"notifications/cancelled""#),
        "{err}"
    );
    assert!(
        start.elapsed() < Duration::from_secs(8),
        "closing took too long"
    );
    assert!(stdout(&o).is_empty());
}

#[cfg(unix)]
#[test]
fn watch_runs_until_ctrl_c() {
    let o = interrupt_after(&["watch"], Duration::from_millis(1500));
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert!(stderr(&o).contains("watching mcp-demo for notifications"));
}

/// `mcp --json ARGS -- <mcp> demo-server SERVER_ARGS` with `env` set for the server.
fn demo_with(args: &[&str], server_args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(MCP)
        .arg("--json")
        .args(args)
        .args(["--", MCP, "demo-server"])
        .args(server_args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .expect("run mcp")
}

fn tool_names(o: &Output) -> Vec<String> {
    assert_eq!(o.status.code(), Some(0), "{}", stderr(o));
    json(o)["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].as_str().expect("name").to_owned())
        .collect()
}

#[test]
fn demo_server_conformance_flag_and_env_serve_the_conformance_fixtures() {
    for (server_args, env) in [
        (&["--conformance"][..], &[][..]),
        (&[][..], &[("MCP_DEMO_CONFORMANCE", "1")][..]),
    ] {
        let names = tool_names(&demo_with(&["tools"], server_args, env));
        assert_eq!(names.len(), 14, "{names:?}");
        assert_eq!(names[0], "test_simple_text");
        assert!(names.iter().any(|n| n == "json_schema_2020_12_tool"));
        let o = demo_with(&["info"], server_args, env);
        assert_eq!(json(&o)["serverInfo"]["name"], "mcp-demo-conformance");
    }
    // Without either, the demo's own catalog (MCP_DEMO_CONFORMANCE=0 is off).
    let names = tool_names(&demo_with(
        &["tools"],
        &[],
        &[("MCP_DEMO_CONFORMANCE", "0")],
    ));
    assert_eq!(names[0], "echo");
    assert!(!names.iter().any(|n| n.starts_with("test_")));
    let o = demo_with(&["call", "test_prompt_with_image"], &["--conformance"], &[]);
    assert_ne!(o.status.code(), Some(0), "not a tool: {}", stdout(&o));
    let o = demo_with(
        &[
            "prompt",
            "test_prompt_with_arguments",
            "arg1=hello",
            "arg2=world",
        ],
        &["--conformance"],
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("Prompt with arguments: arg1='hello', arg2='world'"),
        "{}",
        stdout(&o)
    );
}
