//! What a POST body holds, read before it reaches a session: its requests' ids, and whether
//! it initializes one.

use crate::jsonrpc::{self, DecodedRef, Id, MessageRef};

/// What a POST body holds, read before it reaches a session.
pub(super) struct BodyShape {
    /// The ids of its requests.
    pub(super) requests: Vec<Id>,
    /// Whether it holds an `initialize` request.
    pub(super) initialize: bool,
}

impl BodyShape {
    /// `None` for a body that is not JSON-RPC at all (not JSON, or JSON of no message's
    /// shape); a batch with some bad elements is read (the session answers those).
    pub(super) fn of(body: &[u8]) -> Option<BodyShape> {
        let mut shape = BodyShape {
            requests: Vec::new(),
            initialize: false,
        };
        let mut note = |msg: &MessageRef<'_>| {
            if let MessageRef::Request { id, method, .. } = msg {
                shape.requests.push(id.clone());
                shape.initialize |= method == "initialize";
            }
        };
        match jsonrpc::decode(body).ok()? {
            DecodedRef::Single(msg) => note(&msg),
            DecodedRef::Batch(items) => {
                if items.is_empty() {
                    return None;
                }
                for msg in items.iter().flatten() {
                    note(msg);
                }
            }
            #[allow(unreachable_patterns)] // non_exhaustive for other crates only
            _ => return None,
        }
        Some(shape)
    }
}
