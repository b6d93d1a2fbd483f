//! One server's supervisor: a task that connects, lists tools, watches the connection and
//! reconnects as the core's [`ReconnectPolicy`] says, until it gives up or is told to stop.

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::{Either, select};
use mcp_manager::config::ServerConfig;
use mcp_manager::reconnect::{
    ExitCause, ReconnectAction, ReconnectConfig, ReconnectPolicy, ServerStatus,
};
use mcp_manager::tool_cache::{CacheEntry, CacheKey};
use mcp_proto::session::NotificationKind;
use mcp_proto::types::{LoggingLevel, Tool};
use tokio::sync::watch;

use super::{Inner, State, cache_file, cause};
use crate::client::{Client, PhaseSlot, closed_error};
use crate::notify::Notifications;
use crate::runtime::Runtime;
use crate::shared::Phase;

/// How long a cancelled connection attempt may take to shut its process down: the default
/// graces (2 s + 2 s) plus the driver's flush and a margin.
const ABANDON_BOUND: Duration = Duration::from_secs(7);

/// One configured server, as the manager holds it.
pub(crate) struct Slot<R: Runtime> {
    pub(super) config: ServerConfig,
    pub(super) key: CacheKey,
    pub(super) policy: ReconnectPolicy,
    /// The live connection, while ready.
    pub(super) client: Option<Client<R>>,
    /// The live tools (from the last `tools/list` of the current connection).
    pub(super) tools: Vec<Tool>,
    /// The tools of the cache entry loaded at start-up, if any.
    pub(super) cached: Option<Vec<Tool>>,
    /// The log level set through the manager, set again on each new connection.
    pub(super) log_level: Option<LoggingLevel>,
    stop: watch::Sender<bool>,
    /// `Some` once the supervisor runs: becomes `true` when it has finished.
    done: Option<watch::Receiver<bool>>,
}

impl<R: Runtime> Slot<R> {
    pub(super) fn new(config: ServerConfig, reconnect: &ReconnectConfig) -> Self {
        let (stop, _) = watch::channel(false);
        Slot {
            key: CacheKey::for_server(&config),
            config,
            policy: ReconnectPolicy::new(reconnect),
            client: None,
            tools: Vec::new(),
            cached: None,
            log_level: None,
            stop,
            done: None,
        }
    }

    /// Tells the supervisor to stop (idempotent).
    pub(super) fn request_stop(&self) {
        self.stop.send_replace(true);
    }

    /// A receiver of "the supervisor has finished", if it was started.
    pub(super) fn done(&self) -> Option<watch::Receiver<bool>> {
        self.done.clone()
    }

    /// Starts the supervisor on the runtime, once.
    pub(super) fn spawn(&mut self, inner: &Arc<Inner<R>>) {
        if self.done.is_some() {
            return;
        }
        let (done_tx, done_rx) = watch::channel(false);
        self.done = Some(done_rx);
        let supervisor = Supervisor {
            inner: inner.clone(),
            name: self.config.name.clone(),
            config: self.config.clone(),
            key: self.key.clone(),
            stop: self.stop.subscribe(),
        };
        let span = tracing::info_span!("mcp_manager_server", server = %self.config.name);
        inner
            .runtime
            .spawn(Box::pin(tracing::Instrument::instrument(
                async move {
                    supervisor.run().await;
                    done_tx.send_replace(true);
                },
                span,
            )));
    }
}

/// How a connection attempt or a connection ended.
enum Outcome<T> {
    Done(T),
    Failed(ExitCause),
    Stopped,
}

struct Supervisor<R: Runtime> {
    inner: Arc<Inner<R>>,
    name: String,
    config: ServerConfig,
    key: CacheKey,
    stop: watch::Receiver<bool>,
}

impl<R: Runtime> Supervisor<R> {
    async fn run(mut self) {
        loop {
            let action = {
                let mut state = self.inner.lock();
                let Some(slot) = state.slot_mut(&self.name) else {
                    return;
                };
                match slot.policy.poll_action() {
                    Some(action) => Ok(action),
                    None => Err(slot.policy.poll_timeout()),
                }
            };
            match action {
                Ok(ReconnectAction::GiveUp(reason)) => {
                    tracing::info!(reason = %reason, "giving up");
                    let status = self.status();
                    self.inner.publish(&self.name, status);
                    // Stay until stopped, so that `disconnect` has something to wait for.
                    stopped(&mut self.stop).await;
                    break;
                }
                Ok(_connect) => match self.connect().await {
                    Outcome::Stopped => break,
                    Outcome::Failed(cause) => self.exit(&cause),
                    Outcome::Done((client, notes)) => match self.serve(client, notes).await {
                        Outcome::Stopped => break,
                        Outcome::Failed(cause) | Outcome::Done(cause) => self.exit(&cause),
                    },
                },
                Err(Some(at)) => {
                    let sleep = self.inner.runtime.sleep_until(at);
                    if let Either::Right(_) =
                        select(sleep, std::pin::pin!(stopped(&mut self.stop))).await
                    {
                        break;
                    }
                    let now = self.inner.runtime.now();
                    let status = {
                        let mut state = self.inner.lock();
                        let Some(slot) = state.slot_mut(&self.name) else {
                            return;
                        };
                        slot.policy.handle_timeout(now);
                        slot.policy.status().clone()
                    };
                    self.inner.publish(&self.name, status);
                }
                // Disabled: nothing to do until stopped.
                Err(None) => {
                    stopped(&mut self.stop).await;
                    break;
                }
            }
        }
        let client = {
            let mut state = self.inner.lock();
            let Some(slot) = state.slot_mut(&self.name) else {
                return;
            };
            slot.policy.disable();
            slot.tools.clear();
            slot.cached = None;
            let client = slot.client.take();
            state.names.remove_server(&self.name);
            client
        };
        if let Some(client) = client {
            client.close().await;
        }
        self.inner.publish(&self.name, ServerStatus::Disabled);
    }

    fn status(&self) -> ServerStatus {
        self.inner
            .lock()
            .slot(&self.name)
            .map_or(ServerStatus::Disabled, |s| s.policy.status().clone())
    }

    /// Feeds the end of an attempt or connection to the policy.
    fn exit(&self, cause: &ExitCause) {
        tracing::info!(cause = %cause.describe(), "connection ended");
        let now = self.inner.runtime.now();
        let status = {
            let mut state = self.inner.lock();
            let Some(slot) = state.slot_mut(&self.name) else {
                return;
            };
            slot.client = None;
            if let Err(e) = slot.policy.handle_exit(now, cause) {
                tracing::warn!(error = %e, "reconnect policy misuse");
            }
            slot.policy.status().clone()
        };
        self.inner.publish(&self.name, status);
    }

    /// One connection attempt: a connect slot, the handshake, the first tool list.
    async fn connect(&mut self) -> Outcome<(Client<R>, Notifications)> {
        let permit = {
            let acquire = std::pin::pin!(self.inner.connects.clone().acquire_owned());
            match select(acquire, std::pin::pin!(stopped(&mut self.stop))).await {
                Either::Left((Ok(permit), _)) => permit,
                // The semaphore is never closed.
                Either::Left((Err(_), _)) | Either::Right(_) => return Outcome::Stopped,
            }
        };
        let slot: PhaseSlot = Arc::default();
        let mut builder = (self.inner.factory)(&self.config).runtime(self.inner.runtime.clone());
        builder.phase_slot = Some(slot.clone());
        let attempt = Box::pin(builder.connect(self.config.clone()));
        let result = match select(attempt, std::pin::pin!(stopped(&mut self.stop))).await {
            Either::Left((result, _)) => result,
            Either::Right((_, attempt)) => {
                // Dropping the attempt closes the half-open session; wait for its process.
                drop(attempt);
                let phase = slot
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .take();
                if let Some(mut phase) = phase {
                    let finished = phase.wait_for(|p| matches!(p, Phase::Finished(_)));
                    let bound = self
                        .inner
                        .runtime
                        .sleep_until(self.inner.runtime.now() + ABANDON_BOUND);
                    let _ = select(std::pin::pin!(finished), bound).await;
                }
                return Outcome::Stopped;
            }
        };
        drop(permit);
        let client = match result {
            Ok(client) => client,
            Err(e) => return Outcome::Failed(cause::of_error(&e)),
        };
        // Server-side state first, so that it is in place before anyone sees the server ready.
        let level = self.inner.lock().slot(&self.name).and_then(|s| s.log_level);
        let restored = {
            let restore = std::pin::pin!(super::subscribe::restore_log_level(&client, level));
            match select(restore, std::pin::pin!(stopped(&mut self.stop))).await {
                Either::Left((result, _)) => Some(result),
                Either::Right(_) => None,
            }
        };
        match restored {
            Some(Ok(())) => {}
            Some(Err(e)) => {
                client.close().await;
                return Outcome::Failed(cause::of_error(&e));
            }
            None => {
                client.close().await;
                return Outcome::Stopped;
            }
        }
        // Subscribe before listing, so that a change during the list is not missed.
        let notes = client.notifications();
        let listed = {
            let list = std::pin::pin!(client.list_tools());
            match select(list, std::pin::pin!(stopped(&mut self.stop))).await {
                Either::Left((listed, _)) => listed,
                Either::Right(_) => {
                    client.close().await;
                    return Outcome::Stopped;
                }
            }
        };
        let tools = match listed {
            Ok(tools) => tools,
            Err(e) => {
                client.close().await;
                return Outcome::Failed(cause::of_error(&e));
            }
        };
        let now = self.inner.runtime.now();
        let entry = self.cache_entry(&tools);
        // Ready and its tools in one critical section: a reader woken by another server's
        // change must never see this server ready with no tools yet.
        let status = {
            let mut state = self.inner.lock();
            let Some(slot) = state.slot_mut(&self.name) else {
                return Outcome::Stopped;
            };
            if let Err(e) = slot.policy.handle_connected(now) {
                tracing::warn!(error = %e, "reconnect policy misuse");
            }
            slot.client = Some(client.clone());
            let status = slot.policy.status().clone();
            self.put_tools(&mut state, tools, entry.as_ref());
            status
        };
        self.write_cache_file(entry.as_ref());
        self.inner.publish(&self.name, status);
        Outcome::Done((client, notes))
    }

    /// Serves a ready connection until it ends or the supervisor is stopped, re-listing the
    /// tools on `notifications/tools/list_changed`.
    async fn serve(&mut self, client: Client<R>, mut notes: Notifications) -> Outcome<ExitCause> {
        let mut notes_open = true;
        loop {
            let event = {
                let closed = std::pin::pin!(client.closed());
                let stop = std::pin::pin!(stopped(&mut self.stop));
                let note = std::pin::pin!(async {
                    if notes_open {
                        notes.recv().await
                    } else {
                        std::future::pending().await
                    }
                });
                match select(select(closed, stop), note).await {
                    Either::Left((Either::Left((reason, _)), _)) => Event::Closed(reason),
                    Either::Left((Either::Right(_), _)) => Event::Stop,
                    Either::Right((note, _)) => Event::Note(note),
                }
            };
            match event {
                Event::Stop => {
                    client.close().await;
                    return Outcome::Stopped;
                }
                Event::Closed(reason) => {
                    let error = closed_error(&client.inner.shared, reason);
                    return Outcome::Done(cause::of_error(&error));
                }
                Event::Note(None) => notes_open = false,
                Event::Note(Some(Ok(n))) if n.kind() != NotificationKind::ToolsListChanged => {}
                // A change, or lag that may have hidden one: list again.
                Event::Note(Some(_)) => {
                    tracing::debug!("tool list changed: listing again");
                    self.remove_cache_entry();
                    match client.list_tools().await {
                        Ok(tools) => self.store_tools(tools),
                        Err(e) if e.is_connection_lost() => {}
                        Err(e) => tracing::warn!(error = %e, "listing tools after a change failed"),
                    }
                }
            }
        }
    }

    /// Makes `tools` the server's live tools, names them and writes the cache entry, then
    /// publishes the server's (unchanged) status: a watcher of [`Manager::status_changes`]
    /// learns that [`Manager::tools`] changed.
    ///
    /// [`Manager::status_changes`]: super::Manager::status_changes
    /// [`Manager::tools`]: super::Manager::tools
    fn store_tools(&self, tools: Vec<Tool>) {
        let entry = self.cache_entry(&tools);
        self.put_tools(&mut self.inner.lock(), tools, entry.as_ref());
        self.write_cache_file(entry.as_ref());
        let status = self.status();
        self.inner.publish(&self.name, status);
    }

    /// The cache entry for `tools`, if they encode.
    fn cache_entry(&self, tools: &[Tool]) -> Option<CacheEntry> {
        cache_file::encode_tools(tools).map(|payload| {
            CacheEntry::new(
                &self.config,
                cache_file::now_ms(),
                self.inner.cache_policy,
                payload,
            )
        })
    }

    /// Names `tools`, makes them the slot's, and keeps `entry` in the in-memory cache.
    fn put_tools(&self, state: &mut State<R>, tools: Vec<Tool>, entry: Option<&CacheEntry>) {
        state.rename(&self.name, &tools);
        if let Some(slot) = state.slot_mut(&self.name) {
            slot.tools = tools;
        }
        if let Some(entry) = entry {
            state.cache.insert(entry.clone());
        }
    }

    /// Writes `entry` to the cache directory, if there is one (outside the lock: file I/O).
    fn write_cache_file(&self, entry: Option<&CacheEntry>) {
        if let (Some(dir), Some(entry)) = (&self.inner.cache_dir, entry) {
            cache_file::store(dir, entry);
        }
    }

    fn remove_cache_entry(&self) {
        let removed = self.inner.lock().cache.handle_list_changed(&self.key);
        if let (Some(dir), Some(_)) = (&self.inner.cache_dir, removed) {
            cache_file::remove(dir, &self.key);
        }
    }
}

enum Event {
    Closed(mcp_proto::session::CloseReason),
    Stop,
    Note(Option<Result<mcp_proto::session::ServerNotification, crate::notify::Lagged>>),
}

/// Completes when a stop was requested or the manager is gone.
async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
}
