//! Who may use the bridge: the bearer token it requires, the Origin check.

use std::process::{Command, Stdio};

use crate::common::raw_http::{exchange, initialize_body, open_session};
use crate::harness::{Listener, MCP};

#[test]
fn a_bearer_token_is_required_and_foreign_origins_are_refused() {
    let bridge = Listener::start(
        "bearer",
        &[
            "--bearer-token-env",
            "BRIDGE_TEST_TOKEN",
            "--allow-origin",
            "https://app.example.com",
        ],
        &[("BRIDGE_TEST_TOKEN", "s3cret")],
    );
    // The token is never on the command line.
    let argv =
        std::fs::read_to_string(format!("/proc/{}/cmdline", bridge.child.id())).unwrap_or_default();
    assert!(!argv.contains("s3cret"));

    let without = exchange(&bridge.url, "POST", &[], Some(&initialize_body("h")));
    assert_eq!(without.status, 401);
    let wrong = exchange(
        &bridge.url,
        "POST",
        &[("Authorization", "Bearer nope")],
        Some(&initialize_body("h")),
    );
    assert_eq!(wrong.status, 401);
    let auth = [("Authorization", "Bearer s3cret")];
    let session = open_session(&bridge.url, "h", &auth);
    assert!(!session.is_empty());

    let foreign = exchange(
        &bridge.url,
        "POST",
        &[auth[0], ("Origin", "http://evil.example")],
        Some(&initialize_body("h")),
    );
    assert_eq!(foreign.status, 403);
    let allowed = exchange(
        &bridge.url,
        "POST",
        &[auth[0], ("Origin", "https://app.example.com")],
        Some(&initialize_body("h")),
    );
    assert_eq!(allowed.status, 200);
}

#[test]
fn a_missing_bearer_token_variable_is_a_usage_error() {
    let out = Command::new(MCP)
        .args([
            "bridge",
            "--listen",
            "127.0.0.1:0",
            "--bearer-token-env",
            "BRIDGE_TEST_UNSET_VAR",
            "--",
            MCP,
            "demo-server",
        ])
        .env_remove("BRIDGE_TEST_UNSET_VAR")
        .output()
        .expect("run mcp bridge");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("BRIDGE_TEST_UNSET_VAR"),
        "{out:?}"
    );
}

/// `mcp tools --url` against a bridge that wants a static bearer token (no OAuth offered):
/// the hint says how to send the token, not to log in.
#[test]
fn a_static_bearer_token_server_hints_the_header_not_a_login() {
    let mut bridge = Listener::start(
        "static-token",
        &["--bearer-token-env", "BRIDGE_TEST_TOKEN"],
        &[("BRIDGE_TEST_TOKEN", "s3cret")],
    );
    let home = bridge.dir.join("home");
    let out = Command::new(MCP)
        .args(["tools", "--url", &bridge.url])
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_STATE_HOME", home.join("state"))
        .stdin(Stdio::null())
        .output()
        .expect("run mcp tools");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("needs authorization"), "{stderr}");
    assert!(
        stderr.contains("hint: the server wants an access token and offers no OAuth login"),
        "{stderr}"
    );
    assert!(
        stderr.contains("-H 'Authorization: Bearer ***' (*** = your token)"),
        "{stderr}"
    );
    assert!(!stderr.contains("mcp login"), "{stderr}");

    // With the token, the same command works.
    let ok = Command::new(MCP)
        .args([
            "tools",
            "--url",
            &bridge.url,
            "-H",
            "Authorization: Bearer s3cret",
        ])
        .env("HOME", &home)
        .stdin(Stdio::null())
        .output()
        .expect("run mcp tools");
    assert!(ok.status.success(), "{ok:?}");
    let (status, _) = bridge.stop("-TERM");
    assert_eq!(status.code(), Some(0));
}
