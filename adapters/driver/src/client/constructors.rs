//! The shortcuts on [`Client`] that connect with the default options.

#[cfg(unix)]
use super::IntoStdioCommand;
use super::{Client, ClientBuilder};
use crate::error::Error;
use crate::runtime::Runtime;
use mcp_manager::config::ServerConfig;

impl<R: Runtime> Client<R> {
    /// A builder for a connection with options.
    #[must_use]
    pub fn builder() -> ClientBuilder<R> {
        ClientBuilder::new()
    }

    /// Connects to a configured server with the default options (see
    /// [`ClientBuilder::connect`]).
    ///
    /// # Errors
    ///
    /// As for [`ClientBuilder::connect`].
    pub async fn connect(config: ServerConfig) -> Result<Self, Error> {
        ClientBuilder::new().connect(config).await
    }

    /// Starts a stdio server with the default options (see [`ClientBuilder::stdio`]).
    ///
    /// # Errors
    ///
    /// As for [`ClientBuilder::stdio`].
    #[cfg(unix)]
    pub async fn stdio(command: impl IntoStdioCommand) -> Result<Self, Error> {
        ClientBuilder::new().stdio(command).await
    }

    /// Connects to an HTTP server with the default options (see [`ClientBuilder::http`]).
    ///
    /// # Errors
    ///
    /// As for [`ClientBuilder::http`].
    #[cfg(feature = "http")]
    pub async fn http(url: &str) -> Result<Self, Error> {
        ClientBuilder::new().http(url).await
    }

    /// Speaks MCP over a byte stream with the default options (see [`ClientBuilder::over`]).
    ///
    /// # Errors
    ///
    /// As for [`ClientBuilder::over`].
    pub async fn over(
        reader: impl futures_io::AsyncRead + Send + 'static,
        writer: impl futures_io::AsyncWrite + Send + 'static,
    ) -> Result<Self, Error> {
        ClientBuilder::new().over(reader, writer).await
    }
}
