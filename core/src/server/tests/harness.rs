//! Test support for the server session: a scripted client that writes lines into the session
//! and reads what it sends back as JSON values ([`Client`]), and the core's own client paired
//! with it in memory ([`Pair`]).

use serde_json::{Value, json};

use crate::server::stdio::StdioServerConnection;
use crate::server::{Event, ServerConfig, ServerSession};
use crate::session::{
    Event as ClientEvent, RawParams, RequestHandle, RequestOptions, SessionConfig,
};
use crate::stdio::StdioConnection;
use crate::time::{Duration, Instant};
use crate::types::{
    CallToolResult, Implementation, ResourcesCapability, ServerCapabilities, ToolsCapability,
};

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

    /// Everything the server sends now, as its text (one message a line).
    pub(super) fn sent_text(&mut self) -> String {
        let mut out = String::new();
        let mut buf = Vec::new();
        while self.server.poll_transmit(&mut buf).is_some() {
            out.push_str(&String::from_utf8_lossy(&buf));
            out.push('\n');
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

    /// A ready session with one `sampling/createMessage` of the server's out (a 10 s
    /// timeout, restarted by progress for up to 25 s), which asked for progress; its handle.
    pub(super) fn with_sampling_out() -> (Client, RequestHandle) {
        let mut c = Client::ready(json!({"sampling": {}}));
        let options = RequestOptions::new()
            .timeout(Duration::from_secs(10))
            .reset_timeout_on_progress(Duration::from_secs(25));
        let params = RawParams::encode(&json!({"messages": []})).expect("JSON params");
        let handle = c
            .server
            .send_request(c.now, "sampling/createMessage", Some(params), options)
            .expect("the session takes the request");
        let sent = c.one();
        assert_eq!(sent["params"]["_meta"]["progressToken"], handle.get());
        (c, handle)
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

/// The core's own client ([`StdioConnection`]) against the server session
/// ([`StdioServerConnection`]) in memory: bytes from one are the other's input.
pub(super) struct Pair {
    pub(super) client: StdioConnection,
    pub(super) server: StdioServerConnection,
    pub(super) now: Instant,
    pub(super) client_events: Vec<ClientEvent>,
    pub(super) server_events: Vec<Event>,
    /// How many bytes cross at a time.
    chunk: usize,
}

impl Pair {
    /// A client of `client` config against server `pair-server` 2 (tools offered); bytes
    /// cross in `chunk`-byte pieces, so no message arrives whole.
    pub(super) fn new(client: SessionConfig, chunk: usize) -> Self {
        let now = Instant::now();
        let server = StdioServerConnection::new(
            ServerConfig::new(Implementation::new("pair-server", "2")).with_capabilities(
                ServerCapabilities {
                    tools: Some(ToolsCapability::default()),
                    ..ServerCapabilities::default()
                },
            ),
            now,
        );
        Pair {
            client: StdioConnection::new(client, now),
            server,
            now,
            client_events: Vec::new(),
            server_events: Vec::new(),
            chunk,
        }
    }

    /// Moves bytes both ways until neither side has anything to send, collecting events.
    pub(super) fn run(&mut self) {
        for _ in 0..100 {
            let mut to_server = Vec::new();
            while self.client.poll_transmit(&mut to_server).is_some() {}
            let mut to_client = Vec::new();
            while self.server.poll_transmit(&mut to_client).is_some() {}
            for chunk in to_server.chunks(self.chunk) {
                self.server.handle_bytes(self.now, chunk);
            }
            for chunk in to_client.chunks(self.chunk) {
                self.client.handle_bytes(self.now, chunk);
            }
            self.client_events.extend(std::iter::from_fn(|| {
                self.client.session_mut().poll_event()
            }));
            self.server_events
                .extend(std::iter::from_fn(|| self.server.poll_event()));
            if to_server.is_empty() && to_client.is_empty() {
                return;
            }
        }
        panic!("the pair never went quiet");
    }

    /// The text of the first content item of tool call `call`'s result, once completed.
    pub(super) fn call_text(&self, call: RequestHandle) -> Option<String> {
        self.client_events.iter().find_map(|e| match e {
            ClientEvent::Completed { handle, result } if *handle == call => {
                let result: CallToolResult = result.as_ref().unwrap().decode().unwrap();
                result.content[0].as_text().map(str::to_owned)
            }
            _ => None,
        })
    }
}
