//! Test bodies for `subscriptions/listen` (2026-07-28) through the server driver, against
//! this crate's own [`Client`] over an in-memory pipe pair, generic over the runtime (each
//! adapter's tests run them; the caller bounds each with a timeout).

use std::sync::{Arc, Mutex};

use mcp_proto::server::ServerConfig;
use mcp_proto::session::EraPolicy;
use mcp_proto::types::v2026::ListenFilter;
use mcp_proto::types::{Implementation, ResourcesCapability, ServerCapabilities, ToolsCapability};
use tokio::sync::Notify;

use super::pipe;
use crate::server::{ClientRequestId, ListChanged, ListenEnd, Server, ServerHandle, ServerHandler};
use crate::{Client, ClientBuilder, Runtime};

/// What the handler heard of listens: `opened <id> <honoured>` and `closed <id> <end>`.
#[derive(Default)]
struct Heard {
    lines: Mutex<Vec<String>>,
    changed: Notify,
}

impl Heard {
    fn push(&self, line: String) {
        self.lines
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(line);
        self.changed.notify_one();
    }

    /// Waits until `n` lines were heard; returns them.
    async fn wait_for(&self, n: usize) -> Vec<String> {
        loop {
            let notified = self.changed.notified();
            {
                let lines = self
                    .lines
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                if lines.len() >= n {
                    return lines.clone();
                }
            }
            notified.await;
        }
    }
}

struct ListenHandler(Arc<Heard>);

impl ServerHandler for ListenHandler {
    fn on_listen_opened(
        &self,
        id: ClientRequestId,
        _requested: &ListenFilter,
        honoured: &ListenFilter,
        _server: &ServerHandle,
    ) {
        let honoured = serde_json::to_string(honoured).unwrap_or_default();
        self.0.push(format!("opened {id} {honoured}"));
    }

    fn on_listen_closed(&self, id: ClientRequestId, end: &ListenEnd, _server: &ServerHandle) {
        self.0.push(format!("closed {id} {end:?}"));
    }
}

/// A 2026-07-28 client on a server whose tools list changes and whose resources can be
/// subscribed; the handler's record of listens.
async fn start<R: Runtime>(rt: &R) -> (Client<R>, ServerHandle, Arc<Heard>) {
    let (to_server, server_reads) = pipe(64 * 1024);
    let (to_client, client_reads) = pipe(64 * 1024);
    let config = ServerConfig::new(Implementation::new("listen-server", "1")).with_capabilities(
        ServerCapabilities {
            tools: Some(ToolsCapability {
                list_changed: Some(true),
                ..ToolsCapability::default()
            }),
            resources: Some(ResourcesCapability {
                subscribe: Some(true),
                ..ResourcesCapability::default()
            }),
            ..ServerCapabilities::default()
        },
    );
    let heard = Arc::new(Heard::default());
    let (handle, driver) = Server::new(config).start(
        rt.clone(),
        ListenHandler(heard.clone()),
        server_reads,
        to_client,
    );
    rt.spawn(Box::pin(async move {
        let _ = driver.await;
    }));
    let client = ClientBuilder::new()
        .runtime(rt.clone())
        .era_policy(EraPolicy::Discover)
        .name("listener")
        .over(client_reads, to_server)
        .await
        .expect("discover with the server driver");
    (client, handle, heard)
}

/// The client's listens through the server driver: each acknowledged with what the server
/// honours, the handler told of each, the host's `notify_list_changed` and
/// `notify_resource_updated` reaching the listen that asked and no other; the client's close
/// and the host's [`ServerHandle::close_listen`] each end one, and the handler hears of both.
pub async fn listens_receive_the_hosts_notifications<R: Runtime>(rt: R) {
    let (client, handle, heard) = start(&rt).await;
    let mut tools = client
        .listen(ListenFilter {
            tools_list_changed: Some(true),
            prompts_list_changed: Some(true),
            ..ListenFilter::default()
        })
        .await
        .expect("the tools listen");
    assert_eq!(
        tools.honoured(),
        Some(&ListenFilter {
            tools_list_changed: Some(true),
            ..ListenFilter::default()
        }),
        "no prompts on this server"
    );
    let mut notes = client
        .subscribe("file:///notes")
        .await
        .expect("the resource listen");
    let opened = heard.wait_for(2).await;
    assert!(opened[0].starts_with("opened "), "{opened:?}");
    assert!(opened[1].contains("file:///notes"), "{opened:?}");
    let listens = handle.listens();
    assert_eq!(listens.len(), 2);

    handle
        .notify_list_changed(ListChanged::Tools)
        .expect("list_changed");
    handle
        .notify_resource_updated("file:///notes")
        .expect("updated");
    let got = tools.recv().await.expect("open").expect("no gap");
    assert_eq!(got.method, "notifications/tools/list_changed");
    let got = notes.recv().await.expect("open").expect("no gap");
    assert_eq!(got.method, "notifications/resources/updated");
    assert_eq!(got.resource_uri().as_deref(), Some("file:///notes"));

    // The client ends its tools listen (stdio: notifications/cancelled).
    tools.close().await.expect("closed by the client");
    let heard_now = heard.wait_for(3).await;
    assert!(
        heard_now[2].starts_with(&format!("closed {} Cancelled", listens[0].0)),
        "{heard_now:?}"
    );
    // The host ends the other: the stream ends cleanly.
    handle.close_listen(listens[1].0).expect("close_listen");
    assert!(notes.recv().await.is_none(), "the stream ended");
    notes.close().await.expect("ended cleanly by the server");
    let heard_now = heard.wait_for(4).await;
    assert_eq!(heard_now[3], format!("closed {} Closed", listens[1].0));
    assert!(handle.listens().is_empty());
    client.close().await;
}
