//! Frames that cannot be decoded still complete what they can: the id of a response whose
//! bytes are not UTF-8 or not valid JSON, found by a forgiving scan of its top-level members,
//! so that the request it answers fails at once instead of waiting for its timeout.

use super::{Diagnostic, RequestError, Session, SessionState};
use crate::jsonrpc::{ErrorObject, Id};
use crate::time::Instant;

/// Why a frame could not be decoded.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Undecodable {
    /// Not UTF-8; the longest valid prefix is this long.
    Utf8 { valid_up_to: usize },
    /// UTF-8, but not JSON (or JSON but not a JSON-RPC message).
    Json,
}

/// The id of the response `bytes` look like, if they look like one: a top-level `"id"` member
/// holding a number or a string, a top-level `"result"` or `"error"` member, and no
/// `"method"` member (a server request's id is in the server's id space, not ours). The scan
/// forgives what made the frame undecodable: bytes that are not UTF-8 inside strings, a value
/// that is not valid JSON, a frame cut off in the middle. It reads every member only once
/// and allocates nothing but the id.
pub(crate) fn response_id(bytes: &[u8]) -> Option<Id> {
    let mut s = Scanner { bytes, at: 0 };
    s.skip_ws();
    if !s.eat(b'{') {
        return None;
    }
    let (mut id, mut answer, mut method) = (None, false, false);
    loop {
        s.skip_ws();
        let Some(key) = s.string() else {
            break;
        };
        s.skip_ws();
        if !s.eat(b':') {
            break;
        }
        s.skip_ws();
        let start = s.at;
        let complete = s.skip_value();
        match key {
            b"id" => {
                id = serde_json::from_slice::<Id>(&bytes[start..s.at])
                    .ok()
                    .filter(|_| complete);
            }
            b"result" | b"error" => answer = true,
            b"method" => method = true,
            _ => {}
        }
        s.skip_ws();
        if !complete || !s.eat(b',') {
            break;
        }
    }
    id.filter(|_| answer && !method)
}

/// A cursor over the bytes of a frame.
struct Scanner<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Scanner<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn eat(&mut self, b: u8) -> bool {
        let hit = self.peek() == Some(b);
        if hit {
            self.at += 1;
        }
        hit
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// A string's raw content (escapes kept), or `None` if there is no complete string here.
    fn string(&mut self) -> Option<&'a [u8]> {
        if !self.eat(b'"') {
            return None;
        }
        let start = self.at;
        while let Some(b) = self.peek() {
            self.at += 1;
            match b {
                b'\\' => self.at += 1,
                b'"' => return Some(&self.bytes[start..self.at - 1]),
                _ => {}
            }
        }
        None
    }

    /// Skips one value of any shape (nesting tracked, strings skipped whole, other tokens up
    /// to the next delimiter). Returns whether the value ended before the input did.
    fn skip_value(&mut self) -> bool {
        let mut depth = 0usize;
        loop {
            let Some(b) = self.peek() else {
                return false;
            };
            match b {
                b'"' => {
                    if self.string().is_none() {
                        return false;
                    }
                }
                b'{' | b'[' => {
                    depth += 1;
                    self.at += 1;
                }
                b'}' | b']' if depth == 0 => return true,
                b'}' | b']' => {
                    depth -= 1;
                    self.at += 1;
                }
                b',' if depth == 0 => return true,
                _ => self.at += 1,
            }
            if depth == 0
                && matches!(
                    self.bytes.get(self.at.wrapping_sub(1)),
                    Some(b'"' | b'}' | b']')
                )
            {
                return true;
            }
        }
    }
}

impl Session {
    /// A frame that could not be decoded: if it is the answer to a pending request, that
    /// request completes now with [`RequestError::InvalidResponse`] (and during the handshake,
    /// an undecodable `initialize` answer closes the session); `diagnostic` is reported
    /// either way.
    pub(crate) fn handle_undecodable(
        &mut self,
        bytes: &[u8],
        why: Undecodable,
        diagnostic: Diagnostic,
    ) {
        self.report(diagnostic);
        let Some(wire) = response_id(bytes).and_then(|id| id.as_u64()) else {
            return;
        };
        let detail = match why {
            Undecodable::Utf8 { valid_up_to } => {
                format!("the answer is not valid UTF-8 (invalid byte at offset {valid_up_to})")
            }
            Undecodable::Json => super::event::UNREADABLE_ANSWER.to_owned(),
        };
        if self.handshake.awaits(wire) {
            if !self.discover_mode() {
                self.close_with(super::CloseReason::InvalidHandshake(detail));
            }
            return;
        }
        if let Some(handle) = self.pending.by_wire(wire) {
            self.complete(handle, Err(RequestError::InvalidResponse(detail)));
        }
    }

    /// An error response naming no request (`"id": null`): reported as a diagnostic, and when
    /// it can only be the answer to one request (exactly one request pending and sent, or
    /// during the handshake nothing but `initialize`), that request fails with it.
    pub(crate) fn handle_uncorrelated_error(&mut self, now: Instant, error: ErrorObject) {
        self.report(Diagnostic::UncorrelatedError(error.clone()));
        let wire = match self.state {
            SessionState::Handshaking if !self.pending.any_sent() => Some(self.handshake.wire()),
            SessionState::Ready => self.pending.sole_sent().map(|(_, wire)| wire),
            _ => None,
        };
        if let Some(wire) = wire {
            // An error answer carries no payload to check: this cannot be `InvalidPayload`.
            let _routed = self.handle_answer(now, Id::from(wire), Err(error));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(text: &[u8]) -> Option<Id> {
        response_id(text)
    }

    #[test]
    fn ids_of_broken_responses() {
        let n = |v: u64| Some(Id::from(v));
        assert_eq!(
            id(b"{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"t\":\"\xff\xfe\"}}"),
            n(7)
        );
        assert_eq!(
            id(b"{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[{\"t"),
            n(7)
        );
        assert_eq!(id(b" { \"result\" : {\"a\":tru}, \"id\" : 12 } "), n(12));
        assert_eq!(
            id(br#"{"id":"s-1","error":{"code":1,"message":"cut"#),
            Some(Id::from("s-1"))
        );
        assert_eq!(id(br#"{"error":{"code":1},"id":3,"jsonrpc":"2.0""#), n(3));
    }

    #[test]
    fn no_id_for_what_is_not_a_response() {
        // A server request: its id is the server's.
        assert_eq!(
            id(br#"{"jsonrpc":"2.0","id":7,"method":"ping","params":{"a":"#),
            None
        );
        assert_eq!(
            id(br#"{"jsonrpc":"2.0","method":"x","id":7,"result":1}"#),
            None
        );
        // No result or error member (yet).
        assert_eq!(id(br#"{"jsonrpc":"2.0","id":7"#), None);
        // The id itself is cut or not an id.
        assert_eq!(id(br#"{"result":1,"id":7"#), None);
        assert_eq!(id(br#"{"result":1,"id":[7]}"#), None);
        assert_eq!(id(br#"{"result":1,"id":null}"#), None);
        assert_eq!(id(b"Server listening"), None);
        assert_eq!(id(b""), None);
        assert_eq!(id(b"[1,2]"), None);
    }
}
