//! `mcp bridge --url URL` in front of the local OAuth-protected MCP server
//! (`mcp_driver::testing::oauth_server`, on 127.0.0.1) with no stored token: without a
//! terminal the host's `initialize` is answered with an error saying to run `mcp login`;
//! with one, the bridge runs the browser login `mcp login` runs, stores the token and goes
//! on.
//!
//! "No terminal" is `setsid` with stderr to a file (no controlling terminal, stderr not a
//! tty). "A terminal" is `script`, which gives the bridge a pseudo-terminal as its
//! controlling terminal while its stdin and stdout stay the protocol (FIFOs). The "browser"
//! is `$MCP_BROWSER`: a bash script that GETs the authorization URL (the test server
//! approves at once) and then its `Location`, the bridge's loopback callback, and logs each
//! visit.

#![cfg(target_os = "linux")]

mod common;

use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::Ordering::SeqCst;
use std::time::Duration;

use common::bridge_host::{json_lines, wait_exit};
use common::browser::BROWSER;
use mcp_driver::testing::oauth_server::OAuthServer;
use serde_json::json;

/// The anti-hang guard of every wait (never reached when the bridge works).
const GUARD: Duration = Duration::from_secs(60);

struct Env {
    dir: PathBuf,
}

impl Env {
    fn new(name: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("mcp-bridge-login-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        std::fs::write(dir.join("browser.sh"), BROWSER).expect("browser script");
        Env { dir }
    }

    fn envs(&self, c: &mut Command) {
        c.env("MCP_TOKEN_STORE", self.dir.join("tokens.json"))
            .env(
                "MCP_BROWSER",
                format!("bash {}", self.dir.join("browser.sh").display()),
            )
            .env("BROWSER_LOG", self.dir.join("browser.log"));
    }

    fn browser_visits(&self) -> usize {
        std::fs::read_to_string(self.dir.join("browser.log"))
            .unwrap_or_default()
            .lines()
            .count()
    }

    fn tokens(&self) -> String {
        std::fs::read_to_string(self.dir.join("tokens.json")).unwrap_or_default()
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(self.dir.join("stderr.log")).unwrap_or_default()
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn initialize() -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "host-app", "version": "1"}}})
    .to_string()
}

#[test]
fn without_a_terminal_initialize_says_to_run_mcp_login_and_no_browser_opens() {
    let server = OAuthServer::start(3600);
    let url = server.mcp_url();
    let env = Env::new("none");
    let mut c = Command::new("setsid");
    c.args([env!("CARGO_BIN_EXE_mcp"), "bridge", "--url", &url])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(File::create(env.dir.join("stderr.log")).expect("stderr file"));
    env.envs(&mut c);
    let mut child = c.spawn().expect("spawn setsid mcp bridge");
    let out = json_lines(child.stdout.take().expect("piped stdout"));
    let mut stdin = child.stdin.take().expect("piped stdin");
    writeln!(stdin, "{}", initialize()).expect("write");
    let refused = out.recv_timeout(GUARD).expect("an answer to initialize");
    assert_eq!(refused["id"], 1, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("mcp login"), "{refused}");
    assert!(message.contains(&url), "{refused}");
    drop(stdin);
    assert_ne!(wait_exit(&mut child), 0);
    assert_eq!(env.browser_visits(), 0, "no browser without a terminal");
    assert!(env.tokens().is_empty());
    assert!(env.stderr().contains("mcp login"), "{}", env.stderr());
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("run mkfifo");
    assert!(status.success());
}

#[test]
fn with_a_terminal_the_bridge_logs_in_in_the_browser_stores_the_token_and_goes_on() {
    let server = OAuthServer::start(3600);
    let url = server.mcp_url();
    let env = Env::new("tty");
    let (fifo_in, fifo_out) = (env.dir.join("in"), env.dir.join("out"));
    mkfifo(&fifo_in);
    mkfifo(&fifo_out);
    // `script` runs the bridge on a new pseudo-terminal (its controlling terminal), with
    // stdin and stdout redirected to the FIFOs and stderr to a file.
    let inner = format!(
        "exec '{}' bridge --url '{url}' <'{}' >'{}' 2>'{}'",
        env!("CARGO_BIN_EXE_mcp"),
        fifo_in.display(),
        fifo_out.display(),
        env.dir.join("stderr.log").display(),
    );
    let mut c = Command::new("script");
    c.args(["-qec", &inner, "/dev/null"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    env.envs(&mut c);
    let mut child = c.spawn().expect("spawn script");
    // The shell opens stdin's FIFO first, then stdout's.
    let mut stdin = File::options()
        .write(true)
        .open(&fifo_in)
        .expect("open the bridge's stdin");
    let out = json_lines(File::open(&fifo_out).expect("open the bridge's stdout"));
    writeln!(stdin, "{}", initialize()).expect("write");
    let init = out.recv_timeout(GUARD).expect("an answer to initialize");
    assert!(init.get("result").is_some(), "{init}\n{}", env.stderr());
    assert_eq!(init["result"]["serverInfo"]["name"], "oauth-test");
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
    )
    .expect("write");
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    )
    .expect("write");
    let list = out.recv_timeout(GUARD).expect("the tool list");
    assert_eq!(list["result"]["tools"][0]["name"], "echo", "{list}");
    assert_eq!(env.browser_visits(), 1);
    assert_eq!(server.state.authorizations.load(SeqCst), 1);
    let stored = env.tokens();
    assert!(stored.contains(&url), "the token is stored: {stored}");
    assert!(
        env.stderr().contains("logging in in the browser"),
        "{}",
        env.stderr()
    );
    assert!(!env.stderr().contains("access-"), "no token on stderr");
    drop(stdin);
    assert_eq!(wait_exit(&mut child), 0);
}
