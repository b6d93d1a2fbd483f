//! Requests from the server that the host is answering.

use std::collections::HashMap;

use super::{InboundRequestId, RequestHandle};
use crate::jsonrpc::Id;

/// Where the answer to a server request goes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Reply {
    /// A JSON-RPC response with the server's id, echoed verbatim.
    Wire(Id),
    /// Slot `index` of the `inputResponses` of a multi-round request (2026-07-28).
    Input { handle: RequestHandle, index: usize },
}

/// What the core needs to remember about an open server request.
#[derive(Debug)]
pub(crate) struct Inbound {
    /// Where the answer goes.
    pub(crate) reply: Reply,
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
        let id = self.insert_reply(Reply::Wire(wire.clone()), pauses);
        self.by_wire.insert(wire, id);
        id
    }

    /// Opens a request whose answer feeds a multi-round retry.
    pub(crate) fn insert_reply(&mut self, reply: Reply, pauses: bool) -> InboundRequestId {
        let id = InboundRequestId(self.next);
        self.next += 1;
        self.open.insert(id, Inbound { reply, pauses });
        id
    }

    pub(crate) fn remove(&mut self, id: InboundRequestId) -> Option<Inbound> {
        let inbound = self.open.remove(&id)?;
        if let Reply::Wire(wire) = &inbound.reply {
            self.by_wire.remove(wire);
        }
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
