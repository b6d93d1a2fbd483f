//! A stop signal's request that the bridge wind down cleanly: what the host (or the HTTP
//! sessions) still runs upstream is cancelled with the signal named in the reason, and every
//! upstream session is closed (HTTP `DELETE`, a child's shutdown) before the process exits.
//!
//! `app::run` calls [`request`] on the first SIGINT, SIGTERM or SIGHUP and then waits, within
//! a short grace, for the bridge to return; every bridge mode waits in [`requested`] beside
//! its work. A stop is a fact about the whole process (one bridge runs per process), so it
//! lives here once rather than being threaded through every handler: a forwarded call
//! dropped after it reads its cancellation reason from [`reason`].

use std::sync::OnceLock;

use tokio::sync::Notify;

/// The reason given upstream for every call cancelled by the stop; set once.
static REASON: OnceLock<String> = OnceLock::new();

/// Wakes whoever waits in [`requested`].
static REQUESTED: Notify = Notify::const_new();

/// Asks the running bridge to stop, `signal` (such as "SIGTERM") named in the reason the
/// upstream servers get for each cancelled call. Only the first call counts.
pub fn request(signal: &str) {
    let _ = REASON.set(format!("the bridge was stopped by {signal}"));
    REQUESTED.notify_waiters();
}

/// The cancellation reason once a stop was requested.
pub fn reason() -> Option<&'static str> {
    REASON.get().map(String::as_str)
}

/// Completes once a stop is requested (at once if it already was). Cancel-safe.
pub async fn requested() {
    loop {
        // Made before the check: a `notify_waiters` after the check still wakes it.
        let notified = REQUESTED.notified();
        if REASON.get().is_some() {
            return;
        }
        notified.await;
    }
}

/// The message of the error a host request still running upstream gets when the bridge is
/// stopped ([`or_stopping`]).
pub const STOPPING: &str = "mcp bridge: the bridge is stopping";

/// `forwarded` (a host request forwarded upstream), unless a stop is requested first: then
/// it is dropped (which cancels it upstream with the stop's reason) and the host gets -32603
/// saying that the bridge is stopping and why, rather than a stream that just closes.
pub async fn or_stopping(
    forwarded: impl std::future::Future<Output = mcp_tokio::server::RequestOutcome>,
) -> mcp_tokio::server::RequestOutcome {
    tokio::select! {
        // An answer that is there already is the host's.
        biased;
        outcome = forwarded => outcome,
        () = requested() => {
            let why = reason().unwrap_or("the bridge was stopped");
            Err(mcp_proto::jsonrpc::ErrorObject::new(
                mcp_proto::jsonrpc::ErrorObject::INTERNAL_ERROR,
                format!("{STOPPING} ({why}); the request was cancelled upstream"),
            ))
        }
    }
}

/// The host sessions of a `--listen` bridge, so that a stop answers their requests still
/// running ([`or_stopping`]) before the HTTP server shuts down and closes their streams.
#[derive(Clone, Default)]
pub struct HostSessions(std::sync::Arc<std::sync::Mutex<Vec<mcp_tokio::server::ServerHandle>>>);

impl HostSessions {
    /// Call with each new session's handle (the session factory's argument).
    pub fn add(&self, session: &mcp_tokio::server::ServerHandle) {
        let mut sessions = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // The ended ones go: the list stays as long as the live sessions.
        sessions.retain(|s| !s.is_closed());
        sessions.push(session.clone());
    }

    /// After a stop was requested: waits, at most `bound`, until no session has a request
    /// left unanswered (each got its answer, or the stop's error, queued for its stream).
    pub async fn answered(&self, bound: std::time::Duration) {
        let open = || {
            self.0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .iter()
                .any(|s| !s.is_closed() && s.open_requests() > 0)
        };
        let answered = async {
            // The handlers are woken by the stop already: a few scheduler turns at most.
            while open() {
                tokio::time::sleep(std::time::Duration::from_millis(1)).await;
            }
        };
        if tokio::time::timeout(bound, answered).await.is_err() {
            tracing::warn!("bridge: some host requests were not answered before stopping");
        }
    }
}
