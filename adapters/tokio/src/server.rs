//! The MCP server side on tokio: [`mcp_driver::server`] (the runtime-neutral server driver
//! over the core's server session) with [`TokioRuntime`], plus the stdio glue.
//!
//! ```no_run
//! use mcp_tokio::server::{RequestContext, Server};
//! use mcp_tokio::mcp_proto::jsonrpc::{ErrorObject, to_raw};
//! use mcp_tokio::mcp_proto::server::ServerConfig;
//! use mcp_tokio::types::{Implementation, ServerCapabilities, ToolsCapability};
//!
//! # async fn f() {
//! let config = ServerConfig::new(Implementation::new("echo", "1.0")).with_capabilities(
//!     ServerCapabilities { tools: Some(ToolsCapability::default()), ..Default::default() },
//! );
//! let handler = |method: String, _params, _cx: RequestContext| async move {
//!     match method.as_str() {
//!         "tools/list" => to_raw(&serde_json::json!({"tools": []}))
//!             .map_err(|e| ErrorObject::new(ErrorObject::INTERNAL_ERROR, e.to_string())),
//!         other => Err(ErrorObject::method_not_found(other)),
//!     }
//! };
//! mcp_tokio::server::serve_stdio(Server::new(config), handler).await;
//! # }
//! ```
//!
//! Over Streamable HTTP (feature `http`, on by default), each session gets its own handler
//! from a factory; [`start_http`] reports the bound address and shuts down on request:
//!
//! ```no_run
//! use mcp_tokio::server::http::{HttpMode, HttpServerConfig, StreamableHttp};
//! use mcp_tokio::server::{RequestContext, ServerHandle};
//! use mcp_tokio::mcp_proto::jsonrpc::{ErrorObject, to_raw};
//! use mcp_tokio::mcp_proto::server::ServerConfig;
//! use mcp_tokio::types::{Implementation, ServerCapabilities, ToolsCapability};
//!
//! # async fn f() -> std::io::Result<()> {
//! let config = ServerConfig::new(Implementation::new("echo", "1.0")).with_capabilities(
//!     ServerCapabilities { tools: Some(ToolsCapability::default()), ..Default::default() },
//! );
//! // Stateful (sessions, GET stream, resumption) unless `.with_mode(HttpMode::Stateless)`;
//! // requests with a non-loopback `Origin` get 403 by default.
//! let http = HttpServerConfig::new(config).with_bearer_token("s3cret");
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! let server = mcp_tokio::server::start_http(
//!     listener,
//!     StreamableHttp::new(http),
//!     |_session: &ServerHandle| {
//!         |method: String, _params, _cx: RequestContext| async move {
//!             match method.as_str() {
//!                 "tools/list" => to_raw(&serde_json::json!({"tools": []}))
//!                     .map_err(|e| ErrorObject::new(ErrorObject::INTERNAL_ERROR, e.to_string())),
//!                 other => Err(ErrorObject::method_not_found(other)),
//!             }
//!         }
//!     },
//! )?;
//! println!("serving {}", server.url()); // http://127.0.0.1:PORT/mcp
//! # let _ = HttpMode::Stateless;
//! server.shutdown();
//! server.stopped().await;
//! # Ok(())
//! # }
//! ```

use mcp_driver::mcp_proto::session::CloseReason;
#[doc(inline)]
pub use mcp_driver::server::*;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

use crate::TokioRuntime;

#[cfg(feature = "http")]
#[doc(inline)]
pub use crate::http_server::{HttpServerHandle, serve_http, start_http};

/// The driver of one server connection on tokio: [`mcp_driver::server::ServerDriver`].
pub type ServerDriver = mcp_driver::server::ServerDriver<TokioRuntime>;

/// Starts serving one client on this process's stdin and stdout, on the current tokio
/// runtime: the handle, and the driver to await (or spawn).
///
/// Stdin and stdout that are pipes or sockets (as a host connects a stdio server) wait on
/// the reactor ([`crate::stdio`]); anything else (a terminal, a file) is read on tokio's
/// blocking thread: a program that ends its server before such a stdin closes should leave
/// with `std::process::exit` (or `Runtime::shutdown_background`) rather than wait for that
/// thread.
///
/// # Panics
///
/// Outside a tokio runtime.
pub fn start_stdio<H: ServerHandler>(server: Server, handler: H) -> (ServerHandle, ServerDriver) {
    #[cfg(unix)]
    return start(
        server,
        handler,
        crate::stdio::stdin(),
        crate::stdio::stdout(),
    );
    #[cfg(not(unix))]
    return start(server, handler, tokio::io::stdin(), tokio::io::stdout());
}

/// Serves one client on this process's stdin and stdout until it leaves (stdin closes) or
/// the server is closed; returns why. See [`start_stdio`].
///
/// # Panics
///
/// Outside a tokio runtime.
pub async fn serve_stdio<H: ServerHandler>(server: Server, handler: H) -> CloseReason {
    start_stdio(server, handler).1.await
}

/// Starts serving one client over a tokio byte stream pair (a socket's halves, a duplex
/// pipe): the handle, and the driver to await (or spawn).
///
/// # Panics
///
/// Outside a tokio runtime.
pub fn start<H, Rd, Wr>(
    server: Server,
    handler: H,
    reader: Rd,
    writer: Wr,
) -> (ServerHandle, ServerDriver)
where
    H: ServerHandler,
    Rd: tokio::io::AsyncRead + Send + 'static,
    Wr: tokio::io::AsyncWrite + Send + 'static,
{
    server.start(
        TokioRuntime::current(),
        handler,
        reader.compat(),
        writer.compat_write(),
    )
}
