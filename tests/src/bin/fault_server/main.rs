//! An MCP server that misbehaves on command, for the fault-matrix tests: over stdio (module
//! [`stdio`]), or over Streamable HTTP with `--http` (module [`http`]).
//!
//! What it does as a valid MCP server (the handshake with version negotiation, `ping`,
//! correlation, cancellation, progress, `tools/list`, `tools/call`) is done by mcp-proto's
//! server session. The faults are hand-written on purpose and kept apart: [`faults`] writes
//! raw bytes around or instead of the session's answers (or mistreats the process),
//! [`hostile`] the resource-exhaustion and undecodable-answer faults. The handshake is always
//! normal; a fault applies after it (whole-process mode) or to one request (a `tools/call`
//! whose tool name is the fault). See `options::HELP` for every mode, and `tests/README.md`.

mod faults;
mod hostile;
mod http;
mod log;
mod options;
mod stdio;
mod tools;

fn main() {
    let options = match options::parse_args() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("fault_server: {e}");
            std::process::exit(2);
        }
    };
    let log = log::Log::open(options.log.as_deref());
    if let Some(mode) = options.http {
        http::run(mode, log);
    }
    stdio::run(options.mode, options.stay, log);
}
