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
use std::future::Future;
use std::task::Poll;

use super::context::{RequestContext, ServerHandle};
use super::handler::ServerHandler;
use super::stop::stop_signal;
use crate::runtime::Runtime;

/// Runs a request's handler future `work` until it completes (`Some`) or `stop` does
/// (`None`: `work` is dropped unfinished).
///
/// Guarantees that `work` is polled once more after `stop` completed, before it is dropped:
/// a handler that awaits [`RequestContext::cancelled`] in its own future always runs what
/// follows up to its next suspension point (its clean-up, a reply to the cancellation passed
/// on), whichever of the two futures' wake-ups arrives first on a multi-threaded executor.
/// If `work` completes on that last poll, its outcome wins.
async fn until_stopped<T>(
    work: impl Future<Output = T>,
    stop: impl Future<Output = ()>,
) -> Option<T> {
    let mut work = std::pin::pin!(work);
    let mut stop = std::pin::pin!(stop);
    std::future::poll_fn(|cx| {
        // `stop` first: once it completed, the cancellation is visible to the handler's
        // context (the value is set before any receiver is woken), so the poll of `work`
        // just below is the handler's look at it.
        let stopped = stop.as_mut().poll(cx).is_ready();
        if let Poll::Ready(outcome) = work.as_mut().poll(cx) {
            return Poll::Ready(Some(outcome));
        }
        if stopped {
            return Poll::Ready(None);
        }
        Poll::Pending
    })
    .await
}

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
            let (cancel_tx, cancel) = stop_signal();
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
                let work =
                    AssertUnwindSafe(handler.on_request(method, params, context)).catch_unwind();
                // A dropped sender (the session closed, the request ended) stops too.
                let stop = async move { cancel.stopped().await };
                match until_stopped(work, stop).await {
                    Some(Ok(outcome)) => shared.answer(slot, id, outcome),
                    Some(Err(_panic)) => shared.answer(
                        slot,
                        id,
                        Err(ErrorObject::new(
                            ErrorObject::INTERNAL_ERROR,
                            "the server's handler failed (it panicked)",
                        )),
                    ),
                    // Cancelled: the session forgot the request; nothing is answered.
                    None => shared.forget(slot, id),
                }
            }));
        }
        Event::InitializeRequested { params } => {
            let (stop_tx, stop) = stop_signal();
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
                let stopped = Box::pin(async move { stop.stopped().await });
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
                tx.cancel(reason.map(Arc::from));
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

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::pin::pin;
    use std::task::{Context, Poll, Waker};

    use super::until_stopped;

    /// Polls `f` once with a waker that does nothing.
    fn poll_once<F: Future>(f: std::pin::Pin<&mut F>) -> Poll<F::Output> {
        f.poll(&mut Context::from_waker(Waker::noop()))
    }

    /// The stop lands while the task is being polled, after the handler's future returned
    /// `Pending` (the client's cancellation sent from another thread at that instant): the
    /// handler's future is still polled once more and sees it before it is dropped.
    #[test]
    fn the_handler_is_polled_once_more_after_the_stop() {
        let cancelled = Cell::new(false);
        let seen_by_handler = Cell::new(false);
        let work = std::future::poll_fn(|_| {
            if cancelled.get() {
                seen_by_handler.set(true);
            }
            Poll::<()>::Pending
        });
        let stop = std::future::poll_fn(|_| {
            if cancelled.get() {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        });
        let mut run = pin!(until_stopped(work, stop));
        assert!(poll_once(run.as_mut()).is_pending(), "neither is done");
        cancelled.set(true);
        assert_eq!(poll_once(run.as_mut()), Poll::Ready(None), "stopped");
        assert!(seen_by_handler.get(), "the handler looked after the stop");
    }

    /// The race of the hang: the client's cancellation lands (from another thread) after the
    /// handler's future looked at its context and before the stop is looked at. The handler
    /// still gets a look after it (`select(work, stop)` dropped it without one: a handler
    /// blocked on `cx.cancelled()` never ran its clean-up).
    #[test]
    fn a_cancellation_landing_between_the_two_looks_still_reaches_the_handler() {
        let cancelled = Cell::new(false);
        let looks_after_the_stop = Cell::new(0);
        let work = std::future::poll_fn(|_| {
            if cancelled.get() {
                looks_after_the_stop.set(looks_after_the_stop.get() + 1);
            }
            Poll::<()>::Pending
        });
        let stop_polls = Cell::new(0);
        // The second look at the stop is where the cancellation lands.
        let stop = std::future::poll_fn(|_| {
            stop_polls.set(stop_polls.get() + 1);
            if stop_polls.get() == 2 {
                cancelled.set(true);
                return Poll::Ready(());
            }
            Poll::Pending
        });
        let mut run = pin!(until_stopped(work, stop));
        assert!(poll_once(run.as_mut()).is_pending());
        assert_eq!(poll_once(run.as_mut()), Poll::Ready(None));
        assert_eq!(
            looks_after_the_stop.get(),
            1,
            "exactly one look after the stop"
        );
    }

    /// A handler that answers on its last look is answered: its outcome wins over the stop.
    #[test]
    fn an_answer_on_the_last_look_wins() {
        let work = std::future::ready(7);
        let stop = std::future::ready(());
        let mut run = pin!(until_stopped(work, stop));
        assert_eq!(poll_once(run.as_mut()), Poll::Ready(Some(7)));
    }

    /// Without a stop, the handler's outcome is returned.
    #[test]
    fn a_handler_that_finishes_is_answered() {
        let work = std::future::ready("done");
        let stop = std::future::pending::<()>();
        let mut run = pin!(until_stopped(work, stop));
        assert_eq!(poll_once(run.as_mut()), Poll::Ready(Some("done")));
    }
}
