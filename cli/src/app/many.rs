//! Every server of a `--config` file at once, through the driver's [`Manager`]: `tools --all`
//! and `call server__tool`.
//!
//! The manager starts the servers in parallel and [`run`] waits until each is ready or
//! failed, or until the start-up deadline (`--connect-timeout`, else
//! [`DEFAULT_STARTUP_DEADLINE`]); a server still coming up by then is listed from its tool
//! cache when it has a fresh entry (`$XDG_CACHE_HOME/mcp-rs`, else `~/.cache/mcp-rs`).
//! Tool names are the manager's namespaced `server__tool` names, which `call` accepts;
//! `call` starts only the server its name begins with (the others are not started, so a slow
//! one does not hold it up), and that server's failure is the call's error (exit 3).
//!
//! Each server gets one attempt: one that exits while starting is `failed` with its exit
//! status, one that has not answered by the deadline (and has no cached tools) is `timed
//! out`; neither holds up the others. An entry of the file that cannot be used (an undefined `${VAR}`, a missing field)
//! is `failed` with the field and the problem and is not started; the other entries are.
//! A file with one server needs no `--server` (see [`uses_manager`]).
//!
//! When the command is done, every server is shut down at once, with short graces
//! ([`STDIN_GRACE`], [`TERM_GRACE`]: a server that has not exited by then has its process
//! group killed) and within [`SHUTDOWN_BOUND`] in all, so the command ends soon after
//! `--connect-timeout` even when a server never answered (and ignores SIGTERM).
//!
//! Exit status of `tools --all` (see [`crate::exit`]): 0 when at least one server is ready
//! or served from the cache, a failing server being reported in the status lines (and in
//! `servers` of `--json`); 3 when no server came up at all.

use std::path::PathBuf;
use std::time::Duration;

use mcp_manager::config::{ConfigError, EntryStatus, ServerConfig, TransportConfig};
use mcp_manager::naming::sanitize;
use mcp_manager::reconnect::{ExitCause, ReconnectConfig, ServerStatus};
use mcp_proto::types::Implementation;
use mcp_tokio::mcp_driver::manager::StartupSummary;
use mcp_tokio::mcp_driver::{Manager, ManagerError, NamespacedTool};
use mcp_tokio::{ClientBuilder, TokioRuntime};
use serde_json::{Value, json};

use super::connect::{config_entries, era_policy, with_handlers};
use super::elicit::ElicitMode;
use super::output::Out;
use super::ui::Ui;
use crate::args::{Cli, Command};
use crate::exit::{CliError, Exit, Missing};
use crate::render::{Column, Table};
use crate::suggest::did_you_mean;

/// How long `tools --all` waits for slow servers without `--connect-timeout`.
pub const DEFAULT_STARTUP_DEADLINE: Duration = Duration::from_secs(10);

/// How long a stdio server gets to exit once its input is closed, before SIGTERM: a server
/// exits on the end of its input at once, and one that never answered has nothing to finish.
/// (A long-running host such as `mcp bridge` keeps the driver's longer default graces.)
pub const STDIN_GRACE: Duration = Duration::from_millis(300);

/// How long a stdio server gets to exit after SIGTERM before its process group is killed.
pub const TERM_GRACE: Duration = Duration::from_millis(200);

/// The most that shutting every server down may take (an HTTP server whose `DELETE` hangs):
/// past it the command ends anyway, and its end kills what is left of the servers' process
/// groups (the driver's drop of each child, the group watchdog).
pub const SHUTDOWN_BOUND: Duration = Duration::from_millis(1500);

/// Where the manager keeps its tool cache: `$XDG_CACHE_HOME/mcp-rs`, else
/// `$HOME/.cache/mcp-rs`; `None` (no cache) when neither is set to an absolute path.
pub fn cache_dir() -> Option<PathBuf> {
    let absolute = |v: Option<std::ffi::OsString>| v.map(PathBuf::from).filter(|p| p.is_absolute());
    absolute(std::env::var_os("XDG_CACHE_HOME"))
        .or_else(|| absolute(std::env::var_os("HOME")).map(|h| h.join(".cache")))
        .map(|d| d.join("mcp-rs"))
}

/// The servers of the `--config` file: the usable ones (with `--env` added to stdio servers
/// and `--header` to HTTP servers) and, in the file's order, every entry's name with the
/// problem that keeps it from starting (a broken entry, say an undefined `${VAR}`, or a
/// disabled one).
#[derive(Debug)]
pub struct ConfigServers {
    /// The servers to start.
    pub servers: Vec<ServerConfig>,
    /// Every entry's name in the file's order, with `Some((state, reason))` when it is not
    /// started: `("failed", why)` for a broken entry, `("disabled", "")` for a disabled one.
    pub entries: Vec<(String, Option<(&'static str, String)>)>,
}

/// Reads the `--config` file for `--all` mode; see [`ConfigServers`].
pub fn server_configs(cli: &Cli) -> Result<ConfigServers, CliError> {
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
    // Never empty: a file without servers is an error of its own.
    let entries = config_entries(file)?;
    let mut out = ConfigServers {
        servers: Vec::new(),
        entries: Vec::new(),
    };
    for entry in entries {
        let problem = match entry.status {
            EntryStatus::Enabled(mut server) => {
                match &mut server.transport {
                    TransportConfig::Stdio(s) => s.env.extend(c.env.iter().cloned()),
                    TransportConfig::Http(h) => h.headers.extend(c.headers.iter().cloned()),
                    _ => {}
                }
                out.servers.push(server);
                None
            }
            EntryStatus::Disabled => Some(("disabled", String::new())),
            EntryStatus::Broken(e) => Some(("failed", entry_problem(&e))),
            _ => Some(("failed", "this entry cannot be used".to_owned())),
        };
        out.entries.push((entry.name, problem));
    }
    Ok(out)
}

/// A broken entry's problem without the file and server (the status line names the server):
/// `configuration error: field "env.TOKEN": undefined variable GH_TOKEN`.
fn entry_problem(e: &ConfigError) -> String {
    match &e.field {
        Some(field) => format!("configuration error: field {field:?}: {}", e.kind),
        None => format!("configuration error: {}", e.kind),
    }
}

/// Whether the command runs through the manager: [`Command::uses_manager`], except `call`
/// with a config file of exactly one server, which is that server (by its own tool names;
/// a namespaced `server__tool` name, as `tools --all` shows it, still goes to the manager).
pub fn uses_manager(cli: &Cli) -> bool {
    if !cli.command.uses_manager(&cli.connection) {
        return false;
    }
    let Command::Call { tool, .. } = &cli.command else {
        return true;
    };
    let entries = cli
        .connection
        .config
        .as_deref()
        .and_then(|file| config_entries(file).ok());
    match entries.as_deref() {
        Some([only]) => tool.starts_with(&format!("{}__", sanitize(&only.name))),
        _ => true,
    }
}

/// Starts every server of `--config`, runs `tools --all` or `call`, and shuts them down.
pub async fn run(cli: &Cli, ui: &Ui, out: &Out) -> Result<Exit, CliError> {
    let ConfigServers {
        mut servers,
        entries,
    } = server_configs(cli)?;
    // `call server__tool` needs only its server: the others are neither started nor waited for.
    let targets = match &cli.command {
        Command::Call { tool, .. } => {
            unusable_target(tool, &entries)?;
            call_targets(tool, &servers)
        }
        _ => Vec::new(),
    };
    if !targets.is_empty() {
        servers.retain(|s| targets.contains(&s.name));
    }
    let c = cli.connection.clone();
    let deadline = c.connect_timeout.unwrap_or(DEFAULT_STARTUP_DEADLINE);
    // Every HTTP server uses its stored OAuth token (one file for all; keyed by URL).
    let token_store = super::auth::token_store_path(cli);
    // Checked once, before any server starts: a bad --root is a usage error.
    let roots = super::connect::roots(cli)?;
    let handlers_ui = ui.clone();
    let mut builder = Manager::builder(TokioRuntime::current())
        .startup_deadline(deadline)
        // One command, one attempt: a server that crashes while starting is reported with
        // its reason at once instead of being retried until the deadline.
        .reconnect(ReconnectConfig {
            max_attempts: Some(0),
            ..ReconnectConfig::default()
        })
        .client_builder(move |config| {
            let mut b = ClientBuilder::new()
                .client_info(Implementation::new("mcp-term", env!("CARGO_PKG_VERSION")))
                .era_policy(era_policy(
                    c.era,
                    matches!(config.transport, TransportConfig::Stdio(_)),
                    c.connect_timeout,
                ));
            b = with_handlers(
                b,
                &handlers_ui,
                ElicitMode::for_terminal(&handlers_ui, ElicitMode::Decline),
                roots.as_ref(),
            );
            if handlers_ui.verbose > 0 {
                // Each server's messages, marked with its name: the same trace as with one.
                let ui = handlers_ui.with_prefix(&config.name);
                b = match &config.transport {
                    TransportConfig::Http(_) => b.on_http_trace(super::trace::http(&ui)),
                    _ => b.on_wire(super::trace::tap(&ui)),
                };
            }
            if let Some(t) = c.timeout {
                b = b.request_timeout(Some(t));
            }
            if let Some(t) = c.connect_timeout {
                b = b.handshake_timeout(Some(t));
            }
            // One command: its end follows the deadline, not the servers' leisure to exit.
            #[cfg(unix)]
            {
                b = b.shutdown_graces(STDIN_GRACE, TERM_GRACE);
            }
            if let TransportConfig::Http(h) = &config.transport
                && let Some(auth) = super::auth::stored_provider_at(token_store.clone(), &h.headers)
            {
                b = b.auth(auth);
            }
            b
        })
        .add_all(servers.clone());
    if let Some(dir) = cache_dir() {
        builder = builder.cache_dir(dir);
    }
    let manager = builder.build();
    let summary = manager.start().await;
    let result = match &cli.command {
        Command::Call {
            tool,
            args,
            no_output_check,
            ..
        } => match manager.resolve(tool) {
            // The server's own client, as if it were the only one: arguments typed and
            // checked against its schema, did-you-mean, progress, tasks.
            Some((server, name)) => match manager.client(&server) {
                Some(client) => {
                    let listed = super::tool_cache::ToolCache::default()
                        .tools_naming(&client, &name)
                        .await;
                    let request = super::commands::CallRequest {
                        tool: &name,
                        args,
                        check_output: !*no_output_check,
                    };
                    super::commands::call(
                        ui,
                        out,
                        &cli.connection,
                        &client,
                        request,
                        listed.as_deref(),
                    )
                    .await
                }
                None => Err(
                    target_failure(&targets, &manager.status(), &servers).unwrap_or_else(|| {
                        CliError::Handshake(format!("server {server:?} is not ready"))
                    }),
                ),
            },
            None => Err(target_failure(&targets, &manager.status(), &servers)
                .unwrap_or_else(|| unknown_tool(tool, &manager, cli.connection.config.as_deref()))),
        },
        _ => list(ui, out, &manager, &summary, &entries, &servers, deadline),
    };
    if tokio::time::timeout(SHUTDOWN_BOUND, manager.shutdown())
        .await
        .is_err()
    {
        tracing::debug!("the servers did not all stop in time; ending anyway");
    }
    result
}

/// The servers a namespaced tool name can belong to: those whose sanitized name followed by
/// `__` starts it (usually one; more only when one server's name extends another's, `a` and
/// `a__b`). Empty when none matches (a hashed name of an unusual pair, a typo): then every
/// server starts and the manager's own lookup decides.
fn call_targets(tool: &str, servers: &[ServerConfig]) -> Vec<String> {
    servers
        .iter()
        .filter(|s| tool.starts_with(&format!("{}__", sanitize(&s.name))))
        .map(|s| s.name.clone())
        .collect()
}

/// `call server__tool` for an entry of the file that is not started (broken, say an undefined
/// `${VAR}`, or disabled): a usage error naming the entry's problem.
fn unusable_target(
    tool: &str,
    entries: &[(String, Option<(&'static str, String)>)],
) -> Result<(), CliError> {
    for (name, problem) in entries {
        let Some((state, why)) = problem else {
            continue;
        };
        if !tool.starts_with(&format!("{}__", sanitize(name))) {
            continue;
        }
        return Err(CliError::Usage(if why.is_empty() {
            format!("server {name:?} is {state} in the config file")
        } else {
            format!("server {name:?} of the config file cannot start: {why}")
        }));
    }
    Ok(())
}

/// A server's failure `reason` (as the manager reports it) that is a network failure below
/// HTTP (refused, reset, DNS, TLS, timeout): the same error as with `--url`.
fn network_error(name: &str, url: Option<&str>, reason: &str) -> Option<CliError> {
    let (_, detail) = reason.split_once("transport closed: ")?;
    let kind = super::connect::network_failure(detail)?;
    Some(CliError::Network {
        url: url.map_or_else(|| format!("server {name:?}"), str::to_owned),
        what: String::new(),
        kind,
        detail: super::connect::client_words(detail).to_owned(),
    })
}

/// How a server's failure `reason` (as the manager reports it) reads for a person: a network
/// failure below HTTP as with `--url` (`could not connect to URL: connection refused`),
/// anything else masked like every error.
pub fn failure_words(servers: &[ServerConfig], name: &str, reason: &str) -> String {
    match network_error(name, http_url(servers, name).as_deref(), reason) {
        Some(e) => e.to_string(),
        None => crate::redact::text(reason).into_owned(),
    }
}

/// The URL of the HTTP server `name` of the file, if it is one.
fn http_url(servers: &[ServerConfig], name: &str) -> Option<String> {
    servers
        .iter()
        .find(|s| s.name == name)
        .and_then(|s| match &s.transport {
            TransportConfig::Http(h) => Some(h.url.clone()),
            _ => None,
        })
}

/// A call whose server did not come up fails with that server's reason (exit 3), not as an
/// unknown tool; `None` when every target is ready.
fn target_failure(
    targets: &[String],
    status: &[(String, ServerStatus)],
    servers: &[ServerConfig],
) -> Option<CliError> {
    let url = |name: &str| http_url(servers, name);
    if let Some(network) = status.iter().find_map(|(name, status)| match status {
        ServerStatus::Failed { reason, .. } if targets.contains(name) => {
            network_error(name, url(name).as_deref(), reason)
        }
        _ => None,
    }) {
        return Some(network);
    }
    status.iter().find_map(|(name, status)| {
        if !targets.contains(name) {
            return None;
        }
        match status {
            ServerStatus::Ready => None,
            ServerStatus::Failed { reason, .. } => Some(format!(
                "server {name:?} failed: {}",
                crate::redact::text(reason)
            )),
            ServerStatus::Connecting => Some(format!(
                "server {name:?} did not come up within the start-up deadline (--connect-timeout)"
            )),
            other => Some(
                ManagerError::NotReady {
                    server: name.clone(),
                    status: other.clone(),
                }
                .to_string(),
            ),
        }
    })
    .map(CliError::Handshake)
}

/// A server's state as `tools --all` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerLine {
    /// The configured name.
    pub name: String,
    /// `ready`, `from cache`, `failed`, `timed out` or `disabled`.
    pub state: &'static str,
    /// Why it failed, for `failed` and `timed out`.
    pub reason: Option<String>,
    /// How many of its tools are listed.
    pub tools: usize,
}

/// One line per server, in the manager's order (the parsed config's).
///
/// `entries` is every entry of the file in its order, with the problem of those not started
/// ([`ConfigServers::entries`]); a started server still coming up after the start-up
/// `deadline` (and not served from the cache) is `timed out`.
pub fn server_lines(
    entries: &[(String, Option<(&'static str, String)>)],
    status: &[(String, ServerStatus)],
    summary: &StartupSummary,
    tools: &[NamespacedTool],
    deadline: Duration,
) -> Vec<ServerLine> {
    entries
        .iter()
        .map(|(name, problem)| {
            if let Some((state, reason)) = problem {
                return ServerLine {
                    name: name.clone(),
                    state,
                    reason: (!reason.is_empty()).then(|| reason.clone()),
                    tools: 0,
                };
            }
            let count = tools.iter().filter(|t| &t.server == name).count();
            let cached = tools.iter().any(|t| &t.server == name && t.from_cache)
                || summary.from_cache.contains(name);
            let status = status.iter().find(|(n, _)| n == name).map(|(_, s)| s);
            let timed_out = || {
                Some(format!(
                    "no answer within {} (--connect-timeout)",
                    short_duration(deadline)
                ))
            };
            // The handshake timeout and the start-up deadline may end together: either way
            // the server did not answer in time.
            let handshake_timeout = ExitCause::StartupTimeout.describe();
            let (state, reason) = match status {
                Some(ServerStatus::Ready) => ("ready", None),
                Some(ServerStatus::Failed { reason, .. }) if *reason == handshake_timeout => {
                    ("timed out", timed_out())
                }
                // The reason is the CLI's own report (it may quote a URL): masked like
                // every error, on stdout too.
                Some(ServerStatus::Failed { reason, .. }) => {
                    ("failed", Some(crate::redact::text(reason).into_owned()))
                }
                Some(ServerStatus::Disabled) | None => ("disabled", None),
                _ if cached => ("from cache", None),
                _ => ("timed out", timed_out()),
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

/// `10s`, `1.5s`, `500ms`: a duration as a person would write it.
fn short_duration(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{}s", d.as_secs())
    } else if d < Duration::from_secs(1) {
        format!("{}ms", d.as_millis())
    } else {
        format!("{}s", d.as_secs_f64())
    }
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
                let plural = if s.tools == 1 { "" } else { "s" };
                format!("  {}: {} ({} tool{plural})\n", s.name, s.state, s.tools)
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
    entries: &[(String, Option<(&'static str, String)>)],
    configs: &[ServerConfig],
    deadline: Duration,
) -> Result<Exit, CliError> {
    let tools = manager.tools();
    let mut servers = server_lines(entries, &manager.status(), summary, &tools, deadline);
    // A network failure below HTTP reads as it does with --url, not as the client's chain.
    for line in servers.iter_mut().filter(|l| l.state == "failed") {
        let url = http_url(configs, &line.name);
        if let Some(e) = line
            .reason
            .as_deref()
            .and_then(|r| network_error(&line.name, url.as_deref(), r))
        {
            line.reason = Some(e.to_string());
        } else if let Some(url) = url.as_deref()
            && line
                .reason
                .as_deref()
                .is_some_and(|r| r.contains("HTTP status 401"))
        {
            // What the single-server path says (`CliError::LoginRequired`'s hint).
            line.reason = Some(format!(
                "needs authorization (HTTP status 401): run: mcp login --url {}",
                crate::redact::url(url)
            ));
        }
    }
    if ui.json {
        out.json(&list_json(&tools, &servers))?;
    } else {
        out.text(&list_text(&tools, &servers, ui.width))?;
    }
    for s in servers
        .iter()
        .filter(|s| matches!(s.state, "failed" | "timed out"))
    {
        ui.info(&format!(
            "warning: server {:?} {}: {}",
            s.name,
            s.state,
            s.reason.as_deref().unwrap_or("unknown reason")
        ));
    }
    let up = servers
        .iter()
        .any(|s| matches!(s.state, "ready" | "from cache"));
    if up {
        Ok(Exit::Ok)
    } else {
        // Each server that should have come up, with its reason (as in the lines above).
        let failures = servers
            .iter()
            .filter(|s| matches!(s.state, "failed" | "timed out"))
            .map(|s| {
                let why = s.reason.as_deref().unwrap_or("unknown reason");
                (s.name.clone(), format!("{}: {why}", s.state))
            })
            .collect();
        Err(CliError::NoServerUp(failures))
    }
}

/// A name no started server hands out: `tool_not_found` (exit 4), with the closest of every
/// server's namespaced names.
fn unknown_tool(
    name: &str,
    manager: &Manager<TokioRuntime>,
    config: Option<&std::path::Path>,
) -> CliError {
    let names: Vec<String> = manager.tools().into_iter().map(|t| t.name).collect();
    let file = config.map_or_else(|| "FILE".to_owned(), |p| p.display().to_string());
    CliError::NotFound {
        kind: Missing::Tool,
        name: name.to_owned(),
        // The hint reads the file from here: `mcp --config FILE tools --all` lists the tools.
        server: format!("{}{file}", crate::exit::ANY_SERVER_OF),
        said: None,
        suggestions: did_you_mean(name, names.iter().map(String::as_str)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_entry_gets_one_status_line_in_file_order() {
        let failed = |reason: &str| ServerStatus::Failed {
            reason: reason.into(),
            permanent: false,
        };
        let entries = vec![
            ("up".to_owned(), None),
            (
                "bad".to_owned(),
                Some(("failed", "configuration error: x".to_owned())),
            ),
            ("off".to_owned(), Some(("disabled", String::new()))),
            ("crash".to_owned(), None),
            ("slow".to_owned(), None),
            ("silent".to_owned(), None),
            ("cached".to_owned(), None),
        ];
        let status = vec![
            ("cached".to_owned(), ServerStatus::Connecting),
            ("up".to_owned(), ServerStatus::Ready),
            ("crash".to_owned(), failed("exited with code 3: boom")),
            (
                "slow".to_owned(),
                failed(&ExitCause::StartupTimeout.describe()),
            ),
            ("silent".to_owned(), ServerStatus::Connecting),
        ];
        let summary = StartupSummary {
            from_cache: vec!["cached".into()],
            ..StartupSummary::default()
        };
        let lines = server_lines(&entries, &status, &summary, &[], Duration::from_secs(3));
        let shown: Vec<(&str, &str, Option<&str>)> = lines
            .iter()
            .map(|l| (l.name.as_str(), l.state, l.reason.as_deref()))
            .collect();
        let late = Some("no answer within 3s (--connect-timeout)");
        assert_eq!(
            shown,
            [
                ("up", "ready", None),
                ("bad", "failed", Some("configuration error: x")),
                ("off", "disabled", None),
                ("crash", "failed", Some("exited with code 3: boom")),
                ("slow", "timed out", late),
                ("silent", "timed out", late),
                ("cached", "from cache", None),
            ]
        );
    }

    #[test]
    fn durations_read_as_typed() {
        assert_eq!(short_duration(Duration::from_secs(10)), "10s");
        assert_eq!(short_duration(Duration::from_millis(1500)), "1.5s");
        assert_eq!(short_duration(Duration::from_millis(500)), "500ms");
    }
}
