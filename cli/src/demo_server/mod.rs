//! The demo MCP server behind `mcp demo-server`: the core's server session, driven by the
//! server driver of `mcp-driver` (through `mcp-tokio`), with a handler for the demo's tools,
//! prompts and resources.
//!
//! [`serve`] serves one client over any tokio byte stream pair, [`run_stdio`] over stdin and
//! stdout. Each `tools/call` runs on its own thread, so answers may come out of order and a
//! slow tool never blocks the rest; `notifications/cancelled` stops a running tool and
//! suppresses its response. Only JSON-RPC goes to the output; diagnostics go to stderr.
//!
//! | method | behaviour |
//! | --- | --- |
//! | `initialize` | answers the client's version when supported, else [`LATEST_VERSION`] |
//! | `server/discover` | with `--modern` ([`DemoConfig::modern`]): protocol 2026-07-28, each request with its own `_meta` envelope |
//! | `subscriptions/listen` | with `--modern`: answered by the session; a listen with `resourceSubscriptions: ["demo://clock"]` gets the clock's `notifications/resources/updated` every second, tagged with its `subscriptionId` |
//! | `tools/list` | [`DemoConfig::page_size`] tools per page, `nextCursor` as an offset |
//! | `tools/list` | less `model` / `roots` for a client without sampling / roots |
//! | `tools/call` | `echo`, `add`, `slow`, `ask`, `image`, `fail`, `model`, `roots` |
//! | `resources/*` | `demo://readme`, `demo://clock` (while subscribed it changes every second, with `notifications/resources/updated`), the template `demo://notes/{name}`, subscriptions |
//! | `prompts/*`, `completion/complete` | `summarize {text, style?}`, completion on `style` |
//! | `logging/setLevel` | `notifications/message` at or above the level |
//!
//! With [`DemoConfig::conformance`] (`mcp demo-server --conformance`, or
//! [`CONFORMANCE_ENV`]`=1`) it serves the [`conformance`] fixtures instead of this catalog.

mod catalog;
pub mod conformance;
mod handler;
mod http;
mod state;
mod tools;

#[cfg(test)]
mod tests;

use std::io;
use std::sync::Arc;
use std::time::Duration;

use mcp_proto::server::ServerConfig;
use mcp_proto::session::{CloseReason, Era, ProtocolVersion};
use mcp_proto::types::{
    Implementation, LoggingLevel, PromptsCapability, ResourcesCapability, ServerCapabilities,
    ToolsCapability,
};
use mcp_tokio::server::Server;
use serde_json::Map;

pub use conformance::CONFORMANCE_ENV;
pub use tools::DEMO_PNG_BASE64;

/// Every demo tool, as `tools/list` returns them (all pages together) to a client that
/// declared sampling and roots.
pub fn tool_definitions() -> Vec<mcp_proto::types::Tool> {
    tools::definitions()
}

use handler::DemoHandler;
pub use http::HttpDemo;
use state::Shared;

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
    /// Serves the fixtures of the official conformance suite's server scenarios
    /// ([`conformance`]) instead of the demo's tools, prompts and resources.
    pub conformance: bool,
    /// Also speaks protocol 2026-07-28 (`mcp demo-server --modern`): `server/discover` and
    /// the per-request envelope, beside the initialize era.
    pub modern: bool,
}

impl Default for DemoConfig {
    fn default() -> Self {
        DemoConfig {
            page_size: 4,
            initial_log_level: Some(LoggingLevel::Warning),
            shutdown_grace: Duration::from_secs(2),
            quiet: false,
            conformance: false,
            modern: false,
        }
    }
}

impl DemoConfig {
    /// The default configuration with the page size taken from [`PAGE_SIZE_ENV`] when set,
    /// and the conformance fixtures when [`CONFORMANCE_ENV`] is `1`, `true` or `yes`.
    pub fn from_env() -> Self {
        let mut config = DemoConfig {
            conformance: std::env::var(CONFORMANCE_ENV)
                .is_ok_and(|v| matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "yes")),
            ..DemoConfig::default()
        };
        if let Some(n) = std::env::var(PAGE_SIZE_ENV)
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
        {
            config.page_size = n.max(1);
        }
        config
    }
}

/// What the demo server and the conformance fixtures both offer: tools, resources with
/// subscriptions, prompts, completions and logging; none of their lists changes.
fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        logging: Some(Map::new()),
        completions: Some(Map::new()),
        prompts: Some(PromptsCapability {
            list_changed: Some(false),
            ..PromptsCapability::default()
        }),
        resources: Some(ResourcesCapability {
            subscribe: Some(true),
            list_changed: Some(false),
            ..ResourcesCapability::default()
        }),
        tools: Some(ToolsCapability {
            list_changed: Some(false),
            ..ToolsCapability::default()
        }),
        ..ServerCapabilities::default()
    }
}

/// The session's configuration: the demo's identity, capabilities and instructions, and the
/// protocol versions it speaks (the initialize era, and 2026-07-28 when `modern`).
fn server_config(modern: bool) -> ServerConfig {
    let info = Implementation {
        title: Some("MCP demo server".into()),
        ..Implementation::new("mcp-demo", env!("CARGO_PKG_VERSION"))
    };
    let versions = ProtocolVersion::ALL
        .into_iter()
        .filter(|v| modern || v.era() == Era::Initialize);
    ServerConfig::new(info)
        .with_versions(versions)
        .with_capabilities(capabilities())
        .with_instructions(
            "A demo server: try the tools echo, add, slow (progress), ask (elicitation), \
             image, fail, model (sampling) and roots, the resources demo://readme and \
             demo://clock (subscribe to it: it changes every second) and the prompt \
             summarize.",
        )
}

/// Serves one client over `input` / `output` until `input` ends; returns why the session
/// ended. Must run inside a tokio runtime.
///
/// At end of input, running tool calls get [`DemoConfig::shutdown_grace`] to finish; the rest
/// are cancelled, and `serve` returns once every queued message is written. Lines that are not
/// JSON-RPC get a parse error with a null id and the session goes on.
pub async fn serve<R, W>(input: R, output: W, config: DemoConfig) -> CloseReason
where
    R: tokio::io::AsyncRead + Send + 'static,
    W: tokio::io::AsyncWrite + Send + 'static,
{
    let grace = config.shutdown_grace;
    if config.conformance {
        let handler = conformance::ConformanceHandler::new(config.quiet);
        let server = Server::new(conformance::server_config()).eof_grace(grace);
        let (_handle, driver) = mcp_tokio::server::start(server, handler, input, output);
        return driver.await;
    }
    let modern = config.modern;
    let shared = Arc::new(Shared::new(config, tokio::runtime::Handle::current()));
    let handler = DemoHandler {
        shared: Arc::clone(&shared),
    };
    let server = Server::new(server_config(modern)).eof_grace(grace);
    let (handle, driver) = mcp_tokio::server::start(server, handler, input, output);
    shared.set_server(handle);
    let reason = driver.await;
    // The session is over: stop the clock's ticker (tool threads were cancelled with their
    // calls).
    let mut inner = shared.lock();
    inner.closed = true;
    if let Some(ticker) = inner.ticker.take() {
        ticker.cancel();
    }
    reason
}

/// Serves over Streamable HTTP: what `mcp demo-server --listen ADDR` runs (until Ctrl-C or
/// SIGTERM). The endpoint's URL goes to stderr as one line once it listens.
///
/// # Errors
///
/// Bad options (an unset --bearer-token-env variable), an address that cannot be listened
/// on, a runtime that cannot be built.
pub fn run_http(args: &crate::args::DemoServerArgs) -> Result<(), crate::exit::CliError> {
    let mut config = DemoConfig::from_env();
    config.conformance |= args.conformance;
    http::run(&HttpDemo::from_args(args)?, config)
}

/// Serves on the process's stdin and stdout: what `mcp demo-server` runs; `conformance`
/// (`--conformance`) serves the conformance fixtures, as [`CONFORMANCE_ENV`] does; `modern`
/// (`--modern`) also speaks protocol 2026-07-28.
///
/// # Errors
///
/// The tokio runtime could not be built.
pub fn run_stdio(conformance: bool, modern: bool) -> io::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let mut config = DemoConfig::from_env();
    config.conformance |= conformance;
    config.modern = modern;
    // The streams are made inside the runtime: pipes register with its reactor.
    let reason = rt.block_on(async {
        serve(
            mcp_tokio::stdio::stdin(),
            mcp_tokio::stdio::stdout(),
            config,
        )
        .await
    });
    // Where stdin is not a pipe, tokio reads it on a blocking thread that may still wait for
    // input (the session can end on a write error with stdin open): leave without waiting.
    rt.shutdown_background();
    match reason {
        CloseReason::TransportClosed { .. } | CloseReason::Local => Ok(()),
        other => Err(io::Error::other(format!("the session ended: {other:?}"))),
    }
}
