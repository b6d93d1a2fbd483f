//! The CLI as a client with capabilities, and many servers from one config file: the built
//! binary against `mcp demo-server` (whose `roots` and `model` tools ask the client back, and
//! whose `demo://clock` ticks while subscribed) and small shell-scripted servers; the
//! terminal prompt runs on a pseudo-terminal (util-linux `script`, Linux only).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

const MCP: &str = env!("CARGO_BIN_EXE_mcp");

/// A generous bound for a command that should end promptly: it only turns a hang into a
/// failure, it measures nothing.
const HANG_GUARD: Duration = Duration::from_secs(60);

/// A fresh directory for one test.
fn dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mcp-cli-caps-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn command(args: &[&str], cache: &Path) -> Command {
    let mut c = Command::new(MCP);
    c.args(args)
        .env("COLUMNS", "100")
        .env("XDG_CACHE_HOME", cache)
        .env_remove("MCP_CAPS_TEST_UNDEFINED")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// Runs `mcp ARGS` without a terminal; a run that outlives [`HANG_GUARD`] is killed and
/// fails the test.
fn run(args: &[&str], cache: &Path) -> Output {
    let child = command(args, cache).spawn().expect("run mcp");
    wait_guarded(child)
}

fn wait_guarded(child: Child) -> Output {
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let out = child.wait_with_output();
        let _ = tx.send(());
        out
    });
    if rx.recv_timeout(HANG_GUARD).is_err() {
        let _ = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
        panic!("mcp did not finish within {HANG_GUARD:?}");
    }
    waiter.join().unwrap().unwrap()
}

fn demo(args: &[&str], cache: &Path) -> Output {
    let mut all = args.to_vec();
    all.extend(["--", MCP, "demo-server"]);
    run(&all, cache)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn roots_list_is_answered_with_the_given_directories() {
    let d = dir("roots");
    let project = d.join("my project");
    std::fs::create_dir_all(&project).unwrap();
    let other = d.join("other");
    std::fs::create_dir_all(&other).unwrap();
    // Given with a `..` detour: the root is the canonical directory.
    let detour = other.join("..").join("my project");
    let o = demo(
        &[
            "--root",
            detour.to_str().unwrap(),
            "--root",
            other.to_str().unwrap(),
            "call",
            "roots",
        ],
        &d,
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let canonical = |p: &Path| std::fs::canonicalize(p).unwrap().display().to_string();
    assert_eq!(
        text(&o.stdout),
        format!(
            "file://{} (my project)\nfile://{} (other)",
            canonical(&project).replace(' ', "%20"),
            canonical(&other)
        )
    );

    // The demo server lists `roots` only to a client that declared roots.
    let names = |o: &Output| -> Vec<String> {
        let v: Value = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
        v["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let with = demo(&["--root", other.to_str().unwrap(), "tools", "--json"], &d);
    assert!(names(&with).contains(&"roots".to_owned()));
    let without = demo(&["tools", "--json"], &d);
    assert!(!names(&without).contains(&"roots".to_owned()));
    let o = demo(&["call", "roots"], &d);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stdout).contains("did not declare the roots capability"));

    // A directory that does not exist is a usage error before anything starts.
    let o = demo(
        &["--root", d.join("missing").to_str().unwrap(), "tools"],
        &d,
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("--root "), "{}", text(&o.stderr));
}

#[test]
fn sampling_is_declared_and_declined_without_a_terminal() {
    let d = dir("sampling");
    // Declared even without a terminal, so the server shows its sampling tool.
    let o = demo(&["tools", "--json"], &d);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        v["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "model")
    );

    let o = demo(&["call", "model", "prompt=What is 2+2?"], &d);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert_eq!(
        text(&o.stdout).trim_end(),
        "the client declined to sample: MCP error -1: User rejected sampling request"
    );
    let err = text(&o.stderr);
    assert!(
        err.contains(
            "declined the server's sampling request (no terminal to answer it): What is 2+2?"
        ),
        "{err}"
    );
}

#[cfg(unix)]
#[test]
fn watch_subscribe_prints_updates_and_unsubscribes_on_ctrl_c() {
    let d = dir("watch");
    let mut child = command(
        &[
            "-v",
            "watch",
            "--json",
            "--subscribe",
            "demo://clock",
            "--",
            MCP,
            "demo-server",
        ],
        &d,
    )
    .spawn()
    .unwrap();
    let pid = child.id().to_string();
    let stdout = child.stdout.take().unwrap();
    // Read lines until the first update of the subscribed resource.
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let update = loop {
        let Ok(line) = rx.recv_timeout(HANG_GUARD) else {
            let _ = Command::new("kill").args(["-KILL", &pid]).status();
            panic!("no resource update within {HANG_GUARD:?}");
        };
        let v: Value = serde_json::from_str(&line).expect("one JSON object per line");
        if v["method"] == "notifications/resources/updated" {
            break v;
        }
    };
    assert_eq!(update["params"]["uri"], "demo://clock");
    let killed = Command::new("kill").args(["-INT", &pid]).status().unwrap();
    assert!(killed.success());
    let o = wait_guarded(child);
    assert_eq!(o.status.code(), Some(130), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(err.contains("updates of demo://clock"), "{err}");
    // Ending the command unsubscribes (the wire trace shows the request going out).
    assert!(err.contains("resources/unsubscribe"), "{err}");
}

#[test]
fn watch_subscribe_to_an_unknown_resource_is_the_servers_error() {
    let d = dir("watch-unknown");
    let o = demo(&["watch", "--subscribe", "demo://nothing"], &d);
    assert_eq!(o.status.code(), Some(4), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("demo://nothing"),
        "{}",
        text(&o.stderr)
    );
}

/// A config with the demo server, a server that crashes at start (saying why on stderr),
/// one whose entry uses an undefined variable, and one that never answers.
fn mixed_config(d: &Path) -> PathBuf {
    let path = d.join("servers.json");
    let config = format!(
        r#"{{"mcpServers": {{
            "good": {{"command": "{MCP}", "args": ["demo-server"]}},
            "crash": {{"command": "sh", "args": ["-c", "echo 'fatal: no API key' >&2; exit 3"]}},
            "needs-var": {{"command": "{MCP}", "args": ["demo-server"],
                          "env": {{"TOKEN": "${{MCP_CAPS_TEST_UNDEFINED}}"}}}},
            "silent": {{"command": "sh", "args": ["-c", "exec sleep 600"]}}
        }}}}"#
    );
    std::fs::write(&path, config).unwrap();
    path
}

#[test]
fn tools_all_lists_the_good_server_and_names_each_problem() {
    let d = dir("mixed");
    let cfg = mixed_config(&d);
    let p = cfg.to_str().unwrap();
    let o = run(
        &["--config", p, "--connect-timeout", "2s", "tools", "--all"],
        &d,
    );
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "stdout:\n{out}\nstderr:\n{err}");
    assert!(out.contains("good__echo"), "{out}");
    let status: Vec<&str> = out
        .split("\nservers:\n")
        .nth(1)
        .expect("a servers section")
        .lines()
        .collect();
    assert_eq!(
        status,
        [
            "  good: ready (7 tools)",
            "  crash: failed: exited with code 3: fatal: no API key",
            "  needs-var: failed: configuration error: field \"env.TOKEN\": undefined variable \
             MCP_CAPS_TEST_UNDEFINED",
            "  silent: timed out: no answer within 2s (--connect-timeout)",
        ],
        "{out}"
    );
    assert!(err.contains("warning: server \"crash\" failed"), "{err}");
    assert!(
        err.contains("warning: server \"needs-var\" failed"),
        "{err}"
    );
    assert!(
        err.contains("warning: server \"silent\" timed out"),
        "{err}"
    );

    let o = run(
        &[
            "--config",
            p,
            "--connect-timeout",
            "2s",
            "tools",
            "--all",
            "--json",
        ],
        &d,
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let servers = v["servers"].as_array().unwrap();
    let of = |name: &str| servers.iter().find(|s| s["name"] == name).unwrap().clone();
    assert_eq!(of("good")["status"], "ready");
    assert_eq!(of("crash")["status"], "failed");
    assert_eq!(of("needs-var")["status"], "failed");
    assert!(
        of("needs-var")["reason"]
            .as_str()
            .unwrap()
            .contains("MCP_CAPS_TEST_UNDEFINED")
    );
    assert_eq!(of("silent")["status"], "timed out");
}

#[test]
fn an_undefined_variable_affects_only_the_entries_that_use_it() {
    let d = dir("var");
    let cfg = mixed_config(&d);
    let p = cfg.to_str().unwrap();
    let o = run(
        &["--config", p, "--server", "good", "call", "echo", "text=hi"],
        &d,
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    // Piped: the tool's text exactly as sent, nothing appended.
    assert_eq!(text(&o.stdout), "hi");
    let o = run(&["--config", p, "--server", "needs-var", "ping"], &d);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.contains("the config entry \"needs-var\"")
            && err.contains("${MCP_CAPS_TEST_UNDEFINED} (in \"env.TOKEN\"), which is not set")
            && err.contains("hint: set it in the environment"),
        "{err}"
    );
    // Defined, the same entry works.
    let o = command(&["--config", p, "--server", "needs-var", "ping"], &d)
        .env("MCP_CAPS_TEST_UNDEFINED", "set")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
}

#[test]
fn a_config_with_one_server_needs_no_server_option() {
    let d = dir("single");
    let path = d.join("one.json");
    std::fs::write(
        &path,
        format!(r#"{{"mcpServers": {{"only": {{"command": "{MCP}", "args": ["demo-server"]}}}}}}"#),
    )
    .unwrap();
    let p = path.to_str().unwrap();
    let o = run(&["--config", p, "ping"], &d);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(text(&o.stdout).starts_with("pong from mcp-demo"));
    // `call` uses the server's own tool names, as with --server.
    let o = run(&["--config", p, "call", "echo", "text=hello"], &d);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), "hello");
    let o = run(&["--config", p, "tools", "--all"], &d);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("only__echo"));
    // The namespaced name `tools --all` shows works too.
    let o = run(&["--config", p, "call", "only__echo", "text=again"], &d);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), "again");
}

/// Runs `mcp ARGS -- mcp demo-server` on a pseudo-terminal (util-linux `script`), types
/// `typed` once the sampling request is shown, and returns everything the terminal showed
/// and the exit status.
#[cfg(target_os = "linux")]
fn on_terminal(args: &str, typed: &[u8]) -> (String, Option<i32>) {
    use std::io::{Read, Write};

    let command = format!("{MCP} {args} -- {MCP} demo-server");
    let mut child = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .env("COLUMNS", "100")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("util-linux `script` runs the command on a pseudo-terminal");
    let pid = child.id().to_string();
    let mut stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = stdout.read(&mut buf) {
            if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    let mut shown = Vec::new();
    let mut typed_yet = false;
    loop {
        match rx.recv_timeout(HANG_GUARD) {
            Ok(chunk) => shown.extend(chunk),
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let _ = Command::new("kill").args(["-KILL", &pid]).status();
                panic!(
                    "the terminal session did not finish: {}",
                    String::from_utf8_lossy(&shown)
                );
            }
        }
        if !typed_yet && String::from_utf8_lossy(&shown).contains("type the reply") {
            let stdin = child.stdin.as_mut().unwrap();
            stdin.write_all(typed).unwrap();
            stdin.flush().unwrap();
            typed_yet = true;
        }
    }
    let status = child.wait().unwrap();
    (String::from_utf8_lossy(&shown).into_owned(), status.code())
}

#[cfg(target_os = "linux")]
#[test]
fn sampling_on_a_terminal_shows_the_request_and_sends_the_typed_reply() {
    let (shown, code) = on_terminal(
        "call model 'prompt=What is 2+2?' max_tokens=20",
        b"Four.\r\r",
    );
    assert_eq!(code, Some(0), "{shown}");
    assert!(
        shown.contains("the server asks for a model reply (sampling):"),
        "{shown}"
    );
    assert!(shown.contains("What is 2+2?"), "{shown}");
    assert!(shown.contains("max tokens 20"), "{shown}");
    assert!(shown.contains("model preferences: hints demo"), "{shown}");
    assert!(
        shown.contains("human (typed at mcp-term) replied: Four."),
        "{shown}"
    );

    // Ctrl-D right away declines.
    let (shown, code) = on_terminal("call model prompt=hi", b"\x04");
    assert_eq!(code, Some(1), "{shown}");
    assert!(shown.contains("User rejected sampling request"), "{shown}");
}
