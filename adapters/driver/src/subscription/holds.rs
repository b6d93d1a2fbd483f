//! [`ResourceHolds`]: which resource URIs a connection's initialize-era subscriptions hold,
//! so that each URI is subscribed upstream once however many subscriptions want it.
//!
//! `resources/subscribe` and `resources/unsubscribe` are per session, not per subscriber:
//! without the count, dropping one of two subscriptions to a URI would unsubscribe the
//! session, and the other would silently get no more updates.

use std::collections::HashMap;

/// The subscriptions holding each URI subscribed upstream on one connection. Kept in the
/// connection's shared state; every method is called under its lock.
#[derive(Debug, Default)]
pub(crate) struct ResourceHolds {
    by_uri: HashMap<String, Held>,
    /// The epoch of the next URI subscribed from scratch.
    next_epoch: u64,
}

/// One URI subscribed upstream.
#[derive(Debug)]
struct Held {
    /// The subscriptions holding it (at least one while it is in the map).
    holders: usize,
    /// Which upstream subscription of the URI this is: a hold taken on an earlier one
    /// (forgotten since) releases nothing on this one.
    epoch: u64,
}

/// One subscription's hold on a URI, from [`ResourceHolds::join`] or
/// [`ResourceHolds::subscribed`]; give it back with [`ResourceHolds::release`].
#[derive(Debug)]
pub(crate) struct Hold {
    uri: String,
    epoch: u64,
}

impl Hold {
    /// The URI held.
    pub(crate) fn uri(&self) -> &str {
        &self.uri
    }
}

impl ResourceHolds {
    /// Joins the upstream subscription of `uri` if there is one (another subscription holds
    /// it): the caller sends nothing. `None`: the caller subscribes upstream itself, and
    /// calls [`subscribed`](Self::subscribed) once the server accepted.
    pub(crate) fn join(&mut self, uri: &str) -> Option<Hold> {
        let held = self.by_uri.get_mut(uri)?;
        held.holders += 1;
        Some(Hold {
            uri: uri.to_owned(),
            epoch: held.epoch,
        })
    }

    /// The server accepted a `resources/subscribe` of `uri`: the caller holds it. Two callers
    /// that both found it unheld (their subscribes crossed) both hold the same upstream
    /// subscription, which one `resources/unsubscribe` ends.
    pub(crate) fn subscribed(&mut self, uri: &str) -> Hold {
        if let Some(hold) = self.join(uri) {
            return hold;
        }
        let epoch = self.next_epoch;
        self.next_epoch += 1;
        self.by_uri
            .insert(uri.to_owned(), Held { holders: 1, epoch });
        Hold {
            uri: uri.to_owned(),
            epoch,
        }
    }

    /// Gives `hold` back; `true` when it was the last one on its URI's upstream subscription,
    /// which the caller then ends with `resources/unsubscribe`.
    pub(crate) fn release(&mut self, hold: &Hold) -> bool {
        let Some(held) = self.by_uri.get_mut(&hold.uri) else {
            return false;
        };
        if held.epoch != hold.epoch {
            return false;
        }
        held.holders -= 1;
        if held.holders > 0 {
            return false;
        }
        self.by_uri.remove(&hold.uri);
        true
    }

    /// The upstream subscription of `uri` is gone (a new session refused to restore it): the
    /// holds on it release nothing, and the next subscription to `uri` subscribes afresh.
    pub(crate) fn forget(&mut self, uri: &str) {
        self.by_uri.remove(uri);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_release_of_a_uri_unsubscribes() {
        let mut holds = ResourceHolds::default();
        assert!(holds.join("file:///a").is_none());
        let first = holds.subscribed("file:///a");
        let second = holds.join("file:///a").expect("held");
        // Subscribes that crossed share the one upstream subscription.
        let crossed = holds.subscribed("file:///a");
        assert!(!holds.release(&first));
        assert!(!holds.release(&crossed));
        assert!(holds.release(&second));
        assert!(holds.join("file:///a").is_none());
    }

    #[test]
    fn a_forgotten_uri_releases_nothing_on_its_next_subscription() {
        let mut holds = ResourceHolds::default();
        let old = holds.subscribed("file:///a");
        holds.forget("file:///a");
        assert!(holds.join("file:///a").is_none());
        let new = holds.subscribed("file:///a");
        assert!(!holds.release(&old));
        assert!(holds.release(&new));
        assert!(!holds.release(&new), "released once");
    }
}
