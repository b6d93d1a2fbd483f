//! `mcp-tokio`: the MCP client on the tokio runtime.
//!
//! This crate only implements [`mcp_driver::Runtime`] for tokio ([`TokioRuntime`]); the
//! driver and the client live in `mcp-driver` and are re-exported here under tokio-specific
//! names:
//!
//! ```no_run
//! # async fn f() -> Result<(), mcp_tokio::Error> {
//! let client = mcp_tokio::Client::stdio("npx -y @modelcontextprotocol/server-everything").await?;
//! for tool in client.list_tools().await? {
//!     println!("{}", tool.name);
//! }
//! client.close().await;
//! # Ok(()) }
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs, unreachable_pub)]

#[cfg(feature = "http")]
mod http;
mod runtime;

pub use mcp_driver;
pub use mcp_driver::mcp_proto;
pub use mcp_driver::{
    CallOptions, ConnectionState, ElicitationHandler, Error, HandlerFuture, Lagged, Notifications,
    Progress, ProgressWatch, Root, RootsHandler, SamplingHandler, StaticRoots, Subscription,
};
pub use runtime::TokioRuntime;

/// The MCP client on tokio. See [`mcp_driver::Client`].
pub type Client = mcp_driver::Client<TokioRuntime>;

/// The connection options on tokio. See [`mcp_driver::ClientBuilder`].
pub type ClientBuilder = mcp_driver::ClientBuilder<TokioRuntime>;
