//! `mcp demo`: a guided tour against the built-in demo server, started from this binary.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use mcp_manager::config::{ServerConfig, StdioConfig, TimeoutConfig, TransportConfig};
use mcp_tokio::{CallOptions, Client};
use serde_json::{Map, Value, json};

use super::commands::{info_text, prompts_text, result_text, tools_text};
use super::connect::{call_error, connect_to};
use super::elicit::ElicitMode;
use super::output::Out;
use super::ui::Ui;
use crate::args::Cli;
use crate::exit::{CliError, Exit};
use crate::render;

/// The server config that runs this very binary as `mcp demo-server`.
pub fn demo_server_config() -> Result<ServerConfig, CliError> {
    let exe = std::env::current_exe().map_err(|e| CliError::Spawn {
        program: "mcp demo-server".into(),
        reason: format!("cannot find the running executable: {e}"),
        not_found: true,
    })?;
    Ok(ServerConfig {
        name: "demo".into(),
        transport: TransportConfig::Stdio(StdioConfig {
            args: vec!["demo-server".into()],
            ..StdioConfig::new(exe.to_string_lossy().into_owned())
        }),
        timeouts: TimeoutConfig::default(),
    })
}

/// Connects to the demo server.
pub async fn connect(cli: &Cli, ui: &Ui) -> Result<Client, CliError> {
    let mode = ElicitMode::for_terminal(ui, ElicitMode::Auto);
    connect_to(cli, ui, demo_server_config()?, mode).await
}

fn args(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

fn step(out: &Out, n: u32, title: &str, command: &str) -> Result<(), CliError> {
    out.text(&format!("\n── {n}. {title}\n"))?;
    command_line(out, command)
}

/// The command a step (or a second part of one) shows, before what it prints.
fn command_line(out: &Out, command: &str) -> Result<(), CliError> {
    out.text(&format!("   $ {command}\n\n")).map(drop)
}

/// A paragraph of the tour's own prose, wrapped at word boundaries to the output's width.
fn paragraph(out: &Out, text: &str, width: usize) -> Result<(), CliError> {
    let mut wrapped = render::wrap(text, width).join("\n");
    wrapped.push('\n');
    out.text(&wrapped).map(drop)
}

/// The tour, on a connected client.
pub async fn tour(ui: &Ui, out: &Out, client: &Client) -> Result<Exit, CliError> {
    let width = ui.width;
    let srv = "-- mcp demo-server";
    paragraph(
        out,
        "This is a tour of what `mcp` does, against the demo server built into it \
         (`mcp demo-server`, started over stdio). Every step shows the command that does \
         the same on its own.",
        width,
    )?;

    step(
        out,
        1,
        "What the server says about itself",
        &format!("mcp info {srv}"),
    )?;
    out.text(&info_text(client, width))?;

    step(
        out,
        2,
        "Its tools and their input schemas",
        &format!("mcp tools {srv}"),
    )?;
    let tools = client.list_tools().await.map_err(call_error)?;
    out.text(&tools_text(&tools, width))?;

    step(
        out,
        3,
        "Calling a tool",
        &format!("mcp call add a=2 b=3 {srv}"),
    )?;
    let result = client
        .call_tool("add", json!({ "a": 2, "b": 3 }))
        .await
        .map_err(call_error)?;
    out.text(&result_text(&result, width))?;

    step(
        out,
        4,
        "A slow tool, with a progress bar (Ctrl-C would cancel it at the server)",
        &format!("mcp call slow steps=10 delay_ms=150 {srv}"),
    )?;
    let updates = Arc::new(AtomicUsize::new(0));
    let (progress_ui, counter) = (ui.clone(), updates.clone());
    let options = CallOptions::new().on_progress(move |p| {
        counter.fetch_add(1, Ordering::Relaxed);
        progress_ui.progress(p.progress, p.total, p.message.as_deref());
    });
    let result = client
        .call_tool_with("slow", json!({ "steps": 10, "delay_ms": 150 }), options)
        .await;
    ui.clear_progress();
    let result = result.map_err(call_error)?;
    out.text(&result_text(&result, width))?;
    out.text(&format!(
        "({} progress notifications received{})\n",
        updates.load(Ordering::Relaxed),
        if ui.stderr_tty {
            ""
        } else {
            "; the bar is drawn when stderr is a terminal, or as lines with -v"
        }
    ))?;

    step(
        out,
        5,
        "A tool that asks you a question (elicitation)",
        &format!("mcp call ask question=\"What is your name?\" {srv}"),
    )?;
    if !ui.stdin_tty {
        out.text("(no terminal attached: the question is answered automatically)\n")?;
    }
    let result = client
        .call_tool("ask", args(json!({ "question": "What is your name?" })))
        .await
        .map_err(call_error)?;
    out.text(&result_text(&result, width))?;

    step(
        out,
        6,
        "Resources and prompts",
        &format!("mcp read demo://readme {srv}"),
    )?;
    let readme = client
        .read_resource("demo://readme")
        .await
        .map_err(call_error)?;
    out.text(&render::resource_contents(&readme.contents, ui.width))?;
    out.text("\n")?;
    command_line(out, &format!("mcp prompts {srv}"))?;
    let prompts = client.list_prompts().await.map_err(call_error)?;
    out.text(&prompts_text(&prompts, width))?;

    step(
        out,
        7,
        "A tool that fails (`mcp call` exits with status 1)",
        &format!("mcp call fail message=oops {srv}"),
    )?;
    let result = client
        .call_tool("fail", json!({ "message": "oops" }))
        .await
        .map_err(call_error)?;
    out.text(&format!(
        "isError: {}\n{}",
        result.is_error == Some(true),
        result_text(&result, width)
    ))?;

    out.text("\n")?;
    paragraph(
        out,
        "That's the tour. Point `mcp` at any server: `mcp tools -- npx -y \
         @modelcontextprotocol/server-everything`, `mcp --url http://127.0.0.1:3000/mcp info`, \
         or `mcp --config .mcp.json --server NAME tools`. `mcp --help` lists everything.",
        width,
    )?;
    Ok(Exit::Ok)
}
