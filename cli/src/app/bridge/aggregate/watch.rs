//! Keeps the host in step with the servers: `list_changed` when what it is offered changes,
//! each server's notifications passed on, status changes reported on stderr.
//!
//! - Tools: after every status change of any server (it came up, was lost, reconnected,
//!   failed, or listed its tools again after its own `tools/list_changed`) the host-visible
//!   tool list is computed again; when it differs from the last one, the host gets
//!   `notifications/tools/list_changed`.
//! - Prompts and resources: the host gets their `list_changed` when a server offering them
//!   comes up or is lost, and when a server sends its own.
//! - Each ready connection's pump hands its notifications to the host, and releases that
//!   server's answers only after the notifications received before them ([`Barriers`]: a
//!   log line a server wrote before a call's result reaches the host before the answer).
//! - Each ready connection's other notifications: log messages through the host session's
//!   log (its level filter applies) with the logger named `SERVER` or `SERVER/LOGGER`;
//!   `resources/updated` is left to the subscription relays; progress to the calls;
//!   `tasks/status` under the host-visible task id ([`super::tasks`]); anything else passed
//!   on as it came. With `--listen` every session's watcher passes on every server's
//!   notifications (the sessions share the servers), but a task's status only to the
//!   session that may see the task ([`super::task_owners`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use futures_util::FutureExt as _;
use tokio::sync::{mpsc, oneshot};

use mcp_manager::config::ServerConfig;
use mcp_manager::reconnect::ServerStatus;
use mcp_proto::session::{NotificationKind, ServerNotification};
use mcp_proto::types::{LoggingMessageParams, Tool};
use mcp_tokio::Client;
use mcp_tokio::mcp_driver::Lagged;
use mcp_tokio::mcp_driver::manager::StatusChanges;
use mcp_tokio::server::{ListChanged, ServerHandle};

use super::router::Shared;
use super::task_owners::TaskOwners;
use super::{catalog, tasks};
use crate::app::many;
use crate::app::ui::Ui;

/// The watcher's view between two changes.
pub struct Watcher {
    shared: Arc<Shared>,
    host: ServerHandle,
    /// Where status changes are reported, when this watcher reports them.
    ui: Option<Ui>,
    /// The tools the host was last told about.
    tools: Vec<Tool>,
    /// Each server's last status.
    status: HashMap<String, ServerStatus>,
    /// The notification pump of each ready server's connection.
    pumps: HashMap<String, (Client, tokio::task::JoinHandle<()>)>,
    /// The pumps' barrier channels, for the router.
    barriers: Barriers,
    /// Whose task statuses this host is sent.
    tasks: TaskView,
}

/// Which tasks' `notifications/tasks/status` a host is sent: with `--listen` (stateful), those
/// its session may see ([`TaskOwners`]); else every one.
#[derive(Clone, Default)]
struct TaskView(Option<(Arc<TaskOwners>, u64)>);

impl TaskView {
    fn sees(&self, task: &str) -> bool {
        self.0
            .as_ref()
            .is_none_or(|(owners, session)| owners.visible(task, *session))
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        // The pumps serve this host alone (a dropped JoinHandle would leave them running).
        for (_, (_, pump)) in self.pumps.drain() {
            pump.abort();
        }
    }
}

impl Watcher {
    /// A watcher starting from what the host is offered now (when its session starts);
    /// status changes are reported on `ui`'s stderr when it is given.
    pub fn new(
        shared: Arc<Shared>,
        host: ServerHandle,
        ui: Option<Ui>,
        barriers: Barriers,
    ) -> Self {
        let tools = catalog::tools(&shared.manager, &shared.filter);
        let status = shared.manager.status().into_iter().collect();
        Watcher {
            shared,
            host,
            ui,
            tools,
            status,
            pumps: HashMap::new(),
            barriers,
            tasks: TaskView::default(),
        }
    }

    /// This watcher serves host session `session` (its router's number): with `--listen`
    /// (stateful), it is sent the statuses of that session's tasks only ([`TaskOwners`]).
    #[must_use]
    pub fn for_session(mut self, session: u64) -> Self {
        self.tasks = TaskView(
            self.shared
                .task_owners
                .as_ref()
                .map(|owners| (owners.clone(), session)),
        );
        self
    }

    /// Runs until the manager is gone; `changes` must have been taken before [`new`](Self::new)
    /// looked, so that no change is missed. `reported` are the failed servers already
    /// reported on stderr (the start-up summary's): another one that failed before the
    /// watcher looked is reported here.
    pub async fn run(mut self, mut changes: StatusChanges, reported: Vec<String>) {
        for (server, _) in catalog::ready_clients(&self.shared.manager) {
            self.connected(&server);
        }
        if let Some(ui) = &self.ui {
            report_unreported(ui, &self.shared.configs, &self.status, &reported);
        }
        while let Some(change) = changes.recv().await {
            match change {
                Ok(change) => self.changed(&change.server, change.status),
                Err(lagged) => {
                    tracing::debug!("bridge: status changes: {lagged}");
                    for (server, status) in self.shared.manager.status() {
                        self.changed(&server, status);
                    }
                    self.notify(ListChanged::Prompts);
                    self.notify(ListChanged::Resources);
                }
            }
            let tools = catalog::tools(&self.shared.manager, &self.shared.filter);
            if tools != self.tools {
                self.tools = tools;
                self.notify(ListChanged::Tools);
            }
        }
    }

    /// One server's new status.
    fn changed(&mut self, server: &str, status: ServerStatus) {
        let before = self.status.insert(server.to_owned(), status.clone());
        let was_ready = before == Some(ServerStatus::Ready);
        if let Some(ui) = &self.ui {
            report(ui, &self.shared.configs, server, before.as_ref(), &status);
        }
        if status == ServerStatus::Ready {
            self.connected(server);
        }
        if was_ready != (status == ServerStatus::Ready) {
            if status != ServerStatus::Ready
                && let Some((_, pump)) = self.pumps.remove(server)
            {
                pump.abort();
            }
            self.notify(ListChanged::Prompts);
            self.notify(ListChanged::Resources);
        }
    }

    /// `server` is ready: a pump on its current connection, the host's log level on it.
    fn connected(&mut self, server: &str) {
        let Some(client) = self.shared.manager.client(server) else {
            return;
        };
        let current = self
            .pumps
            .get(server)
            .is_some_and(|(c, pump)| !c.is_closed() && !pump.is_finished());
        if !current {
            let (tx, rx) = mpsc::unbounded_channel();
            let pump = tokio::spawn(pump(
                server.to_owned(),
                client.clone(),
                self.host.clone(),
                self.tasks.clone(),
                rx,
            ));
            if let Some((_, old)) = self.pumps.insert(server.to_owned(), (client, pump)) {
                old.abort();
            }
            self.barriers
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(server.to_owned(), tx);
        }
        self.shared.apply_log_level(server);
    }

    fn notify(&self, list: ListChanged) {
        if let Err(e) = self.host.notify_list_changed(list) {
            // Not declared (no server offers it), or the host is gone.
            tracing::debug!("bridge: {list:?} list_changed not sent: {e}");
        }
    }
}

/// Reports one server's status change on stderr: up (unless `-q`), failed (in the words of
/// [`many::failure_words`], `configs` being the servers' entries), lost.
fn report(
    ui: &Ui,
    configs: &[ServerConfig],
    server: &str,
    before: Option<&ServerStatus>,
    status: &ServerStatus,
) {
    let was_ready = before == Some(&ServerStatus::Ready);
    match status {
        ServerStatus::Ready if !was_ready => {
            ui.info(&format!("mcp bridge: server {server:?} is ready"));
        }
        ServerStatus::Failed { reason, .. } if before != Some(status) => {
            let why = many::failure_words(configs, server, reason);
            ui.note(&format!("mcp bridge: server {server:?} failed: {why}"));
        }
        ServerStatus::Reconnecting { attempt, .. } if was_ready => {
            ui.note(&format!(
                "mcp bridge: server {server:?} was lost; reconnecting (attempt {attempt})"
            ));
        }
        _ => {}
    }
}

/// Reports the failed servers of `status` not among `reported`.
fn report_unreported(
    ui: &Ui,
    configs: &[ServerConfig],
    status: &HashMap<String, ServerStatus>,
    reported: &[String],
) {
    for (server, status) in status {
        if let ServerStatus::Failed { reason, .. } = status
            && !reported.contains(server)
        {
            let why = many::failure_words(configs, server, reason);
            ui.note(&format!("mcp bridge: server {server:?} failed: {why}"));
        }
    }
}

/// Reports every status change of `manager`'s servers on stderr, for a bridge whose
/// watchers (one per host session) do not; until the manager is gone. `changes` must have
/// been taken before the start-up summary, whose failed servers (`reported`) were reported
/// already.
pub async fn report_changes(
    manager: Arc<mcp_tokio::Manager>,
    configs: Vec<ServerConfig>,
    ui: Ui,
    mut changes: StatusChanges,
    reported: Vec<String>,
) {
    let mut status: HashMap<String, ServerStatus> = manager.status().into_iter().collect();
    report_unreported(&ui, &configs, &status, &reported);
    while let Some(change) = changes.recv().await {
        let now: Vec<(String, ServerStatus)> = match change {
            Ok(c) => vec![(c.server, c.status)],
            Err(_) => manager.status(),
        };
        for (server, new) in now {
            let before = status.insert(server.clone(), new.clone());
            report(&ui, &configs, &server, before.as_ref(), &new);
        }
    }
}

/// Passes `client`'s notifications on to the host until its connection ends.
///
/// A barrier (see [`Barriers`]) is released once every notification the client received
/// before it has been handed to the host.
async fn pump(
    server: String,
    client: Client,
    host: ServerHandle,
    tasks: TaskView,
    mut barriers: mpsc::UnboundedReceiver<oneshot::Sender<()>>,
) {
    let mut notes = client.notifications();
    let mut open = true;
    let handle = |note: Option<Result<ServerNotification, Lagged>>, open: &mut bool| match note {
        Some(Ok(note)) => to_host(&server, &host, &tasks, &note),
        Some(Err(lagged)) => {
            tracing::warn!("bridge: notifications of server {server:?}: {lagged}");
            // Something may have changed unseen.
            let _ = host.notify_list_changed(ListChanged::Prompts);
            let _ = host.notify_list_changed(ListChanged::Resources);
        }
        None => *open = false,
    };
    loop {
        tokio::select! {
            // Not biased: a flood of notifications must not starve the barriers (each one
            // drains what was received before it anyway).
            note = notes.recv(), if open => handle(note, &mut open),
            barrier = barriers.recv() => {
                let Some(release) = barrier else { return };
                // Every notification received before the answer is in the stream already.
                while open {
                    match notes.recv().now_or_never() {
                        Some(note) => handle(note, &mut open),
                        None => break,
                    }
                }
                // The answer's waiter may be gone (the host cancelled): nothing to release.
                let _ = release.send(());
            }
        }
    }
}

/// Where the router orders a server's answer after that server's notifications: per
/// server, the channel of the pump of its current connection (the
/// [`HostPump`](crate::app::bridge::forward::HostPump) idea, per server). Shared by one host
/// session's [`Watcher`] and router.
pub type Barriers = Arc<Mutex<HashMap<String, mpsc::UnboundedSender<oneshot::Sender<()>>>>>;

/// Waits until `server`'s pump has handed the host every notification received so far;
/// at once when there is no pump (a stateless session, a connection just made).
pub async fn barrier(barriers: &Barriers, server: &str) {
    let pump = barriers
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(server)
        .cloned();
    let Some(pump) = pump else { return };
    let (release, released) = oneshot::channel();
    if pump.send(release).is_ok() {
        // An error means the pump is gone (aborted with its connection): nothing to wait for.
        let _ = released.await;
    }
}

/// Hands one notification of `server` to the host (see the [module docs](self)).
fn to_host(server: &str, host: &ServerHandle, view: &TaskView, note: &ServerNotification) {
    let result = match note.kind() {
        // The manager lists the tools again; the watcher sees it as a status change.
        NotificationKind::ToolsListChanged => Ok(()),
        NotificationKind::PromptsListChanged => host.notify_list_changed(ListChanged::Prompts),
        NotificationKind::ResourcesListChanged => host.notify_list_changed(ListChanged::Resources),
        _ => match note.method.as_str() {
            "notifications/resources/updated"
            | "notifications/progress"
            | "notifications/cancelled" => Ok(()),
            "notifications/tasks/status" => match note.params.as_deref() {
                Some(params) => match tasks::task_to_host(server, params) {
                    Ok(params) => {
                        let task = serde_json::from_str::<serde_json::Value>(params.get())
                            .ok()
                            .and_then(|p| p["taskId"].as_str().map(str::to_owned));
                        if task.is_some_and(|t| !view.sees(&t)) {
                            // Another session's task.
                            Ok(())
                        } else {
                            host.notify(note.method.clone(), Some(&*params))
                        }
                    }
                    Err(e) => {
                        tracing::debug!(
                            "bridge: unreadable task status of {server:?}: {}",
                            e.message
                        );
                        Ok(())
                    }
                },
                None => Ok(()),
            },
            "notifications/message" => match note
                .params
                .as_deref()
                .map(|p| serde_json::from_str::<LoggingMessageParams>(p.get()))
            {
                Some(Ok(m)) => {
                    let logger = match &m.logger {
                        Some(l) => format!("{server}/{l}"),
                        None => server.to_owned(),
                    };
                    host.log(m.level, Some(&logger), &m.data).map(drop)
                }
                _ => {
                    tracing::debug!("bridge: unreadable log message of {server:?} dropped");
                    Ok(())
                }
            },
            _ => host.notify(note.method.clone(), note.params.as_deref()),
        },
    };
    if let Err(e) = result {
        tracing::debug!("bridge: {} of {server:?} not forwarded: {e}", note.method);
    }
}
