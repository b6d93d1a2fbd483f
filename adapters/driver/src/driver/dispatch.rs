//! Delivery of the core's events: results to callers, progress to sinks, notifications to
//! streams (subscriptions to their own), server requests to handlers.

use std::task::Waker;

use futures_util::future::{Either, select};
use mcp_proto::connection::{self, Connection as _};
use mcp_proto::jsonrpc::ErrorObject;
use mcp_proto::session::{Event, NotificationKind, ServerNotification};
use mcp_proto::types::v2026::ListenFilter;
use tokio::sync::{broadcast, oneshot};

use super::{Driver, Observed, TransportIo};
use crate::notify::{Gap, Item};
use crate::options::Progress;
use crate::runtime::Runtime;
use crate::shared::{Call, ListenSink, Notice, Outcome, Phase, Reply, State};

/// What `dispatch_events` hands on once the state's lock is released.
pub(super) enum Delivery {
    Result(oneshot::Sender<Outcome>, Outcome),
    /// A call's outcome is in its entry: wake its caller.
    Wake(Waker),
    Progress(crate::options::ProgressSink, Progress),
    Notification(ServerNotification),
    EndNotifications,
    Acknowledged(oneshot::Sender<ListenFilter>, ListenFilter),
    Listen(broadcast::Sender<Item>, ServerNotification),
    /// Told to every stream, in order with the notifications around it.
    Gap(Vec<broadcast::Sender<Item>>, Gap),
    /// The gap of one subscription.
    ListenGap(broadcast::Sender<Item>, Gap),
    /// A refused re-subscription, told to the connection's streams.
    Refused(Item),
    /// Dropped in order: the stream ends after what was delivered to it.
    EndListen(ListenSink),
    /// Nothing to deliver.
    Nothing,
}

/// What subscribers are told of a transport's notice.
fn notice_delivery<C>(state: &mut State<C>, notice: Notice) -> Delivery {
    match notice {
        Notice::Gap(gap) => {
            let listens = state.listens.values().map(|l| l.tx.clone()).collect();
            Delivery::Gap(listens, gap)
        }
        Notice::ListenGap { handle, gap } => match state.listens.get(&handle) {
            Some(sink) => Delivery::ListenGap(sink.tx.clone(), gap),
            // The subscription ended meanwhile: nobody to tell.
            None => Delivery::Nothing,
        },
        Notice::Refused { uri, error } => {
            // Not subscribed on the new session: the subscriptions holding it end, and the
            // next one to want it subscribes afresh.
            state.resource_holds.forget(&uri);
            Delivery::Refused(Item::Refused { uri, error })
        }
    }
}

/// The most deliveries whose room the driver keeps between batches: a burst past it (a
/// flood of notifications) gives its memory back.
const KEPT_DELIVERIES: usize = 1024;

impl<R: Runtime, T: TransportIo<R>> Driver<R, T> {
    /// Drains the core's events and delivers them: results to callers, progress to sinks,
    /// notifications to streams, server requests to handlers. The transport's own events are
    /// read by its I/O ([`TransportIo::observe`]); those it acts on wait in `actions`.
    pub(super) fn dispatch_events(&mut self) -> bool {
        // The room of the last batch, reused: growing a fresh list to a window's worth of
        // results cost a handful of reallocations per read.
        let mut deliveries = std::mem::take(&mut self.deliveries);
        let mut any = false;
        {
            let mut state = self.shared.lock();
            while let Some(polled) = state.core.poll_event() {
                any = true;
                let event = match polled {
                    connection::Event::Session(event) => event,
                    connection::Event::Transport(event) => {
                        match T::observe(&self.shared.name, event) {
                            Observed::Notice(notice) => {
                                deliveries.push(notice_delivery(&mut state, notice));
                            }
                            Observed::Act(event) => self.actions.push(event),
                            Observed::Seen => {}
                        }
                        continue;
                    }
                };
                match event {
                    Event::Completed { handle, result } => {
                        // Delivered in order, so progress callbacks run before the result.
                        match state.calls.get_mut(&handle).map(|c| &mut c.reply) {
                            Some(Reply::Slot { outcome, waker }) => {
                                *outcome = Some(Box::new(result));
                                if let Some(w) = waker.take() {
                                    deliveries.push(Delivery::Wake(w));
                                }
                            }
                            Some(Reply::Channel(_)) => {
                                if let Some(Call {
                                    reply: Reply::Channel(tx),
                                    ..
                                }) = state.calls.remove(&handle)
                                {
                                    deliveries.push(Delivery::Result(tx, result));
                                }
                            }
                            None => {}
                        }
                        // After the result: a subscription whose stream ended finds out why.
                        if let Some(sink) = state.listens.remove(&handle) {
                            deliveries.push(Delivery::EndListen(sink));
                        }
                    }
                    Event::Progress {
                        handle,
                        progress,
                        total,
                        message,
                        params,
                        ..
                    } => {
                        if let Some(sink) =
                            state.calls.get(&handle).and_then(|c| c.progress.clone())
                        {
                            deliveries.push(Delivery::Progress(
                                sink,
                                Progress::new(progress, total, message).with_written(params),
                            ));
                        }
                    }
                    Event::ServerRequest { id, method, params } => {
                        // The params go to the handler as written (a bridge passes them on).
                        match self.options.handlers.dispatch(&method, params) {
                            Some(fut) => {
                                let (abort_tx, abort_rx) = oneshot::channel::<()>();
                                state.handlers.insert(id, abort_tx);
                                tracing::debug!(server = &*self.shared.name, %id, method, "server request");
                                let shared = self.shared.clone();
                                let runtime = self.runtime.clone();
                                self.runtime.spawn(Box::pin(async move {
                                    let result = match select(fut, abort_rx).await {
                                        Either::Left((r, _)) => r,
                                        // The server cancelled it, or the session closed.
                                        Either::Right(_) => return,
                                    };
                                    let mut state = shared.lock();
                                    state.handlers.remove(&id);
                                    let now = runtime.now();
                                    // A race with the server's cancel or the close: nothing to send.
                                    let _ = state.core.session_mut().respond(now, id, result);
                                    state.wake_driver();
                                }));
                            }
                            None => {
                                // Declared (the core let it through) but no handler takes it.
                                let now = self.runtime.now();
                                let _ = state.core.session_mut().respond(
                                    now,
                                    id,
                                    Err(ErrorObject::method_not_found(&method)),
                                );
                            }
                        }
                    }
                    Event::ServerRequestCancelled { id, reason } => {
                        tracing::debug!(server = &*self.shared.name, %id, reason, "server cancelled its request");
                        state.handlers.remove(&id);
                    }
                    Event::Notification(n) => {
                        // Before the notification is seen: a call made on seeing it must not
                        // be checked against the old schemas.
                        if n.kind() == NotificationKind::ToolsListChanged {
                            self.shared.output_schemas.tools_changed();
                        }
                        deliveries.push(Delivery::Notification(n));
                    }
                    Event::SubscriptionAcknowledged { handle, honoured } => {
                        if let Some(tx) = state
                            .listens
                            .get_mut(&handle)
                            .and_then(|s| s.acknowledged.take())
                        {
                            deliveries.push(Delivery::Acknowledged(tx, honoured));
                        }
                    }
                    Event::Subscription {
                        handle,
                        notification,
                    } => {
                        // The 2026 era says it only on a subscription: the same drop.
                        if notification.kind() == NotificationKind::ToolsListChanged {
                            self.shared.output_schemas.tools_changed();
                        }
                        if let Some(sink) = state.listens.get(&handle) {
                            deliveries.push(Delivery::Listen(sink.tx.clone(), notification));
                        }
                    }
                    Event::Diagnostic(d) if d.is_routine() => {
                        tracing::debug!(server = &*self.shared.name, "{d}");
                    }
                    Event::Diagnostic(d) => {
                        tracing::warn!(server = &*self.shared.name, "{d}");
                    }
                    Event::Ready { version, .. } => {
                        tracing::debug!(server = &*self.shared.name, %version, "ready");
                        self.shared.phase.send_replace(Phase::Ready);
                    }
                    Event::Closed { reason } => {
                        tracing::debug!(server = &*self.shared.name, %reason, "session closed");
                        state.handlers.clear();
                        // At once, so that a call made after the results below sees why.
                        self.shared.phase.send_replace(Phase::Closed(reason));
                        // Ends every notification stream (after what is queued for them).
                        deliveries.push(Delivery::EndNotifications);
                    }
                    _ => {}
                }
            }
        }
        for d in deliveries.drain(..) {
            match d {
                // The caller may have gone away at this very moment: fine.
                Delivery::Result(tx, result) => drop(tx.send(result)),
                Delivery::Wake(w) => w.wake(),
                Delivery::Progress(sink, p) => sink.deliver(p),
                Delivery::Notification(n) => {
                    tracing::debug!(
                        server = &*self.shared.name,
                        method = n.method,
                        "notification"
                    );
                    // No subscriber is fine; a lagging one is told by its own receiver.
                    if let Some(tx) = &*self.shared.notifications() {
                        let _ = tx.send(Item::Notification(n));
                    }
                }
                Delivery::EndNotifications => drop(self.shared.notifications().take()),
                // The caller may have stopped waiting: fine.
                Delivery::Acknowledged(tx, honoured) => drop(tx.send(honoured)),
                // A subscription whose stream was dropped has no receiver: fine.
                Delivery::Listen(tx, n) => drop(tx.send(Item::Notification(n))),
                Delivery::ListenGap(tx, gap) => {
                    tracing::info!(server = &*self.shared.name, "{gap}");
                    // A subscription whose stream was dropped has no receiver: fine.
                    let _ = tx.send(Item::Gap(gap));
                }
                Delivery::Refused(item) => {
                    tracing::warn!(
                        server = &*self.shared.name,
                        ?item,
                        "a subscription could not be restored"
                    );
                    if let Some(tx) = &*self.shared.notifications() {
                        let _ = tx.send(item);
                    }
                }
                Delivery::Gap(listens, gap) => {
                    tracing::info!(server = &*self.shared.name, "{gap}");
                    // No subscriber is fine.
                    if let Some(tx) = &*self.shared.notifications() {
                        let _ = tx.send(Item::Gap(gap.clone()));
                    }
                    for tx in listens {
                        let _ = tx.send(Item::Gap(gap.clone()));
                    }
                }
                Delivery::EndListen(sink) => drop(sink),
                Delivery::Nothing => {}
            }
        }
        if deliveries.capacity() <= KEPT_DELIVERIES {
            self.deliveries = deliveries;
        }
        any
    }
}
