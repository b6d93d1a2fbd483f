//! Test bodies for the typed server-request handlers and the explicit cancel handle, generic
//! over the runtime (each adapter's tests run them; the caller bounds each with a timeout).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use mcp_proto::jsonrpc::ErrorObject;
use mcp_proto::types::{CreateMessageResult, ElicitMode, ElicitResult};
use serde_json::{Value, json};

use super::suite::connect_fake;
use crate::{CallOptions, CancelHandle, ClientBuilder, Error, Root, Runtime};

/// Typed handlers get the decoded params, answer with the typed results, and never see
/// params that do not decode (those get -32602).
pub async fn typed_handlers_answer<R: Runtime>(rt: R) {
    let elicit_calls = Arc::new(AtomicUsize::new(0));
    let calls = elicit_calls.clone();
    let builder = ClientBuilder::new()
        .on_roots(|| async { Ok(vec![Root::new("file:///work").with_name("work")]) })
        .on_sampling(|params| async move {
            let question = params.last_user_text().unwrap_or_default();
            if question == "refuse" {
                return Err(ErrorObject::new(-1, "the user refused"));
            }
            Ok(CreateMessageResult::text(
                "fake-model",
                format!("{question} ({} tokens max)", params.max_tokens),
            ))
        })
        .on_elicitation(move |params| {
            calls.fetch_add(1, Ordering::SeqCst);
            async move {
                Ok(match params.effective_mode() {
                    ElicitMode::Url => ElicitResult::decline(),
                    _ if params.message == "dismiss" => ElicitResult::cancel(),
                    _ => ElicitResult::accept(params.default_content()),
                })
            }
        });
    let (server, client) = connect_fake(&rt, builder).await;
    let caps = &server.received_method("initialize")[0]["params"]["capabilities"];
    for cap in ["roots", "sampling", "elicitation"] {
        assert!(caps.get(cap).is_some(), "{cap} declared: {caps}");
    }

    let answer = |method: &str, params: Value| {
        let id = server.request(method, params);
        let server = &server;
        async move {
            let r = server.recv_response().await.expect("answer");
            assert_eq!(r["id"], id);
            r
        }
    };

    let r = answer("roots/list", json!({})).await;
    assert_eq!(
        r["result"],
        json!({"roots": [{"uri": "file:///work", "name": "work"}]})
    );

    let r = answer(
        "sampling/createMessage",
        json!({"messages": [{"role": "user", "content": {"type": "text", "text": "capital of France?"}}],
               "maxTokens": 7}),
    )
    .await;
    assert_eq!(
        r["result"],
        json!({"role": "assistant", "model": "fake-model", "stopReason": "endTurn",
               "content": {"type": "text", "text": "capital of France? (7 tokens max)"}})
    );
    let r = answer(
        "sampling/createMessage",
        json!({"messages": [{"role": "user", "content": {"type": "text", "text": "refuse"}}],
               "maxTokens": 7}),
    )
    .await;
    assert_eq!(r["error"]["code"], -1, "{r}");
    assert_eq!(r["error"]["message"], "the user refused");
    // No `maxTokens`: not a CreateMessageParams.
    let r = answer("sampling/createMessage", json!({"messages": []})).await;
    assert_eq!(r["error"]["code"], ErrorObject::INVALID_PARAMS, "{r}");

    let r = answer(
        "elicitation/create",
        json!({"message": "who?", "requestedSchema": {"type": "object", "properties": {
            "name": {"type": "string", "default": "Ada"}, "age": {"type": "integer"}}}}),
    )
    .await;
    assert_eq!(
        r["result"],
        json!({"action": "accept", "content": {"name": "Ada"}})
    );
    let r = answer("elicitation/create", json!({"message": "dismiss"})).await;
    assert_eq!(r["result"], json!({"action": "cancel"}));
    let r = answer(
        "elicitation/create",
        json!({"mode": "url", "message": "log in", "url": "https://example.com/login", "elicitationId": "e1"}),
    )
    .await;
    assert_eq!(r["result"], json!({"action": "decline"}));
    assert_eq!(elicit_calls.load(Ordering::SeqCst), 3);
    // No `message`: refused before the handler runs.
    let r = answer("elicitation/create", json!({"requestedSchema": {}})).await;
    assert_eq!(r["error"]["code"], ErrorObject::INVALID_PARAMS, "{r}");
    assert_eq!(
        elicit_calls.load(Ordering::SeqCst),
        3,
        "the handler never ran"
    );
    client.close().await;
}

/// `CancelHandle::cancel` ends a waiting call with `Error::Cancelled`, tells the server with
/// the reason, ends every call given the same handle, and refuses calls started after it
/// without sending them.
pub async fn cancel_handle_cancels_with_reason<R: Runtime>(rt: R) {
    let (server, client) = connect_fake(&rt, ClientBuilder::new()).await;
    let shared = CancelHandle::new();
    let first = client.call_tool_with(
        "slow",
        json!({"n": 1}),
        CallOptions::new().cancel_on(&shared),
    );
    let second = client.call_tool_with(
        "slow",
        json!({"n": 2}),
        CallOptions::new().cancel_on(&shared),
    );
    let mut first = Box::pin(first);
    let mut second = Box::pin(second);
    // Both requests reach the server before anything is cancelled.
    let mut sent = Vec::new();
    {
        let arrivals = async {
            while sent.len() < 2 {
                sent.push(
                    server
                        .recv_method("tools/call")
                        .await
                        .expect("a tools/call"),
                );
            }
        };
        let arrivals = std::pin::pin!(arrivals);
        let calls = futures_util::future::select(first.as_mut(), second.as_mut());
        if let futures_util::future::Either::Right((ended, _)) =
            futures_util::future::select(arrivals, calls).await
        {
            let r = ended.factor_first().0;
            panic!("a call ended before it was cancelled: {r:?}");
        }
    }
    assert!(!shared.is_cancelled());

    shared.cancel("the user pressed Stop");
    shared.cancel("a second reason is ignored");
    assert_eq!(shared.reason().as_deref(), Some("the user pressed Stop"));
    for call in [first, second] {
        match call.await {
            Err(Error::Cancelled { method, .. }) => assert_eq!(method, "tools/call"),
            other => panic!("expected Cancelled, got {other:?}"),
        }
    }
    let mut notices = Vec::new();
    while notices.len() < 2 {
        notices.push(
            server
                .recv_method("notifications/cancelled")
                .await
                .expect("a cancellation notice"),
        );
    }
    let mut cancelled_ids: Vec<String> = notices
        .iter()
        .map(|n| {
            assert_eq!(n["params"]["reason"], "the user pressed Stop", "{n}");
            n["params"]["requestId"].to_string()
        })
        .collect();
    let mut sent_ids: Vec<String> = sent.iter().map(|m| m["id"].to_string()).collect();
    cancelled_ids.sort();
    sent_ids.sort();
    assert_eq!(cancelled_ids, sent_ids);

    // Cancelled before it starts: fails at once and sends nothing.
    let late = client
        .call_tool_with(
            "slow",
            json!({"n": 3}),
            CallOptions::new().cancel_on(&shared),
        )
        .await;
    assert!(matches!(late, Err(Error::Cancelled { .. })), "{late:?}");
    client.ping().await.expect("ping");
    assert_eq!(server.received_method("tools/call").len(), 2);

    // An answered call is not affected by a later cancel, and the connection goes on.
    let (options, cancel) = CallOptions::new().cancel_handle();
    let call = client.call_tool_with("fast", json!({}), options);
    let mut call = Box::pin(call);
    let request = {
        let arrival = std::pin::pin!(server.recv_method("tools/call"));
        match futures_util::future::select(arrival, call.as_mut()).await {
            futures_util::future::Either::Left((m, _)) => m.expect("a tools/call"),
            futures_util::future::Either::Right((r, _)) => panic!("ended early: {r:?}"),
        }
    };
    server.respond(
        &request,
        json!({"content": [{"type": "text", "text": "done"}]}),
    );
    let result = call.await.expect("answered");
    assert_eq!(result.content[0].as_text(), Some("done"));
    cancel.cancel("too late");
    client.ping().await.expect("ping");
    assert_eq!(
        server.received_method("notifications/cancelled").len(),
        2,
        "no notice for an answered call"
    );
    client.close().await;
}
