//! The sans-IO core (`mcp-proto`) in a hand-written loop: no async runtime, no driver. A
//! child process and a reader thread are the I/O; the loop follows the core's one rule:
//! after every input, drain `poll_transmit`, drain `poll_event`, then wait until the next
//! input or `poll_timeout`, whichever comes first.
//!
//! ```text
//! cargo run -p mcp-tokio --example sans_io                 # runs `mcp demo-server`
//! cargo run -p mcp-tokio --example sans_io -- COMMAND [ARGS...]
//! ```

use std::io::{Read as _, Write as _};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use mcp_tokio::mcp_proto::connection::Event as ConnEvent;
use mcp_tokio::mcp_proto::session::{Event, RequestOptions, SessionConfig};
use mcp_tokio::mcp_proto::stdio::StdioConnection;
use mcp_tokio::types::{
    CallTool, CallToolParams, CallToolResult, Implementation, ListTools, ListToolsResult,
};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (program, rest) = match args.split_first() {
        Some((program, rest)) => (program.clone(), rest.to_vec()),
        None => ("mcp".to_owned(), vec!["demo-server".to_owned()]),
    };
    let mut child = Command::new(program)
        .args(rest)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let mut stdin = child.stdin.take().ok_or("no stdin pipe")?;
    let mut stdout = child.stdout.take().ok_or("no stdout pipe")?;

    // The reader thread: chunks of the child's stdout (cut anywhere), then `None` at EOF.
    let (tx, rx) = mpsc::channel::<Option<Vec<u8>>>();
    std::thread::spawn(move || {
        let mut buf = [0u8; 8192];
        loop {
            match stdout.read(&mut buf) {
                Ok(0) | Err(_) => {
                    let _ = tx.send(None);
                    return;
                }
                Ok(n) => {
                    if tx.send(Some(buf[..n].to_vec())).is_err() {
                        return;
                    }
                }
            }
        }
    });

    let config = SessionConfig::new(Implementation::new("sans-io-example", "0.1.0"));
    let mut conn = StdioConnection::new(config, Instant::now());
    // Requests may be issued before the handshake finished: they go out after it.
    let list =
        conn.session_mut()
            .request::<ListTools>(Instant::now(), &None, RequestOptions::new())?;
    let mut echo = None;
    let mut wire = Vec::new();
    loop {
        // 1. Everything the core wants written.
        wire.clear();
        while conn.poll_transmit(&mut wire).is_some() {}
        if !wire.is_empty() {
            stdin.write_all(&wire)?;
            stdin.flush()?;
        }
        // 2. Everything the core has to say.
        let mut done = false;
        // A command issued while handling events is another mutation: drain again first.
        let mut issued = false;
        while let Some(event) = conn.poll_event() {
            // The stdio connection's own events (a respawn, for the Auto era probe) do not
            // occur with the default era policy.
            let ConnEvent::Session(event) = event else {
                continue;
            };
            match event {
                Event::Ready { version, .. } => {
                    let info = conn.session().server_info().map(|i| i.name.clone());
                    println!("ready: {} (protocol {version})", info.unwrap_or_default());
                }
                Event::Completed { handle, result } if handle == list => {
                    let tools: ListToolsResult = result?.decode()?;
                    let names: Vec<&str> = tools.tools.iter().map(|t| t.name.as_str()).collect();
                    // The first page only: `next_cursor` would ask for the next one.
                    println!("tools (first page): {}", names.join(", "));
                    let mut arguments = serde_json::Map::new();
                    arguments.insert("text".into(), "sans-IO".into());
                    let params = CallToolParams::new("echo", arguments);
                    echo = Some(conn.session_mut().request::<CallTool>(
                        Instant::now(),
                        &params,
                        RequestOptions::new(),
                    )?);
                    issued = true;
                }
                Event::Completed { handle, result } if Some(handle) == echo => {
                    let result: CallToolResult = result?.decode()?;
                    println!("echo -> {}", result.content[0].as_text().unwrap_or("?"));
                    conn.close(Instant::now());
                    issued = true;
                }
                Event::Closed { reason } => {
                    println!("closed: {reason}");
                    done = true;
                }
                _ => {}
            }
        }
        if done {
            break;
        }
        if issued {
            continue;
        }
        // 3. Wait for input, or until the core's next deadline.
        let now = Instant::now();
        let wait = conn.poll_timeout().map_or(Duration::from_secs(3600), |t| {
            t.saturating_duration_since(now)
        });
        match rx.recv_timeout(wait) {
            Ok(Some(chunk)) => conn.handle_bytes(Instant::now(), &chunk),
            Ok(None) | Err(mpsc::RecvTimeoutError::Disconnected) => {
                conn.handle_eof(Instant::now(), None);
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                conn.handle_timeout(Instant::now());
            }
        }
    }
    // The graceful end of a stdio server: close its stdin, then reap it.
    drop(stdin);
    let status = child.wait()?;
    println!("server exited: {status}");
    Ok(())
}
