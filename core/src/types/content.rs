//! Content blocks, annotations, icons and roles.

use serde::de::{self, DeserializeOwned};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
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

open_string_enum! {
    /// The sender or recipient of a message or content (`"user"` or `"assistant"`).
    pub enum Role {
        /// The human side of a conversation.
        User = "user",
        /// The model side of a conversation.
        Assistant = "assistant",
    }
}

/// Hints for the client on how to use or display a piece of content.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    /// Who the content is meant for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub audience: Option<Vec<Role>>,
    /// Importance from 0 (optional) to 1 (required); not validated here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priority: Option<f64>,
    /// ISO 8601 time of the last change (2025-06-18 and later), kept as the peer wrote it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Text content (`"type": "text"`).
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TextContent {
    /// The text.
    pub text: String,
    /// Display hints.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Content metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

deserialize_with_extra!(TextContent, "text content",
    required { text: "text" }
    optional { annotations: "annotations", meta: "_meta" });

/// Image or audio content (`"type": "image"` / `"type": "audio"`): base64 data and its MIME type.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MediaContent {
    /// Base64-encoded bytes, not decoded here.
    pub data: String,
    /// MIME type of the decoded bytes (`"image/png"`, `"audio/wav"`).
    pub mime_type: String,
    /// Display hints.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Content metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The schema's `ImageContent`.
pub type ImageContent = MediaContent;
/// The schema's `AudioContent` (2025-03-26 and later).
pub type AudioContent = MediaContent;
/// The schema's `ResourceLink` (2025-06-18 and later): a [`Resource`](super::Resource) inside content.
pub type ResourceLink = super::Resource;

/// A resource embedded in content (`"type": "resource"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EmbeddedResource {
    /// The resource's contents.
    pub resource: ResourceContents,
    /// Display hints.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Content metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A model's request to call a tool, inside sampling (`"type": "tool_use"`, 2025-11-25 and later).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolUseContent {
    /// Identifies this call; the matching `tool_result` carries it as `toolUseId`.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The tool's arguments.
    pub input: Map<String, Value>,
    /// Content metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The result of a tool call, inside sampling (`"type": "tool_result"`, 2025-11-25 and later).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultContent {
    /// The `id` of the `tool_use` this answers.
    pub tool_use_id: String,
    /// Unstructured result.
    pub content: Vec<ContentBlock>,
    /// Structured result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether the call failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Content metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One block of content in a tool result, prompt message or sampling message, tagged by `type`.
///
/// A block whose `type` this crate does not know (or that has no `type`) is kept whole as
/// [`ContentBlock::Unknown`] and re-serialized unchanged, so a newer server never breaks a
/// result. A block with a known `type` but a wrong shape is an error.
///
/// Every kind but text is boxed: a block is moved a few times while a result is decoded,
/// and text, by far the most common kind, then sets its size (168 bytes instead of 304).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ContentBlock {
    /// `"type": "text"`.
    Text(TextContent),
    /// `"type": "image"`.
    Image(Box<ImageContent>),
    /// `"type": "audio"`.
    Audio(Box<AudioContent>),
    /// `"type": "resource_link"`.
    ResourceLink(Box<ResourceLink>),
    /// `"type": "resource"`.
    Resource(Box<EmbeddedResource>),
    /// `"type": "tool_use"` (sampling only).
    ToolUse(Box<ToolUseContent>),
    /// `"type": "tool_result"` (sampling only).
    ToolResult(Box<ToolResultContent>),
    /// Any other block, as received (including its `type`).
    Unknown(Map<String, Value>),
}

impl ContentBlock {
    /// A plain text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text(TextContent {
            text: text.into(),
            ..TextContent::default()
        })
    }

    /// An image block: base64 `data` of the MIME type `mime_type`.
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self::Image(Box::new(MediaContent {
            data: data.into(),
            mime_type: mime_type.into(),
            ..MediaContent::default()
        }))
    }

    /// An audio block: base64 `data` of the MIME type `mime_type`.
    pub fn audio(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self::Audio(Box::new(MediaContent {
            data: data.into(),
            mime_type: mime_type.into(),
            ..MediaContent::default()
        }))
    }

    /// The text of a text block; `None` for every other kind.
    #[must_use]
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Self::Text(t) => Some(&t.text),
            _ => None,
        }
    }

    /// The wire `type` of this block, if it has one.
    pub fn kind(&self) -> Option<&str> {
        Some(match self {
            Self::Text(_) => "text",
            Self::Image(_) => "image",
            Self::Audio(_) => "audio",
            Self::ResourceLink(_) => "resource_link",
            Self::Resource(_) => "resource",
            Self::ToolUse(_) => "tool_use",
            Self::ToolResult(_) => "tool_result",
            Self::Unknown(map) => return map.get("type").and_then(Value::as_str),
        })
    }
}

/// A known block on the wire: its `type` followed by the payload's fields.
#[derive(Serialize)]
struct Tagged<'a, T> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(flatten)]
    inner: &'a T,
}

impl Serialize for ContentBlock {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        fn tagged<S: Serializer, T: Serialize>(
            s: S,
            kind: &'static str,
            inner: &T,
        ) -> Result<S::Ok, S::Error> {
            Tagged { kind, inner }.serialize(s)
        }
        match self {
            Self::Text(c) => tagged(serializer, "text", c),
            Self::Image(c) => tagged(serializer, "image", c),
            Self::Audio(c) => tagged(serializer, "audio", c),
            Self::ResourceLink(c) => tagged(serializer, "resource_link", c),
            Self::Resource(c) => tagged(serializer, "resource", c),
            Self::ToolUse(c) => tagged(serializer, "tool_use", c),
            Self::ToolResult(c) => tagged(serializer, "tool_result", c),
            Self::Unknown(map) => map.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for ContentBlock {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(BlockVisitor)
    }
}

/// Decodes a content block in one pass when `type` is its first member (as every SDK writes
/// it): the rest of the object goes straight into the payload's type. Otherwise the object
/// is collected into a map first and decoded from that. (Always collecting cost a map node,
/// a `String` and a `Value` per member and was most of the cost of a small tool result.)
struct BlockVisitor;

impl<'de> de::Visitor<'de> for BlockVisitor {
    type Value = ContentBlock;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a content block object")
    }

    fn visit_map<A: de::MapAccess<'de>>(self, mut access: A) -> Result<ContentBlock, A::Error> {
        fn rest<'de, T: Deserialize<'de>, A: de::MapAccess<'de>>(
            access: A,
            wrap: fn(T) -> ContentBlock,
        ) -> Result<ContentBlock, A::Error> {
            T::deserialize(de::value::MapAccessDeserializer::new(access)).map(wrap)
        }
        let first = match access.next_key::<BlockKey>()? {
            Some(BlockKey::Type) => match access.next_value::<BlockTag>()? {
                BlockTag::Text => return rest(access, ContentBlock::Text),
                BlockTag::Image => return rest(access, |c| ContentBlock::Image(Box::new(c))),
                BlockTag::Audio => return rest(access, |c| ContentBlock::Audio(Box::new(c))),
                BlockTag::ResourceLink => {
                    return rest(access, |c| ContentBlock::ResourceLink(Box::new(c)));
                }
                BlockTag::Resource => return rest(access, |c| ContentBlock::Resource(Box::new(c))),
                BlockTag::ToolUse => return rest(access, |c| ContentBlock::ToolUse(Box::new(c))),
                BlockTag::ToolResult => {
                    return rest(access, |c| ContentBlock::ToolResult(Box::new(c)));
                }
                BlockTag::Other(value) => Some(("type".to_owned(), value)),
            },
            Some(BlockKey::Other(key)) => Some((key, access.next_value()?)),
            None => None,
        };
        // Made only off the one-pass path: even an empty map costs its drop there.
        let mut map = Map::new();
        map.extend(first);
        while let Some((key, value)) = access.next_entry::<String, Value>()? {
            map.insert(key, value);
        }
        from_map(map)
    }
}

/// Decodes a list of content blocks growing from one element, not serde's four: a block is
/// about 300 bytes, so four are past the allocator's fast path for small sizes, and most
/// lists (a tool's answer, a prompt message) hold one or two.
pub(crate) struct BlockList;

impl<'de> de::DeserializeSeed<'de> for BlockList {
    type Value = Vec<ContentBlock>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> de::Visitor<'de> for BlockList {
    type Value = Vec<ContentBlock>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a list of content blocks")
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut blocks = Vec::new();
        while let Some(block) = seq.next_element()? {
            if blocks.len() == blocks.capacity() {
                // Doubling from one: 1, 2, 4, ... (amortized O(1) as with `push`).
                blocks.reserve_exact(blocks.capacity().max(1));
            }
            blocks.push(block);
        }
        Ok(blocks)
    }
}

/// The first member name of a content block: `type` is matched without allocating.
enum BlockKey {
    Type,
    Other(String),
}

impl<'de> Deserialize<'de> for BlockKey {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl de::Visitor<'_> for KeyVisitor {
            type Value = BlockKey;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<BlockKey, E> {
                Ok(match v {
                    "type" => BlockKey::Type,
                    _ => BlockKey::Other(v.to_owned()),
                })
            }
        }
        deserializer.deserialize_identifier(KeyVisitor)
    }
}

/// The value of a leading `type` member: a known block type, matched without allocating, or
/// any other value (an unknown type, or not a string at all), kept for `Unknown`.
enum BlockTag {
    Text,
    Image,
    Audio,
    ResourceLink,
    Resource,
    ToolUse,
    ToolResult,
    Other(Value),
}

impl<'de> Deserialize<'de> for BlockTag {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TagVisitor;
        impl<'de> de::Visitor<'de> for TagVisitor {
            type Value = BlockTag;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<BlockTag, E> {
                Ok(match v {
                    "text" => BlockTag::Text,
                    "image" => BlockTag::Image,
                    "audio" => BlockTag::Audio,
                    "resource_link" => BlockTag::ResourceLink,
                    "resource" => BlockTag::Resource,
                    "tool_use" => BlockTag::ToolUse,
                    "tool_result" => BlockTag::ToolResult,
                    _ => BlockTag::Other(Value::String(v.to_owned())),
                })
            }
            // Anything but a string: the block is `Unknown`, its `type` kept as it came.
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<BlockTag, E> {
                Ok(BlockTag::Other(Value::Bool(v)))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<BlockTag, E> {
                Ok(BlockTag::Other(Value::from(v)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<BlockTag, E> {
                Ok(BlockTag::Other(Value::from(v)))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<BlockTag, E> {
                Ok(BlockTag::Other(Value::from(v)))
            }
            fn visit_unit<E: de::Error>(self) -> Result<BlockTag, E> {
                Ok(BlockTag::Other(Value::Null))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<BlockTag, A::Error> {
                Value::deserialize(de::value::SeqAccessDeserializer::new(seq)).map(BlockTag::Other)
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<BlockTag, A::Error> {
                Value::deserialize(de::value::MapAccessDeserializer::new(map)).map(BlockTag::Other)
            }
        }
        deserializer.deserialize_any(TagVisitor)
    }
}

/// The slow path: a block whose `type` is not its first member, or an unknown block.
fn from_map<E: de::Error>(map: Map<String, Value>) -> Result<ContentBlock, E> {
    fn known<T: DeserializeOwned, E: de::Error>(
        mut map: Map<String, Value>,
        wrap: fn(T) -> ContentBlock,
    ) -> Result<ContentBlock, E> {
        // The tag is not a field of the payload; leaving it in would put it in `extra`.
        map.remove("type");
        serde_json::from_value(Value::Object(map))
            .map(wrap)
            .map_err(E::custom)
    }
    match map.get("type").and_then(Value::as_str) {
        Some("text") => known(map, ContentBlock::Text),
        Some("image") => known(map, |c| ContentBlock::Image(Box::new(c))),
        Some("audio") => known(map, |c| ContentBlock::Audio(Box::new(c))),
        Some("resource_link") => known(map, |c| ContentBlock::ResourceLink(Box::new(c))),
        Some("resource") => known(map, |c| ContentBlock::Resource(Box::new(c))),
        Some("tool_use") => known(map, |c| ContentBlock::ToolUse(Box::new(c))),
        Some("tool_result") => known(map, |c| ContentBlock::ToolResult(Box::new(c))),
        _ => Ok(ContentBlock::Unknown(map)),
    }
}

/// The contents of a resource: text or base64 blob, told apart by which field is present.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum ResourceContents {
    /// Has a `text` field.
    Text(TextResourceContents),
    /// Has a `blob` field.
    Blob(BlobResourceContents),
}

impl ResourceContents {
    /// The URI of the resource these contents belong to.
    pub fn uri(&self) -> &str {
        match self {
            Self::Text(c) => &c.uri,
            Self::Blob(c) => &c.uri,
        }
    }
}

impl<'de> Deserialize<'de> for ResourceContents {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // Decide by field instead of `untagged` so a malformed value gets a precise error.
        let map = Map::<String, Value>::deserialize(deserializer)?;
        let value = Value::Object(map);
        if value.get("text").is_some() {
            serde_json::from_value(value)
                .map(Self::Text)
                .map_err(de::Error::custom)
        } else if value.get("blob").is_some() {
            serde_json::from_value(value)
                .map(Self::Blob)
                .map_err(de::Error::custom)
        } else {
            Err(de::Error::custom(
                "resource contents have neither `text` nor `blob`",
            ))
        }
    }
}

/// Text contents of a resource.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextResourceContents {
    /// The resource's URI.
    pub uri: String,
    /// MIME type, if known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The text.
    pub text: String,
    /// Contents metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Binary contents of a resource.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BlobResourceContents {
    /// The resource's URI.
    pub uri: String,
    /// MIME type, if known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Base64-encoded bytes, not decoded here.
    pub blob: String,
    /// Contents metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::types::tests::round_trip;

    #[test]
    fn a_block_is_no_larger_than_a_text_block() {
        // The boxed kinds keep every block as small as text, the kind that is not boxed.
        assert!(
            std::mem::size_of::<ContentBlock>() <= std::mem::size_of::<TextContent>() + 8,
            "{} bytes",
            std::mem::size_of::<ContentBlock>()
        );
    }

    #[test]
    fn every_known_block_round_trips() {
        let blocks: Vec<ContentBlock> = round_trip(json!([
            { "type": "text", "text": "hi", "annotations": { "audience": ["user"] }, "_meta": { "a": 1 } },
            { "type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png" },
            { "type": "audio", "data": "UklGRg==", "mimeType": "audio/wav", "annotations": { "priority": 0.25 } },
            { "type": "resource_link", "uri": "file:///r", "name": "r", "mimeType": "text/plain" },
            { "type": "resource", "resource": { "uri": "file:///e", "text": "embedded" } },
            { "type": "resource", "resource": { "uri": "file:///b", "blob": "AA==", "mimeType": "application/pdf" } },
            { "type": "tool_use", "id": "call-1", "name": "get_weather", "input": { "city": "Paris" } },
            { "type": "tool_result", "toolUseId": "call-1", "content": [{ "type": "text", "text": "sunny" }],
              "structuredContent": { "sky": "clear" }, "isError": false }
        ]));
        let kinds: Vec<_> = blocks
            .iter()
            .map(|b| b.kind().unwrap().to_owned())
            .collect();
        assert_eq!(
            kinds,
            [
                "text",
                "image",
                "audio",
                "resource_link",
                "resource",
                "resource",
                "tool_use",
                "tool_result"
            ]
        );
        match &blocks[0] {
            ContentBlock::Text(t) => {
                assert_eq!(t.text, "hi");
                // The tag is not a payload field.
                assert!(t.extra.is_empty());
            }
            other => panic!("expected text, got {other:?}"),
        }
        match &blocks[2] {
            ContentBlock::Audio(a) => assert_eq!(a.mime_type, "audio/wav"),
            other => panic!("expected audio, got {other:?}"),
        }
        match &blocks[5] {
            ContentBlock::Resource(e) => assert!(matches!(e.resource, ResourceContents::Blob(_))),
            other => panic!("expected resource, got {other:?}"),
        }
        match &blocks[7] {
            ContentBlock::ToolResult(r) => {
                assert_eq!(r.tool_use_id, "call-1");
                assert_eq!(r.content, vec![ContentBlock::text("sunny")]);
            }
            other => panic!("expected tool_result, got {other:?}"),
        }
    }

    #[test]
    fn unknown_block_round_trips_unchanged() {
        let sample = json!({
            "type": "hologram",
            "frames": [1, 2, 3],
            "annotations": { "priority": 1.0 },
            "_meta": { "vendor": "x" }
        });
        let block: ContentBlock = round_trip(sample.clone());
        assert_eq!(block.kind(), Some("hologram"));
        match block {
            ContentBlock::Unknown(map) => assert_eq!(Value::Object(map), sample),
            other => panic!("expected unknown, got {other:?}"),
        }
        // No `type` at all is kept too, rather than failing a whole result.
        let untyped: ContentBlock = round_trip(json!({ "text": "no tag" }));
        assert_eq!(untyped.kind(), None);
    }

    #[test]
    fn known_block_with_wrong_shape_is_an_error() {
        assert!(serde_json::from_value::<ContentBlock>(json!({ "type": "text" })).is_err());
        assert!(
            serde_json::from_value::<ContentBlock>(json!({ "type": "image", "data": "x" }))
                .is_err()
        );
        assert!(serde_json::from_value::<ContentBlock>(json!("text")).is_err());
    }

    #[test]
    fn text_block_serializes_minimal() {
        assert_eq!(
            serde_json::to_value(ContentBlock::text("x")).unwrap(),
            json!({ "type": "text", "text": "x" })
        );
    }

    #[test]
    fn unknown_role_is_kept() {
        let roles: Vec<Role> = round_trip(json!(["user", "assistant", "system"]));
        assert_eq!(
            roles,
            [Role::User, Role::Assistant, Role::Other("system".into())]
        );
    }

    #[test]
    fn icon_round_trip() {
        let icon: Icon = round_trip(json!({
            "src": "https://example.com/icon.svg",
            "mimeType": "image/svg+xml",
            "sizes": ["any"],
            "theme": "light"
        }));
        assert_eq!(icon.sizes, Some(vec!["any".to_owned()]));
        assert_eq!(icon.theme.as_deref(), Some("light"));
    }

    /// The one-pass path (`type` first) and the collecting path (`type` later) decode the
    /// same block to the same value, unknown members kept and `type` never among them.
    #[test]
    fn block_decodes_the_same_whatever_the_member_order() {
        let first = r#"{"type":"text","text":"hi","x-vendor":1,"annotations":{"priority":0.5}}"#;
        let later = r#"{"text":"hi","x-vendor":1,"type":"text","annotations":{"priority":0.5}}"#;
        let a: ContentBlock = serde_json::from_str(first).unwrap();
        let b: ContentBlock = serde_json::from_str(later).unwrap();
        assert_eq!(a, b);
        let ContentBlock::Text(t) = &a else {
            panic!("{a:?}")
        };
        assert_eq!(t.text, "hi");
        assert_eq!(t.extra.get("x-vendor"), Some(&json!(1)));
        assert!(!t.extra.contains_key("type"));
        // From a `Value` too (nested blocks of sampling messages are decoded that way).
        let c: ContentBlock = serde_json::from_value(serde_json::from_str(first).unwrap()).unwrap();
        assert_eq!(a, c);
        assert_eq!(
            serde_json::to_value(&a).unwrap(),
            serde_json::from_str::<Value>(first).unwrap()
        );
    }

    #[test]
    fn odd_blocks_are_unknown_or_errors() {
        for odd in [
            r#"{"type":"video","src":"x"}"#,
            r#"{"src":"x","type":"video"}"#,
            r#"{"type":5,"text":"x"}"#,
            r#"{"text":"x"}"#,
            r#"{}"#,
        ] {
            let block: ContentBlock = serde_json::from_str(odd).unwrap();
            assert_eq!(
                block,
                ContentBlock::Unknown(serde_json::from_str(odd).unwrap()),
                "{odd}"
            );
        }
        for bad in [
            r#"["text","x"]"#,
            r#""text""#,
            r#"{"type":"text"}"#,
            r#"{"type":"text","text":1}"#,
        ] {
            assert!(serde_json::from_str::<ContentBlock>(bad).is_err(), "{bad}");
        }
    }

    /// `tool_result` blocks nest; a hostile peer nesting them as deep as the JSON parser allows
    /// must get a value or an error, not a stack overflow.
    #[test]
    fn deeply_nested_tool_results_do_not_overflow() {
        for depth in [10, 62, 63, 64, 200] {
            let mut json = String::from(r#"{"type":"text","text":"leaf"}"#);
            for _ in 0..depth {
                json = format!(r#"{{"type":"tool_result","toolUseId":"x","content":[{json}]}}"#);
            }
            let parsed = serde_json::from_str::<ContentBlock>(&json);
            // serde_json stops at 128 levels of nesting; every `tool_result` adds two.
            assert_eq!(parsed.is_ok(), depth < 64, "depth {depth}");
        }
    }
}
