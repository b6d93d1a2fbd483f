#![cfg(feature = "http")]
//! The deferred `initialize` through the HTTP server driver on 127.0.0.1: the handler's
//! `on_initialize` hook answers each session's `initialize` from that client's own params.
//! Each test is bounded by an anti-hang guard; none is timed.

use std::time::Duration;

use mcp_tokio::mcp_proto::jsonrpc::ErrorObject;
use mcp_tokio::mcp_proto::server::ServerConfig;
use mcp_tokio::mcp_proto::server::http::HttpServerConfig;
use mcp_tokio::mcp_proto::session::ProtocolVersion;
use mcp_tokio::server::http::StreamableHttp;
use mcp_tokio::server::{
    HttpServerHandle, InitializeAnswer, InitializeOutcome, ServerHandle, ServerHandler, start_http,
};
use mcp_tokio::types::{Implementation, InitializeParams, ServerCapabilities, ToolsCapability};
use mcp_tokio::{ClientBuilder, HandlerFuture};

const GUARD: Duration = Duration::from_secs(30);

/// Answers `initialize` as "server-for-<client name>" with the instructions naming the
/// version the client asked for; refuses a client called "refused".
struct Deferring;

impl ServerHandler for Deferring {
    fn on_initialize(
        &self,
        params: InitializeParams,
        _server: ServerHandle,
    ) -> HandlerFuture<'_, InitializeOutcome> {
        Box::pin(async move {
            // Yield first: the answer comes later than the request, as a proxy's does.
            tokio::task::yield_now().await;
            if params.client_info.name == "refused" {
                return Err(ErrorObject::new(-32603, "no upstream for you"));
            }
            if params.client_info.name == "panics" {
                panic!("the test's initialize handler panics on purpose");
            }
            Ok(InitializeAnswer::new(Implementation::new(
                format!("server-for-{}", params.client_info.name),
                "2.0",
            ))
            .with_capabilities(ServerCapabilities {
                tools: Some(ToolsCapability::default()),
                ..ServerCapabilities::default()
            })
            .with_instructions(Some(format!("you asked for {}", params.protocol_version))))
        })
    }
}

async fn start() -> HttpServerHandle {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind 127.0.0.1:0");
    let config = HttpServerConfig::new(ServerConfig::new(Implementation::new("configured", "1")))
        .with_deferred_initialize(true);
    start_http(listener, StreamableHttp::new(config), |_: &ServerHandle| {
        Deferring
    })
    .expect("the server starts")
}

async fn guarded<F: std::future::Future<Output = ()>>(f: F) {
    tokio::time::timeout(GUARD, f)
        .await
        .expect("the test finished within the guard");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_session_is_answered_from_its_own_clients_params() {
    guarded(async {
        let server = start().await;
        let a = ClientBuilder::new()
            .client_info(Implementation::new("alice", "1"))
            .protocol_version(ProtocolVersion::V2025_03_26)
            .http(&server.url())
            .await
            .expect("alice connects");
        let b = ClientBuilder::new()
            .client_info(Implementation::new("bob", "1"))
            .protocol_version(ProtocolVersion::V2025_11_25)
            .http(&server.url())
            .await
            .expect("bob connects");
        assert_eq!(a.server_info().name, "server-for-alice");
        assert_eq!(b.server_info().name, "server-for-bob");
        assert_eq!(a.protocol_version(), ProtocolVersion::V2025_03_26);
        assert_eq!(b.protocol_version(), ProtocolVersion::V2025_11_25);
        assert_eq!(a.instructions(), Some("you asked for 2025-03-26"));
        assert!(b.capabilities().tools.is_some());
        // The answered capabilities gate the session: tools reach the handler.
        let err = a
            .list_tools()
            .await
            .expect_err("the handler has no tools/list");
        assert!(err.to_string().contains("tools/list"), "{err}");
        a.close().await;
        b.close().await;
        server.shutdown();
        server.stopped().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_or_failed_initialize_reaches_the_client_as_an_error() {
    guarded(async {
        let server = start().await;
        for (name, message) in [
            ("refused", "no upstream for you"),
            ("panics", "initialize handler failed"),
        ] {
            let err = ClientBuilder::new()
                .client_info(Implementation::new(name, "1"))
                .http(&server.url())
                .await
                .expect_err("the handshake is refused");
            assert!(err.to_string().contains(message), "{name}: {err}");
        }
        server.shutdown();
        server.stopped().await;
    })
    .await;
}
