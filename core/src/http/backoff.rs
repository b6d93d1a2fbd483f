//! Capped exponential backoff for reconnecting, with optional deterministic jitter.
//!
//! The core has no randomness: jitter comes from a seed the caller supplies (the adapter can take
//! it from any source; tests use a constant), run through splitmix64. Jitter here only spreads
//! reconnection storms; it is not a security nonce.

use std::time::Duration;

/// A sequence of reconnection delays: `initial`, `initial * factor`, `initial * factor^2`, ...,
/// each capped at `max`, for at most `max_attempts` attempts.
///
/// With jitter ([`Backoff::with_jitter`]) each delay `d` is drawn uniformly from `[d/2, d]`
/// ("equal jitter"), so clients spread out but never retry sooner than half the nominal delay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Backoff {
    initial: Duration,
    max: Duration,
    factor: u32,
    max_attempts: Option<u32>,
    jitter: Option<SplitMix64>,
    attempt: u32,
}

impl Backoff {
    /// A backoff starting at `initial`, multiplied by `factor` per attempt (0 counts as 1, a
    /// constant delay), never above `max` (if `max < initial`, every delay is `max`), giving up
    /// after `max_attempts` delays (`None`: never).
    pub fn new(initial: Duration, max: Duration, factor: u32, max_attempts: Option<u32>) -> Self {
        Self {
            initial,
            max,
            factor: factor.max(1),
            max_attempts,
            jitter: None,
            attempt: 0,
        }
    }

    /// Adds jitter drawn from a splitmix64 stream seeded with `seed`: the same seed gives the
    /// same delays.
    #[must_use]
    pub fn with_jitter(mut self, seed: u64) -> Self {
        self.jitter = Some(SplitMix64(seed));
        self
    }

    /// How many delays have been handed out since the start or the last [`reset`](Self::reset).
    pub fn attempts(&self) -> u32 {
        self.attempt
    }

    /// The delay before the next attempt, or `None` when `max_attempts` are used up.
    pub fn next_delay(&mut self) -> Option<Duration> {
        if self.max_attempts.is_some_and(|m| self.attempt >= m) {
            return None;
        }
        let nominal = self.nominal(self.attempt);
        self.attempt = self.attempt.saturating_add(1);
        Some(match &mut self.jitter {
            Some(rng) => {
                let nanos = nominal.as_nanos();
                let half = nanos / 2;
                // A draw from [0, nanos - half]: (r * (span + 1)) >> 64 for a 64-bit r, which is
                // uniform enough for spreading reconnects. `span` can reach 2^94 (Duration::MAX),
                // so multiply its high and low 64-bit halves separately to stay within u128.
                let span1 = nanos - half + 1;
                let r = u128::from(rng.next());
                let offset = r * (span1 >> 64) + ((r * (span1 & u128::from(u64::MAX))) >> 64);
                duration_from_nanos(half + offset)
            }
            None => nominal,
        })
    }

    /// Starts over from `initial` (after a successful connection). The jitter stream carries on,
    /// so a reset does not replay the same delays.
    pub fn reset(&mut self) {
        self.attempt = 0;
    }

    fn nominal(&self, attempt: u32) -> Duration {
        let mut d = self.initial.min(self.max);
        for _ in 0..attempt {
            if d >= self.max || self.factor == 1 {
                break;
            }
            d = d.checked_mul(self.factor).unwrap_or(self.max).min(self.max);
        }
        d
    }
}

fn duration_from_nanos(nanos: u128) -> Duration {
    const NANOS_PER_SEC: u128 = 1_000_000_000;
    let secs = u64::try_from(nanos / NANOS_PER_SEC).unwrap_or(u64::MAX);
    // The remainder is below 10^9, so it fits in a u32.
    Duration::new(secs, (nanos % NANOS_PER_SEC) as u32)
}

/// splitmix64 (Steele, Lea, Flood 2014): tiny, fast, and good enough for jitter.
#[derive(Debug, Clone, PartialEq, Eq)]
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MS: Duration = Duration::from_millis(1);

    fn take(b: &mut Backoff, n: usize) -> Vec<Option<Duration>> {
        (0..n).map(|_| b.next_delay()).collect()
    }

    #[test]
    fn exponential_capped_and_exhausted() {
        let mut b = Backoff::new(100 * MS, 1000 * MS, 2, Some(6));
        assert_eq!(
            take(&mut b, 7),
            [100, 200, 400, 800, 1000, 1000]
                .map(|ms| Some(ms * MS))
                .into_iter()
                .chain([None])
                .collect::<Vec<_>>()
        );
        assert_eq!(b.attempts(), 6);
        b.reset();
        assert_eq!(b.attempts(), 0);
        assert_eq!(b.next_delay(), Some(100 * MS));
    }

    #[test]
    fn factor_zero_or_one_is_constant_and_unbounded_attempts() {
        let mut b = Backoff::new(50 * MS, Duration::from_secs(1), 0, None);
        assert!(take(&mut b, 100).iter().all(|d| *d == Some(50 * MS)));
    }

    #[test]
    fn max_below_initial_caps_first_delay() {
        let mut b = Backoff::new(Duration::from_secs(5), Duration::from_secs(1), 3, None);
        assert_eq!(b.next_delay(), Some(Duration::from_secs(1)));
    }

    #[test]
    fn huge_values_do_not_overflow() {
        let mut b = Backoff::new(Duration::MAX, Duration::MAX, u32::MAX, None).with_jitter(1);
        for _ in 0..100 {
            let d = b.next_delay().unwrap();
            assert!(d >= Duration::MAX / 2);
        }
    }

    #[test]
    fn zero_attempts_gives_nothing() {
        assert_eq!(Backoff::new(MS, MS, 2, Some(0)).next_delay(), None);
    }

    #[test]
    fn jitter_is_deterministic_per_seed_and_varies() {
        let seq = |seed| {
            take(
                &mut Backoff::new(1000 * MS, 1000 * MS, 2, None).with_jitter(seed),
                20,
            )
        };
        assert_eq!(seq(7), seq(7));
        assert_ne!(seq(7), seq(8));
        let s = seq(7);
        let distinct: std::collections::BTreeSet<_> = s.iter().collect();
        assert!(distinct.len() > 10, "jitter barely varies: {s:?}");
    }

    #[test]
    fn splitmix64_reference_values() {
        // First outputs for seed 0, from the reference C implementation.
        let mut r = SplitMix64(0);
        assert_eq!(r.next(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next(), 0x6E78_9E6A_A1B9_65F4);
    }

    proptest! {
        #[test]
        fn jittered_delay_within_half_and_nominal(
            initial in 0u32..10_000, max in 0u32..100_000, factor in 0u32..5, seed: u64, n in 1usize..30
        ) {
            let mut plain = Backoff::new(MS * initial, MS * max, factor, None);
            let mut jit = Backoff::new(MS * initial, MS * max, factor, None).with_jitter(seed);
            for _ in 0..n {
                let d = plain.next_delay().unwrap();
                let j = jit.next_delay().unwrap();
                prop_assert!(d <= MS * max);
                prop_assert!(j <= d && j >= d / 2, "{j:?} outside [{:?}, {d:?}]", d / 2);
            }
        }
    }
}
