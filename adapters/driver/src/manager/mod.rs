//! [`Manager`]: many MCP servers at once, as one flat list of tools.
//!
//! The decisions come from the core (`mcp_manager`): reconnect and give-up from
//! [`ReconnectPolicy`](mcp_manager::reconnect::ReconnectPolicy), which servers are served
//! from the cache after the start-up deadline from
//! [`startup_plan`], model-facing names from
//! [`ToolNamespace`], cache validity from [`ToolCache`].
//! This module runs them: one supervisor task per server on the [`Runtime`], a semaphore that
//! bounds how many servers connect at once, cache files in a directory the caller chooses.
//!
//! # Guarantees
//!
//! - [`Manager::start`] returns once every server is ready, failed or unreachable, or at the
//!   start-up deadline, whichever comes first. A server never ready whose attempt failed
//!   outright is not waited for: one that ran and failed (its process exited, it answered
//!   with an HTTP error) is in [`StartupSummary::failed`] with its exit status and last
//!   stderr line, one that could not be reached (refused, host not found) in
//!   [`StartupSummary::unreachable`]; either is still retried by the policy. Servers still coming up then are served from their cache
//!   entry (`from_cache: true` in [`Manager::tools`]) until they connect.
//! - A call is routed through the name table, never by splitting the name; a call to a server
//!   that is not ready fails at once with [`ManagerError::NotReady`] naming it. One server's
//!   failure or slowness never blocks another's calls.
//! - A stdio server that exits, or an HTTP session that is lost, is reconnected with capped
//!   exponential backoff and jitter; a permanent error (the program does not exist, the
//!   handshake is refused, the transport is unsupported) is not retried.
//! - `notifications/tools/list_changed` re-lists that server's tools and rewrites its cache
//!   entry; once the new list is in [`Manager::tools`], the server's status is published again
//!   on [`Manager::status_changes`] (unchanged, `Ready`), so a watcher knows to list again.
//! - Subscriptions opened through the manager ([`Manager::subscribe`], [`Manager::listen`])
//!   and the log level set through it ([`Manager::set_log_level`]) survive a reconnect: they
//!   are set up again on the new connection, and the subscriber sees a
//!   [`Gap`](crate::Gap) on the same [`Subscription`](crate::Subscription), then the new
//!   connection's notifications. Anything done on a [`Client`] from [`Manager::client`] lives
//!   and dies with that connection.
//! - [`Manager::disconnect`] returns after the server's process is gone, also when it was
//!   still connecting. Dropping the manager stops every server in the background.

mod cache_file;
mod cause;
mod server;
mod subscribe;

use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use futures_util::stream::{BoxStream, Stream, StreamExt as _};
use mcp_manager::config::ServerConfig;
use mcp_manager::naming::ToolNamespace;
use mcp_manager::reconnect::{ReconnectConfig, ServerStatus};
use mcp_manager::startup::{StartupServer, startup_plan};
use mcp_manager::tool_cache::{CacheKey, CachePolicy, ToolCache};
use mcp_proto::types::{CallToolResult, Tool};
use serde::Serialize;
use tokio::sync::{Semaphore, broadcast, watch};

use crate::client::{Client, ClientBuilder};
use crate::error::Error;
use crate::notify::Lagged;
use crate::runtime::Runtime;

/// Makes the [`ClientBuilder`] for one connection attempt of a server (its options: client
/// info, handlers, graces). The manager sets the runtime itself.
pub type ClientFactory<R> = Arc<dyn Fn(&ServerConfig) -> ClientBuilder<R> + Send + Sync>;

/// One tool as the model sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct NamespacedTool {
    /// The model-facing name (`server__tool`, sanitized, unique, at most 64 characters).
    /// Pass it to [`Manager::call_tool`].
    pub name: String,
    /// The configured server name.
    pub server: String,
    /// The tool as the server lists it (its `name` is the server's own name for it).
    pub tool: Tool,
    /// Whether the tool comes from the cache because the server is still connecting.
    pub from_cache: bool,
}

/// A server's status changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusChange {
    /// The server.
    pub server: String,
    /// Its new status.
    pub status: ServerStatus,
}

/// What [`Manager::start`] found when it returned.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StartupSummary {
    /// Ready servers.
    pub live: Vec<String>,
    /// Still coming up, served from the cache.
    pub from_cache: Vec<String>,
    /// Still coming up, no usable cache entry: no tools yet.
    pub pending: Vec<String>,
    /// Servers that failed, and why: a permanent error (the program does not exist, the
    /// handshake was refused), retries used up, or a server never ready whose last attempt
    /// reached it and failed: its process exited (the exit status and last stderr line:
    /// `exited with code 3: fatal: no API key`) or it answered with an HTTP error status.
    /// The start did not wait for them. The last kind is still retried by the reconnect
    /// policy unless [`ReconnectConfig::retry_exit_before_ready`] is `false` (see
    /// [`Manager::status`]: `Reconnecting` while retried, `Failed` once given up).
    pub failed: Vec<(String, String)>,
    /// Never ready: their last connection attempt could not reach them (the connection was
    /// refused, the host not found, a network error), and why. The start did not wait for
    /// them; the manager retries them by its reconnect policy, so they may still come up (or
    /// fail). A server that was reached and failed is in [`failed`](Self::failed) instead.
    pub unreachable: Vec<(String, String)>,
}

/// Why a manager call failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ManagerError {
    /// No tool has this model-facing name.
    #[error("unknown tool {0:?}")]
    UnknownTool(String),
    /// No server has this name.
    #[error("unknown server {0:?}")]
    UnknownServer(String),
    /// The tool's server is not connected now (connecting, reconnecting, failed, disabled).
    #[error("server {server:?} is not ready ({})", describe(.status))]
    NotReady {
        /// The server.
        server: String,
        /// Its status.
        status: ServerStatus,
    },
    /// The server's call failed.
    #[error(transparent)]
    Call(#[from] Error),
}

fn describe(status: &ServerStatus) -> String {
    match status {
        ServerStatus::Connecting => "connecting".into(),
        ServerStatus::Ready => "ready".into(),
        ServerStatus::Failed { reason, .. } => format!("failed: {reason}"),
        ServerStatus::Reconnecting { attempt, .. } => format!("reconnecting, attempt {attempt}"),
        ServerStatus::Disabled => "disabled".into(),
        other => format!("{other:?}"),
    }
}

/// A stream of [`StatusChange`]s from [`Manager::status_changes`]: bounded; a reader that
/// falls behind gets one `Err(Lagged(n))` and continues with the newest. Ends when the manager
/// is dropped.
pub struct StatusChanges {
    inner: BoxStream<'static, Result<StatusChange, Lagged>>,
}

impl fmt::Debug for StatusChanges {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StatusChanges").finish_non_exhaustive()
    }
}

impl StatusChanges {
    fn new(rx: broadcast::Receiver<StatusChange>) -> Self {
        let inner = futures_util::stream::unfold(rx, |mut rx| async move {
            let item = match rx.recv().await {
                Ok(c) => Ok(c),
                Err(broadcast::error::RecvError::Lagged(n)) => Err(Lagged(n)),
                Err(broadcast::error::RecvError::Closed) => return None,
            };
            Some((item, rx))
        })
        .fuse()
        .boxed();
        StatusChanges { inner }
    }

    /// The next change; `None` once the manager is gone.
    pub async fn recv(&mut self) -> Option<Result<StatusChange, Lagged>> {
        self.inner.next().await
    }
}

impl Stream for StatusChanges {
    type Item = Result<StatusChange, Lagged>;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        self.inner.poll_next_unpin(cx)
    }
}

/// The options of a [`Manager`] and its servers; finish with [`build`](Self::build).
pub struct ManagerBuilder<R: Runtime> {
    runtime: R,
    cache_dir: Option<PathBuf>,
    cache_max_age: Duration,
    startup_deadline: Duration,
    max_concurrent_connects: usize,
    reconnect: ReconnectConfig,
    factory: ClientFactory<R>,
    servers: Vec<ServerConfig>,
}

impl<R: Runtime> fmt::Debug for ManagerBuilder<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ManagerBuilder")
            .field("cache_dir", &self.cache_dir)
            .field("startup_deadline", &self.startup_deadline)
            .field("servers", &self.servers.len())
            .finish_non_exhaustive()
    }
}

impl<R: Runtime> ManagerBuilder<R> {
    /// Where the tool cache files live (default: no file cache). The directory is created
    /// when the first entry is written.
    #[must_use]
    pub fn cache_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cache_dir = Some(dir.into());
        self
    }

    /// How old a cache entry may be to be served after the start-up deadline (default 7 days).
    #[must_use]
    pub fn cache_max_age(mut self, max_age: Duration) -> Self {
        self.cache_max_age = max_age;
        self
    }

    /// How long [`Manager::start`] waits for slow servers (default 5 s).
    #[must_use]
    pub fn startup_deadline(mut self, deadline: Duration) -> Self {
        self.startup_deadline = deadline;
        self
    }

    /// How many servers may be connecting at once (default 8; at least 1).
    #[must_use]
    pub fn max_concurrent_connects(mut self, n: usize) -> Self {
        self.max_concurrent_connects = n.max(1);
        self
    }

    /// Backoff and give-up tuning for reconnects. The jitter seed is mixed with each server's
    /// name and the wall clock, so servers do not retry in lockstep.
    #[must_use]
    pub fn reconnect(mut self, config: ReconnectConfig) -> Self {
        self.reconnect = config;
        self
    }

    /// The connection options of each attempt (default: [`ClientBuilder::new`]). A config's
    /// `timeout` and `startupTimeout` apply unless the builder sets its own.
    #[must_use]
    pub fn client_builder(
        mut self,
        factory: impl Fn(&ServerConfig) -> ClientBuilder<R> + Send + Sync + 'static,
    ) -> Self {
        self.factory = Arc::new(factory);
        self
    }

    /// Adds a server. A later server with the same name replaces the earlier one.
    #[must_use]
    #[allow(
        clippy::should_implement_trait,
        reason = "a builder step, not arithmetic"
    )]
    pub fn add(mut self, config: ServerConfig) -> Self {
        self.servers.retain(|s| s.name != config.name);
        self.servers.push(config);
        self
    }

    /// Adds servers in order (see [`add`](Self::add)).
    #[must_use]
    pub fn add_all(self, configs: impl IntoIterator<Item = ServerConfig>) -> Self {
        configs.into_iter().fold(self, Self::add)
    }

    /// The manager, with nothing connected yet: call [`Manager::start`].
    #[must_use]
    pub fn build(self) -> Manager<R> {
        let (status_tx, _) = broadcast::channel(256);
        let (version, _) = watch::channel(0u64);
        let mut slots = Vec::new();
        for config in self.servers {
            let mut reconnect = self.reconnect.clone();
            reconnect.seed = jitter_seed(reconnect.seed, &config.name);
            slots.push(server::Slot::new(config, &reconnect));
        }
        Manager {
            inner: Arc::new(Inner {
                runtime: self.runtime,
                cache_dir: self.cache_dir,
                cache_policy: CachePolicy::StartupFallback {
                    max_age: self.cache_max_age,
                },
                cache_max_age: self.cache_max_age,
                startup_deadline: self.startup_deadline,
                factory: self.factory,
                connects: Arc::new(Semaphore::new(self.max_concurrent_connects)),
                status_tx,
                version,
                state: Mutex::new(State {
                    slots,
                    names: ToolNamespace::new(),
                    cache: ToolCache::new(),
                    deadline: None,
                }),
            }),
        }
    }
}

/// A per-server, per-run jitter seed.
fn jitter_seed(seed: u64, name: &str) -> u64 {
    use std::hash::{BuildHasher as _, Hasher as _};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write(name.as_bytes());
    h.write_u64(cache_file::now_ms());
    seed ^ h.finish()
}

pub(crate) struct Inner<R: Runtime> {
    runtime: R,
    cache_dir: Option<PathBuf>,
    cache_policy: CachePolicy,
    /// Entries older than this are not served (whatever age they were written with).
    cache_max_age: Duration,
    startup_deadline: Duration,
    factory: ClientFactory<R>,
    connects: Arc<Semaphore>,
    status_tx: broadcast::Sender<StatusChange>,
    /// Bumped on every status change, for [`Manager::start`] to wait on.
    version: watch::Sender<u64>,
    state: Mutex<State<R>>,
}

pub(crate) struct State<R: Runtime> {
    slots: Vec<server::Slot<R>>,
    names: ToolNamespace,
    cache: ToolCache,
    /// The start-up deadline, once [`Manager::start`] ran.
    deadline: Option<Instant>,
}

impl<R: Runtime> State<R> {
    fn slot(&self, name: &str) -> Option<&server::Slot<R>> {
        self.slots.iter().find(|s| s.config.name == name)
    }

    fn slot_mut(&mut self, name: &str) -> Option<&mut server::Slot<R>> {
        self.slots.iter_mut().find(|s| s.config.name == name)
    }

    /// Replaces `server`'s names with `tools`'.
    fn rename(&mut self, server: &str, tools: &[Tool]) {
        self.names.remove_server(server);
        for tool in tools {
            self.names.insert(server, &tool.name);
        }
    }
}

impl<R: Runtime> Inner<R> {
    fn lock(&self) -> MutexGuard<'_, State<R>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Tells watchers that `server`'s status may have changed.
    fn publish(&self, server: &str, status: ServerStatus) {
        // No receiver is fine.
        let _ = self.status_tx.send(StatusChange {
            server: server.to_owned(),
            status,
        });
        self.version.send_modify(|v| *v = v.wrapping_add(1));
    }
}

/// Many MCP servers behind one tool list; see the [module docs](self).
///
/// Built by [`Manager::builder`]; call [`start`](Self::start) once. Methods take `&self`, so
/// share it in an `Arc` to call tools from several tasks.
pub struct Manager<R: Runtime> {
    inner: Arc<Inner<R>>,
}

impl<R: Runtime> fmt::Debug for Manager<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Manager")
            .field("status", &self.status())
            .finish_non_exhaustive()
    }
}

impl<R: Runtime> Drop for Manager<R> {
    fn drop(&mut self) {
        // Each supervisor closes its connection (and its process) when told to stop.
        for slot in &self.inner.lock().slots {
            slot.request_stop();
        }
    }
}

impl<R: Runtime> Manager<R> {
    /// A builder with the defaults: no cache directory, 7-day cache age, 5 s start-up deadline,
    /// 8 concurrent connects, [`ReconnectConfig::default`], [`ClientBuilder::new`].
    #[must_use]
    pub fn builder(runtime: R) -> ManagerBuilder<R> {
        ManagerBuilder {
            runtime,
            cache_dir: None,
            cache_max_age: Duration::from_secs(7 * 24 * 60 * 60),
            startup_deadline: Duration::from_secs(5),
            max_concurrent_connects: 8,
            reconnect: ReconnectConfig::default(),
            factory: Arc::new(|_| ClientBuilder::new()),
            servers: Vec::new(),
        }
    }

    /// Loads the cache entries, connects every server in parallel (at most
    /// `max_concurrent_connects` at a time) and returns when every server is ready, failed or
    /// unreachable (a first attempt that failed outright is not waited for, though it is
    /// retried by the reconnect policy: see [`StartupSummary`]), or at the start-up
    /// deadline, whichever comes first. Calling it again only waits again.
    pub async fn start(&self) -> StartupSummary {
        let rt = &self.inner.runtime;
        let deadline = {
            let mut state = self.inner.lock();
            let deadline = *state
                .deadline
                .get_or_insert_with(|| rt.now() + self.inner.startup_deadline);
            let now_ms = cache_file::now_ms();
            let State {
                slots,
                names,
                cache,
                ..
            } = &mut *state;
            for slot in slots.iter_mut() {
                if let Some(dir) = &self.inner.cache_dir
                    && let Some(entry) = cache_file::load(dir, &slot.key)
                    && entry.is_younger_than(now_ms, self.inner.cache_max_age)
                    && let Some(tools) = cache_file::decode_tools(&entry.payload)
                {
                    names.remove_server(&slot.config.name);
                    for tool in &tools {
                        names.insert(&slot.config.name, &tool.name);
                    }
                    slot.cached = Some(tools);
                    cache.insert(entry);
                }
            }
            for slot in slots.iter_mut() {
                slot.spawn(&self.inner);
            }
            deadline
        };
        let mut version = self.inner.version.subscribe();
        loop {
            version.borrow_and_update();
            let wait_until = {
                let state = self.inner.lock();
                let statuses = statuses(&state, self.inner.cache_max_age);
                let servers: Vec<_> = statuses.iter().map(ServerState::as_startup).collect();
                startup_plan(rt.now(), deadline, &servers).wait_until
            };
            let Some(at) = wait_until else { break };
            let changed = std::pin::pin!(version.changed());
            // A status changed or the deadline came: look again. (The sender lives in
            // `inner`, which we hold, so `changed` cannot fail.)
            let _ = futures_util::future::select(changed, rt.sleep_until(at)).await;
        }
        self.summary()
    }

    fn summary(&self) -> StartupSummary {
        let state = self.inner.lock();
        let now = self.inner.runtime.now();
        let deadline = state.deadline.unwrap_or(now);
        let statuses = statuses(&state, self.inner.cache_max_age);
        let servers: Vec<_> = statuses.iter().map(ServerState::as_startup).collect();
        let plan = startup_plan(now.max(deadline), deadline, &servers);
        let own = |v: Vec<&str>| v.into_iter().map(str::to_owned).collect();
        StartupSummary {
            live: own(plan.live),
            from_cache: own(plan.from_cache),
            pending: own(plan.pending),
            failed: plan
                .failed
                .into_iter()
                .map(|(name, why)| (name.to_owned(), why.to_owned()))
                .collect(),
            unreachable: plan
                .unreachable
                .into_iter()
                .map(|(name, why)| (name.to_owned(), why.to_owned()))
                .collect(),
        }
    }

    /// Every server's status, in the order they were added.
    #[must_use]
    pub fn status(&self) -> Vec<(String, ServerStatus)> {
        self.inner
            .lock()
            .slots
            .iter()
            .map(|s| (s.config.name.clone(), s.policy.status().clone()))
            .collect()
    }

    /// Why `server`'s last connection attempt failed or its last connection ended, if one
    /// did (an exit status and its last stderr line, a refused connection, ...): what a
    /// server reconnecting is recovering from. `None` for an unknown server.
    #[must_use]
    pub fn last_failure(&self, server: &str) -> Option<String> {
        let state = self.inner.lock();
        state.slot(server)?.policy.last_failure().map(str::to_owned)
    }

    /// `Some(why)` while `server` has never been ready and its last connection attempt could
    /// not reach it (see [`StartupSummary::unreachable`]); it may still be retrying.
    #[must_use]
    pub fn unreachable(&self, server: &str) -> Option<String> {
        let state = self.inner.lock();
        state.slot(server)?.policy.unreachable().map(str::to_owned)
    }

    /// `Some(why)` while `server` has never been ready and its last connection attempt
    /// reached it and failed (its process exited, an HTTP error status: see
    /// [`StartupSummary::failed`]); it may still be retrying ([`status`](Self::status)).
    #[must_use]
    pub fn failed_before_ready(&self, server: &str) -> Option<String> {
        let state = self.inner.lock();
        state
            .slot(server)?
            .policy
            .failed_before_ready()
            .map(str::to_owned)
    }

    /// A stream of status changes from now on; a ready server whose tools were listed again
    /// (after its `notifications/tools/list_changed`) appears again with the same status.
    #[must_use]
    pub fn status_changes(&self) -> StatusChanges {
        StatusChanges::new(self.inner.status_tx.subscribe())
    }

    /// Every tool the model may use now: the live tools of ready servers and, once the
    /// start-up deadline has passed, the cached tools of servers still coming up (marked
    /// `from_cache`). In the order servers were added, then the server's order.
    #[must_use]
    pub fn tools(&self) -> Vec<NamespacedTool> {
        let mut state = self.inner.lock();
        let Some(deadline) = state.deadline else {
            return Vec::new();
        };
        let now = self.inner.runtime.now();
        let statuses = statuses(&state, self.inner.cache_max_age);
        let servers: Vec<_> = statuses.iter().map(ServerState::as_startup).collect();
        let plan = startup_plan(now, deadline, &servers);
        let mut chosen: HashMap<String, bool> = HashMap::new();
        for name in plan.live {
            chosen.insert(name.to_owned(), false);
        }
        for name in plan.from_cache {
            chosen.insert(name.to_owned(), true);
        }
        let State { slots, names, .. } = &mut *state;
        let mut out = Vec::new();
        for slot in slots.iter() {
            let Some(&from_cache) = chosen.get(&slot.config.name) else {
                continue;
            };
            let list = if from_cache {
                slot.cached.as_deref().unwrap_or_default()
            } else {
                &slot.tools
            };
            for tool in list {
                // Present already (inserted when the list arrived); insert is idempotent.
                let name = names.insert(&slot.config.name, &tool.name);
                out.push(NamespacedTool {
                    name,
                    server: slot.config.name.clone(),
                    tool: tool.clone(),
                    from_cache,
                });
            }
        }
        out
    }

    /// The server and the server's own tool name behind a model-facing name.
    #[must_use]
    pub fn resolve(&self, name: &str) -> Option<(String, String)> {
        self.inner
            .lock()
            .names
            .resolve(name)
            .map(|(s, t)| (s.to_owned(), t.to_owned()))
    }

    /// The live client of a ready server, for anything beyond tools (resources, prompts).
    /// What is set up through it lives as long as that connection: for a subscription or a
    /// log level that survives the server's reconnect, use [`Manager::subscribe`],
    /// [`Manager::listen`] and [`Manager::set_log_level`].
    #[must_use]
    pub fn client(&self, server: &str) -> Option<Client<R>> {
        let state = self.inner.lock();
        let slot = state.slot(server)?;
        (*slot.policy.status() == ServerStatus::Ready)
            .then(|| slot.client.clone())
            .flatten()
    }

    /// Calls a tool by its model-facing name (from [`tools`](Self::tools)), on its server,
    /// with that server's request timeout.
    ///
    /// # Errors
    ///
    /// [`ManagerError::UnknownTool`] for a name never handed out, [`ManagerError::NotReady`]
    /// at once when its server is not connected, [`ManagerError::Call`] for the call's own
    /// failure. A tool's own failure is `Ok` with `is_error: Some(true)`.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: impl Serialize,
    ) -> Result<CallToolResult, ManagerError> {
        self.call_tool_with(name, arguments, crate::CallOptions::new())
            .await
    }

    /// [`call_tool`](Self::call_tool) with per-call options (a timeout, progress, a timeout
    /// that progress restarts), as [`Client::call_tool_with`](crate::Client::call_tool_with).
    ///
    /// # Errors
    ///
    /// As for [`call_tool`](Self::call_tool).
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: impl Serialize,
        options: crate::CallOptions,
    ) -> Result<CallToolResult, ManagerError> {
        let (client, tool) = {
            let state = self.inner.lock();
            let (server, tool) = state
                .names
                .resolve(name)
                .ok_or_else(|| ManagerError::UnknownTool(name.to_owned()))?;
            let slot = state
                .slot(server)
                .ok_or_else(|| ManagerError::UnknownTool(name.to_owned()))?;
            let status = slot.policy.status();
            match (&slot.client, status) {
                (Some(client), ServerStatus::Ready) => (client.clone(), tool.to_owned()),
                _ => {
                    return Err(ManagerError::NotReady {
                        server: server.to_owned(),
                        status: status.clone(),
                    });
                }
            }
        };
        Ok(client.call_tool_with(tool, arguments, options).await?)
    }

    /// Stops one server: cancels a connection attempt under way or closes the connection, and
    /// returns once its process is gone (within the shutdown graces). Its status becomes
    /// [`ServerStatus::Disabled`] and its tools leave [`tools`](Self::tools).
    ///
    /// # Errors
    ///
    /// [`ManagerError::UnknownServer`].
    pub async fn disconnect(&self, server: &str) -> Result<(), ManagerError> {
        let mut done = {
            let mut state = self.inner.lock();
            let slot = state
                .slot_mut(server)
                .ok_or_else(|| ManagerError::UnknownServer(server.to_owned()))?;
            slot.request_stop();
            match slot.done() {
                Some(done) => done,
                None => {
                    // Never started: nothing runs, switch it off here.
                    slot.policy.disable();
                    drop(state);
                    self.inner.publish(server, ServerStatus::Disabled);
                    return Ok(());
                }
            }
        };
        // An error means the supervisor is gone, which is also done.
        let _ = done.wait_for(|d| *d).await;
        Ok(())
    }

    /// Stops every server (see [`disconnect`](Self::disconnect)), in parallel.
    pub async fn shutdown(&self) {
        let names: Vec<String> = self
            .inner
            .lock()
            .slots
            .iter()
            .map(|s| s.config.name.clone())
            .collect();
        futures_util::future::join_all(names.iter().map(|n| self.disconnect(n))).await;
    }
}

/// One server as [`statuses`] reads it, owned, for [`startup_plan`].
struct ServerState {
    name: String,
    status: ServerStatus,
    has_fresh_cache: bool,
    unreachable: Option<String>,
    failed_before_ready: Option<String>,
}

impl ServerState {
    fn as_startup(&self) -> StartupServer<'_> {
        StartupServer {
            name: &self.name,
            status: &self.status,
            has_fresh_cache: self.has_fresh_cache,
            unreachable: self.unreachable.as_deref(),
            failed_before_ready: self.failed_before_ready.as_deref(),
        }
    }
}

/// Every server's state, for [`startup_plan`].
fn statuses<R: Runtime>(state: &State<R>, max_age: Duration) -> Vec<ServerState> {
    let now_ms = cache_file::now_ms();
    state
        .slots
        .iter()
        .map(|s| ServerState {
            name: s.config.name.clone(),
            status: s.policy.status().clone(),
            has_fresh_cache: s.cached.is_some()
                && state
                    .cache
                    .get(&s.key)
                    .is_some_and(|e| e.is_younger_than(now_ms, max_age)),
            unreachable: s.policy.unreachable().map(str::to_owned),
            failed_before_ready: s.policy.failed_before_ready().map(str::to_owned),
        })
        .collect()
}

/// A cache key for tests and tools that inspect the cache directory: the file a server's
/// tools are stored in is `dir.join(cache_key(config).file_name())`.
#[must_use]
pub fn cache_key(config: &ServerConfig) -> CacheKey {
    CacheKey::for_server(config)
}
