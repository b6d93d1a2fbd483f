//! `mcp bridge --url URL`: a stdio MCP server for a host (a desktop app, an IDE) that forwards
//! everything to a remote Streamable HTTP / legacy SSE server.
//!
//! The host's side is the core's [`ServerSession`] over newline-delimited JSON on stdin and
//! stdout; the remote side is a [`Client`](mcp_tokio::Client). The upstream connection is made
//! when the host sends `initialize`, with the host's client info, capabilities and protocol
//! version ([`upstream::connect`]); the host session then answers that `initialize` with the
//! server's own `serverInfo`, capabilities, instructions and negotiated version, so the host
//! sees what it would see directly. [`forward::Forwarder`] maps everything after that.
//!
//! Before `initialize`, a session with no capabilities answers the host (`ping`, errors for
//! anything else). When the host closes stdin, the requests still running upstream are
//! cancelled (`notifications/cancelled`), the upstream session is closed (HTTP `DELETE`) and
//! the bridge exits 0. When the upstream connection ends, the bridge ends the host session
//! and exits 3. stdout carries only the protocol; logs go to stderr.

pub mod forward;
pub mod upstream;

use std::io;

use mcp_manager::config::TransportConfig;
use mcp_proto::framing::lines::{Line, LineDecoder, encode_line};
use mcp_proto::jsonrpc::ErrorObject;
use mcp_proto::server::{ServerConfig, ServerSession};
use mcp_proto::types::Implementation;
use serde_json::Value;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::sync::mpsc;

use super::ui::Ui;
use crate::args::Cli;
use crate::exit::{CliError, Exit};
use forward::{Forwarder, UpstreamQueue};
use upstream::ToHost;

/// How long the bridge waits for cancelled upstream calls to end before it closes the
/// upstream session anyway.
const CANCEL_BOUND: std::time::Duration = std::time::Duration::from_secs(5);

/// How much of stdin is read at once.
const READ_CHUNK: usize = 64 * 1024;

/// A line read from the host, owned (lines are kept across the upstream connect).
enum HostLine {
    Text(String),
    /// Not UTF-8: the session answers it as a parse error.
    Bytes(Vec<u8>),
}

impl HostLine {
    fn feed(&self, session: &mut ServerSession, now: std::time::Instant) {
        match self {
            HostLine::Text(t) => session.handle_message_str(now, t),
            HostLine::Bytes(b) => session.handle_message(now, b),
        }
    }
}

/// Splits `chunk` into the host's lines (an over-long line is dropped and logged).
fn split_lines(decoder: &mut LineDecoder, chunk: &[u8], lines: &mut Vec<HostLine>) {
    decoder.decode(chunk, |line| match line {
        Line::Message(text) => lines.push(HostLine::Text(text.to_owned())),
        Line::InvalidUtf8 { bytes, .. } => lines.push(HostLine::Bytes(bytes.to_vec())),
        Line::TooLong { discarded, limit } => {
            tracing::warn!("bridge: dropped a {discarded}-byte line from the host (limit {limit})");
        }
        #[allow(unreachable_patterns)] // `Line` is non_exhaustive
        _ => {}
    });
}

/// The `id` and params of the host's line when it is an `initialize` request.
fn as_initialize(line: &HostLine) -> Option<(Value, Option<Value>)> {
    let HostLine::Text(text) = line else {
        return None;
    };
    let Ok(Value::Object(mut message)) = serde_json::from_str::<Value>(text) else {
        return None;
    };
    if message.get("method").and_then(Value::as_str) != Some("initialize") {
        return None;
    }
    let id = message.remove("id")?;
    Some((id, message.remove("params")))
}

/// Reads stdin into a bounded channel (so a host that floods the bridge is held back, not
/// buffered); the channel closes at end of input.
fn read_stdin() -> mpsc::Receiver<io::Result<Vec<u8>>> {
    let (tx, rx) = mpsc::channel(4);
    tokio::spawn(async move {
        let mut stdin = tokio::io::stdin();
        let mut buf = vec![0u8; READ_CHUNK];
        loop {
            match stdin.read(&mut buf).await {
                Ok(0) => return,
                Ok(n) => {
                    if tx.send(Ok(buf[..n].to_vec())).await.is_err() {
                        return;
                    }
                }
                Err(e) => {
                    let _ = tx.send(Err(e)).await;
                    return;
                }
            }
        }
    });
    rx
}

/// Writes what the session has queued for the host, one line per message.
async fn flush(
    session: &mut ServerSession,
    stdout: &mut tokio::io::Stdout,
    buf: &mut Vec<u8>,
) -> io::Result<()> {
    let mut scratch = Vec::new();
    while session.poll_transmit(&mut scratch).is_some() {
        encode_line(buf, &scratch);
        scratch.clear();
    }
    if !buf.is_empty() {
        stdout.write_all(buf).await?;
        stdout.flush().await?;
        buf.clear();
    }
    Ok(())
}

/// Runs `mcp bridge`: serves stdio until the host closes stdin or the upstream connection
/// ends.
pub async fn run(cli: &Cli, ui: &Ui) -> Result<Exit, CliError> {
    if cli.connection.url.is_none() {
        return Err(CliError::Usage(
            "mcp bridge needs --url URL: the remote server to forward to".into(),
        ));
    }
    let config = super::connect::server_config(cli)?;
    if !matches!(config.transport, TransportConfig::Http(_)) {
        return Err(CliError::Usage(
            "mcp bridge --url forwards to an HTTP server".into(),
        ));
    }
    let mut stdin = read_stdin();
    let mut stdout = tokio::io::stdout();
    let mut out = Vec::new();
    let mut decoder = LineDecoder::new();
    let mut lines = Vec::new();

    // Until `initialize`: a session of no capabilities answers `ping` and refuses the rest.
    let now = std::time::Instant::now();
    let mut waiting = ServerSession::new(
        ServerConfig::new(Implementation::new("mcp-bridge", env!("CARGO_PKG_VERSION"))),
        now,
    );
    let (init_id, init_params, mut backlog) = 'initialize: loop {
        let Some(chunk) = stdin.recv().await else {
            tracing::info!("bridge: the host closed stdin before initialize");
            return Ok(Exit::Ok);
        };
        let chunk = chunk.map_err(CliError::closed)?;
        split_lines(&mut decoder, &chunk, &mut lines);
        let mut drained = lines.drain(..);
        while let Some(line) = drained.by_ref().next() {
            let now = std::time::Instant::now();
            if let Some((id, params)) = as_initialize(&line) {
                match upstream::initialize_params(params.as_ref()) {
                    Ok(p) => break 'initialize (id, p, drained.collect::<Vec<_>>()),
                    // Unreadable params: the waiting session answers the error itself.
                    Err(_) => line.feed(&mut waiting, now),
                }
            } else {
                line.feed(&mut waiting, now);
            }
            while waiting.poll_event().is_some() {}
        }
        drop(drained);
        flush(&mut waiting, &mut stdout, &mut out)
            .await
            .map_err(CliError::closed)?;
    };
    flush(&mut waiting, &mut stdout, &mut out)
        .await
        .map_err(CliError::closed)?;
    drop(waiting);

    let (to_host_tx, mut to_host) = mpsc::channel::<ToHost>(64);
    let client = match upstream::connect(cli, ui, config, &init_params, to_host_tx).await {
        Ok(c) => c,
        Err(e) => {
            // The host learns why in the answer to its `initialize`; the user on stderr.
            let error = ErrorObject::new(
                ErrorObject::INTERNAL_ERROR,
                format!("mcp bridge could not reach the server: {e}"),
            );
            let answer = serde_json::json!({"jsonrpc": "2.0", "id": init_id, "error": error});
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
    let mut notifications = client.notifications();
    let mut host_config = ServerConfig::new(client.server_info().clone())
        .with_capabilities(client.capabilities().clone())
        .with_request_timeout(None);
    if let Some(instructions) = client.instructions() {
        host_config = host_config.with_instructions(instructions);
    }
    let now = std::time::Instant::now();
    let mut session = ServerSession::new(host_config, now);
    // The host's own `initialize`, asking for the version the server agreed to: the session
    // answers it with that version (every version the client speaks, the session speaks).
    let mut params =
        serde_json::to_value(&init_params).map_err(|e| CliError::closed(io::Error::other(e)))?;
    params["protocolVersion"] = Value::from(client.protocol_version().as_str());
    let initialize = serde_json::json!({"jsonrpc": "2.0", "id": init_id, "method": "initialize", "params": params});
    session.handle_message_str(now, &initialize.to_string());
    for line in backlog.drain(..) {
        line.feed(&mut session, now);
    }

    let (queue, mut answers) = UpstreamQueue::new();
    let mut fwd = Forwarder::new(client.clone(), queue, cli.connection.timeout);
    let mut exit = Ok(Exit::Ok);
    let mut host_open = true;
    loop {
        let now = std::time::Instant::now();
        while let Some(event) = session.poll_event() {
            host_open &= fwd.on_host_event(&mut session, now, event);
        }
        if let Err(e) = flush(&mut session, &mut stdout, &mut out).await {
            tracing::info!("bridge: the host stopped reading: {e}");
            session.handle_transport_closed(now, Some(e.to_string()));
            break;
        }
        if !host_open {
            break;
        }
        let timer = session.poll_timeout();
        tokio::select! {
            chunk = stdin.recv() => match chunk {
                Some(Ok(chunk)) => {
                    split_lines(&mut decoder, &chunk, &mut lines);
                    for line in lines.drain(..) {
                        line.feed(&mut session, now);
                    }
                }
                Some(Err(e)) => session.handle_transport_closed(now, Some(e.to_string())),
                None => {
                    decoder.finish(|line| {
                        if let Line::Message(text) = line {
                            session.handle_message_str(now, text);
                        }
                    });
                    session.handle_transport_closed(now, None);
                }
            },
            Some(message) = answers.recv() => fwd.on_upstream(&mut session, now, message),
            Some(message) = to_host.recv() => fwd.on_to_host(&mut session, now, message),
            notification = notifications.recv() => match notification {
                Some(Ok(n)) => fwd.on_notification(&mut session, now, n),
                Some(Err(lagged)) => tracing::warn!("bridge: {lagged}"),
                None => {}
            },
            reason = client.closed() => {
                tracing::warn!("bridge: the server's connection ended: {reason}");
                exit = Err(CliError::Closed(format!("the server's connection ended: {reason}")));
                session.close(now);
                while let Some(event) = session.poll_event() {
                    fwd.on_host_event(&mut session, now, event);
                }
                // Answers already queued still reach the host.
                let _ = flush(&mut session, &mut stdout, &mut out).await;
                break;
            }
            () = sleep_until(timer) => session.handle_timeout(now),
        }
    }
    let cancelled = fwd.cancel_all();
    if cancelled > 0 {
        tracing::info!("bridge: cancelling {cancelled} request(s) still running upstream");
        // Each cancelled call ends once its `notifications/cancelled` is handed to the
        // connection; closing before that would end the session with the work still running.
        let ended = async {
            let mut left = cancelled;
            while left > 0 {
                match answers.recv().await {
                    Some(forward::Upstream::Answer(..)) => left -= 1,
                    Some(forward::Upstream::Progress(..)) => {}
                    None => return,
                }
            }
        };
        if tokio::time::timeout(CANCEL_BOUND, ended).await.is_err() {
            tracing::warn!("bridge: upstream calls still cancelling; closing anyway");
        }
    }
    fwd.client().close().await;
    exit
}

/// Sleeps until `at`, or forever without a deadline.
async fn sleep_until(at: Option<std::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => std::future::pending().await,
    }
}
