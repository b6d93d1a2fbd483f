//! Limits. Bodies a server never stops sending: each one is cut off at its limit (the
//! exchange is aborted, nothing after the limit is read) and the request resolves at once.
//! POSTs beyond the concurrency cap wait for a slot, in order.

use serde_json::json;

use super::*;
use crate::http::error::MAX_BODY_EXCERPT;

#[test]
fn error_body_is_cut_off_once_the_excerpt_is_full() {
    let mut h = H::ready("2025-06-18", Some("s"));
    let t = h.send("tools/call", json!({"name": "a"}));
    let x = h.next();
    h.head(x.id, 500, &[("content-type", "text/plain")]);
    // Not resolved while the excerpt has room.
    h.chunk(x.id, &[b'e'; MAX_BODY_EXCERPT - 1]);
    assert!(
        h.completions(t).is_empty(),
        "resolved before the excerpt was full"
    );
    assert!(!h.aborts.contains(&x.id));
    // The byte that fills it ends the exchange: the request fails with the 500 and its
    // excerpt, without waiting for the end of a body that might never come.
    h.chunk(x.id, b"ee");
    match h.error(t) {
        RequestError::Http(e) => {
            assert_eq!(e.status, 500);
            assert_eq!(e.body_excerpt.len(), MAX_BODY_EXCERPT);
        }
        other => panic!("expected HTTP 500, got {other:?}"),
    }
    assert!(h.aborts.contains(&x.id), "the rest of the body is not read");
    assert_eq!(h.conn.buffered_len(), 0);
    // Later chunks and the end of the aborted exchange are ignored; the connection works.
    h.chunk(x.id, &[b'e'; 4096]);
    h.end(x.id);
    assert_eq!(h.completions(t).len(), 1, "resolved exactly once");
    let u = h.send("tools/list", json!({}));
    let y = h.next();
    let answer = answer(&y, json!({"tools": []}));
    h.reply_json(y.id, &answer);
    assert_eq!(h.result(u), json!({"tools": []}));
}

#[test]
fn ignored_body_is_cut_off_at_the_body_limit() {
    let mut config = ConnectionConfig::new(url());
    config.max_body = 1000;
    let mut h = H::with(config);
    h.handshake("2025-06-18", Some("s"));
    h.conn
        .session_mut()
        .notify(h.now, "notifications/roots/list_changed", None)
        .expect("notify");
    let n = h.next();
    h.head(n.id, 202, &[("content-type", "text/plain")]);
    h.chunk(n.id, &[b' '; 1000]);
    assert!(!h.aborts.contains(&n.id), "within the limit it is read");
    h.chunk(n.id, b" ");
    assert!(h.aborts.contains(&n.id), "beyond the limit it is dropped");
    assert_eq!(h.conn.buffered_len(), 0);
    // No failure is reported for it, and the connection goes on.
    assert!(
        !h.http_events()
            .iter()
            .any(|e| matches!(e, HttpEvent::ExchangeFailed { .. })),
        "{:?}",
        h.http_events()
    );
    let u = h.send("ping", json!({}));
    let y = h.next();
    let answer = answer(&y, json!({}));
    h.reply_json(y.id, &answer);
    assert_eq!(h.result(u), json!({}));
}

#[test]
fn posts_beyond_the_concurrency_cap_wait_for_a_slot_in_order() {
    let mut config = ConnectionConfig::new(url());
    config.max_concurrent_posts = 2;
    let mut h = H::with(config);
    h.handshake("2025-06-18", Some("s"));
    let handles: Vec<_> = (0..5)
        .map(|i| h.send("tools/call", json!({"name": format!("t{i}")})))
        .collect();
    // Two POSTs at once (the listener was refused, so no GET holds a slot).
    let a = h.next();
    let b = h.next();
    h.no_exchange();
    assert_eq!(body_of(&a)["params"]["name"], "t0");
    assert_eq!(body_of(&b)["params"]["name"], "t1");
    // Each answer frees one slot, taken by the next request in order.
    let mut open = vec![a, b];
    for next in 2..5 {
        let done = open.remove(0);
        let result = answer(&done, json!({"content": []}));
        h.reply_json(done.id, &result);
        let x = h.next();
        h.no_exchange();
        assert_eq!(body_of(&x)["params"]["name"], format!("t{next}"));
        open.push(x);
    }
    for x in open {
        let result = answer(&x, json!({"content": []}));
        h.reply_json(x.id, &result);
    }
    h.no_exchange();
    for t in handles {
        assert_eq!(h.result(t), json!({"content": []}));
    }
}
