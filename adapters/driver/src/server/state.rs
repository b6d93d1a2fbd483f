//! What a server's driver, its handles and its request tasks share: the core's connection
//! (one stdio session, or a Streamable HTTP server of many), the per-session bookkeeping of
//! running handlers and pending server-to-client requests, and the driver's waker.

use crate::shared::CounterMap;
use std::borrow::Cow;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::Waker;
use std::time::Instant;

use mcp_proto::jsonrpc::ErrorObject;
use mcp_proto::server::http::SessionKey;
use mcp_proto::server::stdio::StdioServerConnection;
use mcp_proto::server::{ClientRequestId, InitializeAnswer, ServerSession, UsageError};
use mcp_proto::session::{
    CloseReason, RawParams, RawResult, RequestError, RequestHandle, RequestOptions,
};
use serde_json::value::RawValue;
use tokio::sync::oneshot;

use super::context::ServerError;
use super::stop::StopSender;

/// Which session of the connection a handle speaks for: `None` for the one session of a
/// stdio connection, the session's key on an HTTP server.
pub(crate) type Slot = Option<SessionKey>;

/// A pending server-to-client request's waiter.
pub(crate) type Waiter = oneshot::Sender<Result<RawResult, RequestError>>;

/// The core's connection a driver executes.
// One per server, made once and never moved out of its lock: the size difference costs
// nothing, boxing would cost an indirection on every command.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Conn {
    /// One client over a byte stream pair (newline-delimited JSON).
    Stdio(StdioServerConnection),
    /// Streamable HTTP: many sessions, and the open responses they write to.
    #[cfg(feature = "http")]
    Http(super::http::HttpConn),
}

/// One session's running work.
#[derive(Default)]
pub(crate) struct Tasks {
    /// Server-to-client requests by handle, completed from the session's events.
    pub(crate) waiters: CounterMap<RequestHandle, Waiter>,
    /// Client requests whose handler runs: cancelling the sender (or dropping it) stops it.
    pub(crate) running: CounterMap<ClientRequestId, StopSender>,
    /// The stop signal of the deferred `initialize`'s handler while it runs (dropped, it
    /// stops the handler).
    pub(crate) initializing: Option<StopSender>,
    /// Why the session closed, once it did.
    pub(crate) closed: Option<CloseReason>,
}

impl Tasks {
    /// The session closed: stop every handler, fail every waiter that is left.
    pub(crate) fn close(&mut self, reason: CloseReason) {
        for (_, tx) in self.running.drain() {
            tx.cancel(None);
        }
        self.initializing = None;
        for (_, tx) in self.waiters.drain() {
            // The caller may have stopped waiting: nothing to do then.
            let _ = tx.send(Err(RequestError::Closed(reason.clone())));
        }
        self.closed.get_or_insert(reason);
    }
}

/// The state behind the driver's lock.
pub(crate) struct ServerState {
    pub(crate) conn: Conn,
    /// The driver's waker: every command wakes it so that what was queued is written.
    pub(crate) driver: Option<Waker>,
    /// Each live session's running work (a stdio connection has the one slot `None`; an
    /// HTTP session's slot exists from its opening to its end).
    pub(crate) tasks: CounterMap<Slot, Tasks>,
}

impl ServerState {
    pub(crate) fn wake_driver(&mut self) {
        if let Some(w) = &self.driver {
            w.wake_by_ref();
        }
    }

    /// The stdio connection of a stdio driver's state.
    pub(crate) fn stdio(&mut self) -> &mut StdioServerConnection {
        match &mut self.conn {
            Conn::Stdio(conn) => conn,
            #[cfg(feature = "http")]
            Conn::Http(_) => {
                unreachable!("only `Server::start` builds a stdio driver, over a stdio connection")
            }
        }
    }

    /// A session, for its getters (`None` once an HTTP session ended).
    pub(crate) fn session(&self, slot: Slot) -> Option<&ServerSession> {
        match &self.conn {
            Conn::Stdio(conn) => {
                // One session: no slot to pick.
                let _ = slot;
                Some(conn.session())
            }
            #[cfg(feature = "http")]
            Conn::Http(http) => http.server.session(slot?),
        }
    }

    /// Runs `f` on a session; with `related`, what it queues goes to that client request's
    /// stream (HTTP; a stdio connection has one stream). `None` once an HTTP session ended.
    pub(crate) fn with_session<T>(
        &mut self,
        slot: Slot,
        related: Option<ClientRequestId>,
        f: impl FnOnce(&mut ServerSession) -> T,
    ) -> Option<T> {
        match &mut self.conn {
            Conn::Stdio(conn) => {
                // One session on one stream: nothing to pick or route.
                let _ = (slot, related);
                Some(f(conn.session_mut()))
            }
            #[cfg(feature = "http")]
            Conn::Http(http) => {
                let key = slot?;
                match related {
                    Some(request) => http.server.related(key, request, f),
                    None => http.server.session_mut(key).map(f),
                }
            }
        }
    }

    /// A live session's work (`None` once it ended).
    pub(crate) fn tasks(&mut self, slot: Slot) -> Option<&mut Tasks> {
        self.tasks.get_mut(&slot)
    }
}

pub(crate) struct Shared {
    state: Mutex<ServerState>,
    clock: Box<dyn Fn() -> Instant + Send + Sync>,
}

impl Shared {
    pub(crate) fn new(conn: Conn, clock: Box<dyn Fn() -> Instant + Send + Sync>) -> Self {
        let mut tasks = CounterMap::default();
        if matches!(conn, Conn::Stdio(_)) {
            tasks.insert(None, Tasks::default());
        }
        Shared {
            state: Mutex::new(ServerState {
                conn,
                driver: None,
                tasks,
            }),
            clock,
        }
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, ServerState> {
        // A panic while the lock was held left the state consistent (every critical section
        // is a few core calls, which do not panic): carry on with it.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn now(&self) -> Instant {
        (self.clock)()
    }

    /// Runs a session command and wakes the driver to write what it queued.
    pub(crate) fn command<T>(
        &self,
        slot: Slot,
        f: impl FnOnce(&mut ServerSession, Instant) -> Result<T, UsageError>,
    ) -> Result<T, UsageError> {
        let now = self.now();
        let mut state = self.lock();
        let out = state
            .with_session(slot, None, |s| f(s, now))
            .ok_or(UsageError::Closed)??;
        state.wake_driver();
        Ok(out)
    }

    /// Answers a client request once its handler finished (a no-op if the client cancelled
    /// it or the session closed meanwhile: the session drops such answers).
    pub(crate) fn answer(
        &self,
        slot: Slot,
        id: ClientRequestId,
        outcome: Result<Box<RawValue>, ErrorObject>,
    ) {
        let now = self.now();
        let mut state = self.lock();
        if let Some(tasks) = state.tasks(slot) {
            tasks.running.remove(&id);
        }
        let sent = state.with_session(slot, None, |session| match outcome {
            Ok(result) => session.respond(now, id, result),
            Err(error) => session.respond_error(now, id, error),
        });
        match sent {
            Some(Ok(())) => {}
            Some(Err(e)) => tracing::debug!(request = %id, error = %e, "answer dropped"),
            None => tracing::debug!(request = %id, "answer dropped: the session ended"),
        }
        state.wake_driver();
    }

    /// Answers the session's deferred `initialize` once its handler finished (dropped, with
    /// a debug event, when the session closed meanwhile). A refusal ends the session after
    /// its error is sent: the handler will not accept a retry either. Returns whether the
    /// client was accepted.
    pub(crate) fn answer_initialize(
        &self,
        slot: Slot,
        outcome: Result<InitializeAnswer, ErrorObject>,
    ) -> bool {
        let now = self.now();
        let mut state = self.lock();
        if let Some(tasks) = state.tasks(slot) {
            tasks.initializing = None;
        }
        let refuse_and_close = |session: &mut ServerSession, error: ErrorObject| {
            let refused = session.refuse_initialize(now, error);
            if refused.is_ok() {
                session.close(now);
            }
            refused
        };
        let sent = state.with_session(slot, None, |session| match outcome {
            Ok(answer) => session.accept_initialize(now, answer).map(|_| true),
            Err(error) => refuse_and_close(session, error).map(|()| false),
        });
        let sent = match sent {
            Some(Ok(accepted)) => accepted,
            // The answer was refused (a version the client cannot take): the client is told
            // rather than left waiting for the handshake deadline.
            Some(Err(e @ UsageError::VersionNotOffered { .. })) => {
                let error = ErrorObject::new(ErrorObject::INTERNAL_ERROR, e.to_string());
                let _ = state.with_session(slot, None, |s| refuse_and_close(s, error));
                false
            }
            Some(Err(e)) => {
                tracing::debug!(error = %e, "initialize answer dropped");
                false
            }
            None => {
                tracing::debug!("initialize answer dropped: the session ended");
                false
            }
        };
        state.wake_driver();
        sent
    }

    /// A handler stopped without answering (cancelled): forget it and let the driver look.
    pub(crate) fn forget(&self, slot: Slot, id: ClientRequestId) {
        let mut state = self.lock();
        if let Some(tasks) = state.tasks(slot) {
            tasks.running.remove(&id);
        }
        state.wake_driver();
    }

    /// Sends a request to the client and waits for its completion (on the stream of the
    /// client request `related`, if any). Dropping the future cancels the request (the
    /// client is told).
    pub(crate) async fn request_raw(
        self: &Arc<Self>,
        slot: Slot,
        related: Option<ClientRequestId>,
        method: Cow<'static, str>,
        params: Option<RawParams>,
        options: RequestOptions,
    ) -> Result<RawResult, ServerError> {
        let (tx, rx) = oneshot::channel();
        let handle = {
            let now = self.now();
            let mut state = self.lock();
            let handle = state
                .with_session(slot, related, |s| {
                    s.send_request(now, method, params, options)
                })
                .ok_or(UsageError::Closed)??;
            match state.tasks(slot) {
                Some(tasks) => {
                    tasks.waiters.insert(handle, tx);
                }
                // The session ended while the request was queued: it completes with a close.
                None => return Err(RequestError::Closed(CloseReason::Local).into()),
            }
            state.wake_driver();
            handle
        };
        let mut guard = CancelOnDrop {
            shared: self,
            slot,
            handle,
            armed: true,
        };
        let outcome = rx.await;
        guard.armed = false;
        match outcome {
            Ok(result) => Ok(result?),
            // The driver is gone without completing it (its task was dropped).
            Err(_) => Err(RequestError::Closed(CloseReason::Local).into()),
        }
    }
}

/// Cancels a server-to-client request whose waiter went away before its completion.
struct CancelOnDrop<'a> {
    shared: &'a Shared,
    slot: Slot,
    handle: RequestHandle,
    armed: bool,
}

impl Drop for CancelOnDrop<'_> {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let now = self.shared.now();
        let mut state = self.shared.lock();
        if let Some(tasks) = state.tasks(self.slot) {
            tasks.waiters.remove(&self.handle);
        }
        // Already completed (or the session ended) is a race to ignore.
        let _ = state.with_session(self.slot, None, |s| {
            s.cancel(
                now,
                self.handle,
                Some("the server no longer needs the answer".into()),
            )
        });
        state.wake_driver();
    }
}
