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
    let home = bridge.dir().join("home");
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

/// At the default verbosity the operator gets one line per refused request (401 without or
/// with a wrong token, 403 for a browser's Origin, no token printed) and per host session
/// opened and closed, both naming the host.
#[test]
fn refusals_and_host_sessions_get_one_line_each() {
    let mut bridge = Listener::start(
        "access-lines",
        &["--bearer-token-env", "MCP_F2_LISTEN_TOKEN"],
        &[("MCP_F2_LISTEN_TOKEN", "tok-f2-secret")],
    );
    let init = crate::common::raw_http::initialize_body("lines-host");
    let no_token = crate::common::raw_http::exchange(&bridge.url, "POST", &[], Some(&init));
    assert_eq!(no_token.status, 401);
    let wrong = crate::common::raw_http::exchange(
        &bridge.url,
        "POST",
        &[("Authorization", "Bearer nope")],
        Some(&init),
    );
    assert_eq!(wrong.status, 401);
    let browser = crate::common::raw_http::exchange(
        &bridge.url,
        "POST",
        &[
            ("Authorization", "Bearer tok-f2-secret"),
            ("Origin", "https://evil.example"),
        ],
        Some(&init),
    );
    assert_eq!(browser.status, 403);
    crate::common::raw_http::open_session(
        &bridge.url,
        "lines-host",
        &[("Authorization", "Bearer tok-f2-secret")],
    );
    let (_, stderr) = bridge.stop("-TERM");
    let said = |text: &str| stderr.iter().filter(|l| l.contains(text)).count();
    assert_eq!(
        said("refused a request with no Authorization (401"),
        1,
        "{stderr:?}"
    );
    assert_eq!(
        said("refused a request whose Authorization is wrong (401)"),
        1,
        "{stderr:?}"
    );
    assert_eq!(
        said(r#"refused a request from Origin "https://evil.example" (403"#),
        1,
        "{stderr:?}"
    );
    assert_eq!(said("opened by lines-host 1.0"), 1, "{stderr:?}");
    // The closed line names the host as the opened line does.
    assert_eq!(said("closed: "), 1, "{stderr:?}");
    assert_eq!(said("by lines-host 1.0 closed: "), 1, "{stderr:?}");
    assert_eq!(said("tok-f2-secret") + said("nope"), 0, "{stderr:?}");
}

/// With `-v`, each wire line is marked with the host session it belongs to (`[session N]`
/// what the host sent and was sent, `[session N upstream]` that session's upstream
/// connection), and the sessions' lines are not cut short after a few.
#[test]
fn verbose_wire_lines_name_their_host_session() {
    let mut bridge = Listener::start("wire-sessions", &["-v"], &[]);
    for host in ["host-a", "host-b", "host-c", "host-d", "host-e"] {
        open_session(&bridge.url, host, &[]);
    }
    let (_, stderr) = bridge.stop("-TERM");
    let wire: Vec<_> = stderr.iter().filter(|l| l.contains("-> {")).collect();
    assert!(!wire.is_empty(), "{stderr:?}");
    assert!(wire.iter().all(|l| l.starts_with("[session ")), "{wire:?}");
    let has = |prefix: &str, parts: &[&str]| {
        stderr
            .iter()
            .any(|l| l.starts_with(prefix) && parts.iter().all(|p| l.contains(p)))
    };
    // The host's own initialize as it sent it, and the bridge's to the upstream, as itself.
    assert!(
        has("[session 1] <- {", &["\"method\":\"initialize\"", "host-a"]),
        "{stderr:#?}"
    );
    assert!(has("[session 1] -> {", &["\"result\""]), "{stderr:#?}");
    assert!(
        has("[session 1 upstream] -> {", &["\"method\":\"initialize\""]),
        "{stderr:#?}"
    );
    for host in ["host-a", "host-e"] {
        assert_eq!(
            stderr
                .iter()
                .filter(|l| l.contains(&format!("opened by {host}")))
                .count(),
            1,
            "{stderr:?}"
        );
    }
    assert!(
        !stderr.iter().any(|l| l.contains("further lines like this")),
        "{stderr:?}"
    );
}
