//! Every server of a `--config` file at once, through the driver's [`Manager`]: `tools --all`
//! and `call server__tool`.
//!
//! The manager starts the servers in parallel and [`run`] waits until each is ready or
//! failed, or until the start-up deadline (`--connect-timeout`, else
//! [`DEFAULT_STARTUP_DEADLINE`]); a server still coming up by then is listed from its tool
//! cache when it has a fresh entry (`$XDG_CACHE_HOME/mcp-rs`, else `~/.cache/mcp-rs`).
//! Tool names are the manager's namespaced `server__tool` names, which `call` accepts.
//!
//! Exit status of `tools --all` (see [`crate::exit`]): 0 when at least one server is ready
//! or served from the cache, a failing server being reported in the status lines (and in
//! `servers` of `--json`); 3 when no server came up at all.

use std::path::PathBuf;
use std::time::Duration;

use mcp_proto::manager::config::{ServerConfig, TransportConfig, parse_config_file};
use mcp_proto::manager::reconnect::ServerStatus;
use mcp_proto::types::Implementation;
use mcp_tokio::mcp_driver::manager::StartupSummary;
use mcp_tokio::mcp_driver::{Manager, ManagerError, NamespacedTool};
use mcp_tokio::{ClientBuilder, TokioRuntime};
use serde_json::{Map, Value, json};

use super::commands::{call_result, error_text};
use super::connect::{call_error, era_policy};
use super::output::Out;
use super::ui::Ui;
use crate::args::{Cli, Command};
use crate::exit::{CliError, Exit};
use crate::render::{Column, Table};

/// How long `tools --all` waits for slow servers without `--connect-timeout`.
pub const DEFAULT_STARTUP_DEADLINE: Duration = Duration::from_secs(10);

/// Where the manager keeps its tool cache: `$XDG_CACHE_HOME/mcp-rs`, else
/// `$HOME/.cache/mcp-rs`; `None` (no cache) when neither is set to an absolute path.
pub fn cache_dir() -> Option<PathBuf> {
    let absolute = |v: Option<std::ffi::OsString>| v.map(PathBuf::from).filter(|p| p.is_absolute());
    absolute(std::env::var_os("XDG_CACHE_HOME"))
        .or_else(|| absolute(std::env::var_os("HOME")).map(|h| h.join(".cache")))
        .map(|d| d.join("mcp-rs"))
}

/// Every server of the `--config` file, with `--env` added to stdio servers and `--header`
/// to HTTP servers.
pub fn server_configs(cli: &Cli) -> Result<Vec<ServerConfig>, CliError> {
    let c = &cli.connection;
    let Some(file) = &c.config else {
        return Err(CliError::Usage(
            "--all lists every server of a config file: add --config <file>".into(),
        ));
    };
    if c.server.is_some()
        || c.url.is_some()
        || cli
            .command
            .server_command()
            .is_some_and(|s| !s.argv.is_empty())
    {
        return Err(CliError::Usage(
            "--all starts every server of --config: drop --server, --url and `-- <command>`".into(),
        ));
    }
    let text = std::fs::read_to_string(file).map_err(|e| CliError::File {
        path: file.clone(),
        reason: e.to_string(),
    })?;
    let vars = crate::redact::registering_lookup(|name| std::env::var(name).ok());
    let mut servers = parse_config_file(&file.display().to_string(), &text, &vars)
        .map_err(|e| CliError::Usage(format!("bad config file: {e}")))?;
    if servers.is_empty() {
        return Err(CliError::Usage(format!(
            "{} has no servers",
            file.display()
        )));
    }
    for server in &mut servers {
        match &mut server.transport {
            TransportConfig::Stdio(s) => s.env.extend(c.env.iter().cloned()),
            TransportConfig::Http(h) => h.headers.extend(c.headers.iter().cloned()),
            _ => {}
        }
    }
    Ok(servers)
}

/// Starts every server of `--config`, runs `tools --all` or `call`, and shuts them down.
pub async fn run(cli: &Cli, ui: &Ui, out: &Out) -> Result<Exit, CliError> {
    let servers = server_configs(cli)?;
    let c = cli.connection.clone();
    // Every HTTP server uses its stored OAuth token (one file for all; keyed by URL).
    let token_store = super::auth::token_store_path(cli);
    let mut builder = Manager::builder(TokioRuntime::current())
        .startup_deadline(c.connect_timeout.unwrap_or(DEFAULT_STARTUP_DEADLINE))
        .client_builder(move |config| {
            let mut b = ClientBuilder::new()
                .client_info(Implementation::new("mcp-cli", env!("CARGO_PKG_VERSION")))
                .era_policy(era_policy(
                    c.era,
                    matches!(config.transport, TransportConfig::Stdio(_)),
                    c.connect_timeout,
                ));
            if let Some(t) = c.timeout {
                b = b.request_timeout(Some(t));
            }
            if let Some(t) = c.connect_timeout {
                b = b.handshake_timeout(Some(t));
            }
            if let TransportConfig::Http(h) = &config.transport
                && let Some(auth) = super::auth::stored_provider_at(token_store.clone(), &h.headers)
            {
                b = b.auth(auth);
            }
            b
        })
        .add_all(servers);
    if let Some(dir) = cache_dir() {
        builder = builder.cache_dir(dir);
    }
    let manager = builder.build();
    let summary = manager.start().await;
    let result = match &cli.command {
        Command::Call { tool, args, .. } => {
            let arguments = args.to_map().map_err(|e| CliError::Usage(e.0))?;
            call(ui, out, &manager, tool, arguments).await
        }
        _ => list(ui, out, &manager, &summary),
    };
    manager.shutdown().await;
    result
}

/// A server's state as `tools --all` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerLine {
    /// The configured name.
    pub name: String,
    /// `ready`, `from cache`, `connecting`, `failed`, `reconnecting` or `disabled`.
    pub state: &'static str,
    /// Why it failed, for `failed`.
    pub reason: Option<String>,
    /// How many of its tools are listed.
    pub tools: usize,
}

/// One line per server, in the manager's order (the parsed config's).
pub fn server_lines(
    status: &[(String, ServerStatus)],
    summary: &StartupSummary,
    tools: &[NamespacedTool],
) -> Vec<ServerLine> {
    status
        .iter()
        .map(|(name, status)| {
            let count = tools.iter().filter(|t| &t.server == name).count();
            let cached = tools.iter().any(|t| &t.server == name && t.from_cache)
                || summary.from_cache.contains(name);
            let (state, reason) = match status {
                ServerStatus::Ready => ("ready", None),
                // The reason is the CLI's own report (it may quote a URL): masked like
                // every error, on stdout too.
                ServerStatus::Failed { reason, .. } => {
                    ("failed", Some(crate::redact::text(reason).into_owned()))
                }
                ServerStatus::Disabled => ("disabled", None),
                _ if cached => ("from cache", None),
                ServerStatus::Reconnecting { .. } => ("reconnecting", None),
                _ => ("connecting", None),
            };
            ServerLine {
                name: name.clone(),
                state,
                reason,
                tools: count,
            }
        })
        .collect()
}

/// The human `tools --all` text: one table of every tool, then a status line per server.
pub fn list_text(tools: &[NamespacedTool], servers: &[ServerLine], width: usize) -> String {
    let mut text = if tools.is_empty() {
        "no server listed any tools\n".to_owned()
    } else {
        let mut table = Table::new(vec![
            Column::new("NAME"),
            Column::new("SERVER"),
            Column::wrapping("DESCRIPTION"),
        ]);
        for t in tools {
            let mut description = t.tool.description.clone().unwrap_or_default();
            if t.from_cache {
                description.insert_str(0, "(cached) ");
            }
            table.row([t.name.clone(), t.server.clone(), description]);
        }
        table.render(width)
    };
    text.push_str("\nservers:\n");
    for s in servers {
        let line = match (&s.reason, s.state) {
            (Some(reason), state) => format!("  {}: {state}: {reason}\n", s.name),
            (None, "ready" | "from cache") => {
                format!("  {}: {} ({} tools)\n", s.name, s.state, s.tools)
            }
            (None, state) => format!("  {}: {state}\n", s.name),
        };
        text.push_str(&line);
    }
    text
}

/// The `--json` form of `tools --all`.
pub fn list_json(tools: &[NamespacedTool], servers: &[ServerLine]) -> Value {
    let tools: Vec<Value> = tools
        .iter()
        .map(|t| {
            let mut tool = super::output::to_json(&t.tool);
            if let Value::Object(map) = &mut tool {
                map.insert("name".into(), Value::String(t.name.clone()));
                map.insert("serverToolName".into(), Value::String(t.tool.name.clone()));
                map.insert("server".into(), Value::String(t.server.clone()));
                map.insert("fromCache".into(), Value::Bool(t.from_cache));
            }
            tool
        })
        .collect();
    let servers: Vec<Value> = servers
        .iter()
        .map(|s| {
            let mut v = json!({ "name": s.name, "status": s.state, "tools": s.tools });
            if let Some(reason) = &s.reason {
                v["reason"] = Value::String(reason.clone());
            }
            v
        })
        .collect();
    json!({ "tools": tools, "servers": servers })
}

fn list(
    ui: &Ui,
    out: &Out,
    manager: &Manager<TokioRuntime>,
    summary: &StartupSummary,
) -> Result<Exit, CliError> {
    let tools = manager.tools();
    let servers = server_lines(&manager.status(), summary, &tools);
    if ui.json {
        out.json(&list_json(&tools, &servers))?;
    } else {
        out.text(&list_text(&tools, &servers, ui.width))?;
    }
    for s in servers.iter().filter(|s| s.state == "failed") {
        ui.info(&format!(
            "warning: server {:?} failed: {}",
            s.name,
            s.reason.as_deref().unwrap_or("unknown reason")
        ));
    }
    let up = servers
        .iter()
        .any(|s| matches!(s.state, "ready" | "from cache"));
    if up {
        Ok(Exit::Ok)
    } else {
        Err(CliError::Handshake(
            "no server of the config file came up".into(),
        ))
    }
}

async fn call(
    ui: &Ui,
    out: &Out,
    manager: &Manager<TokioRuntime>,
    tool: &str,
    arguments: Map<String, Value>,
) -> Result<Exit, CliError> {
    let result = manager
        .call_tool(tool, Value::Object(arguments))
        .await
        .map_err(|e| manager_error(e, manager))?;
    call_result(ui, out, &result)?;
    if result.is_error == Some(true) {
        return Err(CliError::ToolFailed(error_text(&result)));
    }
    Ok(Exit::Ok)
}

fn manager_error(e: ManagerError, manager: &Manager<TokioRuntime>) -> CliError {
    match e {
        ManagerError::UnknownTool(name) => {
            let names: Vec<String> = manager.tools().into_iter().map(|t| t.name).collect();
            CliError::Usage(format!(
                "no tool {name:?} on any server of the config file; the tools are: {}",
                if names.is_empty() {
                    "none".to_owned()
                } else {
                    names.join(", ")
                }
            ))
        }
        ManagerError::NotReady { .. } => CliError::Handshake(e.to_string()),
        ManagerError::Call(e) => call_error(e),
        other => CliError::Closed(other.to_string()),
    }
}
