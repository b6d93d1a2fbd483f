//! The bridge's forwarding state: the host's open requests and what runs upstream for them,
//! the upstream server's requests waiting on the host, and the mapping of answers, progress,
//! cancellations and notifications between the two sessions.
//!
//! It does not read or write anything: the loop in [`super`] feeds it the host session's
//! events and the upstream's messages, and drains the host session afterwards.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_proto::jsonrpc::ErrorObject;
use mcp_proto::server::{ClientRequestId, Event, RequestHandle, ServerSession};
use mcp_proto::session::{RawParams, RequestError, RequestOptions, ServerNotification};
use mcp_proto::time::Instant;
use mcp_proto::types::LoggingMessageParams;
use mcp_tokio::mcp_driver::{CallOptions, CancelHandle, Progress};
use mcp_tokio::{Client, Error};
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::sync::{mpsc, oneshot};

use super::upstream::ToHost;

/// What a forwarded request's task reports back to the loop.
#[derive(Debug)]
pub enum Upstream {
    /// The upstream answer to the host's request `id`.
    Answer(ClientRequestId, Result<Box<RawValue>, ErrorObject>),
    /// Progress the upstream server reported on the host's request `id`.
    Progress(ClientRequestId, Progress),
}

/// Bounds the progress updates queued for the host; past it, updates are dropped (a later
/// one supersedes them), never the answers.
pub const PROGRESS_QUEUE: usize = 256;

/// The one queue of answers and progress from the upstream tasks to the loop: one queue, so
/// that a request's progress reaches the host before its answer (the order the server sent
/// them in). Answers are never dropped (one per open host request, which the host session
/// bounds); progress updates past [`PROGRESS_QUEUE`] queued are.
#[derive(Clone)]
pub struct UpstreamQueue {
    tx: mpsc::UnboundedSender<Upstream>,
    progress_queued: Arc<AtomicUsize>,
}

impl UpstreamQueue {
    /// A queue and the receiver the loop reads.
    pub fn new() -> (Self, UpstreamReceiver) {
        let (tx, rx) = mpsc::unbounded_channel();
        let progress_queued = Arc::new(AtomicUsize::new(0));
        let queue = UpstreamQueue {
            tx,
            progress_queued: progress_queued.clone(),
        };
        (
            queue,
            UpstreamReceiver {
                rx,
                progress_queued,
            },
        )
    }

    fn answer(&self, id: ClientRequestId, result: Result<Box<RawValue>, ErrorObject>) {
        // The loop is gone only after the host session closed: nobody to answer.
        let _ = self.tx.send(Upstream::Answer(id, result));
    }

    fn progress(&self, id: ClientRequestId, p: Progress) {
        // Full: the host is not reading; a later update supersedes this one.
        if self.progress_queued.fetch_add(1, Ordering::Relaxed) >= PROGRESS_QUEUE {
            self.progress_queued.fetch_sub(1, Ordering::Relaxed);
            return;
        }
        if self.tx.send(Upstream::Progress(id, p)).is_err() {
            self.progress_queued.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// The loop's end of an [`UpstreamQueue`].
pub struct UpstreamReceiver {
    rx: mpsc::UnboundedReceiver<Upstream>,
    progress_queued: Arc<AtomicUsize>,
}

impl UpstreamReceiver {
    /// The next answer or progress update, in the order they were queued.
    pub async fn recv(&mut self) -> Option<Upstream> {
        let message = self.rx.recv().await?;
        if matches!(message, Upstream::Progress(..)) {
            self.progress_queued.fetch_sub(1, Ordering::Relaxed);
        }
        Some(message)
    }
}

/// The forwarding state of one bridged session.
pub struct Forwarder {
    client: Client,
    /// Each forwarded request's cancel handle, by the host's request.
    open: HashMap<ClientRequestId, CancelHandle>,
    /// The upstream server's requests sent to the host: their key and where the answer goes.
    to_host: HashMap<RequestHandle, (u64, oneshot::Sender<Result<Value, ErrorObject>>)>,
    /// The host handle of each upstream request key (to withdraw it).
    keys: HashMap<u64, RequestHandle>,
    upstream: UpstreamQueue,
    timeout: Option<Duration>,
}

impl Forwarder {
    /// Forwards between a host session and `client`. Answers and progress come back on
    /// `upstream`. `timeout` bounds each forwarded request (`None`: the host's own deadlines
    /// and cancellations decide).
    pub fn new(client: Client, upstream: UpstreamQueue, timeout: Option<Duration>) -> Self {
        Forwarder {
            client,
            open: HashMap::new(),
            to_host: HashMap::new(),
            keys: HashMap::new(),
            upstream,
            timeout,
        }
    }

    /// The upstream client.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Acts on one event of the host session. Returns `false` once the session closed.
    pub fn on_host_event(
        &mut self,
        session: &mut ServerSession,
        now: Instant,
        event: Event,
    ) -> bool {
        match event {
            Event::Request {
                id,
                method,
                params,
                progress_token,
            } => self.forward_request(id, method, params, progress_token.is_some()),
            Event::RequestCancelled { id, reason } => {
                if let Some(cancel) = self.open.remove(&id) {
                    cancel.cancel(reason.unwrap_or_else(|| "cancelled by the host".into()));
                }
            }
            Event::Notification { method, params } => {
                if let Err(e) = self.client.notify(method.clone(), params) {
                    tracing::warn!("bridge: could not forward {method} upstream: {e}");
                }
            }
            Event::LogLevel { level } => {
                let client = self.client.clone();
                tokio::spawn(async move {
                    if let Err(e) = client.set_log_level(level).await {
                        tracing::warn!("bridge: logging/setLevel upstream failed: {e}");
                    }
                });
            }
            Event::Completed { handle, result } => {
                if let Some((key, reply)) = self.to_host.remove(&handle) {
                    self.keys.remove(&key);
                    let result = match result {
                        Ok(raw) => raw.decode::<Value>().map_err(|e| {
                            ErrorObject::new(ErrorObject::INTERNAL_ERROR, e.to_string())
                        }),
                        Err(RequestError::Remote(error)) => Err(error),
                        Err(other) => Err(ErrorObject::new(
                            ErrorObject::INTERNAL_ERROR,
                            format!("the host did not answer: {other}"),
                        )),
                    };
                    // The upstream server may have withdrawn it meanwhile: nobody to tell.
                    let _ = reply.send(result);
                }
            }
            Event::Diagnostic(d) => tracing::info!("bridge: odd input from the host: {d:?}"),
            Event::Closed { reason } => {
                tracing::info!("bridge: host session closed: {reason}");
                return false;
            }
            Event::InitializeAnswered { .. } | Event::Ready => {}
            other => tracing::debug!("bridge: host event not forwarded: {other:?}"),
        }
        let _ = (session, now);
        true
    }

    fn forward_request(
        &mut self,
        id: ClientRequestId,
        method: String,
        params: Option<Box<RawValue>>,
        wants_progress: bool,
    ) {
        let (mut options, cancel) = CallOptions::new().cancel_handle();
        options = match self.timeout {
            Some(t) => options.timeout(t),
            None => options.no_timeout(),
        };
        if wants_progress {
            let upstream = self.upstream.clone();
            options = options.on_progress(move |p| upstream.progress(id, p));
        }
        self.open.insert(id, cancel);
        let client = self.client.clone();
        let upstream = self.upstream.clone();
        tokio::spawn(async move {
            let result = client
                .request_raw(method, params, options)
                .await
                .map_err(error_for_host);
            upstream.answer(id, result);
        });
    }

    /// Hands an upstream answer or progress update to the host.
    pub fn on_upstream(&mut self, session: &mut ServerSession, now: Instant, message: Upstream) {
        match message {
            Upstream::Answer(id, result) => {
                // Not open any more: the host cancelled it, and the cancellation's answer is
                // dropped (the spec's rule), as is a late one.
                if self.open.remove(&id).is_some() {
                    let r = match result {
                        Ok(raw) => session.respond(now, id, raw),
                        Err(error) => session.respond_error(now, id, error),
                    };
                    if let Err(e) = r {
                        tracing::debug!("bridge: answer to {id} not sent: {e}");
                    }
                }
            }
            Upstream::Progress(id, p) => {
                if self.open.contains_key(&id)
                    && let Err(e) =
                        session.notify_progress(now, id, p.progress, p.total, p.message.as_deref())
                {
                    tracing::debug!("bridge: progress for {id} not forwarded: {e}");
                }
            }
        }
    }

    /// Sends an upstream server request to the host, or withdraws one.
    pub fn on_to_host(&mut self, session: &mut ServerSession, now: Instant, message: ToHost) {
        match message {
            ToHost::Request {
                key,
                method,
                params,
                reply,
            } => {
                let params = match &params {
                    Value::Null => None,
                    p => mcp_proto::jsonrpc::to_raw(p).ok().map(RawParams::from),
                };
                // The upstream server has its own deadline and cancels when it passes; a
                // person answering an elicitation must not be cut short here.
                let options = RequestOptions::new().no_timeout();
                match session.send_request(now, method, params, options) {
                    Ok(handle) => {
                        self.keys.insert(key, handle);
                        self.to_host.insert(handle, (key, reply));
                    }
                    Err(e) => {
                        let _ = reply.send(Err(ErrorObject::new(
                            ErrorObject::INTERNAL_ERROR,
                            format!("cannot ask the host: {e}"),
                        )));
                    }
                }
            }
            ToHost::Withdrawn { key } => {
                if let Some(handle) = self.keys.remove(&key) {
                    self.to_host.remove(&handle);
                    let _ = session.cancel(now, handle, Some("cancelled by the server".into()));
                }
            }
        }
    }

    /// Hands an upstream notification to the host.
    pub fn on_notification(
        &mut self,
        session: &mut ServerSession,
        now: Instant,
        n: ServerNotification,
    ) {
        let result = if n.method == "notifications/message" {
            match n
                .params
                .as_deref()
                .map(|p| serde_json::from_str::<LoggingMessageParams>(p.get()))
            {
                Some(Ok(m)) => {
                    let data = mcp_proto::jsonrpc::to_raw(&m.data);
                    match data {
                        Ok(data) => session
                            .log(now, m.level, m.logger.as_deref(), &data)
                            .map(drop),
                        Err(e) => {
                            tracing::debug!("bridge: log message not forwarded: {e}");
                            Ok(())
                        }
                    }
                }
                _ => {
                    tracing::debug!("bridge: unreadable log message not forwarded");
                    Ok(())
                }
            }
        } else {
            session.notify(now, n.method.clone(), n.params)
        };
        if let Err(e) = result {
            tracing::debug!("bridge: {} not forwarded to the host: {e}", n.method);
        }
    }

    /// The host is gone: cancels every request still running upstream (each sends
    /// `notifications/cancelled`) and withdraws the upstream's requests to the host. Returns
    /// how many were cancelled: each one's task still reports its (cancelled) answer on the
    /// queue once the cancellation went out, which the loop waits for before closing.
    pub fn cancel_all(&mut self) -> usize {
        let cancelled = self.open.len();
        for (_, cancel) in self.open.drain() {
            cancel.cancel("the host disconnected");
        }
        for (_, (_, reply)) in self.to_host.drain() {
            let _ = reply.send(Err(ErrorObject::new(
                ErrorObject::INTERNAL_ERROR,
                "the bridge's host disconnected",
            )));
        }
        self.keys.clear();
        cancelled
    }
}

/// The JSON-RPC error the host gets for a failed upstream request: the server's own error
/// object when it answered one (code, message and data as they were), else an internal error
/// saying what went wrong on the way.
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
        other => ErrorObject::new(ErrorObject::INTERNAL_ERROR, format!("mcp bridge: {other}")),
    }
}
