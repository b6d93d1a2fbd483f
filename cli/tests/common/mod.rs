//! What several test binaries of the built `mcp` share.

// Each test binary that includes this module uses a part of it.
#![allow(dead_code)]

pub mod bridge_host;
pub mod browser;
pub mod host_tasks;
pub mod listening;
pub mod port_in_use;
pub mod python_server;
pub mod raw_http;
pub mod run;
pub mod stopping;

/// npm server-everything's command line (`MCP_PEER_EVERYTHING`, from `.peers/env.sh`), or
/// `None` when skipping was asked for (`MCP_SKIP_INTEROP=1`); without either the test fails,
/// naming `scripts/test`.
pub fn everything() -> Option<Vec<String>> {
    match std::env::var("MCP_PEER_EVERYTHING") {
        Ok(cmd) if !cmd.trim().is_empty() => {
            Some(cmd.split_whitespace().map(str::to_owned).collect())
        }
        _ if std::env::var("MCP_SKIP_INTEROP").as_deref() == Ok("1") => {
            eprintln!("skipped: MCP_SKIP_INTEROP=1 and no MCP_PEER_EVERYTHING");
            None
        }
        _ => panic!(
            "MCP_PEER_EVERYTHING is not set: run `scripts/test` (it installs the peers and \
             sources .peers/env.sh), or set MCP_SKIP_INTEROP=1 to skip this test"
        ),
    }
}
