//! Turning the connection options into a connected [`Client`]; the client's errors become
//! [`CliError`]s with their exit codes in `errors`.

mod errors;

use std::path::Path;
use std::time::Duration;

use mcp_manager::config::{
    ConfigEntry, EntryStatus, HttpConfig, HttpTransport, ServerConfig, StdioConfig, TimeoutConfig,
    TransportConfig,
};
use mcp_proto::session::{CloseReason, EraPolicy};
use mcp_proto::types::Implementation;
use mcp_tokio::{Client, ClientBuilder, Error};

use super::elicit::{ElicitMode, Elicitor};
use super::roots::Roots;
use super::sampling::{Sampler, SamplingMode};
use super::trace;
use super::ui::Ui;
use crate::args::{Cli, Command, Era, Target, string_pairs};
use crate::exit::CliError;
pub(crate) use errors::client_words;
pub use errors::{call_error, network_failure};
use errors::{connect_error, login_required};

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

/// Reads a `--config` file entry by entry: see [`super::config_file::entries`].
pub fn config_entries(file: &Path) -> Result<Vec<ConfigEntry>, CliError> {
    super::config_file::entries(file)
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
        EntryStatus::Broken(e) => Err(super::config_file::entry_error(file, e)),
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
    // A 401 to a request that carried a token (stored, or the user's own header) means the
    // token was refused, not that one is missing.
    let sent_token = had_token
        || matches!(&config.transport, TransportConfig::Http(h)
            if h.headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("authorization")));
    if ui.verbose > 0 {
        ui.note(&format!("connecting: {}", describe_verbose(&config)));
    }
    if let Some(t) = c.timeout {
        builder = builder.request_timeout(Some(t));
    }
    if let Some(t) = c.connect_timeout {
        builder = builder.handshake_timeout(Some(t));
    }
    // The shell's connection always has the trace: a line's own `-v` turns it on for that
    // line (trace::trace_line_at).
    if ui.verbose > 0 || matches!(cli.command, crate::args::Command::Shell(_)) {
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
        .map_err(|e| match login_required(&e, &what, sent_token) {
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

/// `program args`, shell-quoted as a user would type it (the program alone if a word holds
/// a NUL byte, which no shell can quote).
fn command_line(program: &str, args: &[String]) -> String {
    let words = std::iter::once(program).chain(args.iter().map(String::as_str));
    shlex::try_join(words).unwrap_or_else(|_| program.to_owned())
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
}
