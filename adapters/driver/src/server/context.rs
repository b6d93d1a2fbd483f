//! The host's handles on a running server: [`ServerHandle`] (notifications, requests to the
//! client, the client's details, close) and [`RequestContext`] (one client request: progress,
//! cancellation, requests to the client on its behalf).

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use mcp_proto::jsonrpc::{self, Id};
use mcp_proto::server::http::SessionKey;
use mcp_proto::server::{ClientRequestId, ListChanged, RequestEnvelope, UsageError};
use mcp_proto::session::{ProtocolVersion, RawParams, RawResult, RequestError, RequestOptions};
use mcp_proto::types::v2026::ListenFilter;
use mcp_proto::types::{ClientCapabilities, Implementation, LoggingLevel};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

use super::state::{Shared, Slot};
use super::stop::StopReceiver;

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

/// A cheap-clone handle on one client's session of a running server: notifications and
/// requests to that client, its details, and close. Every command is queued in the session
/// and written by the driver; none blocks. On an HTTP server each session has its own handle
/// (its notifications go to that session's GET stream).
#[derive(Clone)]
pub struct ServerHandle {
    pub(crate) shared: Arc<Shared>,
    pub(crate) slot: Slot,
}

impl fmt::Debug for ServerHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerHandle")
            .field("session", &self.slot)
            .field("closed", &self.is_closed())
            .finish_non_exhaustive()
    }
}

impl ServerHandle {
    /// The answer the session's configuration gives to `initialize` (`None` once ended).
    pub(crate) fn configured_answer(&self) -> Option<mcp_proto::server::InitializeAnswer> {
        let state = self.shared.lock();
        state
            .session(self.slot)
            .map(|s| mcp_proto::server::InitializeAnswer::from_config(s.config()))
    }

    /// The negotiated protocol version, once the client sent `initialize`.
    #[must_use]
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        self.shared.lock().session(self.slot)?.protocol_version()
    }

    /// The client's `clientInfo`, once it sent `initialize`.
    #[must_use]
    pub fn client_info(&self) -> Option<Implementation> {
        self.shared
            .lock()
            .session(self.slot)?
            .client_info()
            .cloned()
    }

    /// The client's capabilities, once it sent `initialize`.
    #[must_use]
    pub fn client_capabilities(&self) -> Option<ClientCapabilities> {
        self.shared
            .lock()
            .session(self.slot)?
            .client_capabilities()
            .cloned()
    }

    /// The level the client set with `logging/setLevel`, if it did.
    #[must_use]
    pub fn log_level(&self) -> Option<LoggingLevel> {
        self.shared.lock().session(self.slot)?.log_level()
    }

    /// How many client requests are open: handed to the handler and not answered yet.
    #[must_use]
    pub fn open_requests(&self) -> usize {
        self.shared
            .lock()
            .session(self.slot)
            .map_or(0, |s| s.open_client_requests())
    }

    /// Whether the session is over (the client left, or [`close`](Self::close) was called).
    #[must_use]
    pub fn is_closed(&self) -> bool {
        let mut state = self.shared.lock();
        state.tasks(self.slot).is_none_or(|t| t.closed.is_some())
    }

    /// The session's token on an HTTP server (`None` on stdio): a key for a host's own
    /// per-session tables.
    #[must_use]
    pub fn session_key(&self) -> Option<SessionKey> {
        self.slot
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
            .command(self.slot, |s, now| s.notify(now, method, params))?)
    }

    /// The open 2026-07-28 listens of this session and what each was granted, in the order
    /// they opened (empty in the initialize era).
    #[must_use]
    pub fn listens(&self) -> Vec<(ClientRequestId, ListenFilter)> {
        self.shared
            .lock()
            .session(self.slot)
            .map_or_else(Vec::new, |s| {
                s.listens().map(|(id, f)| (id, f.clone())).collect()
            })
    }

    /// Ends the listen `id` from the server's side: the client gets its `complete` result,
    /// and [`ServerHandler::on_listen_closed`](super::ServerHandler::on_listen_closed) follows.
    ///
    /// # Errors
    ///
    /// [`ServerError::Usage`]: [`UsageError::NotOpen`] when it ended already (a race to
    /// ignore), [`UsageError::Closed`].
    pub fn close_listen(&self, id: ClientRequestId) -> Result<(), ServerError> {
        Ok(self
            .shared
            .command(self.slot, |s, now| s.close_listen(now, id))?)
    }

    /// Tells the client a list changed (the capability's `listChanged` must be declared). In
    /// the 2026-07-28 era it goes to each open listen that asked for it (with its
    /// `subscriptionId`), and nowhere when none did.
    ///
    /// # Errors
    ///
    /// [`ServerError::Usage`].
    pub fn notify_list_changed(&self, list: ListChanged) -> Result<(), ServerError> {
        Ok(self
            .shared
            .command(self.slot, |s, now| s.notify_list_changed(now, list))?)
    }

    /// Tells the client the resource `uri` changed (`resources.subscribe` must be declared).
    /// In the 2026-07-28 era it goes to each open listen that subscribed it, and nowhere when
    /// none did.
    ///
    /// # Errors
    ///
    /// [`ServerError::Usage`].
    pub fn notify_resource_updated(&self, uri: &str) -> Result<(), ServerError> {
        Ok(self
            .shared
            .command(self.slot, |s, now| s.notify_resource_updated(now, uri))?)
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
            .command(self.slot, |s, now| s.log(now, level, logger, &data))?)
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
            .request_raw(self.slot, None, method.into(), params, options)
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
        request_typed::<R>(&self.shared, self.slot, None, params, options).await
    }

    /// Ends the session: pending requests to the client complete with a close, running
    /// handlers are cancelled, queued answers are flushed, and the driver's future finishes.
    /// Idempotent.
    pub fn close(&self) {
        let now = self.shared.now();
        let mut state = self.shared.lock();
        match &mut state.conn {
            super::state::Conn::Stdio(conn) => conn.close(now),
            #[cfg(feature = "http")]
            super::state::Conn::Http(http) => {
                if let Some(key) = self.slot {
                    http.server.close_session(now, key);
                }
            }
        }
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
    pub(crate) cancel: StopReceiver,
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
        Ok(self.server.shared.command(self.server.slot, |s, now| {
            s.log_for(now, self.id, level, logger, &data)
        })?)
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
        self.server.shared.command(self.server.slot, |s, now| {
            s.notify_progress(now, self.id, progress, total, message)
        })?;
        Ok(true)
    }

    /// Sends progress for this request with `params`, another server's progress params as
    /// written ([`Progress::as_written`](crate::Progress::as_written)): only the token is
    /// replaced by this request's, the members keep their order and the numbers their
    /// spelling. Returns `false` (nothing sent) when the client asked for no progress.
    ///
    /// # Errors
    ///
    /// Those of [`progress`](Self::progress), and [`ServerError::Usage`] for params that are
    /// not progress params.
    pub fn progress_as_written(&self, params: &RawValue) -> Result<bool, ServerError> {
        if self.progress_token.is_none() {
            return Ok(false);
        }
        self.server.shared.command(self.server.slot, |s, now| {
            s.notify_progress_as_written(now, self.id, params)
        })?;
        Ok(true)
    }

    /// Closes the connection of this request's response stream without ending it (Streamable
    /// HTTP, 2025-11-25 sessions; SEP-1699 polling): the client reconnects with
    /// `Last-Event-ID` after the server's `retry` delay and gets what follows, the answer
    /// included. For long work that should not hold a connection open. Returns whether the
    /// connection was closed: `false` on stdio, before 2025-11-25, for a client that does not
    /// accept SSE, or once the request is answered.
    pub fn close_sse_stream(&self) -> bool {
        let server = &self.server;
        let mut state = server.shared.lock();
        let closed = match &mut state.conn {
            #[cfg(feature = "http")]
            super::state::Conn::Http(http) => server
                .slot
                .is_some_and(|key| http.server.close_request_stream(key, self.id)),
            _ => false,
        };
        if closed {
            state.wake_driver();
        }
        closed
    }

    /// Whether the client cancelled this request or disconnected.
    #[must_use]
    pub fn is_cancelled(&self) -> bool {
        // A dropped sender means the request is over: it was answered, cancelled or closed.
        self.cancel.is_stopped()
    }

    /// The reason the client gave when it cancelled this request
    /// (`notifications/cancelled`'s `reason`); `None` while it runs, when it gave none, or
    /// when the request ended otherwise (answered, or the client disconnected). Read it when
    /// [`is_cancelled`](Self::is_cancelled) turns true, e.g. to pass the cancellation on
    /// to work this request started elsewhere (a proxy's upstream call).
    #[must_use]
    pub fn cancel_reason(&self) -> Option<String> {
        self.cancel.reason().map(str::to_owned)
    }

    /// Completes when the client cancels this request or disconnects (at once if it did).
    ///
    /// Awaited in the handler's own future, what follows it runs up to the handler's next
    /// suspension point: the driver polls the handler once more after the cancellation
    /// became visible, then drops it. Work beside the handler (a task it spawned) can await
    /// this for as long as it needs.
    pub async fn cancelled(&self) {
        // The signal is read on every poll, not only when this future's wake-up arrived: a
        // stop is visible before it wakes the waiters one after the other, so the driver's
        // own stop waiter, when woken first, can have the task polled while this one's
        // wake-up is still on its way. Reading it there is what lets the driver's last poll
        // of the handler see the cancellation.
        self.cancel.stopped().await;
    }

    /// A typed request to the client on behalf of this request (over HTTP it goes on this
    /// request's own stream): see [`ServerHandle::request`].
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
        let server = &self.server;
        request_typed::<R>(&server.shared, server.slot, Some(self.id), params, options).await
    }

    /// A raw request to the client on behalf of this request (over HTTP it goes on this
    /// request's own stream): see [`ServerHandle::request_raw`].
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
        let params = params.map(RawParams::encode).transpose()?;
        let server = &self.server;
        server
            .shared
            .request_raw(server.slot, Some(self.id), method.into(), params, options)
            .await
    }
}

/// Sends a typed request and decodes its result (`params` that serialize to `null` are
/// sent as none).
async fn request_typed<R: mcp_proto::types::Request>(
    shared: &Arc<Shared>,
    slot: Slot,
    related: Option<ClientRequestId>,
    params: &R::Params,
    options: RequestOptions,
) -> Result<R::Result, ServerError>
where
    R::Result: DeserializeOwned,
{
    let params = RawParams::encode(params)?;
    let params = (params.get() != "null").then_some(params);
    let raw = shared
        .request_raw(slot, related, Cow::Borrowed(R::METHOD), params, options)
        .await?;
    Ok(raw.decode()?)
}
