//! An expired session (404 to its `Mcp-Session-Id`): re-initialized once, the lost requests
//! re-sent and its state (level, subscriptions, listener) given back; and what its successor
//! does when it refuses part of it.

use serde_json::{Value, json};

use super::*;
use crate::http::headers::MCP_SESSION_ID;

/// Sends `method` and answers it with an empty result, as a server that takes it.
fn settle(h: &mut H, method: &'static str, params: Value) {
    let r = h.send(method, params);
    let x = h.next();
    h.reply_json(x.id, &answer(&x, json!({})));
    h.result(r);
}

/// Sends `tools/list`, refuses its exchange with `status` and `refusal` (the server no longer
/// knows the session), and answers the re-initialize with session id `new_session`: the
/// handle of the lost `tools/list`.
fn expire_at_tools_list(
    h: &mut H,
    status: u16,
    refusal: &[u8],
    new_session: &str,
) -> RequestHandle {
    let t = h.send("tools/list", json!({}));
    let x = h.next();
    h.reply(x.id, status, &[], refusal);
    let init = h.next();
    h.answer_initialize(&init, "2025-06-18", Some(new_session));
    t
}

/// [`expire_at_tools_list`] on a ready session `old`, then the new session's `initialized`
/// answered: the lost request's handle and its re-sent exchange.
fn resent_after_expiry(status: u16, refusal: &[u8]) -> (H, RequestHandle, HttpRequest) {
    let mut h = H::ready("2025-06-18", Some("old"));
    let t = expire_at_tools_list(&mut h, status, refusal, "new");
    // The re-sent request waits for the new session's `initialized` to be answered.
    let initialized = h.next();
    assert_eq!(body_of(&initialized)["method"], "notifications/initialized");
    h.reply(initialized.id, 202, &[], b"");
    h.drain();
    let again = h
        .out
        .iter()
        .find(|x| x.purpose == Purpose::Request(t))
        .cloned()
        .expect("re-sent");
    (h, t, again)
}

/// Hands `serve` each exchange the connection queues, one at a time, until it queues none.
fn serve_each(h: &mut H, mut serve: impl FnMut(&mut H, HttpRequest)) {
    h.drain();
    while let Some(x) = h.out.pop_front() {
        serve(h, x);
        h.drain();
    }
}

/// Expires the session at a `tools/list` and answers the new session's exchanges: the
/// restoring `resources/subscribe` with -32002 (the resource is gone), everything else as a
/// server would. Returns the URIs re-subscribed.
fn expire_and_refuse_subscriptions(h: &mut H, session: &str) -> Vec<Value> {
    let t = expire_at_tools_list(h, 404, b"", session);
    let mut subscribed = Vec::new();
    serve_each(h, |h, x| {
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
    });
    subscribed
}

#[test]
fn a_refused_resubscription_is_reported_with_its_uri_and_not_restored_again() {
    let mut h = H::ready("2025-06-18", Some("s1"));
    settle(
        &mut h,
        "resources/subscribe",
        json!({"uri": "file:///gone"}),
    );

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
        settle(&mut h, method, params);
    }
    let t = expire_at_tools_list(&mut h, 404, b"", "s2");
    let reset = |h: &H| {
        h.http_events()
            .iter()
            .any(|e| matches!(e, HttpEvent::SessionReset { .. }))
    };
    // Answer everything but the lost request; the restores one at a time, last.
    let mut restores = Vec::new();
    let mut lost = None;
    serve_each(&mut h, |h, x| match x.purpose {
        Purpose::Listen => h.reply(x.id, 405, &[], b""),
        Purpose::Request(r) if r == t => lost = Some(x),
        _ if body(&x).get("id").is_some() => restores.push(x),
        _ => h.reply(x.id, 202, &[], b""),
    });
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
    let g = h.up_to_listener("2025-06-18", Some("s1"));
    h.head(g.id, 200, &[("content-type", "text/event-stream")]);
    settle(&mut h, "resources/subscribe", json!({"uri": "file:///a"}));
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
    serve_each(&mut h, |h, x| {
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
    });
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

#[test]
fn session_expired_404_reinitializes_once_resends_and_restores_level_subscriptions_listener() {
    let mut h = H::ready("2025-06-18", Some("old"));
    // The old session had a log level and a subscription.
    settle(&mut h, "logging/setLevel", json!({"level": "debug"}));
    settle(&mut h, "resources/subscribe", json!({"uri": "file:///a"}));
    settle(&mut h, "resources/subscribe", json!({"uri": "file:///b"}));
    settle(&mut h, "resources/unsubscribe", json!({"uri": "file:///b"}));

    let t = h.send("tools/list", json!({}));
    let lost = h.next();
    let old_wire = body(&lost)["id"].clone();
    h.reply(lost.id, 404, &[], b"");
    let expired = h.now;
    assert!(h.http_events().iter().any(|e| matches!(e, HttpEvent::SessionExpired { session_id, reinitializing: true } if session_id == "old")));
    assert_eq!(h.conn.session_id(), None);
    // A fresh initialize, without the session id, answered a while later: the gap.
    let init = h.next();
    h.advance(Duration::from_millis(250));
    assert_eq!(init.purpose, Purpose::Initialize);
    assert!(!init.headers.contains(MCP_SESSION_ID));
    let reply =
        json!({"jsonrpc": "2.0", "id": body(&init)["id"], "result": init_result("2025-06-18")});
    h.reply(
        init.id,
        200,
        &[
            ("content-type", "application/json"),
            ("mcp-session-id", "new"),
        ],
        reply.to_string().as_bytes(),
    );
    let mut methods = Vec::new();
    let mut resent = None;
    let mut listener = false;
    serve_each(&mut h, |h, x| {
        assert_eq!(x.headers.get(MCP_SESSION_ID), Some("new"), "{x:?}");
        match x.purpose {
            Purpose::Listen => {
                listener = true;
                h.reply(x.id, 405, &[], b"");
            }
            Purpose::Request(handle) if handle == t => {
                assert_ne!(body(&x)["id"], old_wire, "a fresh wire id");
                methods.push("tools/list".to_owned());
                resent = Some(x);
            }
            _ => {
                let b = body(&x);
                methods.push(b["method"].as_str().unwrap_or("").to_owned());
                if b.get("id").is_some() {
                    assert!(
                        b["method"] != "resources/subscribe" || b["params"]["uri"] == "file:///a"
                    );
                    if b["method"] == "logging/setLevel" {
                        assert_eq!(b["params"]["level"], "debug");
                    }
                    h.reply_json(x.id, &answer(&x, json!({})));
                } else {
                    h.reply(x.id, 202, &[], b"");
                }
            }
        }
    });
    methods.sort();
    assert_eq!(
        methods,
        [
            "logging/setLevel",
            "notifications/initialized",
            "resources/subscribe",
            "tools/list"
        ]
    );
    assert!(listener, "the listener is re-opened");
    let resent = resent.unwrap();
    h.reply_json(resent.id, &answer(&resent, json!({"tools": []})));
    assert_eq!(h.result(t), json!({"tools": []}));
    assert!(
        h.http_events().iter().any(|e| matches!(
            e,
            HttpEvent::SessionReset {
                resent: 1,
                restored: 2,
                since,
                until,
            } if *since == expired && *until == expired + Duration::from_millis(250)
        )),
        "{:?}",
        h.http_events()
    );
    // The restoring requests' completions are the connection's own.
    let completed = h
        .events
        .iter()
        .filter(|e| matches!(e, Event::Session(session::Event::Completed { .. })))
        .count();
    assert_eq!(completed, 5);
}

#[test]
fn a_second_404_in_a_row_does_not_loop() {
    let (mut h, t, again) = resent_after_expiry(404, b"");
    h.reply(again.id, 404, &[], b"");
    assert!(matches!(h.error(t), RequestError::Http(e) if e.status == 404));
    assert!(h.http_events().iter().any(|e| matches!(
        e,
        HttpEvent::SessionExpired {
            reinitializing: false,
            ..
        }
    )));
    assert!(h.conn.session().is_closed());
    h.drain();
    assert!(
        !h.out.iter().any(|x| x.purpose == Purpose::Initialize),
        "no third initialize"
    );
}

/// What npm server-everything (the TypeScript SDK's example servers) answers, after a
/// restart, to a request carrying the session id of its former self.
const NO_VALID_SESSION: &[u8] = br#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}"#;

#[test]
fn a_400_saying_the_session_id_is_not_valid_reinitializes_and_resends() {
    let mut h = H::ready("2025-06-18", Some("old"));
    let t = h.send("tools/list", json!({}));
    let lost = h.next();
    assert_eq!(lost.headers.get(MCP_SESSION_ID), Some("old"));
    h.reply(
        lost.id,
        400,
        &[("content-type", "application/json")],
        NO_VALID_SESSION,
    );
    assert!(h.http_events().iter().any(|e| matches!(e, HttpEvent::SessionExpired { session_id, reinitializing: true } if session_id == "old")));
    let init = h.next();
    assert_eq!(init.purpose, Purpose::Initialize);
    assert!(!init.headers.contains(MCP_SESSION_ID));
    h.answer_initialize(&init, "2025-06-18", Some("new"));
    let mut resent = None;
    serve_each(&mut h, |h, x| {
        assert_eq!(x.headers.get(MCP_SESSION_ID), Some("new"), "{x:?}");
        match x.purpose {
            Purpose::Listen => h.reply(x.id, 405, &[], b""),
            Purpose::Request(handle) if handle == t => resent = Some(x),
            _ => h.reply(x.id, 202, &[], b""),
        }
    });
    let resent = resent.expect("the lost request is re-sent on the new session");
    h.reply_json(resent.id, &answer(&resent, json!({"tools": []})));
    assert_eq!(h.result(t), json!({"tools": []}));
    assert!(
        h.http_events()
            .iter()
            .any(|e| matches!(e, HttpEvent::SessionReset { resent: 1, .. }))
    );
}

#[test]
fn another_400_is_the_requests_own_failure_and_keeps_the_session() {
    let mut h = H::ready("2025-06-18", Some("old"));
    let t = h.send("tools/list", json!({}));
    let x = h.next();
    let refusal =
        br#"{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params"},"id":null}"#;
    h.reply(x.id, 400, &[("content-type", "application/json")], refusal);
    assert!(matches!(h.error(t), RequestError::Http(e) if e.status == 400));
    assert_eq!(h.conn.session_id(), Some("old"));
    assert!(
        !h.http_events()
            .iter()
            .any(|e| matches!(e, HttpEvent::SessionExpired { .. }))
    );
    h.drain();
    assert!(!h.out.iter().any(|x| x.purpose == Purpose::Initialize));
}

#[test]
fn a_second_not_valid_400_in_a_row_does_not_loop() {
    let (mut h, t, again) = resent_after_expiry(400, NO_VALID_SESSION);
    h.reply(again.id, 400, &[], NO_VALID_SESSION);
    assert!(matches!(h.error(t), RequestError::Http(e) if e.status == 400));
    assert!(h.conn.session().is_closed());
    h.drain();
    assert!(!h.out.iter().any(|x| x.purpose == Purpose::Initialize));
}

/// A listener that worked on this session and gets, on reconnecting, the 400 a restarted
/// TypeScript-SDK server answers for an id it does not know: the session is gone, as with a
/// 404 (the same rule as a POST's), and a fresh one is set up with its listener.
#[test]
fn a_not_valid_400_to_a_listener_that_worked_reinitializes() {
    let mut h = H::new();
    let init = h.next();
    h.answer_initialize(&init, "2025-06-18", Some("s1"));
    let n = h.next();
    h.reply(n.id, 202, &[], b"");
    let g = h.next();
    assert_eq!(g.purpose, Purpose::Listen);
    h.head(g.id, 200, &[("content-type", "text/event-stream")]);
    h.end(g.id);
    let again = reconnection(&mut h);
    assert_eq!(again.headers.get(MCP_SESSION_ID), Some("s1"));
    h.reply(
        again.id,
        400,
        &[("content-type", "application/json")],
        NO_VALID_SESSION,
    );
    let events = h.http_events();
    assert!(
        events.iter().any(|e| matches!(
            e,
            HttpEvent::SessionExpired { session_id, reinitializing: true } if session_id == "s1"
        )),
        "{events:?}"
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, HttpEvent::ListenerUnavailable { .. })),
        "{events:?}"
    );
    let init = h.next();
    assert_eq!(init.purpose, Purpose::Initialize);
    assert!(!init.headers.contains(MCP_SESSION_ID));
    h.answer_initialize(&init, "2025-06-18", Some("s2"));
    let mut listener = false;
    h.drain();
    while let Some(x) = h.out.pop_front() {
        assert_eq!(x.headers.get(MCP_SESSION_ID), Some("s2"), "{x:?}");
        if x.purpose == Purpose::Listen {
            listener = true;
            h.head(x.id, 200, &[("content-type", "text/event-stream")]);
        } else {
            h.reply(x.id, 202, &[], b"");
        }
        h.drain();
    }
    assert!(listener, "listening on the fresh session");
    assert!(!h.conn.session().is_closed());
}

/// A reconnecting listener's 400 about something else keeps the session: there is no
/// listener (as for a first GET's 400), and no fresh session.
#[test]
fn another_400_to_a_listener_that_worked_only_ends_the_listener() {
    let mut h = H::new();
    let init = h.next();
    h.answer_initialize(&init, "2025-06-18", Some("s1"));
    let n = h.next();
    h.reply(n.id, 202, &[], b"");
    let g = h.next();
    h.head(g.id, 200, &[("content-type", "text/event-stream")]);
    h.end(g.id);
    let again = reconnection(&mut h);
    let refusal = br#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: GET not supported"},"id":null}"#;
    h.reply(
        again.id,
        400,
        &[("content-type", "application/json")],
        refusal,
    );
    let events = h.http_events();
    assert!(
        events
            .iter()
            .any(|e| matches!(e, HttpEvent::ListenerUnavailable { status: Some(400) })),
        "{events:?}"
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, HttpEvent::SessionExpired { .. })),
        "{events:?}"
    );
    assert_eq!(h.conn.session_id(), Some("s1"));
    h.advance(Duration::from_secs(120));
    h.drain();
    assert!(
        !h.out
            .iter()
            .any(|x| matches!(x.purpose, Purpose::Initialize | Purpose::Listen)),
        "{:?}",
        h.out
    );
}

/// A first GET's 400 saying the session id is not valid is "no listener here", as its 404
/// is: the listener never worked on this session.
#[test]
fn a_first_listener_gets_not_valid_400_is_no_listener() {
    let mut h = H::new();
    let init = h.next();
    h.answer_initialize(&init, "2025-06-18", Some("s1"));
    let n = h.next();
    h.reply(n.id, 202, &[], b"");
    let g = h.next();
    assert_eq!(g.purpose, Purpose::Listen);
    h.reply(
        g.id,
        400,
        &[("content-type", "application/json")],
        NO_VALID_SESSION,
    );
    let events = h.http_events();
    assert!(
        events
            .iter()
            .any(|e| matches!(e, HttpEvent::ListenerUnavailable { status: Some(400) })),
        "{events:?}"
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, HttpEvent::SessionExpired { .. })),
        "{events:?}"
    );
    assert_eq!(h.conn.session_id(), Some("s1"));
}

/// The listener's next GET after its stream ended, once its reconnection delay passes.
fn reconnection(h: &mut H) -> HttpRequest {
    loop {
        h.drain();
        if let Some(x) = h.out.pop_front() {
            assert_eq!(x.purpose, Purpose::Listen, "{x:?}");
            return x;
        }
        let at = h.conn.poll_timeout().expect("a reconnection is scheduled");
        h.advance(at - h.now);
    }
}
