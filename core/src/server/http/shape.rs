//! What a POST body holds, read before it reaches a session: its requests' ids, and whether
//! it initializes one.

use super::Refusal;
use crate::jsonrpc::{DecodeError, DecodedRef, Id, MessageRef};

/// What a POST body holds, read before it reaches a session.
pub(super) struct BodyShape {
    /// The ids of its requests.
    pub(super) requests: Vec<Id>,
    /// Whether it holds an `initialize` request.
    pub(super) initialize: bool,
}

impl BodyShape {
    /// The shape of a body from its decode (the POST's one decode, which the session then
    /// routes). [`Refusal::NotJson`] for a body that is not JSON, [`Refusal::InvalidBody`] for JSON of
    /// no message's shape (an empty batch included); a batch with some bad elements is read
    /// (the session answers those).
    pub(super) fn of_decoded(
        decoded: &Result<DecodedRef<'_>, DecodeError>,
    ) -> Result<BodyShape, Refusal> {
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
        let decoded = decoded.as_ref().map_err(|e| match e {
            DecodeError::NotJson { .. } => Refusal::NotJson,
            _ => Refusal::InvalidBody,
        })?;
        match decoded {
            DecodedRef::Single(msg) => note(msg),
            DecodedRef::Batch(items) => {
                if items.is_empty() {
                    return Err(Refusal::InvalidBody);
                }
                for msg in items.iter().flatten() {
                    note(msg);
                }
            }
            #[allow(unreachable_patterns)] // non_exhaustive for other crates only
            _ => return Err(Refusal::InvalidBody),
        }
        Ok(shape)
    }
}
