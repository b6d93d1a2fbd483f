//! Turning the connection options into a connected [`Client`], and the client's errors into
//! [`CliError`]s with their exit codes.

use std::time::Duration;

use mcp_proto::jsonrpc::ErrorObject;
use mcp_proto::manager::config::{
    HttpConfig, HttpTransport, ServerConfig, StdioConfig, TimeoutConfig, TransportConfig,
    parse_config_file,
};
use mcp_proto::session::{CloseReason, EraPolicy};
use mcp_proto::types::Implementation;
use mcp_tokio::{Client, ClientBuilder, Error};

use super::elicit::{ElicitMode, Elicitor};
use super::trace;
use super::ui::Ui;
use crate::args::{Cli, Era, Target};
use crate::exit::CliError;

/// The longest the `server/discover` probe of `--era auto` waits before falling back to
/// `initialize` (a server that ignores unknown requests costs this once).
const PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// Resolves the target to a server config: `-- cmd`, `--url`, or an entry of `--config`.
pub fn server_config(cli: &Cli) -> Result<ServerConfig, CliError> {
    let c = &cli.connection;
    let target = cli.target().map_err(|e| CliError::Usage(e.0))?;
    let mut config = match target {
        Target::Stdio { program, args } => ServerConfig {
            name: program.rsplit('/').next().unwrap_or(&program).to_owned(),
            transport: TransportConfig::Stdio(StdioConfig {
                args,
                ..StdioConfig::new(program.clone())
            }),
            timeouts: TimeoutConfig::default(),
        },
        Target::Http { url } => ServerConfig {
            name: url.clone(),
            transport: TransportConfig::Http(HttpConfig::new(url)),
            timeouts: TimeoutConfig::default(),
        },
        Target::Config { file, server } => {
            let text = std::fs::read_to_string(&file).map_err(|e| CliError::File {
                path: file.clone(),
                reason: e.to_string(),
            })?;
            let vars = |name: &str| std::env::var(name).ok();
            let servers = parse_config_file(&file.display().to_string(), &text, &vars)
                .map_err(|e| CliError::Usage(format!("bad config file: {e}")))?;
            let names: Vec<String> = servers.iter().map(|s| s.name.clone()).collect();
            servers
                .into_iter()
                .find(|s| s.name == server)
                .ok_or_else(|| {
                    CliError::Usage(format!(
                        "no server {server:?} in {}; it has: {}",
                        file.display(),
                        if names.is_empty() {
                            "none".to_owned()
                        } else {
                            names.join(", ")
                        }
                    ))
                })?
        }
    };
    match &mut config.transport {
        TransportConfig::Stdio(s) => {
            if !c.headers.is_empty() {
                return Err(CliError::Usage(
                    "--header applies to HTTP servers; for a stdio server use --env".into(),
                ));
            }
            s.env.extend(c.env.iter().cloned());
        }
        TransportConfig::Http(h) => {
            if !c.env.is_empty() {
                return Err(CliError::Usage(
                    "--env applies to stdio servers; for an HTTP server use --header".into(),
                ));
            }
            h.headers.extend(c.headers.iter().cloned());
            // The 2026 era has no legacy HTTP+SSE transport to fall back to.
            if c.era == Era::Modern {
                h.transport = HttpTransport::Streamable;
            }
        }
        _ => {}
    }
    Ok(config)
}

/// The era policy for `--era` on this transport.
///
/// `auto` probes on every transport (a stdio server that exits on the probe is started
/// again by the driver); `stdio` is kept for transport-specific rules.
pub fn era_policy(era: Era, _stdio: bool, connect_timeout: Option<Duration>) -> EraPolicy {
    match era {
        Era::Legacy => EraPolicy::Initialize,
        Era::Modern => EraPolicy::Discover,
        Era::Auto => EraPolicy::Auto {
            probe_timeout: connect_timeout.map_or(PROBE_TIMEOUT, |t| t.min(PROBE_TIMEOUT)),
        },
    }
}

/// Connects (spawning a stdio server or reaching the URL) and runs the handshake.
pub async fn connect(cli: &Cli, ui: &Ui, elicit: ElicitMode) -> Result<Client, CliError> {
    let config = server_config(cli)?;
    connect_to(cli, ui, config, elicit).await
}

/// Connects to an already resolved config (the demo uses this). An HTTP server gets the
/// stored OAuth tokens ([`super::auth::stored_provider`]).
pub async fn connect_to(
    cli: &Cli,
    ui: &Ui,
    config: ServerConfig,
    elicit: ElicitMode,
) -> Result<Client, CliError> {
    let auth = match &config.transport {
        TransportConfig::Http(h) => super::auth::stored_provider(cli, &h.headers),
        _ => None,
    };
    connect_with(cli, ui, config, elicit, auth).await
}

/// Connects to `config` with `auth` for an HTTP server (`login` passes its browser flow).
pub async fn connect_with(
    cli: &Cli,
    ui: &Ui,
    config: ServerConfig,
    elicit: ElicitMode,
    auth: Option<mcp_tokio::mcp_driver::auth::AuthProvider>,
) -> Result<Client, CliError> {
    let c = &cli.connection;
    let what = describe(&config);
    let had_token = auth
        .as_ref()
        .is_some_and(|a| super::auth::has_stored_token(a, &what));
    if ui.verbose > 0 {
        ui.note(&format!("connecting: {}", describe_verbose(&config)));
    }
    let mut builder = ClientBuilder::new()
        .client_info(Implementation::new("mcp-cli", env!("CARGO_PKG_VERSION")))
        .era_policy(era_policy(
            c.era,
            matches!(config.transport, TransportConfig::Stdio(_)),
            c.connect_timeout,
        ))
        .elicitation_handler(Elicitor::new(ui.clone(), elicit));
    if let Some(t) = c.timeout {
        builder = builder.request_timeout(Some(t));
    }
    if let Some(t) = c.connect_timeout {
        builder = builder.handshake_timeout(Some(t));
    }
    if ui.verbose > 0 {
        builder = builder.on_wire(trace::tap(ui));
    }
    if let Some(auth) = auth {
        if ui.verbose > 0 && had_token {
            ui.note("using the stored OAuth token (value masked)");
        }
        builder = builder.auth(auth);
    }
    let client =
        builder
            .connect(config)
            .await
            .map_err(|e| match login_required(&e, &what, had_token) {
                Some(login) => login,
                None => connect_error(e, &what, c.connect_timeout),
            })?;
    if ui.verbose > 0 {
        let info = client.server_info();
        ui.note(&format!(
            "connected: {} {} (protocol {})",
            info.name,
            info.version,
            client.protocol_version()
        ));
    }
    Ok(client)
}

fn describe(config: &ServerConfig) -> String {
    match &config.transport {
        TransportConfig::Http(h) => h.url.clone(),
        TransportConfig::Stdio(s) => s.command.clone(),
        _ => config.name.clone(),
    }
}

fn describe_verbose(config: &ServerConfig) -> String {
    match &config.transport {
        TransportConfig::Http(h) if h.headers.is_empty() => h.url.clone(),
        TransportConfig::Http(h) => {
            format!(
                "{} (headers: {})",
                h.url,
                trace::masked_pairs(&h.headers, ": ")
            )
        }
        TransportConfig::Stdio(s) => {
            let mut line = std::iter::once(s.command.as_str())
                .chain(s.args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" ");
            if !s.env.is_empty() {
                line.push_str(&format!(" (env: {})", trace::masked_pairs(&s.env, "=")));
            }
            line
        }
        _ => config.name.clone(),
    }
}

/// A 401 (or a 403 `insufficient_scope`) that only logging in can fix.
fn login_required(e: &Error, url: &str, refused: bool) -> Option<CliError> {
    let status = e.http_status()?;
    let insufficient = || status.bearer().and_then(|b| b.error()) == Some("insufficient_scope");
    (status.status == 401 || (status.status == 403 && insufficient())).then(|| {
        CliError::LoginRequired {
            url: url.to_owned(),
            refused,
        }
    })
}

/// Maps a failure to connect.
fn connect_error(e: Error, what: &str, connect_timeout: Option<Duration>) -> CliError {
    match e {
        Error::Spawn {
            command, source, ..
        } => CliError::Spawn {
            program: command,
            not_found: source.kind() == std::io::ErrorKind::NotFound,
            reason: source.to_string(),
        },
        Error::Handshake {
            reason: CloseReason::HandshakeTimeout { after },
            ..
        } => CliError::Timeout {
            what: "connecting".into(),
            after: connect_timeout.unwrap_or(after),
            connecting: true,
        },
        Error::Handshake { reason, .. } if what.contains("://") => CliError::Connect {
            url: what.to_owned(),
            reason: reason.to_string(),
        },
        Error::Handshake { reason, .. } => CliError::Handshake(reason.to_string()),
        Error::Exited { status, stderr, .. } => {
            CliError::Handshake(exited_detail(&status, &stderr))
        }
        Error::Unsupported { what: detail, .. } => CliError::Unsupported(format!(
            "{detail} is not supported by this build (connecting to {what})"
        )),
        other => call_error(other),
    }
}

fn exited_detail(status: &str, stderr: &[String]) -> String {
    if stderr.is_empty() {
        format!("the server {status}")
    } else {
        format!(
            "the server {status}; its last stderr lines:\n  {}",
            stderr.join("\n  ")
        )
    }
}

/// Maps the failure of a request.
pub fn call_error(e: Error) -> CliError {
    if let Some(login) = login_required(&e, e.server(), true) {
        return login;
    }
    match e {
        Error::Remote {
            method,
            code,
            message,
            data,
            ..
        } => CliError::Remote {
            method,
            error: ErrorObject {
                data,
                ..ErrorObject::new(code, message)
            },
        },
        Error::Timeout { method, after, .. } => CliError::Timeout {
            what: method,
            after,
            connecting: false,
        },
        Error::Cancelled { .. } => CliError::Interrupted,
        Error::Exited { status, stderr, .. } => CliError::Closed(exited_detail(&status, &stderr)),
        Error::Closed { reason, .. } => CliError::Closed(reason.to_string()),
        Error::Handshake { reason, .. } => CliError::Handshake(reason.to_string()),
        Error::Usage { source, .. } => CliError::Usage(source.to_string()),
        Error::Decode { method, source, .. } => CliError::Invalid(format!(
            "{method}: the server's result is malformed: {source}"
        )),
        Error::Pagination { method, detail, .. } => {
            CliError::Invalid(format!("{method}: {detail}"))
        }
        Error::ListBudget { method, limit, .. } => {
            CliError::Invalid(format!("{method}: the list exceeds {limit}"))
        }
        // One answer could not be decoded; the connection is fine.
        Error::InvalidResponse { method, detail, .. } => {
            CliError::Invalid(format!("{method}: {detail}"))
        }
        Error::Unsupported { what, .. } => {
            CliError::Unsupported(format!("{what} is not supported by this build"))
        }
        Error::Auth { message, .. } => CliError::AuthFailed(message),
        Error::Spawn {
            command, source, ..
        } => CliError::Spawn {
            program: command,
            not_found: source.kind() == std::io::ErrorKind::NotFound,
            reason: source.to_string(),
        },
        other => CliError::Closed(other.to_string()),
    }
}
