//! `mcp tasks`: a server's tasks (protocol 2025-11-25). Without a subcommand it lists them
//! (`tasks/list`, every page); `get`, `result` and `cancel` act on one task by id
//! (`tasks/get`, `tasks/result`, `tasks/cancel`).
//!
//! Output follows the other commands: a table on a terminal and in a pipe (as `tools` and
//! `resources` print theirs), the server's result as JSON with `--json` (`{"tasks": [...]}`
//! for the list, the task itself for `get` and `cancel`, the tool result for `result`). A
//! server that does not declare the capability a command needs is
//! [`CliError::NotOffered`] (`not_offered`, exit 4) before anything is sent.

use mcp_proto::types::{CallToolResult, Task};
use mcp_tokio::{Client, Error};
use serde_json::json;

use super::bridge::aggregate::tasks as bridge_tasks;
use super::commands::{call_options, call_result, error_text};
use super::connect::call_error;
use super::output::{Out, to_json};
use super::ui::Ui;
use crate::args::{Cli, Command, ConnectionArgs, TaskAction, TasksArgs};
use crate::exit::{CliError, Exit};
use crate::render::{Column, Table};

/// Runs `mcp tasks` (and its subcommands) on a connected client.
pub async fn run(
    ui: &Ui,
    out: &Out,
    connection: &ConnectionArgs,
    client: &Client,
    args: &TasksArgs,
) -> Result<Exit, CliError> {
    let failed = |e: Error| task_error(client, e);
    match &args.action {
        None => {
            let tasks = client.list_tasks().await.map_err(failed)?;
            if ui.json {
                return out.json(&json!({ "tasks": to_json(&tasks) }));
            }
            out.text(&list_text(&tasks, ui.width))
        }
        Some(TaskAction::Get { id, .. }) => {
            let task = client.get_task(id.clone()).await.map_err(failed)?;
            show_task(ui, out, &task)
        }
        Some(TaskAction::Cancel { id, .. }) => {
            let task = client.cancel_task(id.clone()).await.map_err(failed)?;
            show_task(ui, out, &task)
        }
        Some(TaskAction::Result { id, .. }) => {
            let options = call_options(connection);
            let payload = client
                .task_result(id.clone(), options)
                .await
                .map_err(failed)?;
            if ui.json {
                return out.json(&payload);
            }
            // For a task of `tools/call` (the only kind a server makes of this client's
            // requests) the payload is a tool result; anything else is shown as sent.
            let Ok(result) = payload.decode::<CallToolResult>() else {
                let pretty = serde_json::to_string_pretty(&payload).unwrap_or_default();
                return out.text(&format!("{pretty}\n"));
            };
            call_result(ui, out, &result)?;
            if result.is_error == Some(true) {
                return Err(CliError::ToolFailed(error_text(&result)));
            }
            Ok(Exit::Ok)
        }
    }
}

/// `mcp --config FILE tasks get|result|cancel ID` without `--server`, when the file's
/// server is not plain: a bridge over FILE (`mcp bridge --config FILE`) shows its servers'
/// task ids as `SERVER/ID`, so an id of that form whose `SERVER` is a server of the file goes
/// to that server with the server's own `ID`: the command line to run instead is returned.
/// Any other id, with a file of several servers, is a usage error that names both ways of
/// saying which server has the task. `None`: the command line is run as it is.
///
/// Call it before connecting: it picks the server.
pub fn route_config_task(cli: &Cli) -> Result<Option<Cli>, CliError> {
    let Command::Tasks(args) = &cli.command else {
        return Ok(None);
    };
    let c = &cli.connection;
    let (Some(file), None, Some(action)) = (&c.config, &c.server, &args.action) else {
        return Ok(None);
    };
    if !args.server().argv.is_empty() || c.url.is_some() {
        // Two servers given: the target's own error says so.
        return Ok(None);
    }
    let (TaskAction::Get { id, .. }
    | TaskAction::Result { id, .. }
    | TaskAction::Cancel { id, .. }) = action;
    let entries = super::config_file::entries(file)?;
    let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
    let named = bridge_tasks::from_host(id);
    if let Some((server, own)) = &named
        && names.contains(&server.as_str())
    {
        let mut routed = cli.clone();
        if let Command::Tasks(TasksArgs {
            action:
                Some(
                    TaskAction::Get { id, .. }
                    | TaskAction::Result { id, .. }
                    | TaskAction::Cancel { id, .. },
                ),
            ..
        }) = &mut routed.command
        {
            *id = (*own).to_owned();
        }
        routed.connection.server = Some(server.clone());
        return Ok(Some(routed));
    }
    let servers = || format!("{} servers ({})", names.len(), names.join(", "));
    match (names.as_slice(), named) {
        // Already SERVER/ID, of a server the file lacks: prefixing it again would not help.
        ([_, _, ..], Some((server, _))) => Err(CliError::Usage(format!(
            "task id {id:?} names the server {server:?} (a bridge's SERVER/ID), which {} does \
             not have; its servers: {}; with --server NAME give the server's own id",
            file.display(),
            names.join(", ")
        ))),
        ([first, _, ..], None) => Err(CliError::Usage(format!(
            "{} has {}: say which has task {id:?} with --server NAME, or give the id \
             as a bridge over the file shows it, SERVER/ID ({})",
            file.display(),
            servers(),
            bridge_tasks::to_host(first, id)
        ))),
        _ => Ok(None),
    }
}

/// A driver error of a tasks command; "does not offer" names the server as it introduced
/// itself rather than the command line that started it.
fn task_error(client: &Client, e: Error) -> CliError {
    match call_error(e) {
        CliError::NotOffered { method, reason, .. } => CliError::NotOffered {
            server: client.server_info().name.clone(),
            method,
            reason,
        },
        other => other,
    }
}

/// `get` and `cancel`: the task as JSON, or a field table.
fn show_task(ui: &Ui, out: &Out, task: &Task) -> Result<Exit, CliError> {
    if ui.json {
        return out.json(task);
    }
    let mut t = Table::new(vec![Column::new("FIELD"), Column::wrapping("VALUE")]);
    t.row(["id".to_owned(), task.task_id.clone()]);
    t.row(["status".to_owned(), task.status.as_str().to_owned()]);
    if let Some(m) = &task.status_message {
        t.row(["message".to_owned(), m.clone()]);
    }
    t.row(["created".to_owned(), task.created_at.clone()]);
    t.row(["updated".to_owned(), task.last_updated_at.clone()]);
    t.row(["ttl".to_owned(), ttl_text(task.ttl)]);
    if let Some(p) = task.poll_interval {
        t.row(["poll interval".to_owned(), millis_text(p)]);
    }
    out.text(&t.render(ui.width))
}

/// The human `tasks` text: one row per task.
pub fn list_text(tasks: &[Task], width: usize) -> String {
    if tasks.is_empty() {
        return "the server has no tasks\n".into();
    }
    let mut t = Table::new(vec![
        Column::new("ID"),
        Column::new("STATUS"),
        Column::wrapping("MESSAGE"),
        Column::new("CREATED (UTC)"),
        Column::new("UPDATED (UTC)"),
        Column::right("TTL"),
    ]);
    for task in tasks {
        t.row([
            task.task_id.clone(),
            task.status.as_str().to_owned(),
            task.status_message.clone().unwrap_or_default(),
            short_time(&task.created_at),
            short_time(&task.last_updated_at),
            ttl_text(task.ttl),
        ]);
    }
    t.render(width)
}

/// An ISO 8601 UTC timestamp as `MM-DD HH:MM:SS`, so a table of tasks fits a terminal
/// (`--json` and `tasks get` keep it whole); anything else as sent.
fn short_time(iso: &str) -> String {
    let b = iso.as_bytes();
    let shape = b.len() >= 19
        && b[4] == b'-'
        && b[7] == b'-'
        && matches!(b[10], b'T' | b't' | b' ')
        && b[13] == b':'
        && b[16] == b':';
    if shape && iso.ends_with(['Z', 'z']) && iso.is_char_boundary(19) {
        format!("{} {}", &iso[5..10], &iso[11..19])
    } else {
        iso.to_owned()
    }
}

/// A task's ttl for people: `unlimited` for `null`.
fn ttl_text(ttl: Option<u64>) -> String {
    ttl.map_or_else(|| "unlimited".into(), millis_text)
}

/// Milliseconds in the largest whole unit that fits (`90s` stays `90s`, `3600000` is `1h`).
fn millis_text(ms: u64) -> String {
    const UNITS: [(u64, &str); 4] = [
        (86_400_000, "d"),
        (3_600_000, "h"),
        (60_000, "m"),
        (1000, "s"),
    ];
    UNITS
        .iter()
        .find(|(size, _)| ms >= *size && ms.is_multiple_of(*size))
        .map_or_else(
            || format!("{ms}ms"),
            |(size, unit)| format!("{}{unit}", ms / size),
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(id: &str, status: &str, ttl: Option<u64>) -> Task {
        serde_json::from_value(json!({
            "taskId": id, "status": status, "statusMessage": "half way",
            "createdAt": "2025-11-25T10:00:00Z", "lastUpdatedAt": "2025-11-25T10:01:00Z",
            "ttl": ttl
        }))
        .expect("a task")
    }

    #[test]
    fn durations_in_the_largest_whole_unit() {
        assert_eq!(millis_text(3_600_000), "1h");
        assert_eq!(millis_text(90_000), "90s");
        assert_eq!(millis_text(1500), "1500ms");
        assert_eq!(millis_text(0), "0ms");
        assert_eq!(ttl_text(None), "unlimited");
    }

    #[test]
    fn the_list_has_a_row_per_task_with_its_status_message_times_and_ttl() {
        let text = list_text(
            &[
                task("t-1", "working", Some(60_000)),
                task("t-2", "completed", None),
            ],
            200,
        );
        let lines: Vec<&str> = text.lines().collect();
        // The header, its rule, a row per task.
        assert_eq!(lines.len(), 4, "{text}");
        for header in ["ID", "STATUS", "MESSAGE", "CREATED", "UPDATED", "TTL"] {
            assert!(lines[0].contains(header), "{text}");
        }
        assert!(
            lines[2].starts_with("t-1") && lines[2].contains("working"),
            "{text}"
        );
        assert!(
            lines[2].contains("half way") && lines[2].trim_end().ends_with("1m"),
            "{text}"
        );
        assert!(
            lines[3].contains("11-25 10:01:00") && lines[3].ends_with("unlimited"),
            "{text}"
        );
        assert_eq!(list_text(&[], 80), "the server has no tasks\n");
        // A 32-character id, its status and both times fit 100 columns whole.
        let long = task(
            "6b87b89ffddba117dce499a7c96a1237",
            "cancelled",
            Some(300_000),
        );
        let text = list_text(&[long], 100);
        let row = text.lines().nth(2).unwrap_or_default();
        for whole in [
            "6b87b89ffddba117dce499a7c96a1237",
            "cancelled",
            "11-25 10:00:00",
            "5m",
        ] {
            assert!(row.contains(whole), "{whole}: {text}");
        }
    }

    #[test]
    fn times_are_shortened_only_when_they_are_iso_utc() {
        assert_eq!(short_time("2026-12-04T17:18:59.232Z"), "12-04 17:18:59");
        assert_eq!(short_time("2026-12-04T17:18:59Z"), "12-04 17:18:59");
        assert_eq!(
            short_time("2026-12-04T17:18:59+01:00"),
            "2026-12-04T17:18:59+01:00"
        );
        assert_eq!(short_time("yesterday"), "yesterday");
        assert_eq!(short_time("2026-12-04T17:18:5é"), "2026-12-04T17:18:5é");
    }
}
