//! Turning the connection options into a connected [`Client`], and the client's errors into
//! [`CliError`]s with their exit codes.

use std::path::Path;
use std::time::Duration;

use mcp_manager::config::{
    ConfigEntry, ConfigShape, EntryStatus, HttpConfig, HttpTransport, ServerConfig, StdioConfig,
    TimeoutConfig, TransportConfig, parse_config_entries,
};
use mcp_proto::jsonrpc::ErrorObject;
use mcp_proto::session::{CloseReason, EraPolicy};
use mcp_proto::types::Implementation;
use mcp_tokio::{Client, ClientBuilder, Error};

use super::bridge::upstream_failure;
use super::elicit::{ElicitMode, Elicitor};
use super::roots::Roots;
use super::sampling::{Sampler, SamplingMode};
use super::trace;
use super::ui::Ui;
use crate::args::{Cli, Command, Era, Target, string_pairs};
use crate::exit::{CliError, NetworkFailure, strip_rpc_prefix};

/// The longest the `server/discover` probe of `--era auto` waits before falling back to
/// `initialize` (a server that ignores unknown requests costs this once).
const PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// Resolves the target to a server config: `-- cmd`, `--url`, or an entry of `--config`.
pub fn server_config(cli: &Cli) -> Result<ServerConfig, CliError> {
    let c = &cli.connection;
    let target = cli.target().map_err(|e| CliError::Usage(e.0))?;
    let mut config = match target {
        Target::Stdio { program, args } => ServerConfig {
            // The command line as typed (shell-quoted): errors name the server by it, not by
            // its program alone (`mcp` for `mcp demo-server` would read as this program).
            name: command_line(&program, &args),
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
        Target::Config { file, server } => config_entry(&file, server.as_deref())?,
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
            check_url(&h.url)?;
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

/// Checks an HTTP server's URL before anything connects: `http://` or `https://` with a host.
///
/// # Errors
///
/// [`CliError::InvalidUrl`] (exit 2), with the URL probably meant when the scheme is missing
/// (`http://` for a local host, `https://` otherwise).
pub fn check_url(url: &str) -> Result<(), CliError> {
    let invalid = |reason: String, suggestion: Option<String>| CliError::InvalidUrl {
        url: url.to_owned(),
        reason,
        suggestion,
    };
    if !url.contains("://") {
        return Err(invalid(
            "it has no http:// or https:// scheme".into(),
            with_scheme(url),
        ));
    }
    match url::Url::parse(url) {
        Ok(u) if !matches!(u.scheme(), "http" | "https") => Err(invalid(
            format!(
                "the scheme must be http:// or https://, not {}://",
                u.scheme()
            ),
            None,
        )),
        Ok(u) if u.host_str().is_none_or(str::is_empty) => {
            Err(invalid("it has no host".into(), None))
        }
        Ok(_) => Ok(()),
        Err(e) => Err(invalid(e.to_string(), None)),
    }
}

/// `localhost:3000/mcp` as `http://localhost:3000/mcp` (`https://` for a remote host), when
/// that is a valid URL with a host.
fn with_scheme(url: &str) -> Option<String> {
    let host = url.split(['/', ':']).next().unwrap_or_default();
    let local = host == "localhost"
        || host.starts_with("127.")
        || host == "0.0.0.0"
        || url.starts_with("[::1]");
    let candidate = format!("{}://{url}", if local { "http" } else { "https" });
    url::Url::parse(&candidate)
        .ok()
        .filter(|u| u.host_str().is_some_and(|h| !h.is_empty()))
        .map(|_| candidate)
}

/// Reads a `--config` file entry by entry ([`parse_config_entries`]): a problem in one
/// entry (an undefined `${VAR}`) never hides the others.
pub fn config_entries(file: &Path) -> Result<Vec<ConfigEntry>, CliError> {
    let text = std::fs::read_to_string(file).map_err(|e| CliError::File {
        path: file.to_owned(),
        reason: e.to_string(),
    })?;
    // A secret-looking variable's value is registered for masking in everything printed.
    let vars = crate::redact::registering_lookup(|name| std::env::var(name).ok());
    parse_config_entries(
        Some(&file.display().to_string()),
        &text,
        &vars,
        &ConfigShape::Auto,
    )
    .map_err(|e| CliError::Usage(format!("bad config file: {e}")))
}

/// The entry `server` of `file`, or its only server when `server` is `None`.
fn config_entry(file: &Path, server: Option<&str>) -> Result<ServerConfig, CliError> {
    let entries = config_entries(file)?;
    let names = || {
        let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
        if names.is_empty() {
            "none".to_owned()
        } else {
            names.join(", ")
        }
    };
    let entry = match server {
        Some(server) => entries.iter().find(|e| e.name == server).ok_or_else(|| {
            CliError::Usage(format!(
                "no server {server:?} in {}; it has: {}",
                file.display(),
                names()
            ))
        })?,
        None => match entries.as_slice() {
            [only] => only,
            _ => {
                return Err(CliError::Usage(format!(
                    "{} has {} servers ({}): pick one with --server <name> (only `tools --all` \
                     and `call server__tool` use every server of the file)",
                    file.display(),
                    entries.len(),
                    names()
                )));
            }
        },
    };
    match &entry.status {
        EntryStatus::Enabled(config) => Ok(config.clone()),
        EntryStatus::Disabled => Err(CliError::Usage(format!(
            "server {:?} is disabled in {}",
            entry.name,
            file.display()
        ))),
        EntryStatus::Broken(e) => Err(CliError::Usage(format!("bad config entry: {e}"))),
        _ => Err(CliError::Usage(format!(
            "server {:?} of {} cannot be used",
            entry.name,
            file.display()
        ))),
    }
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
/// Usage errors (the URL, the subcommand's arguments) are reported before anything is
/// started or contacted.
pub async fn connect(cli: &Cli, ui: &Ui, elicit: ElicitMode) -> Result<Client, CliError> {
    let config = server_config(cli)?;
    check_arguments(cli)?;
    connect_to(cli, ui, config, elicit).await
}

/// Checks the subcommand's own arguments before connecting: the syntax of `key=value` pairs
/// and of `--args` (reading `@FILE`, or stdin once), which the tool's schema types after
/// connecting.
///
/// # Errors
///
/// The usage error (exit 2) of the first unusable argument.
pub fn check_arguments(cli: &Cli) -> Result<(), CliError> {
    match &cli.command {
        Command::Call { tool, args, .. } | Command::Load { tool, args, .. } => args
            .typed(None)
            .map(drop)
            .map_err(|e| super::diagnose::argument_error(tool, None, e)),
        Command::Prompt { pairs, .. } => string_pairs(pairs)
            .map(drop)
            .map_err(|e| CliError::Usage(e.0)),
        _ => Ok(()),
    }
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
    let builder = ClientBuilder::new()
        .client_info(Implementation::new("mcp-term", env!("CARGO_PKG_VERSION")))
        .era_policy(era_policy(
            c.era,
            matches!(config.transport, TransportConfig::Stdio(_)),
            c.connect_timeout,
        ));
    let builder = with_handlers(builder, ui, elicit, roots(cli)?.as_ref());
    connect_built(cli, ui, config, builder, auth).await
}

/// Connects to `config` with a builder whose identity and handlers the caller chose (`mcp
/// bridge` passes its host's): adds the global options (--timeout, --connect-timeout, the -v
/// trace), `auth`, and maps a failure to the CLI's errors as every command does.
pub async fn connect_built(
    cli: &Cli,
    ui: &Ui,
    config: ServerConfig,
    mut builder: ClientBuilder,
    auth: Option<mcp_tokio::mcp_driver::auth::AuthProvider>,
) -> Result<Client, CliError> {
    let c = &cli.connection;
    let what = describe(&config);
    let http = matches!(config.transport, TransportConfig::Http(_));
    let had_token = auth
        .as_ref()
        .is_some_and(|a| super::auth::has_stored_token(a, &what));
    if ui.verbose > 0 {
        ui.note(&format!("connecting: {}", describe_verbose(&config)));
    }
    if let Some(t) = c.timeout {
        builder = builder.request_timeout(Some(t));
    }
    if let Some(t) = c.connect_timeout {
        builder = builder.handshake_timeout(Some(t));
    }
    if ui.verbose > 0 {
        // Over HTTP the trace follows each exchange (JSON bodies and SSE events decoded, so
        // every message shows once, whole); over stdio every line is a message.
        builder = match &config.transport {
            TransportConfig::Http(_) => builder.on_http_trace(trace::http(ui)),
            _ => builder.on_wire(trace::tap(ui)),
        };
    }
    if let Some(auth) = auth {
        if ui.verbose > 0 && had_token {
            ui.note("using the stored OAuth token (value masked)");
        }
        builder = builder.auth(auth);
    }
    let client = patience_note(ui, builder.connect(config), c.connect_timeout)
        .await
        .map_err(|e| match login_required(&e, &what, had_token) {
            Some(login) => login,
            None if c.era == crate::args::Era::Modern
                && matches!(
                    &e,
                    Error::Handshake {
                        reason: CloseReason::HandshakeRejected(_),
                        ..
                    }
                ) =>
            {
                // Only `server/discover` was tried: the likely cause is an older server.
                CliError::Handshake(format!(
                    "{}; with --era modern only protocol 2026-07-28 is tried (--era auto falls back to older versions)",
                    connect_error(e, &what, http, c.connect_timeout)
                        .to_string()
                        .trim_start_matches("handshake with the server failed: ")
                ))
            }
            None => connect_error(e, &what, http, c.connect_timeout),
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

/// How long a connection may take before [`patience_note`] says it is still waiting.
const PATIENCE: Duration = Duration::from_secs(3);

/// The handshake timeout when `--connect-timeout` is not given (the session's default).
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(60);

/// Runs `connecting`; on a terminal (without `-q`), says once after [`PATIENCE`] that the
/// server has not answered yet and how long it has, so a silent server is not mistaken for
/// a hung command.
async fn patience_note<T>(
    ui: &Ui,
    connecting: impl std::future::Future<Output = T>,
    limit: Option<Duration>,
) -> T {
    if !ui.stderr_tty || ui.quiet {
        return connecting.await;
    }
    tokio::pin!(connecting);
    tokio::select! {
        done = &mut connecting => return done,
        () = tokio::time::sleep(PATIENCE) => {}
    }
    let limit = limit.unwrap_or(DEFAULT_CONNECT_TIMEOUT);
    ui.note(&format!(
        "the server has not answered yet; waiting up to {}s in all (--connect-timeout)",
        limit.as_secs_f64()
    ));
    connecting.await
}

/// Registers the handlers for the server's requests, which declares the client's
/// capabilities: elicitation (answered in `elicit` mode), sampling (asked at the terminal,
/// declined without one; see [`super::sampling`]) and, with `roots` (from [`roots`]), roots.
/// Elicitation and sampling requests may also come as tasks (2025-11-25): a person may take
/// a while to answer, and the server polls instead of holding its request open.
pub fn with_handlers(
    builder: ClientBuilder,
    ui: &Ui,
    elicit: ElicitMode,
    roots: Option<&Roots>,
) -> ClientBuilder {
    let builder = builder
        .elicitation_handler(Elicitor::new(ui.clone(), elicit))
        .sampling_handler(Sampler::new(ui.clone(), SamplingMode::for_terminal(ui)))
        .task_receiver(true);
    match roots {
        Some(roots) => builder.roots_handler(roots.clone()),
        None => builder,
    }
}

/// The `--root` directories as roots; `None` without `--root` (no roots capability).
///
/// # Errors
///
/// A usage error when a directory does not exist or is not a directory.
pub fn roots(cli: &Cli) -> Result<Option<Roots>, CliError> {
    let dirs = &cli.connection.roots;
    if dirs.is_empty() {
        return Ok(None);
    }
    Roots::from_dirs(dirs)
        .map(Some)
        .map_err(|e| CliError::Usage(e.to_string()))
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

/// Whether a 401's server offers an OAuth login: its Bearer challenge names its protected
/// resource metadata (RFC 9728), or it names its authorization server (`Mcp-Auth-Server`).
/// A bare `Bearer` challenge is a server that wants a token handed out some other way.
fn offers_oauth(status: &mcp_proto::transport_error::HttpStatusError) -> bool {
    status.auth_server.is_some()
        || status
            .bearer()
            .is_some_and(|b| b.resource_metadata().is_some())
}

/// A 401 (or a 403 `insufficient_scope`) that only logging in can fix.
fn login_required(e: &Error, url: &str, refused: bool) -> Option<CliError> {
    let status = e.http_status()?;
    let insufficient = || status.bearer().and_then(|b| b.error()) == Some("insufficient_scope");
    (status.status == 401 || (status.status == 403 && insufficient())).then(|| {
        let bearer = status.bearer();
        if bearer.and_then(|b| b.error()) == Some("invalid_token") && !offers_oauth(status) {
            let said = bearer
                .and_then(|b| b.error_description())
                .map(str::to_owned);
            return CliError::TokenRefused {
                url: url.to_owned(),
                said,
            };
        }
        CliError::LoginRequired {
            url: url.to_owned(),
            refused,
            oauth: offers_oauth(status),
        }
    })
}

/// Maps a failure to connect. `http` says whether `what` is an HTTP endpoint.
fn connect_error(e: Error, what: &str, http: bool, connect_timeout: Option<Duration>) -> CliError {
    // `mcp bridge` answered; the server behind it failed.
    if let Error::Handshake {
        reason: CloseReason::HandshakeRejected(error),
        ..
    } = &e
        && let Some(bridge) = upstream_failure::from_bridge(what, "initialize", error)
    {
        return bridge;
    }
    if let Some(not_mcp) = super::not_mcp::classify(&e, what) {
        return not_mcp;
    }
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
            total: false,
        },
        Error::Handshake {
            reason: CloseReason::Http(status),
            ..
        } => CliError::Http {
            url: what.to_owned(),
            what: "initialize".into(),
            status: status.status,
            text: status.to_string(),
            connecting: true,
        },
        Error::Handshake {
            reason:
                CloseReason::TransportClosed {
                    detail: Some(detail),
                },
            ..
        } if http => match network_failure(&detail) {
            Some(kind) => CliError::Network {
                url: what.to_owned(),
                what: "connecting".into(),
                kind,
                detail: client_words(&detail).to_owned(),
            },
            None => CliError::Connect {
                url: what.to_owned(),
                reason: detail,
            },
        },
        Error::Handshake { reason, .. } if http => CliError::Connect {
            url: what.to_owned(),
            reason: reason.to_string(),
        },
        Error::Handshake { reason, .. } => CliError::Handshake(reason.to_string()),
        // A crash while starting (a missing API key, a bad flag) is the server's exit, with
        // its last words, not a protocol problem.
        Error::Exited {
            server,
            status,
            stderr,
        } => CliError::Exited(exited_detail(&server, &status, &stderr)),
        Error::Unsupported { what: detail, .. } => CliError::Unsupported(format!(
            "{detail} is not supported by this build (connecting to {what})"
        )),
        other => call_error(other),
    }
}

/// `program args`, shell-quoted as a user would type it (the program alone if a word holds
/// a NUL byte, which no shell can quote).
fn command_line(program: &str, args: &[String]) -> String {
    let words = std::iter::once(program).chain(args.iter().map(String::as_str));
    shlex::try_join(words).unwrap_or_else(|_| program.to_owned())
}

/// The server named as a person knows it (`the server at URL`, `` the server `cmd args` ``)
/// closed the connection, and how if the transport said.
fn closed_by(server: &str, detail: Option<&str>) -> String {
    let who = if server.starts_with("http://") || server.starts_with("https://") {
        format!("the server at {server}")
    } else {
        format!("the server `{server}`")
    };
    match detail {
        Some(detail) => format!("{who} closed the connection: {detail}"),
        None => format!("{who} closed the connection"),
    }
}

/// Signals that another process sends (a fault such as SIGSEGV is the server's own doing).
const SENT_SIGNALS: [&str; 7] = [
    "(SIGTERM", "(SIGKILL", "(SIGINT", "(SIGHUP", "(SIGQUIT", "(SIGUSR1", "(SIGUSR2",
];

/// What follows "the server " for stdio server `server` that ended with `status` (the
/// driver's words): `` `cmd args` exited with status 1; its last stderr lines: … ``,
/// `` `cmd args` was killed by signal 15 (SIGTERM), sent by another process, not by mcp ``.
fn exited_detail(server: &str, status: &str, stderr: &[String]) -> String {
    let mut status = if status.starts_with("killed") || status.starts_with("stopped") {
        format!("`{server}` was {status}")
    } else {
        format!("`{server}` {status}")
    };
    // The driver reports an exit only for a server that ended by itself (when mcp stops a
    // server, the call fails as closed): a sent signal came from someone else.
    if SENT_SIGNALS.iter().any(|s| status.contains(s)) {
        status.push_str(", sent by another process, not by mcp");
    }
    if stderr.is_empty() {
        status
    } else {
        format!(
            "{status}; its last stderr lines:\n  {}",
            stderr.join("\n  ")
        )
    }
}

/// What kind of failure below HTTP the HTTP client described.
///
/// The driver hands request and connect failures over as text, `[transport error: ]<Kind>:
/// <message>` with `Kind` the name of the core's `http::FailureKind`; the message is the HTTP
/// client's, so refusals and name resolution are told apart by its words.
pub fn network_failure(detail: &str) -> Option<NetworkFailure> {
    let detail = detail.strip_prefix("transport error: ").unwrap_or(detail);
    let (kind, message) = detail.split_once(": ")?;
    let message = message.to_ascii_lowercase();
    Some(match kind {
        "Connect" if message.contains("refused") => NetworkFailure::Refused,
        "Connect"
            if ["dns", "lookup", "resolve", "name or service not known"]
                .iter()
                .any(|w| message.contains(w)) =>
        {
            NetworkFailure::Dns
        }
        "Connect" => NetworkFailure::Unreachable,
        "Reset" => NetworkFailure::Reset,
        "Timeout" => NetworkFailure::Timeout,
        "Tls" => NetworkFailure::Tls,
        "Other" => NetworkFailure::Other,
        _ => return None,
    })
}

/// The HTTP client's own words in a failure's detail, without the driver's `transport
/// error: <Kind>: ` in front.
pub(crate) fn client_words(detail: &str) -> &str {
    let detail = detail.strip_prefix("transport error: ").unwrap_or(detail);
    detail.split_once(": ").map_or(detail, |(_, words)| words)
}

/// Maps the failure of a request.
pub fn call_error(e: Error) -> CliError {
    if let Some(login) = login_required(&e, e.server(), true) {
        return login;
    }
    let server = e.server().to_owned();
    match e {
        Error::Remote {
            method,
            code,
            message,
            data,
            ..
        } => {
            let error = ErrorObject {
                data,
                ..ErrorObject::new(code, strip_rpc_prefix(&message, code))
            };
            // `mcp bridge` answered; the server behind it failed.
            upstream_failure::from_bridge(&server, &method, &error)
                .unwrap_or(CliError::Remote { method, error })
        }
        Error::Timeout {
            method,
            after,
            total,
            ..
        } => CliError::Timeout {
            what: method,
            after,
            connecting: false,
            total,
        },
        Error::Cancelled { .. } => CliError::Interrupted,
        Error::Exited {
            server,
            status,
            stderr,
        } => CliError::Exited(exited_detail(&server, &status, &stderr)),
        Error::Http { method, source, .. } => CliError::Http {
            url: server,
            what: method,
            status: source.status,
            text: source.to_string(),
            connecting: false,
        },
        Error::Closed {
            reason: CloseReason::Http(source),
            ..
        } => CliError::Http {
            url: server,
            what: String::new(),
            status: source.status,
            text: source.to_string(),
            connecting: false,
        },
        Error::Closed {
            reason:
                CloseReason::TransportClosed {
                    detail: Some(detail),
                },
            ..
        } if network_failure(&detail).is_some() => CliError::Network {
            url: server,
            what: String::new(),
            kind: network_failure(&detail).unwrap_or(NetworkFailure::Other),
            detail: client_words(&detail).to_owned(),
        },
        Error::Closed {
            reason: CloseReason::TransportClosed { detail },
            ..
        } => CliError::Closed(closed_by(&server, detail.as_deref())),
        Error::Closed { reason, .. } => CliError::session_closed(&reason),
        Error::Handshake { reason, .. } => CliError::Handshake(reason.to_string()),
        Error::Usage { source, .. } => CliError::Usage(source.to_string()),
        Error::Config { message, .. } => {
            CliError::Usage(format!("invalid connection settings: {message}"))
        }
        Error::Decode { method, source, .. } => CliError::Invalid(format!(
            "{method}: the server's result is malformed: {source}"
        )),
        Error::InvalidResponse { method, detail, .. } => {
            CliError::Invalid(format!("{method}: {detail}"))
        }
        Error::Pagination { method, detail, .. } => {
            CliError::Invalid(format!("{method}: {detail}"))
        }
        Error::ListBudget { method, limit, .. } => {
            CliError::Invalid(format!("{method}: the list exceeds {limit}"))
        }
        Error::Unsupported { what, .. } => {
            CliError::Unsupported(format!("{what} is not supported by this build"))
        }
        Error::NotOffered {
            server,
            method,
            reason,
        } => CliError::NotOffered {
            server: server.to_string(),
            method,
            reason,
        },
        Error::Auth { message, .. } => CliError::AuthFailed(message),
        Error::OutputSchema {
            tool,
            violations,
            total,
            ..
        } => CliError::OutputSchema {
            tool,
            violations: violations
                .into_iter()
                .map(|v| (v.pointer, v.message))
                .collect(),
            total,
        },
        Error::Spawn {
            command, source, ..
        } => CliError::Spawn {
            program: command,
            not_found: source.kind() == std::io::ErrorKind::NotFound,
            reason: source.to_string(),
        },
        other => CliError::closed(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_without_a_scheme_are_usage_errors_with_the_url_meant() {
        let e = check_url("localhost:3000/mcp").unwrap_err();
        assert_eq!(
            e,
            CliError::InvalidUrl {
                url: "localhost:3000/mcp".into(),
                reason: "it has no http:// or https:// scheme".into(),
                suggestion: Some("http://localhost:3000/mcp".into()),
            }
        );
        assert_eq!(e.exit(), crate::exit::Exit::Usage);
        let e = check_url("example.com/mcp").unwrap_err();
        assert!(
            matches!(e, CliError::InvalidUrl { suggestion: Some(s), .. } if s == "https://example.com/mcp")
        );
        assert!(matches!(
            check_url("ftp://h/mcp"),
            Err(CliError::InvalidUrl {
                suggestion: None,
                ..
            })
        ));
        assert!(check_url("http://").is_err());
        assert!(check_url("http://127.0.0.1:3000/mcp").is_ok());
        assert!(check_url("https://h.example/mcp?x=1").is_ok());
    }

    #[test]
    fn request_failures_by_class() {
        use mcp_proto::http::error::HttpStatusError;
        use mcp_proto::http::headers::HeaderList;
        let server: std::sync::Arc<str> = "http://127.0.0.1:9/mcp".into();
        let e = call_error(Error::Remote {
            server: server.clone(),
            method: "tools/call".into(),
            code: -32602,
            message: "MCP error -32602: Tool x not found".into(),
            data: None,
        });
        assert_eq!(
            e.to_string(),
            "tools/call failed: MCP error -32602: Tool x not found"
        );
        let e = call_error(Error::Http {
            server: server.clone(),
            method: "tools/call".into(),
            source: HttpStatusError::from_response(502, &HeaderList::new(), b"bad gateway"),
        });
        assert_eq!(
            e.to_string(),
            "tools/call: http://127.0.0.1:9/mcp answered HTTP 502 Bad Gateway: bad gateway"
        );
        assert_eq!((e.exit().code(), e.code()), (4, "http_error"));
        let e = call_error(Error::Closed {
            server: server.clone(),
            reason: CloseReason::TransportClosed {
                detail: Some(
                    "transport error: Reset: connection error: Connection reset by peer".into(),
                ),
            },
        });
        assert_eq!(
            e,
            CliError::Network {
                url: server.to_string(),
                what: String::new(),
                kind: NetworkFailure::Reset,
                detail: "connection error: Connection reset by peer".into(),
            }
        );
        assert!(!e.report().contains("stderr"), "{}", e.report());
        let e = call_error(Error::Exited {
            server: "demo".into(),
            status: "exited with status 3".into(),
            stderr: vec!["boom".into()],
        });
        assert_eq!(
            e.to_string(),
            "the server `demo` exited with status 3; its last stderr lines:\n  boom"
        );
        assert!(e.report().contains("its stderr is shown above"));
        let killed = |status: &str| {
            call_error(Error::Exited {
                server: "sh -c 'kill -TERM $$'".into(),
                status: status.into(),
                stderr: Vec::new(),
            })
            .to_string()
        };
        assert_eq!(
            killed("killed by signal 15 (SIGTERM)"),
            "the server `sh -c 'kill -TERM $$'` was killed by signal 15 (SIGTERM), \
             sent by another process, not by mcp"
        );
        // A fault is the server's own: no sender named.
        assert_eq!(
            killed("killed by signal 11 (SIGSEGV, core dumped)"),
            "the server `sh -c 'kill -TERM $$'` was killed by signal 11 (SIGSEGV, core dumped)"
        );
    }

    #[test]
    fn network_failures_from_the_http_clients_words() {
        let cases = [
            (
                "Connect: tcp connect error: Connection refused (os error 111)",
                Some(NetworkFailure::Refused),
            ),
            (
                "transport error: Reset: connection error: Connection reset by peer (os error 104)",
                Some(NetworkFailure::Reset),
            ),
            (
                "Connect: dns error: failed to lookup address information",
                Some(NetworkFailure::Dns),
            ),
            (
                "Connect: tcp connect error: Network is unreachable (os error 101)",
                Some(NetworkFailure::Unreachable),
            ),
            (
                "transport error: Timeout: operation timed out",
                Some(NetworkFailure::Timeout),
            ),
            ("Tls: invalid peer certificate", Some(NetworkFailure::Tls)),
            ("the server exited", None),
            ("no response received", None),
        ];
        for (detail, kind) in cases {
            assert_eq!(network_failure(detail), kind, "{detail}");
        }
    }
}
