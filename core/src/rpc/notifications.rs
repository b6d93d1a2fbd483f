//! The params of the two notifications both sides read for themselves: progress and
//! cancellation. Parsed from the borrowed params, with no copy of them.

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::jsonrpc::Id;

/// `notifications/progress`. Read in the decoder's pass where the message is written plainly
/// (see `jsonrpc::compact::progress`).
#[derive(Deserialize)]
#[cfg_attr(test, derive(Debug, PartialEq))]
#[serde(rename_all = "camelCase")]
pub(crate) struct ProgressParams {
    pub(crate) progress_token: Id,
    pub(crate) progress: f64,
    #[serde(default)]
    pub(crate) total: Option<f64>,
    #[serde(default)]
    pub(crate) message: Option<String>,
}

/// `notifications/cancelled`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CancelledParams {
    pub(crate) request_id: Id,
    #[serde(default)]
    pub(crate) reason: Option<String>,
}

/// Reads `params` (absent counts as `null`) as `T`; the error is the parser's message, for a
/// diagnostic.
pub(crate) fn parse<T: for<'de> Deserialize<'de>>(params: Option<&RawValue>) -> Result<T, String> {
    let raw = params.map_or("null", RawValue::get);
    serde_json::from_str(raw).map_err(|e| e.to_string())
}
