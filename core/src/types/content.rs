//! Content blocks, annotations, icons and roles.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// An icon for display (2025-11-25 and later).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Icon {
    /// A URI to the icon: `https:` or a `data:` URI.
    pub src: String,
    /// MIME type, if the `src` does not make it clear.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Sizes such as `"48x48"` or `"any"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sizes: Option<Vec<String>>,
    /// The theme this icon is meant for: `"light"` or `"dark"`; other values are kept as is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub theme: Option<String>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}
