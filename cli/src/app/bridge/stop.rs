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
