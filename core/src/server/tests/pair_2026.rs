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

/// A 2026 server whose tools list changes and whose resources can be subscribed.
fn listening_server(now: Instant) -> StdioServerConnection {
    StdioServerConnection::new(
        ServerConfig::new(Implementation::new("pair-server", "2")).with_capabilities(
            ServerCapabilities {
                tools: Some(ToolsCapability {
                    list_changed: Some(true),
                    ..ToolsCapability::default()
                }),
                resources: Some(crate::types::ResourcesCapability {
                    subscribe: Some(true),
                    ..crate::types::ResourcesCapability::default()
                }),
                ..ServerCapabilities::default()
            },
        ),
        now,
    )
}

impl Pair {
    /// The methods of the notifications the client's listen `handle` received, in order.
    fn listen_methods(&self, handle: crate::session::RequestHandle) -> Vec<String> {
        self.client_events
            .iter()
            .filter_map(|e| match e {
                ClientEvent::Subscription {
                    handle: h,
                    notification,
                } if *h == handle => Some(notification.method.clone()),
                _ => None,
            })
            .collect()
    }
}

#[test]
fn the_clients_listens_receive_the_hosts_notifications_each_its_own() {
    use crate::server::{ListChanged, ListenEnd};
    use crate::session::Deadline;
    use crate::types::v2026::ListenFilter;

    let mut pair = pair(EraPolicy::Discover);
    pair.server = listening_server(pair.now);
    let now = pair.now;
    let tools = pair
        .client
        .session_mut()
        .listen(
            now,
            &ListenFilter {
                tools_list_changed: Some(true),
                prompts_list_changed: Some(true),
                ..ListenFilter::default()
            },
            Deadline::SessionDefault,
        )
        .unwrap();
    let files = pair
        .client
        .session_mut()
        .listen(
            now,
            &ListenFilter {
                resource_subscriptions: Some(vec!["file:///notes".into()]),
                ..ListenFilter::default()
            },
            Deadline::SessionDefault,
        )
        .unwrap();
    pair.run();
    // Both acknowledged, each with what this server honours (it has no prompts).
    let acks: Vec<_> = pair
        .client_events
        .iter()
        .filter_map(|e| match e {
            ClientEvent::SubscriptionAcknowledged { handle, honoured } => {
                Some((*handle, honoured.clone()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(acks.len(), 2, "{:?}", pair.client_events);
    assert_eq!(acks[0].0, tools);
    assert_eq!(acks[0].1.tools_list_changed, Some(true));
    assert_eq!(acks[0].1.prompts_list_changed, None);
    assert_eq!(acks[1].0, files);
    let opened: Vec<ClientRequestId> = pair
        .server_events
        .iter()
        .filter_map(|e| match e {
            ServerEvent::ListenOpened { id, .. } => Some(*id),
            _ => None,
        })
        .collect();
    assert_eq!(opened.len(), 2);

    // The host's notifications reach the listen that asked, and only it.
    let server = pair.server.session_mut();
    server.notify_list_changed(now, ListChanged::Tools).unwrap();
    server
        .notify_resource_updated(now, "file:///notes/today.md")
        .unwrap();
    server
        .notify_resource_updated(now, "file:///other")
        .unwrap();
    pair.run();
    assert_eq!(
        pair.listen_methods(tools),
        ["notifications/tools/list_changed"]
    );
    assert_eq!(
        pair.listen_methods(files),
        ["notifications/resources/updated"]
    );
    // Nothing went astray as a plain notification.
    assert!(
        !pair
            .client_events
            .iter()
            .any(|e| matches!(e, ClientEvent::Notification(_))),
        "{:?}",
        pair.client_events
    );

    // The client ends one (stdio: notifications/cancelled); the host ends the other.
    pair.client.session_mut().cancel(now, tools, None).unwrap();
    pair.run();
    assert!(pair.server_events.iter().any(|e| matches!(
        e,
        ServerEvent::ListenClosed { id, end: ListenEnd::Cancelled { .. } } if *id == opened[0]
    )));
    pair.server
        .session_mut()
        .close_listen(now, opened[1])
        .unwrap();
    pair.run();
    assert!(pair.client_events.iter().any(|e| matches!(
        e,
        ClientEvent::Completed { handle, result: Ok(_) } if *handle == files
    )));
    assert_eq!(pair.server.session().open_listens(), 0);
    assert_eq!(pair.client.session().in_flight(), 0);
}
