//! The commands that run on the tokio runtime: connecting, each subcommand, Ctrl-C.
//!
//! [`run`] connects, runs the subcommand while printing the server's log messages on stderr,
//! and always closes the connection (`close().await`) at the end. Ctrl-C, SIGTERM and SIGHUP
//! ([`signals`]) drop the running subcommand (a call in flight is cancelled at the server with
//! `notifications/cancelled`, over stdio and HTTP alike), close the server cleanly and exit
//! with status 130, 143 or 129. A second signal while closing stops at once: the client is
//! dropped, which kills a stdio server's whole process group.
//!
//! `login` and `logout` take their own path ([`auth`]): `login` connects with a browser
//! authorization and stores the tokens, `logout` removes them without connecting. Every HTTP connection
//! ([`connect`], [`many`]) sends the stored token and refreshes it, and never opens a browser
//! by itself.

pub mod answer;
pub mod auth;
pub mod bridge;
pub mod commands;
pub mod config_file;
pub mod connect;
pub mod demo;
pub mod diagnose;
pub mod elicit;
pub mod load;
pub mod log;
pub mod many;
pub mod not_mcp;
pub mod output;
pub mod prompt;
pub mod roots;
pub mod sampling;
pub mod schema_warnings;
pub mod shell;
pub mod signals;
pub mod tasks;
pub mod tool_cache;
pub mod trace;
pub mod ui;

use std::future::Future;

use mcp_proto::session::NotificationKind;
use mcp_proto::types::LoggingMessageParams;
use mcp_tokio::Client;

use crate::args::{Cli, Command};
use crate::exit::{CliError, Exit};
use elicit::ElicitMode;
use output::Out;
use signals::StopSignals;
use ui::Ui;

/// Resolves on Ctrl-C; never, when the signal cannot be watched. The shell's own watch,
/// beside [`StopSignals`] (tokio delivers a signal to every listener).
pub(crate) async fn interrupted() {
    if tokio::signal::ctrl_c().await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// What `mcp bridge --listen` says on stderr when a signal stops it.
pub const BRIDGE_STOPPING: &str = "mcp bridge: stopping: closing every session";

/// Connects and runs the subcommand of `cli`.
pub async fn run(cli: &Cli) -> Result<Exit, CliError> {
    // Before anything is spawned: a signal must never leave a server behind.
    let mut signals = StopSignals::listen();
    let ui = Ui::new(cli);
    // `mcp bridge` passes its servers' stderr through (a host logs it); with a --config of
    // several servers each line says whose it is.
    let passthrough = matches!(cli.command, Command::Bridge(_)).then(|| log::ServerStderr {
        prefixed: cli.connection.config.is_some() && cli.connection.server.is_none(),
    });
    log::install(&ui, cli.output.verbose, passthrough);
    let out = Out::new(cli);
    match &cli.command {
        Command::Login {
            no_browser,
            scopes,
            wait,
        } => {
            let login = auth::login(cli, &ui, &out, *no_browser, scopes, *wait);
            return with_interrupt(&ui, &mut signals, login, false).await;
        }
        Command::Logout { all } => return auth::logout(cli, &ui, &out, *all),
        Command::Bridge(args) => {
            return bridge_until_stopped(&ui, &mut signals, cli, args.http.listen.is_some()).await;
        }
        _ => {}
    }
    // A bridge's `SERVER/ID` task id with --config picks the server (`mcp tasks get`).
    let routed = tasks::route_config_task(cli)?;
    let cli = routed.as_ref().unwrap_or(cli);
    if many::uses_manager(cli) {
        return with_interrupt(&ui, &mut signals, many::run(cli, &ui, &out), false).await;
    }
    let connecting = async {
        match &cli.command {
            Command::Demo => demo::connect(cli, &ui).await,
            _ => {
                let mode = ElicitMode::for_terminal(&ui, ElicitMode::Decline);
                connect::connect(cli, &ui, mode).await
            }
        }
    };
    let client = tokio::select! {
        c = connecting => c?,
        stop = signals.recv() => return Err(stop),
    };
    // `watch` prints every notification itself, the shell above its prompt.
    let logs = (!matches!(cli.command, Command::Watch(_) | Command::Shell(_)))
        .then(|| print_logs(&ui, &client));
    let result = match &cli.command {
        // The shell handles Ctrl-C itself: it cancels one command, not the session.
        // The shell handles Ctrl-C itself (it cancels one command, not the session); SIGTERM
        // and SIGHUP still end it the way they end any other command.
        Command::Shell(_) => tokio::select! {
            r = shell::run(cli, &ui, &client) => r,
            stop = signals.recv_terminating() => {
                ui.info(&signals::stopping_line(&stop));
                Err(stop)
            }
        },
        Command::Demo => {
            with_interrupt(&ui, &mut signals, demo::tour(&ui, &out, &client), false).await
        }
        command => {
            let tools = tool_cache::ToolCache::default();
            let work = commands::run(command, &cli.connection, &ui, &out, &client, &tools);
            let watching = matches!(command, Command::Watch(_));
            match with_interrupt(&ui, &mut signals, work, watching).await {
                // Ctrl-C is how `watch` is meant to end: status 130 as for any interrupted
                // command, without an error message.
                Err(CliError::Interrupted) if watching => Ok(Exit::Interrupted),
                other => other,
            }
        }
    };
    if let Command::Watch(w) = &cli.command
        && !w.subscribe.is_empty()
    {
        commands::after_watch(&client).await;
    }
    tokio::select! {
        () = client.close() => {}
        // Dropping the last client handle ends the driver, which kills a stdio server's
        // process group with SIGKILL.
        _ = signals.recv() => ui.info("stopping at once"),
    }
    if let Some(logs) = logs {
        logs.abort();
    }
    result
}

/// How long a stopping bridge may take to cancel what runs upstream and close its upstream
/// sessions before it exits anyway.
const BRIDGE_STOP_GRACE: std::time::Duration = std::time::Duration::from_secs(3);

/// Runs `mcp bridge` until it ends or a stop signal arrives. The signal asks the bridge to
/// stop ([`bridge::stop`]): the requests still running upstream are cancelled with the
/// signal named in the reason and the upstream sessions closed (HTTP `DELETE`, a child's
/// shutdown), within [`BRIDGE_STOP_GRACE`]; Ctrl-C meanwhile stops at once (a repeated SIGTERM
/// or SIGHUP does not: see [`StopSignals::recv_interrupt`]). The stdio bridge then exits with
/// the signal's status (130, 143, 129), as any command; `--listen` (`listening`) exits 0, a
/// server stopped on purpose.
async fn bridge_until_stopped(
    ui: &Ui,
    signals: &mut StopSignals,
    cli: &Cli,
    listening: bool,
) -> Result<Exit, CliError> {
    let work = bridge::run(cli, ui);
    let mut work = std::pin::pin!(work);
    let stop = tokio::select! {
        r = &mut work => return r,
        stop = signals.recv() => stop,
    };
    ui.clear_progress();
    ui.info(&if listening {
        BRIDGE_STOPPING.to_owned()
    } else {
        signals::bridge_stopping_line(&stop)
    });
    let signal = match &stop {
        CliError::Stopped(signal) => signal.name(),
        _ => "SIGINT",
    };
    bridge::stop::request(signal);
    tokio::select! {
        finished = tokio::time::timeout(BRIDGE_STOP_GRACE, &mut work) => {
            if finished.is_err() {
                tracing::warn!("bridge: the upstream sessions did not close in time; stopping");
            }
        }
        // Dropping the bridge drops its clients, which kills stdio servers' process groups.
        // Only Ctrl-C: a host that dies sends two SIGTERMs, neither of them a repeat.
        _ = signals.recv_interrupt() => ui.info("stopping at once"),
    }
    if listening { Ok(Exit::Ok) } else { Err(stop) }
}

/// Runs `work` until it ends or a stop signal arrives; then `work` is dropped (cancelling
/// its calls) and the signal's error is returned. `watching`: Ctrl-C is the command's normal
/// end, not announced.
async fn with_interrupt(
    ui: &Ui,
    signals: &mut StopSignals,
    work: impl Future<Output = Result<Exit, CliError>>,
    watching: bool,
) -> Result<Exit, CliError> {
    let result = tokio::select! {
        r = work => r,
        stop = signals.recv() => {
            ui.clear_progress();
            // `watch` ends on Ctrl-C by design: nothing to announce.
            if !matches!(stop, CliError::Interrupted) || !watching {
                ui.info(&signals::stopping_line(&stop));
            }
            Err(stop)
        }
    };
    ui.clear_progress();
    result
}

/// Prints the server's log messages on stderr (unless `-q`) while a command runs.
fn print_logs(ui: &Ui, client: &Client) -> tokio::task::JoinHandle<()> {
    let mut notifications = client.notifications();
    let ui = ui.clone();
    tokio::spawn(async move {
        while let Some(item) = notifications.recv().await {
            let Ok(n) = item else { continue };
            if n.kind() != NotificationKind::LogMessage {
                continue;
            }
            let parsed = n
                .params
                .as_ref()
                .and_then(|p| serde_json::from_str::<LoggingMessageParams>(p.get()).ok());
            if let Some(log) = parsed {
                ui.info(&crate::render::log_line(&log));
            }
        }
    })
}

/// `mcp lint --file`: lints a saved `tools/list` result.
pub fn lint_file(cli: &Cli, path: &std::path::Path) -> Result<Exit, CliError> {
    let file_error = |reason: String| CliError::File {
        path: path.to_owned(),
        reason,
    };
    let text = std::fs::read_to_string(path).map_err(|e| file_error(e.to_string()))?;
    let tools = crate::lint::parse_tools_file(&text).map_err(file_error)?;
    commands::lint_report(&Ui::new(cli), &Out::new(cli), &tools)
}
