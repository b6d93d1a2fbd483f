//! `mcp bridge --url URL` and `mcp bridge -- cmd args`: a stdio MCP server for a host (a
//! desktop app, an IDE) that forwards everything to one server, a remote Streamable HTTP /
//! legacy SSE server or a stdio child.
//!
//! The host's side is the server driver ([`mcp_tokio::server`]) on stdin and stdout; the
//! upstream side is a [`Client`](mcp_tokio::Client) of either transport (the stdio child in
//! its own process group, shut down and reaped by the client as every command's is). The upstream connection is made when the
//! host sends `initialize`, with the host's client info, capabilities and protocol version
//! ([`upstream::connect`]); the host session then starts with the server's own `serverInfo`,
//! capabilities and instructions, and answers the host's `initialize` with the version the
//! server agreed to, so the host sees what it would see directly. [`forward`] maps everything
//! after that.
//!
//! When the server answers 401 and no stored token works, the bridge runs the browser login of
//! `mcp login` if a terminal is present (its token stored), else it answers the host's
//! `initialize` with an error saying to run `mcp login --url URL` and exits nonzero.
//!
//! Before `initialize`, a session with no capabilities answers the host (`ping`, errors for
//! anything else). When the host closes stdin, the requests it already sent are still
//! forwarded and answered for up to [`aggregate::EOF_GRACE`] (a host that pipes a script in
//! and closes its end reads every answer); then the requests still running upstream are
//! cancelled (`notifications/cancelled`), the upstream session is closed (HTTP `DELETE`, or
//! the child's shutdown) and the bridge exits 0. A stop signal ([`stop`]) does the same at
//! once: the running requests are cancelled upstream with the signal named in the reason, the
//! upstream session is closed, and `mcp` exits with the signal's status (143, 130, 129).
//! When the upstream connection ends, the bridge ends the host session and exits 3. stdout
//! carries only the protocol (no `--json` error object either); logs go to stderr.
//!
//! With `--config FILE`, [`aggregate`] serves every server of the file as one.

pub mod aggregate;
pub mod forward;
pub mod host_log;
pub mod listen;
pub mod stop;
pub mod upstream;
pub mod upstream_failure;
pub mod upstream_health;

use mcp_manager::config::TransportConfig;
use mcp_proto::framing::lines::encode_line;
use mcp_proto::server::{ServerConfig, ServerSession};
use mcp_proto::session::ProtocolVersion;
use mcp_proto::types::{Implementation, InitializeParams};
use mcp_tokio::server::Server;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _};

use super::ui::Ui;
use crate::args::{Cli, Command};
use crate::exit::{CliError, Exit};
use forward::{CallsEnded, Forwarder};
use upstream::HostSlot;

/// How long the bridge waits, after the host left, for the cancelled upstream calls to end
/// before it closes the upstream session anyway.
const CANCEL_BOUND: std::time::Duration = std::time::Duration::from_secs(5);

/// How much of stdin is read at once before `initialize`.
const READ_CHUNK: usize = 64 * 1024;

/// The longest line accepted before `initialize` (the server driver's limit after it).
const MAX_EARLY_LINE: usize = 16 << 20;

/// The host's `initialize`, and what it sent after it in the same read.
struct HostInitialize {
    id: Value,
    params: InitializeParams,
    rest: Vec<u8>,
}

/// The `id` and params of `line` when it is an `initialize` request.
fn as_initialize(line: &[u8]) -> Option<(Value, Option<Value>)> {
    let Ok(Value::Object(mut message)) = serde_json::from_slice::<Value>(line) else {
        return None;
    };
    if message.get("method").and_then(Value::as_str) != Some("initialize") {
        return None;
    }
    let id = message.remove("id")?;
    Some((id, message.remove("params")))
}

/// Writes what `session` has queued, one line per message.
async fn flush(
    session: &mut ServerSession,
    out: &mut (impl AsyncWrite + Unpin),
) -> std::io::Result<()> {
    let (mut buf, mut scratch) = (Vec::new(), Vec::new());
    while session.poll_transmit(&mut scratch).is_some() {
        encode_line(&mut buf, &scratch);
        scratch.clear();
    }
    if !buf.is_empty() {
        out.write_all(&buf).await?;
        out.flush().await?;
    }
    Ok(())
}

/// Reads the host's input until its `initialize` (with readable params) and returns it;
/// `None` when the host closes stdin first. Until then a session of no capabilities answers
/// the host: `ping`, and an error for any other request (or for unreadable `initialize`
/// params).
async fn await_initialize(
    stdin: &mut (impl AsyncRead + Unpin),
    stdout: &mut (impl AsyncWrite + Unpin),
) -> Result<Option<HostInitialize>, CliError> {
    let info = Implementation::new("mcp-bridge", env!("CARGO_PKG_VERSION"));
    // The bridge speaks the initialize era to the host (as upstream): a 2026 host's
    // `server/discover` gets -32601 and falls back to `initialize`.
    let config = ServerConfig::new(info).with_versions(ProtocolVersion::INITIALIZE_ERA);
    let mut waiting = ServerSession::new(config, std::time::Instant::now());
    let mut buf = Vec::new();
    let mut chunk = vec![0u8; READ_CHUNK];
    loop {
        while let Some(end) = buf.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = buf.drain(..=end).collect();
            let line = line.trim_ascii();
            if line.is_empty() {
                continue;
            }
            if let Some((id, params)) = as_initialize(line)
                && let Ok(params) = upstream::initialize_params(params.as_ref())
            {
                flush(&mut waiting, stdout)
                    .await
                    .map_err(CliError::closed)?;
                let rest = std::mem::take(&mut buf);
                return Ok(Some(HostInitialize { id, params, rest }));
            }
            waiting.handle_message(std::time::Instant::now(), line);
            while waiting.poll_event().is_some() {}
        }
        flush(&mut waiting, stdout)
            .await
            .map_err(CliError::closed)?;
        if buf.len() > MAX_EARLY_LINE {
            return Err(CliError::Closed(format!(
                "the host sent a line over {MAX_EARLY_LINE} bytes before initialize"
            )));
        }
        let n = stdin.read(&mut chunk).await.map_err(CliError::closed)?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// The upstream asked for authorization and no stored token worked, with someone at a
/// terminal: the browser login `mcp login` runs (its token stored), then the connection
/// again. The host's `initialize` waits meanwhile.
async fn login_and_connect(
    cli: &Cli,
    ui: &Ui,
    config: mcp_manager::config::ServerConfig,
    host_params: &InitializeParams,
    host: HostSlot,
) -> Result<mcp_tokio::Client, CliError> {
    ui.note("mcp bridge: the server needs authorization; logging in in the browser (as `mcp login` does)");
    let provider = super::auth::bridge_login_provider(cli, ui)?;
    upstream::connect_with_auth(cli, ui, config, host_params, host, Some(provider)).await
}

/// The one upstream server of `mcp bridge`: `--url` (an HTTP server) or `-- cmd` (a stdio
/// child); a usage error for anything else, before anything is started.
fn upstream_config(cli: &Cli) -> Result<mcp_manager::config::ServerConfig, CliError> {
    let given = cli.connection.url.is_some()
        || cli
            .command
            .server_command()
            .is_some_and(|s| !s.argv.is_empty());
    if !given {
        return Err(CliError::Usage(
            "mcp bridge needs the server to forward to: --url URL, or -- <command> [args] for a stdio server, or --config FILE for every server of a file"
                .into(),
        ));
    }
    let config = super::connect::server_config(cli)?;
    match &config.transport {
        TransportConfig::Http(_) | TransportConfig::Stdio(_) => Ok(config),
        _ => Err(CliError::Usage(
            "mcp bridge forwards to an HTTP server (--url) or a stdio server (-- <command>)".into(),
        )),
    }
}

/// The host-facing server of an upstream `client`: the server's own identity, capabilities
/// and instructions, so a host sees what it would see directly.
fn host_server_config(client: &mcp_tokio::Client) -> ServerConfig {
    let config = ServerConfig::new(client.server_info().clone())
        // The bridge forwards the initialize era only: a 2026 host's `server/discover` gets
        // -32601 and it falls back to `initialize`.
        .with_versions(ProtocolVersion::INITIALIZE_ERA)
        .with_capabilities(client.capabilities().clone())
        // The upstream server times its own requests out (and cancels them).
        .with_request_timeout(None);
    match client.instructions() {
        Some(instructions) => config.with_instructions(instructions),
        None => config,
    }
}

/// Waits, at most [`CANCEL_BOUND`], until every forwarded call has ended and the host's
/// requests are answered: after the upstream connection ended, each fails at once.
async fn answer_open_requests(host: &mcp_tokio::server::ServerHandle, calls: &mut CallsEnded) {
    let answered = async {
        calls.wait().await;
        // The last answers pass from the ended calls to the session through their handler
        // tasks, which are already woken: a few scheduler turns at most.
        while host.open_requests() > 0 {
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
        }
    };
    if tokio::time::timeout(CANCEL_BOUND, answered).await.is_err() {
        tracing::warn!("bridge: some host requests were not answered before the session ended");
    }
}

/// The host session's driver on its own task; aborted when dropped (the driver's future is
/// dropped then, as when it was polled in place).
struct DriverTask(tokio::task::JoinHandle<mcp_proto::session::CloseReason>);

impl Drop for DriverTask {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Runs `mcp bridge`: serves stdio until the host closes stdin or the upstream connection
/// ends.
pub async fn run(cli: &Cli, ui: &Ui) -> Result<Exit, CliError> {
    if let Command::Bridge(args) = &cli.command {
        if cli.connection.config.is_some() {
            return aggregate::run(cli, ui, args).await;
        }
        if !args.tools.allow.is_empty() || !args.tools.deny.is_empty() {
            return Err(CliError::Usage(
                "--allow and --deny filter the servers' tools of mcp bridge --config FILE".into(),
            ));
        }
    }
    let config = upstream_config(cli)?;
    if let Command::Bridge(args) = &cli.command
        && let Some(addr) = args.http.listen
    {
        return listen::run(cli, ui, args, addr, config).await;
    }
    let mut stdin = mcp_tokio::stdio::stdin();
    let mut stdout = mcp_tokio::stdio::stdout();
    // Stopped before there is an upstream: nothing to cancel or close.
    let init = tokio::select! {
        init = await_initialize(&mut stdin, &mut stdout) => init?,
        () = stop::requested() => return Ok(Exit::Ok),
    };
    let Some(init) = init else {
        tracing::info!("bridge: the host closed stdin before initialize");
        return Ok(Exit::Ok);
    };

    let host = HostSlot::default();
    let connecting = async {
        let mut connected =
            upstream::connect(cli, ui, config.clone(), &init.params, host.clone()).await;
        // A browser login only helps a server that offers OAuth.
        if matches!(connected, Err(CliError::LoginRequired { oauth: true, .. }))
            && super::auth::terminal_present()
        {
            connected =
                login_and_connect(cli, ui, config.clone(), &init.params, host.clone()).await;
        }
        connected
    };
    // Stopped while connecting: the half-made connection is dropped (a child is killed).
    let connected = tokio::select! {
        connected = connecting => connected,
        () = stop::requested() => return Ok(Exit::Ok),
    };
    let client = match connected {
        Ok(c) => c,
        Err(e) => {
            // The host learns why (and what to do: `mcp login`, say) in the answer to its
            // `initialize`; the user also on stderr.
            let mut error =
                upstream_failure::for_host(&upstream_failure::upstream_name(&config), &e, true);
            // Only a login is something the host's user can act on from the host; the other
            // hints speak of this terminal (`-v`, stderr "above"), which the host does not show.
            if let CliError::LoginRequired { .. } = e
                && let Some(hint) = e.hint()
            {
                error.message = format!("{} ({hint})", error.message);
            }
            let answer = serde_json::json!({"jsonrpc": "2.0", "id": init.id, "error": error});
            let mut line = answer.to_string().into_bytes();
            line.push(b'\n');
            // The host may be gone already; the error below is what matters.
            let _ = stdout.write_all(&line).await;
            let _ = stdout.flush().await;
            return Err(e);
        }
    };
    tracing::info!(
        "bridge: connected to {} {} (protocol {})",
        client.server_info().name,
        client.server_info().version,
        client.protocol_version()
    );
    // Subscribed now, so nothing the server sends from here on is missed.
    let (forwarder, mut calls_ended) =
        Forwarder::new(client.clone(), forward::RequestBound::of(&cli.connection));
    let health = std::sync::Arc::new(upstream_health::UpstreamHealth::new(ui.clone()));
    let forwarder = upstream_health::watched(forwarder, &config, &health);
    let (forwarder, host_pump) = forwarder.with_host_pump();
    let host_config = host_server_config(&client);
    // The host's own `initialize`, asking for the version the server agreed to: the session
    // answers it with that version (every version the client speaks, the session speaks).
    // Replayed ahead of the rest of stdin.
    let mut params = serde_json::to_value(&init.params)
        .map_err(|e| CliError::closed(std::io::Error::other(e)))?;
    params["protocolVersion"] = Value::from(client.protocol_version().as_str());
    let initialize = serde_json::json!({"jsonrpc": "2.0", "id": init.id, "method": "initialize", "params": params});
    let mut replay = initialize.to_string().into_bytes();
    replay.push(b'\n');
    replay.extend_from_slice(&init.rest);
    let input = std::io::Cursor::new(replay).chain(stdin);

    // Without the grace, the end of stdin would cancel every request read with it (all of
    // a piped script's but the replayed `initialize`) before it was answered.
    let server = Server::new(host_config).eof_grace(aggregate::EOF_GRACE);
    let (handle, driver) = mcp_tokio::server::start(server, forwarder, input, stdout);
    // Set once, here: the slot was empty until the host session existed.
    let _ = host.set(handle.clone());
    let pump = {
        let handle = handle.clone();
        tokio::spawn(async move { host_pump.run(&handle).await })
    };
    // The driver runs on a task of its own rather than inside this future, which is the
    // runtime's `block_on` future: every wake-up of that one makes the current-thread
    // scheduler poll the reactor (an `epoll_wait` that does not wait) before polling it, an
    // extra system call on every call forwarded. Dropping `driver` aborts the task, which
    // drops the driver's future as dropping it here did.
    let mut driver = DriverTask(tokio::spawn(driver));
    let exit = tokio::select! {
        reason = &mut driver.0 => {
            match reason {
                Ok(reason) => tracing::info!("bridge: the host session ended: {reason}"),
                Err(e) => tracing::warn!("bridge: the host session's driver failed: {e}"),
            }
            Ok(Exit::Ok)
        }
        ended = client.ended() => {
            // In `mcp`'s words: the server's command and how it ended, or what happened to
            // the connection to its URL.
            let error = crate::app::connect::call_error(ended);
            tracing::warn!("bridge: the server's connection ended: {error}");
            // Every forwarded call fails now that the connection is gone: let those errors
            // reach the host as answers (none of its requests is left unanswered), then end
            // the session; answers already queued are written before the driver finishes.
            answer_open_requests(&handle, &mut calls_ended).await;
            handle.close();
            let _ = (&mut driver.0).await;
            Err(error)
        }
        () = stop::requested() => {
            // Ending the host session drops its running requests: each is cancelled
            // upstream with the stop's reason (see `forward`), then the session is closed
            // below. The caller exits with the signal's status.
            tracing::info!("bridge: stopping: {}", stop::reason().unwrap_or_default());
            handle.close();
            let _ = (&mut driver.0).await;
            Ok(Exit::Ok)
        }
    };
    pump.abort();
    // The host's requests still running are cancelled as the driver drops them (each queues
    // its `notifications/cancelled`); once all are gone, closing sends those, then the DELETE.
    if tokio::time::timeout(CANCEL_BOUND, calls_ended.wait())
        .await
        .is_err()
    {
        tracing::warn!("bridge: upstream calls still cancelling; closing anyway");
    }
    client.close().await;
    exit
}
