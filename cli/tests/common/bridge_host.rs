//! A host on the stdio of the built `mcp bridge`, for the bridge's test binaries: the process
//! spawned with piped stdin and stdout, its JSON-RPC lines read on a thread, requests sent and
//! their answers awaited by id, its exit awaited under a guard.

use std::io::{BufRead as _, BufReader, Read, Write as _};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The anti-hang guard of every wait (never reached when the bridge works).
pub const GUARD: Duration = Duration::from_secs(30);

pub const MCP: &str = env!("CARGO_BIN_EXE_mcp");

/// A fresh, empty scratch directory for test `name` of a test binary (`kind`), unique to this
/// test process.
pub fn scratch_dir(kind: &str, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mcp-{kind}-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// The JSON values of the lines `r` gives, read on a thread; the channel ends with `r`.
/// A line that is not JSON fails the test: a bridge's stdout carries only JSON-RPC lines.
pub fn json_lines(r: impl Read + Send + 'static) -> mpsc::Receiver<Value> {
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(r).lines() {
            let Ok(line) = line else { return };
            let value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout carries only JSON-RPC lines: {line:?}: {e}"));
            if tx.send(value).is_err() {
                return;
            }
        }
    });
    lines
}

/// Waits for `child` to exit (within the guard); its exit code, or -1 for a signal.
pub fn wait_exit(child: &mut Child) -> i32 {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status.code().unwrap_or(-1);
        }
        assert!(started.elapsed() < GUARD, "the bridge did not exit");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The file a bridge's stderr goes to for [`BridgeHost::stderr`]: `stderr.txt` in `dir`.
pub fn stderr_file(dir: &std::path::Path) -> std::fs::File {
    std::fs::File::create(dir.join("stderr.txt")).expect("stderr file")
}

/// The bridge process with the host's end of its stdio. Dropping it kills the bridge and
/// removes `dir`.
pub struct BridgeHost {
    pub child: Child,
    /// `None` once closed ([`finish`](Self::finish)).
    pub stdin: Option<ChildStdin>,
    /// Every line the bridge writes, as JSON; disconnected when its stdout ends.
    pub lines: mpsc::Receiver<Value>,
    /// The test's scratch directory.
    pub dir: PathBuf,
    next_id: i64,
}

impl BridgeHost {
    /// Spawns `command` (an `mcp bridge` command line, its stderr set as the test wants) with
    /// piped stdin and stdout. Request ids of [`request`](Self::request) count from 1.
    pub fn spawn(mut command: Command, dir: PathBuf) -> Self {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn mcp bridge");
        let lines = json_lines(child.stdout.take().expect("piped stdout"));
        let stdin = child.stdin.take();
        BridgeHost {
            child,
            stdin,
            lines,
            dir,
            next_id: 1,
        }
    }

    /// Writes `message` as one line.
    pub fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{message}").expect("write to the bridge");
        stdin.flush().expect("flush");
    }

    /// The next line from the bridge.
    pub fn recv(&self) -> Value {
        self.lines
            .recv_timeout(GUARD)
            .expect("the bridge wrote a line before the guard")
    }

    /// Sends a request with the next id; returns the id.
    pub fn request(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// The answer to `id`, with every line before it.
    pub fn answer(&self, id: i64) -> (Value, Vec<Value>) {
        let mut before = Vec::new();
        loop {
            let line = self.recv();
            if line["id"] == id && line.get("method").is_none() {
                return (line, before);
            }
            before.push(line);
        }
    }

    /// Sends a request and returns its result (fails the test on an error answer).
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.request(method, params);
        let (answer, _) = self.answer(id);
        assert!(answer.get("error").is_none(), "{method}: {answer}");
        answer["result"].clone()
    }

    /// Lines until one with `method`, which is returned.
    pub fn until(&self, method: &str) -> Value {
        loop {
            let line = self.recv();
            if line["method"] == method {
                return line;
            }
        }
    }

    /// The handshake as host `host-app` 3.1 at protocol 2025-06-18 with `capabilities`:
    /// `initialize` (id 1 when it is the first request), then `notifications/initialized`.
    /// Returns the result; fails the test on an error answer or on any line before it.
    pub fn initialize(&mut self, capabilities: &Value) -> Value {
        self.initialize_at("2025-06-18", capabilities)
    }

    /// `initialize` asking for protocol `version`.
    pub fn initialize_at(&mut self, version: &str, capabilities: &Value) -> Value {
        let id = self.request(
            "initialize",
            json!({"protocolVersion": version, "capabilities": capabilities,
                "clientInfo": {"name": "host-app", "version": "3.1"}}),
        );
        let (answer, before) = self.answer(id);
        assert!(before.is_empty(), "{before:?}");
        assert!(
            answer.get("error").is_none() && answer["result"].is_object(),
            "initialize: {answer}"
        );
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        answer["result"].clone()
    }

    /// The names of `tools/list`'s first page.
    pub fn tool_names(&mut self) -> Vec<String> {
        let result = self.call("tools/list", json!({}));
        names(&result["tools"])
    }

    /// What the bridge wrote to stderr so far, when spawned with [`stderr_file`].
    pub fn stderr(&self) -> String {
        std::fs::read_to_string(self.dir.join("stderr.txt")).unwrap_or_default()
    }

    /// Waits for the exit code (stdin left as it is).
    pub fn wait_exit(&mut self) -> i32 {
        wait_exit(&mut self.child)
    }

    /// Closes stdin and waits for the exit code.
    pub fn finish(&mut self) -> i32 {
        drop(self.stdin.take());
        self.wait_exit()
    }
}

impl Drop for BridgeHost {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A bridge's upstream command in `dir`: `sh` (the process group leader) writes its pid to
/// `pgid`, then runs the demo server with its input copied into `upstream.log`.
pub fn recorded_demo_server(dir: &std::path::Path) -> Vec<String> {
    let script = format!(
        "echo $$ > '{pid}'; tee -a '{log}' | '{MCP}' demo-server",
        pid = dir.join("pgid").display(),
        log = dir.join("upstream.log").display(),
    );
    vec!["sh".into(), "-c".into(), script]
}

/// A child process killed and reaped when dropped, also when the test fails midway.
pub struct Reaped(pub Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The `name` of every item of `list` (tools, prompts).
pub fn names(list: &Value) -> Vec<String> {
    list.as_array()
        .expect("a list")
        .iter()
        .map(|t| t["name"].as_str().expect("a name").to_owned())
        .collect()
}

/// Whether any process of group `pgid` is alive (`kill -0 -- -PGID`).
pub fn group_alive(pgid: i32) -> bool {
    Command::new("kill")
        .args(["-0", "--", &format!("-{pgid}")])
        .stderr(Stdio::null())
        .status()
        .expect("run kill")
        .success()
}
