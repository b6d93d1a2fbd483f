//! The wire trace of a Streamable HTTP server ([`StreamableHttp::on_wire`]): each session's
//! messages as they come in (a POST's body) and go out (the body of each response it gets),
//! told by session, for an operator's `-v`.
//!
//! [`StreamableHttp::on_wire`]: super::StreamableHttp::on_wire

use std::sync::Arc;

use mcp_proto::http::headers::HeaderList;
use mcp_proto::server::http::{ResponseId, SessionKey};

/// One step of the traffic of a session, as the server sees it. A response's body bytes are
/// as written: JSON, or SSE events (its head's content type says which).
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum ServerWire<'a> {
    /// The body of a request of `session` (empty for GET and DELETE).
    Request {
        /// The session.
        session: SessionKey,
        /// The body, as received.
        body: &'a [u8],
    },
    /// The head of `response`, a response to a request of `session`.
    Head {
        /// The session.
        session: SessionKey,
        /// The response.
        response: ResponseId,
        /// Its status code.
        status: u16,
        /// Its header fields.
        headers: &'a HeaderList,
    },
    /// A chunk of the body of `response`, as sent.
    Body {
        /// The response.
        response: ResponseId,
        /// The bytes.
        chunk: &'a [u8],
    },
    /// `response` ended (complete, or dropped: its client went away).
    End {
        /// The response.
        response: ResponseId,
    },
}

/// A wire tap: called on the driver's task or the HTTP library's, with the server's state
/// locked, so it must be quick, never block and never call into the server.
pub(crate) type OnWire = Arc<dyn Fn(ServerWire<'_>) + Send + Sync>;
