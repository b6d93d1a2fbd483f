//! Streamable HTTP: POST replies, headers, sessions, listener, errors, close, redirects (an
//! expired session's 404: `session_reset`).

use serde_json::json;

use super::*;
use crate::http::headers::{
    ACCEPT, CONTENT_TYPE, LAST_EVENT_ID, MCP_PROTOCOL_VERSION, MCP_SESSION_ID,
};

#[test]
fn json_reply_completes_the_request_and_every_post_has_the_mcp_headers() {
    let mut h = H::ready("2025-06-18", Some("sess-1"));
    let t = h.send("tools/list", json!({}));
    let x = h.next();
    assert_eq!(x.method, Method::Post);
    assert_eq!(x.purpose, Purpose::Request(t));
    assert_eq!(x.url, url());
    assert_eq!(
        x.headers.get(ACCEPT),
        Some("application/json, text/event-stream")
    );
    assert_eq!(x.headers.get(CONTENT_TYPE), Some("application/json"));
    assert_eq!(x.headers.get(MCP_SESSION_ID), Some("sess-1"));
    assert_eq!(x.headers.get(MCP_PROTOCOL_VERSION), Some("2025-06-18"));
    h.reply_json(x.id, &answer(&x, json!({"tools": []})));
    assert_eq!(h.result(t), json!({"tools": []}));
}

#[test]
fn initialize_carries_neither_session_id_nor_protocol_version() {
    let mut h = H::new();
    let init = h.next();
    assert!(!init.headers.contains(MCP_SESSION_ID));
    assert!(!init.headers.contains(MCP_PROTOCOL_VERSION));
    assert_eq!(
        init.headers.get(ACCEPT),
        Some("application/json, text/event-stream")
    );
}

#[test]
fn protocol_version_header_is_not_sent_for_2025_03_26() {
    let mut h = H::ready("2025-03-26", Some("s"));
    let t = h.send("tools/list", json!({}));
    let x = h.next();
    assert!(!x.headers.contains(MCP_PROTOCOL_VERSION));
    assert_eq!(x.headers.get(MCP_SESSION_ID), Some("s"));
    h.reply_json(x.id, &answer(&x, json!({})));
    assert!(h.result(t).is_object());
}

#[test]
fn sse_reply_delivers_messages_before_and_after_the_response_and_skips_priming() {
    let mut h = H::ready("2025-11-25", Some("s"));
    let t = h.send("tools/call", json!({"name": "x"}));
    let x = h.next();
    let log = json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "a"}});
    let after = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
    let mut body = b"id: p0\ndata: \n\n".to_vec(); // priming event: id, empty data
    body.extend(sse(&[
        ("", Some("e1"), &log),
        ("message", Some("e2"), &answer(&x, json!({"content": []}))),
        ("", Some("e3"), &after),
    ]));
    h.head(x.id, 200, &[("content-type", "text/event-stream")]);
    h.chunk(x.id, &body);
    h.end(x.id);
    assert_eq!(h.result(t), json!({"content": []}));
    assert_eq!(
        h.notifications(),
        ["notifications/message", "notifications/tools/list_changed"]
    );
    assert!(h.session_diagnostics().is_empty(), "{:?}", h.events);
    h.no_exchange();
}

#[test]
fn notifications_and_responses_accept_202_and_200_with_a_body() {
    let mut h = H::ready("2025-06-18", Some("s"));
    h.conn
        .session_mut()
        .notify(h.now, "notifications/roots/list_changed", None)
        .unwrap();
    let n = h.next();
    assert_eq!(
        n.purpose,
        Purpose::Message(session::MessageKind::Notification)
    );
    assert_eq!(n.headers.get(MCP_SESSION_ID), Some("s"));
    h.reply(n.id, 202, &[], b"");
    h.conn
        .session_mut()
        .notify(h.now, "notifications/roots/list_changed", None)
        .unwrap();
    let n2 = h.next();
    h.reply(
        n2.id,
        200,
        &[("content-type", "application/json")],
        b"{\"ok\":true}",
    );
    // A server ping on a POST stream: the session answers it, POSTed, 202.
    let t = h.send("tools/list", json!({}));
    let x = h.next();
    h.head(x.id, 200, &[("content-type", "text/event-stream")]);
    h.chunk(
        x.id,
        &sse(&[(
            "",
            None,
            &json!({"jsonrpc": "2.0", "id": "srv-1", "method": "ping"}),
        )]),
    );
    let r = h.next();
    assert_eq!(r.purpose, Purpose::Message(session::MessageKind::Response));
    assert_eq!(body(&r)["id"], "srv-1");
    h.reply(r.id, 202, &[], b"");
    h.chunk(x.id, &sse(&[("", None, &answer(&x, json!({"tools": []})))]));
    h.end(x.id);
    assert!(h.result(t).is_object());
    assert!(
        !h.http_events()
            .iter()
            .any(|e| matches!(e, HttpEvent::ExchangeFailed { .. })),
        "{:?}",
        h.events
    );
}

#[test]
fn oversized_and_non_ascii_session_ids_are_diagnostics() {
    use crate::http::headers::{InvalidSessionId, MAX_SESSION_ID_LEN};
    use crate::session::Diagnostic;
    let long = "s".repeat(MAX_SESSION_ID_LEN + 1);
    // What an adapter hands over for bytes outside ASCII (lossy UTF-8).
    for (id, refused) in [
        (
            long.as_str(),
            InvalidSessionId::TooLong {
                len: MAX_SESSION_ID_LEN + 1,
                max: MAX_SESSION_ID_LEN,
            },
        ),
        (
            "caf\u{fffd}",
            InvalidSessionId::InvalidByte {
                byte: 0xef,
                offset: 3,
            },
        ),
    ] {
        let mut h = H::new();
        h.handshake("2025-06-18", Some(id));
        let diagnostics: Vec<_> = h
            .events
            .iter()
            .filter_map(|e| match e {
                Event::Session(crate::session::Event::Diagnostic(d)) => Some(d),
                _ => None,
            })
            .collect();
        assert_eq!(
            diagnostics,
            [&Diagnostic::InvalidSessionId(refused.clone())],
            "{:?}",
            h.events
        );
        assert!(
            diagnostics[0]
                .to_string()
                .starts_with("refused the server's session id: "),
            "{}",
            diagnostics[0]
        );
        assert_eq!(h.conn.session_id(), None);
    }
}

#[test]
fn invalid_session_id_is_refused_and_not_sent() {
    let mut h = H::new();
    h.handshake("2025-06-18", Some("bad id\u{7f}"));
    assert!(
        h.http_events()
            .iter()
            .any(|e| matches!(e, HttpEvent::InvalidSessionId(_))),
        "{:?}",
        h.events
    );
    assert_eq!(h.conn.session_id(), None);
    let _t = h.send("tools/list", json!({}));
    let x = h.next();
    assert!(!x.headers.contains(MCP_SESSION_ID));
}

#[test]
fn listener_refusals_405_404_400_are_not_errors() {
    for status in [405, 404, 400] {
        let mut h = H::new();
        let listen = h.up_to_listener("2025-06-18", Some("s"));
        assert_eq!(listen.method, Method::Get);
        assert_eq!(listen.headers.get(ACCEPT), Some("text/event-stream"));
        assert_eq!(listen.headers.get(MCP_SESSION_ID), Some("s"));
        h.reply(listen.id, status, &[], b"not here");
        let evs = h.http_events();
        assert!(evs.iter().any(
            |e| matches!(e, HttpEvent::ListenerUnavailable { status: Some(s) } if *s == status)
        ));
        assert!(
            !evs.iter().any(|e| matches!(
                e,
                HttpEvent::SessionExpired { .. } | HttpEvent::ExchangeFailed { .. }
            )),
            "{evs:?}"
        );
        assert!(!h.conn.session().is_closed());
        h.advance(Duration::from_secs(120));
        // No retry of a refused listener (the request timeout is 60 s and nothing is pending).
        h.no_exchange();
    }
}

#[test]
fn listener_delivers_server_requests_and_notifications() {
    let mut h = H::new();
    let init = h.next();
    let b = body(&init);
    let reply = json!({"jsonrpc": "2.0", "id": b["id"], "result": init_result("2025-06-18")});
    h.reply(
        init.id,
        200,
        &[("content-type", "application/json")],
        reply.to_string().as_bytes(),
    );
    let n = h.next();
    h.reply(n.id, 202, &[], b"");
    let listen = h.next();
    h.head(listen.id, 200, &[("content-type", "text/event-stream")]);
    h.chunk(
        listen.id,
        &sse(&[(
            "",
            None,
            &json!({"jsonrpc": "2.0", "method": "notifications/resources/list_changed"}),
        )]),
    );
    assert_eq!(h.notifications(), ["notifications/resources/list_changed"]);
    assert!(
        h.http_events()
            .iter()
            .any(|e| matches!(e, HttpEvent::ListenerOpened))
    );
}

fn expect_status(err: &RequestError, status: u16) -> &crate::http::error::HttpStatusError {
    match err {
        RequestError::Http(e) => {
            assert_eq!(e.status, status);
            e
        }
        other => panic!("expected HTTP {status}, got {other:?}"),
    }
}

#[test]
fn status_errors_are_typed_with_a_bounded_excerpt_and_the_challenge() {
    let mut h = H::ready("2025-06-18", Some("s"));
    let a = h.send("tools/list", json!({}));
    let x = h.next();
    h.reply(
        x.id,
        406,
        &[("content-type", "text/plain")],
        b"Not Acceptable: Client must accept both",
    );
    assert!(
        expect_status(&h.error(a), 406)
            .body_excerpt
            .contains("must accept")
    );

    let b = h.send("tools/list", json!({}));
    let x = h.next();
    let big = vec![b'x'; 100_000];
    h.head(x.id, 500, &[]);
    for c in big.chunks(1000) {
        h.chunk(x.id, c);
        assert!(h.conn.buffered_len() <= crate::http::error::MAX_BODY_EXCERPT);
    }
    h.end(x.id);
    let e = h.error(b);
    assert!(expect_status(&e, 500).body_excerpt.len() <= crate::http::error::MAX_BODY_EXCERPT);

    let c = h.send("tools/list", json!({}));
    let x = h.next();
    h.reply(
        x.id,
        401,
        &[
            ("www-authenticate", r#"Bearer resource_metadata="https://as.example/prm", scope="a b", error="invalid_token""#),
            ("mcp-auth-server", "https://as.example"),
        ],
        b"",
    );
    let e = h.error(c);
    let e = expect_status(&e, 401);
    let bearer = e.bearer().expect("bearer challenge");
    assert_eq!(bearer.resource_metadata(), Some("https://as.example/prm"));
    assert_eq!(bearer.scope(), Some(vec!["a", "b"]));
    assert_eq!(bearer.error(), Some("invalid_token"));
    assert_eq!(e.auth_server.as_deref(), Some("https://as.example"));
    assert!(!h.conn.session().is_closed());
}

#[test]
fn jsonrpc_errors_keep_code_message_and_data() {
    let mut h = H::ready("2025-06-18", Some("s"));
    let t = h.send("tools/call", json!({}));
    let x = h.next();
    let err = json!({"jsonrpc": "2.0", "id": body(&x)["id"], "error": {"code": -32602, "message": "bad", "data": {"k": 1}}});
    h.reply_json(x.id, &err);
    match h.error(t) {
        RequestError::Remote(e) => {
            assert_eq!(e.code, -32602);
            assert_eq!(e.message, "bad");
            assert_eq!(
                e.data.as_ref().map(|d| d.get().to_owned()),
                Some("{\"k\":1}".to_owned())
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn invalid_json_body_fails_that_request_with_a_typed_error() {
    let mut h = H::ready("2025-06-18", Some("s"));
    let t = h.send("tools/list", json!({}));
    let x = h.next();
    h.reply(
        x.id,
        200,
        &[("content-type", "application/json")],
        b"{not json",
    );
    assert!(matches!(h.error(t), RequestError::InvalidResponse(m) if m.contains("not JSON")));
}

#[test]
fn oversized_json_body_is_cut_off_and_fails_the_request() {
    let mut config = ConnectionConfig::new(url());
    config.max_body = 1000;
    let mut h = H::with(config);
    h.handshake("2025-06-18", Some("s"));
    let t = h.send("tools/list", json!({}));
    let x = h.next();
    h.head(x.id, 200, &[("content-type", "application/json")]);
    h.chunk(x.id, &[b' '; 600]);
    h.chunk(x.id, &[b' '; 600]);
    assert!(matches!(h.error(t), RequestError::InvalidResponse(_)));
    assert!(h.aborts.contains(&x.id));
    assert_eq!(h.conn.buffered_len(), 0);
}

#[test]
fn stream_ending_without_the_response_fails_only_that_request() {
    let mut h = H::ready("2025-06-18", Some("s"));
    let a = h.send("tools/call", json!({"name": "a"}));
    let xa = h.next();
    let b = h.send("tools/call", json!({"name": "b"}));
    let xb = h.next();
    h.head(xa.id, 200, &[("content-type", "text/event-stream")]);
    h.chunk(xa.id, &sse(&[("", None, &json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": 1}}))]));
    h.end(xa.id);
    assert_eq!(h.error(a), RequestError::NoResponse);
    assert!(h.completions(b).is_empty());
    h.reply_json(xb.id, &answer(&xb, json!({"ok": 1})));
    assert_eq!(h.result(b), json!({"ok": 1}));
}

#[test]
fn close_sends_delete_with_the_session_id_accepts_405_and_pending_requests_close() {
    let mut h = H::ready("2025-06-18", Some("s"));
    let t = h.send("tools/call", json!({}));
    let x = h.next();
    h.conn.close(h.now);
    h.drain();
    assert!(matches!(
        h.error(t),
        RequestError::Closed(session::CloseReason::Local)
    ));
    assert!(h.aborts.contains(&x.id));
    let d = h.next();
    assert_eq!(d.method, Method::Delete);
    assert_eq!(d.purpose, Purpose::Delete);
    assert_eq!(d.headers.get(MCP_SESSION_ID), Some("s"));
    assert!(!h.conn.is_finished());
    h.reply(d.id, 405, &[], b"");
    assert!(h.conn.is_finished());
    assert!(matches!(h.http_events().last(), Some(HttpEvent::Finished)));
    assert_eq!(h.conn.poll_timeout(), None);
}

#[test]
fn delete_is_bounded_by_the_close_deadline() {
    let mut h = H::ready("2025-06-18", Some("s"));
    h.conn.close(h.now);
    let d = h.next();
    h.advance(Duration::from_secs(4));
    assert!(!h.conn.is_finished());
    h.advance(Duration::from_secs(1));
    assert!(h.conn.is_finished());
    assert!(h.aborts.contains(&d.id));
}

#[test]
fn notification_post_has_its_own_deadline() {
    let mut h = H::ready("2025-06-18", Some("s"));
    h.conn
        .session_mut()
        .notify(h.now, "notifications/roots/list_changed", None)
        .unwrap();
    let n = h.next();
    h.advance(Duration::from_secs(30));
    assert!(h.aborts.contains(&n.id));
    assert!(h.http_events().iter().any(|e| matches!(
        e,
        HttpEvent::ExchangeFailed {
            purpose: Purpose::Message(_),
            error: ExchangeError::Transport(_)
        }
    )));
}

#[test]
fn retry_after_on_429_and_503_is_honoured_clamped_and_bounded() {
    let mut config = ConnectionConfig::new(url());
    config.max_retry_after = Duration::from_secs(10);
    let mut h = H::with(config);
    h.handshake("2025-06-18", Some("s"));
    let t = h.send("tools/list", json!({}));
    let x = h.next();
    h.reply(x.id, 429, &[("retry-after", "2")], b"");
    h.advance(Duration::from_millis(1999));
    h.no_exchange();
    h.advance(Duration::from_millis(1));
    let x = h.next();
    assert_eq!(x.purpose, Purpose::Request(t));
    // A huge Retry-After is clamped (to 10 s here).
    h.reply(x.id, 503, &[("retry-after", "99999")], b"");
    h.advance(Duration::from_secs(9));
    h.no_exchange();
    h.advance(Duration::from_secs(1));
    let x = h.next();
    h.reply(x.id, 503, &[("retry-after", "0")], b"");
    h.advance(Duration::from_millis(1));
    let x = h.next();
    // The fourth refusal is final (3 retries).
    h.reply(x.id, 503, &[("retry-after", "0")], b"busy");
    assert!(matches!(h.error(t), RequestError::Http(e) if e.status == 503));
}

#[test]
fn same_origin_redirect_is_followed_and_cross_origin_refused_without_leaking_headers() {
    let mut config = ConnectionConfig::new(url());
    config
        .extra_headers
        .insert("authorization", "Bearer secret");
    let mut h = H::with(config);
    h.handshake("2025-06-18", Some("s"));
    let t = h.send("tools/list", json!({}));
    let x = h.next();
    assert_eq!(x.headers.get("authorization"), Some("Bearer secret"));
    h.reply(x.id, 307, &[("location", "/mcp2")], b"");
    let y = h.next();
    assert_eq!(y.url.as_str(), "http://127.0.0.1:8080/mcp2");
    assert_eq!(y.body, x.body);
    assert_eq!(y.headers.get("authorization"), Some("Bearer secret"));
    h.reply_json(y.id, &answer(&y, json!({"tools": []})));
    assert!(h.result(t).is_object());

    let u = h.send("tools/list", json!({}));
    let x = h.next();
    h.reply(x.id, 308, &[("location", "http://evil.example/mcp")], b"");
    assert!(matches!(h.error(u), RequestError::Transport(m) if m.contains("redirect refused")));
    h.drain();
    assert!(
        h.out
            .iter()
            .all(|x| x.url.host_str() != Some("evil.example")),
        "{:?}",
        h.out
    );
}

#[test]
fn a_request_timeout_aborts_its_exchange() {
    let mut h = H::ready("2025-06-18", Some("s"));
    let t = h.send("tools/call", json!({}));
    let x = h.next();
    h.head(x.id, 200, &[("content-type", "text/event-stream")]);
    h.advance(Duration::from_secs(60));
    assert!(matches!(h.error(t), RequestError::Timeout { .. }));
    assert!(h.aborts.contains(&x.id));
    let cancel = h.next();
    assert_eq!(body(&cancel)["method"], "notifications/cancelled");
}

#[test]
fn the_one_shot_helper_initializes_calls_and_deletes() {
    let t0 = Instant::now();
    let params = serde_json::value::to_raw_value(&json!({"name": "echo"})).unwrap();
    let mut shot = oneshot::OneShot::new(
        ConnectionConfig::new(url()),
        session_config(),
        "tools/call",
        Some(params),
        Duration::from_secs(10),
        t0,
    )
    .unwrap();
    let init = shot.poll_exchange(t0).unwrap();
    assert_eq!(init.purpose, Purpose::Initialize);
    let reply =
        json!({"jsonrpc": "2.0", "id": body(&init)["id"], "result": init_result("2025-06-18")});
    shot.handle_response_head(
        t0,
        init.id,
        200,
        [
            ("content-type", "application/json"),
            ("mcp-session-id", "one"),
        ]
        .into_iter()
        .collect(),
    );
    shot.handle_body(t0, init.id, reply.to_string().as_bytes());
    shot.handle_body_end(t0, init.id);
    let mut call = None;
    while let Some(x) = shot.poll_exchange(t0) {
        match x.purpose {
            Purpose::Request(_) => call = Some(x),
            _ => {
                shot.handle_response_head(t0, x.id, 202, HeaderList::new());
                shot.handle_body_end(t0, x.id);
            }
        }
    }
    let call = call.expect("the call");
    assert_eq!(call.headers.get(MCP_SESSION_ID), Some("one"));
    shot.handle_response_head(
        t0,
        call.id,
        200,
        [("content-type", "application/json")].into_iter().collect(),
    );
    shot.handle_body(
        t0,
        call.id,
        answer(&call, json!({"content": []})).to_string().as_bytes(),
    );
    shot.handle_body_end(t0, call.id);
    assert!(matches!(shot.outcome(), Some(Ok(_))));
    let mut delete = None;
    while let Some(x) = shot.poll_exchange(t0) {
        if x.method == Method::Delete {
            delete = Some(x);
        }
    }
    let delete = delete.expect("DELETE after the call");
    assert_eq!(delete.headers.get(MCP_SESSION_ID), Some("one"));
    shot.handle_response_head(t0, delete.id, 200, HeaderList::new());
    assert!(shot.is_done());
}

#[test]
fn the_one_shot_helper_gives_up_at_its_deadline() {
    let t0 = Instant::now();
    let mut shot = oneshot::OneShot::new(
        ConnectionConfig::new(url()),
        session_config(),
        "tools/call",
        None,
        Duration::from_secs(2),
        t0,
    )
    .unwrap();
    let _init = shot.poll_exchange(t0).unwrap();
    let at = shot.poll_timeout().unwrap();
    assert!(at <= t0 + Duration::from_secs(2));
    shot.handle_timeout(t0 + Duration::from_secs(2));
    assert!(matches!(shot.outcome(), Some(Err(_))));
    assert!(shot.is_done(), "no session id: nothing to DELETE");
    let _ = LAST_EVENT_ID;
}

#[test]
fn set_authorization_replaces_the_header_of_later_exchanges() {
    let mut config = ConnectionConfig::new(url());
    config.extra_headers.insert("authorization", "Bearer old");
    let mut h = H::with(config);
    h.handshake("2025-06-18", Some("s"));
    h.conn.set_authorization(Some("Bearer new".into()));
    let t = h.send("tools/list", json!({}));
    let x = h.next();
    assert_eq!(
        x.headers.get_all("authorization").collect::<Vec<_>>(),
        ["Bearer new"]
    );
    h.reply_json(x.id, &answer(&x, json!({"tools": []})));
    assert!(h.result(t).is_object());
    h.conn.set_authorization(None);
    let _ = h.send("tools/list", json!({}));
    let y = h.next();
    assert!(!y.headers.contains("authorization"));
}

#[test]
fn requests_wait_for_the_initialized_post_to_be_answered() {
    // A request queued during the handshake must not overtake `notifications/initialized`
    // on another connection: the server registers capability-dependent tools when it
    // handles that notification.
    let mut h = H::new();
    let t = h.send("tools/call", json!({"name": "trigger-sampling-request"}));
    let init = h.next();
    assert_eq!(init.purpose, Purpose::Initialize);
    h.answer_initialize(&init, "2025-06-18", Some("s"));
    let initialized = h.next();
    assert_eq!(body_of(&initialized)["method"], "notifications/initialized");
    // The listener may open beside it; the request may not.
    h.drain();
    assert!(
        h.out.iter().all(|x| x.purpose != Purpose::Request(t)),
        "the request was posted before initialized was answered: {:?}",
        h.out
    );
    h.head(initialized.id, 202, &[]);
    h.drain();
    let call = h
        .out
        .iter()
        .find(|x| x.purpose == Purpose::Request(t))
        .cloned()
        .expect("the request goes once initialized has its status");
    assert_eq!(body_of(&call)["method"], "tools/call");
}
