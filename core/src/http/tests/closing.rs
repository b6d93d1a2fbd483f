//! Closing: `notifications/cancelled` reaches the server before the session's DELETE, and
//! the whole close stays bounded by one deadline.

use serde_json::json;

use super::*;
use crate::http::headers::MCP_SESSION_ID;

/// Cancels `t` and closes at once, as a client does on Ctrl-C, then returns the cancel POST.
fn cancel_and_close(h: &mut H, t: RequestHandle) -> HttpRequest {
    h.conn
        .session_mut()
        .cancel(h.now, t, Some("interrupted".into()))
        .unwrap();
    h.conn.close(h.now);
    let cancel = h.next();
    assert_eq!(cancel.method, Method::Post);
    assert_eq!(body(&cancel)["method"], "notifications/cancelled");
    cancel
}

#[test]
fn a_cancel_queued_just_before_close_is_posted_before_the_delete() {
    let mut h = H::ready("2025-06-18", Some("s"));
    let t = h.send("tools/call", json!({"name": "slow"}));
    let call = h.next();
    let cancel = cancel_and_close(&mut h, t);
    assert_eq!(body(&cancel)["params"]["requestId"], body(&call)["id"]);
    assert_eq!(cancel.headers.get(MCP_SESSION_ID), Some("s"));
    assert!(h.aborts.contains(&call.id), "the call's stream is dropped");
    assert!(!h.aborts.contains(&cancel.id));
    // No DELETE while the cancellation is unanswered.
    h.no_exchange();
    assert!(!h.conn.is_finished());
    h.reply(cancel.id, 202, &[], b"");
    let delete = h.next();
    assert_eq!(delete.method, Method::Delete);
    assert_eq!(delete.headers.get(MCP_SESSION_ID), Some("s"));
    h.reply(delete.id, 200, &[], b"");
    assert!(h.conn.is_finished());
    assert_eq!(h.conn.poll_timeout(), None);
}

#[test]
fn a_cancel_already_in_flight_at_close_is_kept_and_waited_for() {
    let mut h = H::ready("2025-06-18", Some("s"));
    let t = h.send("tools/call", json!({"name": "slow"}));
    let call = h.next();
    h.conn.session_mut().cancel(h.now, t, None).unwrap();
    let cancel = h.next();
    assert_eq!(body(&cancel)["method"], "notifications/cancelled");
    let other = h.send("tools/list", json!({}));
    let list = h.next();
    h.conn.close(h.now);
    h.drain();
    assert!(h.aborts.contains(&call.id));
    assert!(h.aborts.contains(&list.id), "other exchanges are dropped");
    assert!(!h.aborts.contains(&cancel.id), "the cancellation is not");
    assert!(matches!(h.error(other), RequestError::Closed(_)));
    h.no_exchange();
    // Any answer will do, an error status included.
    h.reply(cancel.id, 500, &[], b"oops");
    let delete = h.next();
    assert_eq!(delete.method, Method::Delete);
    h.reply(delete.id, 405, &[], b"");
    assert!(h.conn.is_finished());
}

#[test]
fn an_unanswered_cancel_is_bounded_by_the_close_deadline() {
    let mut h = H::ready("2025-06-18", Some("s"));
    let t = h.send("tools/call", json!({}));
    let _call = h.next();
    let cancel = cancel_and_close(&mut h, t);
    h.advance(Duration::from_secs(4));
    assert!(!h.conn.is_finished());
    h.advance(Duration::from_secs(1));
    assert!(h.conn.is_finished());
    assert!(h.aborts.contains(&cancel.id));
    assert_eq!(h.conn.poll_timeout(), None);
}

#[test]
fn a_failed_cancel_still_lets_the_delete_go() {
    let mut h = H::ready("2025-06-18", Some("s"));
    let t = h.send("tools/call", json!({}));
    let _call = h.next();
    let cancel = cancel_and_close(&mut h, t);
    h.conn.handle_failure(
        h.now,
        cancel.id,
        ExchangeFailure::new(FailureKind::Connect, "refused"),
    );
    let delete = h.next();
    assert_eq!(delete.method, Method::Delete);
}

#[test]
fn without_a_session_id_the_cancel_goes_out_and_the_connection_finishes() {
    let mut h = H::ready("2025-06-18", None);
    let t = h.send("tools/call", json!({}));
    let _call = h.next();
    let cancel = cancel_and_close(&mut h, t);
    assert!(!h.conn.is_finished());
    h.reply(cancel.id, 202, &[], b"");
    h.no_exchange();
    assert!(h.conn.is_finished());
}

#[test]
fn other_queued_messages_are_dropped_at_close() {
    let mut h = H::ready("2025-06-18", Some("s"));
    h.conn
        .session_mut()
        .notify(h.now, "notifications/roots/list_changed", None)
        .unwrap();
    h.conn.close(h.now);
    let delete = h.next();
    assert_eq!(delete.method, Method::Delete, "no other POST before it");
}

/// A detached request (the `tasks/cancel` of a dropped task call) is an ordinary POST of the
/// session: it carries the session id, an error answer to it changes nothing (the session
/// stays up, the initialize body is not replaced), and queued just before close it is still
/// posted before the DELETE.
#[test]
fn a_detached_request_is_posted_in_the_session_and_survives_a_close() {
    use std::borrow::Cow;

    let params = || Some(serde_json::value::to_raw_value(&json!({"taskId": "t1"})).unwrap());
    let mut h = H::ready("2025-11-25", Some("s"));
    h.conn
        .session_mut()
        .send_detached_request(Cow::Borrowed("tasks/cancel"), params())
        .unwrap();
    let cancel = h.next();
    assert_eq!(cancel.method, Method::Post);
    assert_eq!(body(&cancel)["method"], "tasks/cancel");
    assert_eq!(cancel.headers.get(MCP_SESSION_ID), Some("s"));
    // The server refuses it (say, the task already ended): the connection goes on.
    h.reply(cancel.id, 400, &[], b"{\"error\":\"bad\"}");
    let t = h.send("tools/list", json!({}));
    let list = h.next();
    assert_eq!(list.headers.get(MCP_SESSION_ID), Some("s"));
    h.reply_json(list.id, &answer(&list, json!({"tools": []})));
    assert_eq!(h.result(t), json!({"tools": []}));

    // Queued, then closed at once: still posted, before the DELETE.
    h.conn
        .session_mut()
        .send_detached_request(Cow::Borrowed("tasks/cancel"), params())
        .unwrap();
    h.conn.close(h.now);
    let cancel = h.next();
    assert_eq!(body(&cancel)["method"], "tasks/cancel");
    assert_eq!(cancel.headers.get(MCP_SESSION_ID), Some("s"));
    h.no_exchange();
    h.reply(
        cancel.id,
        200,
        &[("content-type", "application/json")],
        b"{}",
    );
    let delete = h.next();
    assert_eq!(delete.method, Method::Delete);
    h.reply(delete.id, 200, &[], b"");
    assert!(h.conn.is_finished());
}

#[test]
fn a_lost_transport_completes_every_request_and_closes_with_its_detail() {
    let mut h = H::ready("2025-06-18", Some("s"));
    let t = h.send("tools/call", json!({"name": "slow"}));
    let call = h.next();
    h.conn
        .handle_transport_lost(h.now, Some("the task was stopped".into()));
    h.drain();
    assert!(
        h.aborts.contains(&call.id),
        "the call's exchange is dropped"
    );
    assert!(matches!(
        h.error(t),
        RequestError::Closed(session::CloseReason::TransportClosed { detail: Some(d) })
            if d == "the task was stopped"
    ));
    assert!(h.events.iter().any(|e| matches!(
        e,
        Event::Session(session::Event::Closed {
            reason: session::CloseReason::TransportClosed { .. }
        })
    )));
    // Like any close: the DELETE of the session, then the end.
    let delete = h.next();
    assert_eq!(delete.method, Method::Delete);
    h.reply(delete.id, 200, &[], b"");
    assert!(h.conn.is_finished());
}
