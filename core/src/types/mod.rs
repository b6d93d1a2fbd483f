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
//! - keeps unknown fields in `extra` so that a value survives a round trip unchanged (one
//!   exception: a member typed `f64`, such as `progress`, re-serializes an integer `3` as `3.0`);
//! - accepts an explicit `null` for an optional member as absent.
//!
//! Unknown string values of open enumerations (roles, task statuses, elicitation actions, ...)
//! are kept as `Other(String)`, and a content block of an unknown `type` as
//! [`ContentBlock::Unknown`], so a newer peer never makes a whole message fail. A known shape
//! with a missing required member or a wrongly typed one is a deserialization error.
//!
//! A task-augmented request (one whose params carry `task`) is answered with a
//! [`CreateTaskResult`] instead of the method's `Result`; `tasks/result` later returns the
//! method's result ([`GetTaskPayloadResult::decode`]).
//!
//! Where the schema makes `params` optional, `Params` is an `Option<_>`: `None` serializes to
//! `null`, which the envelope layer turns into an absent `params` member, and an absent `params`
//! deserializes to `None`.

use serde::Serialize;
use serde::de::DeserializeOwned;

/// Declares a string enum whose unknown values survive as `Other(String)`, so a newer peer's
/// value never fails deserialization and re-serializes unchanged.
macro_rules! open_string_enum {
    (
        $(#[$attr:meta])*
        pub enum $name:ident { $( $(#[$vattr:meta])* $variant:ident = $wire:literal, )+ }
    ) => {
        $(#[$attr])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum $name {
            $( $(#[$vattr])* $variant, )+
            /// A value this crate does not know, kept verbatim.
            Other(String),
        }

        impl $name {
            /// The wire spelling of this value.
            pub fn as_str(&self) -> &str {
                match self {
                    $( Self::$variant => $wire, )+
                    Self::Other(other) => other,
                }
            }
        }

        impl From<&str> for $name {
            fn from(value: &str) -> Self {
                match value {
                    $( $wire => Self::$variant, )+
                    other => Self::Other(other.to_owned()),
                }
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let value = <String as ::serde::Deserialize>::deserialize(deserializer)?;
                Ok(Self::from(value.as_str()))
            }
        }
    };
}

#[macro_use]
mod one_pass;

mod client_features;
mod common;
mod completion;
mod content;
mod lifecycle;
mod logging;
mod notifications;
mod prompts;
mod resources;
mod tasks;
mod tool_listing;
mod tools;
pub mod v2026;

pub use client_features::*;
pub use common::*;
pub use completion::*;
pub use content::*;
pub use lifecycle::*;
pub use logging::*;
pub use notifications::*;
pub use prompts::*;
pub use resources::*;
pub use tasks::*;
pub use tool_listing::*;
pub use tools::*;

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
mod schema_coverage;
#[cfg(test)]
mod tests;
