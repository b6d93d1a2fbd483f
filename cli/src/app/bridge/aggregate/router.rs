//! The host-facing server: each host request answered from the catalog or routed to the
//! server that owns the name or URI in it, with the server's own name or URI put back.
//!
//! - `tools/list`, `prompts/list`, `resources/list`, `resources/templates/list`: the
//!   [`catalog`] (one page, every server).
//! - `tools/call`, `prompts/get`, `resources/read`, `completion/complete`: forwarded to the
//!   owning server through the single bridge's [`Relay`] (its deadline, progress under the
//!   host's token, cancellation when the host cancels or leaves); the resource URIs in
//!   their results (read contents, resource links, embedded resources) are host-visible.
//! - `resources/subscribe` / `unsubscribe`: a manager subscription per URI (it survives the
//!   server's reconnects); `notifications/resources/updated` reaches the host under the
//!   host-visible URI.
//! - `logging/setLevel` (answered by the session): set on every ready server and on each
//!   server when it comes up ([`Shared::apply_log_level`]); the manager keeps it across
//!   reconnects.
//! - The host's notifications (`notifications/roots/list_changed`, ...) go to every ready
//!   server.
//!
//! A call to a server still coming up waits for it ([`Shared::wait_bound`]); a name
//! that is not offered (unknown, or kept out by `--allow` / `--deny`) is `-32602` `unknown
//! tool: NAME`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use futures_util::StreamExt as _;
use mcp_manager::naming::ToolNamespace;
use mcp_manager::reconnect::ServerStatus;
use mcp_proto::jsonrpc::{ErrorObject, to_raw};
use mcp_proto::session::CloseReason;
use mcp_proto::types::LoggingLevel;
use mcp_tokio::mcp_driver::{HandlerFuture, ManagerError};
use mcp_tokio::server::{RequestContext, RequestOutcome, ServerHandle, ServerHandler};
use mcp_tokio::{Client, Manager};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::catalog;
use super::filter::ToolFilter;
use super::uri;
use super::watch::{self, Barriers};
use crate::app::bridge::forward::{Relay, error_for_host};

/// What the router and the status watcher share.
pub struct Shared {
    /// Every server of the config file.
    pub manager: Arc<Manager>,
    /// `--allow` / `--deny`.
    pub filter: ToolFilter,
    /// How routed requests are forwarded.
    pub relay: Relay,
    /// The host-visible prompt names.
    pub prompts: Mutex<ToolNamespace>,
    /// How long a request for a server still coming up waits for it.
    pub wait_bound: Duration,
    /// Whether the servers' sampling, elicitation and roots requests reach a host (not
    /// with `--listen`, where every HTTP session shares the servers): when not, a tool
    /// error about one of them gets [`NOT_FORWARDED`] appended.
    pub forwards_server_requests: bool,
    /// The log level the host set, and the servers it was set on (the manager keeps it on
    /// their later connections).
    log_level: Mutex<(Option<LoggingLevel>, HashMap<String, LoggingLevel>)>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    /// The shared state of one host session.
    pub fn new(
        manager: Arc<Manager>,
        filter: ToolFilter,
        relay: Relay,
        wait_bound: Duration,
    ) -> Self {
        Shared {
            manager,
            filter,
            relay,
            prompts: Mutex::new(ToolNamespace::new()),
            wait_bound,
            forwards_server_requests: true,
            log_level: Mutex::new((None, HashMap::new())),
        }
    }

    /// Sets the host's log level on `server` unless it has it already; the manager keeps it
    /// for the server's later connections. Call when the server is ready.
    pub fn apply_log_level(&self, server: &str) {
        let level = {
            let mut state = lock(&self.log_level);
            let Some(level) = state.0 else { return };
            if state.1.get(server) == Some(&level) {
                return;
            }
            state.1.insert(server.to_owned(), level);
            level
        };
        let manager = self.manager.clone();
        let server = server.to_owned();
        tokio::spawn(async move {
            if let Err(e) = manager.set_log_level(&server, level).await {
                tracing::warn!("bridge: logging/setLevel on server {server:?} failed: {e}");
            }
        });
    }

    /// The client of `server`, waiting (at most [`wait_bound`](Self::wait_bound)) while it
    /// is still connecting or reconnecting.
    async fn client_for(&self, server: &str) -> Result<Client, ErrorObject> {
        // Watched before looking, so that a change in between is not missed.
        let mut changes = self.manager.status_changes();
        let wait = async {
            loop {
                if let Some(client) = self.manager.client(server) {
                    return Ok(client);
                }
                let status = self
                    .manager
                    .status()
                    .into_iter()
                    .find_map(|(name, status)| (name == server).then_some(status));
                match status {
                    None => return Err(internal(format!("unknown server {server:?}"))),
                    Some(ServerStatus::Connecting | ServerStatus::Reconnecting { .. }) => {}
                    Some(status) => {
                        return Err(manager_error(ManagerError::NotReady {
                            server: server.to_owned(),
                            status,
                        }));
                    }
                }
                if changes.recv().await.is_none() {
                    return Err(internal("the bridge is shutting down".into()));
                }
            }
        };
        match tokio::time::timeout(self.wait_bound, wait).await {
            Ok(found) => found,
            Err(_) => Err(internal(format!(
                "server {server:?} is still not ready after {:?}",
                self.wait_bound
            ))),
        }
    }
}

/// The host-facing [`ServerHandler`] of `mcp bridge --config`: one per host session (over
/// stdio, one; over HTTP, one per session), all sharing the servers.
///
/// When its session ends (or it is dropped), its subscriptions end (unsubscribed upstream),
/// and so do the tasks given to [`owns`](Self::owns).
pub struct Router {
    shared: Arc<Shared>,
    /// This session's resource subscriptions, by host-visible URI: the task relaying each.
    subscriptions: Mutex<HashMap<String, tokio::task::JoinHandle<()>>>,
    /// Tasks that serve this session alone (its watcher).
    tasks: Vec<tokio::task::JoinHandle<()>>,
    /// Where answers wait for their server's earlier notifications (filled by the
    /// session's watcher; empty without one).
    barriers: Barriers,
}

impl Drop for Router {
    fn drop(&mut self) {
        self.end();
    }
}

impl Router {
    /// Routes with `shared`.
    pub fn new(shared: Arc<Shared>) -> Self {
        Router {
            shared,
            subscriptions: Mutex::new(HashMap::new()),
            tasks: Vec::new(),
            barriers: Barriers::default(),
        }
    }

    /// The barriers this session's watcher fills: answers then reach the host after the
    /// notifications their server sent before them.
    #[must_use]
    pub fn ordered_by(mut self, barriers: Barriers) -> Self {
        self.barriers = barriers;
        self
    }

    /// Ends this session's subscriptions (unsubscribed upstream) and tasks. Idempotent.
    fn end(&self) {
        for (_, task) in lock(&self.subscriptions).drain() {
            task.abort();
        }
        for task in &self.tasks {
            task.abort();
        }
    }

    /// Ends `task` with this session.
    #[must_use]
    pub fn owns(mut self, task: tokio::task::JoinHandle<()>) -> Self {
        self.tasks.push(task);
        self
    }

    async fn route(
        &self,
        method: String,
        params: Option<Box<RawValue>>,
        context: RequestContext,
    ) -> RequestOutcome {
        let shared = &*self.shared;
        let manager = &*shared.manager;
        match method.as_str() {
            "tools/list" => raw(&json!({"tools": catalog::tools(manager, &shared.filter)})),
            "prompts/list" => {
                raw(&json!({"prompts": catalog::prompts(manager, &shared.prompts).await}))
            }
            "resources/list" => raw(&json!({"resources": catalog::resources(manager).await})),
            "resources/templates/list" => raw(&json!({
                "resourceTemplates": catalog::resource_templates(manager).await
            })),
            "tools/call" => {
                let mut params = object(params.as_deref())?;
                let name = string_field(&params, "name")?;
                let (server, tool) = shared
                    .filter
                    .offers(&name)
                    .then(|| manager.resolve(&name))
                    .flatten()
                    .ok_or_else(|| unknown_tool(&name))?;
                params.insert("name".into(), Value::String(tool));
                let result = self.forward(&server, method, &params, &context).await?;
                let result = host_uris(&server, &result)?;
                if shared.forwards_server_requests {
                    Ok(result)
                } else {
                    note_not_forwarded(result)
                }
            }
            "prompts/get" => {
                let mut params = object(params.as_deref())?;
                let name = string_field(&params, "name")?;
                let (server, prompt) = catalog::resolve_prompt(manager, &shared.prompts, &name)
                    .await
                    .ok_or_else(|| {
                        ErrorObject::new(
                            ErrorObject::INVALID_PARAMS,
                            format!("unknown prompt: {name}"),
                        )
                    })?;
                params.insert("name".into(), Value::String(prompt));
                let result = self.forward(&server, method, &params, &context).await?;
                host_uris(&server, &result)
            }
            "resources/read" => {
                let mut params = object(params.as_deref())?;
                let (server, original) = server_uri(&string_field(&params, "uri")?)?;
                params.insert("uri".into(), Value::String(original));
                let result = self.forward(&server, method, &params, &context).await?;
                host_uris(&server, &result)
            }
            "resources/subscribe" => self.subscribe(params.as_deref(), &context).await,
            "resources/unsubscribe" => {
                let params = object(params.as_deref())?;
                let host_uri = string_field(&params, "uri")?;
                if let Some(task) = lock(&self.subscriptions).remove(&host_uri) {
                    // The relay owns the subscription: ending it unsubscribes upstream.
                    task.abort();
                }
                raw(&json!({}))
            }
            "completion/complete" => {
                let mut params = object(params.as_deref())?;
                let server = self.route_reference(&mut params).await?;
                self.forward(&server, method, &params, &context).await
            }
            other => Err(ErrorObject::method_not_found(other)),
        }
    }

    /// Forwards `method` with `params` to `server`.
    async fn forward(
        &self,
        server: &str,
        method: String,
        params: &Map<String, Value>,
        context: &RequestContext,
    ) -> RequestOutcome {
        let client = self.shared.client_for(server).await?;
        let params = to_raw(params).map_err(|e| internal(e.to_string()))?;
        let outcome = self
            .shared
            .relay
            .forward(client, method, Some(params), context.clone())
            .await;
        watch::barrier(&self.barriers, server).await;
        outcome
    }

    /// Puts the server's own prompt name or URI into a `completion/complete` reference;
    /// returns the server.
    async fn route_reference(
        &self,
        params: &mut Map<String, Value>,
    ) -> Result<String, ErrorObject> {
        let invalid = |m: &str| ErrorObject::new(ErrorObject::INVALID_PARAMS, m.to_owned());
        let Some(Value::Object(reference)) = params.get_mut("ref") else {
            return Err(invalid("completion/complete needs a `ref` object"));
        };
        match reference.get("type").and_then(Value::as_str) {
            Some("ref/prompt") => {
                let name = string_field(reference, "name")?;
                let (server, prompt) =
                    catalog::resolve_prompt(&self.shared.manager, &self.shared.prompts, &name)
                        .await
                        .ok_or_else(|| invalid(&format!("unknown prompt: {name}")))?;
                reference.insert("name".into(), Value::String(prompt));
                Ok(server)
            }
            Some("ref/resource") => {
                let (server, original) = server_uri(&string_field(reference, "uri")?)?;
                reference.insert("uri".into(), Value::String(original));
                Ok(server)
            }
            _ => Err(invalid("`ref.type` must be ref/prompt or ref/resource")),
        }
    }

    /// `resources/subscribe`: a manager subscription relayed to the host under the
    /// host-visible URI; subscribing again to the same URI replaces the relay.
    async fn subscribe(
        &self,
        params: Option<&RawValue>,
        context: &RequestContext,
    ) -> RequestOutcome {
        let params = object(params)?;
        let host_uri = string_field(&params, "uri")?;
        let (server, original) = server_uri(&host_uri)?;
        // Waits for a server still coming up; the manager then subscribes on it.
        self.shared.client_for(&server).await?;
        let mut subscription = self
            .shared
            .manager
            .subscribe(&server, original)
            .await
            .map_err(manager_error)?;
        let host = context.server().clone();
        let relayed = host_uri.clone();
        let task = tokio::spawn(async move {
            while let Some(item) = subscription.next().await {
                let updated = match item {
                    Ok(n) if n.method == "notifications/resources/updated" => n
                        .params
                        .as_deref()
                        .and_then(|p| serde_json::from_str::<Value>(p.get()).ok())
                        .and_then(|p| p.get("uri").and_then(Value::as_str).map(str::to_owned))
                        .map_or_else(|| relayed.clone(), |u| uri::to_host(&server, &u)),
                    Ok(_) => continue,
                    // Reconnected (or fell behind): it may have changed meanwhile.
                    Err(missed) => {
                        tracing::debug!("bridge: subscription to {relayed}: {missed}");
                        relayed.clone()
                    }
                };
                if let Err(e) = host.notify_resource_updated(&updated) {
                    tracing::debug!("bridge: {updated} update not forwarded: {e}");
                    if host.is_closed() {
                        return;
                    }
                }
            }
        });
        if let Some(old) = lock(&self.subscriptions).insert(host_uri, task) {
            old.abort();
        }
        raw(&json!({}))
    }
}

impl ServerHandler for Router {
    fn on_request(
        &self,
        method: String,
        params: Option<Box<RawValue>>,
        context: RequestContext,
    ) -> HandlerFuture<'_, RequestOutcome> {
        Box::pin(self.route(method, params, context))
    }

    fn on_notification(&self, method: &str, params: Option<&RawValue>, _server: &ServerHandle) {
        for (server, client) in catalog::ready_clients(&self.shared.manager) {
            if let Err(e) = client.notify(method.to_owned(), params) {
                tracing::warn!("bridge: could not forward {method} to server {server:?}: {e}");
            }
        }
    }

    fn on_log_level(&self, level: LoggingLevel, _server: &ServerHandle) {
        lock(&self.shared.log_level).0 = Some(level);
        for (server, _) in catalog::ready_clients(&self.shared.manager) {
            self.shared.apply_log_level(&server);
        }
    }

    fn on_diagnostic(&self, diagnostic: &mcp_tokio::server::Diagnostic) {
        tracing::info!("bridge: odd input from the host: {diagnostic:?}");
    }

    fn on_closed(&self, reason: &CloseReason, _server: &ServerHandle) {
        // The session's tasks hold its handle, which may keep this handler alive: they are
        // ended here rather than left to `Drop`.
        tracing::info!("bridge: a host session ended: {reason}");
        self.end();
    }
}

fn internal(message: String) -> ErrorObject {
    ErrorObject::new(
        ErrorObject::INTERNAL_ERROR,
        format!("mcp bridge: {message}"),
    )
}

/// The host's error for a manager failure: the server's own error as it came, else what
/// kept the request from it.
fn manager_error(e: ManagerError) -> ErrorObject {
    match e {
        ManagerError::Call(e) => error_for_host(e),
        other => internal(other.to_string()),
    }
}

/// The error of a tool name that is not offered: the same whether it was never listed or
/// `--allow` / `--deny` keep it out.
fn unknown_tool(name: &str) -> ErrorObject {
    ErrorObject::new(ErrorObject::INVALID_PARAMS, format!("unknown tool: {name}"))
}

fn raw(value: &Value) -> RequestOutcome {
    to_raw(value).map_err(|e| internal(e.to_string()))
}

/// The request's params as an object (absent params: an empty one).
fn object(params: Option<&RawValue>) -> Result<Map<String, Value>, ErrorObject> {
    match params {
        None => Ok(Map::new()),
        Some(p) => serde_json::from_str(p.get()).map_err(|e| {
            ErrorObject::new(
                ErrorObject::INVALID_PARAMS,
                format!("params must be an object: {e}"),
            )
        }),
    }
}

fn string_field(object: &Map<String, Value>, field: &str) -> Result<String, ErrorObject> {
    match object.get(field) {
        Some(Value::String(s)) => Ok(s.clone()),
        _ => Err(ErrorObject::new(
            ErrorObject::INVALID_PARAMS,
            format!("`{field}` must be a string"),
        )),
    }
}

/// The server and its own URI behind a host-visible one.
fn server_uri(host_uri: &str) -> Result<(String, String), ErrorObject> {
    uri::from_host(host_uri)
        .map(|(server, original)| (server, original.to_owned()))
        .ok_or_else(|| {
            ErrorObject::new(
                ErrorObject::INVALID_PARAMS,
                format!(
                    "unknown resource {host_uri:?}: this bridge's URIs start with {}SERVER/",
                    uri::SCHEME
                ),
            )
        })
}

/// `server`'s result with its resource URIs made host-visible ([`uri::result_to_host`]).
/// Appended to a tool's error result about sampling, elicitation or roots when the bridge
/// does not forward those requests (`--config --listen`).
pub const NOT_FORWARDED: &str = "(mcp bridge --config --listen does not forward the servers' \
     sampling, elicitation or roots requests to its clients: a tool that needs one fails)";

/// `result` with [`NOT_FORWARDED`] appended to its content when it is a tool error whose
/// text names sampling, elicitation or roots; otherwise as it is.
fn note_not_forwarded(result: Box<RawValue>) -> RequestOutcome {
    let Ok(mut value) = serde_json::from_str::<Value>(result.get()) else {
        return Ok(result);
    };
    let is_error = value.get("isError").and_then(Value::as_bool) == Some(true);
    let Some(content) = value.get_mut("content").and_then(Value::as_array_mut) else {
        return Ok(result);
    };
    let about_server_requests = content.iter().any(|c| {
        c.get("text").and_then(Value::as_str).is_some_and(|t| {
            ["sampling", "elicitation", "roots"]
                .iter()
                .any(|w| t.contains(w))
        })
    });
    if !is_error || !about_server_requests {
        return Ok(result);
    }
    content.push(json!({"type": "text", "text": NOT_FORWARDED}));
    to_raw(&value).map_err(|e| internal(e.to_string()))
}

fn host_uris(server: &str, result: &RawValue) -> RequestOutcome {
    uri::result_to_host(server, result).map_err(|e| internal(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_error_about_server_requests_is_noted() {
        let raw = |v: Value| to_raw(&v).expect("json");
        let error =
            |text: &str| raw(json!({"isError": true, "content": [{"type": "text", "text": text}]}));
        let noted = note_not_forwarded(error("did not declare the elicitation capability"))
            .expect("a result");
        assert!(noted.get().contains("does not forward"), "{noted}");
        for untouched in [
            error("disk full"),
            raw(json!({"content": [{"type": "text", "text": "roots: 2"}]})),
        ] {
            let before = untouched.get().to_owned();
            let after = note_not_forwarded(untouched).expect("a result");
            assert_eq!(after.get(), before);
        }
    }

    #[test]
    fn a_foreign_uri_is_invalid_params() {
        let e = server_uri("demo://readme").expect_err("not ours");
        assert_eq!(e.code, ErrorObject::INVALID_PARAMS);
        assert!(e.message.contains("mcp-bridge://SERVER/"), "{}", e.message);
        let (server, original) = server_uri("mcp-bridge://demo/demo://readme").expect("ours");
        assert_eq!(
            (server.as_str(), original.as_str()),
            ("demo", "demo://readme")
        );
    }

    #[test]
    fn params_must_be_an_object_with_string_fields() {
        let bad = to_raw(&json!([1])).expect("encodes");
        assert_eq!(
            object(Some(&bad)).expect_err("array").code,
            ErrorObject::INVALID_PARAMS
        );
        let params = object(Some(&to_raw(&json!({"name": 3})).expect("encodes"))).expect("object");
        assert!(string_field(&params, "name").is_err());
        assert!(object(None).expect("empty").is_empty());
    }
}
