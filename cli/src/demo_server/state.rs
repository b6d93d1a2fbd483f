//! State shared between the server's handler, the tool threads and the clock's ticker.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use mcp_proto::jsonrpc::ErrorObject;
use mcp_proto::server::ClientRequestId;
use mcp_proto::session::{RequestError, RequestOptions};
use mcp_proto::types::LoggingLevel;
use mcp_tokio::server::{RequestContext, ServerError, ServerHandle};
use serde::Serialize;
use serde_json::Value;

use super::DemoConfig;

/// What a server-to-client request got back.
pub(crate) type Reply = Result<Value, ErrorObject>;

/// A flag a running tool checks between steps; `sleep` wakes early when it is set. A tool
/// call's token also carries its request, so what the tool asks of the client is sent on
/// behalf of that request (over HTTP: on the call's own stream).
#[derive(Clone, Default)]
pub(crate) struct CancelToken(Arc<(Mutex<bool>, Condvar)>, Option<RequestContext>);

impl CancelToken {
    /// The token of the client request `context`.
    pub fn for_request(context: RequestContext) -> Self {
        CancelToken(Arc::default(), Some(context))
    }

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
    pub log_level: Option<LoggingLevel>,
    pub subscriptions: BTreeSet<String>,
    /// The resource URIs each open 2026-07-28 listen subscribed (what the session honoured).
    pub listens: BTreeMap<ClientRequestId, Vec<String>>,
    /// Set when the session ended: no reply to a server-to-client request can arrive any more.
    pub closed: bool,
    /// The value of `demo://clock`: one more every [`CLOCK_TICK`] while it is subscribed.
    pub clock: u64,
    /// Stops the thread that ticks the clock, while one runs.
    pub ticker: Option<CancelToken>,
}

impl Inner {
    /// Whether anyone watches `uri`: a `resources/subscribe` (the initialize era) or an open
    /// listen that subscribed it (2026-07-28).
    pub fn watched(&self, uri: &str) -> bool {
        self.subscriptions.contains(uri)
            || self
                .listens
                .values()
                .any(|uris| uris.iter().any(|u| u == uri))
    }
}

/// How often a subscribed `demo://clock` changes.
pub(crate) const CLOCK_TICK: Duration = Duration::from_secs(1);

/// How often a tool waiting for the client's answer looks at its cancel token.
const CANCEL_POLL: Duration = Duration::from_millis(20);

pub(crate) struct Shared {
    /// The running server (set once, right after it starts and before any request).
    server: OnceLock<ServerHandle>,
    /// The runtime the server runs on: tool threads wait on it for the client's answers.
    pub rt: tokio::runtime::Handle,
    pub config: DemoConfig,
    pub inner: Mutex<Inner>,
}

impl Shared {
    pub fn new(config: DemoConfig, rt: tokio::runtime::Handle) -> Self {
        Shared {
            server: OnceLock::new(),
            rt,
            inner: Mutex::new(Inner {
                log_level: config.initial_log_level,
                ..Inner::default()
            }),
            config,
        }
    }

    /// Records the running server's handle (once).
    pub fn set_server(&self, server: ServerHandle) {
        // Set once by `serve` before the driver runs; a second call has nothing to add.
        let _ = self.server.set(server);
    }

    /// The running server's handle; `None` only before `serve` set it.
    pub fn server(&self) -> Option<&ServerHandle> {
        self.server.get()
    }

    pub fn lock(&self) -> MutexGuard<'_, Inner> {
        lock(&self.inner)
    }

    /// What the client declared in `initialize`, once it sent it.
    pub fn peer(&self) -> Option<Peer> {
        let server = self.server()?;
        let version = server.protocol_version()?;
        let caps = server.client_capabilities()?;
        Some(Peer {
            protocol_version: version.as_str().to_owned(),
            elicitation: caps.elicitation.is_some(),
            sampling: caps.sampling.is_some(),
            roots: caps.roots.is_some(),
        })
    }

    /// Sends `notifications/message` when `level` is at or above the client's chosen level
    /// (before it chose one: [`DemoConfig::initial_log_level`]).
    pub fn log<T: Serialize>(&self, level: LoggingLevel, logger: &str, data: T) {
        let threshold = self.lock().log_level;
        if threshold.is_some_and(|t| level >= t)
            && let Some(server) = self.server()
            // Not initialized yet or closed: nobody to tell.
            && let Err(e) = server.log(level, Some(logger), &data)
        {
            self.diag(&format!("log message dropped: {e}"));
        }
    }

    /// Writes a diagnostic line to stderr unless the server is quiet.
    pub fn diag(&self, message: &str) {
        if !self.config.quiet {
            eprintln!("mcp demo-server: {message}");
        }
    }

    /// Sends a request to the client and waits for its answer (no deadline: a person may be
    /// answering), looking at `token` so a cancelled tool call stops waiting, which withdraws
    /// the request (`notifications/cancelled` to the client). `None` means cancelled or the
    /// session closed. Called from a tool's thread, never from the runtime's.
    pub fn ask_client<T: Serialize>(
        &self,
        method: &'static str,
        params: &T,
        token: &CancelToken,
    ) -> Option<Reply> {
        let server = self.server()?.clone();
        let params = match mcp_proto::jsonrpc::to_raw(params) {
            Ok(p) => p,
            Err(e) => {
                return Some(Err(ErrorObject::new(
                    ErrorObject::INTERNAL_ERROR,
                    e.to_string(),
                )));
            }
        };
        let token = token.clone();
        let outcome = self.rt.block_on(async move {
            let options = RequestOptions::new().no_timeout();
            let request = async {
                match &token.1 {
                    Some(context) => context.request_raw(method, Some(&params), options).await,
                    None => server.request_raw(method, Some(&params), options).await,
                }
            };
            let cancelled = async {
                while !token.is_cancelled() {
                    tokio::time::sleep(CANCEL_POLL).await;
                }
            };
            // Dropping the request's future when cancelled withdraws it.
            tokio::select! {
                outcome = request => Some(outcome),
                () = cancelled => None,
            }
        })?;
        match outcome {
            Ok(raw) => Some(
                serde_json::from_str::<Value>(raw.get())
                    .map_err(|e| ErrorObject::new(ErrorObject::PARSE_ERROR, e.to_string())),
            ),
            Err(ServerError::Request(RequestError::Remote(error))) => Some(Err(error)),
            Err(ServerError::Request(RequestError::Closed(_))) => None,
            Err(other) => Some(Err(ErrorObject::new(
                ErrorObject::INTERNAL_ERROR,
                other.to_string(),
            ))),
        }
    }
}
