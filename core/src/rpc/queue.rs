//! The outbound queue both sessions hold: messages waiting for the transport, with the bytes
//! they hold, so each session can bound what a peer that stops reading makes it keep.

use std::collections::VecDeque;

use serde_json::value::RawValue;

use crate::jsonrpc::{ErrorObject, Id};

/// What a queued message holds in memory: its inline size and the payload it owns (an
/// estimate: the bound it serves is a budget, not an exact count).
pub(crate) trait Cost {
    fn cost(&self) -> usize;
}

/// Messages in the order they go out, and the sum of their [`Cost`].
#[derive(Debug)]
pub(crate) struct OutboundQueue<T> {
    items: VecDeque<T>,
    bytes: usize,
}

impl<T> Default for OutboundQueue<T> {
    fn default() -> Self {
        OutboundQueue {
            items: VecDeque::new(),
            bytes: 0,
        }
    }
}

impl<T: Cost> OutboundQueue<T> {
    pub(crate) fn push_back(&mut self, item: T) {
        self.bytes = self.bytes.saturating_add(item.cost());
        self.items.push_back(item);
    }

    pub(crate) fn pop_front(&mut self) -> Option<T> {
        let item = self.items.pop_front()?;
        self.bytes = self.bytes.saturating_sub(item.cost());
        Some(item)
    }

    pub(crate) fn clear(&mut self) {
        self.items.clear();
        self.bytes = 0;
    }

    /// Takes every queued message, in order.
    pub(crate) fn take_all(&mut self) -> VecDeque<T> {
        self.bytes = 0;
        std::mem::take(&mut self.items)
    }

    /// The bytes the queued messages hold (estimated).
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }
}

/// The payload an answer owns: a string id's text and the result's, or the error's message
/// and data.
pub(crate) fn answer_payload(id: &Id, result: &Result<Box<RawValue>, ErrorObject>) -> usize {
    let id = match id {
        Id::String(s) => s.len(),
        Id::Number(_) => 0,
    };
    id + match result {
        Ok(r) => r.get().len(),
        Err(e) => error_payload(e),
    }
}

/// The payload an error object owns: its message and data.
pub(crate) fn error_payload(e: &ErrorObject) -> usize {
    e.message.len() + e.data.as_ref().map_or(0, |d| d.get().len())
}
