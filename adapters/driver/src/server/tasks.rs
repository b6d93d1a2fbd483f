//! What every server driver (stdio or HTTP) does with one session's events: each client
//! request runs on its own task (cancellation, a panicking handler answered with `-32603`),
//! cancellations reach those tasks, completions reach the waiting callers, and the session's
//! close stops everything it left running.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures_util::FutureExt;
use futures_util::future::{Either, select};
use mcp_proto::jsonrpc::ErrorObject;
use mcp_proto::server::Event;
use tokio::sync::watch;

use super::context::{RequestContext, ServerHandle};
use super::handler::ServerHandler;
use super::state::Stop;
use crate::runtime::Runtime;

/// Delivers one event of the session `server` speaks for to `handler`. Called on the
/// driver's task, without the state's lock held.
pub(crate) fn dispatch<R: Runtime>(
    runtime: &R,
    handler: &Arc<dyn ServerHandler>,
    server: &ServerHandle,
    event: Event,
) {
    let shared = &server.shared;
    let slot = server.slot;
    match event {
        Event::Request {
            id,
            method,
            params,
            progress_token,
            envelope,
        } => {
            let (cancel_tx, cancel) = watch::channel(Stop::Running);
            match shared.lock().tasks(slot) {
                Some(tasks) => {
                    tasks.running.insert(id, cancel_tx);
                }
                // The session ended already: nobody can receive the answer.
                None => return,
            }
            let context = RequestContext {
                id,
                progress_token,
                envelope,
                cancel: cancel.clone(),
                server: server.clone(),
            };
            let handler = handler.clone();
            let shared = shared.clone();
            runtime.spawn(Box::pin(async move {
                let mut cancel = cancel;
                let work =
                    AssertUnwindSafe(handler.on_request(method, params, context)).catch_unwind();
                // A dropped sender (the session closed, the request ended) stops too.
                let stop = Box::pin(async move {
                    let _ = cancel.wait_for(Stop::is_cancelled).await;
                });
                match select(Box::pin(work), stop).await {
                    Either::Left((Ok(outcome), _)) => shared.answer(slot, id, outcome),
                    Either::Left((Err(_panic), _)) => shared.answer(
                        slot,
                        id,
                        Err(ErrorObject::new(
                            ErrorObject::INTERNAL_ERROR,
                            "the server's handler failed (it panicked)",
                        )),
                    ),
                    // Cancelled: the session forgot the request; nothing is answered.
                    Either::Right(((), _)) => shared.forget(slot, id),
                }
            }));
        }
        Event::InitializeRequested { params } => {
            let (stop_tx, mut stop) = watch::channel(Stop::Running);
            match shared.lock().tasks(slot) {
                Some(tasks) => tasks.initializing = Some(stop_tx),
                None => return,
            }
            let handler = handler.clone();
            let server = server.clone();
            runtime.spawn(Box::pin(async move {
                let work =
                    AssertUnwindSafe(handler.on_initialize(*params, server.clone())).catch_unwind();
                // The session's close drops the sender: the handler stops.
                let stopped = Box::pin(async move {
                    let _ = stop.wait_for(Stop::is_cancelled).await;
                });
                let outcome = match select(Box::pin(work), stopped).await {
                    Either::Left((Ok(outcome), _)) => outcome,
                    Either::Left((Err(_panic), _)) => Err(ErrorObject::new(
                        ErrorObject::INTERNAL_ERROR,
                        "the server's initialize handler failed (it panicked)",
                    )),
                    Either::Right(((), _)) => return,
                };
                server.shared.answer_initialize(server.slot, outcome);
            }));
        }
        Event::RequestCancelled { id, reason } => {
            tracing::debug!(request = %id, reason = reason.as_deref(), "the client cancelled");
            let tx = shared
                .lock()
                .tasks(slot)
                .and_then(|t| t.running.remove(&id));
            if let Some(tx) = tx {
                let _ = tx.send(Stop::Cancelled(reason.map(Arc::from)));
            }
        }
        Event::Notification { method, params } => {
            handler.on_notification(&method, params.as_deref(), server);
        }
        Event::Ready => handler.on_initialized(server),
        Event::ListenOpened {
            id,
            requested,
            honoured,
        } => handler.on_listen_opened(id, &requested, &honoured, server),
        Event::ListenClosed { id, end } => handler.on_listen_closed(id, &end, server),
        Event::LogLevel { level } => handler.on_log_level(level, server),
        Event::Completed { handle, result } => {
            let tx = shared
                .lock()
                .tasks(slot)
                .and_then(|t| t.waiters.remove(&handle));
            if let Some(tx) = tx {
                // The caller may have stopped waiting just now: nothing to do then.
                let _ = tx.send(result);
            }
        }
        Event::Diagnostic(d) => handler.on_diagnostic(&d),
        Event::Closed { reason } => {
            tracing::debug!(session = ?slot, ?reason, "server session closed");
            if let Some(tasks) = shared.lock().tasks(slot) {
                // Dropping the senders stops every running handler.
                tasks.close(reason.clone());
            }
            handler.on_closed(&reason, server);
        }
        // `InitializeAnswered`, `Progress` on our own requests, and kinds added later.
        _ => {}
    }
}
