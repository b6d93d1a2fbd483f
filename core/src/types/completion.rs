//! Argument completion: `completion/complete`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::Request;

/// What is being completed: a prompt's argument or a resource template's variable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
#[non_exhaustive]
pub enum Reference {
    /// `"type": "ref/prompt"`.
    #[serde(rename = "ref/prompt")]
    Prompt(PromptReference),
    /// `"type": "ref/resource"`.
    #[serde(rename = "ref/resource")]
    Resource(ResourceTemplateReference),
}

/// A reference to a prompt by name.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptReference {
    /// The prompt's name.
    pub name: String,
    /// Human-readable display name (2025-06-18 and later).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A reference to a resource template by its URI template.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplateReference {
    /// The URI template.
    pub uri: String,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The argument being completed and what has been typed so far.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompletionArgument {
    /// The argument's name.
    pub name: String,
    /// The partial value.
    pub value: String,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Values of arguments already resolved (2025-06-18 and later).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompletionContext {
    /// Argument names to their values.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments: Option<BTreeMap<String, String>>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The `params` of `completion/complete`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompleteParams {
    /// What is being completed.
    #[serde(rename = "ref")]
    pub reference: Reference,
    /// The argument and its partial value.
    pub argument: CompletionArgument,
    /// Already resolved arguments.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<CompletionContext>,
    /// Request metadata; `progressToken` lives here.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The suggestions in a `completion/complete` result.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// Suggested values; the schema caps them at 100, which is not enforced here.
    pub values: Vec<String>,
    /// Total number of matches, which may exceed `values.len()`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether there are more matches than returned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The result of `completion/complete`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompleteResult {
    /// The suggestions.
    pub completion: Completion,
    /// Result metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `completion/complete`: suggest values for an argument (2025-03-26 and later; the server
/// declares the `completions` capability).
#[non_exhaustive]
pub enum Complete {}

impl Request for Complete {
    const METHOD: &'static str = "completion/complete";
    type Params = CompleteParams;
    type Result = CompleteResult;
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::types::tests::round_trip;

    #[test]
    fn complete_prompt_argument_round_trip() {
        let params: CompleteParams = round_trip(json!({
            "ref": { "type": "ref/prompt", "name": "code_review", "title": "Review" },
            "argument": { "name": "language", "value": "py" },
            "context": { "arguments": { "framework": "flask" } }
        }));
        match &params.reference {
            Reference::Prompt(p) => {
                assert_eq!(p.name, "code_review");
                assert!(p.extra.is_empty());
            }
            other => panic!("expected prompt ref, got {other:?}"),
        }
        assert_eq!(params.argument.value, "py");
        let context = params.context.as_ref().and_then(|c| c.arguments.as_ref());
        assert_eq!(context.map(|a| a["framework"].as_str()), Some("flask"));
    }

    #[test]
    fn complete_resource_reference_round_trip() {
        let params: CompleteParams = round_trip(json!({
            "ref": { "type": "ref/resource", "uri": "file:///{path}", "future": 1 },
            "argument": { "name": "path", "value": "src/" },
            "_meta": { "progressToken": 3 }
        }));
        match &params.reference {
            Reference::Resource(r) => {
                assert_eq!(r.uri, "file:///{path}");
                assert_eq!(r.extra["future"], json!(1));
            }
            other => panic!("expected resource ref, got {other:?}"),
        }
        let unknown = json!({ "ref": { "type": "ref/tool", "name": "x" }, "argument": { "name": "a", "value": "" } });
        assert!(serde_json::from_value::<CompleteParams>(unknown).is_err());
    }

    #[test]
    fn complete_result_round_trip() {
        let result: CompleteResult = round_trip(json!({
            "completion": { "values": ["python", "pytorch", "pyside"], "total": 10, "hasMore": true }
        }));
        assert_eq!(result.completion.values.len(), 3);
        assert_eq!(result.completion.total, Some(10));
        assert_eq!(result.completion.has_more, Some(true));
        let minimal: CompleteResult = round_trip(json!({ "completion": { "values": [] } }));
        assert_eq!(minimal.completion.total, None);
    }
}
