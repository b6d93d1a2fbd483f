//! Typed MCP methods, in the `lsp-types` style.
//!
//! Every MCP method has one zero-sized marker type (`ListTools`, `CallTool`, ...) that implements
//! [`Request`] or [`Notification`]: its `METHOD` is the exact wire string and its associated types
//! are the `params` and `result` payloads. The payload structs are written from the official
//! schemas (2024-11-05 through 2025-11-25, with 2025-11-25 as the reference); a field that an
//! older version lacks is optional. Every struct:
//!
//! - derives `Serialize` and `Deserialize`, so the same types serve a client and the small test
//!   servers in this repository;
//! - omits `None` fields when serialized (no `null` is ever added);
//! - keeps unknown fields in `extra` so that a value survives a round trip unchanged.
//!
//! Where the schema makes `params` optional, `Params` is an `Option<_>`: `None` serializes to
//! `null`, which the envelope layer turns into an absent `params` member, and an absent `params`
//! deserializes to `None`.

use serde::Serialize;
use serde::de::DeserializeOwned;

mod common;
mod content;
mod lifecycle;

pub use common::*;
pub use content::*;
pub use lifecycle::*;

/// An MCP request method: a message with an id that expects exactly one response.
///
/// Implemented by a marker type per method. For server-to-client methods (roots, sampling,
/// elicitation) the client is the side that receives the request and sends the result.
pub trait Request {
    /// The method name exactly as it appears on the wire (`"tools/list"`).
    const METHOD: &'static str;
    /// The `params` member of the request.
    type Params: Serialize + DeserializeOwned;
    /// The `result` member of a successful response.
    type Result: Serialize + DeserializeOwned;
}

/// An MCP notification method: a message without an id that has no response.
pub trait Notification {
    /// The method name exactly as it appears on the wire (`"notifications/initialized"`).
    const METHOD: &'static str;
    /// The `params` member of the notification.
    type Params: Serialize + DeserializeOwned;
}

#[cfg(test)]
mod tests;
