//! Routing one decoded message to its handler.

use std::sync::Arc;
use std::thread;

use mcp_proto::jsonrpc::{ErrorObject, Id, Message};
use mcp_proto::types::{
    CallToolParams, CompleteParams, EmptyResult, GetPromptParams, Implementation, InitializeParams,
    InitializeResult, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, LoggingLevel, PaginatedParams, PromptsCapability, ReadResourceParams,
    ResourcesCapability, ServerCapabilities, SetLevelParams, ToolsCapability,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::state::{CLOCK_TICK, CancelToken, Peer, Shared};
use super::wire::CancelledParams;
use super::{LATEST_VERSION, SUPPORTED_VERSIONS, catalog, tools};

pub(crate) fn message(shared: &Arc<Shared>, message: Message) {
    match message {
        Message::Request { id, method, params } => request(shared, id, &method, params.as_deref()),
        Message::Notification { method, params } => {
            notification(shared, &method, params.as_deref())
        }
        Message::Response { id, result } => {
            let reply = serde_json::from_str(result.get())
                .map_err(|e| ErrorObject::new(ErrorObject::PARSE_ERROR, e.to_string()));
            route_reply(shared, &id, reply);
        }
        Message::Error {
            id: Some(id),
            error,
        } => route_reply(shared, &id, Err(error)),
        Message::Error { id: None, error } => {
            shared.diag(&format!("the client reported an error: {error}"));
        }
        _ => {}
    }
}

fn route_reply(shared: &Shared, id: &Id, reply: super::state::Reply) {
    let waiter = shared.lock().waiting.remove(id);
    match waiter {
        // The waiter may have given up (cancelled) just now; then the reply is moot.
        Some(tx) => drop(tx.send(reply)),
        None => shared.diag(&format!("ignored a response to unknown request {id}")),
    }
}

/// Parses `params`; an absent member parses as `null`, so optional params become `None`.
fn params<T: DeserializeOwned>(params: Option<&RawValue>) -> Result<T, ErrorObject> {
    serde_json::from_str(params.map_or("null", RawValue::get))
        .map_err(|e| ErrorObject::new(ErrorObject::INVALID_PARAMS, format!("Invalid params: {e}")))
}

fn request(shared: &Arc<Shared>, id: Id, method: &str, raw: Option<&RawValue>) {
    let initialized = shared.lock().peer.is_some();
    if !initialized && !matches!(method, "initialize" | "ping") {
        let error = ErrorObject::new(
            ErrorObject::INVALID_REQUEST,
            format!("{method} before initialize: send initialize first"),
        );
        return shared.out.error(Some(&id), &error);
    }
    let outcome = match method {
        "initialize" => params(raw).and_then(|p| answer(&initialize(shared, p))),
        "ping" => answer(&EmptyResult::default()),
        "tools/list" => params(raw)
            .and_then(|p| list_tools(shared, p))
            .and_then(|r| answer(&r)),
        // Answered by the tool's thread.
        "tools/call" => params(raw)
            .and_then(|p| call_tool(shared, id.clone(), p))
            .map(|()| None),
        "resources/list" => answer(&ListResourcesResult {
            resources: catalog::resources(),
            ..ListResourcesResult::default()
        }),
        "resources/templates/list" => answer(&ListResourceTemplatesResult {
            resource_templates: catalog::templates(),
            ..ListResourceTemplatesResult::default()
        }),
        "resources/read" => params::<ReadResourceParams>(raw)
            .and_then(|p| match p.uri.as_str() {
                catalog::CLOCK_URI => Ok(catalog::clock(shared.lock().clock)),
                uri => catalog::read(uri),
            })
            .and_then(|r| answer(&r)),
        "resources/subscribe" | "resources/unsubscribe" => params::<ReadResourceParams>(raw)
            .and_then(|p| subscription(shared, &p.uri, method == "resources/subscribe"))
            .and_then(|()| answer(&EmptyResult::default())),
        "prompts/list" => answer(&ListPromptsResult {
            prompts: catalog::prompts(),
            ..ListPromptsResult::default()
        }),
        "prompts/get" => params::<GetPromptParams>(raw)
            .and_then(|p| catalog::get_prompt(&p))
            .and_then(|r| answer(&r)),
        "completion/complete" => params::<CompleteParams>(raw)
            .and_then(|p| catalog::complete(&p))
            .and_then(|r| answer(&r)),
        "logging/setLevel" => params::<SetLevelParams>(raw).and_then(|p| {
            shared.lock().log_level = Some(p.level);
            answer(&EmptyResult::default())
        }),
        other => Err(ErrorObject::method_not_found(other)),
    };
    match outcome {
        Ok(Some(result)) => shared.out.respond(&id, &result),
        Ok(None) => {}
        Err(error) => shared.out.error(Some(&id), &error),
    }
    if method == "logging/setLevel" {
        let level = shared.lock().log_level;
        if let Some(level) = level {
            let name = serde_json::to_value(level).unwrap_or_default();
            shared.log(
                LoggingLevel::Info,
                "demo",
                format!("log level set to {}", name.as_str().unwrap_or("?")),
            );
        }
    }
}

/// Serializes a typed result for the response.
fn answer<T: Serialize>(result: &T) -> Result<Option<Value>, ErrorObject> {
    serde_json::to_value(result)
        .map(Some)
        .map_err(|e| ErrorObject::new(ErrorObject::INTERNAL_ERROR, e.to_string()))
}

fn notification(shared: &Shared, method: &str, raw: Option<&RawValue>) {
    match method {
        "notifications/cancelled" => match params::<CancelledParams>(raw) {
            Ok(CancelledParams {
                request_id: Some(id),
                reason,
            }) => {
                let token = shared.lock().running.get(&id).cloned();
                match token {
                    Some(token) => {
                        let why = reason.as_deref().unwrap_or("no reason given");
                        shared.diag(&format!("request {id} cancelled: {why}"));
                        token.cancel();
                    }
                    // Too late or never ours: the spec says to ignore it.
                    None => shared.diag(&format!("cancel for {id}, which is not running")),
                }
            }
            Ok(_) => shared.diag("notifications/cancelled without a requestId"),
            Err(e) => shared.diag(&format!("malformed notifications/cancelled: {e}")),
        },
        "notifications/initialized" => {}
        other => shared.diag(&format!("ignored notification {other}")),
    }
}

fn initialize(shared: &Shared, params: InitializeParams) -> InitializeResult {
    let asked = params.protocol_version.as_str();
    let version = if SUPPORTED_VERSIONS.contains(&asked) {
        asked
    } else {
        LATEST_VERSION
    };
    shared.lock().peer = Some(Peer {
        protocol_version: version.to_owned(),
        elicitation: params.capabilities.elicitation.is_some(),
        sampling: params.capabilities.sampling.is_some(),
        roots: params.capabilities.roots.is_some(),
    });
    InitializeResult {
        protocol_version: version.to_owned(),
        capabilities: ServerCapabilities {
            logging: Some(Map::new()),
            completions: Some(Map::new()),
            prompts: Some(PromptsCapability {
                list_changed: Some(false),
                ..PromptsCapability::default()
            }),
            resources: Some(ResourcesCapability {
                subscribe: Some(true),
                list_changed: Some(false),
                ..ResourcesCapability::default()
            }),
            tools: Some(ToolsCapability {
                list_changed: Some(false),
                ..ToolsCapability::default()
            }),
            ..ServerCapabilities::default()
        },
        server_info: Implementation {
            title: Some("MCP demo server".into()),
            ..Implementation::new("mcp-demo", env!("CARGO_PKG_VERSION"))
        },
        instructions: Some(
            "A demo server: try the tools echo, add, slow (progress), ask (elicitation), \
             image, fail, model (sampling) and roots, the resources demo://readme and \
             demo://clock (subscribe to it: it changes every second) and the prompt \
             summarize."
                .into(),
        ),
        ..InitializeResult::default()
    }
}

fn list_tools(
    shared: &Shared,
    params: Option<PaginatedParams>,
) -> Result<ListToolsResult, ErrorObject> {
    let all = tools::listed(shared.lock().peer.as_ref());
    let start = match params.and_then(|p| p.cursor) {
        None => 0,
        Some(cursor) => cursor
            .parse::<usize>()
            .ok()
            .filter(|&n| n < all.len())
            .ok_or_else(|| {
                ErrorObject::new(
                    ErrorObject::INVALID_PARAMS,
                    format!("invalid cursor {cursor:?}"),
                )
            })?,
    };
    let end = start
        .saturating_add(shared.config.page_size.max(1))
        .min(all.len());
    Ok(ListToolsResult {
        next_cursor: (end < all.len()).then(|| end.to_string()),
        tools: all.into_iter().skip(start).take(end - start).collect(),
        ..ListToolsResult::default()
    })
}

fn call_tool(shared: &Arc<Shared>, id: Id, params: CallToolParams) -> Result<(), ErrorObject> {
    let token = CancelToken::default();
    {
        let mut inner = shared.lock();
        if inner.running.contains_key(&id) {
            return Err(ErrorObject::new(
                ErrorObject::INVALID_REQUEST,
                format!("request id {id} is already in use by a running call"),
            ));
        }
        inner.running.insert(id.clone(), token.clone());
    }
    let shared = Arc::clone(shared);
    thread::spawn(move || {
        let outcome = tools::call(&shared, &params, &token);
        let mut inner = shared.lock();
        inner.running.remove(&id);
        shared.idle.notify_all();
        // Decided under the lock: a cancel is either seen here or finds the call gone.
        if token.is_cancelled() {
            return;
        }
        match outcome {
            Ok(Some(result)) => shared.out.respond(&id, &result),
            Ok(None) => {}
            Err(error) => shared.out.error(Some(&id), &error),
        }
    });
    Ok(())
}

fn subscription(shared: &Arc<Shared>, uri: &str, subscribe: bool) -> Result<(), ErrorObject> {
    if !catalog::exists(uri) {
        return Err(catalog::not_found(uri));
    }
    let mut inner = shared.lock();
    if subscribe {
        inner.subscriptions.insert(uri.to_owned());
    } else {
        inner.subscriptions.remove(uri);
    }
    if uri == catalog::CLOCK_URI && subscribe && inner.ticker.is_none() && !inner.closed {
        let token = CancelToken::default();
        inner.ticker = Some(token.clone());
        drop(inner);
        let shared = Arc::clone(shared);
        thread::spawn(move || tick_clock(&shared, &token));
    }
    Ok(())
}

/// Ticks `demo://clock` every [`CLOCK_TICK`] and tells the client
/// (`notifications/resources/updated`) while it is subscribed; ends when it is unsubscribed,
/// or at the end of input (which cancels `token`).
fn tick_clock(shared: &Shared, token: &CancelToken) {
    while token.sleep(CLOCK_TICK) {
        let mut inner = shared.lock();
        if inner.closed || !inner.subscriptions.contains(catalog::CLOCK_URI) {
            inner.ticker = None;
            return;
        }
        inner.clock += 1;
        drop(inner);
        shared.out.notify(
            "notifications/resources/updated",
            &serde_json::json!({ "uri": catalog::CLOCK_URI }),
        );
    }
}
