//! The MCP server side on async-std or smol: [`mcp_driver::server`] (the runtime-neutral
//! server driver over the core's server session) with [`AsyncStdRuntime`], plus the stdio
//! glue. Any `futures-io` byte stream pair is served with
//! [`Server::start`](mcp_driver::server::Server::start).

use mcp_driver::mcp_proto::session::CloseReason;
#[doc(inline)]
pub use mcp_driver::server::*;

use crate::AsyncStdRuntime;

/// The driver of one server connection on async-std or smol:
/// [`mcp_driver::server::ServerDriver`].
pub type ServerDriver = mcp_driver::server::ServerDriver<AsyncStdRuntime>;

/// Starts serving one client on this process's stdin and stdout (read and written on
/// blocking threads through `smol::Unblock`, as every async runtime must): the handle, and
/// the driver to await (or spawn).
pub fn start_stdio<H: ServerHandler>(
    runtime: AsyncStdRuntime,
    server: Server,
    handler: H,
) -> (ServerHandle, ServerDriver) {
    server.start(
        runtime,
        handler,
        smol::Unblock::new(std::io::stdin()),
        smol::Unblock::new(std::io::stdout()),
    )
}

/// Serves one client on this process's stdin and stdout until it leaves (stdin closes) or
/// the server is closed; returns why. See [`start_stdio`].
pub async fn serve_stdio<H: ServerHandler>(
    runtime: AsyncStdRuntime,
    server: Server,
    handler: H,
) -> CloseReason {
    start_stdio(runtime, server, handler).1.await
}
