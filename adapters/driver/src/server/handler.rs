//! What a server's host implements: [`ServerHandler`], called by the server driver for each
//! client request and notification.

use std::future::Future;

use mcp_proto::jsonrpc::ErrorObject;
use mcp_proto::server::Diagnostic;
use mcp_proto::session::CloseReason;
use mcp_proto::types::LoggingLevel;
use serde_json::value::RawValue;

use super::context::{RequestContext, ServerHandle};
use crate::handler::HandlerFuture;

/// What a handler answers a request with: the raw `result` object, or a JSON-RPC error.
pub type RequestOutcome = Result<Box<RawValue>, ErrorObject>;

/// The host's side of a server: answers the client's requests and hears its notifications.
///
/// The session itself answers `initialize`, `ping` and `logging/setLevel`, refuses requests
/// before `initialize` and methods of capabilities the server did not declare (`-32601`), so
/// `on_request` only sees the requests the host is meant to answer.
///
/// Each request runs on its own task: a slow one never blocks the others, answers may go out
/// in any order. When the client cancels the request (`notifications/cancelled`) or
/// disconnects, the request's future is dropped; [`RequestContext::cancelled`] lets work that
/// is not a future (a thread, a child process) notice too. A handler that panics is answered
/// with `-32603` (internal error), so the client never waits forever.
///
/// Any `Fn(String, Option<Box<RawValue>>, RequestContext) -> impl Future<Output = RequestOutcome>`
/// is a handler (requests only; notifications ignored).
pub trait ServerHandler: Send + Sync + 'static {
    /// Answers one client request (`method`, raw `params`). Return the raw result object
    /// (`mcp_proto::jsonrpc::to_raw(&typed_result)`) or the JSON-RPC error to send; an unknown
    /// method deserves [`ErrorObject::method_not_found`].
    fn on_request(
        &self,
        method: String,
        params: Option<Box<RawValue>>,
        context: RequestContext,
    ) -> HandlerFuture<'_, RequestOutcome>;

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

    /// The client set the log level (`logging/setLevel`, already answered by the session,
    /// which filters [`ServerHandle::log`] by it). Called on the driver's task. Default:
    /// nothing.
    fn on_log_level(&self, level: LoggingLevel, server: &ServerHandle) {
        let _ = (level, server);
    }

    /// The session ended (the client left or deleted it, it idled out, the server closed
    /// it): running requests are cancelled, and this handler gets nothing more. Called on the
    /// driver's task, once per session. Default: nothing.
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
