//! The demo MCP server behind `mcp demo-server`: a small stdio server over the core's JSON-RPC
//! codec, line framing and typed payloads (the core itself has no server session).
//!
//! [`serve`] reads newline-delimited JSON-RPC from any [`Read`] and writes to any [`Write`]:
//! the reader loop answers quick requests inline and runs each `tools/call` on its own thread,
//! so answers may come out of order and a slow tool never blocks the rest. One writer thread
//! owns the output, so every message is one whole line. `notifications/cancelled` stops a
//! running tool and suppresses its response. Only JSON-RPC goes to the output; diagnostics
//! go to stderr.
//!
//! | method | behaviour |
//! | --- | --- |
//! | `initialize` | answers the client's version when supported, else [`LATEST_VERSION`] |
//! | `tools/list` | [`DemoConfig::page_size`] tools per page, `nextCursor` as an offset |
//! | `tools/list` | less `model` / `roots` for a client without sampling / roots |
//! | `tools/call` | `echo`, `add`, `slow`, `ask`, `image`, `fail`, `model`, `roots` |
//! | `resources/*` | `demo://readme`, `demo://clock` (while subscribed it changes every second, with `notifications/resources/updated`), the template `demo://notes/{name}`, subscriptions |
//! | `prompts/*`, `completion/complete` | `summarize {text, style?}`, completion on `style` |
//! | `logging/setLevel` | `notifications/message` at or above the level |

mod catalog;
mod dispatch;
mod state;
mod tools;
mod wire;

#[cfg(test)]
mod tests;

use std::io::{self, Read, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_proto::framing::lines::{Line, LineDecoder};
use mcp_proto::jsonrpc::{DecodeError, Decoded, ErrorObject, decode_owned};
use mcp_proto::types::LoggingLevel;

pub use tools::DEMO_PNG_BASE64;

/// Every demo tool, as `tools/list` returns them (all pages together) to a client that
/// declared sampling and roots.
pub fn tool_definitions() -> Vec<mcp_proto::types::Tool> {
    tools::definitions()
}

use state::Shared;
use wire::Outbox;

/// The protocol versions the demo server speaks, oldest first.
pub const SUPPORTED_VERSIONS: &[&str] = &["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// The version offered when the client asks for one the server does not know.
pub const LATEST_VERSION: &str = "2025-11-25";

/// The environment variable `mcp demo-server` reads the `tools/list` page size from.
pub const PAGE_SIZE_ENV: &str = "MCP_DEMO_PAGE_SIZE";

/// How the demo server behaves; [`Default`] is what `mcp demo-server` uses.
#[derive(Debug, Clone)]
pub struct DemoConfig {
    /// Tools per `tools/list` page (at least 1). The default, 4, gives two pages.
    pub page_size: usize,
    /// The log level before any `logging/setLevel`; `None` sends no log messages.
    pub initial_log_level: Option<LoggingLevel>,
    /// At end of input, how long running tool calls may still finish and answer before they
    /// are cancelled.
    pub shutdown_grace: Duration,
    /// Suppresses the diagnostics on stderr.
    pub quiet: bool,
}

impl Default for DemoConfig {
    fn default() -> Self {
        DemoConfig {
            page_size: 4,
            initial_log_level: Some(LoggingLevel::Warning),
            shutdown_grace: Duration::from_secs(2),
            quiet: false,
        }
    }
}

impl DemoConfig {
    /// The default configuration with the page size taken from [`PAGE_SIZE_ENV`] when set.
    pub fn from_env() -> Self {
        let mut config = DemoConfig::default();
        if let Some(n) = std::env::var(PAGE_SIZE_ENV)
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
        {
            config.page_size = n.max(1);
        }
        config
    }
}

/// Serves one client over `input` / `output` until `input` ends.
///
/// At end of input, running tool calls get [`DemoConfig::shutdown_grace`] to finish; the rest
/// are cancelled, and `serve` returns once every queued message is written. Lines that are not
/// JSON-RPC get a parse error with a null id and the loop goes on. Errors are I/O errors of
/// `input` or `output`.
pub fn serve<R, W>(mut input: R, output: W, config: DemoConfig) -> io::Result<()>
where
    R: Read,
    W: Write + Send + 'static,
{
    let (out, writer) = Outbox::spawn(output);
    let shared = Arc::new(Shared::new(out, config));
    let mut decoder = LineDecoder::new();
    let mut buf = vec![0u8; 64 * 1024];
    let read_result = loop {
        let n = match input.read(&mut buf) {
            Ok(0) => break Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => break Err(e),
        };
        decoder.decode(&buf[..n], |line| on_line(&shared, line));
    };
    decoder.finish(|line| on_line(&shared, line));
    shut_down(&shared);
    drop(shared);
    let write_result = writer
        .join()
        .unwrap_or_else(|_| Err(io::Error::other("the demo server's writer thread panicked")));
    read_result.and(write_result)
}

/// Serves on the process's stdin and stdout: what `mcp demo-server` runs.
pub fn run_stdio() -> io::Result<()> {
    serve(io::stdin().lock(), io::stdout(), DemoConfig::from_env())
}

fn on_line(shared: &Arc<Shared>, line: Line<'_>) {
    let bytes = match line {
        Line::Message(bytes) => bytes,
        Line::TooLong { discarded, limit } => {
            return parse_error(
                shared,
                &format!("line of {discarded} bytes exceeds {limit}"),
            );
        }
        Line::InvalidUtf8 { .. } => return parse_error(shared, "line is not UTF-8"),
        _ => return,
    };
    match decode_owned(bytes.as_bytes()) {
        Ok(Decoded::Single(message)) => dispatch::message(shared, message),
        Ok(Decoded::Batch(items)) => {
            for item in items {
                match item {
                    Ok(message) => dispatch::message(shared, message),
                    Err(e) => decode_error(shared, &e),
                }
            }
        }
        Ok(_) => parse_error(shared, "unsupported message shape"),
        Err(e) => decode_error(shared, &e),
    }
}

fn decode_error(shared: &Shared, error: &DecodeError) {
    match error {
        DecodeError::NotJsonRpc { .. } => {
            shared.diag(&format!("ignored input: {error}"));
            let message = format!("Invalid Request: {error}");
            shared.out.error(
                None,
                &ErrorObject::new(ErrorObject::INVALID_REQUEST, message),
            );
        }
        _ => parse_error(shared, &error.to_string()),
    }
}

fn parse_error(shared: &Shared, detail: &str) {
    shared.diag(&format!("ignored input: {detail}"));
    shared.out.error(
        None,
        &ErrorObject::new(ErrorObject::PARSE_ERROR, format!("Parse error: {detail}")),
    );
}

/// Lets running calls finish within the grace period, then cancels the rest and waits for
/// their threads to let go (a cancelled tool returns within one sleep slice).
fn shut_down(shared: &Shared) {
    let deadline = Instant::now() + shared.config.shutdown_grace;
    let mut inner = shared.lock();
    // No reply to our own requests can arrive any more: wake their waiters.
    inner.closed = true;
    inner.waiting.clear();
    if let Some(ticker) = inner.ticker.take() {
        ticker.cancel();
    }
    while !inner.running.is_empty() {
        let now = Instant::now();
        if now >= deadline {
            for token in inner.running.values() {
                token.cancel();
            }
            break;
        }
        inner = match shared.idle.wait_timeout(inner, deadline - now) {
            Ok((guard, _)) => guard,
            Err(poisoned) => poisoned.into_inner().0,
        };
    }
}
