//! The core in a hand-written loop: lists a server's tools over stdio or over Streamable
//! HTTP, with nothing but blocking `std` I/O.
//!
//! ```text
//! cargo run -p mcp-proto --example hand_loop -- stdio my-mcp-server [ARGS...]
//! cargo run -p mcp-proto --example hand_loop -- http http://127.0.0.1:8000/mcp
//! ```
//!
//! Both loops have one shape, the one contract of the crate: after every input or command,
//! (1) carry out the transmit output, (2) drain the events, (3) wait for the next input or
//! the deadline of `poll_timeout`. Only the transport's own calls differ: `poll_transmit`
//! and `handle_bytes` over stdio, `poll_exchange` / `poll_abort` and the `handle_response_*`
//! inputs over HTTP. Blocking reads keep the sketch short: a real driver waits for input and
//! the deadline at once (`mcp-driver` does, for every runtime). The HTTP side speaks plain
//! `http://` only and opens no GET listener (a blocking exchange could not end).

use std::error::Error;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Instant;

use mcp_proto::connection::Event;
use mcp_proto::http::headers::HeaderList;
use mcp_proto::http::{self, ConnectionConfig, ExchangeFailure, FailureKind, HttpRequest};
use mcp_proto::session::{self, RequestHandle, RequestOptions, SessionConfig};
use mcp_proto::stdio::StdioConnection;
use mcp_proto::types::{Implementation, ListTools};

type Result<T> = std::result::Result<T, Box<dyn Error>>;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let tools = match args.split_first() {
        Some((mode, rest)) if mode == "stdio" && !rest.is_empty() => over_stdio(rest)?,
        Some((mode, [url])) if mode == "http" => over_http(url)?,
        _ => return Err("usage: hand_loop stdio COMMAND [ARGS...] | hand_loop http URL".into()),
    };
    println!("{tools}");
    Ok(())
}

fn session_config() -> SessionConfig {
    SessionConfig::new(Implementation::new("hand-loop", "0.1"))
}

/// What the host does with an event: the `tools/list` answer (or the end of the session)
/// ends the loop.
fn on_event<T: std::fmt::Debug>(event: Event<T>, tools: RequestHandle) -> Option<Result<String>> {
    match event {
        Event::Session(session::Event::Completed { handle, result }) if handle == tools => {
            Some(result.map(|r| r.get().to_owned()).map_err(Into::into))
        }
        Event::Session(session::Event::Closed { reason }) => {
            Some(Err(format!("the session closed: {reason}").into()))
        }
        // Stdio's `Respawn` comes only with `EraPolicy::Auto`; HTTP reports session resets,
        // resumed streams, the end of the DELETE.
        Event::Transport(report) => {
            eprintln!("transport: {report:?}");
            None
        }
        Event::Session(_) => None, // Ready, notifications, diagnostics, ...
    }
}

fn over_stdio(command: &[String]) -> Result<String> {
    let mut child = Command::new(&command[0])
        .args(&command[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?;
    let (Some(mut stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err("the child's stdio is not piped".into());
    };
    let mut stdout = BufReader::new(stdout);
    let mut conn = StdioConnection::new(session_config(), Instant::now());
    // A command, issued before the handshake finished: it waits, then goes out.
    let options = RequestOptions::new();
    let tools = conn
        .session_mut()
        .request::<ListTools>(Instant::now(), &None, options)?;
    let (mut answer, mut out, mut line) = (None, Vec::new(), String::new());
    while !conn.is_finished() {
        // 1. The transmit output: write it.
        while conn.poll_transmit(&mut out).is_some() {}
        stdin.write_all(&out)?;
        out.clear();
        // 2. The events: act on them.
        while let Some(event) = conn.poll_event() {
            if let Some(result) = on_event(event, tools) {
                answer.get_or_insert(result);
                conn.close(Instant::now()); // a command
            }
        }
        if conn.is_finished() {
            break;
        }
        // 3. The inputs: a real loop waits for input OR `conn.poll_timeout()` (then calls
        //    `conn.handle_timeout(now)`); blocking reads keep this sketch short.
        line.clear();
        if stdout.read_line(&mut line)? == 0 {
            conn.handle_eof(Instant::now(), None); // an input
        } else {
            conn.handle_bytes(Instant::now(), line.as_bytes()); // an input
        }
    }
    // The session's last messages (a cancellation) still go out; the server may be gone.
    while conn.poll_transmit(&mut out).is_some() {}
    let _ = stdin.write_all(&out);
    drop(stdin); // closing stdin is how a stdio server is asked to exit
    child.wait()?;
    answer.unwrap_or_else(|| Err("the session ended without an answer".into()))
}

fn over_http(url: &str) -> Result<String> {
    let mut config = ConnectionConfig::new(url.parse()?);
    config.listen = false; // no GET listener: a blocking exchange of it would never end
    let mut conn = http::Connection::new(config, session_config(), Instant::now());
    // A command, issued before the handshake finished: it waits, then goes out.
    let options = RequestOptions::new();
    let tools = conn
        .session_mut()
        .request::<ListTools>(Instant::now(), &None, options)?;
    let mut answer = None;
    while !conn.is_finished() {
        // 1. The transmit output: perform each exchange, feeding its response back (inputs).
        while let Some(exchange) = conn.poll_exchange(Instant::now()) {
            perform(&mut conn, &exchange);
        }
        while conn.poll_abort().is_some() {} // each exchange already ended
        // 2. The events: act on them.
        while let Some(event) = conn.poll_event() {
            if let Some(result) = on_event(event, tools) {
                answer.get_or_insert(result);
                conn.close(Instant::now()); // a command
            }
        }
        if conn.is_finished() {
            break;
        }
        // 3. The inputs. A command of step 2 (the close: its DELETE) may have asked for
        //    exchanges: step 1 performs them first. Otherwise every exchange is done, and only
        //    the deadline is left to wait for.
        if conn.open_exchanges() > 0 {
            continue;
        }
        match conn.poll_timeout() {
            Some(at) => {
                std::thread::sleep(at.saturating_duration_since(Instant::now()));
                conn.handle_timeout(Instant::now()); // an input
            }
            // No deadline and no exchange open (each ended in step 1): nothing can happen.
            None => break,
        }
    }
    answer.unwrap_or_else(|| Err("the session ended without an answer".into()))
}

/// Performs one exchange over HTTP/1.1 (plain `http://`, `Connection: close`) and reports its
/// response to the connection: head, body chunks, end; or the failure.
fn perform(conn: &mut http::Connection, x: &HttpRequest) {
    let id = x.id;
    let failure = |kind, e: std::io::Error| ExchangeFailure::new(kind, e.to_string());
    let mut stream = match connect(x) {
        Ok(s) => s,
        Err(e) => return conn.handle_failure(Instant::now(), id, failure(FailureKind::Connect, e)),
    };
    let response = (|| -> std::io::Result<(u16, HeaderList, Vec<u8>)> {
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw)?;
        parse_response(&raw).ok_or_else(|| std::io::Error::other("not an HTTP/1.1 response"))
    })();
    match response {
        Ok((status, headers, body)) => {
            conn.handle_response_head(Instant::now(), id, status, headers);
            conn.handle_body(Instant::now(), id, &body);
            conn.handle_body_end(Instant::now(), id);
        }
        Err(e) => conn.handle_failure(Instant::now(), id, failure(FailureKind::Reset, e)),
    }
}

/// Opens the connection and writes the request.
fn connect(x: &HttpRequest) -> std::io::Result<TcpStream> {
    let addrs = x.url.socket_addrs(|| Some(80))?;
    let mut stream = TcpStream::connect(&*addrs)?;
    let host = x.url.host_str().unwrap_or_default();
    let port = x.url.port().map(|p| format!(":{p}")).unwrap_or_default();
    let target = &x.url[url::Position::BeforePath..url::Position::AfterQuery];
    let mut head = format!(
        "{} {target} HTTP/1.1\r\nHost: {host}{port}\r\n",
        x.method.as_str()
    );
    for (name, value) in x.headers.iter() {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        x.body.len()
    ));
    stream.write_all(head.as_bytes())?;
    stream.write_all(&x.body)?;
    Ok(stream)
}

/// Splits a whole HTTP/1.1 response into status, headers and body (chunked bodies decoded).
fn parse_response(raw: &[u8]) -> Option<(u16, HeaderList, Vec<u8>)> {
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&raw[..end]).ok()?;
    let mut lines = head.split("\r\n");
    let status = lines.next()?.split(' ').nth(1)?.parse().ok()?;
    let mut headers = HeaderList::new();
    for line in lines {
        let (name, value) = line.split_once(':')?;
        headers.append(name.trim(), value.trim());
    }
    let mut body = raw[end + 4..].to_vec();
    if headers
        .get("transfer-encoding")
        .is_some_and(|v| v.eq_ignore_ascii_case("chunked"))
    {
        body = dechunk(&body)?;
    }
    Some((status, headers, body))
}

/// Decodes a chunked body.
fn dechunk(mut rest: &[u8]) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let eol = rest.windows(2).position(|w| w == b"\r\n")?;
        let size_field = std::str::from_utf8(&rest[..eol]).ok()?;
        let size = usize::from_str_radix(size_field.split(';').next()?.trim(), 16).ok()?;
        rest = &rest[eol + 2..];
        if size == 0 {
            return Some(body);
        }
        body.extend_from_slice(rest.get(..size)?);
        rest = rest.get(size + 2..)?;
    }
}
