//! The one clock type of the crate.
//!
//! The core never reads a clock: every method that needs the time takes a `now: Instant`
//! argument. Keeping `Instant` behind this alias lets a wasm build swap in `web-time` later
//! without touching any signature.

/// A monotonic point in time, supplied by the caller.
pub type Instant = std::time::Instant;

pub use std::time::Duration;

/// Adds `d` to `t`, saturating at the latest representable instant instead of panicking.
///
/// Peer-supplied durations (`retry`, `Retry-After`, `ttlMs`, ...) and caller timeouts go
/// through this, so that no value can make `Instant` arithmetic panic. On overflow the result
/// is the latest instant `t + x` that can be represented (found by halving steps), which no
/// clock reading will pass: a deadline there is "never".
#[must_use]
pub fn saturating_add(t: Instant, d: Duration) -> Instant {
    if let Some(sum) = t.checked_add(d) {
        return sum;
    }
    let mut acc = t;
    let mut step = d;
    while !step.is_zero() {
        match acc.checked_add(step) {
            Some(next) => acc = next,
            None => step /= 2,
        }
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saturating_add_reaches_past_any_reachable_instant() {
        let t = Instant::now();
        let far = saturating_add(t, Duration::MAX);
        assert!(far > t + Duration::from_secs(1_000_000 * 365 * 24 * 3600));
        assert_eq!(
            saturating_add(t, Duration::from_secs(5)),
            t + Duration::from_secs(5)
        );
    }
}
