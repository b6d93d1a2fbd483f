//! Resources: listing, templates, reading and subscriptions.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{Annotations, Cursor, EmptyResult, Icon, PaginatedParams, Request, ResourceContents};

/// A resource the server can read (an entry of `resources/list`, or a `resource_link` block).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Resource {
    /// The resource's URI.
    pub uri: String,
    /// Programmatic name.
    pub name: String,
    /// Human-readable display name (2025-06-18 and later).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the resource is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MIME type, if known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Size in bytes before any encoding, if known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Icons for display (2025-11-25 and later).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Display hints.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Resource metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A family of resources described by an RFC 6570 URI template.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplate {
    /// The URI template.
    pub uri_template: String,
    /// Programmatic name.
    pub name: String,
    /// Human-readable display name (2025-06-18 and later).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the resources are.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MIME type shared by all matching resources, if they have one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Icons for display (2025-11-25 and later).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Display hints.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Template metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The result of `resources/list`: one page.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListResourcesResult {
    /// The resources on this page.
    pub resources: Vec<Resource>,
    /// Where the next page starts; `None` on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Cursor>,
    /// Result metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The result of `resources/templates/list`: one page.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListResourceTemplatesResult {
    /// The templates on this page.
    pub resource_templates: Vec<ResourceTemplate>,
    /// Where the next page starts; `None` on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Cursor>,
    /// Result metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The `params` of a request about one resource: `resources/read`, `resources/subscribe`,
/// `resources/unsubscribe`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceRequestParams {
    /// The resource's URI.
    pub uri: String,
    /// Request metadata; `progressToken` lives here.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ResourceRequestParams {
    /// Params naming `uri` and nothing else.
    pub fn new(uri: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            ..Self::default()
        }
    }
}

/// The `params` of `resources/read`.
pub type ReadResourceParams = ResourceRequestParams;
/// The `params` of `resources/subscribe`.
pub type SubscribeParams = ResourceRequestParams;
/// The `params` of `resources/unsubscribe`.
pub type UnsubscribeParams = ResourceRequestParams;

/// The result of `resources/read`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadResourceResult {
    /// The contents; a directory-like resource may return several.
    pub contents: Vec<ResourceContents>,
    /// Result metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `resources/list`: one page of the server's resources.
#[non_exhaustive]
pub enum ListResources {}

impl Request for ListResources {
    const METHOD: &'static str = "resources/list";
    type Params = Option<PaginatedParams>;
    type Result = ListResourcesResult;
}

/// `resources/templates/list`: one page of the server's resource templates.
#[non_exhaustive]
pub enum ListResourceTemplates {}

impl Request for ListResourceTemplates {
    const METHOD: &'static str = "resources/templates/list";
    type Params = Option<PaginatedParams>;
    type Result = ListResourceTemplatesResult;
}

/// `resources/read`: the contents of one resource.
#[non_exhaustive]
pub enum ReadResource {}

impl Request for ReadResource {
    const METHOD: &'static str = "resources/read";
    type Params = ReadResourceParams;
    type Result = ReadResourceResult;
}

/// `resources/subscribe`: ask for `notifications/resources/updated` about one resource.
#[non_exhaustive]
pub enum Subscribe {}

impl Request for Subscribe {
    const METHOD: &'static str = "resources/subscribe";
    type Params = SubscribeParams;
    type Result = EmptyResult;
}

/// `resources/unsubscribe`: stop the updates that `resources/subscribe` asked for.
#[non_exhaustive]
pub enum Unsubscribe {}

impl Request for Unsubscribe {
    const METHOD: &'static str = "resources/unsubscribe";
    type Params = UnsubscribeParams;
    type Result = EmptyResult;
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::types::tests::round_trip;
    use crate::types::{ContentBlock, Role};

    #[test]
    fn list_resources_round_trip() {
        let result: ListResourcesResult = round_trip(json!({
            "resources": [
                {
                    "uri": "file:///project/README.md",
                    "name": "README.md",
                    "title": "Project readme",
                    "description": "The readme",
                    "mimeType": "text/markdown",
                    "size": 1024,
                    "icons": [{ "src": "data:image/png;base64,AAAA" }],
                    "annotations": { "audience": ["user", "assistant"], "priority": 0.5, "lastModified": "2025-01-12T15:00:58Z" },
                    "_meta": { "etag": "abc" },
                    "xFuture": true
                },
                { "uri": "file:///min", "name": "min" }
            ],
            "nextCursor": "page-2"
        }));
        assert_eq!(result.resources.len(), 2);
        let first = &result.resources[0];
        assert_eq!(first.size, Some(1024));
        assert_eq!(first.extra.get("xFuture"), Some(&json!(true)));
        let annotations = first.annotations.as_ref().unwrap();
        assert_eq!(
            annotations.audience,
            Some(vec![Role::User, Role::Assistant])
        );
        assert_eq!(annotations.priority, Some(0.5));
        assert_eq!(result.resources[1].title, None);
        assert_eq!(result.next_cursor.as_deref(), Some("page-2"));
    }

    #[test]
    fn list_resource_templates_round_trip() {
        let result: ListResourceTemplatesResult = round_trip(json!({
            "resourceTemplates": [{
                "uriTemplate": "file:///{path}",
                "name": "files",
                "mimeType": "application/octet-stream"
            }]
        }));
        assert_eq!(result.resource_templates[0].uri_template, "file:///{path}");
        assert_eq!(result.next_cursor, None);
    }

    #[test]
    fn read_resource_text_and_blob() {
        let params: ReadResourceParams = round_trip(json!({ "uri": "file:///a" }));
        assert_eq!(params, ReadResourceParams::new("file:///a"));
        let result: ReadResourceResult = round_trip(json!({
            "contents": [
                { "uri": "file:///a", "mimeType": "text/plain", "text": "hello", "_meta": { "k": 1 } },
                { "uri": "file:///b", "blob": "AAEC", "extraField": [1, 2] }
            ]
        }));
        match &result.contents[0] {
            ResourceContents::Text(text) => {
                assert_eq!(text.text, "hello");
                assert_eq!(text.mime_type.as_deref(), Some("text/plain"));
            }
            other => panic!("expected text, got {other:?}"),
        }
        match &result.contents[1] {
            ResourceContents::Blob(blob) => {
                assert_eq!(blob.blob, "AAEC");
                assert!(blob.extra.contains_key("extraField"));
            }
            other => panic!("expected blob, got {other:?}"),
        }
        assert_eq!(result.contents[1].uri(), "file:///b");
    }

    #[test]
    fn resource_contents_without_text_or_blob_is_an_error() {
        let err = serde_json::from_value::<ReadResourceResult>(json!({
            "contents": [{ "uri": "file:///a" }]
        }))
        .unwrap_err();
        assert!(
            err.to_string().contains("neither `text` nor `blob`"),
            "{err}"
        );
    }

    #[test]
    fn resource_link_block_is_a_resource() {
        let block: ContentBlock = round_trip(json!({
            "type": "resource_link",
            "uri": "file:///x",
            "name": "x",
            "size": 3
        }));
        match block {
            ContentBlock::ResourceLink(link) => assert_eq!(link.size, Some(3)),
            other => panic!("expected resource_link, got {other:?}"),
        }
    }

    #[test]
    fn subscribe_params_round_trip() {
        let params: SubscribeParams = round_trip(json!({ "uri": "file:///watched", "_meta": {} }));
        assert_eq!(params.uri, "file:///watched");
        assert_eq!(params.meta, Some(Map::new()));
    }
}
