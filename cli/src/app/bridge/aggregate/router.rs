//! The host-facing server: each host request answered from the catalog or routed to the
//! server that owns the name or URI in it, with the server's own name or URI put back.
//!
//! - `tools/list`, `prompts/list`, `resources/list`, `resources/templates/list`: the
//!   [`catalog`] (one page, every server).
//! - `tools/call`, `prompts/get`, `resources/read`, `completion/complete`: forwarded to the
//!   owning server through the single bridge's [`Relay`] (its deadline, progress under the
//!   host's token, cancellation when the host cancels or leaves); the resource URIs in
//!   their results (read contents, resource links, embedded resources) are host-visible.
//! - Tasks ([`tasks`]): a `tools/call` with a `task` goes to the tool's server and its
//!   task id comes back host-visible (`SERVER/ID`); `tasks/get`, `tasks/result` and
//!   `tasks/cancel` go to the server the id names; `tasks/list` pages through every server
//!   that lists tasks. With `--listen` a session sees only its own tasks (and those of no
//!   known session: [`super::task_owners`]).
//! - `resources/subscribe` / `unsubscribe`: a manager subscription per URI (it survives the
//!   server's reconnects), shared by every session subscribed to it ([`Subscriptions`]);
//!   `notifications/resources/updated` reaches the host under the host-visible URI.
//! - `logging/setLevel` (answered by the session): set on every ready server and on each
//!   server when it comes up ([`Shared::apply_log_level`]); the manager keeps it across
//!   reconnects.
//! - The host's notifications (`notifications/roots/list_changed`, ...) go to every ready
//!   server.
//!
//! A call to a server still coming up waits for it ([`Shared::wait_bound`]), also one
//! whose tool is not known yet (no tool cache) when its `SERVER__` prefix names the server; a
//! server that failed, or is unreachable, gets its reason at once. A tool whose `SERVER__`
//! prefix names a server that is not running (it failed to start, its entry cannot be used,
//! it is disabled) gets `-32603` `server "NAME" is not running: WHY` with the bridge's
//! upstream-failure data. A name that is not offered (unknown, kept out by `--allow` /
//! `--deny`, or with no server's prefix) is `-32602` `unknown tool: NAME`.
//!
//! The params it reads, the errors it answers with and the results it rewrites: `wire`.

mod wire;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

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
use super::server_requests::SessionCalls;
use super::subscriptions::Subscriptions;
use super::task_owners::TaskOwners;
use super::tasks;
use super::watch::{self, Barriers};
use crate::app::bridge::forward::Relay;
use crate::app::many;
pub use wire::{NOT_FORWARDED, NOT_RUNNING, ROOTS_NOT_OFFERED};
use wire::{
    host_uris, internal, manager_error, name_http_entry, not_running, note_tool_error, object, raw,
    server_uri, string_field, unknown_tool,
};

/// What the router and the status watcher share.
pub struct Shared {
    /// Every server of the config file.
    pub manager: Arc<Manager>,
    /// Their entries, for the words of their failures ([`many::failure_words`]).
    pub configs: Vec<mcp_manager::config::ServerConfig>,
    /// Says on stderr when an HTTP entry is lost and back (a stdio entry's reconnects are
    /// the watcher's to tell); `None`: not said.
    pub health: Option<Arc<crate::app::bridge::upstream_health::UpstreamHealth>>,
    /// Every entry of the file, with `Some((state, why))` for one not started (broken,
    /// disabled): a call to its tools says so.
    pub entries: Vec<(String, Option<(&'static str, String)>)>,
    /// `--allow` / `--deny`.
    pub filter: ToolFilter,
    /// How routed requests are forwarded.
    pub relay: Relay,
    /// The host-visible prompt names.
    pub prompts: Mutex<ToolNamespace>,
    /// How long a request for a server still coming up waits for it.
    pub wait_bound: Duration,
    /// With `--listen` (every HTTP session shares the servers): the host requests in flight
    /// to each server, which the servers' sampling and elicitation are attributed by; a tool
    /// error after one was refused gets [`NOT_FORWARDED`] and the reason appended. `None`
    /// over stdio, where the servers' requests go to the one host.
    pub session_calls: Option<Arc<SessionCalls>>,
    /// With `--listen` (stateful): the session of each task made through the bridge.
    pub task_owners: Option<Arc<TaskOwners>>,
    /// Every session's resource subscriptions, one upstream per URI.
    pub subscriptions: Arc<Subscriptions>,
    /// Over stdio: the server that asked for each task the host made (its
    /// `notifications/tasks/status` goes to that server only).
    pub host_tasks: Option<Arc<super::host_tasks::HostTasks>>,
    /// The number of the next host session (a router's).
    next_session: AtomicU64,
    /// The log level the host set, and the servers it was set on (the manager keeps it on
    /// their later connections).
    log_level: Mutex<(Option<LoggingLevel>, HashMap<String, LoggingLevel>)>,
    /// The servers refusing the host's notifications (they read too slowly): said once on
    /// stderr when it starts and once when it ends, not once per notification.
    refusing_notifications: Mutex<HashSet<String>>,
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
            configs: Vec::new(),
            entries: Vec::new(),
            health: None,
            filter,
            relay,
            prompts: Mutex::new(ToolNamespace::new()),
            wait_bound,
            session_calls: None,
            task_owners: None,
            subscriptions: Arc::default(),
            host_tasks: None,
            next_session: AtomicU64::new(0),
            log_level: Mutex::new((None, HashMap::new())),
            refusing_notifications: Mutex::default(),
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
    /// is still connecting or reconnecting; at once the reason when it failed, or is
    /// unreachable or failing (never ready, its last attempt failed outright: it is retried
    /// in the background, but a call would only wait for the same failure).
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
                    Some(ServerStatus::Connecting | ServerStatus::Reconnecting { .. }) => {
                        if let Some(why) = self.manager.unreachable(server) {
                            return Err(internal(format!(
                                "server {server:?} is unreachable: {} (retrying in the \
                                 background)",
                                many::failure_words(&self.configs, server, &why)
                            )));
                        }
                        // Reached, and failed (an HTTP error status): as final for this call.
                        if let Some(why) = self.manager.failed_before_ready(server) {
                            return Err(internal(format!(
                                "server {server:?} failed: {} (retrying in the background)",
                                many::failure_words(&self.configs, server, &why)
                            )));
                        }
                    }
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
            Err(_) => {
                // A crash-looping server: what it keeps failing with.
                let last = self
                    .manager
                    .last_failure(server)
                    .map(|why| {
                        let why = many::failure_words(&self.configs, server, &why);
                        format!("; it last failed: {why}")
                    })
                    .unwrap_or_default();
                Err(internal(format!(
                    "server {server:?} is still not ready after {:?}{last}",
                    self.wait_bound
                )))
            }
        }
    }

    /// The server and its own tool name behind the host-visible tool `name`. A name not
    /// listed (yet) whose `SERVER__` prefix names a server still coming up without a tool
    /// cache waits for that server (as [`client_for`](Self::client_for)) and is looked up
    /// again: an unknown tool if it came up without it, the server's failure if it failed.
    async fn resolve_tool(&self, name: &str) -> Result<(String, String), ErrorObject> {
        if !self.filter.offers(name) {
            return Err(unknown_tool(name));
        }
        if let Some(found) = self.manager.resolve(name) {
            return Ok(found);
        }
        let coming_up = self
            .manager
            .status()
            .into_iter()
            .find_map(|(server, status)| {
                let prefix = format!(
                    "{}{}",
                    mcp_manager::naming::sanitize(&server),
                    mcp_manager::naming::SEPARATOR
                );
                (name.starts_with(&prefix)
                    && matches!(
                        status,
                        ServerStatus::Connecting | ServerStatus::Reconnecting { .. }
                    ))
                .then_some(server)
            });
        let Some(server) = coming_up else {
            return Err(self.not_running(name).unwrap_or_else(|| unknown_tool(name)));
        };
        self.client_for(&server).await?;
        self.manager.resolve(name).ok_or_else(|| unknown_tool(name))
    }

    /// The URL of `server` when it is an HTTP entry of the file.
    fn http_url(&self, server: &str) -> Option<&str> {
        self.configs
            .iter()
            .find(|c| c.name == server)
            .and_then(|c| match &c.transport {
                mcp_manager::config::TransportConfig::Http(h) => Some(h.url.as_str()),
                _ => None,
            })
    }

    /// The error of the host-visible tool `name` when its `SERVER__` prefix names a server
    /// that is not running: one that failed (to start, or for good), an entry of the file
    /// that cannot be used, a disabled one; with what it last failed with. `None` when the
    /// prefix names no such server (the longest prefix wins: `a__b__x` is server `a__b`'s).
    fn not_running(&self, name: &str) -> Option<ErrorObject> {
        let prefixed = |server: &str| {
            let prefix = format!(
                "{}{}",
                mcp_manager::naming::sanitize(server),
                mcp_manager::naming::SEPARATOR
            );
            name.starts_with(&prefix).then_some(prefix.len())
        };
        let mut found: Option<(usize, String, String)> = None;
        let mut consider = |server: &str, why: String| {
            if let Some(len) = prefixed(server)
                && found.as_ref().is_none_or(|(longest, ..)| len > *longest)
            {
                found = Some((len, server.to_owned(), why));
            }
        };
        for (server, status) in self.manager.status() {
            match status {
                ServerStatus::Failed { reason, .. } => {
                    let why = many::failure_words(&self.configs, &server, &reason);
                    consider(&server, format!("it failed: {why}"));
                }
                ServerStatus::Disabled => {
                    consider(&server, "it is disabled".to_owned());
                }
                _ => {}
            }
        }
        for (server, problem) in &self.entries {
            match problem {
                Some(("disabled", _)) => {
                    consider(server, "it is disabled in the config file".to_owned());
                }
                Some((_, why)) => consider(
                    server,
                    format!(
                        "its entry in the config file cannot be used: {}",
                        crate::redact::text(why)
                    ),
                ),
                None => {}
            }
        }
        found.map(|(_, server, why)| not_running(&server, &why))
    }
}

/// The host-facing [`ServerHandler`] of `mcp bridge --config`: one per host session (over
/// stdio, one; over HTTP, one per session), all sharing the servers.
///
/// When its session ends (or it is dropped), its subscriptions end (unsubscribed upstream),
/// and so do the tasks given to [`owns`](Self::owns).
pub struct Router {
    shared: Arc<Shared>,
    /// This host session's number, for [`SessionCalls`].
    session: u64,
    /// Tasks that serve this session alone (its watcher).
    tasks: Vec<tokio::task::JoinHandle<()>>,
    /// Where answers wait for their server's earlier notifications (filled by the
    /// session's watcher; empty without one).
    barriers: Barriers,
    /// With `--listen` (stateful): this session's lines on stderr (closed, a tool refused).
    log: Option<crate::app::bridge::host_log::SessionLog>,
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
            session: shared.next_session.fetch_add(1, Ordering::Relaxed),
            shared,
            tasks: Vec::new(),
            barriers: Barriers::default(),
            log: None,
        }
    }

    /// Says on stderr when this session closes and when it is refused a tool (`--listen`).
    #[must_use]
    pub fn logged(mut self, log: crate::app::bridge::host_log::SessionLog) -> Self {
        self.log = Some(log);
        self
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
        self.shared.subscriptions.end_session(self.session);
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
                if let Some(log) = &self.log
                    && !shared.filter.offers(&name)
                    && manager.resolve(&name).is_some()
                {
                    // A tool the server has, kept from the hosts: worth the operator's eye.
                    log.denied(&name);
                }
                let (server, tool) = shared.resolve_tool(&name).await?;
                params.insert("name".into(), Value::String(tool));
                let as_task = params.contains_key("task");
                let (result, refused) = self.forward_call(&server, method, &params, &context).await;
                let result = if as_task {
                    let created = tasks::created_to_host(&server, &result?)?;
                    self.own_task(&created);
                    created
                } else {
                    result?
                };
                let result = host_uris(&server, &result)?;
                self.noted(result, refused.as_deref())
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
            "tasks/list" => self.list_tasks(params.as_deref()).await,
            "tasks/get" | "tasks/result" | "tasks/cancel" => {
                let mut params = object(params.as_deref())?;
                let host_id = string_field(&params, "taskId")?;
                let (server, id) = tasks::from_host(&host_id)
                    .filter(|(server, _)| manager.status().iter().any(|(s, _)| s == server))
                    .filter(|_| self.sees_task(&host_id))
                    .ok_or_else(|| tasks::unknown(&host_id))?;
                params.insert("taskId".into(), Value::String(id.to_owned()));
                let is_result = method == "tasks/result";
                let (result, refused) = self.forward_call(&server, method, &params, &context).await;
                if is_result {
                    let result = tasks::payload_to_host(&server, &result?)?;
                    let result = host_uris(&server, &result)?;
                    self.noted(result, refused.as_deref())
                } else {
                    tasks::task_to_host(&server, &result?)
                }
            }
            "resources/subscribe" => self.subscribe(params.as_deref(), &context).await,
            "resources/unsubscribe" => {
                let params = object(params.as_deref())?;
                let host_uri = string_field(&params, "uri")?;
                shared.subscriptions.unsubscribe(self.session, &host_uri);
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

    /// `tasks/list`: one host page of every ready server's tasks ([`tasks::list_page`]).
    async fn list_tasks(&self, params: Option<&RawValue>) -> RequestOutcome {
        let params = object(params)?;
        let cursor = match params.get("cursor") {
            None | Some(Value::Null) => None,
            Some(Value::String(c)) => Some(c.as_str()),
            Some(_) => {
                return Err(ErrorObject::new(
                    ErrorObject::INVALID_PARAMS,
                    "`cursor` must be a string",
                ));
            }
        };
        let ready: HashMap<String, Client> = catalog::ready_clients(&self.shared.manager)
            .into_iter()
            .collect();
        let servers: Vec<(String, bool)> = self
            .shared
            .manager
            .status()
            .into_iter()
            .map(|(server, _)| {
                let lists = ready.get(&server).is_some_and(|c| {
                    c.capabilities()
                        .tasks
                        .as_ref()
                        .is_some_and(|t| t.list.is_some())
                });
                (server, lists)
            })
            .collect();
        let page = tasks::list_page(&servers, cursor, |server, cursor| {
            let client = ready.get(&server).cloned();
            async move {
                let client = client.ok_or("not ready")?;
                let page = client
                    .list_tasks_page(cursor)
                    .await
                    .map_err(|e| e.to_string())?;
                let tasks = page
                    .tasks
                    .iter()
                    .map(serde_json::to_value)
                    .collect::<Result<_, _>>()
                    .map_err(|e| e.to_string())?;
                Ok((tasks, page.next_cursor))
            }
        })
        .await?;
        let mut page = page;
        if let Some(Value::Array(tasks)) = page.get_mut("tasks") {
            tasks.retain(|t| t["taskId"].as_str().is_none_or(|id| self.sees_task(id)));
        }
        raw(&page)
    }

    /// This host session's number (see [`SessionCalls`], [`TaskOwners`]).
    pub fn session(&self) -> u64 {
        self.session
    }

    /// Whether this session may see the task of host-visible id `task` ([`TaskOwners`]).
    fn sees_task(&self, task: &str) -> bool {
        self.shared
            .task_owners
            .as_ref()
            .is_none_or(|owners| owners.visible(task, self.session))
    }

    /// Binds the task of a `CreateTaskResult` (host-visible) to this session, with `--listen`.
    fn own_task(&self, created: &RawValue) {
        let Some(owners) = &self.shared.task_owners else {
            return;
        };
        let id = serde_json::from_str::<Value>(created.get())
            .ok()
            .and_then(|v| v["task"]["taskId"].as_str().map(str::to_owned));
        if let Some(id) = id {
            owners.record(&id, self.session);
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
        self.forward_call(server, method, params, context).await.0
    }

    /// Forwards `method` with `params` to `server`; with `--listen`, also why a request of
    /// that server was refused while this one was in flight, if one was.
    async fn forward_call(
        &self,
        server: &str,
        method: String,
        params: &Map<String, Value>,
        context: &RequestContext,
    ) -> (RequestOutcome, Option<String>) {
        let client = match self.shared.client_for(server).await {
            Ok(client) => client,
            Err(e) => return (Err(e), None),
        };
        let params = match to_raw(params) {
            Ok(params) => params,
            Err(e) => return (Err(internal(e.to_string())), None),
        };
        // In flight from here until the answer: the server's own requests meanwhile may be
        // this session's.
        let in_flight = self
            .shared
            .session_calls
            .as_ref()
            .map(|calls| calls.enter(server, self.session, context));
        // A stop answers the host before its stream closes (and cancels the call upstream).
        let forwarded = self
            .shared
            .relay
            .forward(client, method, Some(params), context.clone());
        let outcome = crate::app::bridge::stop::or_stopping(forwarded)
            .await
            .map_err(|e| match self.shared.http_url(server) {
                Some(url) => name_http_entry(e, server, url),
                None => e,
            });
        if let Some(health) = &self.shared.health
            && self.shared.http_url(server).is_some()
        {
            health.saw(server, &outcome);
        }
        watch::barrier(&self.barriers, server).await;
        (outcome, in_flight.and_then(|call| call.refused()))
    }

    /// A tool result as the host gets it: with `--listen`, a tool error gets the reason a
    /// request of its server was refused during the call ([`NOT_FORWARDED`]), or a word on
    /// roots when it is about roots ([`ROOTS_NOT_OFFERED`]).
    fn noted(&self, result: Box<RawValue>, refused: Option<&str>) -> RequestOutcome {
        if self.shared.session_calls.is_none() {
            return Ok(result);
        }
        note_tool_error(result, refused)
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

    /// `resources/subscribe`: this session subscribed to the URI ([`Subscriptions`]: one
    /// upstream subscription however many sessions subscribe).
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
        self.shared
            .subscriptions
            .subscribe(
                &self.shared.manager,
                self.session,
                context.server(),
                &host_uri,
                (&server, &original),
            )
            .await?;
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
        if self.shared.session_calls.is_some() && method == "notifications/roots/list_changed" {
            // With `--listen` the servers were not told of roots (see `server_requests`).
            return;
        }
        // A status of one of the host's tasks is for the server that asked for it.
        let owner = match &self.shared.host_tasks {
            Some(host_tasks) if method == mcp_proto::task::TASKS_STATUS_NOTIFICATION => params
                .and_then(|p| serde_json::from_str(p.get()).ok())
                .and_then(|p: serde_json::Value| host_tasks.status_owner(&p)),
            _ => None,
        };
        for (server, client) in catalog::ready_clients(&self.shared.manager) {
            if owner.as_ref().is_some_and(|owner| *owner != server) {
                continue;
            }
            let forwarded = client.notify(method.to_owned(), params);
            let mut refusing = lock(&self.shared.refusing_notifications);
            match forwarded {
                Ok(()) => {
                    if refusing.remove(&server) {
                        tracing::warn!(
                            "bridge: the host's notifications are forwarded to server {server:?} again"
                        );
                    }
                }
                Err(e) if !crate::app::bridge::forward::reads_too_slowly(&e) => {
                    tracing::warn!("bridge: could not forward {method} to server {server:?}: {e}");
                }
                Err(e) if refusing.insert(server.clone()) => tracing::warn!(
                    "bridge: could not forward {method} to server {server:?}: {e} (the host's \
                     notifications to it are dropped until it catches up)"
                ),
                Err(e) => {
                    tracing::debug!("bridge: could not forward {method} to server {server:?}: {e}");
                }
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

    fn on_closed(&self, reason: &CloseReason, server: &ServerHandle) {
        // The session's tasks hold its handle, which may keep this handler alive: they are
        // ended here rather than left to `Drop`.
        match &self.log {
            // The session's own line says it (`--listen`).
            Some(log) => log.closed(server, reason),
            None => tracing::info!("bridge: a host session ended: {reason}"),
        }
        self.end();
    }
}
