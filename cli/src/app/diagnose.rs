//! Errors by class, from the server's own lists: a tool, prompt or resource that is not
//! there (with "did you mean"), arguments the server rejected (with the required ones), and
//! tool arguments typed from the tool's input schema.
//!
//! `mcp call` lists the tools before calling (see [`tool_arguments`]): one `tools/list` (all
//! pages) buys the schema to type `key=value` pairs, a local check of required arguments,
//! and the names to suggest. When the listing fails the call goes ahead untyped. A failed
//! call is then classified ([`call_failed`], [`tool_result_error`]): a name the list does
//! not have is `tool_not_found`, whatever error the server chose for it (a JSON-RPC error, or
//! `isError` with "unknown tool"). `prompt` and `read` list only after a JSON-RPC error
//! ([`prompt_failed`], [`read_failed`]), so a successful request costs nothing extra.

use mcp_proto::jsonrpc::ErrorObject;
use mcp_proto::types::{CallToolResult, Prompt, PromptArgument, Tool};
use mcp_tokio::{Client, Error};
use serde_json::{Map, Value};

use super::connect::call_error;
use crate::args::ToolArgs;
use crate::args::typed::{ArgumentError, required_of, signature};
use crate::exit::{CliError, Missing, Rejected, strip_rpc_prefix};
use crate::suggest::did_you_mean;

/// The arguments for `tool`, typed from its input schema when `tools` lists it.
///
/// # Errors
///
/// A local error (exit 2, nothing sent) for unusable arguments; see [`argument_error`].
pub fn tool_arguments(
    tool: &str,
    args: &ToolArgs,
    tools: Option<&[Tool]>,
) -> Result<Map<String, Value>, CliError> {
    let schema = tools
        .and_then(|t| t.iter().find(|t| t.name == tool))
        .map(|t| &t.input_schema);
    args.typed(schema)
        .map_err(|e| argument_error(tool, schema, e))
}

/// An [`ArgumentError`] of `tool`'s arguments as the CLI reports it.
pub fn argument_error(
    tool: &str,
    schema: Option<&Map<String, Value>>,
    e: ArgumentError,
) -> CliError {
    match e {
        ArgumentError::Invalid(message) => CliError::InvalidArgument {
            message,
            suggestions: Vec::new(),
        },
        ArgumentError::File { path, reason } => CliError::File { path, reason },
        ArgumentError::Unknown {
            key,
            suggestions,
            known,
        } => CliError::InvalidArgument {
            message: format!(
                "`{tool}` has no argument `{key}` (it takes: {})",
                if known.is_empty() {
                    "none".to_owned()
                } else {
                    known.join(", ")
                }
            ),
            suggestions,
        },
        ArgumentError::Missing { missing, required } => CliError::MissingArguments {
            tool: tool.to_owned(),
            missing,
            required,
            signature: schema.map(signature).unwrap_or_default(),
        },
    }
}

/// Classifies a failed `tools/call` of `tool`, given the listing made before the call.
pub fn call_failed(client: &Client, tool: &str, tools: Option<&[Tool]>, e: Error) -> CliError {
    let error = call_error(e);
    let CliError::Remote {
        method,
        error: remote,
    } = &error
    else {
        return error;
    };
    let names = tools.map(|t| t.iter().map(|t| t.name.as_str()).collect::<Vec<_>>());
    match tools.map(|t| t.iter().find(|t| t.name == tool)) {
        // Not in the list: whatever error the server chose for it, the tool is not there.
        Some(None) => not_found(client, Missing::Tool, tool, Some(&remote.message), names),
        Some(Some(known)) if remote.code == ErrorObject::INVALID_PARAMS => {
            CliError::InvalidParams(Box::new(Rejected {
                method: method.clone(),
                name: tool.to_owned(),
                message: remote.message.clone(),
                data: raw_data(remote),
                required: required_of(&known.input_schema),
                signature: signature(&known.input_schema),
            }))
        }
        None if says_not_found(&remote.message, Missing::Tool) => {
            not_found(client, Missing::Tool, tool, Some(&remote.message), None)
        }
        _ => error,
    }
}

/// A tool result with `isError` that is really a protocol error: the tool does not exist
/// (its text says "unknown tool" or the like, and the name is not in the listing when there
/// is one: a server may hide a tool it still runs, and then its own failure stands), or its text
/// is a -32602 (`MCP error -32602: Input validation error: …`, as TypeScript servers report
/// invalid arguments) for a listed tool. `None` for a real tool failure.
pub fn tool_result_error(
    client: &Client,
    tool: &str,
    tools: Option<&[Tool]>,
    result: &CallToolResult,
    text: &str,
) -> Option<CliError> {
    if result.is_error != Some(true) {
        return None;
    }
    let names = tools.map(|t| t.iter().map(|t| t.name.as_str()).collect::<Vec<_>>());
    match tools.map(|t| t.iter().find(|t| t.name == tool)) {
        Some(None) if says_not_found(text, Missing::Tool) => {
            Some(not_found(client, Missing::Tool, tool, Some(text), names))
        }
        Some(None) => None,
        Some(Some(known)) => {
            let message = strip_rpc_prefix(text, ErrorObject::INVALID_PARAMS);
            (message.len() < text.len()).then(|| {
                CliError::InvalidParams(Box::new(Rejected {
                    method: "tools/call".into(),
                    name: tool.to_owned(),
                    message: message.to_owned(),
                    data: None,
                    required: required_of(&known.input_schema),
                    signature: signature(&known.input_schema),
                }))
            })
        }
        None if says_not_found(text, Missing::Tool) => {
            Some(not_found(client, Missing::Tool, tool, Some(text), None))
        }
        None => None,
    }
}

/// Classifies a failed `prompts/get` of `name` (with the arguments `given`), listing the
/// prompts only now. A listed prompt whose required arguments were not all given is
/// `missing_argument`, whatever error the server chose for it.
pub async fn prompt_failed(client: &Client, name: &str, given: &[&str], e: Error) -> CliError {
    let error = call_error(e);
    let CliError::Remote {
        method,
        error: remote,
    } = &error
    else {
        return error;
    };
    let prompts: Option<Vec<Prompt>> = match client.capabilities().prompts {
        Some(_) => client.list_prompts().await.ok(),
        None => None,
    };
    let names = prompts
        .as_ref()
        .map(|p| p.iter().map(|p| p.name.as_str()).collect::<Vec<_>>());
    let listed = prompts.as_ref().map(|p| p.iter().find(|p| p.name == name));
    let arguments = listed
        .flatten()
        .and_then(|p| p.arguments.as_deref())
        .unwrap_or_default();
    let required: Vec<String> = arguments
        .iter()
        .filter(|a| a.required == Some(true))
        .map(|a| a.name.clone())
        .collect();
    let missing: Vec<String> = required
        .iter()
        .filter(|r| !given.contains(&r.as_str()))
        .cloned()
        .collect();
    match listed {
        Some(None) => not_found(client, Missing::Prompt, name, Some(&remote.message), names),
        Some(Some(_)) if !missing.is_empty() => CliError::MissingArguments {
            tool: name.to_owned(),
            missing,
            required,
            signature: prompt_signature(arguments),
        },
        Some(Some(_)) if remote.code == ErrorObject::INVALID_PARAMS => {
            CliError::InvalidParams(Box::new(Rejected {
                method: method.clone(),
                name: name.to_owned(),
                message: remote.message.clone(),
                data: raw_data(remote),
                required,
                signature: prompt_signature(arguments),
            }))
        }
        None if says_not_found(&remote.message, Missing::Prompt) => {
            not_found(client, Missing::Prompt, name, Some(&remote.message), None)
        }
        _ => error,
    }
}

/// Classifies a failed `completion/complete` of prompt `name`'s argument, listing the prompts
/// only now: a prompt the listing does not have is `prompt_not_found`, with "did you mean"
/// (as `call ecko` and `prompt sumarize` get); otherwise the server's own error stands.
pub async fn complete_failed(client: &Client, name: &str, e: Error) -> CliError {
    let error = call_error(e);
    let CliError::Remote { error: remote, .. } = &error else {
        return error;
    };
    if client.capabilities().prompts.is_none() {
        return error;
    }
    match client.list_prompts().await {
        Ok(prompts) if !prompts.iter().any(|p| p.name == name) => {
            let names = prompts.iter().map(|p| p.name.as_str()).collect();
            not_found(
                client,
                Missing::Prompt,
                name,
                Some(&remote.message),
                Some(names),
            )
        }
        _ => error,
    }
}

/// Classifies a failed `resources/read` of `uri`, listing the resources and templates only
/// now. A URI that one of the templates matches is not "not found" by the list: the
/// server's own error stands.
pub async fn read_failed(client: &Client, uri: &str, e: Error) -> CliError {
    let error = call_error(e);
    let CliError::Remote { error: remote, .. } = &error else {
        return error;
    };
    let listed = match client.capabilities().resources {
        Some(_) => match client.list_resources().await {
            Ok(resources) => {
                // Templates are optional: a server without them may not know the method.
                let templates = client.list_resource_templates().await.unwrap_or_default();
                Some((resources, templates))
            }
            Err(_) => None,
        },
        None => None,
    };
    match &listed {
        Some((resources, templates)) => {
            let known = resources.iter().any(|r| r.uri == uri)
                || templates
                    .iter()
                    .any(|t| matches_template(uri, &t.uri_template));
            if known {
                return error;
            }
            let names: Vec<&str> = resources
                .iter()
                .map(|r| r.uri.as_str())
                .chain(templates.iter().map(|t| t.uri_template.as_str()))
                .collect();
            not_found(
                client,
                Missing::Resource,
                uri,
                Some(&remote.message),
                Some(names),
            )
        }
        None if remote.code == ErrorObject::RESOURCE_NOT_FOUND
            || says_not_found(&remote.message, Missing::Resource) =>
        {
            not_found(client, Missing::Resource, uri, Some(&remote.message), None)
        }
        None => error,
    }
}

/// `text, style?`: a prompt's arguments, optional ones marked `?`.
fn prompt_signature(arguments: &[PromptArgument]) -> String {
    arguments
        .iter()
        .map(|a| {
            if a.required == Some(true) {
                a.name.clone()
            } else {
                format!("{}?", a.name)
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn not_found(
    client: &Client,
    kind: Missing,
    name: &str,
    said: Option<&str>,
    names: Option<Vec<&str>>,
) -> CliError {
    CliError::NotFound {
        kind,
        name: name.to_owned(),
        server: client.server_info().name.clone(),
        said: said
            .map(|s| excerpt(without_rpc_prefix(s)))
            .filter(|s| !s.trim().is_empty()),
        suggestions: names.map(|n| did_you_mean(name, n)).unwrap_or_default(),
    }
}

/// The most characters of a server's message repeated in a not-found error.
const MAX_SAID: usize = 300;

/// The first [`MAX_SAID`] characters of `message`, with `…` when cut.
fn excerpt(message: &str) -> String {
    match message.char_indices().nth(MAX_SAID) {
        Some((cut, _)) => format!("{}…", &message[..cut]),
        None => message.to_owned(),
    }
}

/// A message without any leading `MCP error <code>: ` (the code of a not-found says nothing
/// more to a person than the message does).
fn without_rpc_prefix(message: &str) -> &str {
    let mut rest = message.trim_start();
    while let Some(tail) = rest.strip_prefix("MCP error ") {
        let digits = tail.trim_start_matches('-');
        let after = digits.trim_start_matches(|c: char| c.is_ascii_digit());
        match after.strip_prefix(':') {
            // At least one digit was there.
            Some(text) if after.len() < digits.len() => rest = text.trim_start(),
            _ => break,
        }
    }
    rest
}

fn raw_data(error: &ErrorObject) -> Option<Value> {
    error
        .data
        .as_ref()
        .and_then(|d| serde_json::from_str(d.get()).ok())
}

/// Whether a server's message says that the tool (prompt, resource) does not exist:
/// `Unknown tool: x`, `Tool x not found`, `no such prompt`, `Resource x does not exist`.
pub fn says_not_found(message: &str, kind: Missing) -> bool {
    let m = message.to_lowercase();
    let noun = kind.noun();
    m.contains(&format!("unknown {noun}"))
        || m.contains(&format!("no such {noun}"))
        || (m.contains(noun)
            && ["not found", "does not exist", "doesn't exist", "not exist"]
                .iter()
                .any(|w| m.contains(w)))
}

/// Whether `uri` fits an RFC 6570 template (each `{…}` expression matches one or more
/// characters; `{+…}` and `{#…}` may span `/`, the others may not).
pub fn matches_template(uri: &str, template: &str) -> bool {
    let mut pieces: Vec<(bool, &str)> = Vec::new(); // (is_expression, text)
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        pieces.push((false, &rest[..open]));
        pieces.push((true, &rest[open + 1..open + close]));
        rest = &rest[open + close + 1..];
    }
    pieces.push((false, rest));
    matches_pieces(uri, &pieces)
}

fn matches_pieces(uri: &str, pieces: &[(bool, &str)]) -> bool {
    match pieces.split_first() {
        None => uri.is_empty(),
        Some(((false, literal), rest)) => uri
            .strip_prefix(literal)
            .is_some_and(|tail| matches_pieces(tail, rest)),
        Some(((true, expression), rest)) => {
            let spans_slash = expression.starts_with('+') || expression.starts_with('#');
            // Try every split point: expressions are short, URIs too.
            (1..=uri.len())
                .filter(|&i| uri.is_char_boundary(i))
                .take_while(|&i| spans_slash || !uri[..i].contains('/'))
                .any(|i| matches_pieces(&uri[i..], rest))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_found_messages_of_common_servers() {
        for m in [
            "Unknown tool: ecko",
            "MCP error -32602: Tool ecko not found",
            "Tool 'ecko' does not exist",
            "no such tool",
        ] {
            assert!(says_not_found(m, Missing::Tool), "{m}");
        }
        assert!(says_not_found("Unknown prompt: x", Missing::Prompt));
        assert!(says_not_found(
            "Resource file:///x not found",
            Missing::Resource
        ));
        assert!(!says_not_found("argument `b` is required", Missing::Tool));
        assert!(!says_not_found("file not found", Missing::Tool));
    }

    #[test]
    fn long_messages_are_cut() {
        assert_eq!(excerpt("short"), "short");
        let long = "é".repeat(MAX_SAID + 5);
        let cut = excerpt(&long);
        assert_eq!(cut.chars().count(), MAX_SAID + 1);
        assert!(cut.ends_with('…'));
    }

    #[test]
    fn any_rpc_prefix_goes_from_a_not_found_message() {
        assert_eq!(
            without_rpc_prefix("MCP error -32602: Tool x not found"),
            "Tool x not found"
        );
        assert_eq!(
            without_rpc_prefix("MCP error 0: MCP error -1: gone"),
            "gone"
        );
        assert_eq!(without_rpc_prefix("MCP error x: kept"), "MCP error x: kept");
        assert_eq!(without_rpc_prefix("MCP error : kept"), "MCP error : kept");
    }

    #[test]
    fn templates_match_like_rfc_6570_simple_expressions() {
        assert!(matches_template("demo://notes/x", "demo://notes/{name}"));
        assert!(!matches_template("demo://notes/", "demo://notes/{name}"));
        assert!(!matches_template("demo://notes/a/b", "demo://notes/{name}"));
        assert!(matches_template("file:///a/b/c.txt", "file:///{+path}"));
        assert!(matches_template("db://t/1/rows", "db://{table}/{id}/rows"));
        assert!(!matches_template("db://t/1/cols", "db://{table}/{id}/rows"));
        assert!(matches_template("plain://x", "plain://x"));
        assert!(!matches_template("demo://readm", "demo://readme"));
    }
}
