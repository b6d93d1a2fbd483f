//! The host's handles on a running server: [`ServerHandle`] (notifications, requests to the
//! client, the client's details, close) and [`RequestContext`] (one client request: progress,
//! cancellation, requests to the client on its behalf).

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::Waker;
use std::time::Instant;

use mcp_proto::jsonrpc::{self, ErrorObject, Id};
use mcp_proto::server::stdio::StdioServerConnection;
use mcp_proto::server::{ClientRequestId, ListChanged, RequestEnvelope, UsageError};
use mcp_proto::session::{
    CloseReason, ProtocolVersion, RawParams, RawResult, RequestError, RequestHandle, RequestOptions,
};
use mcp_proto::types::{ClientCapabilities, Implementation, LoggingLevel};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use tokio::sync::{oneshot, watch};

/// Why a command of a [`ServerHandle`] or [`RequestContext`] failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServerError {
    /// The session refused the command (not declared, not ready, closed, queue full...).
    #[error(transparent)]
    Usage(#[from] UsageError),
    /// The request to the client finished without a result: the client's error, a
    /// timeout, a cancellation, the connection's close.
    #[error(transparent)]
    Request(#[from] RequestError),
    /// Params that do not serialize, or a client result that does not decode into the
    /// expected type.
    #[error("invalid JSON: {0}")]
    Json(#[from] serde_json::Error),
}

/// A pending server-to-client request's waiter.
type Waiter = oneshot::Sender<Result<RawResult, RequestError>>;

/// What the driver, the handles and the request tasks share.
pub(crate) struct ServerState {
    pub(crate) conn: StdioServerConnection,
    /// The driver's waker: every command wakes it so that what was queued is written.
    pub(crate) driver: Option<Waker>,
    /// Server-to-client requests by handle, completed from the session's events.
    pub(crate) waiters: HashMap<RequestHandle, Waiter>,
    /// Client requests whose handler runs: sending `true` (or dropping the sender) stops it.
    pub(crate) running: HashMap<ClientRequestId, watch::Sender<bool>>,
    /// Why the session closed, once it did.
    pub(crate) closed: Option<CloseReason>,
}

impl ServerState {
    pub(crate) fn wake_driver(&mut self) {
        if let Some(w) = &self.driver {
            w.wake_by_ref();
        }
    }
}

pub(crate) struct Shared {
    state: Mutex<ServerState>,
    clock: Box<dyn Fn() -> Instant + Send + Sync>,
}

impl Shared {
    pub(crate) fn new(
        conn: StdioServerConnection,
        clock: Box<dyn Fn() -> Instant + Send + Sync>,
    ) -> Self {
        Shared {
            state: Mutex::new(ServerState {
                conn,
                driver: None,
                waiters: HashMap::new(),
                running: HashMap::new(),
                closed: None,
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
    fn command<T>(
        &self,
        f: impl FnOnce(&mut mcp_proto::server::ServerSession, Instant) -> Result<T, UsageError>,
    ) -> Result<T, UsageError> {
        let now = self.now();
        let mut state = self.lock();
        let out = f(state.conn.session_mut(), now)?;
        state.wake_driver();
        Ok(out)
    }

    /// Answers a client request once its handler finished (a no-op if the client cancelled
    /// it or the session closed meanwhile: the session drops such answers).
    pub(crate) fn answer(&self, id: ClientRequestId, outcome: Result<Box<RawValue>, ErrorObject>) {
        let now = self.now();
        let mut state = self.lock();
        state.running.remove(&id);
        let session = state.conn.session_mut();
        let sent = match outcome {
            Ok(result) => session.respond(now, id, result),
            Err(error) => session.respond_error(now, id, error),
        };
        if let Err(e) = sent {
            tracing::debug!(request = %id, error = %e, "answer dropped");
        }
        state.wake_driver();
    }

    /// Sends a request to the client and waits for its completion. Dropping the future
    /// cancels the request (the client is told).
    async fn request_raw(
        self: &Arc<Self>,
        method: Cow<'static, str>,
        params: Option<RawParams>,
        options: RequestOptions,
    ) -> Result<RawResult, ServerError> {
        let (tx, rx) = oneshot::channel();
        let handle = {
            let now = self.now();
            let mut state = self.lock();
            let handle = state
                .conn
                .session_mut()
                .send_request(now, method, params, options)?;
            state.waiters.insert(handle, tx);
            state.wake_driver();
            handle
        };
        let mut guard = CancelOnDrop {
            shared: self,
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
        state.waiters.remove(&self.handle);
        // Already completed is a race to ignore.
        let _ = state.conn.session_mut().cancel(
            now,
            self.handle,
            Some("the server no longer needs the answer".into()),
        );
        state.wake_driver();
    }
}

/// A cheap-clone handle on a running server: notifications and requests to the client, the
/// client's details, and close. Every command is queued in the session and written by the
/// driver; none blocks.
#[derive(Clone)]
pub struct ServerHandle {
    pub(crate) shared: Arc<Shared>,
}

impl fmt::Debug for ServerHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerHandle")
            .field("closed", &self.is_closed())
            .finish_non_exhaustive()
    }
}

impl ServerHandle {
    /// The negotiated protocol version, once the client sent `initialize`.
    #[must_use]
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        self.shared.lock().conn.session().protocol_version()
    }

    /// The client's `clientInfo`, once it sent `initialize`.
    #[must_use]
    pub fn client_info(&self) -> Option<Implementation> {
        self.shared.lock().conn.session().client_info().cloned()
    }

    /// The client's capabilities, once it sent `initialize`.
    #[must_use]
    pub fn client_capabilities(&self) -> Option<ClientCapabilities> {
        self.shared
            .lock()
            .conn
            .session()
            .client_capabilities()
            .cloned()
    }

    /// The level the client set with `logging/setLevel`, if it did.
    #[must_use]
    pub fn log_level(&self) -> Option<LoggingLevel> {
        self.shared.lock().conn.session().log_level()
    }

    /// How many client requests are open: handed to the handler and not answered yet.
    #[must_use]
    pub fn open_requests(&self) -> usize {
        self.shared.lock().conn.session().open_client_requests()
    }

    /// Whether the session is over (the client left, or [`close`](Self::close) was called).
    #[must_use]
    pub fn is_closed(&self) -> bool {
        self.shared.lock().closed.is_some()
    }

    /// Sends a notification with typed params (`None` for none). The session refuses the
    /// methods it sends through their own commands (progress, cancelled, message).
    ///
    /// # Errors
    ///
    /// [`ServerError::Usage`] (not initialized, reserved method, queue full, closed),
    /// [`ServerError::Json`] for params that do not serialize.
    pub fn notify<P: Serialize + ?Sized>(
        &self,
        method: impl Into<Cow<'static, str>>,
        params: Option<&P>,
    ) -> Result<(), ServerError> {
        let params = params.map(jsonrpc::to_raw).transpose()?;
        let method = method.into();
        Ok(self
            .shared
            .command(|s, now| s.notify(now, method, params))?)
    }

    /// Tells the client a list changed (the capability's `listChanged` must be declared).
    ///
    /// # Errors
    ///
    /// [`ServerError::Usage`].
    pub fn notify_list_changed(&self, list: ListChanged) -> Result<(), ServerError> {
        Ok(self
            .shared
            .command(|s, now| s.notify_list_changed(now, list))?)
    }

    /// Tells the client the resource `uri` changed (`resources.subscribe` must be declared).
    ///
    /// # Errors
    ///
    /// [`ServerError::Usage`].
    pub fn notify_resource_updated(&self, uri: &str) -> Result<(), ServerError> {
        Ok(self
            .shared
            .command(|s, now| s.notify_resource_updated(now, uri))?)
    }

    /// Sends a log entry (`notifications/message`) unless it is below the client's level;
    /// returns whether it was sent (`logging` must be declared).
    ///
    /// # Errors
    ///
    /// [`ServerError::Usage`], [`ServerError::Json`].
    pub fn log<D: Serialize + ?Sized>(
        &self,
        level: LoggingLevel,
        logger: Option<&str>,
        data: &D,
    ) -> Result<bool, ServerError> {
        let data = jsonrpc::to_raw(data)?;
        Ok(self
            .shared
            .command(|s, now| s.log(now, level, logger, &data))?)
    }

    /// Sends a request to the client and waits for its result, raw. Its deadline comes from
    /// `options` (else the [`ServerConfig`](mcp_proto::server::ServerConfig)'s request
    /// timeout). Dropping the future cancels the request and tells the client.
    ///
    /// # Errors
    ///
    /// [`ServerError::Usage`] (the client did not declare the capability, not ready yet,
    /// too many in flight, closed), [`ServerError::Request`] (the client's error, timeout,
    /// close).
    pub async fn request_raw(
        &self,
        method: impl Into<Cow<'static, str>>,
        params: Option<&RawValue>,
        options: RequestOptions,
    ) -> Result<RawResult, ServerError> {
        let params = params.map(RawParams::encode).transpose()?;
        self.shared
            .request_raw(method.into(), params, options)
            .await
    }

    /// Sends a typed request to the client (`sampling/createMessage`, `elicitation/create`,
    /// `roots/list`, ...) and decodes its result: see [`request_raw`](Self::request_raw).
    ///
    /// # Errors
    ///
    /// Those of [`request_raw`](Self::request_raw), and [`ServerError::Json`] for a result
    /// that does not decode.
    pub async fn request<R: mcp_proto::types::Request>(
        &self,
        params: &R::Params,
        options: RequestOptions,
    ) -> Result<R::Result, ServerError>
    where
        R::Result: DeserializeOwned,
    {
        let params = RawParams::encode(params)?;
        let params = (params.get() != "null").then_some(params);
        let raw = self
            .shared
            .request_raw(Cow::Borrowed(R::METHOD), params, options)
            .await?;
        Ok(raw.decode()?)
    }

    /// Ends the session: pending requests to the client complete with a close, running
    /// handlers are cancelled, queued answers are flushed, and the driver's future finishes.
    /// Idempotent.
    pub fn close(&self) {
        let now = self.shared.now();
        let mut state = self.shared.lock();
        state.conn.close(now);
        state.wake_driver();
    }
}

/// One client request being handled: its progress token, its cancellation, and the server's
/// handle (requests to the client made on its behalf). Cheap to clone.
#[derive(Clone)]
pub struct RequestContext {
    pub(crate) id: ClientRequestId,
    pub(crate) progress_token: Option<Id>,
    /// The request's own 2026-07-28 envelope (`None` in the initialize era).
    pub(crate) envelope: Option<Box<RequestEnvelope>>,
    pub(crate) cancel: watch::Receiver<bool>,
    pub(crate) server: ServerHandle,
}

impl fmt::Debug for RequestContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestContext")
            .field("id", &self.id)
            .field("progress_token", &self.progress_token)
            .finish_non_exhaustive()
    }
}

impl RequestContext {
    /// The host's token of this request.
    #[must_use]
    pub fn id(&self) -> ClientRequestId {
        self.id
    }

    /// The client's progress token, when it asked for progress.
    #[must_use]
    pub fn progress_token(&self) -> Option<&Id> {
        self.progress_token.as_ref()
    }

    /// The protocol version this request speaks: its own envelope's in 2026-07-28, else the
    /// one negotiated by `initialize`.
    #[must_use]
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        match &self.envelope {
            Some(envelope) => Some(envelope.version),
            None => self.server.protocol_version(),
        }
    }

    /// The client's info for this request: its own envelope's in 2026-07-28 (when the
    /// client sent one), else the `clientInfo` of `initialize`.
    #[must_use]
    pub fn client_info(&self) -> Option<Implementation> {
        match &self.envelope {
            Some(envelope) => envelope.client_info.clone(),
            None => self.server.client_info(),
        }
    }

    /// The client's capabilities for this request: its own envelope's in 2026-07-28 (the
    /// spec forbids inferring them from other requests), else those of `initialize`.
    #[must_use]
    pub fn client_capabilities(&self) -> Option<ClientCapabilities> {
        match &self.envelope {
            Some(envelope) => Some(envelope.capabilities.clone()),
            None => self.server.client_capabilities(),
        }
    }

    /// The request's whole 2026-07-28 envelope (version, capabilities, client info, log
    /// level); `None` in the initialize era.
    #[must_use]
    pub fn envelope(&self) -> Option<&RequestEnvelope> {
        self.envelope.as_deref()
    }

    /// Sends a log message about this request: in 2026-07-28 only when the request asked
    /// for log messages at `level` or below; in the initialize era as
    /// [`ServerHandle::log`]. Returns whether it was sent.
    ///
    /// # Errors
    ///
    /// [`ServerError::Usage`]: `logging` not declared, the request is over, the queue is
    /// full, closed; [`ServerError::Json`] when `data` does not serialize.
    pub fn log<D: Serialize + ?Sized>(
        &self,
        level: LoggingLevel,
        logger: Option<&str>,
        data: &D,
    ) -> Result<bool, ServerError> {
        let data = jsonrpc::to_raw(data)?;
        Ok(self
            .server
            .shared
            .command(|s, now| s.log_for(now, self.id, level, logger, &data))?)
    }

    /// The server's handle.
    #[must_use]
    pub fn server(&self) -> &ServerHandle {
        &self.server
    }

    /// Reports progress on this request, if the client asked for it; returns whether a
    /// notification was queued (`false` without a progress token). Progress must be finite
    /// and increase; the driver writes it in its own flush, before the answer.
    ///
    /// # Errors
    ///
    /// [`ServerError::Usage`]: not increasing, the request is over (answered, cancelled),
    /// the queue is full, closed.
    pub fn progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
    ) -> Result<bool, ServerError> {
        if self.progress_token.is_none() {
            return Ok(false);
        }
        self.server
            .shared
            .command(|s, now| s.notify_progress(now, self.id, progress, total, message))?;
        Ok(true)
    }

    /// Whether the client cancelled this request or disconnected.
    #[must_use]
    pub fn is_cancelled(&self) -> bool {
        // A dropped sender means the request is over: it was answered, cancelled or closed.
        *self.cancel.borrow() || self.cancel.has_changed().is_err()
    }

    /// Completes when the client cancels this request or disconnects (at once if it did).
    /// The handler's own future is dropped then anyway; this is for work beside it.
    pub async fn cancelled(&self) {
        let mut rx = self.cancel.clone();
        // An error means the sender is gone: the request is over.
        let _ = rx.wait_for(|c| *c).await;
    }

    /// A typed request to the client on behalf of this request: see
    /// [`ServerHandle::request`].
    ///
    /// # Errors
    ///
    /// Those of [`ServerHandle::request`].
    pub async fn request<R: mcp_proto::types::Request>(
        &self,
        params: &R::Params,
        options: RequestOptions,
    ) -> Result<R::Result, ServerError>
    where
        R::Result: DeserializeOwned,
    {
        self.server.request::<R>(params, options).await
    }

    /// A raw request to the client on behalf of this request: see
    /// [`ServerHandle::request_raw`].
    ///
    /// # Errors
    ///
    /// Those of [`ServerHandle::request_raw`].
    pub async fn request_raw(
        &self,
        method: impl Into<Cow<'static, str>>,
        params: Option<&RawValue>,
        options: RequestOptions,
    ) -> Result<RawResult, ServerError> {
        self.server.request_raw(method, params, options).await
    }
}
