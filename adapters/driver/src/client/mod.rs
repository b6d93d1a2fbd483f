//! The [`Client`] handle: a cheap-clone front end to one connection's driver task.

mod budget;
mod builder;
mod call;
mod command_line;
mod constructors;
mod listen;
mod methods;
mod output_schema;
mod task_list;
mod tasks;

pub use budget::{ListBudget, ListLimit, MAX_PAGES};
pub(crate) use output_schema::SchemaCache;
pub use output_schema::{MAX_VIOLATIONS, SchemaViolation};
pub use tasks::{TaskHandle, ToolCall};

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_proto::RawParams;
use mcp_proto::session::{
    CloseReason, Era, ProtocolVersion, RequestError, RequestHandle, UsageError,
};
use mcp_proto::types::{Implementation, Request, ServerCapabilities};
use serde::Serialize;
use serde_json::value::RawValue;
use tokio::sync::watch;

pub(crate) use builder::PhaseSlot;
pub use builder::{ClientBuilder, IntoStdioCommand};

use crate::error::Error;
use crate::notify::Notifications;
use crate::options::CallOptions;
use crate::runtime::Runtime;
use crate::shared::{Call, Phase, Shared};

/// Where a connection is in its life, from [`Client::state`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ConnectionState {
    /// Requests flow.
    Ready,
    /// The session is closed; the transport may still be shutting down (the child exiting).
    Closing(CloseReason),
    /// Everything is shut down and any server process reaped.
    Closed(CloseReason),
}

/// What the server said about itself in the handshake.
#[derive(Debug, Clone)]
pub(crate) struct ServerInfo {
    pub(crate) info: Implementation,
    pub(crate) capabilities: ServerCapabilities,
    pub(crate) instructions: Option<String>,
    pub(crate) version: ProtocolVersion,
}

pub(crate) struct Inner<R: Runtime> {
    pub(crate) shared: Arc<Shared>,
    pub(crate) runtime: R,
    pub(crate) server: ServerInfo,
    /// How long `close()` waits at most.
    pub(crate) close_bound: Duration,
    /// The host's handlers (they also answer a task's input requests).
    pub(crate) handlers: crate::handler::Handlers,
    /// What one paginated list may cost.
    pub(crate) list_budget: ListBudget,
    /// Whether tool results are checked against the tools' output schemas
    /// ([`ClientBuilder::validate_output`]).
    pub(crate) validate_output: bool,
    /// Each tool's `execution.taskSupport` from the last `tools/list` seen (decides whether a
    /// 2025-11-25 `tools/call` carries a task).
    pub(crate) task_support: tasks::TaskSupportCache,
    /// The OAuth state of an HTTP connection with an [`AuthProvider`](crate::auth::AuthProvider).
    #[cfg(feature = "http")]
    pub(crate) auth: Option<Arc<crate::auth::AuthSession<R>>>,
}

impl<R: Runtime> Drop for Inner<R> {
    fn drop(&mut self) {
        // The last handle is gone without `close()`: shut down in the background, the same way.
        let now = self.runtime.now();
        let mut state = self.shared.lock();
        if !state.core.session().is_closed() {
            tracing::debug!(
                server = &*self.shared.name,
                "every client handle dropped: closing"
            );
            state.core.close(now);
        }
        state.wake_driver();
    }
}

/// An MCP client connected to one server.
///
/// Cheap to clone: every clone talks to the same connection, whose driver task runs on the
/// runtime `R`. Made by [`Client::connect`], [`Client::stdio`], [`Client::over`] or a
/// [`ClientBuilder`]; when those return `Ok`, the handshake has finished.
///
/// Calls can run concurrently from any number of clones. Dropping a call's future cancels the
/// request and tells the server (`notifications/cancelled`). When the last clone is dropped
/// without [`close`](Self::close), the connection shuts down the same way in the background.
pub struct Client<R: Runtime> {
    pub(crate) inner: Arc<Inner<R>>,
}

impl<R: Runtime> Clone for Client<R> {
    fn clone(&self) -> Self {
        Client {
            inner: self.inner.clone(),
        }
    }
}

impl<R: Runtime> fmt::Debug for Client<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("server", &self.server_name())
            .field("version", &self.inner.server.version)
            .finish_non_exhaustive()
    }
}

impl<R: Runtime> Client<R> {
    /// The server's name as used in errors and logs.
    #[must_use]
    pub fn server_name(&self) -> &str {
        &self.inner.shared.name
    }

    /// The server's `serverInfo` from the handshake.
    #[must_use]
    pub fn server_info(&self) -> &Implementation {
        &self.inner.server.info
    }

    /// The server's capabilities from the handshake.
    #[must_use]
    pub fn capabilities(&self) -> &ServerCapabilities {
        &self.inner.server.capabilities
    }

    /// The server's `instructions`, if it gave any.
    #[must_use]
    pub fn instructions(&self) -> Option<&str> {
        self.inner.server.instructions.as_deref()
    }

    /// The negotiated protocol version.
    #[must_use]
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.inner.server.version
    }

    /// The handshake era of the negotiated version.
    #[must_use]
    pub fn era(&self) -> Era {
        self.inner.server.version.era()
    }

    /// Where the connection is now.
    #[must_use]
    pub fn state(&self) -> ConnectionState {
        match &*self.inner.shared.phase.borrow() {
            Phase::Handshaking | Phase::Ready => ConnectionState::Ready,
            Phase::Closed(r) => ConnectionState::Closing(r.clone()),
            Phase::Finished(r) => ConnectionState::Closed(r.clone()),
        }
    }

    /// Whether the session is closed (requests fail at once).
    #[must_use]
    pub fn is_closed(&self) -> bool {
        !matches!(self.state(), ConnectionState::Ready)
    }

    /// Waits until the session closes, for whatever reason, and returns the reason. Does not
    /// close it: see [`close`](Self::close).
    pub async fn closed(&self) -> CloseReason {
        let mut rx = self.inner.shared.phase.subscribe();
        wait_phase(&mut rx, |p| p.reason().is_some()).await
    }

    /// Waits until the session closes, like [`closed`](Self::closed), and returns the error
    /// every call fails with from then on: [`Error::Exited`] (how the process ended, its last
    /// stderr lines) when a stdio server ended by itself, else [`Error::Closed`] with the
    /// reason. Call it to report why a connection went away in the same words as a failed call.
    pub async fn ended(&self) -> Error {
        let reason = self.closed().await;
        self.closed_error(reason)
    }

    /// Closes the connection and waits until it is shut down: queued messages are flushed,
    /// over HTTP the session is ended with a `DELETE` (bounded by the close timeout), a stdio
    /// server gets the shutdown schedule (stdin closed, `SIGTERM` to its group
    /// after the stdin grace, `SIGKILL` after the term grace) and is reaped. Pending calls
    /// fail with [`Error::Closed`]. Returns within the graces plus a small margin even if the
    /// server misbehaves. Idempotent; other clones see the connection closed.
    pub async fn close(&self) {
        {
            let now = self.inner.runtime.now();
            let mut state = self.inner.shared.lock();
            state.core.close(now);
            state.wake_driver();
        }
        let mut rx = self.inner.shared.phase.subscribe();
        let finished = wait_phase(&mut rx, |p| matches!(p, Phase::Finished(_)));
        let deadline = self.inner.runtime.now() + self.inner.close_bound;
        let bound = self.inner.runtime.sleep_until(deadline);
        let finished = std::pin::pin!(finished);
        if let futures_util::future::Either::Right(_) =
            futures_util::future::select(finished, bound).await
        {
            tracing::warn!(server = self.server_name(), "close did not finish in time");
        }
    }

    /// A bounded stream of every server notification from now on (see [`Notifications`]).
    #[must_use]
    pub fn notifications(&self) -> Notifications {
        Notifications::new(self.inner.shared.subscribe())
    }

    /// Sends a typed request with the default options and decodes its result.
    ///
    /// ```no_run
    /// # async fn f(client: mcp_tokio::Client) -> Result<(), mcp_tokio::Error> {
    /// use mcp_tokio::types::ListTools;
    /// let page = client.request::<ListTools>(&None).await?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// See [`Error`].
    pub async fn request<Q: Request>(&self, params: &Q::Params) -> Result<Q::Result, Error> {
        self.request_with::<Q>(params, CallOptions::new()).await
    }

    /// Sends a typed request with per-call options.
    ///
    /// # Errors
    ///
    /// See [`Error`].
    pub async fn request_with<Q: Request>(
        &self,
        params: &Q::Params,
        options: CallOptions,
    ) -> Result<Q::Result, Error> {
        let params = RawParams::for_request(params).map_err(|e| self.usage(e))?;
        let raw = self
            .call(Cow::Borrowed(Q::METHOD), params, &options)
            .await?;
        raw.decode()
            .map_err(|e| self.decode_error(Q::METHOD, &raw, e))
    }

    /// Sends any request with raw params and returns the raw result.
    ///
    /// # Errors
    ///
    /// See [`Error`]; [`Error::InvalidResponse`] when the result is not exactly one JSON
    /// value.
    pub async fn request_raw(
        &self,
        method: impl Into<Cow<'static, str>>,
        params: Option<Box<RawValue>>,
        options: CallOptions,
    ) -> Result<Box<RawValue>, Error> {
        let method = method.into();
        let raw = self
            .call(method.clone(), params.map(Into::into), &options)
            .await?;
        // Checked here: the session hands over results located, not parsed.
        raw.into_raw().map_err(|_| self.unreadable_answer(&method))
    }

    /// Sends a notification. `params` serializes to the params object (`()` or `None`: no
    /// params). The notifications the session sends itself (`initialized`, `cancelled`,
    /// `progress`) are refused.
    ///
    /// # Errors
    ///
    /// [`Error::Usage`] for a reserved method or params that do not serialize,
    /// [`Error::Closed`] / [`Error::Exited`] when the connection is gone.
    pub fn notify(
        &self,
        method: impl Into<Cow<'static, str>>,
        params: impl Serialize,
    ) -> Result<(), Error> {
        let params = self.raw_params(&params)?;
        let now = self.inner.runtime.now();
        let mut state = self.inner.shared.lock();
        let r = state.core.session_mut().notify(now, method, params);
        state.wake_driver();
        drop(state);
        r.map_err(|e| self.usage(e))
    }

    fn raw_params<T: Serialize + ?Sized>(
        &self,
        params: &T,
    ) -> Result<Option<Box<RawValue>>, Error> {
        let raw = mcp_proto::jsonrpc::to_raw(params)
            .map_err(|e| self.usage(UsageError::InvalidParams(e.to_string())))?;
        Ok((raw.get() != "null").then_some(raw))
    }

    /// The one path every request takes: a [`PendingCall`](call::PendingCall), which with an
    /// [`AuthProvider`](crate::auth::AuthProvider) runs the boxed authorized path (its token
    /// refresh is an HTTP exchange of its own, kilobytes of future that every request's
    /// future would otherwise carry).
    fn call<'a>(
        &'a self,
        method: Cow<'static, str>,
        params: Option<RawParams>,
        options: &'a CallOptions,
    ) -> call::PendingCall<'a, R> {
        #[cfg(feature = "http")]
        if self.inner.auth.is_some() {
            return call::PendingCall::authorized(
                self,
                method.clone(),
                Box::pin(self.call_authorized(method, params, options)),
                options,
            );
        }
        call::PendingCall::new(self, method, params, options)
    }

    /// [`call`](Self::call) with an [`AuthProvider`](crate::auth::AuthProvider): the
    /// `Authorization` header before the request, one retry after a 401 or 403 it recovers
    /// from.
    #[cfg(feature = "http")]
    async fn call_authorized(
        &self,
        method: Cow<'static, str>,
        params: Option<RawParams>,
        options: &CallOptions,
    ) -> Result<mcp_proto::RawResult, Error> {
        let Some(auth) = &self.inner.auth else {
            return call::PendingCall::new(self, method, params, options).await;
        };
        if let Some(h) = auth.before_request().await {
            self.set_authorization(h);
        }
        let sent = self.authorization();
        let result = call::PendingCall::new(self, method.clone(), params.clone(), options).await;
        let Some(status) = result
            .as_ref()
            .err()
            .and_then(Error::http_status)
            .filter(|s| matches!(s.status, 401 | 403))
        else {
            return result;
        };
        match auth.recover(status, sent.as_deref()).await {
            Ok(Some(h)) => {
                self.set_authorization(h);
                call::PendingCall::new(self, method, params, options).await
            }
            Ok(None) => result,
            Err(message) => Err(Error::Auth {
                server: self.inner.shared.name.clone(),
                message,
            }),
        }
    }

    /// The `Authorization` header later HTTP exchanges carry.
    #[cfg(feature = "http")]
    fn authorization(&self) -> Option<String> {
        self.inner.shared.lock().core.authorization()
    }

    #[cfg(feature = "http")]
    fn set_authorization(&self, header: String) {
        self.inner.shared.lock().core.set_authorization(header);
    }

    /// Cancels the waiting call `handle` with `reason` ([`CancelHandle::cancel`]); its outcome
    /// instead when it had already arrived.
    fn cancel_call(&self, handle: RequestHandle, reason: &str) -> Option<crate::shared::Outcome> {
        let now = self.inner.runtime.now();
        let mut state = self.inner.shared.lock();
        match state.calls.remove(&handle) {
            Some(Call {
                reply:
                    crate::shared::Reply::Slot {
                        outcome: Some(outcome),
                        ..
                    },
                ..
            }) => Some(*outcome),
            Some(_) => {
                tracing::debug!(
                    server = &*self.inner.shared.name,
                    handle = handle.get(),
                    reason,
                    "call cancelled by its handle"
                );
                // Already finished in the session is a harmless race.
                let _ = state
                    .core
                    .session_mut()
                    .cancel(now, handle, Some(reason.to_owned()));
                state.wake_driver();
                None
            }
            None => None,
        }
    }

    /// The error for a result `raw` of `method` that did not decode: an invalid response
    /// when its text is not JSON (the answer was unreadable, as when its frame did not
    /// decode at all: the same error either way), else a decode error (not the expected
    /// shape). The session hands results over located, not validated
    /// ([`RawResult`](mcp_proto::RawResult)): the caller's decode is their one parse.
    pub(crate) fn decode_error(
        &self,
        method: &str,
        raw: &mcp_proto::RawResult,
        source: serde_json::Error,
    ) -> Error {
        if !raw.is_json() {
            return self.unreadable_answer(method);
        }
        Error::Decode {
            server: self.inner.shared.name.clone(),
            method: method.to_owned(),
            source,
        }
    }

    /// The error for an answer to `method` whose result is not JSON.
    pub(crate) fn unreadable_answer(&self, method: &str) -> Error {
        self.request_error(method, RequestError::unreadable_answer())
    }

    pub(crate) fn usage(&self, e: UsageError) -> Error {
        if e == UsageError::Closed {
            let reason = self
                .inner
                .shared
                .phase
                .borrow()
                .reason()
                .cloned()
                .unwrap_or(CloseReason::Local);
            return self.closed_error(reason);
        }
        Error::Usage {
            server: self.inner.shared.name.clone(),
            source: e,
        }
    }

    fn closed_error(&self, reason: CloseReason) -> Error {
        closed_error(&self.inner.shared, reason)
    }

    fn request_error(&self, method: &str, e: RequestError) -> Error {
        request_error(&self.inner.shared, method, e)
    }

    pub(crate) fn now_fn(&self) -> Arc<dyn Fn() -> Instant + Send + Sync> {
        let runtime = self.inner.runtime.clone();
        Arc::new(move || runtime.now())
    }
}

/// A request's failure as an error of the client API.
pub(crate) fn request_error(shared: &Shared, method: &str, e: RequestError) -> Error {
    let server = shared.name.clone();
    match e {
        RequestError::Remote(obj) => Error::Remote {
            server,
            method: method.into(),
            code: obj.code,
            message: obj.message,
            data: obj.data,
        },
        RequestError::Timeout { after, total } => Error::Timeout {
            server,
            method: method.into(),
            after,
            total,
        },
        RequestError::Cancelled { .. } => Error::Cancelled {
            server,
            method: method.into(),
        },
        RequestError::Closed(reason) => closed_error(shared, reason),
        RequestError::Http(source) => Error::Http {
            server,
            method: method.into(),
            source,
        },
        RequestError::InvalidResponse(detail) => Error::InvalidResponse {
            server,
            method: method.into(),
            detail,
        },
        other => Error::Closed {
            server,
            reason: CloseReason::TransportClosed {
                detail: Some(other.to_string()),
            },
        },
    }
}

/// A closed connection as an error: [`Error::Exited`] when a stdio server ended by itself.
pub(crate) fn closed_error(shared: &Shared, reason: CloseReason) -> Error {
    let server = shared.name.clone();
    if matches!(reason, CloseReason::TransportClosed { .. })
        && let Some(exit) = shared.lock().exit.clone()
    {
        return Error::Exited {
            server,
            status: exit.status,
            stderr: exit.stderr,
        };
    }
    Error::Closed { server, reason }
}

async fn wait_phase(rx: &mut watch::Receiver<Phase>, f: impl Fn(&Phase) -> bool) -> CloseReason {
    match rx.wait_for(|p| f(p)).await {
        Ok(p) => p.reason().cloned().unwrap_or(CloseReason::Local),
        // The driver and its state are gone: nothing is open any more.
        Err(_) => CloseReason::TransportClosed { detail: None },
    }
}
