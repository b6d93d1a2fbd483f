//! Server logging: `logging/setLevel` and `notifications/message`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{EmptyResult, Notification, Request};

/// Syslog severity (RFC 5424), from least (`Debug`) to most (`Emergency`) severe.
///
/// The order of the variants is the severity order, so `level >= LoggingLevel::Warning` works.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum LoggingLevel {
    /// Detailed debugging information.
    Debug,
    /// Normal operational messages.
    Info,
    /// Normal but significant events.
    Notice,
    /// Warning conditions.
    Warning,
    /// Error conditions.
    Error,
    /// Critical conditions.
    Critical,
    /// Action must be taken immediately.
    Alert,
    /// The system is unusable.
    Emergency,
}

/// The `params` of `logging/setLevel`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SetLevelParams {
    /// The lowest level the server should send.
    pub level: LoggingLevel,
    /// Request metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl SetLevelParams {
    /// Params setting `level`.
    pub fn new(level: LoggingLevel) -> Self {
        Self {
            level,
            meta: None,
            extra: Map::new(),
        }
    }
}

/// The `params` of `notifications/message`: one log entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LoggingMessageParams {
    /// Severity.
    pub level: LoggingLevel,
    /// The logger's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logger: Option<String>,
    /// The entry: a string or any JSON value.
    pub data: Value,
    /// Notification metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `logging/setLevel`: choose the lowest level the server sends (up to 2025-11-25).
#[non_exhaustive]
pub enum SetLevel {}

impl Request for SetLevel {
    const METHOD: &'static str = "logging/setLevel";
    type Params = SetLevelParams;
    type Result = EmptyResult;
}

/// `notifications/message`: a log entry from the server.
#[non_exhaustive]
pub enum LoggingMessage {}

impl Notification for LoggingMessage {
    const METHOD: &'static str = "notifications/message";
    type Params = LoggingMessageParams;
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::types::tests::round_trip;

    #[test]
    fn levels_are_lowercase_and_ordered() {
        let levels: Vec<LoggingLevel> = round_trip(json!([
            "debug",
            "info",
            "notice",
            "warning",
            "error",
            "critical",
            "alert",
            "emergency"
        ]));
        assert!(levels.windows(2).all(|w| w[0] < w[1]));
        assert!(serde_json::from_value::<LoggingLevel>(json!("Warning")).is_err());
    }

    #[test]
    fn set_level_round_trip() {
        let params: SetLevelParams = round_trip(json!({ "level": "warning" }));
        assert_eq!(params, SetLevelParams::new(LoggingLevel::Warning));
    }

    #[test]
    fn logging_message_round_trip() {
        let params: LoggingMessageParams = round_trip(json!({
            "level": "error",
            "logger": "database",
            "data": { "error": "Connection failed", "details": { "host": "localhost", "port": 5432 } }
        }));
        assert_eq!(params.level, LoggingLevel::Error);
        assert_eq!(params.logger.as_deref(), Some("database"));
        assert_eq!(params.data["details"]["port"], json!(5432));
        let plain: LoggingMessageParams = round_trip(json!({ "level": "info", "data": "started" }));
        assert_eq!(plain.data, json!("started"));
        assert!(
            serde_json::from_value::<LoggingMessageParams>(json!({ "level": "info" })).is_err()
        );
    }
}
