//! Server-to-client requests the client answers: roots, sampling and elicitation.

use serde::{Deserialize, Deserializer, Serialize, de};
use serde_json::{Map, Value};

use super::{ContentBlock, EmptyParams, Notification, Request, Role, TaskMetadata, Tool};

/// A directory or file the client exposes to the server.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Root {
    /// The root's URI (a `file://` URI in current versions).
    pub uri: String,
    /// Human-readable name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Root metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Root {
    /// A root at `uri` (a `file://` URI) without a name.
    ///
    /// ```
    /// # use mcp_proto::types::Root;
    /// let root = Root::new("file:///home/me/project").with_name("project");
    /// assert_eq!(root.name.as_deref(), Some("project"));
    /// ```
    pub fn new(uri: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            ..Self::default()
        }
    }

    /// Sets the human-readable name.
    #[must_use]
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
}

/// The result of `roots/list`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListRootsResult {
    /// The client's roots.
    pub roots: Vec<Root>,
    /// Result metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ListRootsResult {
    /// The result listing `roots`.
    pub fn new(roots: Vec<Root>) -> Self {
        Self {
            roots,
            ..Self::default()
        }
    }
}

/// `roots/list`: the server asks for the client's roots.
#[non_exhaustive]
pub enum ListRoots {}

impl Request for ListRoots {
    const METHOD: &'static str = "roots/list";
    type Params = Option<EmptyParams>;
    type Result = ListRootsResult;
}

/// The content of a sampling message: one block, or (2025-11-25 and later) a list of blocks.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum SamplingContent {
    /// A single block (the only form before 2025-11-25); boxed to keep the enum small.
    Single(Box<ContentBlock>),
    /// Several blocks.
    Multiple(Vec<ContentBlock>),
}

impl SamplingContent {
    /// One text block: what a model's plain answer is.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Single(Box::new(ContentBlock::text(text)))
    }

    /// The text of the text blocks, joined with newlines; `None` when no block is text
    /// (an image, audio, a tool use).
    ///
    /// ```
    /// # use mcp_proto::types::SamplingContent;
    /// assert_eq!(SamplingContent::text("hi").as_text().as_deref(), Some("hi"));
    /// ```
    pub fn as_text(&self) -> Option<String> {
        let mut texts = self.blocks().iter().filter_map(ContentBlock::as_text);
        let first = texts.next()?;
        Some(texts.fold(first.to_owned(), |mut all, t| {
            all.push('\n');
            all.push_str(t);
            all
        }))
    }

    /// The blocks, whichever form was used.
    pub fn blocks(&self) -> &[ContentBlock] {
        match self {
            Self::Single(block) => std::slice::from_ref(&**block),
            Self::Multiple(blocks) => blocks,
        }
    }
}

impl From<ContentBlock> for SamplingContent {
    fn from(block: ContentBlock) -> Self {
        Self::Single(Box::new(block))
    }
}

impl<'de> Deserialize<'de> for SamplingContent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // Decide by JSON type instead of `untagged` so a bad block gets its own error message.
        match Value::deserialize(deserializer)? {
            value @ Value::Array(_) => serde_json::from_value(value)
                .map(Self::Multiple)
                .map_err(de::Error::custom),
            value => serde_json::from_value(value)
                .map(|block| Self::Single(Box::new(block)))
                .map_err(de::Error::custom),
        }
    }
}

/// One message of a sampling conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplingMessage {
    /// Who says it.
    pub role: Role,
    /// What is said.
    pub content: SamplingContent,
    /// Message metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl SamplingMessage {
    /// A message of `role` with `content`.
    pub fn new(role: Role, content: impl Into<SamplingContent>) -> Self {
        Self {
            role,
            content: content.into(),
            meta: None,
            extra: Map::new(),
        }
    }

    /// A user message of one text block.
    pub fn user_text(text: impl Into<String>) -> Self {
        Self::new(Role::User, SamplingContent::text(text))
    }

    /// An assistant message of one text block.
    pub fn assistant_text(text: impl Into<String>) -> Self {
        Self::new(Role::Assistant, SamplingContent::text(text))
    }
}

/// The server's preferences for model selection; advisory.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelPreferences {
    /// Model name hints, in order of preference.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hints: Option<Vec<ModelHint>>,
    /// How much cost matters, 0 to 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_priority: Option<f64>,
    /// How much speed matters, 0 to 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speed_priority: Option<f64>,
    /// How much capability matters, 0 to 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub intelligence_priority: Option<f64>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A hint toward a model: a substring of a model name, or a family.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelHint {
    /// The hint, for example `"claude-3-5-sonnet"` or `"sonnet"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

open_string_enum! {
    /// Which MCP servers' context to include in a sampling prompt.
    pub enum IncludeContext {
        /// No server context.
        None = "none",
        /// Context from the requesting server only.
        ThisServer = "thisServer",
        /// Context from every connected server.
        AllServers = "allServers",
    }
}

open_string_enum! {
    /// How the model may use the tools offered in sampling.
    pub enum ToolChoiceMode {
        /// The model decides.
        Auto = "auto",
        /// The model must use a tool.
        Required = "required",
        /// The model must not use a tool.
        None = "none",
    }
}

/// Tool choice for sampling (2025-11-25 and later).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolChoice {
    /// The mode; absent means auto.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<ToolChoiceMode>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The `params` of `sampling/createMessage`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageParams {
    /// The conversation so far.
    pub messages: Vec<SamplingMessage>,
    /// Model selection preferences.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_preferences: Option<ModelPreferences>,
    /// A system prompt the client may use.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Which server context to include.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub include_context: Option<IncludeContext>,
    /// Sampling temperature.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// The most tokens to generate.
    pub max_tokens: u64,
    /// Sequences that stop generation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Vec<String>>,
    /// Provider-specific metadata, passed through.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// Tools the model may use (2025-11-25 and later).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Tool>>,
    /// How the model may use `tools` (2025-11-25 and later).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    /// Run the request as a task (2025-11-25 and later).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// Request metadata; `progressToken` lives here.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The result of `sampling/createMessage`: the generated message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageResult {
    /// Normally `assistant`.
    pub role: Role,
    /// What the model produced.
    pub content: SamplingContent,
    /// The model that produced it.
    pub model: String,
    /// Why generation stopped: `"endTurn"`, `"stopSequence"`, `"maxTokens"`, `"toolUse"` or
    /// another string.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// Result metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl CreateMessageParams {
    /// The server's task this request belongs to (`_meta["io.modelcontextprotocol/related-task"]`,
    /// 2025-11-25): set when a task of the server needs this answer to go on (the task is
    /// `input_required` meanwhile). `None` for a request of no task.
    #[must_use]
    pub fn related_task(&self) -> Option<&str> {
        super::related_task_id(self.meta.as_ref())
    }

    /// The text of the newest user message, if it has any: what a simple sampling handler
    /// answers.
    pub fn last_user_text(&self) -> Option<String> {
        self.messages
            .iter()
            .rev()
            .find(|m| m.role == Role::User)
            .and_then(|m| m.content.as_text())
    }
}

impl CreateMessageResult {
    /// The assistant's message `content`, produced by `model`, with no stop reason.
    pub fn new(model: impl Into<String>, content: impl Into<SamplingContent>) -> Self {
        Self {
            role: Role::Assistant,
            content: content.into(),
            model: model.into(),
            stop_reason: None,
            meta: None,
            extra: Map::new(),
        }
    }

    /// The assistant's text answer from `model`, stopped at the end of its turn
    /// (`stopReason: "endTurn"`).
    ///
    /// ```
    /// # use mcp_proto::types::CreateMessageResult;
    /// let result = CreateMessageResult::text("my-model", "Paris.");
    /// assert_eq!(result.content.as_text().as_deref(), Some("Paris."));
    /// assert_eq!(result.stop_reason.as_deref(), Some("endTurn"));
    /// ```
    pub fn text(model: impl Into<String>, text: impl Into<String>) -> Self {
        Self::new(model, SamplingContent::text(text)).with_stop_reason("endTurn")
    }

    /// Sets why generation stopped: `"endTurn"`, `"stopSequence"`, `"maxTokens"`,
    /// `"toolUse"` or another string.
    #[must_use]
    pub fn with_stop_reason(mut self, reason: impl Into<String>) -> Self {
        self.stop_reason = Some(reason.into());
        self
    }
}

/// `sampling/createMessage`: the server asks the client's model for a completion.
#[non_exhaustive]
pub enum CreateMessage {}

impl Request for CreateMessage {
    const METHOD: &'static str = "sampling/createMessage";
    type Params = CreateMessageParams;
    type Result = CreateMessageResult;
}

open_string_enum! {
    /// How an elicitation collects input.
    pub enum ElicitMode {
        /// An in-client form described by `requestedSchema` (the default when absent).
        Form = "form",
        /// An external URL the user visits (2025-11-25 and later).
        Url = "url",
    }
}

/// The `params` of `elicitation/create`, covering both the form and URL modes.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitParams {
    /// The mode; absent means form (as in 2025-06-18).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<ElicitMode>,
    /// What is asked of the user.
    pub message: String,
    /// Form mode: a flat object schema of primitive properties, as sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requested_schema: Option<Map<String, Value>>,
    /// URL mode: the URL to open.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// URL mode: identifies the elicitation in `notifications/elicitation/complete`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub elicitation_id: Option<String>,
    /// Run the request as a task (2025-11-25 and later).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// Request metadata; `progressToken` lives here.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ElicitParams {
    /// The server's task this request belongs to (`_meta["io.modelcontextprotocol/related-task"]`,
    /// 2025-11-25): set when a task of the server needs this answer to go on (the task is
    /// `input_required` meanwhile). `None` for a request of no task.
    #[must_use]
    pub fn related_task(&self) -> Option<&str> {
        super::related_task_id(self.meta.as_ref())
    }

    /// The mode in effect: `mode`, or form when absent.
    pub fn effective_mode(&self) -> ElicitMode {
        self.mode.clone().unwrap_or(ElicitMode::Form)
    }

    /// The form pre-filled with the schema's defaults: every property of `requestedSchema`
    /// that has a `default` (string, number, integer, boolean or enum value), by name.
    ///
    /// The spec asks clients to pre-populate forms with these (2025-11-25); a host that
    /// answers without asking a person (a test, an unattended run) can accept with exactly
    /// this content, and an interactive host can start its form from it.
    #[must_use]
    pub fn default_content(&self) -> Map<String, Value> {
        let properties = self
            .requested_schema
            .as_ref()
            .and_then(|s| s.get("properties"))
            .and_then(Value::as_object);
        properties
            .into_iter()
            .flatten()
            .filter_map(|(name, prop)| Some((name.clone(), prop.get("default")?.clone())))
            .filter(|(_, v)| !v.is_null())
            .collect()
    }
}

open_string_enum! {
    /// The user's answer to an elicitation.
    pub enum ElicitAction {
        /// The user submitted (form mode: `content` holds the values).
        Accept = "accept",
        /// The user explicitly declined.
        Decline = "decline",
        /// The user dismissed the request without choosing.
        Cancel = "cancel",
    }
}

/// The result of `elicitation/create`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitResult {
    /// What the user did.
    pub action: ElicitAction,
    /// Form mode with `accept`: the submitted values (strings, numbers, booleans, string lists).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<Map<String, Value>>,
    /// Result metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ElicitResult {
    /// A result with `action` and no content.
    pub fn new(action: ElicitAction) -> Self {
        Self {
            action,
            content: None,
            meta: None,
            extra: Map::new(),
        }
    }

    /// The user submitted `content` (form mode: the values by property name).
    ///
    /// ```
    /// # use mcp_proto::types::{ElicitAction, ElicitResult};
    /// let mut form = serde_json::Map::new();
    /// form.insert("name".into(), "Ada".into());
    /// let result = ElicitResult::accept(form);
    /// assert_eq!(result.action, ElicitAction::Accept);
    /// assert_eq!(ElicitResult::decline().action, ElicitAction::Decline);
    /// ```
    pub fn accept(content: Map<String, Value>) -> Self {
        Self {
            content: Some(content),
            ..Self::new(ElicitAction::Accept)
        }
    }

    /// The user accepted a URL-mode elicitation (no content: the exchange happens out of
    /// band).
    pub fn accept_url() -> Self {
        Self::new(ElicitAction::Accept)
    }

    /// The user explicitly declined.
    pub fn decline() -> Self {
        Self::new(ElicitAction::Decline)
    }

    /// The user dismissed the request without choosing.
    pub fn cancel() -> Self {
        Self::new(ElicitAction::Cancel)
    }
}

/// `elicitation/create`: the server asks the user for input through the client
/// (2025-06-18 and later).
#[non_exhaustive]
pub enum Elicit {}

impl Request for Elicit {
    const METHOD: &'static str = "elicitation/create";
    type Params = ElicitParams;
    type Result = ElicitResult;
}

/// The `params` of `notifications/elicitation/complete`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationCompleteParams {
    /// The `elicitationId` of the URL-mode elicitation that finished.
    pub elicitation_id: String,
    /// Notification metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `notifications/elicitation/complete`: the server says a URL-mode elicitation finished
/// (2025-11-25 and later).
#[non_exhaustive]
pub enum ElicitationComplete {}

impl Notification for ElicitationComplete {
    const METHOD: &'static str = "notifications/elicitation/complete";
    type Params = ElicitationCompleteParams;
}

#[cfg(test)]
mod tests {
    #[test]
    fn constructors_serialize_to_the_schema_shapes() {
        let r = serde_json::to_value(super::CreateMessageResult::text("m", "hi")).unwrap();
        assert_eq!(
            r,
            serde_json::json!({"role": "assistant", "content": {"type": "text", "text": "hi"},
                "model": "m", "stopReason": "endTurn"})
        );
        let mut form = serde_json::Map::new();
        form.insert("n".into(), 1.into());
        let e = serde_json::to_value(super::ElicitResult::accept(form)).unwrap();
        assert_eq!(
            e,
            serde_json::json!({"action": "accept", "content": {"n": 1}})
        );
        let d = serde_json::to_value(super::ElicitResult::cancel()).unwrap();
        assert_eq!(d, serde_json::json!({"action": "cancel"}));
        let roots = super::ListRootsResult::new(vec![super::Root::new("file:///a").with_name("a")]);
        assert_eq!(
            serde_json::to_value(roots).unwrap(),
            serde_json::json!({"roots": [{"uri": "file:///a", "name": "a"}]})
        );
        let p: super::CreateMessageParams = serde_json::from_value(serde_json::json!({
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "first"}},
                {"role": "assistant", "content": {"type": "text", "text": "ok"}},
                {"role": "user", "content": [{"type": "text", "text": "a"},
                    {"type": "image", "data": "", "mimeType": "image/png"},
                    {"type": "text", "text": "b"}]}
            ],
            "maxTokens": 10
        }))
        .unwrap();
        assert_eq!(p.last_user_text().as_deref(), Some("a\nb"));
    }

    #[test]
    fn default_content_takes_every_schema_default() {
        let p: super::ElicitParams = serde_json::from_value(serde_json::json!({
            "message": "m",
            "requestedSchema": {"type": "object", "properties": {
                "name": {"type": "string", "default": "John Doe"},
                "age": {"type": "integer", "default": 30},
                "score": {"type": "number", "default": 95.5},
                "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
                "verified": {"type": "boolean", "default": true},
                "nick": {"type": "string"}
            }}
        }))
        .unwrap();
        let c = p.default_content();
        assert_eq!(c.len(), 5);
        assert_eq!(c["age"], 30);
        assert_eq!(c["verified"], true);
        assert!(!c.contains_key("nick"));
    }

    use serde_json::json;

    use super::*;
    use crate::types::tests::round_trip;

    #[test]
    fn list_roots_round_trip() {
        let result: ListRootsResult = round_trip(json!({
            "roots": [
                { "uri": "file:///home/user/projects/myproject", "name": "My Project" },
                { "uri": "file:///tmp", "_meta": { "k": true } }
            ]
        }));
        assert_eq!(result.roots[0].name.as_deref(), Some("My Project"));
        assert_eq!(result.roots[1].name, None);
        let none: <ListRoots as Request>::Params = serde_json::from_value(Value::Null).unwrap();
        assert_eq!(none, None);
    }

    #[test]
    fn create_message_params_round_trip() {
        let params: CreateMessageParams = round_trip(json!({
            "messages": [
                { "role": "user", "content": { "type": "text", "text": "What is the capital of France?" } },
                { "role": "assistant", "content": [
                    { "type": "tool_use", "id": "u1", "name": "search", "input": { "q": "France" } }
                ] },
                { "role": "user", "content": [
                    { "type": "tool_result", "toolUseId": "u1", "content": [{ "type": "text", "text": "Paris" }] }
                ] }
            ],
            "modelPreferences": {
                "hints": [{ "name": "claude-3-sonnet" }],
                "intelligencePriority": 0.8,
                "speedPriority": 0.5,
                "costPriority": 0.25
            },
            "systemPrompt": "You are a helpful assistant.",
            "includeContext": "thisServer",
            "temperature": 0.7,
            "maxTokens": 100,
            "stopSequences": ["\n\n"],
            "metadata": { "provider": { "x": 1 } },
            "tools": [{ "name": "search", "inputSchema": { "type": "object" } }],
            "toolChoice": { "mode": "auto" },
            "task": { "ttl": 1000 }
        }));
        assert_eq!(params.max_tokens, 100);
        assert_eq!(params.messages.len(), 3);
        match &params.messages[0].content {
            SamplingContent::Single(block) => assert!(matches!(**block, ContentBlock::Text(_))),
            other => panic!("expected a single block, got {other:?}"),
        }
        assert!(matches!(
            params.messages[1].content,
            SamplingContent::Multiple(_)
        ));
        assert!(matches!(
            params.messages[1].content.blocks()[0],
            ContentBlock::ToolUse(_)
        ));
        assert_eq!(params.include_context, Some(IncludeContext::ThisServer));
        assert_eq!(
            params.tool_choice.and_then(|c| c.mode),
            Some(ToolChoiceMode::Auto)
        );
        let hints = params.model_preferences.and_then(|p| p.hints).unwrap();
        assert_eq!(hints[0].name.as_deref(), Some("claude-3-sonnet"));
        let missing_max = json!({ "messages": [] });
        assert!(serde_json::from_value::<CreateMessageParams>(missing_max).is_err());
    }

    #[test]
    fn create_message_result_round_trip() {
        let result: CreateMessageResult = round_trip(json!({
            "role": "assistant",
            "content": { "type": "text", "text": "The capital of France is Paris." },
            "model": "claude-3-sonnet-20240307",
            "stopReason": "endTurn"
        }));
        assert_eq!(result.role, Role::Assistant);
        assert_eq!(
            result.content.blocks(),
            [ContentBlock::text("The capital of France is Paris.")]
        );
        assert_eq!(result.stop_reason.as_deref(), Some("endTurn"));
        let bad = json!({ "role": "assistant", "content": { "type": "text" }, "model": "m" });
        assert!(serde_json::from_value::<CreateMessageResult>(bad).is_err());
    }

    #[test]
    fn elicit_form_mode_round_trip() {
        let params: ElicitParams = round_trip(json!({
            "message": "Please provide your GitHub username",
            "requestedSchema": {
                "type": "object",
                "properties": { "name": { "type": "string" } },
                "required": ["name"]
            }
        }));
        assert_eq!(params.mode, None);
        assert_eq!(params.effective_mode(), ElicitMode::Form);
        assert!(params.requested_schema.is_some());
        let result: ElicitResult = round_trip(json!({
            "action": "accept",
            "content": { "name": "octocat", "age": 30, "subscribed": true, "tags": ["a", "b"] }
        }));
        assert_eq!(result.action, ElicitAction::Accept);
        assert_eq!(result.content.unwrap()["name"], json!("octocat"));
    }

    #[test]
    fn elicit_url_mode_round_trip() {
        let params: ElicitParams = round_trip(json!({
            "mode": "url",
            "elicitationId": "550e8400-e29b-41d4-a716-446655440000",
            "url": "https://mcp.example.com/ui/set_api_key",
            "message": "Please provide your API key to continue."
        }));
        assert_eq!(params.effective_mode(), ElicitMode::Url);
        assert_eq!(
            params.elicitation_id.as_deref(),
            Some("550e8400-e29b-41d4-a716-446655440000")
        );
        let declined: ElicitResult = round_trip(json!({ "action": "decline" }));
        assert_eq!(declined, ElicitResult::new(ElicitAction::Decline));
        let complete: ElicitationCompleteParams = round_trip(json!({ "elicitationId": "550e" }));
        assert_eq!(complete.elicitation_id, "550e");
    }
}
