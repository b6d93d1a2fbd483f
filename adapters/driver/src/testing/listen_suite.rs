//! Test bodies for subscriptions ([`Client::subscribe`], [`Client::listen`]) over the fake
//! server, in both eras, generic over the runtime like [`suite`](super::suite).

use std::time::Duration;

use futures_util::StreamExt as _;
use mcp_proto::session::EraPolicy;
use mcp_proto::types::v2026::ListenFilter;
use serde_json::{Value, json};

use super::FakeServer;
use super::suite::{connect_fake, eventually, within};
use crate::{Client, ClientBuilder, Error, Runtime};

const ACK: &str = "notifications/subscriptions/acknowledged";
const WAIT: Duration = Duration::from_secs(5);

/// A fake server that speaks 2026-07-28 (it answers `server/discover`) and a client in the
/// discover era.
pub(crate) async fn connect_modern<R: Runtime>(
    rt: &R,
    builder: ClientBuilder<R>,
) -> (FakeServer, Client<R>) {
    let (server, io) = FakeServer::start(rt);
    server.on_request("server/discover", |_| {
        Ok(json!({
            "resultType": "complete",
            "supportedVersions": ["2026-07-28"],
            "capabilities": {
                "resources": {"subscribe": true, "listChanged": true},
                "tools": {"listChanged": true},
                "extensions": {"io.modelcontextprotocol/tasks": {}}
            },
            "ttlMs": 0,
            "cacheScope": "public",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "fake-2026", "version": "1"}}
        }))
    });
    let client = builder
        .runtime(rt.clone())
        .name("fake-2026")
        .era_policy(EraPolicy::Discover)
        .over(io.reader, io.writer)
        .await
        .expect("discover handshake with the fake server");
    assert_eq!(client.era(), mcp_proto::session::Era::Discover);
    (server, client)
}

/// A notification on the listen `request`'s stream.
fn on_listen(server: &FakeServer, request: &Value, method: &str, mut params: Value) {
    params["_meta"] = json!({"io.modelcontextprotocol/subscriptionId": request["id"]});
    server.notify(method, params);
}

fn uri_of(n: &mcp_proto::session::ServerNotification) -> Option<String> {
    n.resource_uri()
}

/// 2026-07-28: `subscribe` is a `subscriptions/listen` that returns once acknowledged; its
/// notifications reach its own stream only (another listen, the general stream and untagged
/// notifications are apart); dropping it sends `notifications/cancelled` for it (stdio); a
/// listen the server ends cleanly ends its stream and `close` reports `Ok`.
pub async fn listen_routes_and_ends<R: Runtime>(rt: R) {
    let (server, client) = connect_modern(&rt, ClientBuilder::new()).await;
    let mut general = client.notifications();
    let (sub, request) = {
        let subscribing = client.subscribe("file:///a");
        let answering = async {
            let request = server
                .recv_method("subscriptions/listen")
                .await
                .expect("listen");
            assert_eq!(
                request["params"]["notifications"],
                json!({"resourceSubscriptions": ["file:///a"]})
            );
            on_listen(
                &server,
                &request,
                ACK,
                json!({"notifications": {"resourceSubscriptions": ["file:///a"]}}),
            );
            request
        };
        let (sub, request) = futures_util::future::join(subscribing, answering).await;
        (sub.expect("subscribe"), request)
    };
    let mut sub = sub;
    assert_eq!(sub.uri(), Some("file:///a"));
    assert_eq!(
        sub.honoured()
            .and_then(|h| h.resource_subscriptions.clone()),
        Some(vec!["file:///a".to_owned()])
    );
    // A second listen, for list changes.
    let filter = ListenFilter {
        tools_list_changed: Some(true),
        ..ListenFilter::default()
    };
    let (tools, tools_request) = {
        let answering = async {
            let request = server
                .recv_method("subscriptions/listen")
                .await
                .expect("listen");
            on_listen(
                &server,
                &request,
                ACK,
                json!({"notifications": {"toolsListChanged": true}}),
            );
            request
        };
        let (sub, request) = futures_util::future::join(client.listen(filter), answering).await;
        (sub.expect("listen"), request)
    };
    let mut tools = tools;
    assert_ne!(request["id"], tools_request["id"]);
    on_listen(
        &server,
        &tools_request,
        "notifications/tools/list_changed",
        json!({}),
    );
    on_listen(
        &server,
        &request,
        "notifications/resources/updated",
        json!({"uri": "file:///a"}),
    );
    server.notify(
        "notifications/message",
        json!({"level": "info", "data": "untagged"}),
    );
    let n = within(&rt, WAIT, sub.recv())
        .await
        .expect("an update")
        .expect("open");
    assert_eq!(uri_of(&n.expect("no lag")).as_deref(), Some("file:///a"));
    let n = within(&rt, WAIT, tools.recv())
        .await
        .expect("a change")
        .expect("open");
    assert_eq!(
        n.expect("no lag").method,
        "notifications/tools/list_changed"
    );
    let n = within(&rt, WAIT, general.recv())
        .await
        .expect("general")
        .expect("open");
    assert_eq!(
        n.expect("no lag").method,
        "notifications/message",
        "routed notifications stay off the general stream"
    );
    // Dropping the first ends it at the server.
    drop(sub);
    let cancelled = within(&rt, WAIT, server.recv_method("notifications/cancelled"))
        .await
        .expect("cancel in time")
        .expect("cancelled");
    assert_eq!(cancelled["params"]["requestId"], request["id"]);
    // The server ends the second cleanly: its stream ends, `close` says Ok.
    server.respond(
        &tools_request,
        json!({"resultType": "complete", "_meta": {"io.modelcontextprotocol/subscriptionId": tools_request["id"]}}),
    );
    assert!(
        within(&rt, WAIT, tools.next())
            .await
            .expect("end in time")
            .is_none()
    );
    tools.close().await.expect("ended cleanly");
    assert_eq!(server.received_method("notifications/cancelled").len(), 1);
    client.close().await;
}

/// 2026-07-28: a refused listen is the server's error; one never acknowledged fails with
/// the request timeout and is cancelled; a connection that closes ends an open subscription
/// and `close` reports it.
pub async fn listen_refused_unacknowledged_closed<R: Runtime>(rt: R) {
    let builder = ClientBuilder::new().request_timeout(Some(Duration::from_millis(300)));
    let (server, client) = connect_modern(&rt, builder).await;
    let (refused, _) = futures_util::future::join(client.subscribe("file:///nope"), async {
        let request = server
            .recv_method("subscriptions/listen")
            .await
            .expect("listen");
        server.respond_error(&request, -32602, "no such resource");
    })
    .await;
    assert!(
        matches!(refused, Err(Error::Remote { code: -32602, .. })),
        "{refused:?}"
    );
    let silent = within(&rt, WAIT, client.subscribe("file:///silent"))
        .await
        .expect("bounded");
    assert!(matches!(silent, Err(Error::Timeout { .. })), "{silent:?}");
    let request = server
        .recv_method("subscriptions/listen")
        .await
        .expect("listen");
    assert!(
        eventually(&rt, || server
            .received_method("notifications/cancelled")
            .iter()
            .any(|c| c["params"]["requestId"] == request["id"]))
        .await
    );
    // Acknowledged, then open past the request timeout: no deadline any more.
    let (open, request) = futures_util::future::join(client.subscribe("file:///a"), async {
        let request = server
            .recv_method("subscriptions/listen")
            .await
            .expect("listen");
        on_listen(&server, &request, ACK, json!({"notifications": {}}));
        request
    })
    .await;
    let mut open = open.expect("subscribe");
    assert!(
        within(&rt, Duration::from_millis(600), open.next())
            .await
            .is_none(),
        "still open"
    );
    on_listen(
        &server,
        &request,
        "notifications/resources/updated",
        json!({"uri": "file:///a"}),
    );
    assert!(
        within(&rt, WAIT, open.next())
            .await
            .expect("update")
            .is_some()
    );
    server.hang_up();
    assert!(
        within(&rt, WAIT, open.next())
            .await
            .expect("end in time")
            .is_none()
    );
    let err = open.close().await.expect_err("the connection closed");
    assert!(
        matches!(err, Error::Closed { .. } | Error::Exited { .. }),
        "{err:?}"
    );
}

/// The initialize era: `listen` subscribes each URI and filters the connection's
/// notifications locally (URIs and the list changes asked for); dropping unsubscribes each.
pub async fn listen_in_the_initialize_era<R: Runtime>(rt: R) {
    let (server, client) = connect_fake(&rt, ClientBuilder::new()).await;
    server.on_request("resources/subscribe", |_| Ok(json!({})));
    server.on_request("resources/unsubscribe", |_| Ok(json!({})));
    let filter = ListenFilter {
        prompts_list_changed: Some(true),
        resource_subscriptions: Some(vec!["file:///a".into(), "file:///b".into()]),
        ..ListenFilter::default()
    };
    let mut sub = client.listen(filter).await.expect("listen");
    assert!(sub.honoured().is_none());
    let subscribed: Vec<Value> = server
        .received_method("resources/subscribe")
        .iter()
        .map(|m| m["params"]["uri"].clone())
        .collect();
    assert_eq!(subscribed, [json!("file:///a"), json!("file:///b")]);
    server.notify("notifications/tools/list_changed", json!({}));
    server.notify(
        "notifications/resources/updated",
        json!({"uri": "file:///c"}),
    );
    server.notify(
        "notifications/resources/updated",
        json!({"uri": "file:///b"}),
    );
    server.notify("notifications/prompts/list_changed", json!({}));
    let first = within(&rt, WAIT, sub.recv())
        .await
        .expect("in time")
        .expect("open");
    assert_eq!(
        uri_of(&first.expect("no lag")).as_deref(),
        Some("file:///b")
    );
    let second = within(&rt, WAIT, sub.recv())
        .await
        .expect("in time")
        .expect("open");
    assert_eq!(
        second.expect("no lag").method,
        "notifications/prompts/list_changed"
    );
    // `subscriptions/listen` does not exist in this era, and none was sent.
    assert!(server.received_method("subscriptions/listen").is_empty());
    sub.close()
        .await
        .expect("a local subscription ends cleanly");
    assert!(
        eventually(&rt, || server
            .received_method("resources/unsubscribe")
            .len()
            == 2)
        .await
    );
    // A refused URI unsubscribes the ones already subscribed.
    server.on_request("resources/subscribe", |p| {
        if p["uri"] == "file:///bad" {
            Err((-32602, "no".into()))
        } else {
            Ok(json!({}))
        }
    });
    let filter = ListenFilter {
        resource_subscriptions: Some(vec!["file:///ok".into(), "file:///bad".into()]),
        ..ListenFilter::default()
    };
    assert!(matches!(
        client.listen(filter).await,
        Err(Error::Remote { code: -32602, .. })
    ));
    assert!(
        eventually(&rt, || server
            .received_method("resources/unsubscribe")
            .iter()
            .any(|m| m["params"]["uri"] == "file:///ok"))
        .await
    );
}

/// The initialize era: subscriptions of one client share each resource URI. The first to
/// want a URI sends its `resources/subscribe`; another one (by `subscribe` or `listen`) sends
/// nothing, and dropping one of them sends nothing either, so the others keep their updates;
/// the last one's drop sends the one `resources/unsubscribe`. A URI wanted again afterwards
/// is subscribed again, and a refused subscribe holds nothing.
pub async fn subscriptions_share_a_uri_in_the_initialize_era<R: Runtime>(rt: R) {
    let (server, client) = connect_fake(&rt, ClientBuilder::new()).await;
    server.on_request("resources/subscribe", |_| Ok(json!({})));
    server.on_request("resources/unsubscribe", |_| Ok(json!({})));
    let uris = |method: &str| -> Vec<Value> {
        server
            .received_method(method)
            .iter()
            .map(|m| m["params"]["uri"].clone())
            .collect()
    };
    let first = client
        .subscribe("file:///a")
        .await
        .expect("first subscription");
    let mut second = client
        .listen(ListenFilter {
            resource_subscriptions: Some(vec!["file:///a".into(), "file:///b".into()]),
            ..ListenFilter::default()
        })
        .await
        .expect("second subscription");
    assert_eq!(
        uris("resources/subscribe"),
        [json!("file:///a"), json!("file:///b")]
    );
    drop(first);
    // The server reads a request sent after the drop after anything the drop sent.
    client.ping().await.expect("ping");
    assert_eq!(uris("resources/unsubscribe"), Vec::<Value>::new());
    server.notify(
        "notifications/resources/updated",
        json!({"uri": "file:///a"}),
    );
    let update = within(&rt, WAIT, second.recv())
        .await
        .expect("in time")
        .expect("still open")
        .expect("no lag");
    assert_eq!(uri_of(&update).as_deref(), Some("file:///a"));
    // A third one joins while the second holds the URI.
    let third = client
        .subscribe("file:///a")
        .await
        .expect("third subscription");
    assert_eq!(uris("resources/subscribe").len(), 2);
    drop(second);
    client.ping().await.expect("ping");
    assert_eq!(uris("resources/unsubscribe"), [json!("file:///b")]);
    drop(third);
    assert!(
        eventually(&rt, || uris("resources/unsubscribe").len() == 2).await,
        "{:?}",
        uris("resources/unsubscribe")
    );
    assert_eq!(
        uris("resources/unsubscribe"),
        [json!("file:///b"), json!("file:///a")]
    );
    // Nobody holds it now: the next one subscribes upstream again.
    let again = client
        .subscribe("file:///a")
        .await
        .expect("subscribed again");
    assert_eq!(
        uris("resources/subscribe"),
        [json!("file:///a"), json!("file:///b"), json!("file:///a")]
    );
    // A refused subscribe holds nothing: the next subscription to its URI asks again.
    server.on_request("resources/subscribe", |p| {
        if p["uri"] == "file:///c" {
            Err((-32602, "not now".into()))
        } else {
            Ok(json!({}))
        }
    });
    assert!(matches!(
        client.subscribe("file:///c").await,
        Err(Error::Remote { code: -32602, .. })
    ));
    server.on_request("resources/subscribe", |_| Ok(json!({})));
    let c = client
        .subscribe("file:///c")
        .await
        .expect("subscribed after a refusal");
    let asked_for_c = uris("resources/subscribe")
        .iter()
        .filter(|u| **u == "file:///c")
        .count();
    assert_eq!(asked_for_c, 2);
    drop((again, c));
    assert!(
        eventually(&rt, || uris("resources/unsubscribe").len() == 4).await,
        "{:?}",
        uris("resources/unsubscribe")
    );
}
