//! The server side: serves one MCP client over any byte stream pair, on any [`Runtime`].
//!
//! The protocol is the core's [`ServerSession`](mcp_proto::server::ServerSession) (over
//! [`mcp_proto::server::stdio::StdioServerConnection`]'s line
//! framing): it answers `initialize`, `ping` and `logging/setLevel`, negotiates the version,
//! refuses what the server did not declare, times out its own requests and closes. The
//! [`ServerDriver`] executes it exactly like the client's driver: feed the input, drain what
//! to write, deliver the events, arm one timer at `poll_timeout`.
//!
//! The host implements [`ServerHandler`] (or passes a closure): each client request runs on
//! its own task with a [`RequestContext`] (progress, cancellation, requests to the client such
//! as sampling, elicitation and roots, awaited). [`ServerHandle`] sends notifications
//! (`list_changed`, `resources/updated`, log messages) and requests from anywhere.
//!
//! - **Listens (2026-07-28).** The session serves `subscriptions/listen` itself; the handler
//!   hears of each one ([`ServerHandler::on_listen_opened`] / `on_listen_closed`), and
//!   [`ServerHandle::notify_list_changed`] / [`ServerHandle::notify_resource_updated`] reach
//!   every listen that asked, tagged with its `subscriptionId`.
//!
//! - **Cancellation.** `notifications/cancelled` from the client drops the request's future
//!   (nothing is answered, as the spec asks) after one last poll in which
//!   [`RequestContext::cancelled`] is complete; so does the client's disconnect, for every
//!   running request. Dropping a future of [`ServerHandle::request`] cancels that request to
//!   the client.
//! - **End of input.** The client closing its end ends the session; with
//!   [`Server::eof_grace`], requests still running get that long to answer first (a client
//!   that pipes requests in and closes its end still reads the answers).
//! - **Progress** goes out in a flush of its own, before the answer queued after it.
//! - **Never lost.** A handler that panics is answered with `-32603`; every request to the
//!   client completes exactly once (result, error, timeout, cancel, close).
//!
//! ```
//! # async fn f(reader: impl futures_io::AsyncRead + Send + 'static, writer: impl futures_io::AsyncWrite + Send + 'static) {
//! use mcp_tokio::TokioRuntime;
//! use mcp_tokio::driver::server::{RequestContext, Server};
//! use mcp_tokio::mcp_proto::jsonrpc::{ErrorObject, to_raw};
//! use mcp_tokio::mcp_proto::server::ServerConfig;
//! use mcp_tokio::types::{Implementation, ServerCapabilities, ToolsCapability};
//! use serde_json::value::RawValue;
//!
//! let config = ServerConfig::new(Implementation::new("echo", "1.0")).with_capabilities(
//!     ServerCapabilities { tools: Some(ToolsCapability::default()), ..Default::default() },
//! );
//! let handler = |method: String, params: Option<Box<RawValue>>, _cx: RequestContext| async move {
//!     match method.as_str() {
//!         "tools/list" => to_raw(&serde_json::json!({"tools": []}))
//!             .map_err(|e| ErrorObject::new(ErrorObject::INTERNAL_ERROR, e.to_string())),
//!         other => Err(ErrorObject::method_not_found(other)),
//!     }
//! };
//! let runtime = TokioRuntime::current();
//! let reason = Server::new(config).serve(runtime, handler, reader, writer).await;
//! println!("the client left: {reason:?}");
//! # }
//! ```

mod context;
mod driver;
mod handler;
#[cfg(feature = "http")]
pub mod http;
mod state;
mod stop;
mod tasks;

use std::sync::Arc;
use std::time::Duration;

use mcp_proto::framing::lines::LineDecoder;
use mcp_proto::server::ServerConfig;
use mcp_proto::server::stdio::StdioServerConnection;
use mcp_proto::session::CloseReason;

pub use context::{RequestContext, ServerError, ServerHandle};
pub use driver::ServerDriver;
pub use handler::{InitializeOutcome, RequestOutcome, ServerHandler};
pub use mcp_proto::server::{
    ClientRequestId, Diagnostic, InitializeAnswer, ListChanged, ListenEnd, UsageError,
};

use crate::runtime::Runtime;

/// How to serve one client: the session's configuration plus the driver's options. Build it,
/// then [`start`](Self::start) (a handle and the driver future) or [`serve`](Self::serve)
/// (await the driver in place).
#[derive(Debug, Clone)]
pub struct Server {
    config: ServerConfig,
    eof_grace: Duration,
    max_line: Option<usize>,
}

impl Server {
    /// A server with this session configuration (server info, capabilities, instructions,
    /// limits, the timeout of its own requests).
    #[must_use]
    pub fn new(config: ServerConfig) -> Self {
        Server {
            config,
            eof_grace: Duration::ZERO,
            max_line: None,
        }
    }

    /// When the client closes its end, how long requests still running may take to answer
    /// before they are cancelled and the session ends. Default: zero (cancelled at once).
    #[must_use]
    pub fn eof_grace(mut self, grace: Duration) -> Self {
        self.eof_grace = grace;
        self
    }

    /// The longest input line accepted (default 16 MiB); a longer one is dropped and
    /// answered as a parse error.
    #[must_use]
    pub fn max_line_length(mut self, bytes: usize) -> Self {
        self.max_line = Some(bytes);
        self
    }

    /// Starts serving one client that writes to `reader` and reads from `writer`
    /// (newline-delimited JSON-RPC). Returns the server's handle and the driver, which must
    /// be polled (awaited, or spawned) for anything to happen.
    pub fn start<R, H, Rd, Wr>(
        self,
        runtime: R,
        handler: H,
        reader: Rd,
        writer: Wr,
    ) -> (ServerHandle, ServerDriver<R>)
    where
        R: Runtime,
        H: ServerHandler,
        Rd: futures_io::AsyncRead + Send + 'static,
        Wr: futures_io::AsyncWrite + Send + 'static,
    {
        let now = runtime.now();
        let decoder = match self.max_line {
            Some(n) => LineDecoder::with_max_line_len(n),
            None => LineDecoder::new(),
        };
        let conn = StdioServerConnection::with_decoder(self.config, decoder, now);
        let clock = runtime.clone();
        let shared = Arc::new(state::Shared::new(
            state::Conn::Stdio(conn),
            Box::new(move || clock.now()),
        ));
        let driver = ServerDriver::new(
            shared,
            runtime,
            Arc::new(handler),
            Box::pin(reader),
            Box::pin(writer),
            self.eof_grace,
        );
        (driver.handle().clone(), driver)
    }

    /// Serves one client until it leaves or the server is closed; returns why the session
    /// ended. See [`start`](Self::start).
    pub async fn serve<R, H, Rd, Wr>(
        self,
        runtime: R,
        handler: H,
        reader: Rd,
        writer: Wr,
    ) -> CloseReason
    where
        R: Runtime,
        H: ServerHandler,
        Rd: futures_io::AsyncRead + Send + 'static,
        Wr: futures_io::AsyncWrite + Send + 'static,
    {
        self.start(runtime, handler, reader, writer).1.await
    }
}
