//! Test bodies written once over the public [`Client`] API, generic over the runtime, so that
//! every runtime adapter runs the same checks (`mcp-tokio`'s tests call each of them). They
//! panic on failure, like any test; the caller bounds each with a timeout.
//!
//! The `stdio_*` bodies take the path of the Python fixture server
//! (`adapters/tokio/tests/fixtures/stdio_server.py`); the `/proc` checks are Linux-only.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use futures_util::future::{Either, select};
use serde_json::{Value, json};

use super::FakeServer;
pub use super::handler_suite::{cancel_handle_cancels_with_reason, typed_handlers_answer};
pub use super::listen_suite::{
    listen_in_the_initialize_era, listen_refused_unacknowledged_closed, listen_routes_and_ends,
    subscriptions_share_a_uri_in_the_initialize_era,
};
pub use super::output_schema_suite::{
    output_schema_is_checked, output_schema_opt_out, output_schemas_dropped_on_list_changed,
};
pub use super::pending_suite::{
    a_dropped_waiting_call_frees_its_place, a_waiting_call_times_out,
    calls_past_the_cap_wait_their_turn,
};
pub use super::stdio_suite::{
    pid_dead, stdio_close_within_bound, stdio_crash_at_start_is_not_respawned,
    stdio_crash_mid_request, stdio_drop_without_close, stdio_exit_on_the_era_probe_respawns,
    stdio_paging_call_banner, stdio_spawn_error,
};
pub use super::task_list_suite::{
    cancel_handle_ends_the_wait_at_once, status_notification_is_used_when_it_comes,
    tasks_listed_paged_and_by_id, tasks_not_offered_is_a_typed_error,
};
pub use super::task_suite::{
    task_handle_cancel_fail_and_drop, task_is_awaited_transparently,
    task_without_the_extension_is_refused,
};
use crate::{CallOptions, Client, ClientBuilder, Error, Root, Runtime, StaticRoots};
use mcp_proto::jsonrpc::ErrorObject;
use mcp_proto::session::{CloseReason, ProtocolVersion};
use mcp_proto::types::ContentBlock;

/// Sleeps on the runtime's timer.
pub async fn sleep<R: Runtime>(rt: &R, d: Duration) {
    rt.sleep_until(rt.now() + d).await;
}

/// Polls `cond` every 20 ms for up to 5 s; whether it became true.
pub async fn eventually<R: Runtime>(rt: &R, mut cond: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + Duration::from_secs(5);
    while Instant::now() < end {
        if cond() {
            return true;
        }
        sleep(rt, Duration::from_millis(20)).await;
    }
    cond()
}

/// Runs `f` for at most `d`; `None` if it took longer.
pub async fn within<R: Runtime, T>(rt: &R, d: Duration, f: impl Future<Output = T>) -> Option<T> {
    let f = std::pin::pin!(f);
    match select(f, rt.sleep_until(rt.now() + d)).await {
        Either::Left((v, _)) => Some(v),
        Either::Right(_) => None,
    }
}

/// A fake server and a client connected to it through `builder`.
pub async fn connect_fake<R: Runtime>(
    rt: &R,
    builder: ClientBuilder<R>,
) -> (FakeServer, Client<R>) {
    let (server, io) = FakeServer::start(rt);
    let client = builder
        .runtime(rt.clone())
        .name("fake")
        .over(io.reader, io.writer)
        .await
        .expect("handshake with the fake server");
    (server, client)
}

/// The handshake: getters, what `initialize` carried, `notifications/initialized`.
pub async fn handshake_and_getters<R: Runtime>(rt: R) {
    let (server, client) = connect_fake(&rt, ClientBuilder::new()).await;
    assert_eq!(client.server_info().name, "fake-server");
    assert_eq!(client.instructions(), Some("A scripted server for tests."));
    assert_eq!(client.protocol_version(), ProtocolVersion::V2025_11_25);
    assert!(client.capabilities().tools.is_some());
    assert_eq!(client.server_name(), "fake");
    assert!(!client.is_closed());
    assert!(
        eventually(&rt, || !server
            .received_method("notifications/initialized")
            .is_empty())
        .await
    );
    let init = &server.received_method("initialize")[0];
    assert_eq!(
        init["params"]["capabilities"],
        json!({}),
        "nothing registered, nothing declared"
    );
    assert_eq!(init["params"]["clientInfo"]["name"], "mcp-rs");
    client.ping().await.expect("ping");
}

/// A handshake the server rejects is a typed error.
pub async fn handshake_rejected<R: Runtime>(rt: R) {
    let (server, io) = FakeServer::start(&rt);
    server.set_initialize_result(None);
    let connect = ClientBuilder::new()
        .runtime(rt.clone())
        .name("rejecting")
        .over(io.reader, io.writer);
    let answer = async {
        let init = server.recv_method("initialize").await.expect("initialize");
        server.respond_error(&init, -32600, "go away");
    };
    let (result, ()) = futures_util::future::join(connect, answer).await;
    match result {
        Err(Error::Handshake {
            server,
            reason: CloseReason::HandshakeRejected(e),
        }) => {
            assert_eq!(&*server, "rejecting");
            assert_eq!(e.message, "go away");
        }
        other => panic!("expected a handshake error, got {other:?}"),
    }
}

/// `list_tools` follows every page; a repeated cursor stops with an error.
pub async fn paging<R: Runtime>(rt: R) {
    let (server, client) = connect_fake(&rt, ClientBuilder::new()).await;
    server.on_request("tools/list", |p| {
        let tool = |n: &str| json!({"name": n, "inputSchema": {"type": "object"}});
        Ok(match p.get("cursor").and_then(Value::as_str) {
            None => json!({"tools": [tool("a")], "nextCursor": "c1"}),
            Some("c1") => json!({"tools": [tool("b"), tool("c")], "nextCursor": "c2"}),
            _ => json!({"tools": [tool("d")]}),
        })
    });
    let names: Vec<_> = client
        .list_tools()
        .await
        .expect("list")
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, ["a", "b", "c", "d"]);
    server.on_request("prompts/list", |_| {
        Ok(json!({"prompts": [], "nextCursor": "same"}))
    });
    match client.list_prompts().await {
        Err(Error::Pagination { method, .. }) => assert_eq!(method, "prompts/list"),
        other => panic!("expected a pagination error, got {other:?}"),
    }
    assert_eq!(
        server.received_method("prompts/list").len(),
        2,
        "stopped at the repeat"
    );
}

/// `call_tool` keeps structured content, audio and resource links; remote errors are typed.
pub async fn call_tool<R: Runtime>(rt: R) {
    let (server, client) = connect_fake(&rt, ClientBuilder::new()).await;
    server.on_request("tools/call", |p| {
        if p["name"] == "fail" {
            return Err((-32602, "no such tool".into()));
        }
        Ok(json!({
            "content": [
                {"type": "text", "text": p["arguments"]["x"].to_string()},
                {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
                {"type": "resource_link", "uri": "file:///a", "name": "a"}
            ],
            "structuredContent": {"sum": 3},
            "isError": false
        }))
    });
    // A request's future is moved on every push into a `FuturesUnordered` or a `Box`: it
    // stays small because the authorization path and task polling are boxed out of it
    // (an inline authorization branch made it 5.8 KB).
    let call = client.call_tool("add", json!({"x": 7}));
    let size = std::mem::size_of_val(&call);
    assert!(size <= 1536, "the call_tool future is {size} bytes");
    let r = call.await.expect("call");
    assert_eq!(r.structured_content, Some(json!({"sum": 3})));
    assert_eq!(r.content.len(), 3);
    assert!(matches!(&r.content[0], ContentBlock::Text(t) if t.text == "7"));
    assert_eq!(r.content[1].kind(), Some("audio"));
    assert_eq!(r.content[2].kind(), Some("resource_link"));
    match client.call_tool("fail", ()).await {
        Err(e @ Error::Remote { .. }) => {
            assert_eq!(e.code(), Some(-32602));
            assert!(e.to_string().contains("no such tool"), "{e}");
        }
        other => panic!("expected a remote error, got {other:?}"),
    }
    assert!(matches!(
        client.call_tool("x", json!([1])).await,
        Err(Error::Usage { .. })
    ));
    assert!(matches!(
        client.call_tool("x", "text").await,
        Err(Error::Usage { .. })
    ));
    // A name that JSON escapes takes the other serialization path: the same rules.
    let r = client
        .call_tool("tab\tand \"quote\"", json!({"x": 8}))
        .await
        .expect("call with an escaped name");
    assert!(matches!(&r.content[0], ContentBlock::Text(t) if t.text == "8"));
    assert!(matches!(
        client.call_tool("a\"b", json!([1])).await,
        Err(Error::Usage { .. })
    ));
    // A control character is escaped as six characters (`\u0001`).
    let r = client
        .call_tool("ctl\u{1}", json!({"x": 9}))
        .await
        .expect("call with a control character in the name");
    assert!(matches!(&r.content[0], ContentBlock::Text(t) if t.text == "9"));
    assert!(matches!(
        client.call_tool("ctl\u{1}", json!("nine")).await,
        Err(Error::Usage { .. })
    ));
    // A name that spells the member itself does not fool the check of the arguments.
    assert!(matches!(
        client.call_tool(r#"x","arguments":{"#, json!([1])).await,
        Err(Error::Usage { .. })
    ));
}

fn request_id_of(cancelled: &Value) -> &Value {
    &cancelled["params"]["requestId"]
}

/// A timeout fails the call and tells the server.
pub async fn timeout_sends_cancelled<R: Runtime>(rt: R) {
    let (server, client) = connect_fake(&rt, ClientBuilder::new()).await;
    let started = Instant::now();
    let r = client
        .call_tool_with(
            "slow",
            (),
            CallOptions::new().timeout(Duration::from_millis(150)),
        )
        .await;
    assert!(matches!(r, Err(Error::Timeout { .. })), "{r:?}");
    assert!(started.elapsed() >= Duration::from_millis(150));
    let req = server.recv_method("tools/call").await.expect("the call");
    let cancelled = server
        .recv_method("notifications/cancelled")
        .await
        .expect("cancelled");
    assert_eq!(request_id_of(&cancelled), &req["id"]);
    // A late answer is ignored and the connection carries on.
    server.respond(&req, json!({"content": []}));
    client.ping().await.expect("still usable");
}

/// Dropping a call's future cancels it at the server.
pub async fn cancel_on_drop<R: Runtime>(rt: R) {
    let (server, client) = connect_fake(&rt, ClientBuilder::new()).await;
    {
        let call = std::pin::pin!(client.call_tool("slow", ()));
        let seen = std::pin::pin!(server.recv_method("tools/call"));
        match select(call, seen).await {
            Either::Left((r, _)) => panic!("the call finished: {r:?}"),
            Either::Right((req, _)) => assert!(req.is_some()),
        }
    }
    let cancelled = server
        .recv_method("notifications/cancelled")
        .await
        .expect("cancelled");
    let call = &server.received_method("tools/call")[0];
    assert_eq!(request_id_of(&cancelled), &call["id"]);
    assert_eq!(
        cancelled["params"]["reason"], "the client dropped the request",
        "{cancelled}"
    );
    // Cancelled through its handle and dropped in one step (before the future could see the
    // handle fire): the handle's reason is the one sent.
    {
        let (options, cancel) = CallOptions::new().cancel_handle();
        let call = std::pin::pin!(client.call_tool_with("slow", (), options));
        let seen = std::pin::pin!(server.recv_method("tools/call"));
        match select(call, seen).await {
            Either::Left((r, _)) => panic!("the call finished: {r:?}"),
            Either::Right((req, _)) => assert!(req.is_some()),
        }
        cancel.cancel("the host cancelled it");
    }
    let cancelled = server
        .recv_method("notifications/cancelled")
        .await
        .expect("cancelled");
    assert_eq!(
        cancelled["params"]["reason"], "the host cancelled it",
        "{cancelled}"
    );
    // A call whose answer arrived is over, even if its future is dropped before it takes the
    // answer: no `notifications/cancelled` for it.
    {
        let call = std::pin::pin!(client.call_tool("answered", ()));
        let seen = std::pin::pin!(server.recv_method("tools/call"));
        let request = match select(call, seen).await {
            Either::Left((r, _)) => panic!("the call finished unanswered: {r:?}"),
            Either::Right((req, _)) => req.expect("sent"),
        };
        server.respond(&request, json!({"content": []}));
        // The ping's answer comes after the call's: once it is in, so is the call's.
        client.ping().await.expect("ping");
        // The call's future, never polled again, is dropped here.
    }
    client.ping().await.expect("ping");
    assert_eq!(server.received_method("notifications/cancelled").len(), 2);
}

/// Progress reaches the callback and the watch; the token is sent.
pub async fn progress<R: Runtime>(rt: R) {
    let (server, client) = connect_fake(&rt, ClientBuilder::new()).await;
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let s2 = seen.clone();
    let opts = CallOptions::new().on_progress(move |p| s2.lock().expect("lock").push(p.progress));
    let call = client.call_tool_with("long", (), opts);
    let script = async {
        let req = server.recv_method("tools/call").await.expect("call");
        let token = req["params"]["_meta"]["progressToken"].clone();
        assert!(!token.is_null(), "a progress token is sent");
        for i in 1..=3 {
            server.notify(
                "notifications/progress",
                json!({"progressToken": token, "progress": i, "total": 3}),
            );
        }
        server.respond(&req, json!({"content": []}));
    };
    let (r, ()) = futures_util::future::join(call, script).await;
    r.expect("call");
    assert_eq!(*seen.lock().expect("lock"), [1.0, 2.0, 3.0]);

    let (opts, mut watch) = CallOptions::new().progress_watch();
    let call = client.call_tool_with("long", (), opts);
    let script = async {
        let req = server.recv_method("tools/call").await.expect("call");
        let token = req["params"]["_meta"]["progressToken"].clone();
        server.notify(
            "notifications/progress",
            json!({"progressToken": token, "progress": 5, "message": "half"}),
        );
        let p = watch.changed().await.expect("an update");
        assert_eq!((p.progress, p.message.as_deref()), (5.0, Some("half")));
        server.respond(&req, json!({"content": []}));
    };
    let (r, ()) = futures_util::future::join(call, script).await;
    r.expect("call");
}

/// Notifications arrive on the stream; a slow reader is told how many it missed.
pub async fn notifications_and_lag<R: Runtime>(rt: R) {
    let (server, client) = connect_fake(&rt, ClientBuilder::new().notification_capacity(4)).await;
    let mut stream = client.notifications();
    for i in 0..10 {
        server.notify("notifications/message", json!({"level": "info", "data": i}));
    }
    // The ping's answer comes after the notifications: all are delivered by then.
    client.ping().await.expect("ping");
    match stream.recv().await {
        Some(Err(crate::Lagged(n))) => assert_eq!(n, 6),
        other => panic!("expected a lag report, got {other:?}"),
    }
    let mut data = Vec::new();
    for _ in 0..4 {
        let n = stream.recv().await.expect("open").expect("no more lag");
        assert_eq!(n.method, "notifications/message");
        let v: Value = serde_json::from_str(n.params.expect("params").get()).expect("json");
        data.push(v["data"].as_i64().expect("int"));
    }
    assert_eq!(data, [6, 7, 8, 9]);
    client.close().await;
    assert!(
        stream.recv().await.is_none(),
        "the stream ends with the connection"
    );
}

/// Registered handlers are declared and answer; the server's cancel drops a handler.
pub async fn handlers_answer<R: Runtime>(rt: R) {
    let dropped = Arc::new(AtomicBool::new(false));
    let d2 = dropped.clone();
    let elicit_calls = Arc::new(AtomicUsize::new(0));
    let e2 = elicit_calls.clone();
    let builder = ClientBuilder::new()
        .roots_handler(StaticRoots(vec![Root::new("file:///work").with_name("work")]))
        .sampling_handler(|p: Value| async move {
            Ok(json!({"role": "assistant", "content": {"type": "text", "text": format!("echo {}", p["maxTokens"])}, "model": "fake"}))
        })
        .elicitation_handler(move |p: Value| {
            let dropped = d2.clone();
            let n = e2.fetch_add(1, Ordering::SeqCst);
            async move {
                if n == 0 {
                    return Ok(json!({"action": "accept", "content": {"asked": p["message"]}}));
                }
                struct Flag(Arc<AtomicBool>);
                impl Drop for Flag {
                    fn drop(&mut self) {
                        self.0.store(true, Ordering::SeqCst);
                    }
                }
                let _flag = Flag(dropped);
                futures_util::future::pending::<Result<Value, ErrorObject>>().await
            }
        });
    let (server, client) = connect_fake(&rt, builder).await;
    let caps = &server.received_method("initialize")[0]["params"]["capabilities"];
    assert!(
        caps.get("roots").is_some()
            && caps.get("sampling").is_some()
            && caps.get("elicitation").is_some(),
        "{caps}"
    );

    let id = server.request("roots/list", json!({}));
    let r = server.recv_response().await.expect("answer");
    assert_eq!(r["id"], id);
    assert_eq!(
        r["result"]["roots"],
        json!([{"uri": "file:///work", "name": "work"}])
    );

    let id = server.request(
        "sampling/createMessage",
        json!({"messages": [], "maxTokens": 5}),
    );
    let r = server.recv_response().await.expect("answer");
    assert_eq!(r["id"], id);
    assert_eq!(r["result"]["content"]["text"], "echo 5");

    let id = server.request(
        "elicitation/create",
        json!({"message": "name?", "requestedSchema": {"type": "object"}}),
    );
    let r = server.recv_response().await.expect("answer");
    assert_eq!(r["id"], id);
    assert_eq!(r["result"]["content"]["asked"], "name?");

    let id = server.request(
        "elicitation/create",
        json!({"message": "wait", "requestedSchema": {"type": "object"}}),
    );
    assert!(eventually(&rt, || elicit_calls.load(Ordering::SeqCst) == 2).await);
    server.notify(
        "notifications/cancelled",
        json!({"requestId": id, "reason": "never mind"}),
    );
    assert!(
        eventually(&rt, || dropped.load(Ordering::SeqCst)).await,
        "the handler's future is dropped"
    );
    client.ping().await.expect("ping");
    assert!(
        server
            .received()
            .iter()
            .all(|m| m["id"] != id || m.get("method").is_some()),
        "a cancelled request is not answered"
    );
}

/// Without handlers, server requests are refused with -32601 (and `ping` answered).
pub async fn undeclared_requests_refused<R: Runtime>(rt: R) {
    let (server, _client) = connect_fake(&rt, ClientBuilder::new()).await;
    for method in ["roots/list", "sampling/createMessage", "elicitation/create"] {
        let id = server.request(method, json!({}));
        let r = server.recv_response().await.expect("answer");
        assert_eq!(r["id"], id);
        assert_eq!(r["error"]["code"], -32601, "{method}: {r}");
    }
    let id = server.request("ping", json!({}));
    let r = server.recv_response().await.expect("answer");
    assert_eq!((&r["id"], &r["result"]), (&id, &json!({})));
}

/// A banner or garbage line is skipped; the connection survives.
pub async fn garbage_is_skipped<R: Runtime>(rt: R) {
    let (server, client) = connect_fake(&rt, ClientBuilder::new()).await;
    server.send_line("this is not json");
    server.send_line("{\"jsonrpc\":\"2.0\",\"weird\":1}");
    client.ping().await.expect("ping after garbage");
}

/// An answer in the canonical form whose result is not JSON: the frame does not decode, its
/// id is read all the same, and the call ends at once with [`Error::InvalidResponse`] (typed
/// or raw), not at its timeout; the connection goes on.
pub async fn unreadable_result_is_an_invalid_response<R: Runtime>(rt: R) {
    /// Runs `call` while the server answers its `method` request with an unreadable result,
    /// and checks that the call failed with an invalid response naming `method`.
    async fn answered_badly<T: std::fmt::Debug>(
        server: &FakeServer,
        method: &str,
        call: impl Future<Output = Result<T, Error>>,
    ) {
        let answer = async {
            let request = server.recv_method(method).await.expect("the request");
            let id = &request["id"];
            server.send_line(&format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content" []}}}}"#
            ));
        };
        let (result, ()) = futures_util::future::join(call, answer).await;
        assert!(
            matches!(&result, Err(Error::InvalidResponse { method: m, .. }) if m == method),
            "{result:?}"
        );
    }
    let (server, client) = connect_fake(&rt, ClientBuilder::new()).await;
    let options = CallOptions::new().timeout(Duration::from_secs(20));
    let call = client.call_tool_with("t", json!({}), options.clone());
    answered_badly(&server, "tools/call", call).await;
    let raw = client.request_raw("x/raw", None, options);
    answered_badly(&server, "x/raw", raw).await;
    client.ping().await.expect("ping afterwards");
}

/// `max_message_size`: a line over the limit is dropped (the call it answered times out, as
/// its answer never came), the connection goes on, and one at the limit is taken.
pub async fn max_message_size_bounds_lines<R: Runtime>(rt: R) {
    const LIMIT: usize = 4096;
    let (server, client) = connect_fake(&rt, ClientBuilder::new().max_message_size(LIMIT)).await;
    server.on_request("tools/call", |p| {
        let n = p["arguments"]["n"].as_u64().unwrap_or(0) as usize;
        Ok(json!({"content": [{"type": "text", "text": "x".repeat(n)}]}))
    });
    let short = CallOptions::new().timeout(Duration::from_millis(300));
    let r = client
        .call_tool_with("big", json!({"n": 2 * LIMIT}), short.clone())
        .await;
    assert!(matches!(r, Err(Error::Timeout { .. })), "{r:?}");
    // The envelope around the text is under 100 bytes: this answer fits.
    let r = client
        .call_tool_with("fits", json!({"n": LIMIT - 100}), short)
        .await
        .expect("an answer under the limit");
    assert!(matches!(&r.content[0], ContentBlock::Text(t) if t.text.len() == LIMIT - 100));
}

/// The end of the stream fails pending calls once, `closed()` reports it, later calls fail.
pub async fn eof_fails_pending<R: Runtime>(rt: R) {
    let (server, client) = connect_fake(&rt, ClientBuilder::new()).await;
    let call = client.call_tool("slow", ());
    let script = async {
        server.recv_method("tools/call").await.expect("call");
        server.hang_up();
    };
    let (r, ()) = futures_util::future::join(call, script).await;
    assert!(
        matches!(
            r,
            Err(Error::Closed {
                reason: CloseReason::TransportClosed { .. },
                ..
            })
        ),
        "{r:?}"
    );
    assert!(matches!(
        client.closed().await,
        CloseReason::TransportClosed { .. }
    ));
    assert!(client.is_closed());
    assert!(matches!(client.ping().await, Err(Error::Closed { .. })));
}

/// `close()` fails pending calls with `Closed(Local)`.
pub async fn close_fails_pending<R: Runtime>(rt: R) {
    let (server, client) = connect_fake(&rt, ClientBuilder::new()).await;
    let c2 = client.clone();
    let call = client.call_tool("slow", ());
    let script = async {
        server.recv_method("tools/call").await.expect("call");
        c2.close().await;
    };
    let (r, ()) = futures_util::future::join(call, script).await;
    assert!(
        matches!(
            r,
            Err(Error::Closed {
                reason: CloseReason::Local,
                ..
            })
        ),
        "{r:?}"
    );
    assert!(matches!(
        client.state(),
        crate::ConnectionState::Closed(CloseReason::Local)
    ));
}

/// `subscribe` yields updates for its URI only and unsubscribes on drop.
pub async fn subscribe_and_unsubscribe<R: Runtime>(rt: R) {
    let (server, client) = connect_fake(&rt, ClientBuilder::new()).await;
    server.on_request("resources/subscribe", |_| Ok(json!({})));
    server.on_request("resources/unsubscribe", |_| Ok(json!({})));
    let mut sub = client.subscribe("file:///a").await.expect("subscribe");
    server.notify(
        "notifications/resources/updated",
        json!({"uri": "file:///b"}),
    );
    server.notify(
        "notifications/resources/updated",
        json!({"uri": "file:///a"}),
    );
    let n = sub.recv().await.expect("open").expect("no lag");
    assert!(n.params.expect("params").get().contains("file:///a"));
    drop(sub);
    assert!(
        eventually(&rt, || !server
            .received_method("resources/unsubscribe")
            .is_empty())
        .await
    );
    assert_eq!(
        server.received_method("resources/unsubscribe")[0]["params"]["uri"],
        "file:///a"
    );
}
