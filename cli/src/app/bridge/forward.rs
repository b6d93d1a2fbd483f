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
//! [`HostPump`], each answer hands the host every notification received before it on its
//! way out, and the pump hands over the ones that come while no answer does.
//!
//! A forwarded call is polled on its host request's own task (no task of its own): the
//! fewer tasks an answer crosses, the less a bridge adds to each call.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use futures_util::StreamExt as _;
use mcp_proto::jsonrpc::ErrorObject;
use mcp_proto::session::{ServerNotification, UsageError};
use mcp_proto::types::{LoggingLevel, LoggingMessageParams};
use mcp_tokio::mcp_driver::{CallOptions, CancelHandle, HandlerFuture};
use mcp_tokio::server::{RequestContext, RequestOutcome, ServerHandle, ServerHandler};
use mcp_tokio::{Client, Error, Notifications};
use serde_json::value::RawValue;

use super::upstream_failure;
use super::upstream_health::UpstreamHealth;
use crate::app::connect::call_error;

/// How long each forwarded request may take: `--timeout` (none: the host's own deadlines and
/// cancellations decide), restarted by every progress update the upstream sends for it (as
/// for `mcp call`), but never longer than `--max-time` in all.
#[derive(Clone, Copy, Debug)]
pub struct RequestBound {
    timeout: Option<Duration>,
    max_total: Duration,
}

impl RequestBound {
    /// The bound the command line asks for (`--timeout`, `--max-time`).
    pub fn of(connection: &crate::args::ConnectionArgs) -> Self {
        RequestBound {
            timeout: connection.timeout,
            max_total: connection.max_time(),
        }
    }

    /// The options of one forwarded request; `progress`: whether the host asked for progress
    /// (only then does the upstream send any, so only then can it restart the timeout).
    fn options(self, progress: bool) -> CallOptions {
        match self.timeout {
            Some(t) if progress => CallOptions::new()
                .timeout(t)
                .reset_timeout_on_progress(self.max_total),
            Some(t) => CallOptions::new().timeout(t),
            None => CallOptions::new().no_timeout(),
        }
    }
}

/// Forwards each host request to the upstream client and its answer back.
pub struct Forwarder {
    client: Client,
    relay: Relay,
    /// For an HTTP upstream: where the outcome of each request goes, under the upstream's
    /// name ([`Forwarder::with_health`]).
    health: Option<(Arc<UpstreamHealth>, String)>,
    /// Set while the upstream refuses the host's notifications (it reads too slowly): said
    /// once on stderr when it starts and once when it ends, not once per notification.
    refusing: Arc<AtomicBool>,
}

/// How a host request is forwarded to an upstream client: its deadline, its progress passed
/// back under the host's token, its cancellation with the host's reason, the count of calls
/// in flight (for [`CallsEnded`]) and, with a [`HostPump`], the upstream notifications
/// received before its answer handed to the host first. Both bridges use it: the single one
/// with its one client, the aggregate one with the client of the server a request is routed
/// to.
#[derive(Clone)]
pub struct Relay {
    bound: RequestBound,
    in_flight: Arc<Running>,
    /// The upstream notifications, shared with the [`HostPump`]; `None`: answered at once (no
    /// host gets notifications: the stateless HTTP mode; or the notifications come from many
    /// servers: the aggregate bridge, which keeps them in order its own way).
    ordered: Option<Arc<Mutex<Feed>>>,
}

/// The upstream notification stream, read by the [`HostPump`] while the host waits for
/// nothing, and drained by each answer on its way out (so a notification received before an
/// answer is handed to the host before it, without a trip through another task).
struct Feed {
    notifications: Notifications,
    /// The pump's waker: whoever polls the stream polls it with this one, so the stream
    /// always wakes the pump when a notification comes.
    pump: Option<Waker>,
    /// `false` once the stream ended (the upstream connection is gone).
    open: bool,
}

impl Feed {
    /// Hands every notification already received to `host`, polling with the pump's waker.
    /// Ready once the stream has ended.
    fn drain(&mut self, host: &ServerHandle, waker: &Waker) -> Poll<()> {
        if !self.open {
            return Poll::Ready(());
        }
        let mut cx = Context::from_waker(waker);
        loop {
            match self.notifications.poll_next_unpin(&mut cx) {
                Poll::Ready(Some(Ok(n))) => to_host(host, &n),
                Poll::Ready(Some(Err(lagged))) => tracing::warn!("bridge: {lagged}"),
                Poll::Ready(None) => {
                    self.open = false;
                    return Poll::Ready(());
                }
                Poll::Pending => return Poll::Pending,
            }
        }
    }

    /// Before an answer goes out: every notification received so far goes first.
    fn drain_before_answer(&mut self, host: &ServerHandle) {
        // Before the pump's first poll there is no waker yet: that poll registers its own.
        let waker = self.pump.clone().unwrap_or_else(|| Waker::noop().clone());
        let _ = self.drain(host, &waker);
    }
}

/// Hands the upstream server's notifications to the host while no answer is on its way (an
/// answer hands over those before it itself). Run it ([`run`](Self::run)) for as long as the
/// host session lives.
pub struct HostPump {
    feed: Arc<Mutex<Feed>>,
}

impl HostPump {
    /// Forwards until the upstream connection ends.
    pub async fn run(self, host: &ServerHandle) {
        std::future::poll_fn(|cx| {
            let mut feed = lock(&self.feed);
            if !feed.pump.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                feed.pump = Some(cx.waker().clone());
            }
            feed.drain(host, cx.waker())
        })
        .await;
    }
}

/// The feed's lock: a panic while holding it (a notification that panicked on its way to
/// the host) leaves nothing half-done that later readers could trip on.
fn lock(feed: &Mutex<Feed>) -> std::sync::MutexGuard<'_, Feed> {
    feed.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Counts a forwarded call until its future is gone (answered, or dropped and so cancelled
/// upstream).
struct InFlight(Arc<Running>);

/// How many calls (or other pieces of work) run, and the wake-up of whoever waits for none.
///
/// An atomic count rather than a `watch` channel: every forwarded call counts itself in and
/// out, and a `watch` send wakes its eight internal notifiers each time, a few percent of a
/// bridge's instructions per call; here only the count's fall to zero touches the
/// [`Notify`](tokio::sync::Notify).
#[derive(Default)]
struct Running {
    count: AtomicUsize,
    none: tokio::sync::Notify,
}

impl InFlight {
    fn new(running: &Arc<Running>) -> Self {
        running.count.fetch_add(1, Ordering::SeqCst);
        InFlight(running.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if self.0.count.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.none.notify_waiters();
        }
    }
}

/// One forwarded request, polled on the host request's own task. Dropped before its answer
/// (the host cancelled it, or left), it cancels the call upstream with the host's reason.
struct Forwarded<F> {
    // Fields drop in this order: the reason is set on the call's cancel handle before the
    // call's future is dropped, which cancels it upstream with that reason.
    cancel: CancelUpstream,
    call: Pin<Box<F>>,
    ordered: Option<Arc<Mutex<Feed>>>,
    _counted: InFlight,
}

/// Sets the host's reason on a forwarded call's cancel handle when the host's request ends
/// without its answer.
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
        // A stop signal names itself: the host did not ask for this.
        let stopped = super::stop::reason().map(str::to_owned);
        let reason = stopped
            .or_else(|| self.context.cancel_reason())
            .unwrap_or_else(|| {
                if self.context.server().is_closed() {
                    "the host disconnected".to_owned()
                } else {
                    "the host cancelled the request".to_owned()
                }
            });
        self.cancel.cancel(reason);
    }
}

impl<F: Future<Output = Result<Box<RawValue>, Error>>> Future for Forwarded<F> {
    type Output = RequestOutcome;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<RequestOutcome> {
        // Every field is `Unpin` (the call is boxed).
        let this = self.get_mut();
        let outcome = std::task::ready!(this.call.as_mut().poll(cx)).map_err(error_for_host);
        this.cancel.armed = false;
        if let Some(feed) = &this.ordered {
            lock(feed).drain_before_answer(this.cancel.context.server());
        }
        Poll::Ready(outcome)
    }
}

/// Waits until every forwarded call's future is gone: after the host left, each one dropped
/// has queued its `notifications/cancelled` upstream by then.
pub struct CallsEnded(Arc<Running>);

impl CallsEnded {
    /// Completes once no forwarded call is left.
    pub async fn wait(&mut self) {
        loop {
            // Registered before the count is read: a fall to zero after the read wakes it.
            let none = self.0.none.notified();
            let mut none = std::pin::pin!(none);
            none.as_mut().enable();
            if self.0.count.load(Ordering::SeqCst) == 0 {
                return;
            }
            none.await;
        }
    }
}

impl Relay {
    /// `bound` bounds each forwarded request; the [`CallsEnded`] waits for every request it
    /// forwards. Answers are released at once (no [`HostPump`]).
    pub fn new(bound: RequestBound) -> (Self, CallsEnded) {
        let running = Arc::new(Running::default());
        let relay = Relay {
            bound,
            in_flight: running.clone(),
            ordered: None,
        };
        (relay, CallsEnded(running))
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
        let mut options = self.bound.options(context.progress_token().is_some());
        if context.progress_token().is_some() {
            // Upstream progress under the bridge's token, to the host under the host's.
            let cx = context.clone();
            options = options.on_progress(move |p| {
                // As the server wrote it (members in order, `1` not `1.0`), the token the host's.
                let sent = match p.as_written() {
                    Some(params) => cx.progress_as_written(params),
                    None => cx.progress(p.progress, p.total, p.message.as_deref()),
                };
                if let Err(e) = sent {
                    tracing::debug!("bridge: progress for {} not forwarded: {e}", cx.id());
                }
            });
        }
        let (options, cancel) = options.cancel_handle();
        Forwarded {
            cancel: CancelUpstream {
                cancel,
                context,
                armed: true,
            },
            call: Box::pin(async move { client.request_raw(method, params, options).await }),
            ordered: self.ordered.clone(),
            _counted: InFlight::new(&self.in_flight),
        }
    }
}

/// Counts running work other than forwarded calls (the upstream task of each `--listen`
/// session), so that a stopping bridge can wait for all of it ([`CallsEnded`]).
#[derive(Clone)]
pub struct WorkCount(Arc<Running>);

/// One piece of work counted in a [`WorkCount`] until dropped.
pub struct Counted {
    _in_flight: InFlight,
}

impl WorkCount {
    /// A count of none, and what waits until it is none again.
    pub fn new() -> (Self, CallsEnded) {
        let running = Arc::new(Running::default());
        (WorkCount(running.clone()), CallsEnded(running))
    }

    /// Counts one piece of work until the returned guard is dropped.
    pub fn count(&self) -> Counted {
        Counted {
            _in_flight: InFlight::new(&self.0),
        }
    }
}

impl Forwarder {
    /// Forwards to `client`; `bound` bounds each forwarded request.
    pub fn new(client: Client, bound: RequestBound) -> (Self, CallsEnded) {
        let (relay, ended) = Relay::new(bound);
        let forwarder = Forwarder {
            client,
            relay,
            health: None,
            refusing: Arc::new(AtomicBool::new(false)),
        };
        (forwarder, ended)
    }

    /// Reports each request's outcome to `health` under the name `upstream` (an HTTP
    /// upstream: stderr says when it was lost and when it is back).
    #[must_use]
    pub fn with_health(mut self, health: Arc<UpstreamHealth>, upstream: String) -> Self {
        self.health = Some((health, upstream));
        self
    }

    /// Sends the upstream notifications to a host, in order with the answers: the returned
    /// pump must run while the host session lives.
    #[must_use]
    pub fn with_host_pump(mut self) -> (Self, HostPump) {
        let feed = Arc::new(Mutex::new(Feed {
            notifications: self.client.notifications(),
            pump: None,
            open: true,
        }));
        self.relay.ordered = Some(feed.clone());
        (self, HostPump { feed })
    }
}

impl ServerHandler for Forwarder {
    fn on_request(
        &self,
        method: String,
        params: Option<Box<RawValue>>,
        context: RequestContext,
    ) -> HandlerFuture<'_, RequestOutcome> {
        // A stop answers the host before its stream closes (and cancels the call upstream).
        let forwarded = super::stop::or_stopping(self.relay.forward(
            self.client.clone(),
            method,
            params,
            context,
        ));
        let Some((health, upstream)) = &self.health else {
            return Box::pin(forwarded);
        };
        Box::pin(async move {
            let outcome = forwarded.await;
            health.saw(upstream, &outcome);
            outcome
        })
    }

    fn on_notification(&self, method: &str, params: Option<&RawValue>, _server: &ServerHandle) {
        match self.client.notify(method.to_owned(), params) {
            Ok(()) => {
                if self.refusing.swap(false, Ordering::Relaxed) {
                    tracing::warn!("bridge: the host's notifications are forwarded upstream again");
                }
            }
            Err(e) if !reads_too_slowly(&e) => {
                tracing::warn!("bridge: could not forward {method} upstream: {e}");
            }
            Err(e) if !self.refusing.swap(true, Ordering::Relaxed) => tracing::warn!(
                "bridge: could not forward {method} upstream: {e} (the host's notifications are \
                 dropped until the server catches up)"
            ),
            Err(e) => tracing::debug!("bridge: could not forward {method} upstream: {e}"),
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

/// Whether `e` is a notification refused because the server does not read as fast as the
/// host notifies (the rest of the run is dropped quietly, the run said once).
pub fn reads_too_slowly(e: &Error) -> bool {
    matches!(
        e,
        Error::Usage {
            source: UsageError::OutboundFull { .. },
            ..
        }
    )
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
/// URL was reset, the server's command was killed by SIGTERM), not the HTTP client's; when
/// the connection to the upstream failed, with the upstream named in its data
/// ([`upstream_failure::for_host`]).
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
        other => {
            let upstream = other.server().to_owned();
            let error = call_error(other);
            if upstream_failure::is_told_as_upstream(&error) {
                // The upstream (its connection, or its HTTP answer) is what failed: said so in
                // the data too.
                upstream_failure::for_host(&upstream, &error, false)
            } else {
                ErrorObject::new(ErrorObject::INTERNAL_ERROR, format!("mcp bridge: {error}"))
            }
        }
    }
}
