//! A scripted in-process MCP server for tests: [`FakeServer`] (feature `testing`; from a
//! tokio project, `cargo add --dev mcp-driver --features testing` turns it on under
//! `mcp_tokio::driver::testing`).
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), mcp_tokio::Error> {
//! use mcp_tokio::driver::testing::FakeServer;
//! use mcp_tokio::{ClientBuilder, TokioRuntime};
//! use serde_json::json;
//!
//! let rt = TokioRuntime::current();
//! let (server, io) = FakeServer::start(&rt);
//! server.on_request("tools/list", |_| Ok(json!({"tools": []})));
//! let client = ClientBuilder::new().runtime(rt).over(io.reader, io.writer).await?;
//! assert!(client.list_tools().await?.is_empty());
//! # Ok(()) }
//! ```

mod fake_server;
pub mod handler_suite;
#[cfg(feature = "http")]
pub mod http_server;
#[cfg(feature = "http")]
pub mod http_suite;
pub mod listen_suite;
pub mod manager;
pub mod oauth_server;
pub mod output_schema_suite;
pub mod pending_suite;
mod pipe;
#[cfg(target_os = "linux")]
pub mod process;
pub mod server_listen_suite;
#[cfg(feature = "http")]
pub mod server_suite;
pub mod session_reset_suite;
mod stdio_suite;
pub mod suite;
pub mod task_list_suite;
pub mod task_receiver_suite;
pub mod task_suite;

pub use fake_server::{AutoHandler, FakeServer, FakeTransport, default_initialize_result};
pub use pipe::{PipeReader, PipeWriter, pipe};
