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
pub mod connect;
pub mod demo;
pub mod diagnose;
pub mod elicit;
pub mod load;
pub mod log;
pub mod many;
pub mod output;
pub mod prompt;
pub mod roots;
pub mod sampling;
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
        // A server asked to stop ends cleanly (exit 0): stopping is how it is meant to end.
        Command::Bridge(args) if args.listen.is_some() => {
            return tokio::select! {
                r = bridge::run(cli, &ui) => r,
                _ = signals.recv() => {
                    // Dropping the bridge drops its HTTP server and every session with it:
                    // their running calls are cancelled and their upstreams closed. A second
                    // signal during that exits at once (`main`).
                    ui.info(BRIDGE_STOPPING);
                    Ok(Exit::Ok)
                }
            };
        }
        // The host ends the stdio bridge by closing stdin; a signal ends it as any command.
        Command::Bridge(_) => {
            return with_interrupt(&ui, &mut signals, bridge::run(cli, &ui), false).await;
        }
        _ => {}
    }
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
