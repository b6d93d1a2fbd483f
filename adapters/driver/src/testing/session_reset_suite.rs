//! What survives an expired HTTP session (the server answers 404 to its `Mcp-Session-Id` and
//! the client sets up a fresh one): subscriptions, the log level, followed tasks; and a
//! 2026-07-28 listen whose stream broke. Test bodies
//! against a [`ScriptedHttpServer`], generic over the runtime like [`http_suite`](super::http_suite)
//! (which re-exports them, so each adapter runs them with the others).

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use mcp_proto::types::{ContentBlock, LoggingLevel};
use serde_json::{Value, json};

use super::http_server::{RecordedRequest, ScriptedHttpServer, ScriptedReply};
use super::http_suite::{init_result, rpc_result, standard_reply};
use super::suite::within;
use crate::{Client, ClientBuilder, Error, GapCause, Missed, Runtime};

/// How long a step that the server answers at once may take (an anti-hang guard only).
const STEP: Duration = Duration::from_secs(10);

/// The scripted server's sessions: the live one, and how many were set up.
#[derive(Default)]
struct Sessions {
    live: Option<String>,
    count: usize,
}

/// A server whose live session the test can expire; `reply` answers the requests that carry
/// the live session id (anything else under an unknown id is 404, as a real server does).
fn expiring_server(
    capabilities: Value,
    reply: impl Fn(&RecordedRequest, &str) -> ScriptedReply + Send + Sync + 'static,
) -> (ScriptedHttpServer, Arc<Mutex<Sessions>>) {
    let sessions = Arc::new(Mutex::new(Sessions::default()));
    let state = sessions.clone();
    let server = ScriptedHttpServer::start(move |r| {
        let mut s = state.lock().unwrap_or_else(PoisonError::into_inner);
        if r.rpc_method().as_deref() == Some("initialize") {
            s.count += 1;
            let id = format!("sess-{}", s.count);
            s.live = Some(id.clone());
            // The standard initialize result, with the test's capabilities on top.
            let mut init = init_result(r);
            if let (Some(caps), Some(more)) = (
                init["result"]["capabilities"].as_object_mut(),
                capabilities.as_object(),
            ) {
                caps.extend(more.clone());
            }
            return ScriptedReply::json(&init).with_header("mcp-session-id", &id);
        }
        let Some(live) = s.live.clone() else {
            return ScriptedReply::status(404);
        };
        drop(s);
        if r.method == "POST" && r.header("mcp-session-id") != Some(live.as_str()) {
            return ScriptedReply::status(404);
        }
        standard_reply(r, &live).unwrap_or_else(|| reply(r, &live))
    });
    (server, sessions)
}

/// The server forgets its session: every later request under it gets 404.
fn expire(sessions: &Mutex<Sessions>) {
    sessions.lock().unwrap_or_else(PoisonError::into_inner).live = None;
}

fn requests_in<'a>(
    requests: &'a [RecordedRequest],
    session: &str,
    method: &str,
) -> Vec<&'a RecordedRequest> {
    requests
        .iter()
        .filter(|r| {
            r.header("mcp-session-id") == Some(session) && r.rpc_method().as_deref() == Some(method)
        })
        .collect()
}

async fn connect<R: Runtime>(rt: &R, server: &ScriptedHttpServer) -> Client<R> {
    ClientBuilder::new()
        .runtime(rt.clone())
        .http(&server.url("/mcp"))
        .await
        .expect("connect over HTTP")
}

fn text_of(result: &mcp_proto::types::CallToolResult) -> String {
    match result.content.first() {
        Some(ContentBlock::Text(t)) => t.text.clone(),
        other => panic!("expected text, got {other:?}"),
    }
}

/// A subscription and the log level survive an expired session: the core re-issues
/// `resources/subscribe` and `logging/setLevel` on the new session, and the open
/// `Subscription` yields a gap (`Missed::Gap`, cause `SessionExpired`) and then the new
/// session's updates, without ending.
pub async fn http_session_expired_subscription_continues<R: Runtime>(rt: R) {
    let (server, sessions) = expiring_server(json!({}), |r, session| {
        match r.rpc_method().as_deref() {
            Some("logging/setLevel" | "resources/subscribe" | "resources/unsubscribe") => {
                ScriptedReply::json(&rpc_result(r, json!({})))
            }
            // Each call updates the resource (on the call's own stream, before its answer) and
            // says which session answered.
            Some("tools/call") => ScriptedReply::sse([
                ScriptedReply::data(&json!({
                    "jsonrpc": "2.0",
                    "method": "notifications/resources/updated",
                    "params": {"uri": "demo://clock"}
                })),
                ScriptedReply::data(&rpc_result(
                    r,
                    json!({"content": [{"type": "text", "text": session}]}),
                )),
            ]),
            _ => ScriptedReply::status(500),
        }
    });
    let client = connect(&rt, &server).await;
    client
        .set_log_level(LoggingLevel::Debug)
        .await
        .expect("logging/setLevel");
    let mut sub = client.subscribe("demo://clock").await.expect("subscribe");
    let mut plain = client.notifications();

    let first = client.call_tool("tick", json!({})).await.expect("tick");
    assert_eq!(text_of(&first), "sess-1");
    let update = within(&rt, STEP, sub.recv()).await.flatten();
    assert!(
        matches!(&update, Some(Ok(n)) if n.method == "notifications/resources/updated"),
        "{update:?}"
    );

    expire(&sessions);
    // Lost with the session, re-sent on the new one.
    let second = client
        .call_tool("tick", json!({}))
        .await
        .expect("tick after re-initialize");
    assert_eq!(text_of(&second), "sess-2");
    let gap = within(&rt, STEP, sub.recv()).await.flatten();
    match gap {
        Some(Err(Missed::Gap(gap))) => {
            assert_eq!(gap.cause, GapCause::SessionExpired);
            assert!(gap.since <= gap.until, "{gap:?}");
        }
        other => panic!("expected a gap, got {other:?}"),
    }
    let update = within(&rt, STEP, sub.recv()).await.flatten();
    assert!(
        matches!(&update, Some(Ok(n)) if n.method == "notifications/resources/updated"),
        "the subscription still delivers: {update:?}"
    );
    // The connection-wide stream has no gap item: it just goes on.
    for _ in 0..2 {
        let n = within(&rt, STEP, plain.recv()).await.flatten();
        assert!(
            matches!(&n, Some(Ok(n)) if n.method == "notifications/resources/updated"),
            "{n:?}"
        );
    }

    // What the new session was told: the same level and the same subscription (posted in
    // parallel with the re-sent call, so perhaps still on their way).
    let restored = || {
        let r = server.requests();
        !requests_in(&r, "sess-2", "logging/setLevel").is_empty()
            && !requests_in(&r, "sess-2", "resources/subscribe").is_empty()
    };
    assert!(
        super::suite::eventually(&rt, restored).await,
        "restored on the new session: {:?}",
        server.requests()
    );
    let requests = server.requests();
    let levels = requests_in(&requests, "sess-2", "logging/setLevel");
    assert_eq!(levels.len(), 1, "the level is restored once");
    assert_eq!(
        levels[0].json().map(|v| v["params"]["level"].clone()),
        Some(json!("debug"))
    );
    let subscribed = requests_in(&requests, "sess-2", "resources/subscribe");
    assert_eq!(subscribed.len(), 1, "the subscription is re-issued once");
    assert_eq!(
        subscribed[0].json().map(|v| v["params"]["uri"].clone()),
        Some(json!("demo://clock"))
    );

    // Dropping the subscription unsubscribes on the session it is now on.
    drop(sub);
    assert!(
        super::suite::eventually(&rt, || !requests_in(
            &server.requests(),
            "sess-2",
            "resources/unsubscribe"
        )
        .is_empty())
        .await,
        "unsubscribed on the new session"
    );
    client.close().await;
}

/// The initialize-era task capability of the scripted task server.
fn task_capabilities() -> Value {
    json!({"tasks": {"requests": {"tools": {"call": {}}}}})
}

/// The 2025-11-25 task `id` in `status`.
fn task(id: &str, status: &str) -> Value {
    json!({
        "taskId": id,
        "status": status,
        "createdAt": "2025-11-25T10:00:00Z",
        "lastUpdatedAt": "2025-11-25T10:00:00Z",
        "ttl": 60000,
        "pollInterval": 100
    })
}

/// A server with one task tool (`taskSupport: required`) whose task `t1` is created on the
/// first session; on a later session `tasks/get` knows it when `remembered`, else it answers
/// the spec's -32602 for an unknown task. The first `tasks/get` expires the first session.
fn task_server(remembered: bool) -> (ScriptedHttpServer, Arc<Mutex<Sessions>>) {
    let holder: Arc<Mutex<Option<Arc<Mutex<Sessions>>>>> = Arc::default();
    let sessions_slot = holder.clone();
    let (server, sessions) = expiring_server(task_capabilities(), move |r, session| {
        let params = r.json().map(|v| v["params"].clone()).unwrap_or_default();
        match r.rpc_method().as_deref() {
            Some("tools/list") => ScriptedReply::json(&rpc_result(
                r,
                json!({"tools": [{
                    "name": "research",
                    "inputSchema": {"type": "object"},
                    "execution": {"taskSupport": "required"}
                }]}),
            )),
            Some("tools/call") => {
                assert!(params.get("task").is_some(), "the call is task-augmented");
                ScriptedReply::json(&rpc_result(r, json!({"task": task("t1", "working")})))
            }
            Some("tasks/get") if session == "sess-1" => {
                // The session "expires" while the task is followed.
                if let Some(s) = &*sessions_slot.lock().unwrap_or_else(PoisonError::into_inner) {
                    expire(s);
                }
                ScriptedReply::status(404)
            }
            Some("tasks/get") if remembered => {
                ScriptedReply::json(&rpc_result(r, task("t1", "completed")))
            }
            Some("tasks/get") => ScriptedReply::json(&json!({
                "jsonrpc": "2.0", "id": r.rpc_id(),
                "error": {"code": -32602, "message": "Failed to retrieve task: Task not found"}
            })),
            Some("ping") => ScriptedReply::json(&rpc_result(r, json!({}))),
            Some("tasks/result") => ScriptedReply::json(&rpc_result(
                r,
                json!({"content": [{"type": "text", "text": format!("done on {session}")}]}),
            )),
            _ => ScriptedReply::status(500),
        }
    });
    *holder.lock().unwrap_or_else(PoisonError::into_inner) = Some(sessions.clone());
    (server, sessions)
}

/// A task the client follows when the session expires is polled again on the new session
/// (its `tasks/get` re-sent there) and completes, since the server still knows it.
pub async fn http_session_expired_task_polled_again<R: Runtime>(rt: R) {
    let (server, _sessions) = task_server(true);
    let client = connect(&rt, &server).await;
    let result = client
        .call_tool("research", json!({}))
        .await
        .expect("the task completes on the new session");
    assert_eq!(text_of(&result), "done on sess-2");
    let requests = server.requests();
    assert_eq!(requests_in(&requests, "sess-1", "tasks/get").len(), 1);
    assert_eq!(
        requests_in(&requests, "sess-2", "tasks/get")
            .first()
            .and_then(|r| r.json())
            .map(|v| v["params"]["taskId"].clone()),
        Some(json!("t1")),
        "polled again on the new session"
    );
    client.close().await;
}

/// A task the new session does not know fails with [`Error::Task`] naming it and saying
/// why: the call does not hang, and nothing else fails.
pub async fn http_session_expired_unknown_task_fails<R: Runtime>(rt: R) {
    let (server, _sessions) = task_server(false);
    let client = connect(&rt, &server).await;
    let err = client
        .call_tool("research", json!({}))
        .await
        .expect_err("the server forgot the task");
    match &err {
        Error::Task {
            task_id, detail, ..
        } => {
            assert_eq!(task_id, "t1");
            assert!(detail.contains("Task not found"), "{detail}");
        }
        other => panic!("expected Error::Task, got {other:?}"),
    }
    // The connection itself is fine.
    client.ping().await.expect("ping on the new session");
    client.close().await;
}

/// A subscription whose resource the new session refuses to subscribe to again (it is gone)
/// ends, and `close` gives the server's refusal; another subscription sees the gap and goes
/// on.
pub async fn http_session_expired_refused_subscription_ends<R: Runtime>(rt: R) {
    let (server, sessions) = expiring_server(json!({}), |r, session| {
        let uri = r
            .json()
            .and_then(|v| v["params"]["uri"].as_str().map(str::to_owned));
        match r.rpc_method().as_deref() {
            // demo://gone exists only on the first session.
            Some("resources/subscribe")
                if session != "sess-1" && uri.as_deref() == Some("demo://gone") =>
            {
                ScriptedReply::json(&json!({
                    "jsonrpc": "2.0", "id": r.rpc_id(),
                    "error": {"code": -32002, "message": "Resource not found"}
                }))
            }
            Some("resources/subscribe" | "resources/unsubscribe") => {
                ScriptedReply::json(&rpc_result(r, json!({})))
            }
            Some("tools/call") => ScriptedReply::sse([
                ScriptedReply::data(&json!({
                    "jsonrpc": "2.0",
                    "method": "notifications/resources/updated",
                    "params": {"uri": "demo://clock"}
                })),
                ScriptedReply::data(&rpc_result(
                    r,
                    json!({"content": [{"type": "text", "text": session}]}),
                )),
            ]),
            _ => ScriptedReply::status(500),
        }
    });
    let client = connect(&rt, &server).await;
    let mut clock = client.subscribe("demo://clock").await.expect("subscribe");
    let mut gone = client.subscribe("demo://gone").await.expect("subscribe");
    expire(&sessions);
    let answered = client.call_tool("tick", json!({})).await.expect("tick");
    assert_eq!(text_of(&answered), "sess-2");

    // The refused one ends (the refusal comes before the reset is complete); the other sees
    // the gap.
    let gap = within(&rt, STEP, clock.recv()).await.flatten();
    assert!(matches!(gap, Some(Err(Missed::Gap(_)))), "{gap:?}");
    let end = within(&rt, STEP, gone.recv()).await;
    assert!(
        matches!(end, Some(None)),
        "the refused subscription ends: {end:?}"
    );
    match gone.close().await {
        Err(Error::Remote { code, method, .. }) => {
            assert_eq!(code, -32002);
            assert_eq!(method, "resources/subscribe");
        }
        other => panic!("expected the server's refusal, got {other:?}"),
    }
    let update = within(&rt, STEP, clock.recv()).await.flatten();
    assert!(
        matches!(&update, Some(Ok(n)) if n.method == "notifications/resources/updated"),
        "the other subscription goes on: {update:?}"
    );
    client.close().await;
}

/// Two subscriptions sharing a URI over an expiring session: the URI is subscribed once on
/// each session. When the new session refuses it, both end, and a later subscription to the
/// URI (the resource is back) subscribes afresh instead of counting on the refused one; the
/// ended subscriptions' drops leave it subscribed, the last holder's drop unsubscribes.
pub async fn http_session_expired_shared_uri_subscribed_afresh<R: Runtime>(rt: R) {
    let refusals = Arc::new(Mutex::new(0usize));
    let refused = refusals.clone();
    let (server, sessions) = expiring_server(json!({}), move |r, session| {
        match r.rpc_method().as_deref() {
            // The new session refuses demo://gone once (the restore), then has it again.
            Some("resources/subscribe") if session != "sess-1" => {
                let mut n = refused.lock().unwrap_or_else(PoisonError::into_inner);
                *n += 1;
                if *n == 1 {
                    ScriptedReply::json(&json!({
                        "jsonrpc": "2.0", "id": r.rpc_id(),
                        "error": {"code": -32002, "message": "Resource not found"}
                    }))
                } else {
                    ScriptedReply::json(&rpc_result(r, json!({})))
                }
            }
            Some("resources/subscribe" | "resources/unsubscribe") => {
                ScriptedReply::json(&rpc_result(r, json!({})))
            }
            Some("tools/call") => ScriptedReply::json(&rpc_result(
                r,
                json!({"content": [{"type": "text", "text": session}]}),
            )),
            _ => ScriptedReply::status(500),
        }
    });
    let subscribes =
        |session: &str| requests_in(&server.requests(), session, "resources/subscribe").len();
    let client = connect(&rt, &server).await;
    let mut first = client.subscribe("demo://gone").await.expect("subscribe");
    let mut second = client.subscribe("demo://gone").await.expect("subscribe");
    assert_eq!(
        subscribes("sess-1"),
        1,
        "one subscribe for two subscriptions"
    );

    expire(&sessions);
    let answered = client.call_tool("tick", json!({})).await.expect("tick");
    assert_eq!(text_of(&answered), "sess-2");
    for sub in [&mut first, &mut second] {
        let end = within(&rt, STEP, sub.recv()).await;
        assert!(
            matches!(end, Some(None)),
            "the refused URI ends it: {end:?}"
        );
    }
    assert_eq!(subscribes("sess-2"), 1, "restored once, refused");

    // The refused holds are still alive: a new subscription must not count on them.
    let third = client
        .subscribe("demo://gone")
        .await
        .expect("subscribe again");
    assert_eq!(subscribes("sess-2"), 2, "subscribed afresh");
    drop((first, second));
    drop(third);
    let unsubscribed = || requests_in(&server.requests(), "sess-2", "resources/unsubscribe").len();
    assert!(
        super::suite::eventually(&rt, || unsubscribed() == 1).await,
        "the last holder unsubscribes: {:?}",
        server.requests()
    );
    client.close().await;
}

/// 2026-07-28 over HTTP: a `subscriptions/listen` whose stream breaks is re-issued once; the
/// `Subscription` yields a gap (cause `StreamBroken`) when the server acknowledged it again,
/// then the re-issued listen's notifications.
pub async fn http_listen_stream_broken_yields_gap<R: Runtime>(rt: R) {
    let listens = Arc::new(Mutex::new(0usize));
    let count = listens.clone();
    let server = ScriptedHttpServer::start(move |r| {
        let on_stream = |method: &str| {
            ScriptedReply::data(&json!({"jsonrpc": "2.0", "method": method, "params": {
                "_meta": {"io.modelcontextprotocol/subscriptionId": r.rpc_id()},
                "notifications": {"toolsListChanged": true}
            }}))
        };
        match (r.method.as_str(), r.rpc_method().as_deref()) {
            ("POST", Some("server/discover")) => ScriptedReply::json(&rpc_result(
                r,
                json!({
                    "resultType": "complete",
                    "supportedVersions": ["2026-07-28"],
                    "capabilities": {"tools": {"listChanged": true}},
                    "ttlMs": 0,
                    "cacheScope": "public",
                    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "scripted-2026", "version": "1"}}
                }),
            )),
            ("POST", Some("subscriptions/listen")) => {
                let mut n = count.lock().unwrap_or_else(PoisonError::into_inner);
                *n += 1;
                let events = [
                    on_stream("notifications/subscriptions/acknowledged"),
                    on_stream("notifications/tools/list_changed"),
                ];
                if *n == 1 {
                    // The first stream ends after one change: broken.
                    ScriptedReply::sse(events)
                } else {
                    ScriptedReply::sse(events).held_open()
                }
            }
            ("DELETE", _) => ScriptedReply::status(200),
            _ => ScriptedReply::status(404),
        }
    });
    let client = ClientBuilder::new()
        .runtime(rt.clone())
        .era_policy(mcp_proto::session::EraPolicy::Discover)
        .http(&server.url("/mcp"))
        .await
        .expect("discover over HTTP");
    let mut sub = client
        .listen(mcp_proto::types::v2026::ListenFilter {
            tools_list_changed: Some(true),
            ..Default::default()
        })
        .await
        .expect("listen");
    let changed = |item: &Option<Result<mcp_proto::session::ServerNotification, Missed>>| matches!(item, Some(Ok(n)) if n.method == "notifications/tools/list_changed");
    let first = within(&rt, STEP, sub.recv()).await.flatten();
    assert!(changed(&first), "{first:?}");
    match within(&rt, STEP, sub.recv()).await.flatten() {
        Some(Err(Missed::Gap(gap))) => {
            assert_eq!(gap.cause, GapCause::StreamBroken);
            assert!(gap.since <= gap.until, "{gap:?}");
        }
        other => panic!("expected a gap, got {other:?}"),
    }
    let again = within(&rt, STEP, sub.recv()).await.flatten();
    assert!(changed(&again), "the re-issued listen delivers: {again:?}");
    assert_eq!(*listens.lock().unwrap_or_else(PoisonError::into_inner), 2);
    drop(sub);
    client.close().await;
}
