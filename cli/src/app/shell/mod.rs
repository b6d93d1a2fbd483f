//! `mcp shell`: one session, many commands.
//!
//! Each typed line is split shell-style and parsed by the same clap definitions as the
//! one-shot CLI ([`mod@line`]), then run on the open connection by
//! [`commands::run`]. On a terminal the line editor ([`input`]) gives a
//! prompt named after the server, history and tab completion from the server's lists
//! ([`catalog`], [`complete`]); without one, commands are read from stdin one per line.
//!
//! What the shell guarantees:
//! - a mistake or a failed command prints its message and hint and the shell goes on;
//! - Ctrl-C cancels the running command (its requests are dropped, which sends
//!   `notifications/cancelled`) and returns to the prompt; at the prompt it only clears the
//!   line; Ctrl-D or `exit` leaves with status 0;
//! - server notifications (log messages, list changes, resource updates) are printed as they
//!   arrive, above the prompt ([`printer`]); a list change also refreshes completion;
//! - when the connection dies the shell ends with the usual exit code (3).
//!
//! Without a terminal, the exit status is that of the last command (as `sh` does), and
//! Ctrl-C while waiting for input ends the shell with 130.

pub mod catalog;
pub mod complete;
pub mod input;
pub mod line;
pub mod printer;

use std::sync::{Arc, RwLock};

use mcp_proto::session::NotificationKind;
use mcp_proto::types::LoggingMessageParams;
use mcp_tokio::Client;
use serde_json::Value;

use super::output::Out;
use super::ui::Ui;
use super::{commands, interrupted};
use crate::args::{Cli, Command, OutputArgs};
use crate::exit::{CliError, Exit};
use catalog::{List, SharedCatalog};
use input::{EditorSetup, Input, LineReader};
use line::{LineCommand, Parsed};
use printer::{Printer, Route};

/// Runs the shell on a connected client until `exit`, Ctrl-D, the end of stdin or the end
/// of the connection. The caller closes the client afterwards.
pub async fn run(cli: &Cli, ui: &Ui, client: &Client) -> Result<Exit, CliError> {
    let catalog: SharedCatalog = Arc::new(RwLock::new(catalog::Catalog::default()));
    catalog::load(client, &catalog).await;
    let route = Route::new(ui.clone());
    let interactive = LineReader::interactive();
    let (mut reader, printer) = if interactive {
        let setup = EditorSetup {
            prompt: prompt(client),
            history: input::history_path(),
            catalog: catalog.clone(),
            route: route.clone(),
        };
        LineReader::editor(setup).map_err(|e| CliError::Usage(format!("mcp shell: {e}")))?
    } else {
        LineReader::stdin(route.clone())
    };
    if interactive {
        let info = client.server_info();
        ui.info(&format!(
            "connected to {} {} (protocol {}); `help` lists the commands, Ctrl-D leaves",
            info.name,
            info.version,
            client.protocol_version()
        ));
    }
    let notifications = tokio::spawn(show_notifications(client.clone(), printer.clone(), catalog));
    let result = read_eval_print(cli, ui, client, &mut reader, &route, interactive).await;
    notifications.abort();
    result
}

/// The loop: read a line, run it, repeat.
async fn read_eval_print(
    cli: &Cli,
    ui: &Ui,
    client: &Client,
    reader: &mut LineReader,
    route: &Arc<std::sync::Mutex<Route>>,
    interactive: bool,
) -> Result<Exit, CliError> {
    let mut last = Exit::Ok;
    loop {
        let input = tokio::select! {
            input = reader.next() => input,
            reason = client.closed() => {
                if interactive {
                    reader.abandon_prompt();
                }
                return Err(CliError::Closed(reason.to_string()));
            }
            // On a terminal the editor reads Ctrl-C as a key; this is stdin from a pipe.
            () = interrupted(), if !interactive => return Err(CliError::Interrupted),
        };
        let text = match input {
            Input::Line(text) => text,
            Input::Interrupted => continue,
            Input::Eof => return Ok(if interactive { Exit::Ok } else { last }),
            Input::Failed(reason) => return Err(CliError::Usage(format!("mcp shell: {reason}"))),
        };
        let command = match line::parse(&text) {
            Parsed::Empty => continue,
            Parsed::Exit => return Ok(if interactive { Exit::Ok } else { last }),
            Parsed::Text(help) => {
                print!("{help}");
                last = Exit::Ok;
                continue;
            }
            Parsed::Invalid(message) => {
                eprint!("{message}");
                last = Exit::Usage;
                continue;
            }
            Parsed::Run(command) => command,
        };
        last = match run_line(cli, ui, client, route, &command).await {
            Ok(exit) => exit,
            Err(e) if client.is_closed() => return Err(e),
            Err(CliError::Interrupted) => Exit::Interrupted,
            // The one-shot hint (`mcp <command> --help`) does not fit at the prompt.
            Err(CliError::Usage(message)) => {
                let name = text.split_whitespace().next().unwrap_or("COMMAND");
                eprint!("error: {message}\nhint: `help {name}` shows its arguments\n");
                Exit::Usage
            }
            Err(e) => {
                eprint!("{}", e.report());
                e.exit()
            }
        };
    }
}

/// Runs one parsed line until it ends or Ctrl-C (which drops it: its calls are cancelled).
async fn run_line(
    cli: &Cli,
    ui: &Ui,
    client: &Client,
    route: &std::sync::Mutex<Route>,
    line: &LineCommand,
) -> Result<Exit, CliError> {
    let options = Cli {
        connection: cli.connection.clone(),
        output: with_defaults(&line.output, &cli.output),
        command: line.command.clone(),
    };
    let line_ui = Ui::new(&options);
    let out = Out::new(&options);
    Route::set_ui(route, line_ui.clone());
    let work = async {
        match &line.command {
            Command::Lint {
                file: Some(path), ..
            } => super::lint_file(&options, path),
            command => commands::run(command, &line_ui, &out, client).await,
        }
    };
    let result = tokio::select! {
        r = work => r,
        () = interrupted() => {
            // A question the command asked at the terminal must not take the next lines.
            super::answer::abandon_pending();
            line_ui.clear_progress();
            line_ui.note("cancelled");
            Err(CliError::Interrupted)
        }
    };
    line_ui.clear_progress();
    Route::set_ui(route, ui.clone());
    result
}

/// The output options of a line: as typed, and where not typed, as given to `mcp shell`.
// The struct update keeps the line's value for any option not merged here.
#[allow(clippy::needless_update)]
fn with_defaults(line: &OutputArgs, shell: &OutputArgs) -> OutputArgs {
    OutputArgs {
        verbose: line.verbose.max(shell.verbose),
        quiet: line.quiet || shell.quiet,
        json: line.json || shell.json,
        output: line.output.clone().or_else(|| shell.output.clone()),
        raw: line.raw || shell.raw,
        ..line.clone()
    }
}

/// The prompt: the server's name (control characters left out, at most 32 characters).
fn prompt(client: &Client) -> String {
    let name: String = client
        .server_info()
        .name
        .chars()
        .filter(|c| !c.is_control())
        .take(32)
        .collect();
    let name = if name.trim().is_empty() {
        "mcp".to_owned()
    } else {
        name
    };
    format!("{name}> ")
}

/// Prints every notification as it arrives and refreshes completion on list changes. Ends
/// with the connection.
async fn show_notifications(client: Client, printer: Printer, catalog: SharedCatalog) {
    let mut notifications = client.notifications();
    while let Some(item) = notifications.recv().await {
        let n = match item {
            Ok(n) => n,
            Err(lagged) => {
                printer.line(format!("warning: {lagged}"));
                continue;
            }
        };
        let params: Option<Value> = n
            .params
            .as_ref()
            .and_then(|p| serde_json::from_str(p.get()).ok());
        printer.line(notification_text(&n.method, params.as_ref()));
        if let Some(list) = List::changed_by(n.kind()) {
            catalog::refresh(&client, &catalog, list).await;
        }
    }
}

/// One notification as the shell prints it.
pub fn notification_text(method: &str, params: Option<&Value>) -> String {
    let kind = NotificationKind::of(method);
    let param = |name: &str| {
        params
            .and_then(|p| p.get(name))
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_owned()
    };
    match kind {
        NotificationKind::LogMessage => {
            match params
                .and_then(|p| serde_json::from_value::<LoggingMessageParams>(p.clone()).ok())
            {
                Some(log) => crate::render::log_line(&log),
                None => format!("{method} {}", params.unwrap_or(&Value::Null)),
            }
        }
        NotificationKind::ToolsListChanged => "the server's tools changed".into(),
        NotificationKind::PromptsListChanged => "the server's prompts changed".into(),
        NotificationKind::ResourcesListChanged => "the server's resources changed".into(),
        NotificationKind::ResourceUpdated => format!("resource updated: {}", param("uri")),
        _ => match params {
            Some(p) => format!("{method} {p}"),
            None => method.to_owned(),
        },
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn notifications_read_as_sentences() {
        assert_eq!(
            notification_text("notifications/tools/list_changed", None),
            "the server's tools changed"
        );
        assert_eq!(
            notification_text(
                "notifications/resources/updated",
                Some(&json!({ "uri": "demo://notes" }))
            ),
            "resource updated: demo://notes"
        );
        let log = notification_text(
            "notifications/message",
            Some(&json!({ "level": "warning", "logger": "db", "data": "disk almost full" })),
        );
        assert!(log.contains("disk almost full"), "{log}");
        assert_eq!(
            notification_text("notifications/custom", Some(&json!({ "n": 1 }))),
            r#"notifications/custom {"n":1}"#
        );
    }

    #[test]
    fn line_options_fall_back_to_the_shell_options() {
        let shell = OutputArgs {
            json: true,
            ..OutputArgs::default()
        };
        let line = OutputArgs {
            quiet: true,
            ..OutputArgs::default()
        };
        let merged = with_defaults(&line, &shell);
        assert!(merged.json && merged.quiet && !merged.raw);
    }
}
