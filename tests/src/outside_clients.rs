//! MCP clients nobody in this repository wrote, as test programs: the npm TypeScript SDK client
//! (`tests/clients/ts_sdk_client.mjs`) and the PyPI `mcp` client
//! (`tests/clients/py_sdk_client.py`), each running one scenario (tools listed, a call with
//! progress, sampling and elicitation answered by the client, a resource subscription, a
//! cancelled call) against a [`Target`] and printing one JSON line per step.
//!
//! The target is a parameter: today `tests/outside_clients.rs` points the scripts at
//! server-everything itself; a bridge test points the same scripts at `mcp bridge ...` (a stdio
//! command) or at the URL it listens on, and asserts the same steps with
//! [`assert_scenario_passed`].

use std::io::{BufRead as _, BufReader, Read as _};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::peers::{PeerProcess, Peers, ProcessTag, free_port, wait_for_port, wait_until};

/// Every step a script reports, in order; a run passes when each is there once with `ok`.
pub const STEPS: [&str; 8] = [
    "connect",
    "list_tools",
    "progress",
    "sampling",
    "elicitation",
    "subscribe",
    "cancel",
    "close",
];

/// How long one run may take before the test kills it (the scripts' own guard is 45 s).
pub const RUN_BOUND: Duration = Duration::from_secs(60);

/// How much of a script's stderr is kept for a failure message.
const STDERR_KEEP: usize = 16 * 1024;

/// Which outside client runs the scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SdkClient {
    /// npm `@modelcontextprotocol/sdk` (1.x) under node 22.
    TypeScript,
    /// PyPI `mcp` 1.x under the peers' Python.
    Python,
}

/// What the client talks to.
#[derive(Debug, Clone, Copy)]
pub enum Target<'a> {
    /// A stdio server the client spawns itself: program and arguments.
    Stdio(&'a [String]),
    /// A Streamable HTTP endpoint (`http://127.0.0.1:PORT/mcp`).
    Url(&'a str),
    /// `mcp demo-server --listen` at this URL: the same steps on the demo's tools (`slow`,
    /// `model`, `ask`, `echo`, the resource `demo://clock`; the scripts' `--demo`).
    DemoUrl(&'a str),
}

/// One JSON line of a script.
#[derive(Debug, Clone)]
pub struct Step {
    /// The step's name (one of [`STEPS`], or `guard` when the script's own bound ran out).
    pub step: String,
    /// Whether every check of the step held.
    pub ok: bool,
    /// What the step saw (on failure: `{"error": ...}`).
    pub detail: Value,
}

/// The outcome of one run of a script.
#[derive(Debug)]
pub struct Run {
    /// Which client ran.
    pub client: SdkClient,
    /// The script's exit status.
    pub status: ExitStatus,
    /// Its steps, in the order printed.
    pub steps: Vec<Step>,
    /// Stdout lines that were not step objects (there should be none).
    pub stray_lines: Vec<String>,
    /// The end of its stderr (the SDKs' and the server's diagnostics), for failure messages.
    pub stderr_tail: String,
}

impl Run {
    /// The detail of `step`, if it was reported.
    #[must_use]
    pub fn detail(&self, step: &str) -> Option<&Value> {
        self.steps
            .iter()
            .find(|s| s.step == step)
            .map(|s| &s.detail)
    }
}

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("clients")
        .join(name)
}

/// The command that runs `client`'s script against `target`.
///
/// # Panics
///
/// When the TypeScript SDK is not in the peers' `node_modules` (`scripts/install-peers` puts
/// it there).
#[must_use]
pub fn command(client: SdkClient, peers: &Peers, target: Target<'_>) -> Command {
    let mut cmd = match client {
        SdkClient::TypeScript => {
            let sdk = peers
                .ts2_node_modules
                .join("@modelcontextprotocol/sdk/package.json");
            assert!(
                sdk.is_file(),
                "{} is missing: run scripts/install-peers (it pins @modelcontextprotocol/sdk)",
                sdk.display()
            );
            let mut cmd = Command::new(&peers.node22);
            cmd.arg(script("ts_sdk_client.mjs"))
                .arg("--node-modules")
                .arg(&peers.ts2_node_modules);
            cmd
        }
        SdkClient::Python => {
            let mut cmd = Command::new(&peers.python);
            cmd.arg(script("py_sdk_client.py"));
            cmd
        }
    };
    match target {
        Target::Stdio(program) => cmd.arg("--stdio").args(program),
        Target::Url(url) => cmd.arg("--url").arg(url),
        Target::DemoUrl(url) => cmd.arg("--demo").arg("--url").arg(url),
    };
    cmd
}

/// Runs `client`'s scenario against `target` and collects its steps; bounded by [`RUN_BOUND`].
/// Every process the run started (the script, and the stdio server it spawned) is gone when
/// this returns.
///
/// # Panics
///
/// When the script cannot start, outlives [`RUN_BOUND`] (it is killed, with its server), or
/// leaves a process behind.
#[must_use]
pub fn run(client: SdkClient, peers: &Peers, target: Target<'_>) -> Run {
    let tag = ProcessTag::new(match client {
        SdkClient::TypeScript => "ts-sdk-client",
        SdkClient::Python => "py-sdk-client",
    });
    let (key, value) = tag.env();
    let mut child = command(client, peers, target)
        .env(key, value)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap_or_else(|e| panic!("{client:?} client: spawn failed: {e}"));
    let stdout = child.stdout.take().expect("stdout was piped above");
    let mut stderr = child.stderr.take().expect("stderr was piped above");
    let lines = std::thread::spawn(move || {
        BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            .collect::<Vec<_>>()
    });
    // Drained continuously (a full pipe would stall the script); only the end is kept.
    let stderr_reader = std::thread::spawn(move || {
        let mut tail = Vec::new();
        let mut buf = [0u8; 8192];
        while let Ok(n) = stderr.read(&mut buf) {
            if n == 0 {
                break;
            }
            tail.extend_from_slice(&buf[..n]);
            if tail.len() > 2 * STDERR_KEEP {
                tail.drain(..tail.len() - STDERR_KEEP);
            }
        }
        let from = tail.len().saturating_sub(STDERR_KEEP);
        String::from_utf8_lossy(&tail[from..]).into_owned()
    });

    let end = Instant::now() + RUN_BOUND;
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait on our own child") {
            break status;
        }
        if Instant::now() >= end {
            let pids = tag.pids();
            kill_all(child.id(), &pids);
            let _ = child.wait();
            panic!(
                "{client:?} client against {target:?}: no end within {RUN_BOUND:?}; killed \
                 it and {pids:?}; steps so far: {:?}; stderr: {}",
                lines.join().unwrap_or_default(),
                stderr_reader.join().unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // The script is gone; a server it spawned and did not reap would still carry the tag.
    if !wait_until(Duration::from_secs(5), || tag.pids().is_empty()) {
        let left = tag.pids();
        kill_all(child.id(), &left);
        panic!("{client:?} client against {target:?}: processes left behind: {left:?}");
    }
    let lines = lines.join().expect("the stdout reader does not panic");
    let stderr_tail = stderr_reader
        .join()
        .expect("the stderr reader does not panic");
    let mut steps = Vec::new();
    let mut stray_lines = Vec::new();
    for line in lines {
        match serde_json::from_str::<Value>(&line) {
            Ok(v) if v["step"].is_string() && v["ok"].is_boolean() => steps.push(Step {
                step: v["step"].as_str().unwrap_or_default().to_owned(),
                ok: v["ok"].as_bool().unwrap_or_default(),
                detail: v["detail"].clone(),
            }),
            _ => stray_lines.push(line),
        }
    }
    Run {
        client,
        status,
        steps,
        stray_lines,
        stderr_tail,
    }
}

/// SIGKILL to the script's process group and to every tagged pid (a server in a session of
/// its own is not in the script's group).
fn kill_all(group: u32, pids: &[u32]) {
    let group = i32::try_from(group).ok().map(|g| -g);
    for pid in group
        .into_iter()
        .chain(pids.iter().filter_map(|p| i32::try_from(*p).ok()))
    {
        // SAFETY: kill(2) with a pid or a negated process-group id of processes this test
        // started; no memory is involved.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    }
}

/// Asserts what a host sees of npm server-everything, directly or through a bridge: its
/// identity, the negotiated 2025-11-25, the four progress values of the progress step, and a
/// cancelled call whose `notifications/cancelled` names the host's own request id and whose
/// answer never came.
///
/// # Panics
///
/// On the first fact that does not hold, with the step's details.
pub fn assert_everything_seen(run: &Run, what: &str) {
    let connect = run.detail("connect").expect("connect reported");
    assert_eq!(
        connect["server"]["name"], "mcp-servers/everything",
        "{what}: {connect}"
    );
    assert_eq!(
        connect["negotiated_version"], "2025-11-25",
        "{what}: {connect}"
    );
    let progress = run.detail("progress").expect("progress reported");
    assert_eq!(
        progress["values"].as_array().map(Vec::len),
        Some(4),
        "{what}: {progress}"
    );
    let cancel = run.detail("cancel").expect("cancel reported");
    assert_eq!(
        cancel["cancelled_notification"]["requestId"], cancel["request_id"],
        "{what}: {cancel}"
    );
    assert_eq!(cancel["late_answer"], false, "{what}: {cancel}");
}

/// Asserts that `run` reported every step of [`STEPS`] once, in order, each `ok`, nothing else
/// on stdout, and exited 0.
///
/// # Panics
///
/// Naming the failed steps with their details and the end of the script's stderr.
pub fn assert_scenario_passed(run: &Run, what: &str) {
    let names: Vec<&str> = run.steps.iter().map(|s| s.step.as_str()).collect();
    let failed: Vec<String> = run
        .steps
        .iter()
        .filter(|s| !s.ok)
        .map(|s| format!("{}: {}", s.step, s.detail))
        .collect();
    let explain = || {
        format!(
            "{what} ({:?} client): exit {:?}; steps {names:?}; failed: {failed:#?}; stray \
             stdout: {:?}; stderr tail:\n{}",
            run.client, run.status, run.stray_lines, run.stderr_tail
        )
    };
    assert!(failed.is_empty(), "{}", explain());
    assert_eq!(names, STEPS, "{}", explain());
    assert!(run.stray_lines.is_empty(), "{}", explain());
    assert!(run.status.success(), "{}", explain());
}

/// server-everything in `streamableHttp` mode on a free port, with its URL; the process group
/// is killed when the returned guard drops. It binds every interface: call it only inside the
/// loopback-only namespace ([`crate::peers::require_netns`]).
///
/// # Panics
///
/// When it does not start or does not listen within 20 s.
#[must_use]
pub fn start_everything_http(peers: &Peers) -> (PeerProcess, String) {
    let port = free_port();
    let port_s = port.to_string();
    let args: Vec<&str> = peers.everything[1..]
        .iter()
        .map(String::as_str)
        .chain(["streamableHttp"])
        .collect();
    let mut server = PeerProcess::spawn(&peers.everything[0], &args, &[("PORT", &port_s)])
        .unwrap_or_else(|e| panic!("spawn server-everything streamableHttp: {e}"));
    assert!(
        wait_for_port(port, Duration::from_secs(20)),
        "server-everything: nothing listens on 127.0.0.1:{port} (running: {})",
        server.is_running()
    );
    (server, format!("http://127.0.0.1:{port}/mcp"))
}
