//! The subcommands that talk to a connected server.

use std::time::Instant;

use mcp_proto::jsonrpc::ErrorObject;
use mcp_proto::session::NotificationKind;
use mcp_proto::types::v2026::ListenFilter;
use mcp_proto::types::{
    CallToolResult, CompleteParams, CompletionArgument, ContentBlock, LoggingMessageParams,
    ResourceContents, Tool,
};
use mcp_tokio::{CallOptions, Client, Missed};
use serde_json::{Value, json};

use super::connect::call_error;
use super::diagnose;
use super::output::{Out, to_json};
use super::tool_cache::ToolCache;
use super::ui::Ui;
use crate::args::{Command, CompletionRef, ConnectionArgs, ToolArgs, string_pairs};
use crate::exit::{CliError, Exit};
use crate::render::{self, Column, Table};
use crate::{lint, load_stats::format_latency};

/// Runs one server subcommand on a connected client, printing with `ui` and writing results
/// to `out`. `call` and `load` take the server's tools from `tool_cache` (listing them only when
/// it does not have them, or not the tool named).
///
/// Both the one-shot CLI and `mcp shell` (once per typed line, on its one session) call
/// this; subcommands that do not run on a client (`demo`, `login`, `shell`, `help`, …) are a
/// usage error.
pub async fn run(
    command: &Command,
    connection: &ConnectionArgs,
    ui: &Ui,
    out: &Out,
    client: &Client,
    tool_cache: &ToolCache,
) -> Result<Exit, CliError> {
    let out = out.clone();
    match command {
        Command::Info(_) => info(ui, &out, client),
        Command::Tools(_) => tools(ui, &out, client).await,
        Command::Call {
            tool,
            args,
            no_output_check,
            ..
        } => {
            let listed = tool_cache.tools_naming(client, tool).await;
            // Never silently: a call whose tool has no usable listing goes out untyped and
            // unchecked, and says so.
            if let Some(why) = tool_cache.why_unchecked(tool) {
                ui.note(&format!(
                    "warning: {why}: its arguments are sent untyped and its result is not \
                     checked against an outputSchema"
                ));
            }
            let request = CallRequest {
                tool,
                args,
                check_output: !no_output_check,
            };
            call(ui, &out, connection, client, request, listed.as_deref()).await
        }
        Command::Tasks(args) => super::tasks::run(ui, &out, connection, client, args).await,
        Command::Resources(_) => resources(ui, &out, client).await,
        Command::Read { uri, .. } => read(ui, &out, client, uri).await,
        Command::Prompts(_) => prompts(ui, &out, client).await,
        Command::Prompt { name, pairs, .. } => {
            let arguments = string_pairs(pairs).map_err(|e| CliError::Usage(e.0))?;
            let given: Vec<String> = arguments.keys().cloned().collect();
            let result = match client.get_prompt(name.clone(), arguments).await {
                Ok(result) => result,
                Err(e) => {
                    let given: Vec<&str> = given.iter().map(String::as_str).collect();
                    return Err(diagnose::prompt_failed(client, name, &given, e).await);
                }
            };
            if ui.json {
                return out.json(&result);
            }
            let mut text = String::new();
            if let Some(d) = &result.description {
                text.push_str(&format!("{d}\n\n"));
            }
            for m in &result.messages {
                let role = serde_json::to_value(&m.role)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_else(|| "message".into());
                text.push_str(&format!("[{role}]\n"));
                if out.terminal {
                    text.push_str(&render::content_blocks(
                        std::slice::from_ref(&m.content),
                        ui.width,
                    ));
                } else {
                    // A pipe: the message text as sent, each message on its own lines.
                    let verbatim = render::verbatim_blocks(std::slice::from_ref(&m.content));
                    verbatim.notes.iter().for_each(|n| ui.info(n));
                    text.push_str(&verbatim.text);
                    if !verbatim.text.ends_with('\n') {
                        text.push('\n');
                    }
                }
            }
            out.text(&text)
        }
        Command::Complete {
            reference,
            argument,
            value,
            ..
        } => complete(ui, &out, client, reference, argument, value).await,
        Command::Ping(_) => {
            let start = Instant::now();
            client.ping().await.map_err(call_error)?;
            let latency = start.elapsed();
            if ui.json {
                return out.json(&json!({ "latencyMs": latency.as_secs_f64() * 1000.0 }));
            }
            out.text(&format!(
                "pong from {} in {}\n",
                client.server_info().name,
                format_latency(latency)
            ))
        }
        Command::LogLevel { level, .. } => {
            client
                .set_log_level(level.to_proto())
                .await
                .map_err(call_error)?;
            let name = serde_json::to_value(level.to_proto()).unwrap_or(Value::Null);
            if ui.json {
                return out.json(&json!({ "level": name }));
            }
            out.text(&format!(
                "log level set to {}\n",
                name.as_str().unwrap_or("?")
            ))
        }
        Command::Watch(w) => watch(ui, client, &w.subscribe).await,
        Command::Load {
            tool,
            args,
            concurrency,
            count,
            duration,
            ..
        } => {
            let tools = tool_cache.tools_naming(client, tool).await;
            let arguments =
                diagnose::tool_arguments(tool, args, tools.as_deref().map(Vec::as_slice))?;
            let plan = super::load::Plan {
                tool: tool.clone(),
                arguments,
                concurrency: *concurrency,
                count: *count,
                duration: *duration,
            };
            super::load::run(ui, &out, client, plan).await
        }
        Command::Lint { .. } => {
            let tools = client.list_tools().await.map_err(call_error)?;
            lint_report(ui, &out, &tools)
        }
        Command::Demo
        | Command::DemoServer(_)
        | Command::Bridge(_)
        | Command::Login { .. }
        | Command::Logout { .. }
        | Command::Shell(_)
        | Command::Completions { .. }
        | Command::Help { .. } => Err(CliError::Usage(
            "this subcommand does not run on a connected client".into(),
        )),
    }
}

/// The `info` output.
pub fn info(ui: &Ui, out: &Out, client: &Client) -> Result<Exit, CliError> {
    let info = client.server_info();
    if ui.json {
        return out.json(&json!({
            "serverInfo": to_json(info),
            "protocolVersion": client.protocol_version().to_string(),
            "capabilities": to_json(client.capabilities()),
            "instructions": client.instructions(),
        }));
    }
    out.text(&info_text(client, ui.width))
}

/// The human `info` text.
pub fn info_text(client: &Client, width: usize) -> String {
    let info = client.server_info();
    let mut t = Table::new(vec![Column::new("FIELD"), Column::wrapping("VALUE")]);
    t.row(["server".to_owned(), info.name.clone()]);
    if let Some(title) = &info.title {
        t.row(["title".to_owned(), title.clone()]);
    }
    t.row(["version".to_owned(), info.version.clone()]);
    t.row(["protocol".to_owned(), client.protocol_version().to_string()]);
    t.row(["capabilities".to_owned(), capability_summary(client)]);
    let mut text = t.render(width);
    if let Some(i) = client.instructions().filter(|i| !i.trim().is_empty()) {
        text.push_str("\ninstructions:\n");
        for line in render::wrap(i, width.saturating_sub(3)) {
            text.push_str(format!("  {line}").trim_end());
            text.push('\n');
        }
    }
    text
}

/// `tools (listChanged), resources (subscribe, listChanged), logging`.
fn capability_summary(client: &Client) -> String {
    let caps = to_json(client.capabilities());
    let Value::Object(map) = caps else {
        return "none".into();
    };
    let parts: Vec<String> = map
        .iter()
        .map(|(name, v)| {
            let flags: Vec<&str> = v
                .as_object()
                .map(|o| {
                    o.iter()
                        .filter(|(_, f)| f.as_bool() == Some(true))
                        .map(|(k, _)| k.as_str())
                        .collect()
                })
                .unwrap_or_default();
            if name == "logging" && client.era() == mcp_proto::session::Era::Discover {
                // Protocol 2026-07-28 has no `logging/setLevel`: a server logs only to a
                // request that names a level in its `_meta`, and `log-level` cannot run.
                "logging (per request only: no log-level)".to_owned()
            } else if flags.is_empty() {
                name.clone()
            } else {
                format!("{name} ({})", flags.join(", "))
            }
        })
        .collect();
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join(", ")
    }
}

/// The human `tools` text: a table, then each tool's input schema.
pub fn tools_text(tools: &[Tool], width: usize) -> String {
    if tools.is_empty() {
        return "the server has no tools\n".into();
    }
    let with_titles = tools.iter().any(|t| t.title.is_some());
    let mut columns = vec![Column::new("NAME")];
    if with_titles {
        columns.push(Column::new("TITLE"));
    }
    columns.push(Column::wrapping("DESCRIPTION"));
    let mut table = Table::new(columns);
    for tool in tools {
        let mut row = vec![tool.name.clone()];
        if with_titles {
            row.push(tool.title.clone().unwrap_or_default());
        }
        row.push(tool.description.clone().unwrap_or_default());
        table.row(row);
    }
    let mut text = table.render(width);
    for tool in tools {
        text.push_str(&format!("\n{}\n", render::style::tool(&tool.name)));
        for line in render::schema_lines(&tool.input_schema, width.saturating_sub(2)).lines() {
            text.push_str(&format!("  {line}\n"));
        }
    }
    text
}

async fn tools(ui: &Ui, out: &Out, client: &Client) -> Result<Exit, CliError> {
    let tools = client.list_tools().await.map_err(call_error)?;
    for warning in super::schema_warnings::for_tools(&tools) {
        ui.note(&warning);
    }
    if ui.json {
        return out.json(&json!({ "tools": to_json(&tools) }));
    }
    out.text(&tools_text(&tools, ui.width))
}

/// The time limits of one tool call: `--timeout` (else the client's default) restarted by
/// every progress update, and never more than [`ConnectionArgs::max_time`] in all, so a
/// long job that keeps reporting progress runs to the end while a silent one still times out.
pub fn call_options(connection: &ConnectionArgs) -> CallOptions {
    let options = CallOptions::new().reset_timeout_on_progress(connection.max_time());
    match connection.timeout {
        Some(t) => options.timeout(t),
        None => options,
    }
}

/// The text of a tool error, for the error message.
pub fn error_text(result: &CallToolResult) -> String {
    let text: Vec<&str> = result
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect();
    if text.is_empty() {
        "(no message)".into()
    } else {
        text.join(" ")
    }
}

/// The human rendering of a tool result.
pub fn result_text(result: &CallToolResult, width: usize) -> String {
    let mut text = render::content_blocks(&result.content, width);
    if let Some(s) = &result.structured_content {
        let shown_as_text = result.content.iter().any(|b| match b {
            ContentBlock::Text(t) => {
                serde_json::from_str::<Value>(&t.text).ok().as_ref() == Some(s)
            }
            _ => false,
        });
        if !shown_as_text {
            text.push_str("structured content:\n");
            let pretty = serde_json::to_string_pretty(s).unwrap_or_default();
            for line in pretty.lines() {
                text.push_str(&format!("  {line}\n"));
            }
        }
    }
    text
}

/// A tool result for a pipe or a file: its text as sent. Structured content that no text
/// item already carries is noted on stderr (`--json` shows it); a result with nothing but
/// structured content writes that, as pretty JSON.
pub fn verbatim_result(result: &CallToolResult) -> render::Verbatim {
    let mut verbatim = render::verbatim_blocks(&result.content);
    if let Some(s) = &result.structured_content {
        let shown_as_text = result.content.iter().any(|b| match b {
            ContentBlock::Text(t) => {
                serde_json::from_str::<Value>(&t.text).ok().as_ref() == Some(s)
            }
            _ => false,
        });
        if result.content.is_empty() {
            verbatim.text = serde_json::to_string_pretty(s).unwrap_or_default();
            verbatim.text.push('\n');
        } else if !shown_as_text {
            verbatim
                .notes
                .push("the result also has structured content (see it with --json)".into());
        }
    }
    verbatim
}

/// Says on stderr (unless `-q`) that `--raw` (or `-o` of a binary result) left text items
/// out beside the binary one.
fn left_out_note(ui: &Ui, option: &str, texts: usize) {
    if texts > 0 {
        let s = if texts == 1 { "" } else { "s" };
        ui.info(&format!(
            "note: {option} wrote the one binary item; {texts} text item{s} beside it left out (--json shows everything)"
        ));
    }
}

/// `-o FILE` of a result with an image (audio, blob): the decoded bytes, as `--raw` writes
/// them; a text rendering would leave the file empty or without the one thing asked for.
/// Decided before the file is created: a result that cannot be written leaves no file.
fn binary_to_file(
    ui: &Ui,
    out: &Out,
    raw: Result<render::Raw, render::RawError>,
) -> Result<(), CliError> {
    let raw = raw.map_err(|e| {
        let path = out.path.as_deref().unwrap_or(std::path::Path::new("-"));
        CliError::Usage(format!(
            "cannot write the result to {}: {}",
            path.display(),
            match e {
                render::RawError::Ambiguous(n) => format!(
                    "it has {n} binary items and a file holds one (--json writes them all, base64)"
                ),
                other => other.to_string(),
            }
        ))
    })?;
    left_out_note(ui, "-o", raw.texts_left_out);
    out.bytes(&raw.bytes)
}

/// Whether a tool result carries an image, audio or blob item (bytes, not text).
fn has_binary(result: &CallToolResult) -> bool {
    result.content.iter().any(|b| match b {
        ContentBlock::Image(_) | ContentBlock::Audio(_) => true,
        ContentBlock::Resource(e) => matches!(e.resource, ResourceContents::Blob(_)),
        _ => false,
    })
}

/// Writes a tool result: its raw bytes (`--raw`), JSON (`--json`) or its rendering.
pub fn call_result(ui: &Ui, out: &Out, result: &CallToolResult) -> Result<(), CliError> {
    if out.raw {
        let raw = render::raw_tool_result(result).map_err(|e| CliError::Usage(e.to_string()))?;
        left_out_note(ui, "--raw", raw.texts_left_out);
        out.bytes(&raw.bytes)
    } else if ui.json {
        out.json(result).map(drop)
    } else if out.path.is_some() && has_binary(result) {
        binary_to_file(ui, out, render::raw_tool_result(result))
    } else if out.terminal {
        out.text(&result_text(result, ui.width)).map(drop)
    } else {
        out.verbatim(ui, &verbatim_result(result)).map(drop)
    }
}

/// What `call` is asked: the tool, its arguments as typed, and whether its result is checked
/// against its `outputSchema`.
pub(crate) struct CallRequest<'a> {
    pub(crate) tool: &'a str,
    pub(crate) args: &'a ToolArgs,
    pub(crate) check_output: bool,
}

/// `mcp call` of `tool`, given the server's tools as listed (for the schema, the required
/// arguments and "did you mean"; see [`diagnose`]; `None`: no listing). The listing also
/// gave the client the tools' output schemas: unless `check_output` is false, a result that
/// breaks its tool's `outputSchema` is an error ([`CliError::OutputSchema`]).
pub(crate) async fn call(
    ui: &Ui,
    out: &Out,
    connection: &ConnectionArgs,
    client: &Client,
    request: CallRequest<'_>,
    tools: Option<&Vec<Tool>>,
) -> Result<Exit, CliError> {
    let CallRequest {
        tool,
        args,
        check_output,
    } = request;
    let tools = tools.map(Vec::as_slice);
    // The arguments are typed from the schema: where it is not valid JSON Schema they are
    // typed by their value instead, never silently.
    if let Some(listed) = tools.and_then(|t| t.iter().find(|t| t.name == tool)) {
        for warning in super::schema_warnings::for_tool(listed) {
            ui.note(&warning);
        }
    }
    let arguments = diagnose::tool_arguments(tool, args, tools)?;
    let progress_ui = ui.clone();
    let status_ui = ui.clone();
    let created_ui = ui.clone();
    // A task-required tool becomes a task: its status changes show where progress does;
    // Ctrl-C drops this call, which cancels the task at the server (`tasks/cancel`).
    let mut options = call_options(connection)
        .on_progress(move |p| {
            progress_ui.progress(p.progress, p.total, p.message.as_deref());
        })
        .on_task_status(move |status, message| status_ui.task_status(status.as_str(), message))
        .on_task_created(move |id| created_ui.task_created(id));
    if !check_output {
        options = options.skip_output_check();
    }
    let result = client
        .call_tool_with(tool.to_owned(), Value::Object(arguments), options)
        .await;
    ui.clear_progress();
    let result = result.map_err(|e| diagnose::call_failed(client, tool, tools, e))?;
    let text = error_text(&result);
    if let Some(error) = diagnose::tool_result_error(client, tool, tools, &result, &text) {
        return Err(error);
    }
    call_result(ui, out, &result)?;
    if result.is_error == Some(true) {
        // On a terminal the tool's own message was just shown: not again on the error line.
        let shown = out.terminal && !ui.json && !out.raw && !text.is_empty();
        return Err(CliError::ToolFailed(if shown {
            "its message is above".into()
        } else {
            text
        }));
    }
    Ok(Exit::Ok)
}

async fn resources(ui: &Ui, out: &Out, client: &Client) -> Result<Exit, CliError> {
    let resources = client.list_resources().await.map_err(call_error)?;
    let templates = match client.list_resource_templates().await {
        Ok(t) => t,
        // Templates are optional: a server without them may not know the method.
        Err(e) if e.code() == Some(ErrorObject::METHOD_NOT_FOUND) => Vec::new(),
        Err(e) => return Err(call_error(e)),
    };
    if ui.json {
        return out.json(&json!({
            "resources": to_json(&resources),
            "resourceTemplates": to_json(&templates),
        }));
    }
    let mut text = String::new();
    if resources.is_empty() {
        text.push_str("no resources\n");
    } else {
        let mut t = Table::new(vec![
            Column::new("URI"),
            Column::new("NAME"),
            Column::new("TYPE"),
            Column::wrapping("DESCRIPTION"),
        ]);
        for r in &resources {
            t.row([
                r.uri.clone(),
                r.name.clone(),
                r.mime_type.clone().unwrap_or_default(),
                r.description.clone().unwrap_or_default(),
            ]);
        }
        text.push_str(&t.render(ui.width));
    }
    if !templates.is_empty() {
        text.push('\n');
        let mut t = Table::new(vec![
            Column::new("URI TEMPLATE"),
            Column::new("NAME"),
            Column::new("TYPE"),
            Column::wrapping("DESCRIPTION"),
        ]);
        for r in &templates {
            t.row([
                r.uri_template.clone(),
                r.name.clone(),
                r.mime_type.clone().unwrap_or_default(),
                r.description.clone().unwrap_or_default(),
            ]);
        }
        text.push_str(&t.render(ui.width));
    }
    out.text(&text)
}

async fn read(ui: &Ui, out: &Out, client: &Client, uri: &str) -> Result<Exit, CliError> {
    let result = match client.read_resource(uri).await {
        Ok(result) => result,
        Err(e) => return Err(diagnose::read_failed(client, uri, e).await),
    };
    if out.raw {
        let raw =
            render::raw_resource(&result.contents).map_err(|e| CliError::Usage(e.to_string()))?;
        left_out_note(ui, "--raw", raw.texts_left_out);
        return out.bytes(&raw.bytes).map(|()| Exit::Ok);
    }
    if ui.json {
        return out.json(&result);
    }
    if out.path.is_some()
        && result
            .contents
            .iter()
            .any(|c| matches!(c, ResourceContents::Blob(_)))
    {
        return binary_to_file(ui, out, render::raw_resource(&result.contents)).map(|()| Exit::Ok);
    }
    if !out.terminal {
        return out.verbatim(ui, &render::verbatim_contents(&result.contents));
    }
    out.text(&render::resource_contents(&result.contents, ui.width))
}

/// The human `prompts` table.
pub fn prompts_text(prompts: &[mcp_proto::types::Prompt], width: usize) -> String {
    if prompts.is_empty() {
        return "the server has no prompts\n".into();
    }
    let mut t = Table::new(vec![
        Column::new("NAME"),
        Column::new("ARGUMENTS"),
        Column::wrapping("DESCRIPTION"),
    ]);
    for p in prompts {
        let args: Vec<String> = p
            .arguments
            .iter()
            .flatten()
            .map(|a| {
                if a.required == Some(true) {
                    a.name.clone()
                } else {
                    format!("{}?", a.name)
                }
            })
            .collect();
        t.row([
            p.name.clone(),
            args.join(", "),
            p.description.clone().unwrap_or_default(),
        ]);
    }
    t.render(width)
}

async fn prompts(ui: &Ui, out: &Out, client: &Client) -> Result<Exit, CliError> {
    let prompts = client.list_prompts().await.map_err(call_error)?;
    if ui.json {
        return out.json(&json!({ "prompts": to_json(&prompts) }));
    }
    out.text(&prompts_text(&prompts, ui.width))
}

async fn complete(
    ui: &Ui,
    out: &Out,
    client: &Client,
    reference: &CompletionRef,
    argument: &str,
    value: &str,
) -> Result<Exit, CliError> {
    let params = CompleteParams {
        reference: reference.to_proto(),
        argument: CompletionArgument {
            name: argument.to_owned(),
            value: value.to_owned(),
            ..CompletionArgument::default()
        },
        context: None,
        meta: None,
        extra: serde_json::Map::new(),
    };
    let result = match (client.complete(params).await, reference) {
        (Ok(result), _) => result,
        (Err(e), CompletionRef::Prompt(name)) => {
            return Err(diagnose::complete_failed(client, name, e).await);
        }
        (Err(e), CompletionRef::Resource(_)) => return Err(call_error(e)),
    };
    if ui.json {
        return out.json(&result);
    }
    let c = &result.completion;
    let text: String = c.values.iter().map(|v| format!("{v}\n")).collect();
    // Only the values go to stdout, one a line: a script reads them as they are. What is
    // about them goes to stderr.
    if c.values.is_empty() {
        ui.info("no completions");
    }
    let more = c
        .total
        .map(|t| t.saturating_sub(c.values.len() as u64))
        .filter(|&n| n > 0);
    match (more, c.has_more) {
        (Some(n), _) => ui.info(&format!("… and {n} more")),
        (None, Some(true)) => ui.info("… and more"),
        _ => {}
    }
    out.text(&text)
}

/// One notification as `watch` prints it.
pub fn notification_line(method: &str, params: Option<&Value>, at: std::time::Duration) -> String {
    let stamp = format!("{:>8.3}s", at.as_secs_f64());
    if NotificationKind::of(method) == NotificationKind::LogMessage
        && let Some(p) = params
        && let Ok(log) = serde_json::from_value::<LoggingMessageParams>(p.clone())
    {
        return format!("{stamp}  {}", render::log_line(&log));
    }
    match params {
        Some(p) => format!("{stamp}  {method} {p}"),
        None => format!("{stamp}  {method}"),
    }
}

/// Prints notifications until the connection ends (or Ctrl-C). With `subscribe`, first
/// subscribes to those resources (`resources/subscribe`, or the 2026 era's
/// `subscriptions/listen`); their updates are printed as they arrive, and ending the command
/// drops the subscription, which unsubscribes.
async fn watch(ui: &Ui, client: &Client, subscribe: &[String]) -> Result<Exit, CliError> {
    let mut notifications = client.notifications();
    let mut subscription = None;
    if !subscribe.is_empty() {
        let offered = client
            .capabilities()
            .resources
            .as_ref()
            .is_some_and(|r| r.subscribe == Some(true));
        if !offered {
            return Err(CliError::Unsupported(format!(
                "{} does not offer resource subscriptions (its resources capability has no \
                 `subscribe`), so --subscribe cannot work",
                client.server_info().name
            )));
        }
        let filter = ListenFilter {
            resource_subscriptions: Some(subscribe.to_vec()),
            ..ListenFilter::default()
        };
        subscription = Some(client.listen(filter).await.map_err(call_error)?);
    }
    // Log messages are notifications too: ask for all of them when the server logs.
    if client.capabilities().logging.is_some() {
        let _ = client
            .set_log_level(mcp_proto::types::LoggingLevel::Debug)
            .await;
    }
    let target = if subscribe.is_empty() {
        String::new()
    } else {
        format!(" and updates of {}", subscribe.join(", "))
    };
    ui.info(&format!(
        "watching {} for notifications{target} (Ctrl-C to stop)",
        client.server_info().name
    ));
    let start = Instant::now();
    let mut stdout = std::io::stdout();
    loop {
        // The subscription's own notifications come from it (in the 2026 era nowhere else);
        // in the initialize era the connection's stream has them too, so they are skipped
        // there and printed once.
        // A gap (an expired HTTP session re-initialized) or lag comes as `Err`: a warning.
        let item = match subscription.as_mut() {
            Some(sub) => tokio::select! {
                n = sub.recv() => n,
                n = notifications.recv() => match n {
                    Some(Ok(n)) if n.matches(sub.filter()) => continue,
                    Some(n) => Some(n.map_err(Missed::from)),
                    None => break,
                },
            },
            None => match notifications.recv().await {
                Some(n) => Some(n.map_err(Missed::from)),
                None => break,
            },
        };
        let Some(item) = item else {
            // Only the subscription ends this way; its close says why.
            let why = match subscription.take() {
                Some(sub) => sub.close().await.err(),
                None => None,
            };
            return Err(match why {
                Some(e) => CliError::Closed(format!("the subscription ended while watching: {e}")),
                None => CliError::closed("the server ended the subscription while watching"),
            });
        };
        let line = match item {
            Ok(n) => {
                let params: Option<Value> = n
                    .params
                    .as_ref()
                    .and_then(|p| serde_json::from_str(p.get()).ok());
                if ui.json {
                    json!({ "method": n.method, "params": params }).to_string()
                } else {
                    notification_line(&n.method, params.as_ref(), start.elapsed())
                }
            }
            Err(lag) => {
                ui.note(&format!("warning: {lag}"));
                continue;
            }
        };
        use std::io::Write as _;
        super::output::record_stdout(b"\n");
        if writeln!(stdout, "{line}")
            .and_then(|()| stdout.flush())
            .is_err()
        {
            break;
        }
    }
    Err(CliError::closed("while watching"))
}

/// After `watch --subscribe` ended (Ctrl-C drops it): the dropped subscription has queued its
/// `resources/unsubscribe`, and a request still queued when the connection closes is never
/// sent. A ping, answered in order after it, lets the unsubscribe reach the server first;
/// bounded, so a server that stopped answering does not hold up the exit. (In the 2026 era
/// the subscription ends with a notification, which closing flushes anyway.)
pub async fn after_watch(client: &Client) {
    let _ = tokio::time::timeout(std::time::Duration::from_secs(2), client.ping()).await;
}

/// Lints tools and prints the findings; exits 1 on errors.
pub fn lint_report(ui: &Ui, out: &Out, tools: &[Tool]) -> Result<Exit, CliError> {
    let findings = lint::lint_tools(tools);
    if ui.json {
        out.json(&lint::findings_json(&findings))?;
    } else {
        out.text(&lint::render_findings(&findings, ui.width))?;
    }
    let errors = findings
        .iter()
        .filter(|f| f.severity == lint::Severity::Error)
        .count();
    if errors > 0 {
        return Err(CliError::LintErrors(errors));
    }
    Ok(Exit::Ok)
}
