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
    /// The task of this id in the task table (the request was accepted as a task, 2025-11-25).
    Task(String),
}

/// What the core needs to remember about an open server request.
#[derive(Debug)]
pub(crate) struct Inbound {
    /// Where the answer goes.
    pub(crate) reply: Reply,
    /// Whether request deadlines are paused while it is open (a human is answering).
    pub(crate) pauses: bool,
    /// The server's task the request belongs to (`_meta` related-task): the answer carries
    /// it back.
    pub(crate) related_task: Option<String>,
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

    /// Notes the server's task an open request belongs to.
    pub(crate) fn set_related_task(&mut self, id: InboundRequestId, task: Option<String>) {
        if let Some(inbound) = self.open.get_mut(&id) {
            inbound.related_task = task;
        }
    }

    /// Opens a request whose answer feeds a multi-round retry.
    pub(crate) fn insert_reply(&mut self, reply: Reply, pauses: bool) -> InboundRequestId {
        let id = InboundRequestId(self.next);
        self.next += 1;
        self.open.insert(
            id,
            Inbound {
                reply,
                pauses,
                related_task: None,
            },
        );
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

    /// Removes the open request whose answer goes to task `task_id`.
    pub(crate) fn remove_task(&mut self, task_id: &str) -> Option<(InboundRequestId, Inbound)> {
        let id = *self
            .open
            .iter()
            .find(|(_, i)| matches!(&i.reply, Reply::Task(t) if t == task_id))?
            .0;
        self.open.remove(&id).map(|inbound| (id, inbound))
    }

    pub(crate) fn clear(&mut self) {
        self.open.clear();
        self.by_wire.clear();
    }
}
