//! The conformance fixtures behind `mcp demo-server --conformance`: the tools, prompts and
//! resources that the official conformance suite's server scenarios
//! (`@modelcontextprotocol/conformance server --url URL`) call, with the answers they expect.
//!
//! This catalog replaces the demo's own (the normal demo's `tools/list` never changes): a
//! server started with `--conformance` (or with `MCP_DEMO_CONFORMANCE=1` in its environment),
//! over stdio or with `--listen`, offers exactly these, every list in one page. Over
//! Streamable HTTP its priming events carry `retry: 500` and `test_reconnection` closes its
//! call's SSE stream before it answers (SEP-1699 polling).
//!
//! | method | fixtures |
//! | --- | --- |
//! | `tools/call` | `test_simple_text`, `test_image_content`, `test_audio_content`, `test_embedded_resource`, `test_multiple_content_types`, `test_tool_with_logging` (3 log messages, 50 ms apart), `test_tool_with_progress` (0, 50, 100 of 100), `test_error_handling` (`isError`), `test_sampling`, `test_elicitation`, `test_elicitation_sep1034_defaults`, `test_elicitation_sep1330_enums`, `json_schema_2020_12_tool`, `test_reconnection` |
//! | `resources/*` | `test://static-text`, `test://static-binary`, `test://watched-resource` (subscribable), the template `test://template/{id}/data` |
//! | `prompts/*` | `test_simple_prompt`, `test_prompt_with_arguments {arg1, arg2}`, `test_prompt_with_embedded_resource {resourceUri}`, `test_prompt_with_image` |
//! | `completion/complete` | `arg1` / `arg2` of `test_prompt_with_arguments`, `id` of the template |
//!
//! The tools are async and run on the request's own task: cancelling the call drops them
//! (and withdraws a sampling or elicitation request they were waiting on). Requests to the
//! client go through the call's [`RequestContext`], so each session asks its own client.

mod catalog;
mod tools;

#[cfg(test)]
mod tests;

use std::collections::BTreeSet;
use std::sync::Mutex;

use mcp_proto::jsonrpc::{ErrorObject, to_raw};
use mcp_proto::server::{Diagnostic, ServerConfig};
use mcp_proto::session::ProtocolVersion;
use mcp_proto::types::{
    CallToolParams, CompleteParams, EmptyResult, GetPromptParams, Implementation,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    PaginatedParams, ReadResourceParams,
};
use mcp_tokio::HandlerFuture;
use mcp_tokio::server::{RequestContext, RequestOutcome, ServerHandle, ServerHandler};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

use super::state::lock;

/// The `retry` delay the conformance server tells clients to wait before they reconnect
/// after it closed a stream (`test_reconnection`).
pub(crate) const RECONNECT_DELAY: std::time::Duration = std::time::Duration::from_millis(500);

/// The environment variable that turns the demo server into the conformance server (`1`,
/// `true` or `yes`), for hosts that start `mcp demo-server` without flags.
pub const CONFORMANCE_ENV: &str = "MCP_DEMO_CONFORMANCE";

/// The session's configuration for the conformance fixtures: every capability the scenarios
/// use (tools, resources with subscriptions, prompts, completions, logging).
pub(crate) fn server_config() -> ServerConfig {
    let info = Implementation {
        title: Some("MCP demo server (conformance fixtures)".into()),
        ..Implementation::new("mcp-demo-conformance", env!("CARGO_PKG_VERSION"))
    };
    // The suite's server scenarios (0.1.16) speak the initialize era.
    ServerConfig::new(info)
        .with_versions(ProtocolVersion::INITIALIZE_ERA)
        // The demo's own: every capability the scenarios use.
        .with_capabilities(super::capabilities())
        .with_instructions(
            "The fixtures of the MCP conformance suite's server scenarios: test_* tools, \
             test:// resources and test_* prompts.",
        )
}

/// The [`ServerHandler`] of the conformance fixtures; one per session (it holds the
/// session's resource subscriptions).
#[derive(Debug, Default)]
pub(crate) struct ConformanceHandler {
    /// Suppresses the diagnostics on stderr.
    quiet: bool,
    /// The URIs the client subscribed to.
    subscriptions: Mutex<BTreeSet<String>>,
}

impl ConformanceHandler {
    /// A handler with no subscriptions; `quiet` silences its stderr diagnostics.
    pub(crate) fn new(quiet: bool) -> Self {
        ConformanceHandler {
            quiet,
            subscriptions: Mutex::default(),
        }
    }

    /// The URIs subscribed to now, in order.
    #[cfg(test)]
    pub(crate) fn subscriptions(&self) -> Vec<String> {
        lock(&self.subscriptions).iter().cloned().collect()
    }

    fn diag(&self, message: &str) {
        if !self.quiet {
            eprintln!("mcp demo-server: {message}");
        }
    }

    async fn request(
        &self,
        method: &str,
        raw: Option<&RawValue>,
        context: RequestContext,
    ) -> RequestOutcome {
        match method {
            "tools/list" => {
                only_first_page(params::<Option<PaginatedParams>>(raw)?)?;
                answer(&ListToolsResult {
                    tools: tools::definitions(),
                    ..ListToolsResult::default()
                })
            }
            "tools/call" => {
                let call: CallToolParams = params(raw)?;
                answer(&tools::call(&call, &context).await?)
            }
            "resources/list" => {
                only_first_page(params::<Option<PaginatedParams>>(raw)?)?;
                answer(&ListResourcesResult {
                    resources: catalog::resources(),
                    ..ListResourcesResult::default()
                })
            }
            "resources/templates/list" => {
                only_first_page(params::<Option<PaginatedParams>>(raw)?)?;
                answer(&ListResourceTemplatesResult {
                    resource_templates: catalog::templates(),
                    ..ListResourceTemplatesResult::default()
                })
            }
            "resources/read" => answer(&catalog::read(&params::<ReadResourceParams>(raw)?.uri)?),
            "resources/subscribe" | "resources/unsubscribe" => {
                let uri = params::<ReadResourceParams>(raw)?.uri;
                self.subscription(uri, method == "resources/subscribe")?;
                answer(&EmptyResult::default())
            }
            "prompts/list" => {
                only_first_page(params::<Option<PaginatedParams>>(raw)?)?;
                answer(&ListPromptsResult {
                    prompts: catalog::prompts(),
                    ..ListPromptsResult::default()
                })
            }
            "prompts/get" => answer(&catalog::get_prompt(&params::<GetPromptParams>(raw)?)?),
            "completion/complete" => answer(&catalog::complete(&params::<CompleteParams>(raw)?)?),
            other => Err(ErrorObject::method_not_found(other)),
        }
    }

    /// Records (or forgets) a subscription to a resource that exists; the fixtures never
    /// change, so no `notifications/resources/updated` follows.
    fn subscription(&self, uri: String, subscribe: bool) -> Result<(), ErrorObject> {
        catalog::read(&uri)?;
        let mut subscriptions = lock(&self.subscriptions);
        if subscribe {
            subscriptions.insert(uri);
        } else {
            subscriptions.remove(&uri);
        }
        Ok(())
    }
}

impl ServerHandler for ConformanceHandler {
    fn on_request(
        &self,
        method: String,
        params: Option<Box<RawValue>>,
        context: RequestContext,
    ) -> HandlerFuture<'_, RequestOutcome> {
        Box::pin(async move { self.request(&method, params.as_deref(), context).await })
    }

    fn on_notification(&self, method: &str, _params: Option<&RawValue>, _server: &ServerHandle) {
        self.diag(&format!("ignored notification {method}"));
    }

    fn on_diagnostic(&self, diagnostic: &Diagnostic) {
        self.diag(&format!("odd input from the client: {diagnostic:?}"));
    }
}

/// Every list fits one page: a cursor can only be one this server never gave out.
fn only_first_page(params: Option<PaginatedParams>) -> Result<(), ErrorObject> {
    match params.and_then(|p| p.cursor) {
        None => Ok(()),
        Some(cursor) => Err(ErrorObject::new(
            ErrorObject::INVALID_PARAMS,
            format!("invalid cursor {cursor:?}: every list fits one page"),
        )),
    }
}

/// Parses `params`; absent params parse as `null`, so optional params become `None`.
fn params<T: DeserializeOwned>(params: Option<&RawValue>) -> Result<T, ErrorObject> {
    serde_json::from_str(params.map_or("null", RawValue::get))
        .map_err(|e| ErrorObject::new(ErrorObject::INVALID_PARAMS, format!("Invalid params: {e}")))
}

/// Serializes a typed result for the answer.
fn answer<T: Serialize>(result: &T) -> RequestOutcome {
    to_raw(result).map_err(|e| ErrorObject::new(ErrorObject::INTERNAL_ERROR, e.to_string()))
}
