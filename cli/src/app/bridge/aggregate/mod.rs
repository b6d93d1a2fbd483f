//! `mcp bridge --config FILE`: every server of an `mcpServers` file served to a host as one
//! stdio MCP server, through the driver's [`Manager`].
//!
//! # Start-up
//!
//! The servers start when the host sends `initialize`, speaking as the host (its client
//! info, capabilities and protocol version, like the single bridge: [`upstream::as_host`]),
//! so that their sampling, elicitation and roots requests can be passed to it. The host's
//! `initialize` is answered when [`Manager::start`] returns: once every server is ready or
//! failed, or at the start-up deadline (`--connect-timeout`, else
//! [`DEFAULT_STARTUP_DEADLINE`]). A server
//! still coming up by then is offered from its tool cache (the same cache as `mcp tools
//! --all`), and a call to it waits for it (at most `--timeout`, else [`COMING_UP_WAIT`]);
//! when it comes up the host gets `list_changed`.
//! A server that cannot start (a broken entry, a program that does not exist or exits
//! during its first connect, a refused handshake) is reported on stderr and the others serve;
//! so is one whose first connect fails outright (connection refused, no such host), which
//! the manager keeps retrying in the background (reported when it comes up); a call to it
//! meanwhile gets that reason at once. When none can, the host's `initialize` gets an error
//! and the bridge exits 3.
//!
//! # Serving
//!
//! [`router`] answers and routes the host's requests ([`catalog`] names tools, prompts and
//! resources; [`filter`] applies `--allow` / `--deny`); [`watch`] keeps the host in step as
//! servers come, go and change their lists; [`capabilities`] is what the host is told at
//! `initialize`; [`tasks`] routes the servers' tasks under host-visible ids;
//! [`host_tasks`] keeps each server to the host's tasks made for it; with
//! `--listen`, [`server_requests`] passes each server's sampling and elicitation to the one
//! HTTP session it can be attributed to ([`session_tasks`]: as tasks of the bridge's when a
//! server asks for a task). A lost server is reconnected by the manager's policy (capped exponential
//! backoff; its subscriptions and log level are set up again).
//!
//! When the host closes stdin, its requests still running get [`EOF_GRACE`] to answer, then
//! are cancelled upstream; every server is shut down, and the bridge exits 0.

pub mod capabilities;
pub mod catalog;
pub mod filter;
pub mod host_tasks;
pub mod listen;
pub mod router;
pub mod server_requests;
pub mod session_tasks;
pub mod subscriptions;
pub mod task_owners;
pub mod tasks;
pub mod uri;
pub mod watch;

use std::sync::Arc;

use mcp_manager::config::TransportConfig;
use mcp_manager::reconnect::{ReconnectConfig, ServerStatus};
use mcp_proto::jsonrpc::ErrorObject;
use mcp_proto::server::ServerConfig;
use mcp_proto::types::{Implementation, InitializeParams};
use mcp_tokio::mcp_driver::manager::{StartupSummary, StatusChanges};
use mcp_tokio::mcp_driver::{RawAnswer, RawHandler};
use mcp_tokio::server::Server;
use mcp_tokio::{ClientBuilder, Manager, TokioRuntime};
use serde_json::value::RawValue;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use super::forward::{CallsEnded, Relay};
use super::upstream::{self, HostSlot};
use super::{CANCEL_BOUND, HostInitialize, await_initialize};
use crate::app::many::{self, ConfigServers, DEFAULT_STARTUP_DEADLINE};
use crate::app::ui::Ui;
use crate::args::{BridgeArgs, Cli};
use crate::exit::{CliError, Exit};
use filter::ToolFilter;
use host_tasks::HostTasks;
use router::{Router, Shared};
use server_requests::SessionCalls;
use watch::{Barriers, Watcher};

/// When the host closes stdin, how long its requests still running may take to answer
/// before they are cancelled upstream: a host that pipes a script in and closes its end
/// still reads the answers; a host that quits does not leave work running.
pub const EOF_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// How long a request for a server still coming up (offered from the tool cache, or
/// reconnecting) waits for it without `--timeout`: as long as a handshake may take.
pub const COMING_UP_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

/// Runs `mcp bridge --config FILE`: serves stdio until the host closes stdin, or with
/// `--listen`, Streamable HTTP ([`listen`]) until interrupted.
pub async fn run(cli: &Cli, ui: &Ui, args: &BridgeArgs) -> Result<Exit, CliError> {
    if let Some(server) = &cli.connection.server {
        return Err(CliError::Usage(format!(
            "mcp bridge --config serves every server of the file: drop --server \
             (--allow '{}__*' offers only that server's tools)",
            mcp_manager::naming::sanitize(server)
        )));
    }
    if cli
        .command
        .server_command()
        .is_some_and(|s| !s.argv.is_empty())
    {
        return Err(CliError::Usage(
            "mcp bridge --config serves the servers of the file: drop `-- <command>` \
             (or add it to the file)"
                .into(),
        ));
    }
    let filter = ToolFilter::new(&args.tools.allow, &args.tools.deny).map_err(CliError::Usage)?;
    let ConfigServers { servers, entries } = many::server_configs(cli)?;
    if servers.is_empty() {
        // Every entry broken or disabled: the same outcome as servers that all fail to
        // start (the host's `initialize` refused, exit 3), with each entry's problem named.
        report_entries(ui, &entries);
        let error = CliError::NoServerUp(entry_failures(&entries));
        if args.http.listen.is_none() {
            let mut stdin = mcp_tokio::stdio::stdin();
            let mut stdout = mcp_tokio::stdio::stdout();
            if let Some(init) = await_initialize(&mut stdin, &mut stdout).await? {
                refuse(&mut stdout, &init, &error).await;
            }
        }
        return Err(error);
    }
    match args.http.listen {
        Some(addr) => listen::run(cli, ui, args, addr, filter, servers, &entries).await,
        None => {
            report_entries(ui, &entries);
            serve_stdio(cli, ui, filter, servers, &entries).await
        }
    }
}

/// The entries of the file that cannot start (broken), each with its problem; disabled
/// ones are left out (they were not meant to start).
fn entry_failures(entries: &[(String, Option<(&'static str, String)>)]) -> Vec<(String, String)> {
    entries
        .iter()
        .filter_map(|(name, problem)| match problem {
            Some((state, why)) if *state != "disabled" => Some((name.clone(), why.clone())),
            _ => None,
        })
        .collect()
}

/// `error` with the broken entries of the file named first, when it is that no server came
/// up: the host and the user learn every entry's reason.
fn with_entry_failures(
    error: CliError,
    entries: &[(String, Option<(&'static str, String)>)],
) -> CliError {
    match error {
        CliError::NoServerUp(started) => {
            let mut failures = entry_failures(entries);
            failures.extend(started);
            CliError::NoServerUp(failures)
        }
        other => other,
    }
}

/// Reports on stderr the entries of the file that are not started (broken, disabled).
fn report_entries(ui: &Ui, entries: &[(String, Option<(&'static str, String)>)]) {
    for (name, problem) in entries {
        match problem {
            Some(("disabled", _)) => ui.info(&format!("mcp bridge: server {name:?} is disabled")),
            Some((state, why)) => ui.note(&format!("mcp bridge: server {name:?} {state}: {why}")),
            None => {}
        }
    }
}

/// The servers, started: the manager, what its start found, and the host-facing server
/// configuration that follows from it.
struct Started {
    manager: Arc<Manager>,
    /// Taken before the start-up summary: nothing after it is missed.
    changes: StatusChanges,
    /// What the start found ([`report_summary`] reports it).
    summary: StartupSummary,
    /// The servers' entries, for the words of their failures.
    configs: Vec<mcp_manager::config::ServerConfig>,
    host_config: ServerConfig,
}

/// Whom the servers speak as, and where their sampling, elicitation and roots requests go.
#[derive(Clone)]
enum Speaker {
    /// The stdio host: its `initialize` (client info, capabilities, protocol version); the
    /// requests go to its session, in the slot once it is started; the tasks it makes of
    /// them are remembered by the server that asked.
    Host(Arc<InitializeParams>, HostSlot, Arc<HostTasks>),
    /// With `--listen`: the bridge itself; sampling and elicitation go to the HTTP session
    /// they are attributed to ([`server_requests`]).
    Sessions(Arc<SessionCalls>),
}

/// Starts `servers` speaking as `speaker` and waits for them up to the start-up deadline;
/// an error (what it found reported on stderr) when no server came up.
async fn start_servers(
    cli: &Cli,
    ui: &Ui,
    speaker: Speaker,
    servers: Vec<mcp_manager::config::ServerConfig>,
) -> Result<Started, CliError> {
    let deadline = cli
        .connection
        .connect_timeout
        .unwrap_or(DEFAULT_STARTUP_DEADLINE);
    let configs = servers.clone();
    let manager = Arc::new(manager(cli, ui, speaker, servers, deadline));
    let changes = manager.status_changes();
    let summary = manager.start().await;
    let coming_up = !summary.from_cache.is_empty() || !summary.pending.is_empty();
    if summary.live.is_empty() && !coming_up {
        report_summary(ui, &manager, &summary, &configs);
        manager.shutdown().await;
        // Each server's name and reason, in the words of the summary just reported.
        let failures = summary
            .failed
            .iter()
            .chain(&summary.unreachable)
            .map(|(server, why)| (server.clone(), many::failure_words(&configs, server, why)))
            .collect();
        return Err(CliError::NoServerUp(failures));
    }
    let ready = catalog::ready_clients(&manager);
    let caps: Vec<_> = ready.iter().map(|(_, c)| c.capabilities()).collect();
    let mut host_config =
        ServerConfig::new(Implementation::new("mcp-bridge", env!("CARGO_PKG_VERSION")))
            // The servers are reached in the initialize era; so is the host (a 2026 host's
            // `server/discover` gets -32601 and it falls back).
            .with_versions(mcp_proto::session::ProtocolVersion::INITIALIZE_ERA)
            // An unreachable server is retried: it may come up later, with its lists. So is
            // one that failed before it was ever ready and is retried (an HTTP error status).
            .with_capabilities(capabilities::union(
                &caps,
                coming_up
                    || !summary.unreachable.is_empty()
                    || summary
                        .failed
                        .iter()
                        .any(|(s, _)| manager.failed_before_ready(s).is_some()),
            ))
            // The servers time their own requests out (and cancel them).
            .with_request_timeout(None);
    if let Some(text) = capabilities::instructions(
        ready
            .iter()
            .filter_map(|(name, c)| Some((name.as_str(), c.instructions()?))),
    ) {
        host_config = host_config.with_instructions(text);
    }
    Ok(Started {
        manager,
        changes,
        summary,
        configs,
        host_config,
    })
}

/// The warnings for each `--allow` / `--deny` pattern that matches no tool of the servers,
/// to print on stderr after the start-up summary; none unless every server's tools are
/// known (none still coming up without a tool cache, none unreachable), so that a pattern is
/// not blamed for a server not listed yet.
fn unmatched_warnings(
    manager: &Manager,
    summary: &StartupSummary,
    filter: &ToolFilter,
) -> Vec<String> {
    if !summary.pending.is_empty() || !summary.unreachable.is_empty() {
        return Vec::new();
    }
    let tools = manager.tools();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    filter
        .unmatched(&names)
        .into_iter()
        .map(|(flag, pattern)| filter::unmatched_warning(flag, pattern, names.first().copied()))
        .collect()
}

/// Reports on stderr what the start found: the failed servers (saying so of those still
/// retried: an HTTP error status before they were ever ready), the unreachable ones (with
/// their reason, as `mcp tools --all` words it), those still coming up.
fn report_summary(
    ui: &Ui,
    manager: &Manager,
    summary: &StartupSummary,
    configs: &[mcp_manager::config::ServerConfig],
) {
    for (server, why) in &summary.failed {
        let why = many::failure_words(configs, server, why);
        let retried = manager.status().into_iter().any(|(name, status)| {
            name == *server
                && matches!(
                    status,
                    ServerStatus::Connecting | ServerStatus::Reconnecting { .. }
                )
        });
        if retried {
            ui.note(&format!(
                "mcp bridge: server {server:?} failed: {why}; retrying in the background, \
                 serving the others"
            ));
        } else {
            ui.note(&format!("mcp bridge: server {server:?} failed: {why}"));
        }
    }
    for (server, why) in &summary.unreachable {
        let why = many::failure_words(configs, server, why);
        ui.note(&format!(
            "mcp bridge: server {server:?} failed: {why}; retrying in the background, \
             serving the others"
        ));
    }
    for server in summary.from_cache.iter().chain(&summary.pending) {
        ui.info(&format!(
            "mcp bridge: server {server:?} is still connecting; serving the others"
        ));
    }
}

impl Started {
    /// The servers that failed by the end of the start (reported with the summary).
    fn failed(&self) -> Vec<String> {
        self.summary.failed.iter().map(|(s, _)| s.clone()).collect()
    }
}

/// An entry of the config file by name, with `Some((state, why))` when it is not started
/// ([`many::ConfigServers::entries`]).
type Entry = (String, Option<(&'static str, String)>);

/// What every host session shares: the servers, the filter, the forwarding; with
/// `--listen`, the requests in flight that the servers' own requests are attributed by, and
/// (stateful) the session of each task. `file` is the servers' configurations and every
/// entry of the file (with the problem of each one not started).
fn shared(
    cli: &Cli,
    ui: &Ui,
    manager: &Arc<Manager>,
    file: (&[mcp_manager::config::ServerConfig], &[Entry]),
    filter: ToolFilter,
    session_calls: Option<Arc<SessionCalls>>,
    task_owners: Option<Arc<task_owners::TaskOwners>>,
) -> (Arc<Shared>, CallsEnded) {
    let (relay, calls_ended) = Relay::new(crate::app::bridge::forward::RequestBound::of(
        &cli.connection,
    ));
    let wait_bound = cli.connection.timeout.unwrap_or(COMING_UP_WAIT);
    let mut shared = Shared::new(manager.clone(), filter, relay, wait_bound);
    let (configs, entries) = file;
    shared.configs = configs.to_vec();
    shared.entries = entries.to_vec();
    shared.health = Some(Arc::new(super::upstream_health::UpstreamHealth::new(
        ui.clone(),
    )));
    shared.session_calls = session_calls;
    shared.task_owners = task_owners;
    let shared = Arc::new(shared);
    (shared, calls_ended)
}

/// Serves the host on stdin and stdout; the servers start at its `initialize`, speaking as
/// the host.
async fn serve_stdio(
    cli: &Cli,
    ui: &Ui,
    filter: ToolFilter,
    servers: Vec<mcp_manager::config::ServerConfig>,
    entries: &[(String, Option<(&'static str, String)>)],
) -> Result<Exit, CliError> {
    let mut stdin = mcp_tokio::stdio::stdin();
    let mut stdout = mcp_tokio::stdio::stdout();
    // Stopped before any server started: nothing to cancel or close.
    let init = tokio::select! {
        init = await_initialize(&mut stdin, &mut stdout) => init?,
        () = super::stop::requested() => return Ok(Exit::Ok),
    };
    let Some(init) = init else {
        tracing::info!("bridge: the host closed stdin before initialize");
        return Ok(Exit::Ok);
    };
    let host = HostSlot::default();
    let host_tasks = Arc::new(HostTasks::default());
    let speaker = Speaker::Host(
        Arc::new(init.params.clone()),
        host.clone(),
        host_tasks.clone(),
    );
    let started = match start_servers(cli, ui, speaker, servers).await {
        Ok(started) => started,
        Err(error) => {
            let error = with_entry_failures(error, entries);
            refuse(&mut stdout, &init, &error).await;
            return Err(error);
        }
    };
    report_summary(ui, &started.manager, &started.summary, &started.configs);
    for warning in unmatched_warnings(&started.manager, &started.summary, &filter) {
        ui.note(&warning);
    }
    let failed = started.failed();
    let manager = started.manager;
    let (shared, mut calls_ended) = shared(
        cli,
        ui,
        &manager,
        (&started.configs, entries),
        filter,
        None,
        None,
    );
    let shared = {
        let mut shared = Arc::into_inner(shared).expect("the shared state was just made");
        shared.host_tasks = Some(host_tasks);
        Arc::new(shared)
    };
    // The host's own `initialize`, replayed ahead of the rest of stdin: the session answers
    // it (and negotiates the version) now that the capabilities are known.
    let initialize = serde_json::json!({
        "jsonrpc": "2.0", "id": init.id, "method": "initialize", "params": init.params
    });
    let mut replay = initialize.to_string().into_bytes();
    replay.push(b'\n');
    replay.extend_from_slice(&init.rest);
    let input = std::io::Cursor::new(replay).chain(stdin);
    let barriers = Barriers::default();
    let (handle, driver) = mcp_tokio::server::start(
        Server::new(started.host_config).eof_grace(EOF_GRACE),
        Router::new(shared.clone()).ordered_by(barriers.clone()),
        input,
        stdout,
    );
    // Set once, here: the slot was empty until the host session existed.
    let _ = host.set(handle.clone());
    let watcher = Watcher::new(shared.clone(), handle.clone(), Some(ui.clone()), barriers);
    let watcher = tokio::spawn(watcher.run(started.changes, failed));
    let mut driver = std::pin::pin!(driver);
    tokio::select! {
        reason = &mut driver => tracing::info!("bridge: the host session ended: {reason}"),
        () = super::stop::requested() => {
            // Ending the host session drops its running requests: each is cancelled upstream
            // with the stop's reason, then the servers are shut down below.
            handle.close();
            driver.await;
        }
    }
    watcher.abort();
    // The host's requests still running were dropped with the driver (each queued its
    // `notifications/cancelled` upstream); let them go out before the servers stop.
    if tokio::time::timeout(CANCEL_BOUND, calls_ended.wait())
        .await
        .is_err()
    {
        tracing::warn!("bridge: upstream calls still cancelling; stopping the servers anyway");
    }
    manager.shutdown().await;
    Ok(Exit::Ok)
}

/// The manager of `servers`, each connection speaking as `speaker`; servers reconnect by the
/// default policy, except that one exiting during its first connect fails at once.
fn manager(
    cli: &Cli,
    ui: &Ui,
    speaker: Speaker,
    servers: Vec<mcp_manager::config::ServerConfig>,
    deadline: std::time::Duration,
) -> Manager {
    let token_store = crate::app::auth::token_store_path(cli);
    let ui = ui.clone();
    let mut builder = Manager::builder(TokioRuntime::current())
        .startup_deadline(deadline)
        // A server that exits during its first connect cannot start (a wrong command, a
        // crash at start-up): reported at once with its exit status and last stderr line,
        // not retried until the deadline as if still connecting. Once it has been ready,
        // a lost server is reconnected.
        .reconnect(ReconnectConfig {
            retry_exit_before_ready: false,
            ..ReconnectConfig::default()
        })
        .client_builder(move |config| {
            let mut b = match &speaker {
                Speaker::Host(params, host, host_tasks) => {
                    let b = upstream::as_host(ClientBuilder::new(), params, host.clone());
                    asking_host_for(b, host, host_tasks, &config.name)
                }
                Speaker::Sessions(calls) => server_requests::client_builder(calls, &config.name),
            };
            if ui.verbose > 0 {
                // Each server's messages, marked with its name.
                let ui = ui.with_prefix(&config.name);
                b = match &config.transport {
                    TransportConfig::Http(_) => b.on_http_trace(crate::app::trace::http(&ui)),
                    _ => b.on_wire(crate::app::trace::tap(&ui)),
                };
            }
            // No handshake timeout from --connect-timeout: that is how long the host's
            // `initialize` waits, and a slower server is still welcome when it comes up (the
            // client's default, or the entry's `startupTimeout`, bounds its handshake).
            if let TransportConfig::Http(h) = &config.transport
                && let Some(auth) =
                    crate::app::auth::stored_provider_at(token_store.clone(), &h.headers)
            {
                b = b.auth(auth);
            }
            b
        })
        .add_all(servers);
    if let Some(dir) = many::cache_dir() {
        builder = builder.cache_dir(dir);
    }
    builder.build()
}

/// `builder` (speaking as the host) with sampling and elicitation handlers that pass
/// `server`'s requests to the host in `host` with the task id of their related-task `_meta`
/// made host-visible ([`tasks`]); a task the host makes of one is remembered as `server`'s
/// in `host_tasks`, whose queries `server` may make ([`host_tasks`]).
fn asking_host_for(
    builder: ClientBuilder,
    host: &HostSlot,
    host_tasks: &Arc<HostTasks>,
    server: &str,
) -> ClientBuilder {
    let asking = AskingHost {
        host: host.clone(),
        host_tasks: host_tasks.clone(),
        server: server.to_owned(),
    };
    let (sampling, elicitation, queries) = (asking.clone(), asking.clone(), asking);
    builder
        .sampling_handler(RawHandler(move |params: Option<Box<RawValue>>| {
            let asking = sampling.clone();
            async move { asking.ask("sampling/createMessage", params).await }
        }))
        .elicitation_handler(RawHandler(move |params: Option<Box<RawValue>>| {
            let asking = elicitation.clone();
            async move { asking.ask("elicitation/create", params).await }
        }))
        .host_task_queries(move |method: String, params: serde_json::Value| {
            let asking = queries.clone();
            async move {
                let AskingHost {
                    host,
                    host_tasks,
                    server,
                } = &asking;
                host_tasks.query(host, server, method, params).await
            }
        })
}

/// What one server's requests to the stdio host need.
#[derive(Clone)]
struct AskingHost {
    host: HostSlot,
    host_tasks: Arc<HostTasks>,
    server: String,
}

impl AskingHost {
    /// Passes the server's `method` request to the host as written (a related task renamed
    /// host-visible) and the host's answer back as written; a task the host made of it is
    /// remembered as the server's.
    async fn ask(&self, method: &'static str, params: Option<Box<RawValue>>) -> RawAnswer {
        let value: serde_json::Value = params
            .as_deref()
            .and_then(|p| serde_json::from_str(p.get()).ok())
            .unwrap_or_default();
        let as_task = value.get("task").is_some_and(serde_json::Value::is_object);
        let params = tasks::related_to_host_raw(&self.server, params)?;
        let answer = upstream::ask_host_raw(&self.host, method, params).await?;
        if as_task && let Ok(value) = serde_json::from_str(answer.get()) {
            self.host_tasks.record(&self.server, &value);
        }
        Ok(answer)
    }
}

/// Answers the host's `initialize` with `error` (the host may be gone already: the error
/// returned to the caller is what matters).
async fn refuse(out: &mut mcp_tokio::stdio::Stdout, init: &HostInitialize, error: &CliError) {
    let mut answer = ErrorObject::new(ErrorObject::INTERNAL_ERROR, format!("mcp bridge: {error}"));
    if let CliError::NoServerUp(failures) = error {
        // For a program: each server's name and reason.
        let servers: Vec<_> = failures
            .iter()
            .map(|(name, why)| serde_json::json!({"name": name, "reason": why}))
            .collect();
        answer.data = mcp_proto::jsonrpc::to_raw(&serde_json::json!({"servers": servers})).ok();
    }
    let error = answer;
    let answer = serde_json::json!({"jsonrpc": "2.0", "id": init.id, "error": error});
    let mut line = answer.to_string().into_bytes();
    line.push(b'\n');
    let _ = out.write_all(&line).await;
    let _ = out.flush().await;
}
