//! What a server's host implements: [`ServerHandler`], called by the server driver for each
//! client request and notification.

use std::future::Future;

use mcp_proto::jsonrpc::ErrorObject;
use mcp_proto::server::{ClientRequestId, Diagnostic, InitializeAnswer, ListenEnd};
use mcp_proto::session::CloseReason;
use mcp_proto::types::v2026::ListenFilter;
use mcp_proto::types::{InitializeParams, LoggingLevel};
use serde_json::value::RawValue;

use super::context::{RequestContext, ServerHandle};
use crate::handler::HandlerFuture;

/// What a handler answers a request with: the raw `result` object, or a JSON-RPC error.
pub type RequestOutcome = Result<Box<RawValue>, ErrorObject>;

/// What a handler answers a deferred `initialize` with: the server's identity, capabilities,
/// instructions (and optionally the version), or the JSON-RPC error to refuse it with.
pub type InitializeOutcome = Result<InitializeAnswer, ErrorObject>;

/// The host's side of a server: answers the client's requests and hears its notifications.
///
/// The session itself answers `initialize`, `ping` and `logging/setLevel`, refuses requests
/// before `initialize` and methods of capabilities the server did not declare (`-32601`), so
/// `on_request` only sees the requests the host is meant to answer.
///
/// Each request runs on its own task: a slow one never blocks the others, answers may go out
/// in any order. When the client cancels the request (`notifications/cancelled`) or
/// disconnects, the request's future is polled once more (a `cx.cancelled().await` in it
/// completes then, so what follows runs up to the next `.await`) and dropped;
/// [`RequestContext::cancelled`] lets work that is not that future (a task, a thread, a child
/// process) notice too. A handler that panics is answered
/// with `-32603` (internal error), so the client never waits forever.
///
/// Any `Fn(String, Option<Box<RawValue>>, RequestContext) -> impl Future<Output = RequestOutcome>`
/// is a handler (requests only; notifications ignored).
pub trait ServerHandler: Send + Sync + 'static {
    /// Answers one client request (`method`, raw `params`). Return the raw result object
    /// (`mcp_proto::jsonrpc::to_raw(&typed_result)`) or the JSON-RPC error to send; an unknown
    /// method deserves [`ErrorObject::method_not_found`].
    ///
    /// Default: every request is answered `-32601` "Method not found: METHOD"
    /// ([`ErrorObject::method_not_found`]), for a handler that only takes part in the
    /// session otherwise (a deferred `initialize`, listens, notifications).
    fn on_request(
        &self,
        method: String,
        params: Option<Box<RawValue>>,
        context: RequestContext,
    ) -> HandlerFuture<'_, RequestOutcome> {
        let _ = (params, context);
        Box::pin(std::future::ready(Err(ErrorObject::method_not_found(
            &method,
        ))))
    }

    /// Answers the client's `initialize` when the server's configuration defers it
    /// ([`ServerConfig::defer_initialize`](mcp_proto::server::ServerConfig::defer_initialize);
    /// otherwise never called): `params` holds the version the client asked for, its info and
    /// capabilities. Runs on its own task; the session answers the client with what it
    /// returns (the answered capabilities then gate the session as the configured ones do).
    /// A version the client cannot take, or a panic, answers the client `-32603`; an error
    /// (or those) ends the session once the client has it. The
    /// session's handshake deadline bounds it: past it the client is answered an error, the
    /// session closes and this future is dropped. Default: the configuration's own answer.
    fn on_initialize(
        &self,
        params: InitializeParams,
        server: ServerHandle,
    ) -> HandlerFuture<'_, InitializeOutcome> {
        let _ = params;
        let answer = server.configured_answer();
        Box::pin(async move {
            answer.ok_or_else(|| ErrorObject::new(ErrorObject::INTERNAL_ERROR, "the session ended"))
        })
    }

    /// A client notification the session does not handle itself
    /// (`notifications/roots/list_changed`, an unknown one). Called on the driver's task: keep
    /// it quick (spawn longer work). Default: ignored.
    fn on_notification(&self, method: &str, params: Option<&RawValue>, server: &ServerHandle) {
        let _ = (method, params, server);
    }

    /// The client sent `notifications/initialized`: requests to it may be sent from now on.
    /// Called on the driver's task. Default: nothing.
    fn on_initialized(&self, server: &ServerHandle) {
        let _ = server;
    }

    /// A 2026-07-28 client opened a `subscriptions/listen` on this session; the session
    /// acknowledged it with `honoured` (the part of `requested` the capabilities allow) and
    /// from now on delivers [`ServerHandle::notify_list_changed`] and
    /// [`ServerHandle::notify_resource_updated`] to it. A host that produces updates only
    /// while someone watches (a resource it polls, say) starts here; `id` ends it from the
    /// server's side ([`ServerHandle::close_listen`]). Over HTTP each listen is a session of
    /// its own: keep `server` to notify it. Called on the driver's task. Default: nothing.
    fn on_listen_opened(
        &self,
        id: ClientRequestId,
        requested: &ListenFilter,
        honoured: &ListenFilter,
        server: &ServerHandle,
    ) {
        let _ = (id, requested, honoured, server);
    }

    /// The listen `id` ended (the client cancelled it or closed its stream, the host closed
    /// it, the session ended): once per [`on_listen_opened`](Self::on_listen_opened), before
    /// [`on_closed`](Self::on_closed). Called on the driver's task. Default: nothing.
    fn on_listen_closed(&self, id: ClientRequestId, end: &ListenEnd, server: &ServerHandle) {
        let _ = (id, end, server);
    }

    /// The client set the log level (`logging/setLevel`, already answered by the session,
    /// which filters [`ServerHandle::log`] by it). Called on the driver's task. Default:
    /// nothing.
    fn on_log_level(&self, level: LoggingLevel, server: &ServerHandle) {
        let _ = (level, server);
    }

    /// The session ended (the client left or deleted it, it idled out, the server closed
    /// it): running requests are cancelled, and this handler gets nothing more. Called on the
    /// driver's task, once per session. An HTTP session is out of the server's table by then:
    /// `server`'s getters (client info, version) answer `None`, so keep what this needs from
    /// [`on_initialized`](Self::on_initialized). Default: nothing.
    fn on_closed(&self, reason: &CloseReason, server: &ServerHandle) {
        let _ = (reason, server);
    }

    /// Odd client input the session survived and answered itself (a line that is not JSON,
    /// a response to nothing, ...). Default: a `tracing` debug event.
    fn on_diagnostic(&self, diagnostic: &Diagnostic) {
        tracing::debug!(?diagnostic, "odd input from the client");
    }
}

impl<F, Fut> ServerHandler for F
where
    F: Fn(String, Option<Box<RawValue>>, RequestContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = RequestOutcome> + Send + 'static,
{
    fn on_request(
        &self,
        method: String,
        params: Option<Box<RawValue>>,
        context: RequestContext,
    ) -> HandlerFuture<'_, RequestOutcome> {
        Box::pin(self(method, params, context))
    }
}
