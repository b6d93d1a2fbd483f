//! Server log notifications (`notifications/message`) as stderr lines.

use mcp_proto::types::LoggingMessageParams;
use serde_json::Value;

/// `[warning] logger: message` (no logger: `[warning] message`).
///
/// String data is shown as is; any other JSON value compactly. The level is the wire name.
pub fn log_line(params: &LoggingMessageParams) -> String {
    let level = serde_json::to_value(params.level)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| "log".to_owned());
    let data = match &params.data {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    match params.logger.as_deref().filter(|l| !l.is_empty()) {
        Some(logger) => format!("[{level}] {logger}: {data}"),
        None => format!("[{level}] {data}"),
    }
}
