//! `subscriptions/listen` on the server session (2026-07-28), one rule per test: the
//! acknowledgement first, the honoured subset, the `subscriptionId` on every delivery, the
//! cap, the client's cancel, the host's close and the session's, the initialize era
//! unchanged, and hostile input.

use serde_json::{Value, json};

use super::harness::{Client, config};
use crate::jsonrpc::Id;
use crate::server::{ClientRequestId, Event, ListChanged, ListenEnd, UsageError};
use crate::session::CloseReason;
use crate::types::v2026::ListenFilter;

const SUB_ID: &str = "io.modelcontextprotocol/subscriptionId";

fn envelope() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "listener", "version": "1"},
    })
}

/// Sends a listen with wire id `id` asking for `notifications`.
fn listen(c: &mut Client, id: Value, notifications: Value) {
    c.send(json!({
        "jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
        "params": {"_meta": envelope(), "notifications": notifications},
    }));
}

/// The token of the one `ListenOpened` among the events, with what it honoured.
fn opened(c: &mut Client) -> (ClientRequestId, ListenFilter) {
    let found = c.events().into_iter().find_map(|e| match e {
        Event::ListenOpened { id, honoured, .. } => Some((id, honoured)),
        _ => None,
    });
    found.expect("a ListenOpened event")
}

/// A session in the 2026 era with one listen (wire id `id`) open; sent and events drained.
fn listening(id: Value, notifications: Value) -> (Client, ClientRequestId) {
    let mut c = Client::new();
    listen(&mut c, id, notifications);
    c.received();
    let (token, _) = opened(&mut c);
    (c, token)
}

#[test]
fn the_acknowledgement_comes_first_with_the_honoured_subset() {
    let mut c = Client::new();
    // No `server/discover` first: the listen's own envelope pins the era.
    listen(
        &mut c,
        json!("listen-1"),
        json!({
            "toolsListChanged": true,
            "promptsListChanged": true,
            "resourcesListChanged": true,
            "resourceSubscriptions": ["file:///project/config.json"],
        }),
    );
    let ack = c.one();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert!(ack.get("id").is_none(), "{ack}");
    assert_eq!(ack["params"]["_meta"][SUB_ID], "listen-1");
    // The test server declares tools.listChanged and resources.subscribe, no prompts and no
    // resources.listChanged: those are left out.
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true, "resourceSubscriptions": ["file:///project/config.json"]})
    );
    let events = c.events();
    assert!(
        matches!(
            &events[..],
            [Event::ListenOpened { requested, honoured, .. }]
                if requested.prompts_list_changed == Some(true)
                    && honoured.prompts_list_changed.is_none()
                    && honoured.tools_list_changed == Some(true)
        ),
        "{events:?}"
    );
    assert_eq!(c.server.open_listens(), 1);
    // The listen stays open: no answer was sent, and the host has nothing to answer.
    assert_eq!(c.server.open_client_requests(), 0);
}

#[test]
fn every_delivery_carries_the_subscription_id_of_each_listen_that_asked() {
    let mut c = Client::new();
    listen(&mut c, json!(7), json!({"toolsListChanged": true}));
    listen(
        &mut c,
        json!("b"),
        json!({"resourceSubscriptions": ["file:///p"]}),
    );
    assert_eq!(c.received().len(), 2);
    c.events();

    c.server
        .notify_list_changed(c.now, ListChanged::Tools)
        .unwrap();
    let tools = c.one();
    assert_eq!(tools["method"], "notifications/tools/list_changed");
    assert_eq!(tools["params"]["_meta"][SUB_ID], 7);

    c.server
        .notify_resource_updated(c.now, "file:///p/readme.md")
        .unwrap();
    let updated = c.one();
    assert_eq!(updated["method"], "notifications/resources/updated");
    assert_eq!(updated["params"]["uri"], "file:///p/readme.md");
    assert_eq!(updated["params"]["_meta"][SUB_ID], "b");

    // A resource nobody subscribed: nothing is sent, and that is not an error.
    c.server
        .notify_resource_updated(c.now, "file:///elsewhere")
        .unwrap();
    assert!(c.received().is_empty());

    // The generic command routes the same way, keeping the host's own `_meta` members.
    c.server
        .notify(
            c.now,
            "notifications/tools/list_changed",
            Some(crate::jsonrpc::to_raw(&json!({"_meta": {"x": 1}})).unwrap()),
        )
        .unwrap();
    let generic = c.one();
    assert_eq!(generic["params"]["_meta"], json!({"x": 1, SUB_ID: 7}));
    // A `resources/updated` without a uri cannot be routed: the host hears why.
    let err = c
        .server
        .notify(c.now, "notifications/resources/updated", None)
        .unwrap_err();
    assert!(matches!(err, UsageError::InvalidParams(_)), "{err:?}");
    // The acknowledgement is the session's to send.
    let err = c
        .server
        .notify(c.now, "notifications/subscriptions/acknowledged", None)
        .unwrap_err();
    assert!(matches!(err, UsageError::ReservedMethod(_)), "{err:?}");
}

#[test]
fn a_notification_goes_to_every_listen_that_asked_and_no_other() {
    let mut c = Client::new();
    for id in [1, 2, 3] {
        let wants = id != 2;
        listen(&mut c, json!(id), json!({"toolsListChanged": wants}));
    }
    c.received();
    c.events();
    c.server
        .notify_list_changed(c.now, ListChanged::Tools)
        .unwrap();
    let ids: Vec<Value> = c
        .received()
        .iter()
        .map(|m| m["params"]["_meta"][SUB_ID].clone())
        .collect();
    assert_eq!(ids, [json!(1), json!(3)]);
}

#[test]
fn with_no_listen_nothing_is_sent_in_2026() {
    let mut c = Client::new();
    c.request(1, "tools/list", json!({"_meta": envelope()}));
    c.received();
    c.events();
    c.server
        .notify_list_changed(c.now, ListChanged::Tools)
        .unwrap();
    c.server
        .notify_resource_updated(c.now, "file:///p")
        .unwrap();
    assert!(c.received().is_empty());
    // The capability is still checked.
    let err = c
        .server
        .notify_list_changed(c.now, ListChanged::Prompts)
        .unwrap_err();
    assert!(matches!(err, UsageError::CapabilityNotDeclared { .. }));
}

#[test]
fn listens_by_host_hand_the_listen_over_and_send_notifications_as_given() {
    let mut c = Client::with_config(config().with_listens_by_host(true));
    listen(&mut c, json!("l1"), json!({"toolsListChanged": true}));
    // Nothing answered by the session: the host has the request.
    assert!(c.received().is_empty());
    let events = c.events();
    assert!(
        matches!(&events[..], [Event::Request { method, .. }] if method == "subscriptions/listen"),
        "{events:?}"
    );
    // Sent untagged, as given, with no listen of the session's own to fan out to.
    c.server
        .notify_list_changed(c.now, ListChanged::Tools)
        .unwrap();
    assert_eq!(
        c.one(),
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    );
}

#[test]
fn the_initialize_era_is_unchanged() {
    let mut c = Client::ready(json!({}));
    c.server
        .notify_list_changed(c.now, ListChanged::Tools)
        .unwrap();
    let sent = c.one();
    assert_eq!(
        sent,
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    );
    c.server
        .notify_resource_updated(c.now, "file:///x")
        .unwrap();
    assert_eq!(c.one()["params"], json!({"uri": "file:///x"}));
    // The method does not exist in that era.
    c.request(5, "subscriptions/listen", json!({"notifications": {}}));
    let refused = c.one();
    assert_eq!(refused["id"], 5);
    assert_eq!(refused["error"]["code"], -32601);
    assert!(c.events().is_empty());
}

#[test]
fn the_client_cancels_a_listen_and_nothing_more_reaches_it() {
    let (mut c, token) = listening(json!(4), json!({"toolsListChanged": true}));
    c.notify(
        "notifications/cancelled",
        json!({"requestId": 4, "reason": "done"}),
    );
    let events = c.events();
    assert!(
        matches!(
            &events[..],
            [Event::ListenClosed { id, end: ListenEnd::Cancelled { reason: Some(r) } }]
                if *id == token && r == "done"
        ),
        "{events:?}"
    );
    // No answer for a cancelled listen, and no more deliveries.
    c.server
        .notify_list_changed(c.now, ListChanged::Tools)
        .unwrap();
    assert!(c.received().is_empty());
    assert_eq!(c.server.open_listens(), 0);
    // Its id is free again.
    listen(&mut c, json!(4), json!({}));
    assert_eq!(
        c.one()["method"],
        "notifications/subscriptions/acknowledged"
    );
}

#[test]
fn the_host_closes_a_listen_with_the_complete_result() {
    let (mut c, token) = listening(json!("listen-1"), json!({"toolsListChanged": true}));
    assert_eq!(c.server.wire_id(token), Some(&Id::from("listen-1")));
    c.server.close_listen(c.now, token).unwrap();
    let done = c.one();
    assert_eq!(done["id"], "listen-1");
    assert_eq!(done["result"]["resultType"], "complete");
    assert_eq!(done["result"]["_meta"][SUB_ID], "listen-1");
    assert_eq!(
        done["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "test-server"
    );
    let events = c.events();
    assert!(
        matches!(&events[..], [Event::ListenClosed { id, end: ListenEnd::Closed }] if *id == token),
        "{events:?}"
    );
    // Once: a second close is the host's race.
    assert_eq!(
        c.server.close_listen(c.now, token),
        Err(UsageError::NotOpen(token))
    );
    // A request token is not a listen.
    assert!(
        c.server
            .respond_error(c.now, token, crate::jsonrpc::ErrorObject::new(1, "x"))
            .is_err()
    );
}

#[test]
fn closing_the_session_completes_every_listen_before_closed() {
    let mut c = Client::new();
    listen(&mut c, json!(1), json!({}));
    listen(&mut c, json!(2), json!({}));
    c.received();
    c.events();
    c.server.close(c.now);
    let sent = c.received();
    let ids: Vec<&Value> = sent.iter().map(|m| &m["id"]).collect();
    assert_eq!(ids, [&json!(1), &json!(2)]);
    assert!(sent.iter().all(|m| m["result"]["resultType"] == "complete"));
    let events = c.events();
    assert!(
        matches!(
            &events[..],
            [
                Event::ListenClosed {
                    end: ListenEnd::SessionClosed,
                    ..
                },
                Event::ListenClosed {
                    end: ListenEnd::SessionClosed,
                    ..
                },
                Event::Closed {
                    reason: CloseReason::Local
                },
            ]
        ),
        "{events:?}"
    );
}

#[test]
fn a_lost_transport_ends_listens_without_an_answer() {
    let (mut c, token) = listening(json!(1), json!({}));
    c.server.handle_transport_closed(c.now, None);
    assert!(c.received().is_empty());
    let events = c.events();
    assert!(
        matches!(
            &events[..],
            [Event::ListenClosed { id, end: ListenEnd::SessionClosed }, Event::Closed { .. }]
                if *id == token
        ),
        "{events:?}"
    );
}

#[test]
fn listens_past_the_cap_get_a_clear_error() {
    let mut c = Client::with_config(config().with_listen_limits(2, 3));
    for id in 1..=3 {
        listen(&mut c, json!(id), json!({}));
    }
    let sent = c.received();
    assert_eq!(sent.len(), 3, "{sent:?}");
    assert_eq!(sent[2]["id"], 3);
    assert_eq!(sent[2]["error"]["code"], -32600);
    let message = sent[2]["error"]["message"].as_str().unwrap();
    assert!(message.contains("limit 2"), "{message}");
    assert_eq!(c.server.open_listens(), 2);
    // Too many URIs on one listen (cap 3), after one closed.
    c.notify("notifications/cancelled", json!({"requestId": 1}));
    listen(
        &mut c,
        json!(9),
        json!({"resourceSubscriptions": ["a:1", "a:2", "a:3", "a:4"]}),
    );
    let refused = c.one();
    assert_eq!(refused["error"]["code"], -32602);
    assert_eq!(c.server.open_listens(), 1);
}

#[test]
fn hostile_listens_are_refused_and_never_open() {
    let mut c = Client::new();
    for (id, params) in [
        (1, json!({"_meta": envelope()})),
        (2, json!({"_meta": envelope(), "notifications": 5})),
        (
            3,
            json!({"_meta": envelope(), "notifications": {"toolsListChanged": "yes"}}),
        ),
        (
            4,
            json!({"_meta": envelope(), "notifications": {"resourceSubscriptions": [1]}}),
        ),
    ] {
        c.request(id, "subscriptions/listen", params);
        let refused = c.one();
        assert_eq!(refused["id"], id);
        assert_eq!(refused["error"]["code"], -32602, "{refused}");
    }
    // Without an envelope, before anything: refused as any request is.
    let mut fresh = Client::new();
    fresh.request(1, "subscriptions/listen", json!({"notifications": {}}));
    assert_eq!(fresh.one()["error"]["code"], -32600);
    assert_eq!(fresh.server.open_listens(), 0);
    // Junk params shapes: an array, a string.
    for params in [json!([1, 2]), json!("x")] {
        c.send(
            json!({"jsonrpc": "2.0", "id": 8, "method": "subscriptions/listen", "params": params}),
        );
        assert!(c.one().get("error").is_some());
    }
    assert_eq!(c.server.open_listens(), 0);
    assert!(
        c.events()
            .iter()
            .all(|e| !matches!(e, Event::ListenOpened { .. }))
    );
}

#[test]
fn a_duplicate_id_is_refused_and_the_first_listen_stays() {
    let (mut c, token) = listening(json!(3), json!({"toolsListChanged": true}));
    // The same id again, as a listen and as a tool call.
    listen(&mut c, json!(3), json!({}));
    assert_eq!(c.one()["error"]["code"], -32600);
    c.request(
        3,
        "tools/call",
        json!({"name": "echo", "_meta": envelope()}),
    );
    assert_eq!(c.one()["error"]["code"], -32600);
    assert_eq!(
        c.server.listens().map(|(id, _)| id).collect::<Vec<_>>(),
        [token]
    );
    // And a listen may not reuse the id of an open request.
    c.request(
        11,
        "tools/call",
        json!({"name": "echo", "_meta": envelope()}),
    );
    listen(&mut c, json!(11), json!({}));
    assert_eq!(c.one()["error"]["code"], -32600);
    c.server
        .notify_list_changed(c.now, ListChanged::Tools)
        .unwrap();
    assert_eq!(c.one()["params"]["_meta"][SUB_ID], 3);
}
