//! Test bodies for calls past the in-flight cap ([`ClientBuilder::max_in_flight`]): they wait
//! their turn in order, bounded by their own deadline, and a dropped one leaves no trace.
//! Generic over the runtime, like [`suite`](super::suite).

use std::time::Duration;

use futures_util::FutureExt as _;
use futures_util::future::{join, join_all};
use serde_json::{Value, json};

use super::FakeServer;
use super::suite::connect_fake;
use crate::{CallOptions, Client, ClientBuilder, Error, Runtime};

/// Every message the client wrote before this was read by the server once it returns.
async fn barrier<R: Runtime>(client: &Client<R>, server: &FakeServer) {
    client
        .notify("notifications/barrier", ())
        .expect("the barrier is sent");
    server
        .recv_method("notifications/barrier")
        .await
        .expect("the barrier arrives");
}

fn tool_names(server: &FakeServer) -> Vec<String> {
    server
        .received_method("tools/call")
        .iter()
        .map(|m| m["params"]["name"].as_str().unwrap_or_default().to_owned())
        .collect()
}

fn empty() -> Value {
    json!({"content": []})
}

/// With 4 in flight, a fifth call waits; it is sent (last) as soon as one is answered, and
/// completes.
pub async fn calls_past_the_cap_wait_their_turn<R: Runtime>(rt: R) {
    let builder = ClientBuilder::new().max_in_flight(4, 16);
    let (server, client) = connect_fake(&rt, builder).await;
    let calls = join_all((0..5).map(|i| client.call_tool(format!("t{i}"), json!({ "i": i }))));
    let script = async {
        // Polled after every call was: all five are issued.
        barrier(&client, &server).await;
        let sent = server.received_method("tools/call");
        assert_eq!(
            tool_names(&server),
            ["t0", "t1", "t2", "t3"],
            "the fifth waits"
        );
        server.respond(&sent[1], empty());
        let fifth = server.recv_method("tools/call").await.expect("the fifth");
        assert_eq!(fifth["params"]["arguments"]["i"], 4);
        for request in [&sent[0], &sent[2], &sent[3], &fifth] {
            server.respond(request, empty());
        }
    };
    let (results, ()) = join(calls, script).await;
    for r in results {
        r.expect("every call completes");
    }
}

/// A call waiting past the cap times out with the same error as any call, and is never sent.
pub async fn a_waiting_call_times_out<R: Runtime>(rt: R) {
    let builder = ClientBuilder::new().max_in_flight(1, 4);
    let (server, client) = connect_fake(&rt, builder).await;
    let first = client.call_tool("first", ());
    let waiting = async {
        let options = CallOptions::new().timeout(Duration::from_millis(100));
        let r = client.call_tool_with("waiting", (), options).await;
        let req = server.recv_method("tools/call").await.expect("the first");
        server.respond(&req, empty());
        r
    };
    let (first, waiting) = join(first, waiting).await;
    first.expect("the first call completes");
    assert!(matches!(waiting, Err(Error::Timeout { .. })), "{waiting:?}");
    barrier(&client, &server).await;
    assert_eq!(
        tool_names(&server),
        ["first"],
        "the timed-out call is never sent"
    );
    assert!(server.received_method("notifications/cancelled").is_empty());
}

/// A call dropped while it waits frees its place: the one behind it goes next, and the server
/// never hears of the dropped one.
pub async fn a_dropped_waiting_call_frees_its_place<R: Runtime>(rt: R) {
    let builder = ClientBuilder::new().max_in_flight(1, 4);
    let (server, client) = connect_fake(&rt, builder).await;
    let first = client.call_tool("first", ());
    let rest = async {
        let req = server.recv_method("tools/call").await.expect("the first");
        // Issued (one poll), then dropped while it waits.
        assert!(client.call_tool("dropped", ()).now_or_never().is_none());
        let next = client.call_tool("next", ());
        let answer = async {
            server.respond(&req, empty());
            let sent = server.recv_method("tools/call").await.expect("the next");
            assert_eq!(sent["params"]["name"], "next");
            server.respond(&sent, empty());
        };
        join(next, answer).await.0
    };
    let (first, next) = join(first, rest).await;
    first.expect("the first call completes");
    next.expect("the call behind the dropped one completes");
    barrier(&client, &server).await;
    assert_eq!(tool_names(&server), ["first", "next"]);
    assert!(server.received_method("notifications/cancelled").is_empty());
}
