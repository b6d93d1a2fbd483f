//! `mcp bridge --config FILE --listen ADDR`: the servers of the file served as one over
//! Streamable HTTP, on the tokio adapter's HTTP server ([`start_http`]).
//!
//! The servers start at once (there is no host yet), speaking as the bridge itself, and
//! every HTTP session shares them: a server's sampling or elicitation request goes to the one
//! session with requests in flight to that server, and is refused with the reason when there
//! is no such one session (always with `--stateless`, which has no sessions); roots are not
//! offered ([`super::server_requests`]). A server's task-augmented request is a task of the
//! bridge's, answered through that session ([`super::session_tasks`]). Everything else is
//! as over stdio: each session gets its own [`Router`] (its own subscriptions) and, in
//! stateful mode, its own [`Watcher`] (its `list_changed`, log messages and other
//! notifications); the manager's status changes are reported on stderr once, for all.
//! `--stateless`, `--bearer-token-env` and `--allow-origin` mean what they mean for one
//! upstream (see [`crate::app::bridge::listen`]).

use std::net::SocketAddr;

use mcp_manager::config::ServerConfig as UpstreamConfig;
use mcp_proto::server::http::{HttpMode, HttpServerConfig, OriginCheck};
use mcp_tokio::server::http::StreamableHttp;
use mcp_tokio::server::{ServerHandle, start_http};

use super::filter::ToolFilter;
use super::router::Router;
use super::server_requests::SessionCalls;
use super::watch::{self, Barriers, Watcher};
use super::{
    CANCEL_BOUND, Speaker, report_entries, report_summary, shared, start_servers,
    unmatched_warnings,
};
use crate::app::bridge::host_log;
use crate::app::trace::HostWire;
use crate::app::ui::Ui;
use crate::args::{BridgeArgs, Cli};
use crate::exit::{CliError, Exit};

/// Runs `mcp bridge --config FILE --listen ADDR` until interrupted.
pub async fn run(
    cli: &Cli,
    ui: &Ui,
    args: &BridgeArgs,
    addr: SocketAddr,
    filter: ToolFilter,
    servers: Vec<UpstreamConfig>,
    entries: &[(String, Option<(&'static str, String)>)],
) -> Result<Exit, CliError> {
    let bearer = args.http.bearer_token().map_err(|e| CliError::Usage(e.0))?;
    // The URL is printed once bound, before the servers start (their stderr passes through).
    let listener = crate::app::bridge::listen::bind(addr).await?;
    let session_calls = std::sync::Arc::new(SessionCalls::new(args.http.stateless));
    let speaker = Speaker::Sessions(session_calls.clone());
    let started = match start_servers(cli, ui, speaker, servers).await {
        Ok(started) => started,
        Err(e) => {
            report_entries(ui, entries);
            return Err(super::with_entry_failures(e, entries));
        }
    };
    let failed = started.failed();
    let warnings = unmatched_warnings(&started.manager, &started.summary, &filter);
    let manager = started.manager;
    // Every POST is a session of its own with --stateless: nothing to bind tasks to.
    let task_owners = (!args.http.stateless).then(Default::default);
    let (shared, mut calls_ended) = shared(
        cli,
        ui,
        &manager,
        (&started.configs, entries),
        filter,
        Some(session_calls),
        task_owners,
    );
    let mut http = HttpServerConfig::new(started.host_config)
        .with_origin_check(OriginCheck::LoopbackOr(args.http.allow_origins.clone()));
    http = args.http.bounded(http);
    if let Some(token) = bearer {
        http = http.with_bearer_token(token);
    }
    if !addr.ip().is_loopback() && args.http.bearer_token_env.is_none() {
        ui.note(&format!(
            "warning: {addr} is reachable from other machines and no --bearer-token-env is set: anyone who can reach it can use the servers"
        ));
    }
    let stateless = args.http.stateless;
    if stateless {
        http = http.with_mode(HttpMode::Stateless);
    }
    // Every session, so that a stop answers their running requests before closing them.
    let host_sessions = crate::app::bridge::stop::HostSessions::default();
    let hosts = host_sessions.clone();
    let session_ui = ui.clone();
    // With -v, each session's own messages marked `[session N]` (the servers' are marked with
    // their names: every session shares them). Stateless POSTs are no sessions to mark.
    let host_wire =
        (ui.verbose > 0 && !stateless).then(|| std::sync::Arc::new(HostWire::default()));
    let mut served = host_log::reporting_refusals(StreamableHttp::new(http), ui);
    if let Some(wire) = &host_wire {
        let wire = wire.clone();
        served = served.on_wire(move |step| wire.step(step));
    }
    let factory = move |host: &ServerHandle| {
        hosts.add(host);
        let router = Router::new(shared.clone());
        if stateless {
            // One POST, one answer: no session to keep in step.
            return router;
        }
        let mut log = crate::app::bridge::host_log::SessionLog::new(&session_ui);
        if let (Some(wire), Some(key)) = (&host_wire, host.session_key()) {
            log = log.wire_traced(wire, key);
        }
        // The session is made at its `initialize`, which named the host.
        let host_name = host.client_info().map(|c| host_log::host_name(&c));
        log.opened(host_name.as_deref());
        let router = router.logged(log);
        let changes = shared.manager.status_changes();
        let barriers = Barriers::default();
        let watcher = Watcher::new(shared.clone(), host.clone(), None, barriers.clone())
            .for_session(router.session());
        router
            .ordered_by(barriers)
            .owns(tokio::spawn(watcher.run(changes, Vec::new())))
    };
    let server =
        start_http(listener, served, factory).map_err(|e| CliError::cannot_listen(addr, &e))?;
    // What the start found, after the URL.
    report_entries(ui, entries);
    report_summary(ui, &manager, &started.summary, &started.configs);
    for warning in warnings {
        ui.note(&warning);
    }
    let reporter = tokio::spawn(watch::report_changes(
        manager.clone(),
        started.configs.clone(),
        ui.clone(),
        started.changes,
        failed,
    ));
    // Serves until a signal asks the bridge to stop (see `app::signals`): every session
    // ends, its running calls cancelled upstream with the stop's reason.
    super::super::stop::requested().await;
    // Each running request answered with the stop's error before streams close.
    host_sessions.answered(CANCEL_BOUND).await;
    server.shutdown();
    server.stopped().await;
    reporter.abort();
    if tokio::time::timeout(CANCEL_BOUND, calls_ended.wait())
        .await
        .is_err()
    {
        tracing::warn!("bridge: upstream calls still cancelling; stopping the servers anyway");
    }
    manager.shutdown().await;
    Ok(Exit::Ok)
}
