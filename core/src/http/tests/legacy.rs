//! Legacy HTTP+SSE (2024-11-05) and the auto fallback.

use serde_json::json;

use super::*;
use crate::http::headers::{ACCEPT, MCP_SESSION_ID};

fn legacy_config(mode: TransportMode) -> ConnectionConfig {
    let mut c = ConnectionConfig::new(Url::parse("http://127.0.0.1:8080/sse").unwrap());
    c.mode = mode;
    c
}

/// Serves the legacy flow on GET `g`: endpoint event, then the initialize exchange.
fn legacy_handshake(h: &mut H, g: &HttpRequest) {
    assert_eq!(g.method, Method::Get);
    assert_eq!(g.purpose, Purpose::LegacyConnect);
    assert_eq!(g.headers.get(ACCEPT), Some("text/event-stream"));
    h.head(g.id, 200, &[("content-type", "text/event-stream")]);
    h.chunk(g.id, b"event: endpoint\ndata: /message?sessionId=abc\n\n");
    assert!(
        h.http_events()
            .iter()
            .any(|e| matches!(e, HttpEvent::TransportSelected(Transport::Legacy)))
    );
    let init = h.next();
    assert_eq!(init.purpose, Purpose::Initialize);
    assert_eq!(
        init.url.as_str(),
        "http://127.0.0.1:8080/message?sessionId=abc"
    );
    h.reply(init.id, 202, &[("content-type", "text/plain")], b"Accepted");
    let reply =
        json!({"jsonrpc": "2.0", "id": body(&init)["id"], "result": init_result("2024-11-05")});
    h.chunk(
        g.id,
        format!("event: message\ndata: {reply}\n\n").as_bytes(),
    );
    let n = h.next();
    assert_eq!(body(&n)["method"], "notifications/initialized");
    h.reply(n.id, 202, &[], b"Accepted");
}

#[test]
fn legacy_endpoint_flow_posts_to_the_endpoint_and_reads_replies_from_the_stream() {
    let mut h = H::with(legacy_config(TransportMode::Legacy));
    let g = h.next();
    legacy_handshake(&mut h, &g);
    assert_eq!(h.conn.transport(), Some(Transport::Legacy));
    let t = h.send("tools/list", json!({}));
    let x = h.next();
    assert_eq!(x.url.path(), "/message");
    assert!(!x.headers.contains(MCP_SESSION_ID));
    h.reply(x.id, 202, &[], b"Accepted");
    h.chunk(
        g.id,
        format!(
            "event: message\ndata: {}\n\n",
            answer(&x, json!({"tools": []}))
        )
        .as_bytes(),
    );
    assert_eq!(h.result(t), json!({"tools": []}));
    h.no_exchange(); // no GET listener in legacy mode
}

#[test]
fn legacy_stream_drop_closes_the_connection() {
    let mut h = H::with(legacy_config(TransportMode::Legacy));
    let g = h.next();
    legacy_handshake(&mut h, &g);
    let t = h.send("tools/list", json!({}));
    let x = h.next();
    h.reply(x.id, 202, &[], b"");
    h.end(g.id);
    assert!(matches!(
        h.error(t),
        RequestError::Closed(session::CloseReason::TransportClosed { .. })
    ));
    assert!(h.conn.is_finished());
}

#[test]
fn legacy_cross_origin_endpoint_is_refused() {
    let mut h = H::with(legacy_config(TransportMode::Legacy));
    let g = h.next();
    h.head(g.id, 200, &[("content-type", "text/event-stream")]);
    h.chunk(
        g.id,
        b"event: endpoint\ndata: http://evil.example/message\n\n",
    );
    assert!(h.conn.session().is_closed());
    h.drain();
    assert!(
        h.out
            .iter()
            .all(|x| x.url.host_str() != Some("evil.example"))
    );
}

#[test]
fn legacy_endpoint_wait_has_a_deadline() {
    let mut h = H::with(legacy_config(TransportMode::Legacy));
    let g = h.next();
    h.head(g.id, 200, &[("content-type", "text/event-stream")]);
    h.advance(Duration::from_secs(30));
    assert!(h.aborts.contains(&g.id));
    assert!(h.conn.session().is_closed());
}

#[test]
fn auto_mode_falls_back_to_legacy_on_400_404_405() {
    for status in [400, 404, 405] {
        let mut h = H::with(legacy_config(TransportMode::Auto));
        let post = h.next();
        assert_eq!(post.method, Method::Post);
        assert_eq!(post.purpose, Purpose::Initialize);
        h.reply(post.id, status, &[], b"");
        let g = h.next();
        legacy_handshake(&mut h, &g);
        assert_eq!(h.conn.transport(), Some(Transport::Legacy));
        assert!(!h.conn.session().is_closed());
    }
}

/// A URL that is no MCP endpoint (a web server's 404 to the POST, then its page or another
/// 404 to the GET): the close says both attempts failed, each with why.
#[test]
fn both_transports_failing_close_with_both_reasons() {
    let html: &[(&str, &str)] = &[("content-type", "text/html")];
    for (status, content, page, said) in [
        (
            404,
            html,
            &b"Cannot GET /sse"[..],
            "HTTP 404 Not Found: Cannot GET /sse",
        ),
        (
            200,
            html,
            b"<html>index</html>",
            "HTTP 200 with text/html, not a text/event-stream stream",
        ),
    ] {
        let mut h = H::with(legacy_config(TransportMode::Auto));
        let post = h.next();
        h.reply(post.id, 404, html, b"Cannot POST /sse");
        let g = h.next();
        assert_eq!(g.purpose, Purpose::LegacyConnect);
        h.reply(g.id, status, content, page);
        assert!(h.conn.session().is_closed());
        let reason = h
            .events
            .iter()
            .find_map(|e| match e {
                Event::Session(session::Event::Closed { reason }) => Some(reason.clone()),
                _ => None,
            })
            .expect("closed");
        let session::CloseReason::NotMcp { post, legacy } = &reason else {
            panic!("{reason:?}");
        };
        assert_eq!(post.status, 404);
        assert!(legacy.contains(said), "{legacy}");
        let text = reason.to_string();
        assert!(
            text.starts_with("no MCP endpoint there: the initialize POST got HTTP 404 Not Found, and the legacy HTTP+SSE GET tried next failed: "),
            "{text}"
        );
    }
}

#[test]
fn auto_mode_does_not_fall_back_on_401_or_500() {
    for status in [401, 500] {
        let mut h = H::with(legacy_config(TransportMode::Auto));
        let post = h.next();
        h.reply(
            post.id,
            status,
            &[("www-authenticate", "Bearer realm=\"x\"")],
            b"no",
        );
        assert!(h.conn.session().is_closed());
        let closed = h.events.iter().any(|e| matches!(e, Event::Session(session::Event::Closed { reason: session::CloseReason::Http(e) }) if e.status == status));
        assert!(closed, "{:?}", h.events);
        h.no_exchange();
    }
}

#[test]
fn streamable_only_mode_does_not_fall_back() {
    let mut h = H::with(legacy_config(TransportMode::Streamable));
    let post = h.next();
    h.reply(post.id, 405, &[], b"");
    assert!(h.conn.session().is_closed());
    h.no_exchange();
}

#[test]
fn auto_mode_selects_streamable_on_success() {
    let mut h = H::new();
    h.handshake("2025-06-18", None);
    assert_eq!(h.conn.transport(), Some(Transport::Streamable));
    assert!(
        h.http_events()
            .iter()
            .any(|e| matches!(e, HttpEvent::TransportSelected(Transport::Streamable)))
    );
}
