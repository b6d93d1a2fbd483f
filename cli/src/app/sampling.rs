//! Answering `sampling/createMessage`: the person at the terminal is the model.
//!
//! The CLI declares the `sampling` capability on every connection, so servers show their
//! sampling tools whether or not a terminal is attached (a server that hides them would make
//! `mcp tools | grep` differ from `mcp tools`). On a terminal ([`SamplingMode::Ask`]) the
//! request is shown (system prompt, messages, max tokens, model preferences) and the person
//! types the reply, or declines; without one ([`SamplingMode::Decline`]) every request is
//! declined. A declined request is the JSON-RPC error the specification gives for a user's
//! rejection: code -1, "User rejected sampling request".

use std::io::{BufRead, Write};

use mcp_proto::jsonrpc::ErrorObject;
use mcp_proto::types::{
    ContentBlock, CreateMessageParams, CreateMessageResult, ModelPreferences, Role,
};
use mcp_tokio::HandlerFuture;
use serde_json::Value;

use super::prompt::{self, read_line, say};
use super::ui::Ui;

/// The error code of a sampling request the user rejected.
pub const USER_REJECTED: i64 = -1;

/// The `model` of a reply typed by a person.
pub const HUMAN_MODEL: &str = "human (typed at mcp-term)";

/// How sampling requests are answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SamplingMode {
    /// Show the request at the terminal and read the reply from stdin.
    Ask,
    /// Decline every request (no terminal to ask at).
    Decline,
}

impl SamplingMode {
    /// Ask when stdin is a terminal (and the output is not `--json`, like elicitation);
    /// otherwise decline.
    pub fn for_terminal(ui: &Ui) -> Self {
        if ui.stdin_tty && !ui.json {
            SamplingMode::Ask
        } else {
            SamplingMode::Decline
        }
    }
}

/// The handler registered on the client.
pub struct Sampler {
    ui: Ui,
    mode: SamplingMode,
}

impl Sampler {
    /// A handler answering in `mode`.
    pub fn new(ui: Ui, mode: SamplingMode) -> Self {
        Sampler { ui, mode }
    }
}

/// The error that declines a request.
pub fn rejected() -> ErrorObject {
    ErrorObject::new(USER_REJECTED, "User rejected sampling request")
}

impl mcp_tokio::SamplingHandler for Sampler {
    fn create_message(&self, params: Value) -> HandlerFuture<'_, Result<Value, ErrorObject>> {
        Box::pin(async move {
            let request: CreateMessageParams = serde_json::from_value(params).map_err(|e| {
                ErrorObject::new(
                    ErrorObject::INVALID_PARAMS,
                    format!("malformed sampling/createMessage params: {e}"),
                )
            })?;
            match self.mode {
                SamplingMode::Decline => {
                    self.ui.info(&format!(
                        "declined the server's sampling request (no terminal to answer it): {}",
                        summary(&request)
                    ));
                    Err(rejected())
                }
                SamplingMode::Ask => {
                    let shown = describe(&request, self.ui.width);
                    let reply = prompt::at_terminal(&self.ui, move |input, output| {
                        ask(input, output, &shown)
                    })
                    .await
                    .flatten();
                    match reply {
                        Some(text) => Ok(reply_result(text)),
                        None => {
                            self.ui.info("declined the server's sampling request");
                            Err(rejected())
                        }
                    }
                }
            }
        })
    }
}

/// The result for a typed reply: an assistant text message from [`HUMAN_MODEL`].
pub fn reply_result(text: String) -> Value {
    let result = CreateMessageResult {
        role: Role::Assistant,
        content: ContentBlock::text(text).into(),
        model: HUMAN_MODEL.into(),
        stop_reason: Some("endTurn".into()),
        meta: None,
        extra: serde_json::Map::new(),
    };
    // Plain strings and a text block: serializing cannot fail.
    serde_json::to_value(result).unwrap_or(Value::Null)
}

/// Shows the request, then reads the reply: lines up to an empty line (or Ctrl-D). `None`
/// (declined) when nothing was typed: an empty first line or Ctrl-D at once.
pub fn ask(input: &mut dyn BufRead, output: &mut dyn Write, shown: &str) -> Option<String> {
    say(output, shown);
    say(
        output,
        "type the reply; an empty line ends it (Enter or Ctrl-D right away declines)\n",
    );
    let mut lines: Vec<String> = Vec::new();
    loop {
        say(output, "> ");
        match read_line(input) {
            None => {
                say(output, "\n");
                break;
            }
            Some(line) if line.trim().is_empty() => break,
            Some(line) => lines.push(line),
        }
    }
    (!lines.is_empty()).then(|| lines.join("\n"))
}

/// The last message's first line, for the one-line notice of a declined request.
fn summary(request: &CreateMessageParams) -> String {
    let text = request
        .messages
        .last()
        .and_then(|m| {
            m.content.blocks().iter().find_map(|b| match b {
                ContentBlock::Text(t) => Some(t.text.as_str()),
                _ => None,
            })
        })
        .unwrap_or("(no text)");
    let line = text.lines().next().unwrap_or_default();
    let mut short: String = line.chars().take(80).collect();
    if short.len() < line.len() {
        short.push('…');
    }
    short
}

/// The request as the person sees it, each line ending in `\n`.
pub fn describe(request: &CreateMessageParams, width: usize) -> String {
    let mut text = String::from("the server asks for a model reply (sampling):\n");
    if let Some(system) = request.system_prompt.as_deref().filter(|s| !s.is_empty()) {
        text.push_str("  system prompt:\n");
        indent(
            &mut text,
            &crate::render::wrap(system, width.saturating_sub(4)).join("\n"),
            4,
        );
    }
    for message in &request.messages {
        let role = match message.role {
            Role::User => "user".to_owned(),
            Role::Assistant => "assistant".to_owned(),
            ref other => serde_json::to_value(other)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_else(|| "message".into()),
        };
        text.push_str(&format!("  [{role}]\n"));
        let body = crate::render::content_blocks(message.content.blocks(), width.saturating_sub(4));
        indent(&mut text, body.trim_end_matches('\n'), 4);
    }
    let mut limits = vec![format!("max tokens {}", request.max_tokens)];
    if let Some(t) = request.temperature {
        limits.push(format!("temperature {t}"));
    }
    if let Some(stops) = request.stop_sequences.as_ref().filter(|s| !s.is_empty()) {
        limits.push(format!("stop at {}", quoted(stops)));
    }
    if let Some(context) = &request.include_context {
        let name = serde_json::to_value(context).unwrap_or(Value::Null);
        limits.push(format!("include context {}", name.as_str().unwrap_or("?")));
    }
    text.push_str(&format!("  {}\n", limits.join(", ")));
    if let Some(prefs) = &request.model_preferences
        && let Some(line) = preferences(prefs)
    {
        text.push_str(&format!("  model preferences: {line}\n"));
    }
    if let Some(tools) = request.tools.as_ref().filter(|t| !t.is_empty()) {
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        text.push_str(&format!(
            "  tools offered: {} (a typed reply is text only)\n",
            names.join(", ")
        ));
    }
    text
}

/// `hints claude-3, sonnet; cost 0.3, speed 0.5, intelligence 0.8`, or `None` when empty.
fn preferences(prefs: &ModelPreferences) -> Option<String> {
    let mut parts = Vec::new();
    let hints: Vec<&str> = prefs
        .hints
        .iter()
        .flatten()
        .filter_map(|h| h.name.as_deref())
        .collect();
    if !hints.is_empty() {
        parts.push(format!("hints {}", hints.join(", ")));
    }
    let priorities: Vec<String> = [
        ("cost", prefs.cost_priority),
        ("speed", prefs.speed_priority),
        ("intelligence", prefs.intelligence_priority),
    ]
    .into_iter()
    .filter_map(|(name, p)| p.map(|p| format!("{name} {p}")))
    .collect();
    if !priorities.is_empty() {
        parts.push(priorities.join(", "));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

fn quoted(items: &[String]) -> String {
    items
        .iter()
        .map(|s| format!("{s:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Appends every line of `body` indented by `by` spaces (blank lines stay empty).
fn indent(text: &mut String, body: &str, by: usize) {
    for line in body.lines() {
        if !line.is_empty() {
            text.push_str(&" ".repeat(by));
        }
        text.push_str(line);
        text.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request() -> CreateMessageParams {
        serde_json::from_value(json!({
            "messages": [
                { "role": "user", "content": { "type": "text", "text": "What is 2+2?" } },
                { "role": "assistant", "content": { "type": "text", "text": "Let me think." } },
                { "role": "user", "content": [
                    { "type": "text", "text": "Answer briefly." },
                    { "type": "text", "text": "Please." }
                ] }
            ],
            "systemPrompt": "You are terse.",
            "maxTokens": 50,
            "temperature": 0.2,
            "stopSequences": ["\n\n"],
            "modelPreferences": {
                "hints": [{ "name": "claude-3-sonnet" }, { "name": "sonnet" }],
                "costPriority": 0.3,
                "intelligencePriority": 0.9
            }
        }))
        .unwrap()
    }

    #[test]
    fn the_request_shows_system_prompt_messages_limits_and_preferences() {
        let shown = describe(&request(), 80);
        assert_eq!(
            shown,
            "the server asks for a model reply (sampling):\n\
             \x20 system prompt:\n\
             \x20   You are terse.\n\
             \x20 [user]\n\
             \x20   What is 2+2?\n\
             \x20 [assistant]\n\
             \x20   Let me think.\n\
             \x20 [user]\n\
             \x20   Answer briefly.\n\
             \x20   Please.\n\
             \x20 max tokens 50, temperature 0.2, stop at \"\\n\\n\"\n\
             \x20 model preferences: hints claude-3-sonnet, sonnet; cost 0.3, intelligence 0.9\n"
        );
    }

    #[test]
    fn media_in_a_message_is_summarized_not_dumped() {
        let mut request = request();
        request.messages = serde_json::from_value(json!([{ "role": "user", "content":
            { "type": "image", "data": "AAAA", "mimeType": "image/png" } }]))
        .unwrap();
        let shown = describe(&request, 80);
        assert!(shown.contains("image/png"), "{shown}");
        assert!(!shown.contains("AAAA"), "{shown}");
    }

    fn scripted(input: &str) -> (Option<String>, String) {
        let mut output = Vec::new();
        let reply = ask(&mut input.as_bytes(), &mut output, "REQUEST\n");
        (reply, String::from_utf8(output).unwrap())
    }

    #[test]
    fn typed_lines_up_to_an_empty_line_are_the_reply() {
        let (reply, shown) = scripted("Four.\nReally: 4.\n\nignored\n");
        assert_eq!(reply.as_deref(), Some("Four.\nReally: 4."));
        assert!(shown.starts_with("REQUEST\ntype the reply;"), "{shown}");
        // Ctrl-D after some text ends the reply too.
        assert_eq!(scripted("Four.").0.as_deref(), Some("Four."));
        assert_eq!(scripted("Four.\r\n").0.as_deref(), Some("Four."));
    }

    #[test]
    fn an_empty_first_line_or_ctrl_d_declines() {
        assert_eq!(scripted("\nFour.\n").0, None);
        assert_eq!(scripted("   \n").0, None);
        assert_eq!(scripted("").0, None);
    }

    #[test]
    fn a_reply_is_an_assistant_text_message() {
        assert_eq!(
            reply_result("Four.".into()),
            json!({
                "role": "assistant",
                "content": { "type": "text", "text": "Four." },
                "model": HUMAN_MODEL,
                "stopReason": "endTurn"
            })
        );
        let e = rejected();
        assert_eq!(
            (e.code, e.message.as_str()),
            (-1, "User rejected sampling request")
        );
    }
}
