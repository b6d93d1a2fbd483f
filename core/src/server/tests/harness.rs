//! A scripted client for the server session: it writes lines into the session and reads what
//! the session sends back as JSON values.

use serde_json::{Value, json};

use crate::server::{Event, ServerConfig, ServerSession};
use crate::time::{Duration, Instant};
use crate::types::{Implementation, ResourcesCapability, ServerCapabilities, ToolsCapability};

pub(super) struct Client {
    pub(super) server: ServerSession,
    pub(super) now: Instant,
}

pub(super) fn config() -> ServerConfig {
    ServerConfig::new(Implementation::new("test-server", "1.0"))
        .with_capabilities(ServerCapabilities {
            tools: Some(ToolsCapability {
                list_changed: Some(true),
                ..ToolsCapability::default()
            }),
            resources: Some(ResourcesCapability {
                subscribe: Some(true),
                ..ResourcesCapability::default()
            }),
            logging: Some(Default::default()),
            ..ServerCapabilities::default()
        })
        .with_instructions("be kind")
}

impl Client {
    pub(super) fn new() -> Self {
        Self::with_config(config())
    }

    pub(super) fn with_config(config: ServerConfig) -> Self {
        let now = Instant::now();
        Client {
            server: ServerSession::new(config, now),
            now,
        }
    }

    /// Sends one message (a JSON value) to the server.
    pub(super) fn send(&mut self, message: Value) {
        let text = message.to_string();
        self.server.handle_message(self.now, text.as_bytes());
    }

    pub(super) fn request(&mut self, id: u64, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
    }

    pub(super) fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Everything the server sends now, as JSON values.
    pub(super) fn received(&mut self) -> Vec<Value> {
        let mut out = Vec::new();
        let mut buf = Vec::new();
        while self.server.poll_transmit(&mut buf).is_some() {
            out.push(serde_json::from_slice(&buf).expect("the server sends JSON"));
            buf.clear();
        }
        out
    }

    /// The one message the server sends now.
    pub(super) fn one(&mut self) -> Value {
        let mut all = self.received();
        assert_eq!(all.len(), 1, "{all:?}");
        all.remove(0)
    }

    pub(super) fn events(&mut self) -> Vec<Event> {
        std::iter::from_fn(|| self.server.poll_event()).collect()
    }

    pub(super) fn advance(&mut self, by: Duration) {
        self.now += by;
        self.server.handle_timeout(self.now);
    }

    /// `initialize` with `version` and `capabilities`; returns the answer.
    pub(super) fn initialize(&mut self, version: &str, capabilities: Value) -> Value {
        self.request(
            0,
            "initialize",
            json!({
                "protocolVersion": version,
                "capabilities": capabilities,
                "clientInfo": {"name": "scripted", "version": "0"}
            }),
        );
        self.one()
    }

    /// The whole handshake at 2025-11-25; events drained.
    pub(super) fn ready(capabilities: Value) -> Self {
        let mut c = Client::new();
        c.initialize("2025-11-25", capabilities);
        c.notify("notifications/initialized", json!({}));
        c.events();
        c
    }
}
