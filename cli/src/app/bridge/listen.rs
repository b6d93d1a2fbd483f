//! `mcp bridge --listen ADDR`: the upstream server (`-- cmd` or `--url`) served to hosts over
//! Streamable HTTP, on the tokio adapter's HTTP server ([`mcp_tokio::server::start_http`]).
//!
//! **Stateful (default): one upstream per HTTP session, made at its `initialize`.** The
//! HTTP server defers each session's `initialize` to that session's handler
//! (`SessionBridge::on_initialize`), which connects the session's own upstream (a child
//! process for `-- cmd`, an HTTP session for `--url`) with that host's protocol version,
//! client info and capabilities, and answers the host with what the upstream answered: its
//! `serverInfo`, capabilities, instructions and the agreed version. A host sees through the
//! bridge what it would see directly. When the session ends (DELETE, the idle timeout, the
//! bridge stopping), the requests still running upstream are cancelled and the upstream is
//! closed; when the upstream dies, that session alone is closed (its open requests answered
//! with the error first), the others live on.
//!
//! No server is started before a host comes: a server that cannot start fails that host's
//! `initialize` with an error saying why (its stderr goes to the bridge's), and the bridge
//! serves on. The one check made at startup costs nothing per host: the `-- cmd` program
//! must exist (a typo fails the command at once, exit 3).
//!
//! **Stateless (`--stateless`): one shared upstream.** Every POST is its own short session
//! with no client capabilities (the core's stateless mode), so there is no host to ask for
//! sampling or to send notifications to: all POSTs share one upstream connection, made at
//! startup with the bridge's own identity and no capabilities. When it dies, the bridge ends
//! (exit 3).

use std::net::SocketAddr;
use std::sync::Arc;

use mcp_manager::config::{ServerConfig as UpstreamConfig, TransportConfig};
use mcp_proto::jsonrpc::ErrorObject;
use mcp_proto::server::http::{HttpMode, HttpServerConfig, OriginCheck};
use mcp_proto::session::CloseReason;
use mcp_proto::types::{Implementation, InitializeParams, LoggingLevel};
use mcp_tokio::mcp_driver::HandlerFuture;
use mcp_tokio::server::http::StreamableHttp;
use mcp_tokio::server::{
    Diagnostic, InitializeAnswer, InitializeOutcome, RequestContext, RequestOutcome, ServerHandle,
    ServerHandler, start_http,
};
use serde_json::value::RawValue;
use tokio::sync::watch;

use super::forward::Forwarder;
use super::host_log::{self, SessionLog};
use super::upstream::{self, HostSlot};
use super::upstream_health::{self, UpstreamHealth};
use crate::app::trace::HostWire;
use crate::app::ui::Ui;
use crate::args::{BridgeArgs, Cli};
use crate::exit::{CliError, Exit};

/// One session's forwarding to its upstream, once connected (or why it could not be).
type UpstreamState = Option<Result<Arc<Forwarder>, String>>;

/// Runs `mcp bridge --listen`: serves until interrupted (or, stateless, until the shared
/// upstream ends).
pub async fn run(
    cli: &Cli,
    ui: &Ui,
    args: &BridgeArgs,
    addr: SocketAddr,
    config: UpstreamConfig,
) -> Result<Exit, CliError> {
    let bearer = args.http.bearer_token().map_err(|e| CliError::Usage(e.0))?;
    if !args.http.stateless {
        // Before the URL: a typo fails the command alone.
        check_program(&config)?;
    }
    let listener = bind(addr).await?;
    let mut http = HttpServerConfig::new(placeholder_server_config())
        .with_origin_check(OriginCheck::LoopbackOr(args.http.allow_origins.clone()));
    http = args.http.bounded(http);
    if let Some(token) = bearer {
        http = http.with_bearer_token(token);
    }
    if !addr.ip().is_loopback() && args.http.bearer_token_env.is_none() {
        ui.note(&format!(
            "warning: {addr} is reachable from other machines and no --bearer-token-env is set: anyone who can reach it can use the server"
        ));
    }
    let timeout = super::forward::RequestBound::of(&cli.connection);
    // Every session, so that a stop answers their running requests before closing them.
    let host_sessions = super::stop::HostSessions::default();
    let (server, shared) = if args.http.stateless {
        // The shared connection, made now as the bridge itself: stateless POSTs have no host
        // identity to carry.
        let bridge_identity = bridge_initialize();
        let no_host = HostSlot::default();
        let first = upstream::connect(cli, ui, config.clone(), &bridge_identity, no_host).await?;
        http.server = super::host_server_config(&first);
        http = http.with_mode(HttpMode::Stateless);
        let shared = first.clone();
        let health = Arc::new(UpstreamHealth::new(ui.clone()));
        let upstream = config.clone();
        let sessions = host_sessions.clone();
        let factory = move |host: &ServerHandle| {
            sessions.add(host);
            upstream_health::watched(
                Forwarder::new(shared.clone(), timeout).0,
                &upstream,
                &health,
            )
        };
        let server = start_http(
            listener,
            host_log::reporting_refusals(StreamableHttp::new(http), ui),
            factory,
        )
        .map_err(|e| CliError::cannot_listen(addr, &e))?;
        (server, Ok(first))
    } else {
        // Each session connects its own upstream when its host initializes.
        http = http.with_deferred_initialize(true);
        let cli = Arc::new(cli.clone());
        let mut served = host_log::reporting_refusals(StreamableHttp::new(http), ui);
        // With -v, each session's own messages marked `[session N]`, and its upstream's
        // `[session N upstream]`.
        let host_wire = (ui.verbose > 0).then(|| Arc::new(HostWire::default()));
        if let Some(wire) = &host_wire {
            let wire = wire.clone();
            served = served.on_wire(move |step| wire.step(step));
        }
        let ui = ui.clone();
        let (sessions, sessions_ended) = super::forward::WorkCount::new();
        let hosts = host_sessions.clone();
        let factory = move |host: &ServerHandle| {
            hosts.add(host);
            let mut log = SessionLog::new(&ui);
            if let (Some(wire), Some(key)) = (&host_wire, host.session_key()) {
                log = log.wire_traced(wire, key);
            }
            SessionBridge::start(
                cli.clone(),
                log,
                ui.clone(),
                config.clone(),
                timeout,
                sessions.clone(),
            )
        };
        let server =
            start_http(listener, served, factory).map_err(|e| CliError::cannot_listen(addr, &e))?;
        (server, Err(sessions_ended))
    };
    match shared {
        Ok(client) => {
            let ended = tokio::select! {
                ended = client.ended() => Some(ended),
                () = super::stop::requested() => None,
            };
            if ended.is_none() {
                // Each running request answered with the stop's error before streams close.
                host_sessions.answered(super::CANCEL_BOUND).await;
            }
            server.shutdown();
            server.stopped().await;
            match ended {
                Some(ended) => {
                    // In `mcp`'s words: the server's command and how it ended, or what
                    // happened to the connection to its URL.
                    let error = crate::app::connect::call_error(ended);
                    tracing::warn!("bridge: the shared upstream connection ended: {error}");
                    Err(error)
                }
                None => {
                    // Every POST's call was dropped with the server, each cancelled
                    // upstream; then the shared session is closed.
                    client.close().await;
                    Ok(Exit::Ok)
                }
            }
        }
        Err(mut sessions_ended) => {
            // Serves until a signal asks the bridge to stop (see `app::signals`).
            super::stop::requested().await;
            // Each running request answered with the stop's error before streams close.
            host_sessions.answered(super::CANCEL_BOUND).await;
            server.shutdown();
            server.stopped().await;
            // Each ended session cancels its running calls upstream and closes its upstream
            // in its own task: wait for those.
            sessions_ended.wait().await;
            Ok(Exit::Ok)
        }
    }
}

/// Binds `addr` and prints the endpoint's URL on stderr at once: the first line on stderr,
/// the URL alone (as `mcp demo-server --listen` prints it), for people and for scripts that
/// wait for it, before any server is started (whose stderr passes through).
pub(super) async fn bind(addr: SocketAddr) -> Result<tokio::net::TcpListener, CliError> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| CliError::cannot_listen(addr, &e))?;
    let bound = listener
        .local_addr()
        .map_err(|e| CliError::cannot_listen(addr, &e))?;
    // The path `start_http` serves by default (`StreamableHttp::new`).
    eprintln!("http://{bound}{}", mcp_tokio::server::http::DEFAULT_PATH);
    Ok(listener)
}

/// The `initialize` params of the bridge itself (the stateless shared upstream):
/// no capabilities, the client's newest protocol version.
fn bridge_initialize() -> InitializeParams {
    let params = serde_json::json!({
        // Not a version: the client then offers its newest.
        "protocolVersion": "",
        "capabilities": {},
        "clientInfo": {"name": "mcp-bridge", "version": env!("CARGO_PKG_VERSION")},
    });
    // Built from a literal of the right shape: it always reads.
    upstream::initialize_params(Some(&params)).expect("the bridge's own initialize params")
}

/// The host-facing configuration before a session's upstream answers: the bridge's name and
/// no capabilities. A stateful session never shows it (its `initialize` is answered with the
/// upstream's own answer, which then replaces it).
fn placeholder_server_config() -> mcp_proto::server::ServerConfig {
    mcp_proto::server::ServerConfig::new(Implementation::new(
        "mcp-bridge",
        env!("CARGO_PKG_VERSION"),
    ))
    // The bridge forwards the initialize era only: a 2026 host falls back to `initialize`.
    .with_versions(mcp_proto::session::ProtocolVersion::INITIALIZE_ERA)
    // The upstream server times its own requests out (and cancels them).
    .with_request_timeout(None)
}

/// The startup check of a stateful `--listen` that costs no connection: the `-- cmd` program
/// exists (a path to a file, or a name found in `PATH`). `--url` is not checked: a network
/// server may come up later, and each host's `initialize` says so if it has not.
fn check_program(config: &UpstreamConfig) -> Result<(), CliError> {
    let TransportConfig::Stdio(stdio) = &config.transport else {
        return Ok(());
    };
    let program = std::path::Path::new(&stdio.command);
    let found = if stdio.command.contains(std::path::MAIN_SEPARATOR) || stdio.command.contains('/')
    {
        let base = stdio.cwd.as_deref().map(std::path::Path::new);
        match base {
            Some(dir) if program.is_relative() => dir.join(program).is_file(),
            _ => program.is_file(),
        }
    } else {
        std::env::var_os("PATH")
            .is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join(program).is_file()))
    };
    if found {
        Ok(())
    } else {
        Err(CliError::Spawn {
            program: stdio.command.clone(),
            reason: "no such file, and not found in PATH".into(),
            not_found: true,
        })
    }
}

/// One stateful HTTP session's handler: its own upstream, connected when its host sends
/// `initialize` ([`on_initialize`](ServerHandler::on_initialize)).
struct SessionBridge {
    cli: Arc<Cli>,
    ui: Ui,
    config: UpstreamConfig,
    timeout: super::forward::RequestBound,
    /// This session's lines on stderr (opened, closed).
    log: SessionLog,
    /// Where the connected upstream (or why there is none) is published.
    publish: watch::Sender<UpstreamState>,
    upstream: watch::Receiver<UpstreamState>,
    /// Set when the session closes (also when this handler is dropped with it).
    closed: watch::Sender<bool>,
    /// Counts this session's upstream task while it runs: a stopping bridge waits for every
    /// session's cancellations and upstream close.
    sessions: super::forward::WorkCount,
}

impl SessionBridge {
    /// The handler of a new session; nothing is connected before its host's `initialize`.
    fn start(
        cli: Arc<Cli>,
        log: SessionLog,
        ui: Ui,
        config: UpstreamConfig,
        timeout: super::forward::RequestBound,
        sessions: super::forward::WorkCount,
    ) -> Self {
        let (publish, upstream) = watch::channel(None);
        let (closed, _) = watch::channel(false);
        SessionBridge {
            cli,
            log,
            ui,
            config,
            timeout,
            publish,
            upstream,
            closed,
            sessions,
        }
    }

    /// Connects this session's upstream as the host `params` describe and returns what the
    /// upstream answered, for the host.
    async fn connect(&self, params: InitializeParams, host: ServerHandle) -> InitializeOutcome {
        // For the closed line, also when the upstream fails (no opened line then).
        self.log
            .knows_host(&host_log::host_name(&params.client_info));
        let slot = HostSlot::default();
        // Set once, here: the session exists already.
        let _ = slot.set(host.clone());
        // Its wire trace (-v) marked with the session, among the others', told from the
        // host's side of it.
        let ui = self.log.upstream_marked(&self.ui);
        let connected = upstream::connect(&self.cli, &ui, self.config.clone(), &params, slot).await;
        let client = match connected {
            Ok(client) => client,
            Err(e) => {
                let number = self.log.number();
                tracing::warn!("bridge: host session {number}: its upstream failed: {e}");
                self.publish.send_replace(Some(Err(e.to_string())));
                // Named as the upstream's failure (in words and in its data), so the host
                // does not take it for its own connection to the bridge failing.
                let upstream = super::upstream_failure::upstream_name(&self.config);
                return Err(super::upstream_failure::for_host(&upstream, &e, true));
            }
        };
        // The operator's line is the session log's `opened`.
        tracing::debug!(
            "bridge: a session for {} connected upstream (protocol {})",
            params.client_info.name,
            client.protocol_version()
        );
        self.log
            .opened(Some(&host_log::host_name(&params.client_info)));
        let answer = InitializeAnswer::new(client.server_info().clone())
            .with_capabilities(client.capabilities().clone())
            .with_instructions(client.instructions().map(str::to_owned))
            .with_protocol_version(client.protocol_version());
        self.serve(client, host);
        Ok(answer)
    }

    /// Publishes the connected upstream to the session's requests, pumps its notifications
    /// to the host, closes the session when it dies and closes it when the session ends.
    fn serve(&self, client: mcp_tokio::Client, host: ServerHandle) {
        let (forwarder, mut calls_ended) = Forwarder::new(client.clone(), self.timeout);
        // This session's upstream: its loss and return said for this session.
        let health = Arc::new(UpstreamHealth::new(self.ui.clone()));
        let forwarder = upstream_health::watched(forwarder, &self.config, &health);
        let (forwarder, host_pump) = forwarder.with_host_pump();
        self.publish.send_replace(Some(Ok(Arc::new(forwarder))));
        let mut ended = self.closed.subscribe();
        let publish = self.publish.clone();
        let counted = self.sessions.count();
        let number = self.log.number();
        tokio::spawn(async move {
            let _counted = counted;
            let pump = {
                let host = host.clone();
                tokio::spawn(async move { host_pump.run(&host).await })
            };
            let ended = async move {
                // An error means the handler is gone with its session.
                let _ = ended.wait_for(|c| *c).await;
            };
            tokio::select! {
                ended = client.ended() => {
                    let error = crate::app::connect::call_error(ended);
                    tracing::warn!("bridge: host session {number}: its upstream ended: {error}");
                    super::answer_open_requests(&host, &mut calls_ended).await;
                    host.close();
                    pump.abort();
                    return;
                }
                () = ended => {}
            }
            // The session ended: its running handlers were dropped, each cancelling its
            // call upstream; once those are gone, the upstream is closed.
            if tokio::time::timeout(super::CANCEL_BOUND, calls_ended.wait())
                .await
                .is_err()
            {
                tracing::warn!("bridge: upstream calls still cancelling; closing anyway");
            }
            publish.send_replace(None);
            client.close().await;
            pump.abort();
        });
    }

    /// The upstream once connected; the error for the host when it could not be.
    async fn ready(&self) -> Result<Arc<Forwarder>, ErrorObject> {
        let mut rx = self.upstream.clone();
        let failed = |m: String| ErrorObject::new(ErrorObject::INTERNAL_ERROR, m);
        match rx.wait_for(Option::is_some).await {
            Ok(state) => match state.as_ref() {
                Some(Ok(up)) => Ok(up.clone()),
                Some(Err(e)) => Err(failed(format!("mcp bridge: {e}"))),
                None => Err(failed("mcp bridge: the upstream is not connected".into())),
            },
            Err(_) => Err(failed(
                "mcp bridge: the session's upstream is closed".into(),
            )),
        }
    }

    /// Runs `f` on the upstream once connected, in a task (notifications and the log level
    /// must not block the driver).
    fn when_ready(&self, what: String, f: impl FnOnce(Arc<Forwarder>) + Send + 'static) {
        let mut rx = self.upstream.clone();
        tokio::spawn(async move {
            let up = match rx.wait_for(Option::is_some).await {
                Ok(state) => match state.as_ref() {
                    Some(Ok(up)) => up.clone(),
                    _ => return,
                },
                Err(_) => return,
            };
            tracing::trace!("bridge: forwarding {what}");
            f(up);
        });
    }
}

impl ServerHandler for SessionBridge {
    fn on_initialize(
        &self,
        params: InitializeParams,
        server: ServerHandle,
    ) -> HandlerFuture<'_, InitializeOutcome> {
        Box::pin(self.connect(params, server))
    }

    fn on_request(
        &self,
        method: String,
        params: Option<Box<RawValue>>,
        context: RequestContext,
    ) -> HandlerFuture<'_, RequestOutcome> {
        Box::pin(async move {
            let up = self.ready().await?;
            up.on_request(method, params, context).await
        })
    }

    fn on_notification(&self, method: &str, params: Option<&RawValue>, server: &ServerHandle) {
        let (method, params) = (method.to_owned(), params.map(ToOwned::to_owned));
        let server = server.clone();
        self.when_ready(method.clone(), move |up| {
            up.on_notification(&method, params.as_deref(), &server);
        });
    }

    fn on_log_level(&self, level: LoggingLevel, server: &ServerHandle) {
        let server = server.clone();
        self.when_ready("logging/setLevel".into(), move |up| {
            up.on_log_level(level, &server);
        });
    }

    fn on_diagnostic(&self, diagnostic: &Diagnostic) {
        tracing::info!("bridge: odd input from a host: {diagnostic:?}");
    }

    fn on_closed(&self, reason: &CloseReason, server: &ServerHandle) {
        self.log.closed(server, reason);
        self.closed.send_replace(true);
    }
}
