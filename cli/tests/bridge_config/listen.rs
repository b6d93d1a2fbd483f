//! `mcp bridge --config FILE --listen ADDR`.

use std::io::{BufRead as _, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::host::{GUARD, MCP, names, test_dir, write_config};

/// `--listen`: the same servers over Streamable HTTP on 127.0.0.1, for `mcp` itself as the
/// client: namespaced tools, a routed call, a filtered tool refused, a resource read; SIGTERM
/// stops the bridge and its servers.
#[test]
fn listen_serves_the_servers_over_http() {
    let dir = test_dir("listen");
    let config = write_config(&dir);
    let mut bridge = Command::new(MCP)
        .args([
            "bridge",
            "--listen",
            "127.0.0.1:0",
            "--deny",
            "beta__*",
            "--config",
        ])
        .arg(&config)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn mcp bridge --listen");
    let (tx, rx) = mpsc::channel();
    let stderr = bridge.stderr.take().expect("piped stderr");
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    // The URL alone on the first line, then what the start found.
    let url = rx.recv_timeout(GUARD).expect("the bridge printed its URL");
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"),
        "{url}"
    );
    let failed = rx.recv_timeout(GUARD).expect("the broken server reported");
    assert!(failed.contains(r#"server "broken" failed"#), "{failed}");

    let mcp = |args: &[&str]| {
        Command::new(MCP)
            .args(args)
            .args(["--url", &url])
            .output()
            .expect("run mcp")
    };
    let tools = mcp(&["tools", "--json"]);
    let tools: Value = serde_json::from_slice(&tools.stdout).expect("tools --json");
    let tools = names(&tools["tools"]);
    assert!(tools.contains(&"alpha__echo".to_owned()), "{tools:?}");
    assert!(!tools.iter().any(|t| t.starts_with("beta__")), "{tools:?}");
    let echoed = mcp(&["call", "alpha__echo", "text=over http"]);
    assert_eq!(String::from_utf8_lossy(&echoed.stdout).trim(), "over http");
    // A tool that needs elicitation is listed; its call fails, saying why.
    let asked = mcp(&["call", "alpha__ask", "question=name?"]);
    assert!(!asked.status.success());
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&asked.stdout),
        String::from_utf8_lossy(&asked.stderr)
    );
    assert!(said.contains("does not forward"), "{said}");
    let refused = mcp(&["call", "beta__echo", "text=no"]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("unknown tool: beta__echo"));
    let read = mcp(&["read", "mcp-bridge://beta/demo://readme"]);
    assert!(
        String::from_utf8_lossy(&read.stdout).contains("demo server"),
        "{read:?}"
    );

    let stopped = Command::new("kill")
        .args(["-TERM", &bridge.id().to_string()])
        .status()
        .expect("run kill");
    assert!(stopped.success());
    let started = Instant::now();
    let status = loop {
        if let Some(status) = bridge.try_wait().expect("wait") {
            break status;
        }
        assert!(
            started.elapsed() < GUARD,
            "the bridge did not stop on SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    // Asked to stop, it ends cleanly.
    assert_eq!(status.code(), Some(0));
    // The servers go with it (their process is reaped by init once the bridge is gone).
    let pid = std::fs::read_to_string(dir.join("alpha.pid")).expect("alpha's pid");
    let alive = || {
        let state = std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()));
        // A zombie (state Z) is gone too: only its exit status is left.
        state.is_ok_and(|s| {
            !s.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
    };
    let started = Instant::now();
    while alive() {
        assert!(
            started.elapsed() < GUARD,
            "alpha's process outlived the bridge"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--config --listen` on a port another program holds: the same one error and hint as the
/// single bridge, no server started.
#[test]
fn a_port_in_use_says_so_once_and_hints_another_port() {
    let dir = test_dir("listen-taken");
    let config = write_config(&dir);
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a port");
    let addr = taken.local_addr().expect("its address").to_string();
    let out = Command::new(MCP)
        .args(["bridge", "--listen", &addr, "--config"])
        .arg(&config)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .stdin(Stdio::null())
        .output()
        .expect("run mcp bridge --listen");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.starts_with(&format!("error: cannot listen on {addr}: ")),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "hint: another program listens on this port: pick another, or :0 for any free one"
        ),
        "{stderr}"
    );
    assert!(
        !dir.join("alpha.pid").exists(),
        "no server was started: {stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
