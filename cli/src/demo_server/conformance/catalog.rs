//! The conformance fixtures' resources, resource template, prompts and completions, with the
//! contents the suite's scenarios expect (`resources-*`, `prompts-*`, `completion-complete`).

use std::collections::BTreeMap;

use mcp_proto::jsonrpc::ErrorObject;
use mcp_proto::types::{
    BlobResourceContents, CompleteParams, CompleteResult, ContentBlock, EmbeddedResource,
    GetPromptParams, GetPromptResult, Prompt, PromptArgument, PromptMessage, ReadResourceResult,
    Reference, Resource, ResourceContents, ResourceTemplate, Role, TextResourceContents,
};
use serde_json::json;

use crate::demo_server::catalog::completion_of;

/// A 1×1 red PNG: the image of `test_image_content`, `test_prompt_with_image` and
/// `test://static-binary`.
pub(crate) const RED_PIXEL_PNG_BASE64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";

/// 2 ms of silence as a WAV file (PCM, 8 kHz, mono, 8 bits): the audio of
/// `test_audio_content`.
pub(crate) const SILENCE_WAV_BASE64: &str =
    "UklGRjQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YRAAAACAgICAgICAgICAgICAgICA";

pub(crate) const STATIC_TEXT_URI: &str = "test://static-text";
pub(crate) const STATIC_BINARY_URI: &str = "test://static-binary";
pub(crate) const WATCHED_URI: &str = "test://watched-resource";
pub(crate) const DATA_TEMPLATE: &str = "test://template/{id}/data";
const DATA_PREFIX: &str = "test://template/";
const DATA_SUFFIX: &str = "/data";

const STATIC_TEXT: &str = "This is the content of the static text resource.";
const WATCHED_TEXT: &str = "This is the content of the watched resource.";

/// What `completion/complete` offers for `test_prompt_with_arguments`'s arguments.
const ARGUMENT_VALUES: &[&str] = &["paris", "park", "party", "test", "testing"];
/// What `completion/complete` offers for the template's `id`.
const DATA_IDS: &[&str] = &["1", "2", "3", "123"];

fn resource(uri: &str, name: &str, description: &str, mime_type: &str) -> Resource {
    Resource {
        uri: uri.into(),
        name: name.into(),
        description: Some(description.into()),
        mime_type: Some(mime_type.into()),
        ..Resource::default()
    }
}

/// The direct resources (`resources/list`).
pub(crate) fn resources() -> Vec<Resource> {
    vec![
        resource(
            STATIC_TEXT_URI,
            "static-text",
            "A fixed text resource",
            "text/plain",
        ),
        resource(
            STATIC_BINARY_URI,
            "static-binary",
            "A fixed binary resource (a PNG image)",
            "image/png",
        ),
        resource(
            WATCHED_URI,
            "watched-resource",
            "A resource to subscribe to",
            "text/plain",
        ),
    ]
}

/// The resource templates (`resources/templates/list`).
pub(crate) fn templates() -> Vec<ResourceTemplate> {
    vec![ResourceTemplate {
        uri_template: DATA_TEMPLATE.into(),
        name: "template-data".into(),
        description: Some("Data for an id: test://template/{id}/data".into()),
        mime_type: Some("application/json".into()),
        ..ResourceTemplate::default()
    }]
}

pub(crate) fn text_contents(uri: &str, mime_type: &str, text: String) -> ResourceContents {
    ResourceContents::Text(TextResourceContents {
        uri: uri.into(),
        mime_type: Some(mime_type.into()),
        text,
        ..TextResourceContents::default()
    })
}

/// An embedded resource content block (`"type": "resource"`) of text.
pub(crate) fn embedded_text(uri: &str, mime_type: &str, text: &str) -> ContentBlock {
    ContentBlock::Resource(Box::new(EmbeddedResource {
        resource: text_contents(uri, mime_type, text.into()),
        annotations: None,
        meta: None,
        extra: Default::default(),
    }))
}

/// The `{id}` of a URI of the template, when it is one: a non-empty segment.
fn template_id(uri: &str) -> Option<&str> {
    let id = uri.strip_prefix(DATA_PREFIX)?.strip_suffix(DATA_SUFFIX)?;
    (!id.is_empty() && !id.contains('/')).then_some(id)
}

/// `resources/read`: the contents of `uri`, or resource-not-found.
pub(crate) fn read(uri: &str) -> Result<ReadResourceResult, ErrorObject> {
    let contents = match uri {
        STATIC_TEXT_URI => text_contents(uri, "text/plain", STATIC_TEXT.into()),
        WATCHED_URI => text_contents(uri, "text/plain", WATCHED_TEXT.into()),
        STATIC_BINARY_URI => ResourceContents::Blob(BlobResourceContents {
            uri: uri.into(),
            mime_type: Some("image/png".into()),
            blob: RED_PIXEL_PNG_BASE64.into(),
            ..BlobResourceContents::default()
        }),
        _ => {
            let id = template_id(uri).ok_or_else(|| not_found(uri))?;
            let data =
                json!({ "id": id, "templateTest": true, "data": format!("Data for ID: {id}") });
            text_contents(uri, "application/json", data.to_string())
        }
    };
    Ok(ReadResourceResult {
        contents: vec![contents],
        ..ReadResourceResult::default()
    })
}

fn not_found(uri: &str) -> ErrorObject {
    ErrorObject::new(
        ErrorObject::RESOURCE_NOT_FOUND,
        format!("resource not found: {uri}"),
    )
}

fn argument(name: &str, description: &str) -> PromptArgument {
    PromptArgument {
        name: name.into(),
        description: Some(description.into()),
        required: Some(true),
        ..PromptArgument::default()
    }
}

fn prompt(name: &str, description: &str, arguments: Vec<PromptArgument>) -> Prompt {
    Prompt {
        name: name.into(),
        description: Some(description.into()),
        arguments: (!arguments.is_empty()).then_some(arguments),
        ..Prompt::default()
    }
}

/// The prompts (`prompts/list`).
pub(crate) fn prompts() -> Vec<Prompt> {
    vec![
        prompt(
            "test_simple_prompt",
            "A simple prompt without arguments",
            vec![],
        ),
        prompt(
            "test_prompt_with_arguments",
            "A prompt with two required arguments",
            vec![
                argument("arg1", "First test argument"),
                argument("arg2", "Second test argument"),
            ],
        ),
        prompt(
            "test_prompt_with_embedded_resource",
            "A prompt that embeds a resource",
            vec![argument("resourceUri", "URI of the resource to embed")],
        ),
        prompt("test_prompt_with_image", "A prompt with an image", vec![]),
    ]
}

fn invalid(message: String) -> ErrorObject {
    ErrorObject::new(ErrorObject::INVALID_PARAMS, message)
}

fn user(content: ContentBlock) -> PromptMessage {
    PromptMessage {
        role: Role::User,
        content,
        extra: Default::default(),
    }
}

/// `prompts/get`: the prompt's messages, or invalid-params for an unknown prompt or a
/// missing argument.
pub(crate) fn get_prompt(params: &GetPromptParams) -> Result<GetPromptResult, ErrorObject> {
    let empty = BTreeMap::new();
    let args = params.arguments.as_ref().unwrap_or(&empty);
    let arg = |name: &str| {
        args.get(name)
            .ok_or_else(|| invalid(format!("missing required argument `{name}`")))
    };
    let messages = match params.name.as_str() {
        "test_simple_prompt" => vec![user(ContentBlock::text(
            "This is a simple prompt for testing.",
        ))],
        "test_prompt_with_arguments" => {
            let (arg1, arg2) = (arg("arg1")?, arg("arg2")?);
            vec![user(ContentBlock::text(format!(
                "Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"
            )))]
        }
        "test_prompt_with_embedded_resource" => {
            let uri = arg("resourceUri")?;
            vec![
                user(embedded_text(
                    uri,
                    "text/plain",
                    "Embedded resource content for testing.",
                )),
                user(ContentBlock::text(
                    "Please process the embedded resource above.",
                )),
            ]
        }
        "test_prompt_with_image" => vec![
            user(ContentBlock::image(RED_PIXEL_PNG_BASE64, "image/png")),
            user(ContentBlock::text("Please analyze the image above.")),
        ],
        other => return Err(invalid(format!("unknown prompt: {other}"))),
    };
    Ok(GetPromptResult {
        messages,
        ..GetPromptResult::default()
    })
}

/// `completion/complete`: the values of the argument that start with what was typed.
pub(crate) fn complete(params: &CompleteParams) -> Result<CompleteResult, ErrorObject> {
    let candidates = match (&params.reference, params.argument.name.as_str()) {
        (Reference::Prompt(p), "arg1" | "arg2") if p.name == "test_prompt_with_arguments" => {
            ARGUMENT_VALUES
        }
        (Reference::Resource(r), "id") if r.uri == DATA_TEMPLATE => DATA_IDS,
        (Reference::Prompt(p), argument) => {
            return Err(invalid(format!(
                "nothing to complete for argument `{argument}` of prompt {:?}",
                p.name
            )));
        }
        (Reference::Resource(r), argument) => {
            return Err(invalid(format!(
                "nothing to complete for argument `{argument}` of resource {:?}",
                r.uri
            )));
        }
        (_, argument) => {
            return Err(invalid(format!(
                "nothing to complete for argument `{argument}` of this reference"
            )));
        }
    };
    Ok(completion_of(candidates, &params.argument.value))
}
