//! The loopback redirect listener of a native app (RFC 8252 §7.3): an HTTP listener on
//! `127.0.0.1` with an ephemeral port, at `http://127.0.0.1:<port>/callback`, that waits for
//! the browser to bring back the authorization response.
//!
//! It runs on a thread of its own with blocking `std::net` sockets, so it works under any
//! runtime (the future it returns is a channel). It decides only which request is the
//! redirect; whether the redirect is acceptable (`state`, `iss`, `error`) is decided again by
//! the core ([`AuthFlow::handle_redirect`](mcp_proto::auth::AuthFlow::handle_redirect)).

use std::io::{self, Read as _, Write as _};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use url::Url;

/// The path of the redirect URI.
pub const CALLBACK_PATH: &str = "/callback";

/// How long [`LoopbackListener::wait`] waits by default.
pub const DEFAULT_LOOPBACK_TIMEOUT: Duration = Duration::from_secs(300);

/// How often the listener thread looks for a connection (and for its waiter having gone).
const POLL: Duration = Duration::from_millis(25);
/// How long one browser connection may take to send its request head or read the answer.
const IO_TIMEOUT: Duration = Duration::from_secs(5);
/// The largest request head read.
const MAX_HEAD: usize = 16 * 1024;

/// A listener on `127.0.0.1:<ephemeral port>` for the authorization redirect.
///
/// Bind it before the flow starts, give the flow [`redirect_uri`](Self::redirect_uri)
/// (with [`AuthProvider::redirect_uri`](super::AuthProvider::redirect_uri)), and let a
/// [`BrowserAuthorizer`](super::BrowserAuthorizer) call [`wait`](Self::wait) once the
/// authorization URL is known. It listens on the loopback interface only.
#[derive(Clone, Debug)]
pub struct LoopbackListener {
    listener: Arc<TcpListener>,
    port: u16,
    timeout: Duration,
}

impl LoopbackListener {
    /// Binds `127.0.0.1:0` (the OS picks a free port).
    ///
    /// # Errors
    ///
    /// The socket could not be bound or made non-blocking.
    pub fn bind() -> io::Result<Self> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
        listener.set_nonblocking(true)?;
        let port = listener.local_addr()?.port();
        Ok(Self {
            listener: Arc::new(listener),
            port,
            timeout: DEFAULT_LOOPBACK_TIMEOUT,
        })
    }

    /// How long [`wait`](Self::wait) waits for the redirect (default
    /// [`DEFAULT_LOOPBACK_TIMEOUT`]).
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The port the OS picked.
    #[must_use]
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `http://127.0.0.1:<port>/callback`: register and send exactly this.
    #[must_use]
    pub fn redirect_uri(&self) -> Url {
        // Invariant: an IPv4 literal, a port and a fixed path always form a valid URL.
        Url::parse(&format!("http://127.0.0.1:{}{CALLBACK_PATH}", self.port))
            .expect("a loopback URL is valid")
    }

    /// Waits for the browser's `GET /callback?...&state=<state>` and resolves with the full
    /// redirect URL; the browser gets a small page saying it may close the tab.
    ///
    /// Other requests do not end the wait: another path is answered 404, another method 405,
    /// a callback with a missing or different `state` 400 (so a stray or forged request cannot
    /// end the authorization), a callback with neither `code` nor `error` 400. A callback with
    /// the right `state` and an `error` resolves too (the flow reports the refusal). Resolves
    /// with `Err` after the timeout. Dropping the future stops the listener thread within a few
    /// milliseconds.
    pub fn wait(&self, state: String) -> super::AuthorizeFuture {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let listener = self.listener.clone();
        let (port, timeout) = (self.port, self.timeout);
        let spawned = std::thread::Builder::new()
            .name("mcp-oauth-loopback".into())
            .spawn(move || {
                let result = serve(&listener, port, &state, timeout, || tx.is_closed());
                let _ = tx.send(result);
            });
        Box::pin(async move {
            spawned.map_err(|e| format!("cannot start the loopback listener: {e}"))?;
            rx.await
                .unwrap_or_else(|_| Err("the loopback listener stopped".into()))
        })
    }
}

/// What one connection turned out to be.
enum Visit {
    /// The redirect: the full URL.
    Redirect(String),
    /// Something else, answered; keep waiting.
    Other,
}

/// Accepts connections until the redirect arrives, `timeout` passes or `gone()` says nobody
/// waits any more.
fn serve(
    listener: &TcpListener,
    port: u16,
    state: &str,
    timeout: Duration,
    gone: impl Fn() -> bool,
) -> Result<String, String> {
    let deadline = Instant::now() + timeout;
    loop {
        if gone() {
            return Err("nobody waits for the redirect".into());
        }
        if Instant::now() >= deadline {
            let within = if timeout.subsec_millis() == 0 {
                format!("{}s", timeout.as_secs())
            } else {
                format!("{}ms", timeout.as_millis())
            };
            return Err(format!(
                "no authorization redirect reached http://127.0.0.1:{port}{CALLBACK_PATH} within {within}"
            ));
        }
        match listener.accept() {
            Ok((stream, _)) => match visit(stream, port, state) {
                Ok(Visit::Redirect(url)) => return Ok(url),
                Ok(Visit::Other) => {}
                Err(e) => tracing::debug!(error = %e, "a loopback connection failed"),
            },
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => std::thread::sleep(POLL),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(format!("the loopback listener failed: {e}")),
        }
    }
}

/// Reads one request head and answers it.
fn visit(mut stream: TcpStream, port: u16, state: &str) -> io::Result<Visit> {
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(IO_TIMEOUT))?;
    stream.set_write_timeout(Some(IO_TIMEOUT))?;
    let head = read_head(&mut stream)?;
    let line = head.lines().next().unwrap_or("");
    let mut parts = line.split(' ');
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    if path != CALLBACK_PATH {
        answer(
            &mut stream,
            404,
            "Not found",
            "This is not the authorization callback.",
        )?;
        return Ok(Visit::Other);
    }
    if method != "GET" {
        answer(
            &mut stream,
            405,
            "Method not allowed",
            "The callback takes a GET.",
        )?;
        return Ok(Visit::Other);
    }
    let (mut got_state, mut has_code, mut has_error) = (None, false, false);
    for (k, v) in url::form_urlencoded::parse(query.as_bytes()) {
        match &*k {
            "state" => got_state = Some(v.into_owned()),
            "code" => has_code = true,
            "error" => has_error = true,
            _ => {}
        }
    }
    if got_state.as_deref() != Some(state) {
        tracing::debug!("a callback with a wrong state was refused");
        answer(
            &mut stream,
            400,
            "Authorization not accepted",
            "This response does not belong to the authorization in progress (state mismatch).",
        )?;
        return Ok(Visit::Other);
    }
    if has_error {
        answer(
            &mut stream,
            200,
            "Authorization refused",
            "The authorization was refused. You can close this tab and return to the terminal.",
        )?;
    } else if has_code {
        answer(
            &mut stream,
            200,
            "Authorized",
            "Authorization complete. You can close this tab and return to the terminal.",
        )?;
    } else {
        answer(
            &mut stream,
            400,
            "Authorization not accepted",
            "The response carries neither a code nor an error.",
        )?;
        return Ok(Visit::Other);
    }
    Ok(Visit::Redirect(format!("http://127.0.0.1:{port}{target}")))
}

fn read_head(stream: &mut TcpStream) -> io::Result<String> {
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buf)?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
        if head.len() > MAX_HEAD {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "request head too large",
            ));
        }
    }
    Ok(String::from_utf8_lossy(&head).into_owned())
}

/// A small HTML page. `title` and `text` are constants of this module (nothing from the
/// request is echoed, so nothing needs escaping).
fn answer(stream: &mut TcpStream, status: u16, title: &str, text: &str) -> io::Result<()> {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        _ => "Method Not Allowed",
    };
    let body = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>{title}</title></head>\
         <body style=\"font-family:sans-serif;margin:3em\"><h1>{title}</h1><p>{text}</p></body></html>\n"
    );
    let head = format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: text/html; charset=utf-8\r\n\
         content-length: {}\r\ncache-control: no-store\r\nreferrer-policy: no-referrer\r\n\
         connection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes())?;
    stream.write_all(body.as_bytes())?;
    stream.flush()
}

#[cfg(test)]
mod tests;
