//! Types of revision 2026-07-28 that the earlier revisions lack: `server/discover`, the
//! envelope keys, `resultType`, multi-round results, cache hints, `subscriptions/listen`.
//!
//! The methods shared with earlier revisions (`tools/call`, `resources/read`, ...) keep their
//! types; the 2026 results add `resultType`, `ttlMs` and `cacheScope`, which those types keep
//! in `extra` (read them with [`CacheHints`] and [`ResultType`]).

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::{Implementation, Request, ServerCapabilities};

/// `_meta` key of the protocol version, required on every 2026 request.
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key of the client capabilities, required on every 2026 request.
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key of the client info, sent on every 2026 request.
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key of the log level (deprecated); absent means no log messages for the request.
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key of the server info in results.
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// `_meta` key naming the listen request a notification belongs to.
pub const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
/// The extension name of tasks in 2026-07-28 (`capabilities.extensions`).
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// Error code: an HTTP header does not match the body (-32020).
pub const HEADER_MISMATCH: i64 = -32020;
/// Error code: the request needs a client capability that was not declared (-32021).
pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
/// Error code: the envelope's protocol version is not supported (-32022).
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// Whether an error code is one of the 2026-07-28 errors: an answer carrying one comes from a
/// modern server (era evidence), whatever its message.
#[must_use]
pub fn is_modern_error_code(code: i64) -> bool {
    matches!(
        code,
        HEADER_MISMATCH | MISSING_REQUIRED_CLIENT_CAPABILITY | UNSUPPORTED_PROTOCOL_VERSION
    )
}

/// `server/discover`.
#[derive(Debug, Clone, Copy)]
pub enum Discover {}

impl Request for Discover {
    const METHOD: &'static str = "server/discover";
    type Params = Option<Map<String, Value>>;
    type Result = DiscoverResult;
}

/// The answer to `server/discover`. `supportedVersions` and `capabilities` are required: an
/// answer without them (`{}`, which some legacy servers send) is not a `DiscoverResult`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoverResult {
    /// The protocol versions the server speaks.
    pub supported_versions: Vec<String>,
    /// What the server offers.
    pub capabilities: ServerCapabilities,
    /// How to use the server, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// `"complete"` (absent is read as complete).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<String>,
    /// Cache lifetime in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<i64>,
    /// `"public"` or `"private"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<String>,
    /// Result metadata (`io.modelcontextprotocol/serverInfo`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl DiscoverResult {
    /// The server's `io.modelcontextprotocol/serverInfo`, when present and well formed.
    #[must_use]
    pub fn server_info(&self) -> Option<Implementation> {
        let v = self.meta.as_ref()?.get(META_SERVER_INFO)?;
        serde_json::from_value(v.clone()).ok()
    }
}

/// What a 2026 result is, from its `resultType`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResultType {
    /// `"complete"`, or absent (a legacy server): the result is final.
    Complete,
    /// `"input_required"`: the server needs answers before it can finish (multi-round).
    InputRequired,
    /// `"task"`: the tasks extension made it a task (only valid when negotiated).
    Task,
    /// Any other value: invalid unless an extension the client negotiated defines it.
    Unknown(String),
}

impl ResultType {
    /// Reads `resultType` from a raw result without decoding the rest of it. A result that is
    /// not an object, or whose `resultType` is not a string, is `Unknown`.
    #[must_use]
    pub fn of(raw: &RawValue) -> Self {
        #[derive(Deserialize)]
        struct Peek<'a> {
            #[serde(rename = "resultType", borrow, default)]
            result_type: Option<std::borrow::Cow<'a, str>>,
        }
        match serde_json::from_str::<Peek<'_>>(raw.get()) {
            Ok(Peek { result_type: None }) => ResultType::Complete,
            Ok(Peek {
                result_type: Some(t),
            }) => match &*t {
                "complete" => ResultType::Complete,
                "input_required" => ResultType::InputRequired,
                "task" => ResultType::Task,
                other => ResultType::Unknown(other.to_owned()),
            },
            Err(_) => ResultType::Unknown("(not an object)".to_owned()),
        }
    }
}

/// One request the server needs answered, inside `inputRequests`: a JSON-RPC request without
/// `jsonrpc` and `id`.
#[derive(Debug, Deserialize)]
pub struct InputRequest {
    /// `elicitation/create`, `sampling/createMessage` or `roots/list`.
    pub method: String,
    /// Its params, raw.
    #[serde(default)]
    pub params: Option<Box<RawValue>>,
}

/// `InputRequiredResult`: the server needs input (or asks to be called again). At least one
/// of the two fields is present.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputRequiredResult {
    /// Requests to answer, by a key the server chose; the answers go back in
    /// `inputResponses` under the same keys.
    #[serde(default, deserialize_with = "ordered_map")]
    pub input_requests: Option<Vec<(String, InputRequest)>>,
    /// Opaque state to echo byte for byte on the retry.
    #[serde(default)]
    pub request_state: Option<Box<RawValue>>,
}

/// A JSON object as its members in order (the retry answers keys in the server's order).
pub(crate) fn ordered_map<'de, D, T>(d: D) -> Result<Option<Vec<(String, T)>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    struct V<T>(std::marker::PhantomData<T>);
    impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for V<T> {
        type Value = Option<Vec<(String, T)>>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a JSON object or null")
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_none<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(
            self,
            mut map: A,
        ) -> Result<Self::Value, A::Error> {
            let mut out = Vec::new();
            while let Some(entry) = map.next_entry::<String, T>()? {
                out.push(entry);
            }
            Ok(Some(out))
        }
    }
    d.deserialize_any(V(std::marker::PhantomData))
}

/// The cache hints of a 2026 cacheable result (`ttlMs`, `cacheScope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CacheHints {
    /// The lifetime; an absent or negative `ttlMs` is zero (not cacheable).
    pub ttl_ms: u64,
    /// Whether `cacheScope` is `"private"` (absent or unknown values count as private: the
    /// safer reading).
    pub private: bool,
}

impl CacheHints {
    /// Reads the hints from a raw result without decoding the rest of it.
    #[must_use]
    pub fn of(raw: &RawValue) -> Self {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Peek<'a> {
            #[serde(default)]
            ttl_ms: Option<Value>,
            #[serde(default, borrow)]
            cache_scope: Option<std::borrow::Cow<'a, str>>,
        }
        let Ok(p) = serde_json::from_str::<Peek<'_>>(raw.get()) else {
            return CacheHints::default();
        };
        let ttl_ms = p
            .ttl_ms
            .and_then(|v| {
                v.as_u64()
                    .or_else(|| v.as_f64().filter(|f| *f > 0.0).map(|f| f as u64))
            })
            .unwrap_or(0);
        CacheHints {
            ttl_ms,
            private: p.cache_scope.as_deref() != Some("public"),
        }
    }
}

/// `subscriptions/listen`.
#[derive(Debug, Clone, Copy)]
pub enum SubscriptionsListen {}

impl Request for SubscriptionsListen {
    const METHOD: &'static str = "subscriptions/listen";
    type Params = SubscriptionsListenParams;
    type Result = Map<String, Value>;
}

/// The `params` of `subscriptions/listen` (the session adds `_meta`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionsListenParams {
    /// What to listen for.
    pub notifications: ListenFilter,
}

/// Which notifications a listen asks for (and, in the acknowledgement, which it got).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListenFilter {
    /// `notifications/tools/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_list_changed: Option<bool>,
    /// `notifications/prompts/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts_list_changed: Option<bool>,
    /// `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources_list_changed: Option<bool>,
    /// `notifications/resources/updated` for these URIs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_subscriptions: Option<Vec<String>>,
}

#[cfg(test)]
mod tests;
