//! Requests from the server that the host is answering.

use std::collections::HashMap;

use super::InboundRequestId;
use crate::jsonrpc::Id;

/// What the core needs to remember about an open server request.
#[derive(Debug)]
pub(crate) struct Inbound {
    /// The server's id, echoed verbatim in the answer.
    pub(crate) wire: Id,
    /// Whether request deadlines are paused while it is open (a human is answering).
    pub(crate) pauses: bool,
}

#[derive(Debug, Default)]
pub(crate) struct InboundRequests {
    open: HashMap<InboundRequestId, Inbound>,
    by_wire: HashMap<Id, InboundRequestId>,
    next: u64,
}

impl InboundRequests {
    pub(crate) fn len(&self) -> usize {
        self.open.len()
    }

    pub(crate) fn contains_wire(&self, wire: &Id) -> bool {
        self.by_wire.contains_key(wire)
    }

    pub(crate) fn insert(&mut self, wire: Id, pauses: bool) -> InboundRequestId {
        let id = InboundRequestId(self.next);
        self.next += 1;
        self.by_wire.insert(wire.clone(), id);
        self.open.insert(id, Inbound { wire, pauses });
        id
    }

    pub(crate) fn remove(&mut self, id: InboundRequestId) -> Option<Inbound> {
        let inbound = self.open.remove(&id)?;
        self.by_wire.remove(&inbound.wire);
        Some(inbound)
    }

    pub(crate) fn remove_wire(&mut self, wire: &Id) -> Option<(InboundRequestId, Inbound)> {
        let id = self.by_wire.remove(wire)?;
        self.open.remove(&id).map(|inbound| (id, inbound))
    }

    pub(crate) fn clear(&mut self) {
        self.open.clear();
        self.by_wire.clear();
    }
}
