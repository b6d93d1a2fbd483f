//! The one clock type of the crate.
//!
//! The core never reads a clock: every method that needs the time takes a `now: Instant`
//! argument. Keeping `Instant` behind this alias lets a wasm build swap in `web-time` later
//! without touching any signature.

/// A monotonic point in time, supplied by the caller.
pub type Instant = std::time::Instant;

pub use std::time::Duration;

/// Adds `d` to `t`, saturating at a far-future instant instead of panicking.
///
/// Peer-supplied durations (`retry`, `Retry-After`, `ttlMs`, ...) go through this so that no
/// value a server sends can make `Instant` arithmetic panic.
#[must_use]
pub fn saturating_add(t: Instant, d: Duration) -> Instant {
    match t.checked_add(d) {
        Some(t) => t,
        // About 30 years ahead is "never" for a client connection and is representable on
        // every platform std supports; fall back to `t` itself only if even that overflows.
        None => t
            .checked_add(Duration::from_secs(30 * 365 * 24 * 3600))
            .unwrap_or(t),
    }
}
