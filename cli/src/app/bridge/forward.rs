//! The bridge's forwarding: the host's requests, notifications and log level go upstream
//! ([`Forwarder`], the server driver's [`ServerHandler`]); the upstream server's
//! notifications and log messages come back to the host ([`to_host`]).
//!
//! What the server driver already guarantees is relied on, not repeated: a host request
//! cancelled (or the host leaving) drops its handler's future, which cancels the call
//! upstream (`notifications/cancelled` with the host's own reason, or "the host
//! disconnected"); progress is written before the answer queued after it.
//!
//! Upstream notifications and answers reach the host in the order the server sent them (a
//! log message written before a call's result comes before its answer): with a
//! [`HostPump`], each answer is released only after every notification received before it
//! has been handed to the host.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt as _;
use mcp_proto::jsonrpc::ErrorObject;
use mcp_proto::session::ServerNotification;
use mcp_proto::types::{LoggingLevel, LoggingMessageParams};
use mcp_tokio::mcp_driver::{CallOptions, CancelHandle, HandlerFuture};
use mcp_tokio::server::{RequestContext, RequestOutcome, ServerHandle, ServerHandler};
use mcp_tokio::{Client, Error, Notifications};
use serde_json::value::RawValue;
use tokio::sync::{mpsc, oneshot, watch};

use crate::app::connect::call_error;

/// Forwards each host request to the upstream client and its answer back.
pub struct Forwarder {
    client: Client,
    relay: Relay,
}

/// How a host request is forwarded to an upstream client: its deadline, its progress passed
/// back under the host's token, its cancellation with the host's reason, the count of calls
/// in flight (for [`CallsEnded`]) and, with a [`HostPump`], its answer released in order with
/// the notifications. Both bridges use it: the single one with its one client, the aggregate
/// one with the client of the server a request is routed to.
#[derive(Clone)]
pub struct Relay {
    timeout: Option<Duration>,
    in_flight: Arc<watch::Sender<usize>>,
    /// Where answers wait for the notifications before them ([`HostPump`]); `None`: answered
    /// at once (no host gets notifications: the stateless HTTP mode; or the notifications
    /// come from many servers: the aggregate bridge).
    ordered: Option<mpsc::UnboundedSender<Answer>>,
}

/// An upstream answer on its way to the host, released by the [`HostPump`].
struct Answer {
    outcome: RequestOutcome,
    to: oneshot::Sender<RequestOutcome>,
}

/// Hands the upstream server's notifications to the host and releases the answers of
/// forwarded calls in order with them. Run it ([`run`](Self::run)) for as long as the host
/// session lives.
pub struct HostPump {
    notifications: Notifications,
    // Unbounded, yet bounded by the host session's cap on open requests: one entry each.
    answers: mpsc::UnboundedReceiver<Answer>,
}

impl HostPump {
    /// Forwards until the forwarder is gone; after the upstream connection ended it only
    /// releases answers (each failed call's error).
    pub async fn run(mut self, host: &ServerHandle) {
        let mut upstream_open = true;
        loop {
            tokio::select! {
                // Notifications first: those already received go before an answer.
                biased;
                n = self.notifications.recv(), if upstream_open => match n {
                    Some(Ok(n)) => to_host(host, &n),
                    Some(Err(lagged)) => tracing::warn!("bridge: {lagged}"),
                    None => upstream_open = false,
                },
                answer = self.answers.recv() => {
                    let Some(answer) = answer else { return };
                    // Every notification the client received before this answer is queued
                    // in the stream already: hand those over first.
                    while upstream_open {
                        match self.notifications.recv().now_or_never() {
                            Some(Some(Ok(n))) => to_host(host, &n),
                            Some(Some(Err(lagged))) => tracing::warn!("bridge: {lagged}"),
                            Some(None) => upstream_open = false,
                            None => break,
                        }
                    }
                    // The host may have cancelled meanwhile: nobody waits then.
                    let _ = answer.to.send(answer.outcome);
                }
            }
        }
    }
}

/// Counts a forwarded call until its future is gone (answered, or dropped and so cancelled
/// upstream).
struct InFlight(Arc<watch::Sender<usize>>);

impl InFlight {
    fn new(count: &Arc<watch::Sender<usize>>) -> Self {
        count.send_modify(|n| *n += 1);
        InFlight(count.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n -= 1);
    }
}

/// Cancels a forwarded call upstream when the host's request ends without its answer (the
/// host cancelled it, or left), passing on the host's reason.
struct CancelUpstream {
    cancel: CancelHandle,
    context: RequestContext,
    /// Cleared once the answer was taken: nothing to cancel then.
    armed: bool,
}

impl Drop for CancelUpstream {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let reason = self.context.cancel_reason().unwrap_or_else(|| {
            if self.context.server().is_closed() {
                "the host disconnected".to_owned()
            } else {
                "the host cancelled the request".to_owned()
            }
        });
        self.cancel.cancel(reason);
    }
}

/// Waits until every forwarded call's future is gone: after the host left, each one dropped
/// has queued its `notifications/cancelled` upstream by then.
pub struct CallsEnded(watch::Receiver<usize>);

impl CallsEnded {
    /// Completes once no forwarded call is left.
    pub async fn wait(&mut self) {
        // An error means the forwarder is gone, and with it every call.
        let _ = self.0.wait_for(|n| *n == 0).await;
    }
}

impl Relay {
    /// `timeout` bounds each forwarded request (`None`: the host's own deadlines and
    /// cancellations decide); the [`CallsEnded`] waits for every request it forwards.
    /// Answers are released at once (no [`HostPump`]).
    pub fn new(timeout: Option<Duration>) -> (Self, CallsEnded) {
        let (tx, rx) = watch::channel(0);
        let relay = Relay {
            timeout,
            in_flight: Arc::new(tx),
            ordered: None,
        };
        (relay, CallsEnded(rx))
    }

    /// Sends `method` with `params` to `client` and gives its answer (or its error, as
    /// [`error_for_host`] words it). Dropping the future before the answer cancels the
    /// request upstream with the host's reason; the upstream server's progress reaches the
    /// host under the token of `context`.
    pub fn forward(
        &self,
        client: Client,
        method: String,
        params: Option<Box<RawValue>>,
        context: RequestContext,
    ) -> impl Future<Output = RequestOutcome> + Send + 'static {
        let mut options = match self.timeout {
            Some(t) => CallOptions::new().timeout(t),
            None => CallOptions::new().no_timeout(),
        };
        if context.progress_token().is_some() {
            // Upstream progress under the bridge's token, to the host under the host's.
            let cx = context.clone();
            options = options.on_progress(move |p| {
                if let Err(e) = cx.progress(p.progress, p.total, p.message.as_deref()) {
                    tracing::debug!("bridge: progress for {} not forwarded: {e}", cx.id());
                }
            });
        }
        let (options, cancel) = options.cancel_handle();
        let counted = InFlight::new(&self.in_flight);
        let ordered = self.ordered.clone();
        let (answer, answered) = oneshot::channel();
        // The upstream call runs in its own task: when the host cancels, the server driver
        // drops the handler's future at once, and the call is then cancelled through its
        // handle with the host's reason (dropping the call would send a reason of its own).
        tokio::spawn(async move {
            // Declared before the call, so dropped after it (its cancellation queued first).
            let _counted = counted;
            let outcome = client
                .request_raw(method, params, options)
                .await
                .map_err(error_for_host);
            match ordered {
                Some(pump) => {
                    // The pump is gone only with the host session: nobody waits then.
                    let _ = pump.send(Answer {
                        outcome,
                        to: answer,
                    });
                }
                // The host may have cancelled meanwhile: nobody waits then.
                None => drop(answer.send(outcome)),
            }
        });
        let upstream = CancelUpstream {
            cancel,
            context,
            armed: true,
        };
        async move {
            // Moved in whole (not only the field set below), so it lives as long as this future.
            let mut upstream = upstream;
            let outcome = answered.await.unwrap_or_else(|_| {
                Err(ErrorObject::new(
                    ErrorObject::INTERNAL_ERROR,
                    "mcp bridge: the upstream call ended without an answer",
                ))
            });
            upstream.armed = false;
            outcome
        }
    }
}

impl Forwarder {
    /// Forwards to `client`; `timeout` bounds each forwarded request (`None`: the host's own
    /// deadlines and cancellations decide).
    pub fn new(client: Client, timeout: Option<Duration>) -> (Self, CallsEnded) {
        let (relay, ended) = Relay::new(timeout);
        (Forwarder { client, relay }, ended)
    }

    /// Sends the upstream notifications to a host, in order with the answers: the returned
    /// pump must run while the host session lives.
    #[must_use]
    pub fn with_host_pump(mut self) -> (Self, HostPump) {
        let (tx, answers) = mpsc::unbounded_channel();
        self.relay.ordered = Some(tx);
        let pump = HostPump {
            notifications: self.client.notifications(),
            answers,
        };
        (self, pump)
    }
}

impl ServerHandler for Forwarder {
    fn on_request(
        &self,
        method: String,
        params: Option<Box<RawValue>>,
        context: RequestContext,
    ) -> HandlerFuture<'_, RequestOutcome> {
        Box::pin(
            self.relay
                .forward(self.client.clone(), method, params, context),
        )
    }

    fn on_notification(&self, method: &str, params: Option<&RawValue>, _server: &ServerHandle) {
        if let Err(e) = self.client.notify(method.to_owned(), params) {
            tracing::warn!("bridge: could not forward {method} upstream: {e}");
        }
    }

    fn on_log_level(&self, level: LoggingLevel, _server: &ServerHandle) {
        let client = self.client.clone();
        tokio::spawn(async move {
            if let Err(e) = client.set_log_level(level).await {
                tracing::warn!("bridge: logging/setLevel upstream failed: {e}");
            }
        });
    }

    fn on_diagnostic(&self, diagnostic: &mcp_tokio::server::Diagnostic) {
        tracing::info!("bridge: odd input from the host: {diagnostic:?}");
    }
}

/// Hands one upstream notification to the host: a log message through the session's log
/// (filtered by the level the host set), anything else as it came.
pub fn to_host(host: &ServerHandle, n: &ServerNotification) {
    let result = if n.method == "notifications/message" {
        match n
            .params
            .as_deref()
            .map(|p| serde_json::from_str::<LoggingMessageParams>(p.get()))
        {
            Some(Ok(m)) => host.log(m.level, m.logger.as_deref(), &m.data).map(drop),
            _ => {
                tracing::debug!("bridge: unreadable log message not forwarded");
                Ok(())
            }
        }
    } else {
        host.notify(n.method.clone(), n.params.as_deref())
    };
    if let Err(e) = result {
        tracing::debug!("bridge: {} not forwarded to the host: {e}", n.method);
    }
}

/// The JSON-RPC error the host gets for a failed upstream request: the server's own error
/// object when it answered one (code, message and data as they were), else an internal error
/// saying what went wrong on the way in the words `mcp` prints for it (the connection to the
/// URL was reset, the server's command was killed by SIGTERM), not the HTTP client's.
pub fn error_for_host(e: Error) -> ErrorObject {
    match e {
        Error::Remote {
            code,
            message,
            data,
            ..
        } => {
            let mut error = ErrorObject::new(code, message);
            error.data = data;
            error
        }
        other => ErrorObject::new(
            ErrorObject::INTERNAL_ERROR,
            format!("mcp bridge: {}", call_error(other)),
        ),
    }
}
