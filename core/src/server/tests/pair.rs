//! The core's own client ([`StdioConnection`]) against the server session
//! ([`StdioServerConnection`]) in memory: bytes from one are the other's input.

use serde_json::json;

use super::harness::Pair;
use crate::jsonrpc::to_raw;
use crate::server::Event as ServerEvent;
use crate::session::{Event as ClientEvent, RequestOptions, SessionConfig};
use crate::types::{
    CallTool, CallToolParams, ClientCapabilities, CreateMessage, Implementation, SamplingCapability,
};

/// The pair, the client able to sample; bytes cross in 7-byte chunks.
fn pair() -> Pair {
    Pair::new(
        SessionConfig::new(Implementation::new("pair-client", "1")).with_capabilities(
            ClientCapabilities {
                sampling: Some(SamplingCapability::default()),
                ..ClientCapabilities::default()
            },
        ),
        7,
    )
}

#[test]
fn the_core_client_calls_a_tool_on_the_server_session() {
    let mut pair = pair();
    let call = pair
        .client
        .session_mut()
        .request::<CallTool>(
            pair.now,
            &CallToolParams::new("echo", Default::default()),
            RequestOptions::new(),
        )
        .unwrap();
    pair.run();
    assert!(
        pair.client_events
            .iter()
            .any(|e| matches!(e, ClientEvent::Ready { .. }))
    );
    assert!(
        pair.server_events
            .iter()
            .any(|e| matches!(e, ServerEvent::Ready))
    );
    assert_eq!(
        pair.client.session().server_info().unwrap().name,
        "pair-server"
    );
    assert_eq!(
        pair.server.session().client_info().unwrap().name,
        "pair-client"
    );
    let id = pair
        .server_events
        .iter()
        .find_map(|e| match e {
            ServerEvent::Request { id, method, .. } if method == "tools/call" => Some(*id),
            _ => None,
        })
        .expect("the call reached the server's host");
    let result = to_raw(&json!({"content": [{"type": "text", "text": "echoed"}]})).unwrap();
    pair.server
        .session_mut()
        .respond(pair.now, id, result)
        .unwrap();
    pair.run();
    assert_eq!(pair.call_text(call).as_deref(), Some("echoed"));
}

#[test]
fn the_server_asks_for_sampling_and_the_core_client_answers() {
    let mut pair = pair();
    pair.run();
    let params = serde_json::from_value(json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": "2+2?"}}],
        "maxTokens": 5
    }))
    .unwrap();
    let handle = pair
        .server
        .session_mut()
        .request::<CreateMessage>(pair.now, &params, RequestOptions::new())
        .unwrap();
    pair.run();
    let (id, method) = pair
        .client_events
        .iter()
        .find_map(|e| match e {
            ClientEvent::ServerRequest { id, method, .. } => Some((*id, method.clone())),
            _ => None,
        })
        .expect("the sampling request reached the client's host");
    assert_eq!(method, "sampling/createMessage");
    let answer =
        json!({"role": "assistant", "content": {"type": "text", "text": "4"}, "model": "m"});
    pair.client
        .session_mut()
        .respond(pair.now, id, Ok(to_raw(&answer).unwrap()))
        .unwrap();
    pair.run();
    let model = pair.server_events.iter().find_map(|e| match e {
        ServerEvent::Completed { handle: h, result } if *h == handle => {
            let value: serde_json::Value = result.as_ref().unwrap().decode().unwrap();
            value["model"].as_str().map(str::to_owned)
        }
        _ => None,
    });
    assert_eq!(model.as_deref(), Some("m"));
    assert_eq!(pair.server.session().in_flight(), 0);
}
