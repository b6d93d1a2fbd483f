//! The echo server's Streamable HTTP mode: the answers of [`echo`], one JSON-RPC
//! message per `POST /mcp`, over HTTP/1.1 keep-alive connections (hyper), on one thread.
//!
//! Just enough of Streamable HTTP for a client to connect: a request gets `200` with an
//! `application/json` body (never SSE), a notification or response gets `202`, the
//! `initialize` answer carries an `Mcp-Session-Id` (every later request may send it; it is
//! not checked), `GET /mcp` (the listen stream) gets `405`, `DELETE /mcp` (session end) `200`.

use std::convert::Infallible;
use std::process::ExitCode;

use http_body_util::{BodyExt as _, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

use crate::echo;

/// The path the server answers on.
pub const PATH: &str = "/mcp";

/// The session id the `initialize` answer carries.
pub const SESSION_ID: &str = "mcp-bench-echo-session";

/// The largest request body read (a bench client never sends more).
const MAX_BODY: usize = 1 << 20;

/// What to answer to one POST body: the status, whether to attach the session id, the body.
#[must_use]
pub fn answer_post(body: &[u8]) -> (StatusCode, bool, Vec<u8>) {
    let Ok(text) = std::str::from_utf8(body) else {
        return (StatusCode::BAD_REQUEST, false, Vec::new());
    };
    let mut out = Vec::with_capacity(256);
    if !echo::answer_message(text, &mut out) {
        return (StatusCode::ACCEPTED, false, Vec::new());
    }
    // A substring test is enough here: only the handshake's request names this method, and
    // a false positive would only attach the (unchecked) session id once more.
    let initialize = text.contains(r#""method":"initialize""#);
    (StatusCode::OK, initialize, out)
}

/// Accepts connections on `listener` and serves each on its own task, until accepting fails.
///
/// # Errors
///
/// The error of `accept` (the listener is unusable).
pub async fn serve(listener: TcpListener) -> std::io::Result<()> {
    loop {
        let (stream, _) = listener.accept().await?;
        let _ = stream.set_nodelay(true);
        tokio::spawn(async move {
            // A connection error (the client went away mid-request) ends that connection only.
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service_fn(handle))
                .await;
        });
    }
}

/// The echo server as a child process of a benchmark: binds 127.0.0.1 on a free port,
/// prints the port on stdout, serves on one thread until its stdin closes (the benchmark
/// ended or died). What `e2e_http echo-server` and `bridge echo-http` run.
pub fn run_child() -> ExitCode {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        // Invariant: building a runtime only fails when the OS refuses fds.
        .expect("a tokio runtime");
    rt.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("binding 127.0.0.1");
        let port = listener.local_addr().expect("a bound address").port();
        println!("{port}");
        let stdin_closed = tokio::task::spawn_blocking(|| {
            let _ = std::io::copy(&mut std::io::stdin(), &mut std::io::sink());
        });
        tokio::select! {
            r = serve(listener) => {
                eprintln!("echo-server: {r:?}");
                ExitCode::FAILURE
            }
            _ = stdin_closed => ExitCode::SUCCESS,
        }
    })
}

async fn handle(req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let status = |s: StatusCode| {
        let mut r = Response::new(Full::new(Bytes::new()));
        *r.status_mut() = s;
        Ok(r)
    };
    if req.uri().path() != PATH {
        return status(StatusCode::NOT_FOUND);
    }
    match *req.method() {
        Method::POST => {}
        Method::DELETE => return status(StatusCode::OK),
        _ => return status(StatusCode::METHOD_NOT_ALLOWED),
    }
    let Ok(body) = Limited::new(req.into_body(), MAX_BODY).collect().await else {
        return status(StatusCode::BAD_REQUEST);
    };
    let (code, session, out) = answer_post(&body.to_bytes());
    let mut r = Response::new(Full::new(Bytes::from(out)));
    *r.status_mut() = code;
    if code == StatusCode::OK {
        r.headers_mut()
            .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    }
    if session {
        r.headers_mut()
            .insert("mcp-session-id", HeaderValue::from_static(SESSION_ID));
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_get_json_notifications_202_initialize_a_session() {
        let init = echo::handshake_lines();
        let mut lines = init.lines();
        let (code, session, body) = answer_post(lines.next().unwrap().as_bytes());
        assert_eq!((code, session), (StatusCode::OK, true));
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(v["result"]["protocolVersion"], "2025-11-25");

        let (code, session, body) = answer_post(lines.next().unwrap().as_bytes());
        assert_eq!(
            (code, session, body.len()),
            (StatusCode::ACCEPTED, false, 0)
        );

        let (code, session, body) = answer_post(echo::call_line(7, "hi").as_bytes());
        assert_eq!((code, session), (StatusCode::OK, false));
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(v["id"], 7);
        assert_eq!(v["result"]["content"][0]["text"], "hi");

        assert_eq!(answer_post(b"\xff").0, StatusCode::BAD_REQUEST);
    }
}
