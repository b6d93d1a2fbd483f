//! The HTTP server's driver: one future for the whole server, in the stdio driver's shape:
//! run the core's deadlines, write what it produced to the responses, deliver each session's
//! events to that session's handler, arm one timer at `poll_timeout`.

use crate::shared::CounterMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use mcp_proto::server::http::{HttpEvent, SessionKey};
use mcp_proto::session::CloseReason;

use super::{Factory, conn};
use crate::runtime::{BoxFuture, Runtime};
use crate::server::context::ServerHandle;
use crate::server::handler::ServerHandler;
use crate::server::state::{Shared, Tasks};
use crate::server::tasks;

/// Rounds of work per poll before yielding to other tasks.
const MAX_ROUNDS: usize = 32;

/// Runs a Streamable HTTP server: poll (spawn) it for as long as the server serves. Made by
/// [`StreamableHttp::start`](super::StreamableHttp::start); finishes after
/// [`HttpService::shutdown`](super::HttpService::shutdown) once everything is written.
///
/// Dropping it before then ends every session: running handlers are cancelled, pending
/// requests to clients complete with a close, open responses are aborted.
#[must_use = "the server does nothing unless the driver is polled"]
pub struct HttpServiceDriver<R: Runtime> {
    shared: Arc<Shared>,
    runtime: R,
    factory: Factory,
    /// Each live session's handler and handle.
    sessions: CounterMap<SessionKey, (Arc<dyn ServerHandler>, ServerHandle)>,
    timer: Option<(Instant, BoxFuture)>,
    finished: bool,
    /// Told of each refused request ([`StreamableHttp::on_refused`](super::StreamableHttp::on_refused)).
    on_refused: Option<super::OnRefused>,
}

impl<R: Runtime> std::fmt::Debug for HttpServiceDriver<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpServiceDriver")
            .field("sessions", &self.sessions.len())
            .finish_non_exhaustive()
    }
}

impl<R: Runtime> HttpServiceDriver<R> {
    pub(crate) fn new(shared: Arc<Shared>, runtime: R, factory: Factory) -> Self {
        HttpServiceDriver {
            shared,
            runtime,
            factory,
            sessions: CounterMap::default(),
            timer: None,
            finished: false,
            on_refused: None,
        }
    }

    /// Tells `report` of each refused request.
    pub(crate) fn on_refused(mut self, report: Option<super::OnRefused>) -> Self {
        self.on_refused = report;
        self
    }

    /// Runs due deadlines and writes what the core produced; takes its events. Returns
    /// whether anything happened.
    fn step(&mut self, now: Instant, events: &mut Vec<HttpEvent>) -> bool {
        let mut state = self.shared.lock();
        let http = conn(&mut state);
        let mut progress = false;
        if http.server.poll_timeout().is_some_and(|at| now >= at) {
            http.server.handle_timeout(now);
            progress = true;
        }
        progress |= http.pump(now);
        while let Some(event) = http.server.poll_event() {
            events.push(event);
        }
        progress || !events.is_empty()
    }

    fn dispatch(&mut self, event: HttpEvent) {
        match event {
            HttpEvent::SessionOpened { session } => {
                self.shared
                    .lock()
                    .tasks
                    .insert(Some(session), Tasks::default());
                let handle = ServerHandle {
                    shared: self.shared.clone(),
                    slot: Some(session),
                };
                let made = std::panic::catch_unwind(AssertUnwindSafe(|| (self.factory)(&handle)));
                match made {
                    Ok(handler) => {
                        self.sessions.insert(session, (handler, handle));
                    }
                    Err(_) => {
                        // One session without a handler must not take the server down.
                        tracing::error!(%session, "the session factory panicked: session closed");
                        handle.close();
                    }
                }
            }
            HttpEvent::Session { session, event } => {
                if let Some((handler, handle)) = self.sessions.get(&session) {
                    tasks::dispatch(&self.runtime, handler, handle, event);
                }
            }
            HttpEvent::SessionEnded { session, reason } => {
                tracing::debug!(%session, ?reason, "HTTP session ended");
                self.sessions.remove(&session);
                // Its `Closed` event stopped its work already; this covers the rest.
                if let Some(mut tasks) = self.shared.lock().tasks.remove(&Some(session)) {
                    tasks.close(reason);
                }
            }
            HttpEvent::Refused { response, refusal } => {
                tracing::debug!(response = response.get(), ?refusal, "HTTP request refused");
                if let Some(report) = &self.on_refused {
                    report(&refusal);
                }
            }
            // Kinds added later.
            _ => {}
        }
    }

    fn register_waker(&mut self, cx: &Context<'_>) {
        let mut state = self.shared.lock();
        if !state
            .driver
            .as_ref()
            .is_some_and(|w| w.will_wake(cx.waker()))
        {
            state.driver = Some(cx.waker().clone());
        }
    }
}

// The driver never pins its fields in place (the timer is boxed), so moving it is fine.
impl<R: Runtime> Unpin for HttpServiceDriver<R> {}

impl<R: Runtime> Future for HttpServiceDriver<R> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        let mut events = Vec::new();
        for _ in 0..MAX_ROUNDS {
            let now = this.runtime.now();
            this.register_waker(cx);
            let progress = this.step(now, &mut events);
            for event in events.drain(..) {
                this.dispatch(event);
            }
            if conn(&mut this.shared.lock()).finished() && this.sessions.is_empty() {
                this.finished = true;
                return Poll::Ready(());
            }
            if progress {
                continue;
            }
            let deadline = conn(&mut this.shared.lock()).server.poll_timeout();
            let Some(deadline) = deadline else {
                return Poll::Pending;
            };
            if this.runtime.now() >= deadline {
                continue;
            }
            if this.timer.as_ref().is_none_or(|(at, _)| *at != deadline) {
                this.timer = Some((deadline, this.runtime.sleep_until(deadline)));
            }
            if let Some((_, sleep)) = this.timer.as_mut()
                && sleep.as_mut().poll(cx).is_ready()
            {
                this.timer = None;
                continue;
            }
            return Poll::Pending;
        }
        // Busy: let other tasks run, then carry on.
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

impl<R: Runtime> Drop for HttpServiceDriver<R> {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        // Stopped before a shutdown finished: end every session and abort every response
        // rather than leave handlers running and clients waiting.
        let now = self.runtime.now();
        let mut state = self.shared.lock();
        let http = conn(&mut state);
        let keys: Vec<_> = http.server.sessions().collect();
        for key in keys {
            http.server.close_session(now, key);
        }
        while http.server.poll_event().is_some() {}
        http.abort_all();
        for (_, mut tasks) in state.tasks.drain() {
            tasks.close(CloseReason::Local);
        }
        state.driver = None;
    }
}
