//! The typed MCP methods on [`Client`].

use std::borrow::Cow;
use std::collections::{BTreeMap, HashSet};
use std::future::Future;
use std::sync::LazyLock;

use mcp_proto::types::{
    CallTool, CallToolResult, Complete, CompleteParams, CompleteResult, Cursor, GetPrompt,
    GetPromptParams, GetPromptResult, ListPrompts, ListResourceTemplates, ListResources,
    ListToolsTolerant, LoggingLevel, MalformedTool, PaginatedParams, Ping, Prompt, ReadResource,
    ReadResourceResult, Request, Resource, ResourceRequestParams, ResourceTemplate, SetLevel,
    SetLevelParams, TolerantToolsPage, Tool,
};
use mcp_proto::{RawParams, RawResult};
use serde::Serialize;

use super::budget::{ListLimit, ListUsage};
use super::{Client, call};
use crate::error::Error;
use crate::options::CallOptions;
use crate::runtime::Runtime;

impl<R: Runtime> Client<R> {
    /// Follows `nextCursor` until the last page. Stops with [`Error::Pagination`] when the
    /// server repeats a cursor (which would loop forever), and with [`Error::ListBudget`] as
    /// soon as the pages so far exceed the connection's [`ListBudget`](crate::ListBudget) (bytes of results,
    /// items or pages).
    pub(super) async fn list_all<Q, T>(
        &self,
        options: &CallOptions,
        split: impl Fn(Q::Result) -> (Vec<T>, Option<Cursor>),
    ) -> Result<Vec<T>, Error>
    where
        Q: Request<Params = Option<PaginatedParams>>,
    {
        let budget = self.inner.list_budget;
        let mut used = ListUsage::default();
        let mut items = Vec::new();
        let mut seen = HashSet::new();
        let mut cursor: Option<Cursor> = None;
        loop {
            let params = cursor.take().map(|c| PaginatedParams {
                cursor: Some(c),
                ..PaginatedParams::default()
            });
            let params = RawParams::for_request(&params).map_err(|e| self.usage(e))?;
            let raw = self.call(Cow::Borrowed(Q::METHOD), params, options).await?;
            used.pages += 1;
            used.bytes = used.bytes.saturating_add(raw.get().len() as u64);
            // Checked before decoding: a page over the byte budget is never expanded into
            // items.
            if let Some(limit) = budget.exceeded(used) {
                return Err(self.over_budget::<Q>(limit));
            }
            let page: Q::Result = raw
                .decode()
                .map_err(|e| self.decode_error(Q::METHOD, &raw, e))?;
            drop(raw);
            let (mut page_items, next) = split(page);
            used.items = used.items.saturating_add(page_items.len());
            if let Some(limit) = budget.exceeded(used) {
                return Err(self.over_budget::<Q>(limit));
            }
            items.append(&mut page_items);
            let Some(next) = next else {
                return Ok(items);
            };
            if !seen.insert(next.clone()) {
                return Err(Error::Pagination {
                    server: self.inner.shared.name.clone(),
                    method: Q::METHOD.into(),
                    detail: format!("the server repeated cursor {next:?}"),
                });
            }
            cursor = Some(next);
        }
    }

    fn over_budget<Q: Request>(&self, limit: ListLimit) -> Error {
        tracing::warn!(server = &*self.inner.shared.name, method = Q::METHOD, %limit, "list over budget");
        Error::ListBudget {
            server: self.inner.shared.name.clone(),
            method: Q::METHOD.into(),
            limit,
        }
    }

    /// Every tool, following every page. Also compiles and keeps the tools' output schemas,
    /// replacing those of the previous listing, to check later tool results against (see
    /// [`ClientBuilder::validate_output`](crate::ClientBuilder::validate_output)).
    ///
    /// # Errors
    ///
    /// See [`Error`]; [`Error::Pagination`] when the pages do not end. A failed listing
    /// leaves the previous listing's schemas in place.
    ///
    /// A malformed entry (no `inputSchema`, a name that is not a string, …) does not fail
    /// the listing: it is dropped with a warning (`tracing`, naming it and why); see
    /// [`list_tools_checked`](Self::list_tools_checked) to get them.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, Error> {
        self.list_tools_checked().await.map(|(tools, _)| tools)
    }

    /// [`list_tools`](Self::list_tools), also returning the entries that were dropped as
    /// malformed (each also logged as a warning). A caller that calls a tool by name should
    /// look here: a dropped tool can still be called, but its arguments cannot be typed
    /// from its schema and its results are not checked against an `outputSchema`.
    ///
    /// # Errors
    ///
    /// As [`list_tools`](Self::list_tools).
    pub async fn list_tools_checked(&self) -> Result<(Vec<Tool>, Vec<MalformedTool>), Error> {
        let listed_at = self.inner.shared.output_schemas.generation();
        let entries = self
            .list_all::<ListToolsTolerant, _>(&CallOptions::new(), |p| (p.tools, p.next_cursor))
            .await?;
        let (tools, malformed) = TolerantToolsPage::split(entries, 0);
        for dropped in &malformed {
            tracing::warn!(
                server = &*self.inner.shared.name,
                error = %dropped.reason,
                "tools/list: {} is malformed and was dropped",
                dropped.label()
            );
        }
        self.keep_output_schemas(listed_at, &tools);
        self.inner.task_support.remember(&tools);
        Ok((tools, malformed))
    }

    /// Calls a tool. `arguments` serializes to a JSON object (or `()` / `None` for none).
    /// The result is kept whole: content blocks (text, image, audio, resource links, embedded
    /// resources), `structuredContent` and `isError`.
    ///
    /// # Errors
    ///
    /// See [`Error`]. A tool's own failure is `Ok` with `is_error: Some(true)`.
    /// [`Error::OutputSchema`] when the tool declared an `outputSchema` in the last
    /// [`list_tools`](Self::list_tools) and the result's `structuredContent` is missing or
    /// does not match it (see [`ClientBuilder::validate_output`](crate::ClientBuilder::validate_output)).
    ///
    /// The future holds the call's state and nothing more (about 220 bytes, whatever the
    /// arguments: they are freed once serialized), so tens of thousands of calls can wait at
    /// once, each in a task of its own.
    pub fn call_tool<'a>(
        &'a self,
        name: impl AsRef<str> + 'a,
        arguments: impl Serialize + 'a,
    ) -> impl Future<Output = Result<CallToolResult, Error>> + 'a {
        // Not an `async fn` around `call_tool_with`: that would hold the name, the arguments
        // and a `CallOptions` twice, for the life of every call.
        static DEFAULT: LazyLock<CallOptions> = LazyLock::new(CallOptions::new);
        self.call_tool_by_ref(name, arguments, &DEFAULT)
    }

    /// [`call_tool`](Self::call_tool) with per-call options (timeout, progress). With the
    /// tasks extension declared ([`ClientBuilder::tasks`](crate::ClientBuilder::tasks)), a
    /// task the server makes of the call is awaited transparently (see
    /// [`TaskHandle::wait`](crate::TaskHandle::wait)); dropping the future then also asks
    /// the server to cancel the task.
    ///
    /// # Errors
    ///
    /// See [`call_tool`](Self::call_tool); [`Error::Task`] when a task can no longer be
    /// followed.
    pub async fn call_tool_with(
        &self,
        name: impl AsRef<str>,
        arguments: impl Serialize,
        options: CallOptions,
    ) -> Result<CallToolResult, Error> {
        self.call_tool_by_ref(name, arguments, &options).await
    }

    /// [`call_tool_with`](Self::call_tool_with) with borrowed options.
    async fn call_tool_by_ref(
        &self,
        name: impl AsRef<str>,
        arguments: impl Serialize,
        options: &CallOptions,
    ) -> Result<CallToolResult, Error> {
        // Locals are scoped to the blocks that use them, and `name.as_ref()` is taken again
        // where needed: an `async fn` keeps room for every local in scope across an await,
        // moved or not, and this future is held once per pending call.
        let (call, augmented) = {
            let params =
                RawParams::tool_call(name.as_ref(), &arguments).map_err(|e| self.usage(e))?;
            // Serialized: the caller's arguments (a `json!` object is most of a pending
            // call's heap) are freed now rather than when the answer comes.
            drop(arguments);
            let augmented = self.augments(name.as_ref(), false).await;
            (self.tool_call(params, options, augmented)?, augmented)
        };
        let task = {
            let raw = call.await?;
            let name = name.as_ref();
            match self.task_of(name, &raw, augmented, options)? {
                // Boxed: polling a task is rare and its future large (see `call`).
                Some(task) => Box::pin(task.wait_cancelling_on_drop()),
                None => {
                    let result = self.decode_tool_result(&raw)?;
                    return self.check_output(name, result, !options.skip_output_check);
                }
            }
        };
        task.await
    }

    /// Sends `tools/call` and returns the raw result, and whether the call carried
    /// `params.task` (2025-11-25: the answer is then a `CreateTaskResult`). `wants_task`:
    /// the caller asked for a task handle, so a tool that only allows a task gets one too.
    pub(crate) async fn call_tool_raw(
        &self,
        name: &str,
        arguments: impl Serialize,
        options: CallOptions,
        wants_task: bool,
    ) -> Result<(RawResult, bool), Error> {
        // The arguments serialized once, straight into their place in the params (see
        // `RawParams::tool_call`), then freed.
        let params = RawParams::tool_call(name, &arguments).map_err(|e| self.usage(e))?;
        drop(arguments);
        let augmented = self.augments(name, wants_task).await;
        let raw = self.tool_call(params, &options, augmented)?.await?;
        Ok((raw, augmented))
    }

    /// Whether a `tools/call` of `name` carries a task. Boxed, and only when a task is
    /// possible at all: the tool lookup may fetch `tools/list`, which would otherwise make
    /// every call's future large.
    async fn augments(&self, name: &str, wants_task: bool) -> bool {
        self.may_augment()
            && Box::pin(self.augmentation(name))
                .await
                .uses_task(wants_task)
    }

    /// The `tools/call` request, with `params.task` when `augmented`.
    fn tool_call<'a>(
        &'a self,
        params: RawParams,
        options: &'a CallOptions,
        augmented: bool,
    ) -> Result<call::PendingCall<'a, R>, Error> {
        let params = if augmented {
            self.with_task(&params, options)?
        } else {
            params
        };
        Ok(self.call(Cow::Borrowed(CallTool::METHOD), Some(params), options))
    }

    /// Decodes a `tools/call` result.
    pub(crate) fn decode_tool_result(&self, raw: &RawResult) -> Result<CallToolResult, Error> {
        raw.decode()
            .map_err(|e| self.decode_error(CallTool::METHOD, raw, e))
    }

    /// Every resource, following every page.
    ///
    /// # Errors
    ///
    /// See [`list_tools`](Self::list_tools).
    pub async fn list_resources(&self) -> Result<Vec<Resource>, Error> {
        self.list_all::<ListResources, _>(&CallOptions::new(), |p| (p.resources, p.next_cursor))
            .await
    }

    /// Every resource template, following every page.
    ///
    /// # Errors
    ///
    /// See [`list_tools`](Self::list_tools).
    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>, Error> {
        self.list_all::<ListResourceTemplates, _>(&CallOptions::new(), |p| {
            (p.resource_templates, p.next_cursor)
        })
        .await
    }

    /// Reads a resource.
    ///
    /// # Errors
    ///
    /// See [`Error`].
    pub async fn read_resource(&self, uri: impl Into<String>) -> Result<ReadResourceResult, Error> {
        self.request::<ReadResource>(&ResourceRequestParams::new(uri))
            .await
    }

    /// Every prompt, following every page.
    ///
    /// # Errors
    ///
    /// See [`list_tools`](Self::list_tools).
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, Error> {
        self.list_all::<ListPrompts, _>(&CallOptions::new(), |p| (p.prompts, p.next_cursor))
            .await
    }

    /// Renders a prompt with its arguments.
    ///
    /// # Errors
    ///
    /// See [`Error`].
    pub async fn get_prompt(
        &self,
        name: impl Into<String>,
        arguments: BTreeMap<String, String>,
    ) -> Result<GetPromptResult, Error> {
        let params = GetPromptParams {
            name: name.into(),
            arguments: (!arguments.is_empty()).then_some(arguments),
            ..GetPromptParams::default()
        };
        self.request::<GetPrompt>(&params).await
    }

    /// Asks for completions of a prompt or resource-template argument.
    ///
    /// # Errors
    ///
    /// See [`Error`].
    pub async fn complete(&self, params: CompleteParams) -> Result<CompleteResult, Error> {
        self.request::<Complete>(&params).await
    }

    /// Sets the level of the log messages the server sends (`notifications/message`, seen
    /// on [`notifications`](Self::notifications)). The last level set is set again on a new
    /// HTTP session after the old one expired; a [`Manager`](crate::Manager) keeps the level
    /// set through [`Manager::set_log_level`](crate::Manager::set_log_level) across reconnects.
    ///
    /// # Errors
    ///
    /// See [`Error`].
    pub async fn set_log_level(&self, level: LoggingLevel) -> Result<(), Error> {
        self.request::<SetLevel>(&SetLevelParams::new(level))
            .await
            .map(drop)
    }

    /// Pings the server.
    ///
    /// # Errors
    ///
    /// See [`Error`].
    pub async fn ping(&self) -> Result<(), Error> {
        self.request::<Ping>(&None).await.map(drop)
    }
}
