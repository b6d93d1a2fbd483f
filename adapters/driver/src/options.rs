//! Per-call options: timeout, progress and an explicit cancel handle.

use std::fmt;
use std::sync::{Arc, OnceLock};
use std::task::Poll;
use std::time::Duration;

use mcp_proto::session::RequestOptions;
use serde_json::value::RawValue;
use tokio::sync::{Notify, watch};

/// One `notifications/progress` update for a call.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Progress {
    /// The progress so far (increases; may be fractional).
    pub progress: f64,
    /// The total, when the server knows it.
    pub total: Option<f64>,
    /// A human-readable message, if any.
    pub message: Option<String>,
    /// The notification's params as the server wrote them, when kept.
    written: Option<Written>,
}

impl Progress {
    /// An update of `progress` out of `total`, with `message`.
    #[must_use]
    pub fn new(progress: f64, total: Option<f64>, message: Option<String>) -> Self {
        Progress {
            progress,
            total,
            message,
            written: None,
        }
    }

    /// The same update with the notification's params as the server wrote them.
    pub(crate) fn with_written(mut self, params: Option<Box<RawValue>>) -> Self {
        self.written = params.map(|p| Written(Arc::from(p)));
        self
    }

    /// The notification's params as the server wrote them (its members in their order, its
    /// numbers as spelled: `1` stays `1`, where [`progress`](Self::progress) is an `f64`),
    /// for passing the progress on unchanged (a bridge does, with
    /// `RequestContext::progress_as_written`). `None` for an update not read off the wire.
    #[must_use]
    pub fn as_written(&self) -> Option<&RawValue> {
        self.written.as_ref().map(|w| &*w.0)
    }
}

/// Params as written; equal when their text is.
#[derive(Debug, Clone)]
struct Written(Arc<RawValue>);

impl PartialEq for Written {
    fn eq(&self, other: &Self) -> bool {
        self.0.get() == other.0.get()
    }
}

/// Which way bytes crossed the transport, for [`ClientBuilder::on_wire`](crate::ClientBuilder::on_wire).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum WireDirection {
    /// Written to the server: exactly one whole framed message per call.
    Sent,
    /// Read from the server: the bytes as they arrived (over stdio a chunk may hold part of
    /// a line or several lines).
    Received,
}

/// A wire tap: called on the driver task, so it must be quick and never block.
pub(crate) type WireTap = Arc<dyn Fn(WireDirection, &[u8]) + Send + Sync>;

/// One step of one HTTP exchange, for [`ClientBuilder::on_http_trace`](crate::ClientBuilder::on_http_trace):
/// what the transport sent and received, exchange by exchange, before anything is decoded.
///
/// Every exchange is reported as one `Request`, then either a `Response` followed by its
/// `Body` chunks (in order) and an `End`, or a `Failed`, or an `Aborted` at any point after
/// the request (the connection closed the stream: a finished SSE answer, a redirect, the
/// end of the connection). Exchanges run concurrently, so steps of different exchanges
/// interleave; `exchange` tells them apart.
///
/// Header values, URLs and bodies are exactly what goes over the wire: they may carry
/// credentials (`Authorization`, an API key in the query). Mask them before printing.
#[cfg(feature = "http")]
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum HttpTrace<'a> {
    /// A request, as handed to the runtime's HTTP client.
    Request {
        /// The exchange (unique within the connection).
        exchange: u64,
        /// `GET`, `POST` or `DELETE`.
        method: &'a str,
        /// The target.
        url: &'a url::Url,
        /// Every header sent.
        headers: &'a mcp_proto::http::headers::HeaderList,
        /// The body (empty for GET and DELETE).
        body: &'a [u8],
    },
    /// The response head.
    Response {
        /// The exchange.
        exchange: u64,
        /// The status code.
        status: u16,
        /// The response headers.
        headers: &'a mcp_proto::http::headers::HeaderList,
    },
    /// A chunk of the response body, as it arrived (an SSE chunk may hold part of an event
    /// or several).
    Body {
        /// The exchange.
        exchange: u64,
        /// The bytes.
        chunk: &'a [u8],
    },
    /// The response body ended.
    End {
        /// The exchange.
        exchange: u64,
    },
    /// The exchange failed below HTTP (no response, or a body broken off).
    Failed {
        /// The exchange.
        exchange: u64,
        /// What failed.
        failure: &'a mcp_proto::http::ExchangeFailure,
    },
    /// The connection dropped the exchange before its end.
    Aborted {
        /// The exchange.
        exchange: u64,
    },
}

/// An HTTP trace tap: called on the driver task, so it must be quick and never block.
#[cfg(feature = "http")]
pub(crate) type HttpTraceTap = Arc<dyn Fn(HttpTrace<'_>) + Send + Sync>;

/// Where a call's progress goes.
#[derive(Clone)]
pub(crate) enum ProgressSink {
    Callback(Arc<dyn Fn(Progress) + Send + Sync>),
    Latest(Arc<watch::Sender<Option<Progress>>>),
}

impl ProgressSink {
    pub(crate) fn deliver(&self, p: Progress) {
        match self {
            ProgressSink::Callback(f) => f(p),
            ProgressSink::Latest(tx) => {
                tx.send_replace(Some(p));
            }
        }
    }
}

/// The latest progress of a call, from [`CallOptions::progress_watch`].
///
/// Holds only the newest update (progress is a level, not a log), so a slow reader never
/// makes anything queue up. Ends (`changed` returns `None`) when the call finishes.
#[derive(Debug)]
pub struct ProgressWatch {
    rx: watch::Receiver<Option<Progress>>,
}

impl ProgressWatch {
    /// Waits for the next update and returns it; `None` once the call has finished.
    pub async fn changed(&mut self) -> Option<Progress> {
        self.rx.changed().await.ok()?;
        self.rx.borrow_and_update().clone()
    }

    /// The newest update seen so far, without waiting.
    #[must_use]
    pub fn latest(&self) -> Option<Progress> {
        self.rx.borrow().clone()
    }
}

/// How long one call may take, and where its progress goes.
///
/// ```
/// use std::time::Duration;
/// use mcp_tokio::CallOptions;
///
/// let opts = CallOptions::new()
///     .timeout(Duration::from_secs(10))
///     .on_progress(|p| println!("{}/{:?}", p.progress, p.total))
///     .reset_timeout_on_progress(Duration::from_secs(600));
/// ```
#[derive(Clone, Default)]
pub struct CallOptions {
    pub(crate) request: RequestOptions,
    pub(crate) progress: Option<ProgressSink>,
    pub(crate) cancel: Option<CancelHandle>,
    /// Set by [`skip_output_check`](Self::skip_output_check).
    pub(crate) skip_output_check: bool,
    /// Told every status a task made of the call goes through.
    pub(crate) task_status: Option<TaskStatusSink>,
    /// Told the id of the task the server made of the call, once.
    pub(crate) task_created: Option<TaskCreatedSink>,
    /// The `ttl` asked for a task made of the call (2025-11-25).
    pub(crate) task_ttl: Option<Duration>,
}

/// Where the id of a task made of a call goes ([`CallOptions::on_task_created`]).
pub(crate) type TaskCreatedSink = Arc<dyn Fn(&str) + Send + Sync>;

/// Where a task's status changes go: the status and the server's message, if any.
pub(crate) type TaskStatusSink =
    Arc<dyn Fn(&mcp_proto::types::TaskStatus, Option<&str>) + Send + Sync>;

impl fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallOptions")
            .field("request", &self.request)
            .field("progress", &self.progress.is_some())
            .field("cancel", &self.cancel)
            .field("skip_output_check", &self.skip_output_check)
            .field("task_status", &self.task_status.is_some())
            .field("task_created", &self.task_created.is_some())
            .field("task_ttl", &self.task_ttl)
            .finish()
    }
}

impl CallOptions {
    /// The client's default timeout, no progress.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Times out this long after the request is sent (zero is refused as a usage error).
    #[must_use]
    pub fn timeout(mut self, after: Duration) -> Self {
        self.request = self.request.timeout(after);
        self
    }

    /// No deadline at all: the call waits until answered, cancelled (drop its future) or the
    /// connection closes.
    #[must_use]
    pub fn no_timeout(mut self) -> Self {
        self.request = self.request.no_timeout();
        self
    }

    /// Asks the server for progress and calls `f` with every update, on the driver task: keep
    /// it short and never block in it.
    #[must_use]
    pub fn on_progress(mut self, f: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        self.request = self.request.progress();
        self.progress = Some(ProgressSink::Callback(Arc::new(f)));
        self
    }

    /// Asks the server for progress and returns a [`ProgressWatch`] that sees the latest
    /// update.
    #[must_use]
    pub fn progress_watch(mut self) -> (Self, ProgressWatch) {
        let (tx, rx) = watch::channel(None);
        self.request = self.request.progress();
        self.progress = Some(ProgressSink::Latest(Arc::new(tx)));
        (self, ProgressWatch { rx })
    }

    /// Calls `f` with each status a task made of the call goes through (`working`,
    /// `input_required`, ..., with the server's status message), as the client learns it
    /// from `tasks/get` or `notifications/tasks/status`. Called on the caller's task between
    /// polls: keep it short.
    #[must_use]
    pub fn on_task_status(
        mut self,
        f: impl Fn(&mcp_proto::types::TaskStatus, Option<&str>) + Send + Sync + 'static,
    ) -> Self {
        self.task_status = Some(Arc::new(f));
        self
    }

    /// Calls `f` once with the id of the task the server made of the call, as soon as the
    /// client knows it (before the first poll): the id `tasks/get`, `tasks/result` and
    /// `tasks/cancel` take, and that `list_tasks` shows. Not called for a call answered at once.
    #[must_use]
    pub fn on_task_created(mut self, f: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.task_created = Some(Arc::new(f));
        self
    }

    /// The lifetime to ask for when the call becomes a task (protocol 2025-11-25: the
    /// `ttl` of `params.task`; the server may shorten it). Default:
    /// [`DEFAULT_TASK_TTL`](mcp_proto::task::augment::DEFAULT_TASK_TTL).
    #[must_use]
    pub fn task_ttl(mut self, ttl: Duration) -> Self {
        self.task_ttl = Some(ttl);
        self
    }

    /// Makes the call cancellable through the returned [`CancelHandle`], besides dropping its
    /// future: see [`CancelHandle`].
    #[must_use]
    pub fn cancel_handle(self) -> (Self, CancelHandle) {
        let handle = CancelHandle::new();
        (self.cancel_on(&handle), handle)
    }

    /// Makes the call cancellable through `handle` (one handle may cancel many calls: every
    /// call given it).
    #[must_use]
    pub fn cancel_on(mut self, handle: &CancelHandle) -> Self {
        self.cancel = Some(handle.clone());
        self
    }

    /// Takes this tool call's result as it comes, without checking its `structuredContent`
    /// against the tool's `outputSchema` (see
    /// [`ClientBuilder::validate_output`](crate::ClientBuilder::validate_output), which turns
    /// the check off for every call). Other requests are never checked.
    #[must_use]
    pub fn skip_output_check(mut self) -> Self {
        self.skip_output_check = true;
        self
    }

    /// Restarts the timeout on every progress update, but never lets the call run longer
    /// than `max_total` after it was sent (implies asking for progress).
    #[must_use]
    pub fn reset_timeout_on_progress(mut self, max_total: Duration) -> Self {
        self.request = self.request.reset_timeout_on_progress(max_total);
        self
    }
}

/// Cancels calls explicitly, with a reason the server receives.
///
/// Get one with [`CallOptions::cancel_handle`] (or make one with [`CancelHandle::new`] and
/// give it to many calls with [`CallOptions::cancel_on`]), pass the options to any call that
/// takes them ([`Client::call_tool_with`](crate::Client::call_tool_with),
/// [`Client::request_with`](crate::Client::request_with),
/// [`Client::request_raw`](crate::Client::request_raw)), and keep the handle: it is cheap to
/// clone and can be moved to another task, a UI callback or a signal handler.
///
/// [`cancel`](Self::cancel) ends every call given this handle that is still waiting: the
/// server gets `notifications/cancelled` with the reason, and the call's future resolves with
/// [`Error::Cancelled`](crate::Error::Cancelled) (or with its result, if the answer had
/// already arrived). A call started after `cancel` fails at once, without sending anything.
/// Dropping a call's future still cancels it too, with the handle's reason when it was
/// cancelled before the drop, else "the client dropped the request".
///
/// ```no_run
/// # async fn f(client: mcp_tokio::Client) -> Result<(), mcp_tokio::Error> {
/// use mcp_tokio::{CallOptions, Error};
///
/// let (options, cancel) = CallOptions::new().cancel_handle();
/// let call = client.call_tool_with("slow", serde_json::json!({"steps": 100}), options);
/// // Elsewhere: a Stop button, a Ctrl-C handler, a deadline of the caller's own.
/// cancel.cancel("the user pressed Stop");
/// match call.await {
///     Err(Error::Cancelled { .. }) => println!("cancelled"),
///     other => println!("finished first: {other:?}"),
/// }
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct CancelHandle {
    inner: Arc<Cancel>,
}

/// What the clones of a [`CancelHandle`] share. Its drop wakes nobody: no call can be waiting
/// on a handle nobody holds.
#[derive(Default)]
struct Cancel {
    /// The reason, once cancelled; the first reason stays.
    reason: OnceLock<Arc<str>>,
    /// Wakes the calls waiting on the handle, once, after the reason is set.
    notify: Notify,
}

impl Default for CancelHandle {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for CancelHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CancelHandle")
            .field("reason", &self.reason())
            .finish()
    }
}

impl CancelHandle {
    /// A handle not cancelled yet, for [`CallOptions::cancel_on`].
    #[must_use]
    pub fn new() -> Self {
        Self {
            inner: Arc::default(),
        }
    }

    /// Cancels every waiting call given this handle, sending `reason` to the server, and every
    /// call given it later. Idempotent: the first reason is the one sent.
    pub fn cancel(&self, reason: impl Into<String>) {
        let reason: Arc<str> = reason.into().into();
        if self.inner.reason.set(reason).is_ok() {
            self.inner.notify.notify_waiters();
        }
    }

    /// Whether [`cancel`](Self::cancel) was called.
    #[must_use]
    pub fn is_cancelled(&self) -> bool {
        self.inner.reason.get().is_some()
    }

    /// The reason given to [`cancel`](Self::cancel), once called.
    #[must_use]
    pub fn reason(&self) -> Option<String> {
        self.inner.reason.get().map(|r| r.to_string())
    }

    /// Resolves with the reason once cancelled.
    pub(crate) async fn cancelled(&self) -> Arc<str> {
        // Made before the first look: a `cancel` after it wakes it, so one between the look
        // and the wait is not lost.
        let mut notified = std::pin::pin!(self.inner.notify.notified());
        std::future::poll_fn(|cx| {
            if let Some(reason) = self.inner.reason.get() {
                return Poll::Ready(reason.clone());
            }
            std::task::ready!(notified.as_mut().poll(cx));
            // `cancel` sets the reason before it wakes anyone.
            Poll::Ready(
                self.inner
                    .reason
                    .get()
                    .cloned()
                    .unwrap_or_else(|| "cancelled".into()),
            )
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use std::pin::pin;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::task::{Context, Poll, Wake, Waker};

    use super::CancelHandle;

    #[derive(Default)]
    struct Woken(AtomicBool);

    impl Wake for Woken {
        fn wake(self: Arc<Self>) {
            self.0.store(true, Ordering::SeqCst);
        }
    }

    /// A waiting call is woken by `cancel` and gets the first reason; later reasons are ignored.
    #[test]
    fn cancel_wakes_a_waiting_call_with_the_first_reason() {
        let handle = CancelHandle::new();
        let clone = handle.clone();
        let woken = Arc::new(Woken::default());
        let waker = Waker::from(woken.clone());
        let mut cx = Context::from_waker(&waker);
        let mut waiting = pin!(clone.cancelled());
        assert!(waiting.as_mut().poll(&mut cx).is_pending());
        assert!(!handle.is_cancelled());
        handle.cancel("first");
        handle.cancel("second");
        assert!(woken.0.load(Ordering::SeqCst));
        assert_eq!(
            waiting.as_mut().poll(&mut cx),
            Poll::Ready(Arc::from("first"))
        );
        assert_eq!(handle.reason().as_deref(), Some("first"));
        assert!(clone.is_cancelled());
    }

    /// A call that starts waiting after the cancel completes at once.
    #[test]
    fn a_wait_after_the_cancel_completes_at_once() {
        let handle = CancelHandle::new();
        handle.cancel("stop");
        let mut waiting = pin!(handle.cancelled());
        let mut cx = Context::from_waker(Waker::noop());
        assert_eq!(
            waiting.as_mut().poll(&mut cx),
            Poll::Ready(Arc::from("stop"))
        );
    }
}
