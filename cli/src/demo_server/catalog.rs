//! The demo resources, resource template, prompt and completions.

use std::collections::BTreeMap;

use mcp_proto::jsonrpc::ErrorObject;
use mcp_proto::types::{
    CompleteParams, CompleteResult, Completion, ContentBlock, GetPromptParams, GetPromptResult,
    Prompt, PromptArgument, PromptMessage, ReadResourceResult, Reference, Resource,
    ResourceContents, ResourceTemplate, Role, TextResourceContents,
};

/// The fixed text resource.
pub(crate) const README_URI: &str = "demo://readme";
const NOTES_PREFIX: &str = "demo://notes/";
/// The one resource template.
pub(crate) const NOTES_TEMPLATE: &str = "demo://notes/{name}";
/// The resource that changes (ticks) every second while it is subscribed.
pub(crate) const CLOCK_URI: &str = "demo://clock";

const README: &str = "This is the MCP demo server built into the `mcp` command.\n\
It offers the tools echo, add, slow, ask, image and fail, plus model for a client with \
sampling and roots for a client with roots; this readme, demo://clock (it changes every \
second while subscribed), a resource template demo://notes/{name} and a prompt `summarize` \
whose `style` argument completes.";

/// Values the `style` argument of `summarize` completes to.
const STYLES: &[&str] = &["brief", "bullet-points", "casual", "detailed", "formal"];
/// Values the `name` variable of the notes template completes to.
const NOTE_NAMES: &[&str] = &["ideas", "journal", "todo"];

pub(crate) fn resources() -> Vec<Resource> {
    vec![
        Resource {
            uri: README_URI.into(),
            name: "readme".into(),
            title: Some("About the demo server".into()),
            description: Some("What this server offers".into()),
            mime_type: Some("text/plain".into()),
            size: Some(README.len() as u64),
            ..Resource::default()
        },
        Resource {
            uri: CLOCK_URI.into(),
            name: "clock".into(),
            description: Some("Ticks while subscribed".into()),
            mime_type: Some("text/plain".into()),
            ..Resource::default()
        },
    ]
}

/// `demo://clock` after `value` ticks.
pub(crate) fn clock(value: u64) -> ReadResourceResult {
    text_contents(CLOCK_URI, format!("{value}\n"))
}

pub(crate) fn templates() -> Vec<ResourceTemplate> {
    vec![ResourceTemplate {
        uri_template: NOTES_TEMPLATE.into(),
        name: "notes".into(),
        description: Some("A note by name; any name works".into()),
        mime_type: Some("text/plain".into()),
        ..ResourceTemplate::default()
    }]
}

fn text_contents(uri: &str, text: String) -> ReadResourceResult {
    ReadResourceResult {
        contents: vec![ResourceContents::Text(TextResourceContents {
            uri: uri.into(),
            mime_type: Some("text/plain".into()),
            text,
            ..TextResourceContents::default()
        })],
        ..ReadResourceResult::default()
    }
}

pub(crate) fn read(uri: &str) -> Result<ReadResourceResult, ErrorObject> {
    if uri == README_URI {
        return Ok(text_contents(uri, README.into()));
    }
    match uri.strip_prefix(NOTES_PREFIX) {
        Some(name) if !name.is_empty() && !name.contains('/') => Ok(text_contents(
            uri,
            format!("The note called {name:?} is empty."),
        )),
        _ => Err(not_found(uri)),
    }
}

pub(crate) fn exists(uri: &str) -> bool {
    uri == CLOCK_URI || read(uri).is_ok()
}

pub(crate) fn not_found(uri: &str) -> ErrorObject {
    ErrorObject::new(
        ErrorObject::RESOURCE_NOT_FOUND,
        format!("resource not found: {uri}"),
    )
}

pub(crate) fn prompts() -> Vec<Prompt> {
    vec![Prompt {
        name: "summarize".into(),
        title: Some("Summarize a text".into()),
        description: Some("Asks the model for a summary in a given style".into()),
        arguments: Some(vec![
            PromptArgument {
                name: "text".into(),
                description: Some("The text to summarize".into()),
                required: Some(true),
                ..PromptArgument::default()
            },
            PromptArgument {
                name: "style".into(),
                description: Some(format!("One of: {}", STYLES.join(", "))),
                required: Some(false),
                ..PromptArgument::default()
            },
        ]),
        ..Prompt::default()
    }]
}

fn invalid(message: String) -> ErrorObject {
    ErrorObject::new(ErrorObject::INVALID_PARAMS, message)
}

pub(crate) fn get_prompt(params: &GetPromptParams) -> Result<GetPromptResult, ErrorObject> {
    if params.name != "summarize" {
        return Err(invalid(format!("unknown prompt: {}", params.name)));
    }
    let empty = BTreeMap::new();
    let args = params.arguments.as_ref().unwrap_or(&empty);
    let text = args
        .get("text")
        .ok_or_else(|| invalid("missing required argument `text`".into()))?;
    let style = args.get("style").map_or("brief", String::as_str);
    Ok(GetPromptResult {
        description: Some(format!("A {style} summary")),
        messages: vec![PromptMessage {
            role: Role::User,
            content: ContentBlock::text(format!(
                "Summarize the following text in a {style} style:\n\n{text}"
            )),
            extra: Default::default(),
        }],
        ..GetPromptResult::default()
    })
}

pub(crate) fn complete(params: &CompleteParams) -> Result<CompleteResult, ErrorObject> {
    let candidates = match (&params.reference, params.argument.name.as_str()) {
        (Reference::Prompt(p), "style") if p.name == "summarize" => STYLES,
        (Reference::Prompt(p), "text") if p.name == "summarize" => &[][..],
        (Reference::Resource(r), "name") if r.uri == NOTES_TEMPLATE => NOTE_NAMES,
        (reference, argument) => {
            let what = match reference {
                Reference::Prompt(p) => format!("prompt {:?}", p.name),
                Reference::Resource(r) => format!("resource {:?}", r.uri),
                _ => "this reference".to_owned(),
            };
            return Err(invalid(format!(
                "nothing to complete for argument `{argument}` of {what}"
            )));
        }
    };
    Ok(completion_of(candidates, &params.argument.value))
}

/// The answer to `completion/complete` from a fixed list: the `candidates` that start with
/// what the client typed (`prefix`), all of them (no more to page through).
pub(super) fn completion_of(candidates: &[&str], prefix: &str) -> CompleteResult {
    let values: Vec<String> = candidates
        .iter()
        .filter(|c| c.starts_with(prefix))
        .map(|c| (*c).to_owned())
        .collect();
    CompleteResult {
        completion: Completion {
            total: Some(values.len() as u64),
            has_more: Some(false),
            values,
            ..Completion::default()
        },
        ..CompleteResult::default()
    }
}
