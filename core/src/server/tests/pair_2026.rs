//! The core's own 2026-07-28 client against the server session in memory: the handshake by
//! `server/discover`, a tool call with progress, and a cancellation, all with the
//! per-request envelope.

use serde_json::json;

use super::harness::Pair;
use crate::jsonrpc::to_raw;
use crate::server::stdio::StdioServerConnection;
use crate::server::{ClientRequestId, Event as ServerEvent, ServerConfig, ServerState};
use crate::session::{
    Era, EraPolicy, Event as ClientEvent, ProtocolVersion, RequestError, RequestOptions,
    SessionConfig,
};
use crate::time::Instant;
use crate::types::{
    CallTool, CallToolParams, ClientCapabilities, ElicitationCapability, Implementation,
    ServerCapabilities, ToolsCapability,
};

/// The pair, the client of era `policy` able to elicit; bytes cross in 5-byte chunks.
fn pair(policy: EraPolicy) -> Pair {
    Pair::new(
        SessionConfig::new(Implementation::new("modern-client", "1"))
            .with_era_policy(policy)
            .with_capabilities(ClientCapabilities {
                elicitation: Some(ElicitationCapability::default()),
                ..ClientCapabilities::default()
            }),
        5,
    )
}

impl Pair {
    fn call(&mut self, name: &str) -> crate::session::RequestHandle {
        self.client
            .session_mut()
            .request::<CallTool>(
                self.now,
                &CallToolParams::new(name, Default::default()),
                RequestOptions::new().progress(),
            )
            .unwrap()
    }

    /// The host token of the server's request event for tool `name`, with its envelope.
    fn server_request(&self, name: &str) -> (ClientRequestId, crate::server::RequestEnvelope) {
        self.server_events
            .iter()
            .find_map(|e| match e {
                ServerEvent::Request {
                    id,
                    params: Some(p),
                    envelope: Some(envelope),
                    ..
                } if p.get().contains(&format!("\"name\":\"{name}\"")) => {
                    Some((*id, (**envelope).clone()))
                }
                _ => None,
            })
            .expect("the call reached the server's host with its envelope")
    }
}

fn handshake_by_discover(policy: EraPolicy) {
    let mut pair = pair(policy);
    let call = pair.call("echo");
    pair.run();
    assert!(
        pair.client_events.iter().any(|e| matches!(
            e,
            ClientEvent::Ready {
                era: Era::Discover,
                version: ProtocolVersion::V2026_07_28,
            }
        )),
        "{:?}",
        pair.client_events
    );
    assert_eq!(
        pair.client.session().server_info().unwrap().name,
        "pair-server"
    );
    assert_eq!(pair.server.session().state(), ServerState::PerRequest);
    let (id, envelope) = pair.server_request("echo");
    assert_eq!(envelope.client_info.unwrap().name, "modern-client");
    assert!(envelope.capabilities.elicitation.is_some());
    // Progress on the client's token, then the answer.
    pair.server
        .session_mut()
        .notify_progress(pair.now, id, 1.0, Some(2.0), Some("half"))
        .unwrap();
    let result = to_raw(&json!({"content": [{"type": "text", "text": "echoed"}]})).unwrap();
    pair.server
        .session_mut()
        .respond(pair.now, id, result)
        .unwrap();
    pair.run();
    assert!(pair.client_events.iter().any(|e| matches!(
        e,
        ClientEvent::Progress { handle, progress, .. } if *handle == call && *progress == 1.0
    )));
    assert_eq!(pair.call_text(call).as_deref(), Some("echoed"));
}

#[test]
fn a_discover_client_calls_a_tool_with_progress() {
    handshake_by_discover(EraPolicy::Discover);
}

#[test]
fn an_auto_client_chooses_2026_with_this_server() {
    handshake_by_discover(EraPolicy::default());
}

#[test]
fn a_cancelled_call_reaches_the_host_and_its_late_answer_is_dropped() {
    let mut pair = pair(EraPolicy::Discover);
    let call = pair.call("slow");
    pair.run();
    let (id, _) = pair.server_request("slow");
    pair.client
        .session_mut()
        .cancel(pair.now, call, Some("changed my mind".into()))
        .unwrap();
    pair.run();
    assert!(pair.server_events.iter().any(|e| matches!(
        e,
        ServerEvent::RequestCancelled { id: i, reason: Some(r) } if *i == id && r == "changed my mind"
    )));
    assert!(pair.client_events.iter().any(|e| matches!(
        e,
        ClientEvent::Completed { handle, result: Err(RequestError::Cancelled { .. }) } if *handle == call
    )));
    let late = to_raw(&json!({"content": []})).unwrap();
    assert!(
        pair.server
            .session_mut()
            .respond(pair.now, id, late)
            .is_err()
    );
    assert_eq!(pair.server.session().open_client_requests(), 0);
}

#[test]
fn a_legacy_only_server_makes_an_auto_client_fall_back() {
    let now = Instant::now();
    let mut pair = pair(EraPolicy::default());
    pair.server = StdioServerConnection::new(
        ServerConfig::new(Implementation::new("old", "1"))
            .with_capabilities(ServerCapabilities {
                tools: Some(ToolsCapability::default()),
                ..ServerCapabilities::default()
            })
            .with_versions(ProtocolVersion::INITIALIZE_ERA),
        now,
    );
    pair.call("echo");
    pair.run();
    assert!(pair.client_events.iter().any(|e| matches!(
        e,
        ClientEvent::Ready {
            era: Era::Initialize,
            ..
        }
    )));
    assert_eq!(pair.server.session().state(), ServerState::Ready);
}
