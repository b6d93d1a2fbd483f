//! The demo server's answers: the [`ServerHandler`] the server driver calls for each client
//! request (the session itself answers `initialize`, `ping` and `logging/setLevel`).

use std::sync::Arc;
use std::thread;

use mcp_proto::jsonrpc::{ErrorObject, to_raw};
use mcp_proto::server::{ClientRequestId, Diagnostic};
use mcp_proto::session::CloseReason;
use mcp_proto::types::v2026::ListenFilter;
use mcp_proto::types::{
    CallToolParams, CompleteParams, EmptyResult, GetPromptParams, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, LoggingLevel,
    PaginatedParams, ReadResourceParams,
};
use mcp_tokio::HandlerFuture;
use mcp_tokio::server::{ListenEnd, RequestContext, RequestOutcome, ServerHandle, ServerHandler};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

use super::state::{CLOCK_TICK, CancelToken, Shared};
use super::{catalog, tools};

pub(crate) struct DemoHandler {
    pub(crate) shared: Arc<Shared>,
}

impl ServerHandler for DemoHandler {
    fn on_request(
        &self,
        method: String,
        params: Option<Box<RawValue>>,
        context: RequestContext,
    ) -> HandlerFuture<'_, RequestOutcome> {
        let shared = self.shared.clone();
        Box::pin(async move { request(&shared, &method, params.as_deref(), context).await })
    }

    fn on_notification(&self, method: &str, _params: Option<&RawValue>, _server: &ServerHandle) {
        self.shared.diag(&format!("ignored notification {method}"));
    }

    fn on_log_level(&self, level: LoggingLevel, _server: &ServerHandle) {
        self.shared.lock().log_level = Some(level);
        let name = serde_json::to_value(level).unwrap_or_default();
        self.shared.log(
            LoggingLevel::Info,
            "demo",
            format!("log level set to {}", name.as_str().unwrap_or("?")),
        );
    }

    /// A 2026-07-28 listen: the resources it subscribed are watched while it is open (a
    /// subscribed `demo://clock` starts ticking).
    fn on_listen_opened(
        &self,
        id: ClientRequestId,
        _requested: &ListenFilter,
        honoured: &ListenFilter,
        _server: &ServerHandle,
    ) {
        let uris = honoured.resource_subscriptions.clone().unwrap_or_default();
        self.shared.diag(&format!("listen {id} opened: {uris:?}"));
        let mut inner = self.shared.lock();
        inner.listens.insert(id, uris);
        start_ticker(&self.shared, inner);
    }

    fn on_listen_closed(&self, id: ClientRequestId, end: &ListenEnd, _server: &ServerHandle) {
        self.shared.diag(&format!("listen {id} ended: {end:?}"));
        // The clock's ticker sees it is no longer watched at its next tick.
        self.shared.lock().listens.remove(&id);
    }

    fn on_closed(&self, _reason: &CloseReason, _server: &ServerHandle) {
        super::http::end_session(&self.shared);
    }

    fn on_diagnostic(&self, diagnostic: &Diagnostic) {
        let what = match diagnostic {
            Diagnostic::Undecodable(e) => format!("ignored input: {e}"),
            Diagnostic::LineTooLong { discarded, limit } => {
                format!("ignored input: a line of {discarded} bytes exceeds {limit}")
            }
            Diagnostic::BeforeInitialize { method } => {
                format!("{method} before initialize: refused")
            }
            Diagnostic::UnknownResponse { id } => {
                format!("ignored a response to unknown request {id}")
            }
            Diagnostic::UncorrelatedError(error) => {
                format!("the client reported an error: {error}")
            }
            other => format!("odd input: {other:?}"),
        };
        self.shared.diag(&what);
    }
}

/// Parses `params`; an absent member parses as `null`, so optional params become `None`.
fn params<T: DeserializeOwned>(params: Option<&RawValue>) -> Result<T, ErrorObject> {
    serde_json::from_str(params.map_or("null", RawValue::get))
        .map_err(|e| ErrorObject::new(ErrorObject::INVALID_PARAMS, format!("Invalid params: {e}")))
}

/// Serializes a typed result for the answer.
fn answer<T: Serialize>(result: &T) -> RequestOutcome {
    to_raw(result).map_err(|e| ErrorObject::new(ErrorObject::INTERNAL_ERROR, e.to_string()))
}

async fn request(
    shared: &Arc<Shared>,
    method: &str,
    raw: Option<&RawValue>,
    context: RequestContext,
) -> RequestOutcome {
    match method {
        "tools/list" => list_tools(shared, params(raw)?).and_then(|r| answer(&r)),
        "tools/call" => call_tool(shared, params(raw)?, context).await,
        "resources/list" => answer(&ListResourcesResult {
            resources: catalog::resources(),
            ..ListResourcesResult::default()
        }),
        "resources/templates/list" => answer(&ListResourceTemplatesResult {
            resource_templates: catalog::templates(),
            ..ListResourceTemplatesResult::default()
        }),
        "resources/read" => {
            let p: ReadResourceParams = params(raw)?;
            let result = match p.uri.as_str() {
                catalog::CLOCK_URI => Ok(catalog::clock(shared.lock().clock)),
                uri => catalog::read(uri),
            }?;
            answer(&result)
        }
        "resources/subscribe" | "resources/unsubscribe" => {
            let p: ReadResourceParams = params(raw)?;
            subscription(shared, &p.uri, method == "resources/subscribe")?;
            answer(&EmptyResult::default())
        }
        "prompts/list" => answer(&ListPromptsResult {
            prompts: catalog::prompts(),
            ..ListPromptsResult::default()
        }),
        "prompts/get" => answer(&catalog::get_prompt(&params::<GetPromptParams>(raw)?)?),
        "completion/complete" => answer(&catalog::complete(&params::<CompleteParams>(raw)?)?),
        other => Err(ErrorObject::method_not_found(other)),
    }
}

fn list_tools(
    shared: &Shared,
    params: Option<PaginatedParams>,
) -> Result<ListToolsResult, ErrorObject> {
    let all = tools::listed(shared.peer().as_ref());
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

/// Cancels a tool thread's token when the call's future is dropped (the client cancelled
/// the call or went away), so the thread stops at its next step.
struct CancelOnDrop(CancelToken);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

/// Runs the tool on a thread of its own (the tools sleep and wait for the client's answers
/// synchronously), so a slow tool never blocks the rest.
async fn call_tool(
    shared: &Arc<Shared>,
    params: CallToolParams,
    context: RequestContext,
) -> RequestOutcome {
    let token = CancelToken::for_request(context.clone());
    let _cancel_on_drop = CancelOnDrop(token.clone());
    let (tx, rx) = tokio::sync::oneshot::channel();
    let thread_shared = Arc::clone(shared);
    thread::spawn(move || {
        let outcome = tools::call(&thread_shared, &params, &token, &context);
        // The call's future may be gone (cancelled): then nobody needs the outcome.
        let _ = tx.send(outcome);
    });
    match rx.await {
        Ok(Ok(Some(result))) => answer(&result),
        Ok(Ok(None)) => Err(ErrorObject::new(
            ErrorObject::INTERNAL_ERROR,
            "the tool call was cancelled",
        )),
        Ok(Err(error)) => Err(error),
        Err(_) => Err(ErrorObject::new(
            ErrorObject::INTERNAL_ERROR,
            "the tool's thread failed",
        )),
    }
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
    start_ticker(shared, inner);
    Ok(())
}

/// Starts the clock's ticker when `demo://clock` is watched and no ticker runs.
fn start_ticker(shared: &Arc<Shared>, mut inner: std::sync::MutexGuard<'_, super::state::Inner>) {
    if inner.watched(catalog::CLOCK_URI) && inner.ticker.is_none() && !inner.closed {
        let token = CancelToken::default();
        inner.ticker = Some(token.clone());
        drop(inner);
        let shared = Arc::clone(shared);
        thread::spawn(move || tick_clock(&shared, &token));
    }
}

/// Ticks `demo://clock` every [`CLOCK_TICK`] and tells the client
/// (`notifications/resources/updated`: in the 2026-07-28 era on each listen that subscribed
/// it) while it is watched; ends when nobody watches it any more, or when the session ends
/// (which cancels `token`).
fn tick_clock(shared: &Shared, token: &CancelToken) {
    while token.sleep(CLOCK_TICK) {
        let mut inner = shared.lock();
        if inner.closed || !inner.watched(catalog::CLOCK_URI) {
            inner.ticker = None;
            return;
        }
        inner.clock += 1;
        drop(inner);
        if let Some(server) = shared.server()
            && let Err(e) = server.notify_resource_updated(catalog::CLOCK_URI)
        {
            shared.diag(&format!("clock update not sent: {e}"));
        }
    }
}
