//! When a response says the server no longer knows the session: the rule that starts a fresh
//! session (a new `initialize` without the old `Mcp-Session-Id`, then the lost requests
//! re-sent).
//!
//! The rule, for an exchange that carried the session id:
//!
//! - **404** to a POST, or to the GET listener stream that this session had open: the spec's
//!   signal ("When a client receives HTTP 404 in response to a request containing an
//!   `Mcp-Session-Id`, it MUST start a new session"). Decided on the status alone. A first
//!   GET's 404 (or 400, 405) is "no listener here".
//! - **400** to the same exchanges (a POST, or the GET of a listener this session had open)
//!   whose body is a JSON-RPC error whose message says the session id is not
//!   valid ([`says_session_unknown`]): what servers built on the TypeScript SDK's examples
//!   (npm `server-everything` among them) answer for an id they do not know, a restarted
//!   server's answer to every request (and every listener reconnection) of its former
//!   clients, e.g.
//!   `400 {"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID
//!   provided"},"id":null}`. Any other 400 stays the request's own failure: a 400 may be about
//!   the request itself, and re-initializing for it would drop the session's state and resend
//!   the same bad request.
//!
//! Either way a second one in a row, before any request of the fresh session was answered,
//! ends the connection instead of looping on re-initializations.
//!
//! Other clients, for comparison: the TypeScript and Python SDK clients re-initialize on
//! neither (a 404 is a terminal error there); the Rust SDK re-initializes once on 404 only.
//! Recognizing the TypeScript servers' 400 is what lets a client recover when those servers
//! restart.

use super::exchange::{ExchangeId, Method, Purpose};

/// The exchange an answer came to, as the rule tells them apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Asked {
    /// A POST.
    Post,
    /// The GET of the listener stream, which this session had open before (a reconnection).
    ListenerThatWorked,
    /// Anything else: a first listener GET, a resumption, a DELETE.
    Other,
}

impl Asked {
    /// The exchange sent with `method`; `listener_worked` when it is the GET of a listener
    /// whose stream this session had accepted before.
    pub(crate) fn of(method: Method, listener_worked: bool) -> Self {
        match method {
            Method::Post => Asked::Post,
            Method::Get if listener_worked => Asked::ListenerThatWorked,
            _ => Asked::Other,
        }
    }
}

impl super::connection::Connection {
    /// Which exchange `id` is, as the rule tells them apart: a POST, the GET of a listener
    /// whose stream this session had accepted before, or another.
    pub(super) fn asked(&self, id: ExchangeId) -> Asked {
        let Some(x) = self.exchanges.get(id) else {
            return Asked::Other;
        };
        let listener_worked = x.purpose == Purpose::Listen
            && self
                .streams
                .of_exchange(id)
                .and_then(|sid| self.streams.get(sid))
                .is_some_and(|s| s.accepted);
        Asked::of(x.method, listener_worked)
    }
}

/// Whether `status` to `asked` (which carried the session id when `had_session_id`) says the
/// server forgot the session on its status alone: a 404.
pub(crate) fn is_session_gone_404(status: u16, asked: Asked, had_session_id: bool) -> bool {
    status == 404 && had_session_id && asked != Asked::Other
}

/// Whether the body of `status` to `asked` must be read before the rule can say: a 400 that
/// [`is_unknown_session_400`] decides once the body is in.
pub(crate) fn may_say_session_unknown(status: u16, asked: Asked, had_session_id: bool) -> bool {
    status == 400 && had_session_id && asked != Asked::Other
}

/// Whether a 400 (`status`) to `asked` (which carried the session id when `had_session_id`)
/// with body `body` (the excerpt read of it) says the server does not know the session id: a
/// POST or a reconnecting listener's GET that carried the id, answered with a JSON-RPC error
/// naming the session id as not valid ([`says_session_unknown`]).
pub(crate) fn is_unknown_session_400(
    status: u16,
    asked: Asked,
    had_session_id: bool,
    body: &[u8],
) -> bool {
    may_say_session_unknown(status, asked, had_session_id) && says_session_unknown(body)
}

/// Whether `body` is a JSON-RPC error response whose `error.message` names the session (the
/// word "session") as not valid: "invalid", "not valid", "no valid", "unknown", "not found",
/// "expired" or "terminated" (case-insensitive). Anything else (not JSON, no error object,
/// another message) is not.
pub fn says_session_unknown(body: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Response {
        error: Error,
    }
    #[derive(serde::Deserialize)]
    struct Error {
        message: String,
    }
    let Ok(response) = serde_json::from_slice::<Response>(body) else {
        return false;
    };
    let message = response.error.message.to_ascii_lowercase();
    const NOT_VALID: [&str; 7] = [
        "invalid",
        "not valid",
        "no valid",
        "unknown",
        "not found",
        "expired",
        "terminated",
    ];
    message.contains("session") && NOT_VALID.iter().any(|w| message.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_typescript_servers_unknown_session_answers_are_recognized() {
        for body in [
            r#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}"#,
            r#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"Invalid or missing session ID"},"id":null}"#,
            r#"{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}"#,
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"Unknown session"}}"#,
        ] {
            assert!(says_session_unknown(body.as_bytes()), "{body}");
            for asked in [Asked::Post, Asked::ListenerThatWorked] {
                assert!(is_unknown_session_400(400, asked, true, body.as_bytes()));
            }
        }
    }

    #[test]
    fn other_400s_are_the_requests_own_failure() {
        for body in [
            // About the request, not the session.
            r#"{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params"},"id":1}"#,
            r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Bad Request: Server not initialized"},"id":null}"#,
            // Names the session, but not as unknown.
            r#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"session busy"},"id":null}"#,
            // Not a JSON-RPC error.
            "Invalid or missing session ID",
            r#"{"message":"invalid session"}"#,
            "",
        ] {
            assert!(!says_session_unknown(body.as_bytes()), "{body}");
        }
    }

    #[test]
    fn only_a_post_or_a_reconnecting_listener_that_carried_the_session_id_and_got_400_counts() {
        let body = br#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}"#;
        for asked in [Asked::Post, Asked::ListenerThatWorked] {
            assert!(is_unknown_session_400(400, asked, true, body));
            assert!(!is_unknown_session_400(400, asked, false, body));
            assert!(!is_unknown_session_400(500, asked, true, body));
            assert!(!is_unknown_session_400(422, asked, true, body));
        }
        // A first GET, a resumption, a DELETE: the rule does not cover them.
        assert!(!is_unknown_session_400(400, Asked::Other, true, body));
        assert!(!may_say_session_unknown(400, Asked::Other, true));
    }

    #[test]
    fn a_404_counts_for_a_post_or_a_reconnecting_listener_that_carried_the_session_id() {
        assert!(is_session_gone_404(404, Asked::Post, true));
        assert!(is_session_gone_404(404, Asked::ListenerThatWorked, true));
        assert!(!is_session_gone_404(404, Asked::Other, true));
        assert!(!is_session_gone_404(404, Asked::Post, false));
        assert!(!is_session_gone_404(400, Asked::Post, true));
    }

    #[test]
    fn the_exchange_is_told_by_its_method_and_whether_the_listener_worked() {
        assert_eq!(Asked::of(Method::Post, false), Asked::Post);
        assert_eq!(Asked::of(Method::Get, true), Asked::ListenerThatWorked);
        assert_eq!(Asked::of(Method::Get, false), Asked::Other);
        assert_eq!(Asked::of(Method::Delete, true), Asked::Other);
    }
}
