//! The table of the client's pending requests, keyed by handle, with wire-id aliases.
//!
//! A request's handle is the wire id it was first sent with. A re-send (after an HTTP session
//! was lost, for instance) takes a fresh wire id from the same counter and records it as an
//! alias, so a response to either id finds the request, and the handle the caller holds never
//! changes.

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::value::RawValue;

use super::RequestHandle;
use crate::time::Duration;

/// Where a request is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stage {
    /// Waiting for the handshake to finish.
    Waiting,
    /// In the outbound queue, not yet handed to the transport.
    Queued,
    /// Handed to the transport: the server may be working on it.
    Sent,
}

/// One pending request.
#[derive(Debug)]
pub(crate) struct Pending {
    pub(crate) method: Cow<'static, str>,
    /// The params as sent (progress token included), kept for re-sends.
    pub(crate) params: Option<Box<RawValue>>,
    /// The wire id it was last sent with.
    pub(crate) wire: u64,
    pub(crate) stage: Stage,
    /// The timeout per attempt (restarted by progress when `max_total` is set).
    pub(crate) timeout: Option<Duration>,
    /// The maximum total time when progress resets the timeout.
    pub(crate) max_total: Option<Duration>,
    pub(crate) progress: bool,
    /// Active time at which it was sent.
    pub(crate) sent_at: Duration,
    /// The deadline armed in the index (active time), and whether it is the total limit.
    pub(crate) deadline: Option<(Duration, bool)>,
}

#[derive(Debug, Default)]
pub(crate) struct PendingRequests {
    entries: HashMap<RequestHandle, Pending>,
    /// Wire ids other than the handle's own, for re-sent requests.
    aliases: HashMap<u64, RequestHandle>,
}

impl PendingRequests {
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    pub(crate) fn insert(&mut self, handle: RequestHandle, pending: Pending) {
        self.entries.insert(handle, pending);
    }

    pub(crate) fn get(&self, handle: RequestHandle) -> Option<&Pending> {
        self.entries.get(&handle)
    }

    pub(crate) fn get_mut(&mut self, handle: RequestHandle) -> Option<&mut Pending> {
        self.entries.get_mut(&handle)
    }

    /// The request currently sent with wire id `wire`, if any.
    pub(crate) fn by_wire(&self, wire: u64) -> Option<RequestHandle> {
        if let Some(&h) = self.aliases.get(&wire) {
            return Some(h);
        }
        let h = RequestHandle(wire);
        match self.entries.get(&h) {
            Some(p) if p.wire == wire => Some(h),
            _ => None,
        }
    }

    /// Gives a request a fresh wire id (for a re-send).
    #[allow(dead_code)] // used by the HTTP layer's re-initialize (next step of the HTTP work)
    pub(crate) fn rewire(&mut self, handle: RequestHandle, wire: u64) {
        if let Some(p) = self.entries.get_mut(&handle) {
            if p.wire != handle.0 {
                self.aliases.remove(&p.wire);
            }
            p.wire = wire;
            self.aliases.insert(wire, handle);
        }
    }

    pub(crate) fn remove(&mut self, handle: RequestHandle) -> Option<Pending> {
        let p = self.entries.remove(&handle)?;
        if p.wire != handle.0 {
            self.aliases.remove(&p.wire);
        }
        Some(p)
    }

    /// Removes every request, in handle order (deterministic event order on close).
    pub(crate) fn drain_sorted(&mut self) -> Vec<(RequestHandle, Pending)> {
        self.aliases.clear();
        let mut all: Vec<_> = self.entries.drain().collect();
        all.sort_unstable_by_key(|(h, _)| *h);
        all
    }
}
