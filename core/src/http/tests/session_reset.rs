//! What the successor of an expired session is given back, when it refuses part of it.

use serde_json::{Value, json};

use super::*;
use crate::http::headers::MCP_SESSION_ID;

/// Expires the session at a `tools/list` and answers the new session's exchanges: the
/// restoring `resources/subscribe` with -32002 (the resource is gone), everything else as a
/// server would. Returns the URIs re-subscribed.
fn expire_and_refuse_subscriptions(h: &mut H, session: &str) -> Vec<Value> {
    let t = h.send("tools/list", json!({}));
    let x = h.next();
    h.reply(x.id, 404, &[], b"");
    let init = h.next();
    h.answer_initialize(&init, "2025-06-18", Some(session));
    let mut subscribed = Vec::new();
    h.drain();
    while let Some(x) = h.out.pop_front() {
        if x.purpose == Purpose::Listen {
            h.reply(x.id, 405, &[], b"");
        } else if x.purpose == Purpose::Request(t) {
            h.reply_json(x.id, &answer(&x, json!({"tools": []})));
        } else {
            let b = body(&x);
            match b["method"].as_str() {
                Some("resources/subscribe") => {
                    subscribed.push(b["params"]["uri"].clone());
                    let refusal = json!({"jsonrpc": "2.0", "id": b["id"],
                        "error": {"code": -32002, "message": "Resource not found"}});
                    h.reply_json(x.id, &refusal);
                }
                _ if b.get("id").is_some() => h.reply_json(x.id, &answer(&x, json!({}))),
                _ => h.reply(x.id, 202, &[], b""),
            }
        }
        h.drain();
    }
    subscribed
}

#[test]
fn a_refused_resubscription_is_reported_with_its_uri_and_not_restored_again() {
    let mut h = H::ready("2025-06-18", Some("s1"));
    let s = h.send("resources/subscribe", json!({"uri": "file:///gone"}));
    let x = h.next();
    h.reply_json(x.id, &answer(&x, json!({})));
    h.result(s);

    let subscribed = expire_and_refuse_subscriptions(&mut h, "s2");
    assert_eq!(subscribed, [json!("file:///gone")]);
    let failed: Vec<_> = h
        .http_events()
        .into_iter()
        .filter_map(|e| match e {
            HttpEvent::RestoreFailed { method, uri, error } => Some((method, uri, error)),
            _ => None,
        })
        .collect();
    assert_eq!(failed.len(), 1, "{:?}", h.http_events());
    let (method, uri, error) = &failed[0];
    assert_eq!(method.as_str(), "resources/subscribe");
    assert_eq!(uri.as_deref(), Some("file:///gone"));
    assert!(
        matches!(error, RequestError::Remote(e) if e.code == -32002),
        "{error:?}"
    );

    // The next expiry has nothing of it left to restore.
    let subscribed = expire_and_refuse_subscriptions(&mut h, "s3");
    assert!(subscribed.is_empty(), "{subscribed:?}");
}

#[test]
fn lost_requests_are_resent_once_the_state_is_restored() {
    let mut h = H::ready("2025-06-18", Some("s1"));
    for (method, params) in [
        ("logging/setLevel", json!({"level": "info"})),
        ("resources/subscribe", json!({"uri": "file:///a"})),
    ] {
        let r = h.send(method, params);
        let x = h.next();
        h.reply_json(x.id, &answer(&x, json!({})));
        h.result(r);
    }
    let t = h.send("tools/list", json!({}));
    let x = h.next();
    h.reply(x.id, 404, &[], b"");
    let init = h.next();
    h.answer_initialize(&init, "2025-06-18", Some("s2"));
    let reset = |h: &H| {
        h.http_events()
            .iter()
            .any(|e| matches!(e, HttpEvent::SessionReset { .. }))
    };
    // Answer everything but the lost request; the restores one at a time, last.
    let mut restores = Vec::new();
    let mut lost = None;
    h.drain();
    while let Some(x) = h.out.pop_front() {
        match x.purpose {
            Purpose::Listen => h.reply(x.id, 405, &[], b""),
            Purpose::Request(r) if r == t => lost = Some(x),
            _ if body(&x).get("id").is_some() => restores.push(x),
            _ => h.reply(x.id, 202, &[], b""),
        }
        h.drain();
    }
    assert_eq!(restores.len(), 2, "level and subscription restored");
    assert!(lost.is_none(), "not re-sent before the state is back");
    assert!(!reset(&h));
    let last = restores.pop().expect("two restores");
    let first = restores.pop().expect("two restores");
    h.reply_json(first.id, &answer(&first, json!({})));
    assert!(
        !h.out.iter().any(|x| x.purpose == Purpose::Request(t)),
        "not before the last restore is answered"
    );
    h.reply_json(last.id, &answer(&last, json!({})));
    let resent = h
        .out
        .iter()
        .find(|x| x.purpose == Purpose::Request(t))
        .cloned()
        .expect("re-sent once the state is back");
    assert!(h.http_events().iter().any(|e| matches!(
        e,
        HttpEvent::SessionReset {
            resent: 1,
            restored: 2,
            ..
        }
    )));
    h.reply_json(resent.id, &answer(&resent, json!({"tools": []})));
    assert_eq!(h.result(t), json!({"tools": []}));
}

/// A listener that worked on this session and then gets 404 on reconnecting (the server
/// restarted and forgot the session) means the session is gone: the connection sets up a new
/// one, restores the subscription on it and reopens the listener. (A first GET's 404 is "no
/// listener here": see the handshake tests.)
#[test]
fn a_404_to_a_listener_that_worked_reinitializes() {
    let mut h = H::new();
    let init = h.next();
    h.answer_initialize(&init, "2025-06-18", Some("s1"));
    let n = h.next();
    h.reply(n.id, 202, &[], b"");
    let g = h.next();
    assert_eq!(g.purpose, Purpose::Listen);
    h.head(g.id, 200, &[("content-type", "text/event-stream")]);
    let s = h.send("resources/subscribe", json!({"uri": "file:///a"}));
    let x = h.next();
    h.reply_json(x.id, &answer(&x, json!({})));
    h.result(s);
    // The server goes away: the listener's stream ends; its reconnection gets 404.
    let broke = h.now;
    h.end(g.id);
    let again = loop {
        h.drain();
        if let Some(x) = h.out.pop_front() {
            break x;
        }
        let at = h.conn.poll_timeout().expect("a reconnection is scheduled");
        h.advance(at - h.now);
    };
    assert_eq!(again.purpose, Purpose::Listen);
    assert_eq!(again.headers.get(MCP_SESSION_ID), Some("s1"));
    h.reply(again.id, 404, &[], b"");
    assert!(
        h.http_events().iter().any(|e| matches!(
            e,
            HttpEvent::SessionExpired { session_id, reinitializing: true } if session_id == "s1"
        )),
        "{:?}",
        h.http_events()
    );
    let init = h.next();
    assert_eq!(init.purpose, Purpose::Initialize);
    h.answer_initialize(&init, "2025-06-18", Some("s2"));
    let mut subscribed = false;
    let mut listener = false;
    h.drain();
    while let Some(x) = h.out.pop_front() {
        assert_eq!(x.headers.get(MCP_SESSION_ID), Some("s2"), "{x:?}");
        if x.purpose == Purpose::Listen {
            listener = true;
            h.head(x.id, 200, &[("content-type", "text/event-stream")]);
        } else if body(&x)["method"] == "resources/subscribe" {
            subscribed = true;
            h.reply_json(x.id, &answer(&x, json!({})));
        } else {
            h.reply(x.id, 202, &[], b"");
        }
        h.drain();
    }
    assert!(subscribed && listener, "restored and listening again");
    assert!(
        h.http_events().iter().any(
            |e| matches!(e, HttpEvent::SessionReset { restored: 1, since, .. } if *since == broke)
        ),
        "the gap starts when the listener lost its stream: {:?}",
        h.http_events()
    );
    assert!(h.now > broke, "the reconnection came later");
    assert!(!h.conn.session().is_closed());
}
