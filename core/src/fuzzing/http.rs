//! Arbitrary HTTP response sequences against an [`http::Connection`](crate::http::Connection):
//! heads, body chunks, ends, failures and ticks in any order, for any exchange.

use std::collections::HashMap;

use super::ops::Ops;
use crate::http::headers::HeaderList;
use crate::http::{
    Connection, ConnectionConfig, Event, ExchangeFailure, FailureKind, HttpEvent, HttpRequest,
    Purpose, TransportMode,
};
use crate::session::{self, RequestHandle, RequestOptions, SessionConfig};
use crate::time::{Duration, Instant};
use crate::types::Implementation;

const STATUSES: [u16; 14] = [
    200, 202, 204, 307, 308, 400, 401, 403, 404, 405, 429, 500, 503, 302,
];

struct Run {
    conn: Connection,
    now: Instant,
    known: Vec<HttpRequest>,
    handles: Vec<RequestHandle>,
    completions: HashMap<RequestHandle, usize>,
    finished: usize,
}

impl Run {
    fn drain(&mut self) {
        while let Some(x) = self.conn.poll_exchange(self.now) {
            self.known.push(x);
        }
        if self.known.len() > 64 {
            self.known.drain(..self.known.len() - 64);
        }
        while self.conn.poll_abort().is_some() {}
        while let Some(e) = self.conn.poll_event() {
            match e {
                Event::Session(session::Event::Completed { handle, .. }) => {
                    let n = self.completions.entry(handle).or_default();
                    *n += 1;
                    assert_eq!(*n, 1, "request {handle} completed twice");
                }
                Event::Transport(HttpEvent::Finished) => self.finished += 1,
                _ => {}
            }
        }
    }

    fn pick(&self, n: u8) -> Option<HttpRequest> {
        (!self.known.is_empty()).then(|| self.known[n as usize % self.known.len()].clone())
    }
}

fn body(x: &HttpRequest, kind: u8, n: u16) -> Vec<u8> {
    let id = serde_json::from_slice::<serde_json::Value>(&x.body)
        .ok()
        .and_then(|v| v.get("id").cloned())
        .unwrap_or(serde_json::Value::from(n));
    let answer = if x.purpose == Purpose::Initialize {
        serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "serverInfo": {"name": "f", "version": "1"}}})
    } else {
        serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {}})
    };
    match kind % 8 {
        0 => answer.to_string().into_bytes(),
        1 => format!("id: {n}\ndata: {answer}\n\n").into_bytes(),
        2 => format!("id: {n}\nretry: {n}\ndata: \n\n").into_bytes(),
        3 => b"event: endpoint\ndata: /message?x=1\n\n".to_vec(),
        4 => vec![b'x'; usize::from(n % 4096) * 4],
        5 => b"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n"
            .to_vec(),
        6 => b"data: {\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"method\":\"ping\"}\n\n".to_vec(),
        _ => format!("event: message\ndata: {answer}").into_bytes(),
    }
}

/// Runs the response sequence encoded in `data` and checks: no panic; every request completes
/// exactly once by the end; the connection finishes once after close; buffered bytes and open
/// exchanges stay bounded; `poll_timeout()` right after `handle_timeout(now)` is later than
/// `now`.
pub fn http(data: &[u8]) {
    let mut ops = Ops { data };
    let Ok(url) = url::Url::parse("http://127.0.0.1:8080/mcp") else {
        return;
    };
    let mut config = ConnectionConfig::new(url);
    config.mode = match ops.byte() % 3 {
        0 => TransportMode::Auto,
        1 => TransportMode::Streamable,
        _ => TransportMode::Legacy,
    };
    config.max_event = 64 * 1024;
    config.max_body = 64 * 1024;
    let t0 = Instant::now();
    let session = SessionConfig::new(Implementation::new("fuzz", "0"))
        .with_request_timeout(Some(Duration::from_secs(60)));
    let mut run = Run {
        conn: Connection::new(config, session, t0),
        now: t0,
        known: Vec::new(),
        handles: Vec::new(),
        completions: HashMap::new(),
        finished: 0,
    };
    run.drain();
    let mut steps = 0;
    while !ops.done() && steps < 200 {
        steps += 1;
        let now = run.now;
        match ops.byte() % 8 {
            0 => {
                if let Ok(h) = run.conn.session_mut().send_request(
                    now,
                    "tools/list",
                    None,
                    RequestOptions::new(),
                ) {
                    run.handles.push(h);
                }
            }
            1 => {
                let _ =
                    run.conn
                        .session_mut()
                        .notify(now, "notifications/roots/list_changed", None);
            }
            2 | 3 => {
                let Some(x) = run.pick(ops.byte()) else {
                    continue;
                };
                let status = STATUSES[ops.byte() as usize % STATUSES.len()];
                let flags = ops.byte();
                let mut headers = HeaderList::new();
                match flags % 4 {
                    0 => headers.insert("content-type", "application/json"),
                    1 => headers.insert("content-type", "text/event-stream"),
                    2 => headers.insert("content-type", "text/plain"),
                    _ => {}
                }
                if flags & 4 != 0 {
                    headers.insert("mcp-session-id", "sess");
                }
                match (flags >> 3) % 4 {
                    0 => headers.insert("location", "/other"),
                    1 => headers.insert("location", "http://elsewhere.example/"),
                    2 => headers.insert("retry-after", "1"),
                    _ => headers.insert("www-authenticate", "Bearer scope=\"a\""),
                }
                run.conn.handle_response_head(now, x.id, status, headers);
            }
            4 | 5 => {
                let Some(x) = run.pick(ops.byte()) else {
                    continue;
                };
                let kind = ops.byte();
                let b = body(&x, kind, ops.u16());
                run.conn.handle_body(now, x.id, &b);
            }
            6 => {
                let Some(x) = run.pick(ops.byte()) else {
                    continue;
                };
                if ops.byte().is_multiple_of(4) {
                    let failure = ExchangeFailure::new(FailureKind::Reset, "reset");
                    run.conn.handle_failure(now, x.id, failure);
                } else {
                    run.conn.handle_body_end(now, x.id);
                }
            }
            _ => {
                run.now += Duration::from_millis(u64::from(ops.u16()) * 4);
                let now = run.now;
                run.conn.handle_timeout(now);
                if let Some(t) = run.conn.poll_timeout() {
                    assert!(t > now, "poll_timeout is not after now");
                }
            }
        }
        run.drain();
        assert!(
            run.conn.buffered_len() <= 64 * (64 * 1024 + 4096) + 4 * 1024 * 1024,
            "buffered bytes are bounded"
        );
        assert!(
            run.conn.open_exchanges() <= 96,
            "open exchanges are bounded"
        );
    }
    let now = run.now;
    run.conn.close(now);
    run.drain();
    run.now += Duration::from_secs(10);
    let now = run.now;
    run.conn.handle_timeout(now);
    run.drain();
    assert!(run.conn.is_finished(), "the close finishes by its deadline");
    for h in &run.handles {
        assert_eq!(
            run.completions.get(h),
            Some(&1),
            "request {h} completed once"
        );
    }
    assert_eq!(run.finished, 1, "Finished comes once");
}
