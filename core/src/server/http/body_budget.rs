//! The server-wide budget of request body bytes being received: how much all the bodies
//! still arriving, on every connection, may hold at once.
//!
//! Each body is bounded on its own ([`HttpServerConfig::max_body_bytes`], and the time it may
//! take), and connections are counted; without a budget across them, a host that opens many
//! connections and trickles a maximal body on each holds the product of the bounds. The host's
//! HTTP library, which reads bodies, asks [`BodyBudget::hold`] before it keeps more bytes of a
//! body and tells [`BodyBudget::release`] what a body held once its buffer is freed (handed to
//! the server, broken off, timed out, refused). The budget decides; the library measures.

use super::{HttpServerConfig, Refusal};

/// The bytes of request bodies being received at once, across every connection of a server,
/// bounded by [`HttpServerConfig::max_body_bytes_in_flight`].
///
/// Never less than one body of the largest size: the bound is at least
/// [`HttpServerConfig::max_body_bytes`] and the one byte past it that tells a larger body
/// (413), so a lone maximal body always fits.
///
/// ```
/// use mcp_proto::server::ServerConfig;
/// use mcp_proto::server::http::{BodyBudget, HttpServerConfig, Refusal};
/// use mcp_proto::types::Implementation;
///
/// let config = HttpServerConfig::new(ServerConfig::new(Implementation::new("demo", "1.0")))
///     .with_limits(64, 1000, 32)
///     .with_body_bytes_in_flight(2500);
/// let mut budget = BodyBudget::new(&config);
/// budget.hold(1000).unwrap(); // one body's buffer
/// budget.hold(1000).unwrap(); // another's
/// assert_eq!(
///     budget.hold(600),
///     Err(Refusal::TooManyBodyBytesInFlight { limit: 2500 })
/// );
/// budget.release(1000); // the first body was handed to the server
/// budget.hold(600).unwrap();
/// assert_eq!(budget.held(), 1600);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BodyBudget {
    limit: usize,
    held: usize,
}

impl BodyBudget {
    /// The budget of a server of `config`, holding nothing.
    #[must_use]
    pub fn new(config: &HttpServerConfig) -> Self {
        BodyBudget {
            limit: config
                .max_body_bytes_in_flight
                .max(config.max_body_bytes.saturating_add(1)),
            held: 0,
        }
    }

    /// The most the bodies being received may hold at once, in bytes.
    #[must_use]
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// What the bodies being received hold now, in bytes.
    #[must_use]
    pub fn held(&self) -> usize {
        self.held
    }

    /// A body's buffer is to grow by `bytes`: counted when the total stays within the
    /// bound. Past it, nothing is counted and the refusal is the request's answer
    /// ([`Refusal::TooManyBodyBytesInFlight`], 503); the body is not read further, so its
    /// connection closes, and what it held so far is released with its buffer.
    ///
    /// # Errors
    ///
    /// The bodies being received would hold more than [`limit`](Self::limit).
    pub fn hold(&mut self, bytes: usize) -> Result<(), Refusal> {
        match self.held.checked_add(bytes) {
            Some(total) if total <= self.limit => {
                self.held = total;
                Ok(())
            }
            _ => Err(Refusal::TooManyBodyBytesInFlight { limit: self.limit }),
        }
    }

    /// A body's buffer that held `bytes` was freed (or handed on). Releasing more than is
    /// held is the caller's error; the count stops at zero.
    pub fn release(&mut self, bytes: usize) {
        debug_assert!(
            bytes <= self.held,
            "released {bytes} bytes of {} held",
            self.held
        );
        self.held = self.held.saturating_sub(bytes);
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::server::ServerConfig;
    use crate::types::Implementation;

    fn config(max_body: usize, in_flight: usize) -> HttpServerConfig {
        HttpServerConfig::new(ServerConfig::new(Implementation::new("budget", "1.0")))
            .with_limits(64, max_body, 32)
            .with_body_bytes_in_flight(in_flight)
    }

    #[test]
    fn the_default_holds_sixteen_maximal_bodies() {
        let config = HttpServerConfig::new(ServerConfig::new(Implementation::new("d", "1")));
        let budget = BodyBudget::new(&config);
        assert_eq!(budget.limit(), 64 << 20);
        assert_eq!(budget.limit() / config.max_body_bytes, 16);
        assert_eq!(budget.held(), 0);
    }

    #[test]
    fn a_budget_below_one_body_still_fits_one_maximal_body_and_its_extra_byte() {
        let mut budget = BodyBudget::new(&config(1000, 10));
        assert_eq!(budget.limit(), 1001);
        assert_eq!(budget.hold(1001), Ok(()));
        assert_eq!(
            budget.hold(1),
            Err(Refusal::TooManyBodyBytesInFlight { limit: 1001 })
        );
    }

    #[test]
    fn a_refused_hold_counts_nothing_and_a_release_makes_room() {
        let mut budget = BodyBudget::new(&config(1000, 3000));
        assert_eq!(budget.hold(1000), Ok(()));
        assert_eq!(budget.hold(1500), Ok(()));
        assert_eq!(budget.hold(500), Ok(()));
        assert_eq!(budget.held(), 3000, "the bound itself fits");
        assert_eq!(
            budget.hold(1),
            Err(Refusal::TooManyBodyBytesInFlight { limit: 3000 })
        );
        assert_eq!(budget.held(), 3000);
        budget.release(1500);
        assert_eq!(budget.held(), 1500);
        assert_eq!(budget.hold(1500), Ok(()));
        assert_eq!(
            budget.hold(usize::MAX),
            Err(Refusal::TooManyBodyBytesInFlight { limit: 3000 }),
            "no overflow"
        );
    }

    #[test]
    fn the_refusal_is_a_503_with_a_json_rpc_error() {
        let refusal = Refusal::TooManyBodyBytesInFlight { limit: 64 << 20 };
        assert_eq!(refusal.status(), 503);
        assert_eq!(refusal.rpc_code(), -32000);
        let body: serde_json::Value =
            serde_json::from_slice(&refusal.body()).expect("the body is JSON");
        assert_eq!(body["jsonrpc"], "2.0");
        assert_eq!(body["id"], serde_json::Value::Null);
        assert_eq!(body["error"]["code"], -32000);
        assert_eq!(
            body["error"]["message"],
            "Service unavailable: too many request body bytes being received (the most this \
             server holds at once: 67108864): try again later"
        );
        assert!(refusal.to_string().ends_with("(503)"), "{refusal}");
    }

    /// What one step does: a body (of eight) asks for more bytes, or its buffer is freed.
    #[derive(Clone, Debug)]
    enum Step {
        Grow { body: usize, bytes: usize },
        Free { body: usize },
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            3 => (0..8usize, 0..1500usize).prop_map(|(body, bytes)| Step::Grow { body, bytes }),
            1 => (0..8usize).prop_map(|body| Step::Free { body }),
        ]
    }

    proptest! {
        /// Whatever the bodies ask and free, the total counted is what the bodies hold,
        /// never over the bound; a hold is refused exactly when it would pass the bound; once
        /// every body is freed the count is back to zero.
        #[test]
        fn the_count_is_what_the_bodies_hold_never_over_the_bound(
            max_body in 1..2000usize,
            in_flight in 0..6000usize,
            steps in prop::collection::vec(step(), 0..200),
        ) {
            let mut budget = BodyBudget::new(&config(max_body, in_flight));
            let limit = budget.limit();
            prop_assert_eq!(limit, in_flight.max(max_body + 1));
            let mut bodies = [0usize; 8];
            for step in steps {
                match step {
                    Step::Grow { body, bytes } => {
                        let fits = budget.held() + bytes <= limit;
                        let answer = budget.hold(bytes);
                        if fits {
                            prop_assert_eq!(answer, Ok(()));
                            bodies[body] += bytes;
                        } else {
                            prop_assert_eq!(
                                answer,
                                Err(Refusal::TooManyBodyBytesInFlight { limit })
                            );
                        }
                    }
                    Step::Free { body } => {
                        budget.release(bodies[body]);
                        bodies[body] = 0;
                    }
                }
                prop_assert_eq!(budget.held(), bodies.iter().sum::<usize>());
                prop_assert!(budget.held() <= limit);
            }
            for held in &mut bodies {
                budget.release(*held);
                *held = 0;
            }
            prop_assert_eq!(budget.held(), 0);
        }
    }
}
