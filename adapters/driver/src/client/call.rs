//! [`PendingCall`]: the future of one request, from its first poll (which sends it) to its
//! outcome.
//!
//! Written by hand rather than as an `async fn`, for its size: an `async fn` keeps every
//! argument and every nested future in a slot of its own for the whole call, so a caller with
//! 100 000 calls pending (a task each) paid about 850 bytes per call for this part alone. This
//! future holds only what the wait needs (the handle, the method for errors, the options by
//! reference), about 100 bytes, and the request's tracing span only when a subscriber wants it.

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use mcp_proto::session::{CloseReason, RequestHandle};
use mcp_proto::{RawParams, RawResult};

use super::Client;
use crate::error::Error;
use crate::options::{CallOptions, CancelHandle};
use crate::runtime::Runtime;
use crate::shared::{Call, Outcome, Reply};

/// The cancel handle's side of a call's race, made on the first wait when the call has one.
type Cancelled<'a> = Pin<Box<dyn Future<Output = Arc<str>> + Send + 'a>>;

/// A request on the authorized path (see `Client::call`), boxed.
pub(crate) type AuthorizedCall<'a> =
    Pin<Box<dyn Future<Output = Result<RawResult, Error>> + Send + 'a>>;

/// One request's future: sends on its first poll, then takes the outcome the driver leaves
/// in the call's entry. Dropped before the outcome, it cancels the request (the server is
/// told when it has seen it); cancelled by [`CallOptions::cancel`], it ends with
/// [`Error::Cancelled`] unless the outcome was already in.
///
/// Resolves exactly once; polling it again after that panics, as an `async fn` would.
pub(crate) struct PendingCall<'a, R: Runtime> {
    client: &'a Client<R>,
    method: Cow<'static, str>,
    options: &'a CallOptions,
    state: State<'a>,
}

enum State<'a> {
    /// Not polled yet: nothing sent.
    Unsent(Option<RawParams>),
    /// Sent (or waiting in the core for the handshake or for room): the entry holds the
    /// waker of the last poll.
    Sent {
        handle: RequestHandle,
        cancelled: Option<Cancelled<'a>>,
        /// Boxed, and only when enabled: most programs have no subscriber for it.
        span: Option<Box<tracing::Span>>,
    },
    /// With an [`AuthProvider`](crate::auth::AuthProvider): the whole authorized exchange,
    /// each of its requests a `PendingCall` of its own.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    Authorized(AuthorizedCall<'a>),
    Done,
}

impl<'a, R: Runtime> PendingCall<'a, R> {
    pub(crate) fn new(
        client: &'a Client<R>,
        method: Cow<'static, str>,
        params: Option<RawParams>,
        options: &'a CallOptions,
    ) -> Self {
        PendingCall {
            client,
            method,
            options,
            state: State::Unsent(params),
        }
    }

    /// A call on the authorized path: `exchange` does the work.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn authorized(
        client: &'a Client<R>,
        method: Cow<'static, str>,
        exchange: AuthorizedCall<'a>,
        options: &'a CallOptions,
    ) -> Self {
        PendingCall {
            client,
            method,
            options,
            state: State::Authorized(exchange),
        }
    }

    fn cancelled_error(&self) -> Error {
        Error::Cancelled {
            server: self.client.inner.shared.name.clone(),
            method: self.method.clone().into_owned(),
        }
    }

    /// The outcome as the call's result.
    fn finish(&mut self, outcome: Option<Outcome>) -> Result<RawResult, Error> {
        self.state = State::Done;
        match outcome {
            Some(Ok(raw)) => Ok(raw),
            Some(Err(e)) => Err(self.client.request_error(&self.method, e)),
            // The driver went away without completing: it only does so once closed.
            None => Err(self
                .client
                .closed_error(CloseReason::TransportClosed { detail: None })),
        }
    }

    /// Sends the request and registers the entry with this poll's waker.
    fn send(&mut self, cx: &mut Context<'_>) -> Poll<Result<RawResult, Error>> {
        let State::Unsent(params) = &mut self.state else {
            unreachable!("send is only called in the Unsent state");
        };
        let options = self.options;
        if options.cancel.as_ref().is_some_and(|c| c.is_cancelled()) {
            // Cancelled before it started: nothing is sent.
            self.state = State::Done;
            return Poll::Ready(Err(self.cancelled_error()));
        }
        let inner = &self.client.inner;
        let sent = {
            let now = inner.runtime.now();
            let mut state = inner.shared.lock();
            let sent = state.core.session_mut().send_request(
                now,
                self.method.clone(),
                params.take(),
                options.request,
            );
            if let Ok(handle) = sent {
                let call = Call::waiting(options.progress.clone(), cx.waker().clone());
                state.calls.insert(handle, call);
                state.wake_driver();
            }
            sent
        };
        let handle = match sent {
            Ok(handle) => handle,
            Err(e) => {
                self.state = State::Done;
                // `usage` may lock the state itself: the guard above is gone.
                return Poll::Ready(Err(self.client.usage(e)));
            }
        };
        let span = tracing::debug_span!(
            "mcp_request",
            server = self.client.server_name(),
            method = &*self.method,
            handle = handle.get()
        );
        let cancelled = options
            .cancel
            .as_ref()
            .map(|c| Box::pin(c.cancelled()) as Cancelled<'a>);
        self.state = State::Sent {
            handle,
            cancelled,
            span: (!span.is_disabled()).then(|| Box::new(span)),
        };
        // The entry holds this poll's waker: an outcome stored from now on wakes it. Only
        // the cancel race needs a first look (to register its own waker).
        self.poll_cancel(cx)
    }

    /// Waits for the outcome in the entry.
    fn wait(&mut self, cx: &mut Context<'_>) -> Poll<Result<RawResult, Error>> {
        let State::Sent { handle, .. } = self.state else {
            unreachable!("wait is only called in the Sent state");
        };
        let shared = &self.client.inner.shared;
        let mut state = shared.lock();
        let Some(call) = state.calls.get_mut(&handle) else {
            drop(state);
            return Poll::Ready(self.finish(None));
        };
        match &mut call.reply {
            Reply::Slot {
                outcome: None,
                waker,
            } => {
                if !waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                    *waker = Some(cx.waker().clone());
                }
            }
            Reply::Slot {
                outcome: Some(_), ..
            } => {
                let outcome = match state.calls.remove(&handle) {
                    Some(Call {
                        reply: Reply::Slot { outcome, .. },
                        ..
                    }) => outcome.map(|o| *o),
                    _ => None,
                };
                drop(state);
                return Poll::Ready(self.finish(outcome));
            }
            Reply::Channel(_) => {
                drop(state);
                return Poll::Ready(self.finish(None));
            }
        }
        drop(state);
        self.poll_cancel(cx)
    }

    /// Whether the call's cancel handle fired: the request is cancelled, unless its outcome
    /// was in first (then the outcome wins).
    fn poll_cancel(&mut self, cx: &mut Context<'_>) -> Poll<Result<RawResult, Error>> {
        let State::Sent {
            handle,
            cancelled: Some(cancelled),
            ..
        } = &mut self.state
        else {
            return Poll::Pending;
        };
        let Poll::Ready(reason) = cancelled.as_mut().poll(cx) else {
            return Poll::Pending;
        };
        let handle = *handle;
        match self.client.cancel_call(handle, &reason) {
            Some(outcome) => Poll::Ready(self.finish(Some(outcome))),
            None => {
                self.state = State::Done;
                Poll::Ready(Err(self.cancelled_error()))
            }
        }
    }
}

impl<R: Runtime> Future for PendingCall<'_, R> {
    type Output = Result<RawResult, Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // Every field is `Unpin` (references, a `Cow`, boxes).
        let this = self.get_mut();
        match &mut this.state {
            State::Unsent(_) => this.send(cx),
            State::Authorized(exchange) => {
                let result = std::task::ready!(exchange.as_mut().poll(cx));
                this.state = State::Done;
                Poll::Ready(result)
            }
            State::Sent { span, .. } => {
                let span = span.as_deref().cloned();
                let _entered = span.as_ref().map(tracing::Span::enter);
                this.wait(cx)
            }
            State::Done => panic!("a call's future was polled after it completed"),
        }
    }
}

impl<R: Runtime> Drop for PendingCall<'_, R> {
    /// Cancels the request when the future is dropped before its outcome was taken.
    fn drop(&mut self) {
        let State::Sent { handle, .. } = self.state else {
            return;
        };
        let inner = &self.client.inner;
        let now = inner.runtime.now();
        let mut state = inner.shared.lock();
        // A call whose outcome arrived but was not taken is over: nothing to cancel.
        if state
            .calls
            .remove(&handle)
            .is_some_and(|c| !c.is_completed())
        {
            tracing::debug!(
                server = &*inner.shared.name,
                handle = handle.get(),
                "call dropped: cancelling"
            );
            // The handle's reason when it was cancelled just before the drop (a caller that
            // cancels and drops in one step, as a bridge passing on its host's reason does).
            let reason = self
                .options
                .cancel
                .as_ref()
                .and_then(CancelHandle::reason)
                .unwrap_or_else(|| "the client dropped the request".into());
            // Already finished is a harmless race.
            let _ = state.core.session_mut().cancel(now, handle, Some(reason));
            state.wake_driver();
        }
    }
}
