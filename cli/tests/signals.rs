//! Timeouts a person expects and signals that clean up, tested on the built `mcp` binary:
//!
//! - progress restarts a tool call's `--timeout`, and `--max-time` still bounds it;
//! - Ctrl-C (SIGINT) cancels the running call at the server with `notifications/cancelled`,
//!   over Streamable HTTP (before the session's DELETE) and over stdio;
//! - SIGTERM, SIGHUP and SIGKILL of `mcp` leave no process of a stdio server behind, not even
//!   a grandchild of a wrapper that ignores the end of its input (Linux: read from `/proc`).
//!
//! The waits below are anti-hang guards (generous bounds on polling a condition), not timings.

use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use mcp_driver::testing::http_server::{RecordedRequest, ScriptedHttpServer, ScriptedReply};
use serde_json::{Value, json};

mod common;
use common::run::{demo, text};

const MCP: &str = env!("CARGO_BIN_EXE_mcp");

/// The longest any wait below may take before the test gives up.
const GUARD: Duration = Duration::from_secs(60);

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mcp-cli-signals-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Polls `cond` until it holds; panics naming `what` after [`GUARD`].
fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + GUARD;
    while !cond() {
        assert!(Instant::now() < deadline, "gave up waiting: {what}");
        thread::sleep(Duration::from_millis(20));
    }
}

/// A running `mcp` whose output is collected in the background.
struct Running {
    child: Child,
    stdout: JoinHandle<Vec<u8>>,
    stderr: JoinHandle<Vec<u8>>,
}

impl Running {
    fn start(args: &[&str]) -> Self {
        let mut child = Command::new(MCP)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run mcp");
        let collect = |mut pipe: Box<dyn std::io::Read + Send>| {
            thread::spawn(move || {
                let mut bytes = Vec::new();
                let _ = pipe.read_to_end(&mut bytes);
                bytes
            })
        };
        let stdout = collect(Box::new(child.stdout.take().unwrap()));
        let stderr = collect(Box::new(child.stderr.take().unwrap()));
        Running {
            child,
            stdout,
            stderr,
        }
    }

    fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .args([&format!("-{name}"), &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success(), "kill -{name}");
    }

    /// Waits for the exit (killing `mcp` after the guard) and returns status, stdout, stderr.
    fn finish(mut self) -> (ExitStatus, String, String) {
        let deadline = Instant::now() + GUARD;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() >= deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!("mcp did not exit: {}", text(&self.stderr.join().unwrap()));
            }
            thread::sleep(Duration::from_millis(20));
        };
        let stdout = text(&self.stdout.join().unwrap());
        let stderr = text(&self.stderr.join().unwrap());
        (status, stdout, stderr)
    }
}

// ---- timeouts -----------------------------------------------------------------------------

#[test]
fn progress_restarts_the_timeout_so_a_long_call_completes() {
    // 10 steps of 300 ms: 3 s in all under a 1 s timeout, with progress after each step.
    let o = demo(&[
        "--timeout",
        "1s",
        "call",
        "slow",
        "steps=10",
        "delay_ms=300",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("finished 10 steps"),
        "{}",
        text(&o.stdout)
    );
}

#[test]
fn max_time_ends_a_call_that_keeps_reporting_progress() {
    let o = demo(&[
        "--timeout",
        "1s",
        "--max-time",
        "1500ms",
        "call",
        "slow",
        "steps=10",
        "delay_ms=300",
    ]);
    assert_eq!(o.status.code(), Some(5), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(err.contains("timed out after 1.50s (--max-time)"), "{err}");
    assert!(err.contains("raise --max-time"), "{err}");
    assert!(text(&o.stdout).is_empty());
}

#[test]
fn a_call_without_progress_in_time_still_times_out() {
    // The first progress would come after 3 s: the 500 ms timeout ends the call first.
    let o = demo(&[
        "--timeout",
        "500ms",
        "call",
        "slow",
        "steps=2",
        "delay_ms=3000",
    ]);
    assert_eq!(o.status.code(), Some(5), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(err.contains("timed out after 500.0ms"), "{err}");
    assert!(!err.contains("--max-time)"), "{err}");
}

#[test]
fn progress_restarts_the_timeout_of_a_namespaced_call_too() {
    let dir = temp_dir("config-call");
    let config = dir.join("servers.json");
    let servers = json!({ "mcpServers": { "demo": { "command": MCP, "args": ["demo-server"] } } });
    std::fs::write(&config, servers.to_string()).unwrap();
    let config = config.to_str().unwrap();
    let call = |extra: &[&str]| {
        Command::new(MCP)
            .args(["--config", config, "--timeout", "1s"])
            .args(extra)
            .args(["call", "demo__slow", "steps=10", "delay_ms=300"])
            .env("XDG_CACHE_HOME", &dir)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let o = call(&[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("finished 10 steps"),
        "{}",
        text(&o.stdout)
    );
    let o = call(&["--max-time", "1500ms"]);
    assert_eq!(o.status.code(), Some(5), "{}", text(&o.stderr));
}

#[test]
fn help_documents_max_time_and_the_signal_exit_codes() {
    let o = Command::new(MCP).arg("--help").output().unwrap();
    // Help wraps to the terminal: compare with the line breaks folded into spaces.
    let help = text(&o.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(help.contains("--max-time <DURATION>"), "{help}");
    assert!(help.contains("default 10m"), "{help}");
    assert!(help.contains("143 SIGTERM, 129 SIGHUP"), "{help}");
}

// ---- Ctrl-C cancels at the server -----------------------------------------------------------

/// A Streamable HTTP server that answers the handshake, holds every `tools/call` open and
/// records everything (the recording is the test's evidence).
fn recording_server() -> ScriptedHttpServer {
    ScriptedHttpServer::start(|req: &RecordedRequest| {
        let rpc = req.rpc_method();
        match (req.method.as_str(), rpc.as_deref()) {
            ("POST", Some("initialize")) => ScriptedReply::json(&json!({
                "jsonrpc": "2.0",
                "id": req.rpc_id(),
                "result": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "recorder", "version": "1.0.0"}
                }
            }))
            .with_header("mcp-session-id", "session-1"),
            ("POST", Some("tools/call")) => ScriptedReply::sse(Vec::<String>::new()).held_open(),
            ("POST", Some("tools/list")) => ScriptedReply::json(&json!({
                "jsonrpc": "2.0",
                "id": req.rpc_id(),
                "result": {"tools": [{"name": "slow", "inputSchema": {"type": "object"}}]}
            })),
            // Any other request (the era probe, say) is unknown here; notifications are taken.
            ("POST", Some(_)) if req.rpc_id().is_some() => ScriptedReply::json(&json!({
                "jsonrpc": "2.0",
                "id": req.rpc_id(),
                "error": {"code": -32601, "message": "method not found"}
            })),
            ("POST", _) => ScriptedReply::status(202),
            ("GET", _) => ScriptedReply::status(405),
            _ => ScriptedReply::status(200),
        }
    })
}

fn is_call(r: &RecordedRequest) -> bool {
    r.rpc_method().as_deref() == Some("tools/call")
}

#[test]
fn ctrl_c_over_streamable_http_cancels_at_the_server_before_the_delete() {
    let server = recording_server();
    let url = server.url("/mcp");
    let mcp = Running::start(&["--url", &url, "call", "slow"]);
    wait_until("the call reached the server", || {
        server.requests().iter().any(is_call)
    });
    mcp.signal("INT");
    let (status, stdout, stderr) = mcp.finish();
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");

    let requests = server.requests();
    let call = requests.iter().find(|r| is_call(r)).unwrap();
    let cancel = requests
        .iter()
        .position(|r| r.rpc_method().as_deref() == Some("notifications/cancelled"))
        .unwrap_or_else(|| panic!("no notifications/cancelled: {requests:#?}"));
    let params = &requests[cancel].json().unwrap()["params"];
    assert_eq!(params["requestId"], call.rpc_id().unwrap());
    assert_eq!(requests[cancel].header("mcp-session-id"), Some("session-1"));
    let delete = requests
        .iter()
        .position(|r| r.method == "DELETE")
        .unwrap_or_else(|| panic!("no DELETE: {requests:#?}"));
    assert!(cancel < delete, "the cancellation came after the DELETE");
}

#[cfg(unix)]
#[test]
fn ctrl_c_over_stdio_cancels_at_the_server() {
    let dir = temp_dir("stdio-cancel");
    let log = dir.join("received.jsonl");
    let log_str = log.to_str().unwrap();
    // `tee` records every line the server receives on its stdin.
    let script = r#"tee -a "$0" | "$1" demo-server"#;
    let mcp = Running::start(&[
        "call",
        "slow",
        "steps=100",
        "delay_ms=100",
        "--",
        "sh",
        "-c",
        script,
        log_str,
        MCP,
    ]);
    let received = || std::fs::read_to_string(&log).unwrap_or_default();
    wait_until("the call reached the server", || {
        received().contains(r#""method":"tools/call""#)
    });
    mcp.signal("INT");
    let (status, _, stderr) = mcp.finish();
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted: cancelling"), "{stderr}");

    let lines: Vec<Value> = received()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let call = lines.iter().find(|m| m["method"] == "tools/call").unwrap();
    let cancel = lines
        .iter()
        .find(|m| m["method"] == "notifications/cancelled")
        .unwrap_or_else(|| panic!("no notifications/cancelled: {lines:#?}"));
    assert_eq!(cancel["params"]["requestId"], call["id"]);
}

// ---- no server left behind ------------------------------------------------------------------

/// A live (not zombie) process of the group `pgid`, with its command line.
#[cfg(target_os = "linux")]
fn group_members(pgid: u32) -> Vec<(u32, String)> {
    let mut members = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // After the command name: state, ppid, pgrp, ...
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.len() > 2 && fields[0] != "Z" && fields[2] == pgid.to_string() {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            members.push((pid, text(&cmdline).replace('\0', " ")));
        }
    }
    members
}

/// Live processes whose command line contains `needle`.
#[cfg(target_os = "linux")]
fn processes_matching(needle: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse::<u32>().ok())
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let zombie = stat
                .rfind(')')
                .is_some_and(|i| stat[i + 1..].trim_start().starts_with('Z'));
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            !zombie && text(&cmdline).replace('\0', " ").contains(needle)
        })
        .collect()
}

/// Runs a slow call against a wrapper server that does not exit at the end of its input (it
/// `exec`s a sleep) and has a background grandchild, sends `signal` to `mcp` once the demo
/// server is up, and checks that the wrapper's whole process group and its watchdog are gone.
#[cfg(target_os = "linux")]
fn no_server_left_after(signal: &str) -> ExitStatus {
    let dir = temp_dir(&format!("group-{signal}"));
    let pidfile = dir.join("leader.pid");
    let script =
        r#"echo $$ > "$0"; sleep 1000 >/dev/null 2>&1 & "$1" demo-server; exec sleep 1000"#;
    let mcp = Running::start(&[
        "call",
        "slow",
        "steps=100",
        "delay_ms=100",
        "--",
        "sh",
        "-c",
        script,
        pidfile.to_str().unwrap(),
        MCP,
    ]);
    let mut pgid = 0;
    wait_until(
        "the wrapper, its grandchild and the demo server run",
        || {
            pgid = std::fs::read_to_string(&pidfile)
                .ok()
                .and_then(|p| p.trim().parse().ok())
                .unwrap_or(0);
            let members = group_members(pgid);
            pgid != 0
                && members.iter().any(|(_, c)| c.contains("demo-server"))
                && members.iter().any(|(_, c)| c.starts_with("sleep 1000"))
        },
    );
    // The watchdog is started beside the server, a moment after it under load.
    let watchdog = format!("mcp-group-watchdog {pgid}");
    wait_until("the group's watchdog runs", || {
        !processes_matching(&watchdog).is_empty()
    });
    mcp.signal(signal);
    let (status, _, stderr) = mcp.finish();
    let mut left = Vec::new();
    let deadline = Instant::now() + GUARD;
    while Instant::now() < deadline {
        left = group_members(pgid);
        left.extend(
            processes_matching(&watchdog)
                .into_iter()
                .map(|p| (p, watchdog.clone())),
        );
        if left.is_empty() {
            break;
        }
        thread::sleep(Duration::from_millis(20));
    }
    assert!(
        left.is_empty(),
        "left behind after SIG{signal}: {left:?}\n{stderr}"
    );
    status
}

#[cfg(target_os = "linux")]
#[test]
fn sigterm_shuts_the_server_down_and_exits_143() {
    let status = no_server_left_after("TERM");
    assert_eq!(status.code(), Some(143));
}

#[cfg(target_os = "linux")]
#[test]
fn sighup_shuts_the_server_down_and_exits_129() {
    let status = no_server_left_after("HUP");
    assert_eq!(status.code(), Some(129));
}

#[cfg(target_os = "linux")]
#[test]
fn sigkill_of_the_client_leaves_no_server_behind() {
    use std::os::unix::process::ExitStatusExt as _;
    let status = no_server_left_after("KILL");
    assert_eq!(status.signal(), Some(9));
}

/// A stdio server that handles SIGTERM (like `mcp bridge --url`, which cancels upstream) gets
/// to run its handler when `mcp` is SIGKILLed: the parent-death signal and the group
/// watchdog send SIGTERM first and SIGKILL only after a grace.
#[cfg(target_os = "linux")]
#[test]
fn sigkill_of_the_client_lets_a_server_clean_up_on_sigterm() {
    let dir = temp_dir("term-cleanup");
    let marker = dir.join("cleaned-up");
    let pidfile = dir.join("leader.pid");
    // The demo server runs in the background (stdin passed on explicitly) so that `wait`,
    // unlike a foreground command, is interrupted by SIGTERM and the trap runs at once. The
    // demo server may see its input end (and exit) before the kernel's SIGTERM arrives, so
    // the wrapper then keeps waiting rather than exiting without running its trap.
    let script = r#"trap 'echo cleaned > "$1"; exit 0' TERM; echo $$ > "$2"; "$3" demo-server <&0 & wait; sleep 1000 & wait"#;
    let mcp = Running::start(&[
        "call",
        "slow",
        "steps=100",
        "delay_ms=100",
        "--",
        "sh",
        "-c",
        script,
        "server",
        marker.to_str().unwrap(),
        pidfile.to_str().unwrap(),
        MCP,
    ]);
    let mut pgid = 0;
    wait_until("the wrapper and the demo server run", || {
        pgid = std::fs::read_to_string(&pidfile)
            .ok()
            .and_then(|p| p.trim().parse().ok())
            .unwrap_or(0);
        pgid != 0
            && group_members(pgid)
                .iter()
                .any(|(_, c)| c.contains("demo-server"))
    });
    let watchdog = format!("mcp-group-watchdog {pgid}");
    wait_until("the group's watchdog runs", || {
        !processes_matching(&watchdog).is_empty()
    });
    mcp.signal("KILL");
    let (status, _, stderr) = mcp.finish();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(9)
    );
    wait_until("the server's SIGTERM handler wrote its marker", || {
        std::fs::read_to_string(&marker).is_ok_and(|m| m == "cleaned\n")
    });
    wait_until("no process of the group is left", || {
        group_members(pgid).is_empty() && processes_matching(&watchdog).is_empty()
    });
    let _ = std::fs::remove_dir_all(&dir);
    drop(stderr);
}
