//! Shared test helpers and the cross-module checks against the official schema.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Deserializes `json` as `T`, serializes it back and asserts that nothing changed
/// (unknown fields kept, no `null` added). Returns the typed value for field checks.
#[track_caller]
pub(super) fn round_trip<T: Serialize + DeserializeOwned>(json: Value) -> T {
    let typed: T = serde_json::from_value(json.clone()).expect("sample deserializes");
    let back = serde_json::to_value(&typed).expect("value serializes");
    assert_eq!(back, json, "round trip changed the value");
    typed
}
