//! JSON-RPC 2.0 envelopes: ids, error objects, message classification, encoding.
//!
//! Decoding parses the envelope once. `params` and `result` stay raw JSON ([`RawJson`]:
//! located, not validated) until the caller reads them as its own type, which validates them
//! in the same pass; nothing goes through `serde_json::Value`. Encoding appends compact JSON to a caller-owned `Vec<u8>`.
//!
//! The envelope is one struct with optional fields, classified by hand, because `RawValue`
//! does not work inside `#[serde(flatten)]` or untagged enums.

use std::borrow::Cow;
use std::fmt;

use serde::de::Deserializer;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

mod compact;
mod members;
mod raw_json;

pub use members::{member, with_member, with_member_at, without_member};
pub use raw_json::RawJson;

/// A JSON-RPC request id: an integer or a string (never `null` for a request).
///
/// Ids of requests the peer sends are kept as received and echoed verbatim in the response.
/// Ids the client allocates are integers from a counter.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(untagged)]
pub enum Id {
    /// A numeric id. Kept as a [`serde_json::Number`] so a peer's id is echoed exactly.
    Number(serde_json::Number),
    /// A string id.
    String(String),
}

impl Id {
    /// The id as an unsigned integer, when it is one (the shape of every id this client sends).
    #[must_use]
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Id::Number(n) => n.as_u64(),
            Id::String(_) => None,
        }
    }
}

// By hand rather than `#[serde(untagged)]`: untagged enums buffer the value into serde's
// internal `Content` first, which made the id the costliest member of a small envelope.
impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct IdVisitor;
        impl serde::de::Visitor<'_> for IdVisitor {
            type Value = Id;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON-RPC id (a number or a string)")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Id, E> {
                Ok(Id::Number(v.into()))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Id, E> {
                Ok(Id::Number(v.into()))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Id, E> {
                serde_json::Number::from_f64(v)
                    .map(Id::Number)
                    .ok_or_else(|| E::custom("a JSON-RPC id must be a finite number"))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Id, E> {
                Ok(Id::String(v.to_owned()))
            }
            fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Id, E> {
                Ok(Id::String(v))
            }
        }
        d.deserialize_any(IdVisitor)
    }
}

impl From<u64> for Id {
    fn from(n: u64) -> Self {
        Id::Number(n.into())
    }
}

impl From<&str> for Id {
    fn from(s: &str) -> Self {
        Id::String(s.to_owned())
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Id::Number(n) => write!(f, "{n}"),
            Id::String(s) => write!(f, "{s:?}"),
        }
    }
}

/// A JSON-RPC error object: `{code, message, data?}`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The error code. Only codes the specifications name carry meaning across servers.
    pub code: i64,
    /// A short description from the peer.
    pub message: String,
    /// Optional structured detail, kept raw.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Box<RawValue>>,
}

impl PartialEq for ErrorObject {
    fn eq(&self, other: &Self) -> bool {
        self.code == other.code
            && self.message == other.message
            && self.data.as_ref().map(|d| d.get()) == other.data.as_ref().map(|d| d.get())
    }
}

impl ErrorObject {
    /// Invalid JSON was received.
    pub const PARSE_ERROR: i64 = -32700;
    /// The JSON sent is not a valid request object.
    pub const INVALID_REQUEST: i64 = -32600;
    /// The method does not exist or is not available.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Invalid method parameters.
    pub const INVALID_PARAMS: i64 = -32602;
    /// Internal JSON-RPC error.
    pub const INTERNAL_ERROR: i64 = -32603;
    /// MCP: the requested resource does not exist (2024-11-05 to 2025-11-25).
    pub const RESOURCE_NOT_FOUND: i64 = -32002;
    /// MCP 2025-11-25: the request needs a URL-mode elicitation first.
    pub const URL_ELICITATION_REQUIRED: i64 = -32042;

    /// An error object without data.
    #[must_use]
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        ErrorObject {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// `-32601 Method not found`, naming the method.
    #[must_use]
    pub fn method_not_found(method: &str) -> Self {
        ErrorObject::new(
            Self::METHOD_NOT_FOUND,
            format!("Method not found: {method}"),
        )
    }
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MCP error {}: {}", self.code, self.message)
    }
}

/// One decoded JSON-RPC message.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Message {
    /// A request: it must be answered with the same id.
    Request {
        /// The peer's id, echoed verbatim in the response.
        id: Id,
        /// The method name.
        method: String,
        /// The raw params, if present.
        params: Option<Box<RawValue>>,
    },
    /// A notification: no id, never answered.
    Notification {
        /// The method name.
        method: String,
        /// The raw params, if present.
        params: Option<Box<RawValue>>,
    },
    /// A successful response.
    Response {
        /// The id of the request it answers.
        id: Id,
        /// The raw result.
        result: Box<RawValue>,
    },
    /// An error response. The id is `None` when the peer could not read the request's id
    /// (`"id": null` or no id at all).
    Error {
        /// The id of the request it answers, if known.
        id: Option<Id>,
        /// The error.
        error: ErrorObject,
    },
}

/// One decoded JSON-RPC message borrowing from the input, as [`decode`] returns it: payloads
/// are [`RawJson`] slices of the input, located but not validated (reading one as a type
/// validates it); the method is borrowed unless it held JSON escapes.
/// [`into_owned`](Self::into_owned) checks the payloads and gives the [`Message`] that
/// outlives the input.
///
/// Equality compares ids, methods, error objects and the payloads' JSON text.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum MessageRef<'a> {
    /// A request: it must be answered with the same id.
    Request {
        /// The peer's id, echoed verbatim in the response.
        id: Id,
        /// The method name.
        method: Cow<'a, str>,
        /// The params, if present (located, not validated).
        params: Option<RawJson<'a>>,
    },
    /// A notification: no id, never answered.
    Notification {
        /// The method name.
        method: Cow<'a, str>,
        /// The params, if present (located, not validated).
        params: Option<RawJson<'a>>,
    },
    /// A successful response.
    Response {
        /// The id of the request it answers.
        id: Id,
        /// The result (located, not validated).
        result: RawJson<'a>,
    },
    /// An error response (`id` is `None` when the peer could not read the request's id).
    Error {
        /// The id of the request it answers, if known.
        id: Option<Id>,
        /// The error.
        error: ErrorObject,
    },
}

impl PartialEq for MessageRef<'_> {
    fn eq(&self, other: &Self) -> bool {
        fn text<'r>(raw: &Option<RawJson<'r>>) -> Option<&'r str> {
            raw.map(RawJson::get)
        }
        match (self, other) {
            (
                MessageRef::Request { id, method, params },
                MessageRef::Request {
                    id: id2,
                    method: method2,
                    params: params2,
                },
            ) => id == id2 && method == method2 && text(params) == text(params2),
            (
                MessageRef::Notification { method, params },
                MessageRef::Notification {
                    method: method2,
                    params: params2,
                },
            ) => method == method2 && text(params) == text(params2),
            (
                MessageRef::Response { id, result },
                MessageRef::Response {
                    id: id2,
                    result: result2,
                },
            ) => id == id2 && result.get() == result2.get(),
            (
                MessageRef::Error { id, error },
                MessageRef::Error {
                    id: id2,
                    error: error2,
                },
            ) => id == id2 && error == error2,
            _ => false,
        }
    }
}

impl MessageRef<'_> {
    /// Checks the payloads and copies what the message borrows.
    ///
    /// # Errors
    ///
    /// A payload is not valid JSON (see [`RawJson::check`]): the input was not a message.
    /// [`decode_owned`] turns that into the [`DecodeError`] the input deserves.
    pub fn into_owned(self) -> Result<Message, serde_json::Error> {
        let checked = |raw: Option<RawJson<'_>>| -> serde_json::Result<Option<Box<RawValue>>> {
            raw.map(|r| r.check().map(RawValue::to_owned)).transpose()
        };
        Ok(match self {
            MessageRef::Request { id, method, params } => Message::Request {
                id,
                method: method.into_owned(),
                params: checked(params)?,
            },
            MessageRef::Notification { method, params } => Message::Notification {
                method: method.into_owned(),
                params: checked(params)?,
            },
            MessageRef::Response { id, result } => Message::Response {
                id,
                result: result.check()?.to_owned(),
            },
            MessageRef::Error { id, error } => Message::Error { id, error },
        })
    }
}

/// What [`decode`] returns: one message or a batch, borrowing from the input (see
/// [`MessageRef`]).
#[derive(Debug, PartialEq)]
#[non_exhaustive]
pub enum DecodedRef<'a> {
    /// One message.
    Single(MessageRef<'a>),
    /// A JSON array of messages, each decoded on its own.
    Batch(Vec<Result<MessageRef<'a>, DecodeError>>),
}

/// One framed input's messages, owned ([`decode_owned`]): a single message or a batch.
#[derive(Debug)]
#[non_exhaustive]
pub enum Decoded {
    /// One message.
    Single(Message),
    /// A JSON array of messages (accepted on input; never sent). Each element is decoded on
    /// its own, so one bad element does not lose the others.
    Batch(Vec<Result<Message, DecodeError>>),
}

/// Why some bytes are not a JSON-RPC message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// Not JSON at all (a server's banner line, for instance).
    #[error("not JSON ({detail}): {excerpt}")]
    NotJson {
        /// The parser's message.
        detail: String,
        /// The start of the input, for diagnostics.
        excerpt: String,
    },
    /// JSON, but not a JSON-RPC message.
    #[error("not a JSON-RPC message ({detail}): {excerpt}")]
    NotJsonRpc {
        /// What is wrong with it.
        detail: String,
        /// The start of the input, for diagnostics.
        excerpt: String,
    },
}

/// The longest excerpt of peer input kept in a diagnostic.
pub const EXCERPT_LEN: usize = 200;

/// The start of `bytes` as lossy UTF-8, at most [`EXCERPT_LEN`] bytes (cut at a char boundary).
#[must_use]
pub fn excerpt(bytes: &[u8]) -> String {
    let cut = &bytes[..bytes.len().min(EXCERPT_LEN)];
    let mut s = String::from_utf8_lossy(cut).into_owned();
    if bytes.len() > EXCERPT_LEN {
        // A cut in the middle of a multi-byte char shows up as a replacement char; fine.
        s.push('…');
    }
    s
}

// The envelope: every member optional, classified by `classify`.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(default, borrow, deserialize_with = "borrowed_str")]
    jsonrpc: Option<Cow<'a, str>>,
    // Outer `None`: no `id` member; `Some(None)`: `"id": null`.
    #[serde(default, deserialize_with = "present")]
    id: Option<Option<Id>>,
    #[serde(default, borrow, deserialize_with = "borrowed_str")]
    method: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "present_raw")]
    params: Option<RawJson<'a>>,
    #[serde(default, borrow, deserialize_with = "present_raw")]
    result: Option<RawJson<'a>>,
    #[serde(default, deserialize_with = "present")]
    error: Option<Option<ErrorObject>>,
}

/// A string member borrowed from the input when it has no escapes. (`#[serde(borrow)]` borrows
/// a `Cow<str>` field, but not one inside an `Option`: that one was always copied.)
fn borrowed_str<'de, D>(d: D) -> Result<Option<Cow<'de, str>>, D::Error>
where
    D: Deserializer<'de>,
{
    #[derive(Deserialize)]
    struct Borrowed<'a>(#[serde(borrow)] Cow<'a, str>);
    Ok(Option::<Borrowed<'de>>::deserialize(d)?.map(|b| b.0))
}

fn present<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

// Keeps a member that is present, even when it is `null`, as raw JSON.
fn present_raw<'de, D>(d: D) -> Result<Option<RawJson<'de>>, D::Error>
where
    D: Deserializer<'de>,
{
    <&'de RawValue>::deserialize(d).map(|raw| Some(RawJson::from(raw)))
}

/// One framed input for [`decode`]: bytes (an HTTP body), or text already checked to be
/// UTF-8 (a stdio line, an SSE event's data), which is then not checked again.
#[derive(Clone, Copy, Debug)]
pub enum Input<'a> {
    /// Bytes not yet known to be UTF-8.
    Bytes(&'a [u8]),
    /// Text (UTF-8 by construction).
    Text(&'a str),
}

impl<'a> From<&'a [u8]> for Input<'a> {
    fn from(bytes: &'a [u8]) -> Self {
        Input::Bytes(bytes)
    }
}

impl<'a, const N: usize> From<&'a [u8; N]> for Input<'a> {
    fn from(bytes: &'a [u8; N]) -> Self {
        Input::Bytes(bytes)
    }
}

impl<'a> From<&'a str> for Input<'a> {
    fn from(text: &'a str) -> Self {
        Input::Text(text)
    }
}

impl<'a> Input<'a> {
    /// The input's bytes.
    pub(crate) fn bytes(self) -> &'a [u8] {
        match self {
            Input::Bytes(b) => b,
            Input::Text(t) => t.as_bytes(),
        }
    }

    fn parse<T: Deserialize<'a>>(self) -> serde_json::Result<T> {
        match self {
            Input::Bytes(b) => serde_json::from_slice(b),
            // `from_str` trusts the UTF-8 it is given: strings and raw values are not re-checked.
            Input::Text(t) => serde_json::from_str(t),
        }
    }
}

/// Decodes one framed input (a line, an SSE event's data, an HTTP JSON body): the one way
/// peer input becomes messages.
///
/// The messages borrow their payloads from the input as [`RawJson`]: **located, not
/// validated**. A plainly written message (compact or spaced: see `jsonrpc::compact`) is
/// read by a shortcut that finds its payloads by a string-aware scan and leaves their
/// validation to whoever reads them (reading one as a type validates it in the same pass);
/// any other input (another member, an escape in a name, an error response) is read by
/// serde's parse, whose payloads are valid already. Either way the result never depends on
/// how the peer spaced or ordered its members: once each payload passes
/// [`RawJson::check`], the message is exactly what serde's parse of the whole input gives,
/// and a payload that fails its check marks an input serde's parse refuses. A caller that
/// keeps or forwards a payload unread checks it first ([`MessageRef::into_owned`] does;
/// [`decode_owned`] turns a failed check into the [`DecodeError`] serde's parse gives). A
/// JSON array is a batch whose elements are decoded one by one (the batch is validated
/// whole, so its elements' payloads are valid). Never panics.
///
/// Nesting: neither decoder limits how deeply a payload nests (serde's parse skips a raw
/// value, and the scan locates one, without a stack), so both give the same message at any
/// depth. A typed read of a payload ([`RawJson::decode`]) counts `serde_json`'s limit of 128
/// levels from the payload itself, whichever decoder located it: a payload nested 127 deep
/// reads, one nested 128 deep fails that read.
///
/// # Errors
///
/// [`DecodeError::NotJson`] for input that is not JSON, [`DecodeError::NotJsonRpc`] for JSON
/// that is not a JSON-RPC message (an empty batch included).
pub fn decode<'a>(input: impl Into<Input<'a>>) -> Result<DecodedRef<'a>, DecodeError> {
    decode_input(input.into(), decode_one_input)
}

/// [`decode`], with every payload checked and copied: for a caller that keeps the messages
/// (a server loop that hands them to another thread, say). A payload that fails its check
/// gives the error serde's parse of the input gives.
///
/// # Errors
///
/// As [`decode`], for input that is not a JSON-RPC message (a payload that is not valid
/// JSON included).
pub fn decode_owned<'a>(input: impl Into<Input<'a>>) -> Result<Decoded, DecodeError> {
    let input = input.into();
    let owned = match decode(input)? {
        DecodedRef::Single(m) => m.into_owned().map(Decoded::Single),
        // The batch was validated whole: its elements' payloads check.
        DecodedRef::Batch(items) => items
            .into_iter()
            .map(|item| match item {
                Ok(m) => m.into_owned().map(Ok),
                Err(e) => Ok(Err(e)),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Decoded::Batch),
    };
    match owned {
        Ok(decoded) => Ok(decoded),
        // A located payload that is not JSON: serde's parse says why the input is refused.
        Err(_) => match decode_general(input) {
            Err(e) => Err(e),
            Ok(general) => general_owned(general),
        },
    }
}

/// The owned form of what serde's parse decoded (its payloads are valid already).
fn general_owned(decoded: DecodedRef<'_>) -> Result<Decoded, DecodeError> {
    let invalid = |e: serde_json::Error| DecodeError::NotJson {
        detail: e.to_string(),
        excerpt: String::new(),
    };
    Ok(match decoded {
        DecodedRef::Single(m) => Decoded::Single(m.into_owned().map_err(invalid)?),
        DecodedRef::Batch(items) => Decoded::Batch(
            items
                .into_iter()
                .map(|item| item.and_then(|m| m.into_owned().map_err(invalid)))
                .collect(),
        ),
    })
}

/// [`decode`] without the compact shortcut: serde's parse of the whole input, the reference
/// the shortcut is held equal to, and what the session asks when a located payload fails its
/// check (so that the input is refused with serde's own diagnostic).
pub(crate) fn decode_general<'a>(
    input: impl Into<Input<'a>>,
) -> Result<DecodedRef<'a>, DecodeError> {
    decode_input(input.into(), decode_one_general)
}

/// Params that [`decode_reading_into`] may read as their type in the pass that locates them: the
/// params of notifications of [`METHOD`](Self::METHOD).
pub(crate) trait ReadInPass: serde::de::DeserializeOwned {
    /// The method whose params are read: a name JSON writes without escapes.
    const METHOD: &'static str;

    /// The value that opens `input` at `at` read by hand when it is written compactly in the
    /// one form this reader knows, and its length; `None`, having decided nothing, for
    /// anything else (serde's typed parse then reads it). Where it returns a value, the
    /// extent is valid JSON and serde's parse of it gives an equal value (the differential
    /// test of the implementation holds this).
    fn read_compact(_input: Input<'_>, _at: usize) -> Option<(Self, usize)> {
        None
    }
}

/// [`decode`], and, for a plainly written (compact or spaced) notification of `P::METHOD`,
/// its params already read as `P` (see `jsonrpc::compact::envelope_reading`): for the
/// session, which would read them as `P` next. The message is exactly [`decode`]'s for any
/// input; a `P` comes only with a [`MessageRef::Notification`] of that method whose params it
/// is, equal to what `params.decode::<P>()` gives. Without one (another message, one the walk
/// leaves to serde's parse, params that are not a `P`), the caller reads the message as
/// [`decode`]'s.
///
/// # Errors
///
/// As [`decode`].
#[cfg(test)]
pub(crate) fn decode_reading<P: ReadInPass>(
    input: Input<'_>,
) -> (Result<DecodedRef<'_>, DecodeError>, Option<P>) {
    let mut read = None;
    let decoded = decode_reading_into(input, &mut read);
    (decoded, read)
}

/// `decode_reading`, with the params read put in `read` (`None` without them): the form the
/// sessions call, which moves the read params once rather than with the message.
///
/// # Errors
///
/// As [`decode`].
// Inlined into the routing: the message is built in place rather than moved.
#[inline(always)]
pub(crate) fn decode_reading_into<'a, P: ReadInPass>(
    input: Input<'a>,
    read: &mut Option<P>,
) -> Result<DecodedRef<'a>, DecodeError> {
    match compact::envelope_reading::<P>(input, Some(P::METHOD), read) {
        Some(env) => match classify(env) {
            Ok(msg) => {
                // An `id` or another method after the params made it something else.
                if !matches!(msg, MessageRef::Notification { .. }) {
                    *read = None;
                }
                Ok(DecodedRef::Single(msg))
            }
            // Not a message: serde's parse says why, as in `decode_one_input`.
            Err(_) => {
                *read = None;
                decode_one_general(input).map(DecodedRef::Single)
            }
        },
        None => {
            // The walk may have read params before it refused the input.
            *read = None;
            if is_batch(input.bytes()) {
                // A batch's elements each as `decode` reads them.
                decode_input(input, decode_one_input)
            } else {
                // A single message by serde's parse (the shortcut refused it already).
                decode_one_general(input).map(DecodedRef::Single)
            }
        }
    }
}

/// One message (or batch element): the compact shortcut when it applies, else the general
/// parse. Both classify with the same rules ([`classify`]).
fn decode_one_input(input: Input<'_>) -> Result<MessageRef<'_>, DecodeError> {
    match compact::envelope(input).map(classify) {
        Some(Ok(msg)) => Ok(msg),
        // Not a message: serde's parse says why (a located payload that is not JSON makes
        // the input not JSON at all, which comes before its shape).
        Some(Err(_)) | None => decode_one_general(input),
    }
}

fn not_json_rpc(detail: &str, bytes: &[u8]) -> DecodeError {
    DecodeError::NotJsonRpc {
        detail: detail.into(),
        excerpt: excerpt(bytes),
    }
}

/// Whether the input is a JSON array (a batch): its first byte that is not whitespace is `[`.
fn is_batch(bytes: &[u8]) -> bool {
    bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[')
}

fn decode_input(
    input: Input<'_>,
    decode_one: fn(Input<'_>) -> Result<MessageRef<'_>, DecodeError>,
) -> Result<DecodedRef<'_>, DecodeError> {
    let bytes = input.bytes();
    if is_batch(bytes) {
        let items: Vec<&RawValue> = input.parse().map_err(|e| DecodeError::NotJson {
            detail: e.to_string(),
            excerpt: excerpt(bytes),
        })?;
        if items.is_empty() {
            return Err(DecodeError::NotJsonRpc {
                detail: "empty batch".into(),
                excerpt: excerpt(bytes),
            });
        }
        return Ok(DecodedRef::Batch(
            items
                .into_iter()
                .map(|raw| decode_one(Input::Text(raw.get())))
                .collect(),
        ));
    }
    decode_one(input).map(DecodedRef::Single)
}

/// One message through serde's derived envelope parse.
fn decode_one_general(input: Input<'_>) -> Result<MessageRef<'_>, DecodeError> {
    let env: Envelope<'_> = match input.parse() {
        Ok(env) => env,
        Err(e) => {
            let bytes = input.bytes();
            // Valid JSON of the wrong shape is a different diagnostic from a banner line.
            let kind_is_json = serde_json::from_slice::<serde::de::IgnoredAny>(bytes).is_ok();
            let detail = e.to_string();
            let excerpt = excerpt(bytes);
            return Err(if kind_is_json {
                DecodeError::NotJsonRpc { detail, excerpt }
            } else {
                DecodeError::NotJson { detail, excerpt }
            });
        }
    };
    classify(env).map_err(|detail| not_json_rpc(detail, input.bytes()))
}

// Inlined into both decoders: the message is built in place rather than moved.
#[inline(always)]
fn classify(env: Envelope<'_>) -> Result<MessageRef<'_>, &'static str> {
    if let Some(v) = &env.jsonrpc {
        // Lenient on absence, strict on a wrong value: another protocol is not ours.
        if v != "2.0" {
            return Err("jsonrpc is not \"2.0\"");
        }
    }
    let params = env.params;
    if let Some(method) = env.method {
        return match env.id {
            None => Ok(MessageRef::Notification { method, params }),
            Some(Some(id)) => Ok(MessageRef::Request { id, method, params }),
            Some(None) => Err("request with a null id"),
        };
    }
    if let Some(error) = env.error {
        let error = error.ok_or("error member is null")?;
        return Ok(MessageRef::Error {
            id: env.id.flatten(),
            error,
        });
    }
    match (env.id, env.result) {
        (Some(Some(id)), Some(result)) => Ok(MessageRef::Response { id, result }),
        (_, Some(_)) => Err("response without an id"),
        _ => Err("neither a request, a notification nor a response"),
    }
}

/// Appends a compact JSON-RPC request to `out`.
pub fn encode_request(out: &mut Vec<u8>, id: &Id, method: &str, params: Option<&RawValue>) {
    encode_request_text(out, id, method, params.map(RawValue::get));
}

/// [`encode_request`] with params as JSON text the caller knows to be one JSON value (a
/// [`RawParams`](crate::session::RawParams)'s, say).
pub(crate) fn encode_request_text(out: &mut Vec<u8>, id: &Id, method: &str, params: Option<&str>) {
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    write_json(out, id);
    out.extend_from_slice(br#","method":"#);
    write_json_str(out, method);
    if let Some(p) = params {
        out.extend_from_slice(br#","params":"#);
        out.extend_from_slice(p.as_bytes());
    }
    out.push(b'}');
}

/// Appends a compact JSON-RPC notification to `out`.
pub fn encode_notification(out: &mut Vec<u8>, method: &str, params: Option<&RawValue>) {
    out.extend_from_slice(br#"{"jsonrpc":"2.0","method":"#);
    write_json_str(out, method);
    if let Some(p) = params {
        out.extend_from_slice(br#","params":"#);
        out.extend_from_slice(p.get().as_bytes());
    }
    out.push(b'}');
}

/// Appends a compact JSON-RPC success response to `out`.
pub fn encode_response(out: &mut Vec<u8>, id: &Id, result: &RawValue) {
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    write_json(out, id);
    out.extend_from_slice(br#","result":"#);
    out.extend_from_slice(result.get().as_bytes());
    out.push(b'}');
}

/// Appends a compact JSON-RPC error response to `out` (`"id": null` when `id` is `None`).
pub fn encode_error(out: &mut Vec<u8>, id: Option<&Id>, error: &ErrorObject) {
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    match id {
        Some(id) => write_json(out, id),
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(br#","error":"#);
    write_json(out, error);
    out.push(b'}');
}

/// Whether `serde_json` writes `s` as a JSON string unchanged between its quotes: it escapes
/// only quotes, backslashes and control characters.
fn needs_no_escaping(s: &str) -> bool {
    s.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\')
}

/// Appends `s` as a JSON string. Method names need no escaping; they are copied between
/// quotes instead of going through `serde_json`'s escaper byte by byte.
pub(crate) fn write_json_str(out: &mut Vec<u8>, s: &str) {
    if needs_no_escaping(s) {
        out.reserve(s.len() + 2);
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
    } else {
        write_json(out, s);
    }
}

fn write_json<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    // Invariant: ids, strings and `ErrorObject` (whose `data` is already valid JSON) always
    // serialize, and writing into a `Vec` cannot fail.
    serde_json::to_writer(out, value).expect("serializing a JSON-RPC envelope part cannot fail");
}

/// `{}` as a raw value: the empty result (`ping`, `logging/setLevel`, ...).
#[must_use]
pub fn empty_object() -> Box<RawValue> {
    // Invariant: "{}" is valid JSON.
    RawValue::from_string("{}".to_owned()).expect("\"{}\" is valid JSON")
}

/// Serializes `value` to a raw JSON value (compact).
pub fn to_raw<T: Serialize + ?Sized>(value: &T) -> Result<Box<RawValue>, serde_json::Error> {
    serde_json::value::to_raw_value(value)
}

#[cfg(test)]
mod tests;
