//! The end-to-end benchmarks' echo server on stdio (see `mcp_bench::echo`).
//!
//! ```text
//! echo_server         # an MCP server with one tool, `echo`
//! echo_server --raw   # writes every line back, no JSON-RPC
//! echo_server echo-server [--raw]   # the same, as e2e_stdio starts itself
//! ```

use std::process::ExitCode;

use mcp_bench::echo::{Mode, serve};

fn main() -> ExitCode {
    // A leading `echo-server` is accepted, so that `e2e_stdio` can run this binary with the
    // arguments it gives itself (`MCP_BENCH_SERVER`).
    let args: Vec<String> = std::env::args()
        .skip(1)
        .skip_while(|a| a == "echo-server")
        .collect();
    let mode = match args.first().map(String::as_str) {
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
