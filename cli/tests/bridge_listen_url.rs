//! `mcp bridge --listen`'s first line on stderr is its URL, printed as soon as the port is
//! bound: before any server starts, so a server that writes to stderr at start comes after it.

use serde_json::json;

mod common;
use common::bridge_host::MCP;
use common::listening::Listening;

/// A child that writes to stderr as it starts: the bridge's URL still comes first.
fn child_talking_at_start() -> Vec<String> {
    vec![
        "sh".into(),
        "-c".into(),
        format!("echo started >&2; exec '{MCP}' demo-server"),
    ]
}

/// The first stderr line of `mcp bridge --listen 127.0.0.1:0 ARGS`, and then that the child's
/// `started` line also came.
fn first_line_of_listening_bridge(args: &[String]) -> String {
    let command = ["bridge", "--listen", "127.0.0.1:0"]
        .into_iter()
        .chain(args.iter().map(String::as_str))
        .collect::<Vec<_>>();
    let listening = Listening::start(&command, &[]).url_first();
    listening.wait_stderr("started");
    listening.url.clone()
}

#[test]
fn the_url_is_the_first_line_even_when_a_stateless_child_talks_at_start() {
    let mut args: Vec<String> = vec!["--stateless".into(), "--".into()];
    args.extend(child_talking_at_start());
    let first = first_line_of_listening_bridge(&args);
    assert!(
        first.starts_with("http://127.0.0.1:") && first.ends_with("/mcp"),
        "{first:?}"
    );
}

#[test]
fn the_url_is_the_first_line_even_when_a_config_server_talks_at_start() {
    let dir = std::env::temp_dir().join(format!("mcp-bridge-url-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let config = dir.join("servers.json");
    let argv = child_talking_at_start();
    std::fs::write(
        &config,
        json!({"mcpServers": {"talker": {"command": argv[0], "args": argv[1..]}}}).to_string(),
    )
    .expect("write the config");
    let first = first_line_of_listening_bridge(&["--config".into(), config.display().to_string()]);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        first.starts_with("http://127.0.0.1:") && first.ends_with("/mcp"),
        "{first:?}"
    );
}
