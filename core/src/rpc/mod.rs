//! What the client and the server sessions share: the caller's request handle, the
//! description of an outgoing message, and (crate-private) the active clock and the deadline
//! index their pending requests are timed with (`clock`) and the one routing of a framed
//! input (`route`).
//!
//! Both sessions re-export these types; they live here so neither side owns them.

use std::borrow::Cow;
use std::fmt;

use serde_json::value::RawValue;

use crate::jsonrpc::{self, ErrorObject, Id};

pub(crate) mod clock;
pub(crate) mod notifications;
pub(crate) mod peer_keys;
pub(crate) mod queue;
pub(crate) mod route;

/// The caller's token for one request. Not the JSON-RPC wire id: a re-send gets a fresh wire
/// id under the same handle. Every handle completes exactly once (the client's
/// [`Event::Completed`](crate::session::Event::Completed), the server's
/// [`server::Event::Completed`](crate::server::Event::Completed)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RequestHandle(pub(crate) u64);

impl RequestHandle {
    /// The handle as a number (unique within a session), for logs and maps.
    #[must_use]
    pub fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Display for RequestHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// What kind of JSON-RPC message an [`Outgoing`] is: enough for an HTTP layer to pick the
/// stream and the expected status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum MessageKind {
    /// A request: a response is expected.
    Request,
    /// A notification: no response.
    Notification,
    /// A response (or error) to the peer's request.
    Response,
}

/// One message to send. Its bytes (one compact JSON object, no trailing newline) were
/// appended to the buffer passed to a session's `poll_transmit` (the client's
/// [`Session`](crate::session::Session) or the server's
/// [`ServerSession`](crate::server::ServerSession)).
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use]
#[non_exhaustive]
pub struct Outgoing {
    /// Request, notification or response.
    pub kind: MessageKind,
    /// The request it is, for [`MessageKind::Request`] (`None` for a request the session
    /// makes itself, such as the client's `initialize`).
    pub request: Option<RequestHandle>,
    /// Its method (requests and notifications).
    pub method: Option<Cow<'static, str>>,
}

impl Outgoing {
    /// Writes a notification into `buf` and describes it.
    pub(crate) fn notification(
        buf: &mut Vec<u8>,
        method: Cow<'static, str>,
        params: Option<&RawValue>,
    ) -> Outgoing {
        jsonrpc::encode_notification(buf, &method, params);
        Outgoing {
            kind: MessageKind::Notification,
            request: None,
            method: Some(method),
        }
    }

    /// Writes the answer to the peer's request `id` into `buf` and describes it.
    pub(crate) fn response(
        buf: &mut Vec<u8>,
        id: &Id,
        result: &Result<Box<RawValue>, ErrorObject>,
    ) -> Outgoing {
        match result {
            Ok(r) => jsonrpc::encode_response(buf, id, r),
            Err(e) => jsonrpc::encode_error(buf, Some(id), e),
        }
        Self::response_kind()
    }

    /// Writes an error answer to a message whose id could not be read (`"id": null`).
    pub(crate) fn unidentified_error(buf: &mut Vec<u8>, error: &ErrorObject) -> Outgoing {
        jsonrpc::encode_error(buf, None, error);
        Self::response_kind()
    }

    fn response_kind() -> Outgoing {
        Outgoing {
            kind: MessageKind::Response,
            request: None,
            method: None,
        }
    }
}
