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
pub mod task_owners;

use std::sync::{Arc, RwLock};

use mcp_proto::session::{NotificationKind, ServerNotification};
use mcp_proto::types::LoggingMessageParams;
use mcp_tokio::{Client, Lagged, Notifications};

use serde_json::Value;

use super::output::Out;
use super::tool_cache::ToolCache;
use super::ui::Ui;
use super::{commands, interrupted};
use crate::args::{Cli, Command, OutputArgs};
use crate::exit::{CliError, Exit};
use catalog::{List, SharedCatalog};
use input::{EditorSetup, Input, LineReader};
use line::{LineCommand, Parsed};
use printer::{Printer, Route};
use task_owners::TaskOwners;

/// How many notifications in a row are printed before the running command is polled again.
const FAIRNESS: usize = 64;

/// Runs the shell on a connected client until `exit`, Ctrl-D, the end of stdin or the end
/// of the connection. The caller closes the client afterwards.
pub async fn run(cli: &Cli, ui: &Ui, client: &Client) -> Result<Exit, CliError> {
    let catalog: SharedCatalog = Arc::new(RwLock::new(catalog::Catalog::default()));
    let tool_cache = Arc::new(ToolCache::default());
    // A server slow to list its tools must not make Ctrl-C useless before the first prompt.
    tokio::select! {
        () = catalog::load(client, &catalog, &tool_cache) => {}
        () = interrupted() => return Err(CliError::Interrupted),
    }
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
    let mut shell = Shell {
        cli,
        ui,
        client,
        route,
        printer,
        catalog,
        tool_cache,
        notifications: Some(client.notifications()),
        task_owners: TaskOwners::default(),
        interactive,
    };
    shell.read_eval_print(&mut reader).await
}

/// One shell session's state.
struct Shell<'a> {
    cli: &'a Cli,
    ui: &'a Ui,
    client: &'a Client,
    route: Arc<std::sync::Mutex<Route>>,
    printer: Printer,
    catalog: SharedCatalog,
    /// The tool listing that `call` and `load` use (listed at start, dropped when the
    /// server's tools change).
    tool_cache: Arc<ToolCache>,
    /// `None` once the connection has ended the stream.
    notifications: Option<Notifications>,
    /// Whose task each task status notification is about.
    task_owners: TaskOwners,
    interactive: bool,
}

impl Shell<'_> {
    /// The loop: read a line, run it, repeat.
    async fn read_eval_print(&mut self, reader: &mut LineReader) -> Result<Exit, CliError> {
        let mut last = Exit::Ok;
        let interactive = self.interactive;
        let finished = |last| if interactive { Exit::Ok } else { last };
        loop {
            let text = match self.next_input(reader).await? {
                Input::Line(text) => text,
                Input::Interrupted => continue,
                Input::Eof => return Ok(finished(last)),
                Input::Failed(reason) => {
                    return Err(CliError::Usage(format!("mcp shell: {reason}")));
                }
            };
            let command = match line::parse(&text) {
                Parsed::Empty => continue,
                Parsed::Exit => return Ok(finished(last)),
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
            last = match self.run_line(&command).await {
                Ok(exit) => exit,
                Err(e) if self.client.is_closed() => return Err(e),
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

    /// Waits for the next line, showing notifications meanwhile (above the prompt). Ends the
    /// shell when the connection ends, and on Ctrl-C when reading a pipe.
    async fn next_input(&mut self, reader: &mut LineReader) -> Result<Input, CliError> {
        reader.request();
        loop {
            tokio::select! {
                input = reader.recv() => return Ok(input),
                Some(item) = next_notification(&mut self.notifications) => {
                    if let Some(text) = self.notification(item, false) {
                        self.printer.line(text);
                    }
                }
                ended = self.client.ended() => {
                    if self.interactive {
                        reader.abandon_prompt();
                    }
                    // The server's command and how it ended, as a failed call says it.
                    return Err(crate::app::connect::call_error(ended));
                }
                // On a terminal the editor reads Ctrl-C as a key; this is stdin from a pipe.
                () = interrupted(), if !self.interactive => return Err(CliError::Interrupted),
            }
        }
    }

    /// Runs one parsed line until it ends or Ctrl-C (which drops it: its calls are
    /// cancelled). Notifications that arrive meanwhile are printed in order with its output.
    async fn run_line(&mut self, line: &LineCommand) -> Result<Exit, CliError> {
        let options = Cli {
            connection: self.cli.connection.clone(),
            output: with_defaults(&line.output, &self.cli.output),
            command: line.command.clone(),
        };
        let line_ui = Ui::new(&options);
        let out = Out::new(&options);
        // The line's own `-v` / `-vv` traces its messages (until the line ends).
        let _trace = crate::app::trace::trace_line_at(line.output.verbose);
        Route::set_ui(&self.route, line_ui.clone());
        let client = self.client;
        // Its own handle: the loop below borrows the shell mutably for notifications.
        let tool_cache = self.tool_cache.clone();
        // A call shows its task's statuses itself (the status line).
        let call_running = matches!(line.command, Command::Call { .. });
        let work = async {
            match &line.command {
                Command::Lint {
                    file: Some(path), ..
                } => super::lint_file(&options, path),
                command => {
                    let connection = &options.connection;
                    commands::run(command, connection, &line_ui, &out, client, &tool_cache).await
                }
            }
        };
        tokio::pin!(work);
        // Notifications printed in a row since the command was last polled.
        let mut burst = 0;
        let result = loop {
            let starving = burst >= FAIRNESS;
            tokio::select! {
                // A notification that came before the answer is printed before the result.
                biased;
                Some(item) = next_notification(&mut self.notifications), if !starving => {
                    burst += 1;
                    if let Some(text) = self.notification(item, call_running) {
                        line_ui.info(&text);
                    }
                }
                r = &mut work => break r,
                // After a long run of notifications the command is polled too (yield_now is
                // ready on its second poll), so a flood cannot hold its result back.
                () = tokio::task::yield_now(), if starving => burst = 0,
                () = interrupted() => {
                    // A question the command asked at the terminal must not take the next lines.
                    super::answer::abandon_pending();
                    line_ui.clear_progress();
                    line_ui.note("cancelled");
                    break Err(CliError::Interrupted);
                }
            }
        };
        line_ui.clear_progress();
        // A server's text is written as sent, without a newline of its own maybe: end the line
        // so the next result (or the prompt) starts on its own.
        if super::output::stdout_state() == super::output::StdoutState::OpenLine {
            use std::io::Write as _;
            let mut stdout = std::io::stdout().lock();
            let _ = stdout.write_all(b"\n").and_then(|()| stdout.flush());
            super::output::record_stdout(b"\n");
        }
        Route::set_ui(&self.route, self.ui.clone());
        result
    }

    /// The text of one notification, `None` when it is not printed (the status of a task
    /// that a call follows: `call_running` says whether a `call` line runs now). A list
    /// change also refreshes completion (in the background: the server may be slow to list).
    fn notification(
        &mut self,
        item: Result<ServerNotification, Lagged>,
        call_running: bool,
    ) -> Option<String> {
        let n = match item {
            Ok(n) => n,
            Err(lagged) => return Some(format!("warning: {lagged}")),
        };
        if let Some(list) = List::changed_by(n.kind()) {
            if list == List::Tools {
                // The next `call` must not type its arguments from the old schemas.
                self.tool_cache.forget();
            }
            let (client, catalog) = (self.client.clone(), self.catalog.clone());
            let tool_cache = self.tool_cache.clone();
            tokio::spawn(async move {
                catalog::refresh(&client, &catalog, &tool_cache, list).await;
            });
        }
        let params: Option<Value> = n
            .params
            .as_ref()
            .and_then(|p| serde_json::from_str(p.get()).ok());
        if n.kind() == NotificationKind::TaskStatus {
            let id = params.as_ref().and_then(|p| p.get("taskId")?.as_str());
            if let Some(id) = id
                && self.task_owners.belongs_to_a_call(id, call_running)
            {
                return None;
            }
        }
        Some(notification_text(&n.method, params.as_ref()))
    }
}

/// The next notification; pending forever once the stream has ended (and then dropped).
async fn next_notification(
    notifications: &mut Option<Notifications>,
) -> Option<Result<ServerNotification, Lagged>> {
    let Some(stream) = notifications.as_mut() else {
        return std::future::pending().await;
    };
    let item = stream.recv().await;
    if item.is_none() {
        *notifications = None;
    }
    item
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
        NotificationKind::TaskStatus => {
            let message = params
                .and_then(|p| p.get("statusMessage"))
                .and_then(Value::as_str);
            let (id, status) = (param("taskId"), param("status"));
            match message {
                Some(m) => format!("task {id} {status}: {m}"),
                None => format!("task {id} {status}"),
            }
        }
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
            notification_text(
                "notifications/tasks/status",
                Some(&json!({ "taskId": "t-1", "status": "working", "statusMessage": "halfway" }))
            ),
            "task t-1 working: halfway"
        );
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
