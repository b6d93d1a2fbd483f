//! `mcp demo-server --listen ADDR`: the demo over Streamable HTTP. Each session gets a demo
//! of its own (its log level, its subscriptions, its clock ticker), made when the client
//! initializes and stopped when the session ends.

use std::sync::Arc;

use mcp_proto::server::http::{HttpMode, HttpServerConfig, OriginCheck};
use mcp_tokio::server::ServerHandle;
use mcp_tokio::server::http::StreamableHttp;

use super::handler::DemoHandler;
use super::state::Shared;
use super::{DemoConfig, conformance, server_config};
use crate::args::{DemoServerArgs, ListenArgs};
use crate::exit::CliError;

/// How the HTTP demo is served, from the command line.
#[derive(Debug, Clone)]
pub struct HttpDemo {
    /// The address to listen on.
    pub listen: std::net::SocketAddr,
    /// Sessions or none.
    pub stateless: bool,
    /// The bearer token every request must carry, if any.
    pub bearer_token: Option<String>,
    /// Browser origins accepted besides loopback ones.
    pub allow_origins: Vec<String>,
    /// Also speaks protocol 2026-07-28 (`--modern`).
    pub modern: bool,
    /// The bounds of `--listen`'s options (`--max-sessions`).
    pub bounds: ListenArgs,
}

impl HttpDemo {
    /// Reads the options of `mcp demo-server --listen`: the token from its environment
    /// variable.
    ///
    /// # Errors
    ///
    /// [`CliError::Usage`] without --listen, or when --bearer-token-env names a variable that
    /// is unset or empty (a server meant to be protected must not start open).
    pub fn from_args(args: &DemoServerArgs) -> Result<Self, CliError> {
        let listen = args
            .http
            .listen
            .ok_or_else(|| CliError::Usage("--listen ADDR is required to serve HTTP".into()))?;
        let bearer_token = args.http.bearer_token().map_err(|e| CliError::Usage(e.0))?;
        Ok(HttpDemo {
            listen,
            stateless: args.http.stateless,
            bearer_token,
            allow_origins: args.http.allow_origins.clone(),
            modern: args.modern,
            bounds: args.http.clone(),
        })
    }

    /// The core's configuration of the server: the demo's, or with `conformance` the
    /// conformance fixtures' (whose `test_reconnection` closes its stream: clients are told
    /// to reconnect after [`conformance::RECONNECT_DELAY`]).
    fn config(&self, conformance: bool) -> HttpServerConfig {
        let mut config = if conformance {
            HttpServerConfig::new(conformance::server_config())
                .with_retry(Some(conformance::RECONNECT_DELAY))
        } else {
            HttpServerConfig::new(server_config(self.modern))
        }
        .with_origin_check(OriginCheck::LoopbackOr(self.allow_origins.clone()));
        config = self.bounds.bounded(config);
        if self.stateless {
            config = config.with_mode(HttpMode::Stateless);
        }
        if let Some(token) = &self.bearer_token {
            config = config.with_bearer_token(token.clone());
        }
        config
    }
}

/// The demo's handler for one new session.
fn session_handler(config: &DemoConfig, server: &ServerHandle) -> DemoHandler {
    let shared = Arc::new(Shared::new(
        config.clone(),
        tokio::runtime::Handle::current(),
    ));
    shared.set_server(server.clone());
    DemoHandler { shared }
}

/// Serves the demo over Streamable HTTP until Ctrl-C or SIGTERM; prints the endpoint's URL
/// on stderr (one line) once it listens, and `mcp demo-server: stopping: closing every
/// session` when a signal stops it (then `Ok`: exit 0).
///
/// # Errors
///
/// [`CliError::Usage`] for bad options or an address that cannot be listened on;
/// [`CliError::Closed`] when the runtime cannot be built.
pub fn run(demo: &HttpDemo, config: DemoConfig) -> Result<(), CliError> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(CliError::closed)?;
    rt.block_on(async {
        let listener = tokio::net::TcpListener::bind(demo.listen)
            .await
            .map_err(|e| CliError::cannot_listen(demo.listen, &e))?;
        let server = StreamableHttp::new(demo.config(config.conformance));
        let handle = if config.conformance {
            let quiet = config.quiet;
            mcp_tokio::server::start_http(listener, server, move |_: &ServerHandle| {
                conformance::ConformanceHandler::new(quiet)
            })
        } else {
            mcp_tokio::server::start_http(listener, server, move |s: &ServerHandle| {
                session_handler(&config, s)
            })
        }
        .map_err(|e| CliError::cannot_listen(demo.listen, &e))?;
        eprintln!("{}", handle.url());
        stop_signal().await;
        // Stopping is how a server is meant to end: said on one line, exit 0.
        eprintln!("mcp demo-server: stopping: closing every session");
        handle.shutdown();
        tokio::select! {
            () = handle.stopped() => {}
            // A second signal does not wait for the sessions to close.
            () = stop_signal() => {}
        }
        Ok(())
    })
}

/// Completes on Ctrl-C or SIGTERM.
async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    // Without a handler the server runs until it is killed.
    if tokio::signal::ctrl_c().await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// Ends a session's demo (over HTTP, or the one stdio session): its clock stops ticking.
pub(super) fn end_session(shared: &Shared) {
    let mut inner = shared.lock();
    inner.closed = true;
    if let Some(ticker) = inner.ticker.take() {
        ticker.cancel();
    }
}
