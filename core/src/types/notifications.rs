//! Notifications not tied to one feature area: progress, cancellation, list changes.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{Notification, NotificationParams};

/// A progress token: the caller's choice of string or integer, echoed in progress notifications.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum ProgressToken {
    /// An integer token.
    Number(i64),
    /// A string token.
    String(String),
}

// What `#[serde(untagged)]` accepted (an integer that fits `i64`, or a string), decoded
// without buffering the value first: every progress notification carries a token.
impl<'de> Deserialize<'de> for ProgressToken {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct TokenVisitor;
        impl serde::de::Visitor<'_> for TokenVisitor {
            type Value = ProgressToken;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a progress token (an integer or a string)")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<ProgressToken, E> {
                Ok(ProgressToken::Number(v))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<ProgressToken, E> {
                i64::try_from(v)
                    .map(ProgressToken::Number)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Unsigned(v), &self))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<ProgressToken, E> {
                Ok(ProgressToken::String(v.to_owned()))
            }
            fn visit_string<E: serde::de::Error>(self, v: String) -> Result<ProgressToken, E> {
                Ok(ProgressToken::String(v))
            }
        }
        d.deserialize_any(TokenVisitor)
    }
}

/// A JSON-RPC request id as it appears inside MCP payloads (`notifications/cancelled`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum RequestId {
    /// An integer id.
    Number(i64),
    /// A string id.
    String(String),
}

/// The `params` of `notifications/progress`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProgressParams {
    /// The token from the request's `_meta.progressToken`.
    pub progress_token: ProgressToken,
    /// Progress so far; should increase with every notification (not enforced here).
    pub progress: f64,
    /// The total, if known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    /// Human-readable status (2025-03-26 and later).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Notification metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

deserialize_with_extra!(ProgressParams, "progress params",
    required { progress_token: "progressToken", progress: "progress" }
    optional { total: "total", message: "message", meta: "_meta" });

/// `notifications/progress`: progress of a long-running request, either direction.
#[non_exhaustive]
pub enum Progress {}

impl Notification for Progress {
    const METHOD: &'static str = "notifications/progress";
    type Params = ProgressParams;
}

/// The `params` of `notifications/cancelled`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelledParams {
    /// The id of the request to cancel; required before 2025-11-25, where only task
    /// cancellation (through `tasks/cancel`) goes without it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_id: Option<RequestId>,
    /// Why, for logs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Notification metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `notifications/cancelled`: the sender no longer wants the result of a request.
#[non_exhaustive]
pub enum Cancelled {}

impl Notification for Cancelled {
    const METHOD: &'static str = "notifications/cancelled";
    type Params = CancelledParams;
}

/// The `params` of `notifications/resources/updated`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceUpdatedParams {
    /// The URI of the resource that changed (possibly a sub-resource of the subscribed one).
    pub uri: String,
    /// Notification metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `notifications/resources/updated`: a subscribed resource changed.
#[non_exhaustive]
pub enum ResourceUpdated {}

impl Notification for ResourceUpdated {
    const METHOD: &'static str = "notifications/resources/updated";
    type Params = ResourceUpdatedParams;
}

/// `notifications/tools/list_changed`: the server's tool list changed.
#[non_exhaustive]
pub enum ToolListChanged {}

impl Notification for ToolListChanged {
    const METHOD: &'static str = "notifications/tools/list_changed";
    type Params = Option<NotificationParams>;
}

/// `notifications/resources/list_changed`: the server's resource list changed.
#[non_exhaustive]
pub enum ResourceListChanged {}

impl Notification for ResourceListChanged {
    const METHOD: &'static str = "notifications/resources/list_changed";
    type Params = Option<NotificationParams>;
}

/// `notifications/prompts/list_changed`: the server's prompt list changed.
#[non_exhaustive]
pub enum PromptListChanged {}

impl Notification for PromptListChanged {
    const METHOD: &'static str = "notifications/prompts/list_changed";
    type Params = Option<NotificationParams>;
}

/// `notifications/roots/list_changed`: the client's roots changed.
#[non_exhaustive]
pub enum RootsListChanged {}

impl Notification for RootsListChanged {
    const METHOD: &'static str = "notifications/roots/list_changed";
    type Params = Option<NotificationParams>;
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::types::tests::round_trip;

    #[test]
    fn progress_round_trip_with_both_token_kinds() {
        let params: ProgressParams = round_trip(json!({
            "progressToken": "abc123",
            "progress": 50.5,
            "total": 100.0,
            "message": "Reticulating splines..."
        }));
        assert_eq!(
            params.progress_token,
            ProgressToken::String("abc123".into())
        );
        assert_eq!(params.progress, 50.5);
        assert_eq!(params.total, Some(100.0));
        let numeric: ProgressParams = round_trip(json!({ "progressToken": 7, "progress": 0.25 }));
        assert_eq!(numeric.progress_token, ProgressToken::Number(7));
        assert_eq!(numeric.total, None);
        // An integer progress is accepted (it is a JSON number) and read as a float.
        let integer: ProgressParams =
            serde_json::from_value(json!({ "progressToken": 1, "progress": 3 })).unwrap();
        assert_eq!(integer.progress, 3.0);
        let bad_token = json!({ "progressToken": 1.5, "progress": 1.0 });
        assert!(serde_json::from_value::<ProgressParams>(bad_token).is_err());
    }

    #[test]
    fn cancelled_round_trip() {
        let params: CancelledParams =
            round_trip(json!({ "requestId": "123", "reason": "User requested cancellation" }));
        assert_eq!(params.request_id, Some(RequestId::String("123".into())));
        let numeric: CancelledParams = round_trip(json!({ "requestId": 42 }));
        assert_eq!(numeric.request_id, Some(RequestId::Number(42)));
        assert_eq!(numeric.reason, None);
        assert!(serde_json::from_value::<CancelledParams>(json!({ "requestId": [1] })).is_err());
    }

    #[test]
    fn resource_updated_round_trip() {
        let params: ResourceUpdatedParams =
            round_trip(json!({ "uri": "file:///project/src/main.rs", "_meta": {} }));
        assert_eq!(params.uri, "file:///project/src/main.rs");
    }

    #[test]
    fn list_changed_params_absent_or_with_meta() {
        let absent: <ToolListChanged as Notification>::Params =
            serde_json::from_value(Value::Null).unwrap();
        assert_eq!(absent, None);
        let with_meta: <RootsListChanged as Notification>::Params =
            round_trip(json!({ "_meta": { "a": 1 } }));
        assert!(with_meta.and_then(|p| p.meta).is_some());
    }
}
