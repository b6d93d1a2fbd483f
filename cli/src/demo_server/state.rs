//! State shared between the reader loop and the tool threads.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, mpsc};
use std::time::{Duration, Instant};

use mcp_proto::jsonrpc::{ErrorObject, Id};
use mcp_proto::types::LoggingLevel;
use serde::Serialize;
use serde_json::Value;

use super::DemoConfig;
use super::wire::Outbox;

/// What a server-to-client request got back.
pub(crate) type Reply = Result<Value, ErrorObject>;

/// A flag a running tool checks between steps; `sleep` wakes early when it is set.
#[derive(Clone, Default)]
pub(crate) struct CancelToken(Arc<(Mutex<bool>, Condvar)>);

impl CancelToken {
    pub fn cancel(&self) {
        let (flag, cv) = &*self.0;
        *lock(flag) = true;
        cv.notify_all();
    }

    pub fn is_cancelled(&self) -> bool {
        *lock(&self.0.0)
    }

    /// Sleeps for `duration` unless cancelled first; returns `false` when cancelled.
    pub fn sleep(&self, duration: Duration) -> bool {
        let (flag, cv) = &*self.0;
        let deadline = Instant::now() + duration;
        let mut cancelled = lock(flag);
        while !*cancelled {
            let now = Instant::now();
            if now >= deadline {
                return true;
            }
            cancelled = match cv.wait_timeout(cancelled, deadline - now) {
                Ok((guard, _)) => guard,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
        false
    }
}

/// Locks a mutex, ignoring poisoning: a panicking tool thread must not take the server down,
/// and every value guarded here stays consistent after any single statement.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// What the client said about itself in `initialize`.
#[derive(Debug, Clone)]
pub(crate) struct Peer {
    pub protocol_version: String,
    pub elicitation: bool,
    pub sampling: bool,
    pub roots: bool,
}

#[derive(Default)]
pub(crate) struct Inner {
    pub peer: Option<Peer>,
    pub log_level: Option<LoggingLevel>,
    pub subscriptions: BTreeSet<String>,
    /// Tool calls in flight, by request id.
    pub running: HashMap<Id, CancelToken>,
    /// Our requests to the client awaiting an answer, by our id.
    pub waiting: HashMap<Id, mpsc::Sender<Reply>>,
    pub next_request: u64,
    /// Set at end of input: no reply to a server-to-client request can arrive any more.
    pub closed: bool,
    /// The value of `demo://clock`: one more every [`CLOCK_TICK`] while it is subscribed.
    pub clock: u64,
    /// Stops the thread that ticks the clock, while one runs.
    pub ticker: Option<CancelToken>,
}

/// How often a subscribed `demo://clock` changes.
pub(crate) const CLOCK_TICK: Duration = Duration::from_secs(1);

pub(crate) struct Shared {
    pub out: Outbox,
    pub config: DemoConfig,
    pub inner: Mutex<Inner>,
    /// Notified whenever `running` shrinks.
    pub idle: Condvar,
}

impl Shared {
    pub fn new(out: Outbox, config: DemoConfig) -> Self {
        Shared {
            out,
            inner: Mutex::new(Inner {
                log_level: config.initial_log_level,
                ..Inner::default()
            }),
            config,
            idle: Condvar::new(),
        }
    }

    pub fn lock(&self) -> MutexGuard<'_, Inner> {
        lock(&self.inner)
    }

    /// Sends `notifications/message` when `level` is at or above the client's chosen level.
    pub fn log<T: Serialize>(&self, level: LoggingLevel, logger: &str, data: T) {
        let threshold = self.lock().log_level;
        if threshold.is_some_and(|t| level >= t)
            && let Ok(data) = serde_json::to_value(data)
        {
            let params = mcp_proto::types::LoggingMessageParams {
                level,
                logger: Some(logger.to_owned()),
                data,
                meta: None,
                extra: Default::default(),
            };
            self.out.notify("notifications/message", &params);
        }
    }

    /// Writes a diagnostic line to stderr unless the server is quiet.
    pub fn diag(&self, message: &str) {
        if !self.config.quiet {
            eprintln!("mcp demo-server: {message}");
        }
    }

    /// Sends a request to the client and waits for its answer, polling `token` so a
    /// cancelled tool call stops waiting. `None` means cancelled or the input closed.
    pub fn ask_client<T: Serialize>(
        &self,
        method: &str,
        params: &T,
        token: &CancelToken,
    ) -> Option<Reply> {
        let (tx, rx) = mpsc::channel();
        let id = {
            let mut inner = self.lock();
            if inner.closed {
                return None;
            }
            inner.next_request += 1;
            let id = Id::String(format!("demo-{}", inner.next_request));
            inner.waiting.insert(id.clone(), tx);
            id
        };
        self.out.request(&id, method, params);
        let reply = loop {
            match rx.recv_timeout(Duration::from_millis(20)) {
                Ok(reply) => break Some(reply),
                Err(mpsc::RecvTimeoutError::Disconnected) => break None,
                Err(mpsc::RecvTimeoutError::Timeout) if token.is_cancelled() => {
                    // Our own request is moot now; tell the client so it can close its dialog.
                    let params =
                        serde_json::json!({ "requestId": id, "reason": "tool call cancelled" });
                    self.out.notify("notifications/cancelled", &params);
                    break None;
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
            }
        };
        self.lock().waiting.remove(&id);
        reply
    }
}
