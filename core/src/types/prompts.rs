//! Prompts: listing and getting prompt templates.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{ContentBlock, Cursor, Icon, PaginatedParams, Request, Role};

/// A prompt template the server offers (an entry of `prompts/list`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Prompt {
    /// The name to get it by.
    pub name: String,
    /// Human-readable display name (2025-06-18 and later).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the prompt does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The arguments the template accepts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Vec<PromptArgument>>,
    /// Icons for display (2025-11-25 and later).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Prompt metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One argument of a prompt template.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptArgument {
    /// The argument's name.
    pub name: String,
    /// Human-readable display name (2025-06-18 and later).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the argument means.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether the argument must be given (absent means false).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The result of `prompts/list`: one page.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListPromptsResult {
    /// The prompts on this page.
    pub prompts: Vec<Prompt>,
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

/// The `params` of `prompts/get`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetPromptParams {
    /// The prompt's name.
    pub name: String,
    /// Values for the template's arguments.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments: Option<BTreeMap<String, String>>,
    /// Request metadata; `progressToken` lives here.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The result of `prompts/get`: the rendered messages.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetPromptResult {
    /// What the prompt is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The messages, in order.
    pub messages: Vec<PromptMessage>,
    /// Result metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One message of a rendered prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptMessage {
    /// Who says it.
    pub role: Role,
    /// What is said.
    pub content: ContentBlock,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `prompts/list`: one page of the server's prompts.
#[non_exhaustive]
pub enum ListPrompts {}

impl Request for ListPrompts {
    const METHOD: &'static str = "prompts/list";
    type Params = Option<PaginatedParams>;
    type Result = ListPromptsResult;
}

/// `prompts/get`: render a prompt template with arguments.
#[non_exhaustive]
pub enum GetPrompt {}

impl Request for GetPrompt {
    const METHOD: &'static str = "prompts/get";
    type Params = GetPromptParams;
    type Result = GetPromptResult;
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::types::tests::round_trip;

    #[test]
    fn list_prompts_round_trip() {
        let result: ListPromptsResult = round_trip(json!({
            "prompts": [{
                "name": "code_review",
                "title": "Request Code Review",
                "description": "Asks the LLM to review code",
                "arguments": [
                    { "name": "code", "description": "The code", "required": true },
                    { "name": "style", "title": "Style guide" }
                ],
                "icons": [{ "src": "https://example.com/p.png" }]
            }]
        }));
        let args = result.prompts[0].arguments.as_ref().unwrap();
        assert_eq!(args[0].required, Some(true));
        assert_eq!(args[1].required, None);
        assert_eq!(args[1].title.as_deref(), Some("Style guide"));
    }

    #[test]
    fn get_prompt_round_trip() {
        let params: GetPromptParams = round_trip(json!({
            "name": "code_review",
            "arguments": { "code": "def hello():\n    print('world')" }
        }));
        assert_eq!(
            params.arguments.as_ref().unwrap()["code"],
            "def hello():\n    print('world')"
        );
        let not_string = json!({ "name": "p", "arguments": { "n": 1 } });
        assert!(serde_json::from_value::<GetPromptParams>(not_string).is_err());
        let result: GetPromptResult = round_trip(json!({
            "description": "Code review prompt",
            "messages": [
                { "role": "user", "content": { "type": "text", "text": "Please review this code" } },
                { "role": "assistant", "content": {
                    "type": "resource",
                    "resource": { "uri": "file:///a.py", "mimeType": "text/x-python", "text": "print(1)" }
                } },
                { "role": "user", "content": { "type": "video", "url": "https://example.com/v" } }
            ]
        }));
        assert_eq!(result.messages[0].role, Role::User);
        assert_eq!(
            result.messages[0].content,
            ContentBlock::text("Please review this code")
        );
        assert!(matches!(
            result.messages[1].content,
            ContentBlock::Resource(_)
        ));
        assert_eq!(result.messages[2].content.kind(), Some("video"));
    }
}
