//! Payloads shared by many methods: empty params and results, pagination.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// An opaque pagination position returned by a server in `nextCursor`.
pub type Cursor = String;

/// The `params` of a request that carries nothing but `_meta` (for example `ping`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EmptyParams {
    /// Request metadata; `progressToken` lives here.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The `params` of a notification that carries nothing but `_meta`
/// (for example `notifications/tools/list_changed`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NotificationParams {
    /// Notification metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A result that carries nothing but `_meta` (the reply to `ping`, `logging/setLevel`, ...).
///
/// Any unknown members a peer adds are kept in `extra`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EmptyResult {
    /// Result metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The `params` of a paginated list request (`tools/list`, `resources/list`, ...).
///
/// Send `cursor: None` for the first page and the previous result's `nextCursor` afterwards.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PaginatedParams {
    /// Where to continue listing; `None` starts at the beginning.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cursor: Option<Cursor>,
    /// Request metadata; `progressToken` lives here.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}
