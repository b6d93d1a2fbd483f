//! Resumability: `retry`, `Last-Event-ID`, bounded attempts, replays, chunking invariance.

use serde_json::json;

use super::*;
use crate::http::headers::{LAST_EVENT_ID, MCP_SESSION_ID};

/// A request whose POST stream delivered event `e1` with `retry: 500`, then closed.
fn dropped_after_retry_500() -> (H, RequestHandle, HttpRequest) {
    let mut h = H::ready("2025-11-25", Some("s"));
    let t = h.send("tools/call", json!({"name": "test_reconnection"}));
    let x = h.next();
    h.head(x.id, 200, &[("content-type", "text/event-stream")]);
    h.chunk(x.id, b"id: e1\nretry: 500\ndata: \n\n");
    h.end(x.id);
    assert!(
        h.completions(t).is_empty(),
        "a resumable stream does not fail its request"
    );
    (h, t, x)
}

#[test]
fn retry_500_is_honoured_and_the_resume_sends_last_event_id() {
    let (mut h, t, x) = dropped_after_retry_500();
    h.advance(Duration::from_millis(499));
    h.no_exchange();
    h.advance(Duration::from_millis(1));
    let g = h.next();
    assert_eq!(g.method, Method::Get);
    assert!(matches!(g.purpose, Purpose::Resume(_)));
    assert_eq!(g.headers.get(LAST_EVENT_ID), Some("e1"));
    assert_eq!(g.headers.get(MCP_SESSION_ID), Some("s"));
    assert_eq!(h.now - h.t0, Duration::from_millis(500));
    h.head(g.id, 200, &[("content-type", "text/event-stream")]);
    h.chunk(
        g.id,
        &sse(&[("", Some("e2"), &answer(&x, json!({"ok": true})))]),
    );
    h.end(g.id);
    assert_eq!(h.result(t), json!({"ok": true}));
    assert!(h.http_events().iter().any(
        |e| matches!(e, HttpEvent::StreamResumed { last_event_id, .. } if last_event_id == "e1")
    ));
    // Done: no more reconnections.
    h.advance(Duration::from_secs(10));
    h.no_exchange();
}

#[test]
fn a_huge_retry_is_clamped() {
    let mut config = ConnectionConfig::new(url());
    config.max_retry = Duration::from_secs(5);
    let mut h = H::with(config);
    h.handshake("2025-11-25", Some("s"));
    let _t = h.send("tools/call", json!({}));
    let x = h.next();
    h.head(x.id, 200, &[("content-type", "text/event-stream")]);
    h.chunk(x.id, b"id: e1\nretry: 99999999999999999999\ndata: \n\n");
    h.end(x.id);
    h.advance(Duration::from_millis(4999));
    h.no_exchange();
    h.advance(Duration::from_millis(1));
    assert!(matches!(h.next().purpose, Purpose::Resume(_)));
}

#[test]
fn a_resume_that_returns_nothing_new_backs_off_and_gives_up() {
    let (mut h, t, _x) = dropped_after_retry_500();
    let mut times = Vec::new();
    for _ in 0..20 {
        let Some(at) = h.conn.poll_timeout() else {
            break;
        };
        h.advance(at - h.now);
        h.drain();
        let Some(g) = h.out.pop_front() else { continue };
        times.push(h.now - h.t0);
        assert_eq!(g.headers.get(LAST_EVENT_ID), Some("e1"));
        h.head(g.id, 200, &[("content-type", "text/event-stream")]);
        h.end(g.id); // nothing new
    }
    assert!(times.len() <= 5, "bounded attempts: {times:?}");
    assert!(
        times
            .windows(2)
            .all(|w| w[1] - w[0] >= Duration::from_millis(500)),
        "{times:?}"
    );
    assert_eq!(h.error(t), RequestError::NoResponse);
    assert_eq!(
        h.conn.poll_timeout().map(|_| ()),
        Some(()).filter(|_| h.conn.session().poll_timeout().is_some())
    );
}

#[test]
fn replayed_events_complete_nothing_twice() {
    let mut h = H::ready("2025-11-25", Some("s"));
    let t = h.send("tools/call", json!({}));
    let x = h.next();
    let note = json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "n"}});
    h.head(x.id, 200, &[("content-type", "text/event-stream")]);
    h.chunk(x.id, b"retry: 100\n\n");
    h.chunk(
        x.id,
        &sse(&[
            ("", Some("e1"), &note),
            ("", Some("e2"), &answer(&x, json!({"n": 1}))),
        ]),
    );
    // The connection drops before the stream ended; the request is already answered.
    h.conn.handle_failure(
        h.now,
        x.id,
        ExchangeFailure::new(FailureKind::Reset, "reset"),
    );
    h.drain();
    assert_eq!(h.result(t), json!({"n": 1}));
    // No resume needed: the request is complete.
    h.advance(Duration::from_secs(1));
    h.no_exchange();

    // A second request whose stream is resumed; the server replays f0 (a ping) and f1.
    let u = h.send("tools/call", json!({}));
    let y = h.next();
    let ping = json!({"jsonrpc": "2.0", "id": "srv-9", "method": "ping"});
    h.head(y.id, 200, &[("content-type", "text/event-stream")]);
    h.chunk(
        y.id,
        &sse(&[("", Some("f0"), &ping), ("", Some("f1"), &note)]),
    );
    h.chunk(y.id, b"retry: 100\n\n");
    h.end(y.id);
    let pong = h.next();
    assert_eq!(body(&pong)["id"], "srv-9");
    h.reply(pong.id, 202, &[], b"");
    h.advance(Duration::from_millis(100));
    let g = h.next();
    assert_eq!(g.headers.get(LAST_EVENT_ID), Some("f1"));
    h.head(g.id, 200, &[("content-type", "text/event-stream")]);
    h.chunk(
        g.id,
        &sse(&[
            ("", Some("f0"), &ping),
            ("", Some("f1"), &note),
            ("", Some("f2"), &answer(&y, json!({"n": 2}))),
        ]),
    );
    h.end(g.id);
    assert_eq!(h.result(u), json!({"n": 2}));
    let logs = h
        .notifications()
        .iter()
        .filter(|m| *m == "notifications/message")
        .count();
    assert_eq!(logs, 2, "f1 replayed is not delivered again");
    h.no_exchange(); // the replayed ping is not answered twice
    assert!(
        h.session_diagnostics().is_empty(),
        "{:?}",
        h.session_diagnostics()
    );
}

#[test]
fn a_post_stream_without_event_ids_is_not_resumed() {
    let mut h = H::ready("2025-11-25", Some("s"));
    let t = h.send("tools/call", json!({}));
    let x = h.next();
    h.head(x.id, 200, &[("content-type", "text/event-stream")]);
    h.chunk(x.id, b"retry: 100\n\n");
    h.conn.handle_failure(
        h.now,
        x.id,
        ExchangeFailure::new(FailureKind::Reset, "reset"),
    );
    h.drain();
    assert_eq!(h.error(t), RequestError::NoResponse);
    h.advance(Duration::from_secs(1));
    h.no_exchange();
}

#[test]
fn the_listener_reconnects_with_last_event_id_then_gives_up() {
    let mut h = H::new();
    let g = h.up_to_listener("2025-11-25", Some("s"));
    assert!(!g.headers.contains(LAST_EVENT_ID));
    h.head(g.id, 200, &[("content-type", "text/event-stream")]);
    h.chunk(
        g.id,
        &sse(&[(
            "",
            Some("L1"),
            &json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}),
        )]),
    );
    h.end(g.id);
    let mut attempts = 0;
    while let Some(at) = h.conn.poll_timeout() {
        h.advance(at - h.now);
        h.drain();
        if let Some(g) = h.out.pop_front() {
            attempts += 1;
            assert_eq!(g.purpose, Purpose::Listen);
            assert_eq!(g.headers.get(LAST_EVENT_ID), Some("L1"));
            h.reply(g.id, 502, &[], b"bad gateway");
        }
        assert!(attempts <= 5);
    }
    assert_eq!(attempts, 5);
    assert!(
        h.http_events()
            .iter()
            .any(|e| matches!(e, HttpEvent::ListenerUnavailable { .. }))
    );
    assert!(!h.conn.session().is_closed());
}

/// Runs one SSE reply body through a connection in the given chunks; returns what came out.
fn run_chunked(body: &[u8], split: &dyn Fn(&[u8]) -> Vec<Vec<u8>>) -> Vec<String> {
    let mut h = H::ready("2025-11-25", Some("s"));
    let t = h.send("tools/call", json!({}));
    let x = h.next();
    let body = String::from_utf8(body.to_vec())
        .unwrap()
        .replace("ID", &body_of(&x)["id"].to_string());
    h.head(x.id, 200, &[("content-type", "text/event-stream")]);
    for c in split(body.as_bytes()) {
        h.chunk(x.id, &c);
    }
    h.end(x.id);
    let mut out: Vec<String> = h.events.iter().map(|e| format!("{e:?}")).collect();
    out.push(format!("{:?}", h.completions(t).len()));
    out
}

#[test]
fn sse_chunking_does_not_change_what_the_connection_delivers() {
    let body = b"\xEF\xBB\xBF: comment\r\nid: 1\r\ndata: \r\n\r\nid: 2\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\ndata: \"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"x\"}}\n\nretry: 10\rid: 3\rdata: {\"jsonrpc\":\"2.0\",\"id\":ID,\"result\":{}}\r\r";
    let whole = run_chunked(body, &|b| vec![b.to_vec()]);
    let bytes = run_chunked(body, &|b| b.iter().map(|c| vec![*c]).collect());
    let threes = run_chunked(body, &|b| b.chunks(3).map(<[u8]>::to_vec).collect());
    assert_eq!(whole, bytes);
    assert_eq!(whole, threes);
    assert!(
        whole.iter().any(|e| e.contains("notifications/message")),
        "{whole:?}"
    );
    assert_eq!(whole.last().map(String::as_str), Some("1"));
}
