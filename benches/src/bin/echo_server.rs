//! The end-to-end benchmarks' echo server on stdio (see `mcp_bench::echo`).
//!
//! ```text
//! echo_server         # an MCP server with one tool, `echo`
//! echo_server --raw   # writes every line back, no JSON-RPC
//! ```

use std::process::ExitCode;

use mcp_bench::echo::{Mode, serve};

fn main() -> ExitCode {
    let mode = match std::env::args().nth(1).as_deref() {
        None => Mode::Mcp,
        Some("--raw") => Mode::Raw,
        Some(other) => {
            eprintln!("usage: echo_server [--raw] (got {other:?})");
            return ExitCode::FAILURE;
        }
    };
    match serve(mode, std::io::stdin().lock(), std::io::stdout().lock()) {
        Ok(_) => ExitCode::SUCCESS,
        // The client closing its end first is how a benchmark ends.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("echo_server: {e}");
            ExitCode::FAILURE
        }
    }
}
