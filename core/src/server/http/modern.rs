//! Streamable HTTP in protocol 2026-07-28, the server's side: a POST whose
//! `MCP-Protocol-Version` is a 2026 version is one request, served by a session of its own
//! that ends once it is answered (no `Mcp-Session-Id`, which is ignored; GET and DELETE get
//! 405). Before it reaches a session, its headers are checked against its body and its
//! envelope is read, so that the errors the spec gives a status get it: `-32020` (a header
//! missing or not matching the body), `-32602` (no envelope), `-32022` (an unsupported
//! version), all 400; `-32601` (a method the revision removed, or of a capability the server
//! did not declare), 404. Pure functions.

use serde::Deserialize;
use serde_json::value::RawValue;

use super::{Output, Refusal, ResponseId, SessionKey, refusal_head};
use crate::http::headers::{CONTENT_TYPE, HeaderList};
use crate::http::modern::{MCP_METHOD, MCP_NAME, encode_header_value};
use crate::jsonrpc::{DecodedRef, ErrorObject, Id, MessageRef, decode};
use crate::server::modern::{EnvelopeRead, read_envelope, removed_in_2026};
use crate::session::ProtocolVersion;
use crate::time::Instant;
use crate::types::ServerCapabilities;
use crate::types::v2026::HEADER_MISMATCH;

/// What a 2026 POST holds, once its checks passed.
#[derive(Debug, PartialEq)]
pub(super) enum ModernPost {
    /// One request, for a session of its own.
    Request,
    /// A `subscriptions/listen`: a session of its own whose answer is an SSE stream that
    /// stays open (a client must accept `text/event-stream` for it).
    Listen,
    /// A notification or an answer: nothing for a server to do in this revision (a
    /// cancellation is the close of the request's stream), accepted with 202.
    Nothing,
}

/// A 2026 POST refused before any session: the status and the JSON-RPC error (with the
/// request's id when it had one).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ModernRejection {
    /// 400 or 404.
    pub status: u16,
    /// The request's id, when the body had one.
    pub id: Option<Id>,
    /// The error.
    pub error: ErrorObject,
}

// The error object compares by value (code, message, data bytes): a total equivalence.
impl Eq for ModernRejection {}

#[derive(Deserialize)]
struct Named<'a> {
    #[serde(borrow, default)]
    name: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    uri: Option<std::borrow::Cow<'a, str>>,
}

/// Checks a POST of protocol `version` (from its `MCP-Protocol-Version`, a 2026 version the
/// server speaks): one message, and for a request the headers against the body and the
/// envelope. `speaks`: the server's 2026 versions; `capabilities`: what it offers.
pub(super) fn check_post(
    headers: &HeaderList,
    body: &[u8],
    version: ProtocolVersion,
    speaks: &[ProtocolVersion],
    capabilities: &ServerCapabilities,
) -> Result<ModernPost, ModernRejection> {
    let reject = |status, id: Option<Id>, error| Err(ModernRejection { status, id, error });
    let message = match decode(body) {
        Ok(DecodedRef::Single(message)) => message,
        Ok(_) => {
            let error = ErrorObject::new(
                ErrorObject::INVALID_REQUEST,
                "Invalid Request: protocol version 2026-07-28 takes one message per POST",
            );
            return reject(400, None, error);
        }
        Err(_) => {
            let error = ErrorObject::new(
                ErrorObject::PARSE_ERROR,
                "Parse error: the body is not a JSON-RPC message",
            );
            return reject(400, None, error);
        }
    };
    let MessageRef::Request { id, method, params } = message else {
        return Ok(ModernPost::Nothing);
    };
    let params: Option<&RawValue> = params.and_then(|p| p.check().ok());
    let mismatch = |message: String| ErrorObject::new(HEADER_MISMATCH, message);
    match headers.get(MCP_METHOD).map(str::trim) {
        Some(m) if m == method => {}
        Some(m) => {
            let error = mismatch(format!(
                "Header mismatch: Mcp-Method {m:?} but the body's method is {method:?}"
            ));
            return reject(400, Some(id), error);
        }
        None => {
            return reject(
                400,
                Some(id),
                mismatch("Mcp-Method header is required".into()),
            );
        }
    }
    if matches!(&*method, "tools/call" | "resources/read" | "prompts/get") {
        let named = params
            .and_then(|p| serde_json::from_str::<Named<'_>>(p.get()).ok())
            .and_then(|n| {
                if method == "resources/read" {
                    n.uri
                } else {
                    n.name
                }
            });
        match (headers.get(MCP_NAME).map(str::trim), named) {
            (Some(h), Some(n)) if h == n || h == encode_header_value(&n) => {}
            (Some(h), n) => {
                let error = mismatch(format!(
                    "Header mismatch: Mcp-Name {h:?} but the body names {n:?}"
                ));
                return reject(400, Some(id), error);
            }
            (None, _) => {
                let error = mismatch(format!("Mcp-Name header is required for {method}"));
                return reject(400, Some(id), error);
            }
        }
    }
    let envelope = match read_envelope(params, speaks) {
        EnvelopeRead::Valid(envelope) => envelope,
        EnvelopeRead::Invalid(error) => return reject(400, Some(id), error),
        EnvelopeRead::Absent => {
            let error = ErrorObject::new(
                ErrorObject::INVALID_PARAMS,
                "params._meta lacks io.modelcontextprotocol/protocolVersion (required on every request in protocol version 2026-07-28)",
            );
            return reject(400, Some(id), error);
        }
    };
    if envelope.version != version {
        let error = mismatch(format!(
            "Header mismatch: MCP-Protocol-Version {version} but _meta names {}",
            envelope.version
        ));
        return reject(400, Some(id), error);
    }
    if method == "initialize"
        || removed_in_2026(&method)
        || !crate::server::dispatch::offered(capabilities, &method)
    {
        return reject(404, Some(id), ErrorObject::method_not_found(&method));
    }
    if method == "subscriptions/listen" {
        return Ok(ModernPost::Listen);
    }
    Ok(ModernPost::Request)
}

impl super::HttpServer {
    /// 202 for a POST that needs no session (a 2026 notification).
    pub(super) fn accept_without_requests_alone(&mut self, response: ResponseId) {
        let mut head = refusal_head(response, 202);
        if let Output::Head { headers, .. } = &mut head {
            headers.remove(CONTENT_TYPE);
        }
        self.out.push_back(head);
        self.out.push_back(Output::End { response });
    }

    /// The session of one 2026-07-28 request: no id, no implied handshake (the request
    /// carries its envelope), ended once answered.
    pub(super) fn open_transient(&mut self, now: Instant) -> Result<SessionKey, Refusal> {
        if self.entries.len() >= self.config.max_sessions {
            return Err(Refusal::TooManySessions {
                limit: self.config.max_sessions,
            });
        }
        let key = self.insert_entry(now, String::new());
        if let Some(entry) = self.entries.get_mut(&key) {
            entry.transient = true;
        }
        Ok(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ToolsCapability;

    const SPEAKS: [ProtocolVersion; 1] = [ProtocolVersion::V2026_07_28];
    const V: ProtocolVersion = ProtocolVersion::V2026_07_28;

    fn caps() -> ServerCapabilities {
        ServerCapabilities {
            tools: Some(ToolsCapability::default()),
            ..ServerCapabilities::default()
        }
    }

    fn headers(fields: &[(&str, &str)]) -> HeaderList {
        fields.iter().copied().collect()
    }

    fn call(name: &str, version: &str) -> String {
        format!(
            r#"{{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{{"name":"{name}","_meta":{{"io.modelcontextprotocol/protocolVersion":"{version}","io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#
        )
    }

    fn check(h: &[(&str, &str)], body: &str) -> Result<ModernPost, ModernRejection> {
        check_post(&headers(h), body.as_bytes(), V, &SPEAKS, &caps())
    }

    #[test]
    fn a_request_with_matching_headers_passes() {
        let h = [("mcp-method", "tools/call"), ("mcp-name", "echo")];
        assert_eq!(
            check(&h, &call("echo", "2026-07-28")),
            Ok(ModernPost::Request)
        );
        // A name sent in the base64 form matches too.
        let h = [
            ("mcp-method", "tools/call"),
            ("mcp-name", "=?base64?w7w=?="),
        ];
        assert_eq!(check(&h, &call("ü", "2026-07-28")), Ok(ModernPost::Request));
    }

    #[test]
    fn a_missing_or_wrong_header_is_32020_with_the_id() {
        for h in [
            &[("mcp-name", "echo")][..],
            &[("mcp-method", "tools/list"), ("mcp-name", "echo")],
            &[("mcp-method", "tools/call")],
            &[("mcp-method", "tools/call"), ("mcp-name", "other")],
        ] {
            let r = check(h, &call("echo", "2026-07-28")).unwrap_err();
            assert_eq!((r.status, r.error.code), (400, -32020), "{h:?}");
            assert_eq!(r.id, Some(Id::from(4)));
        }
    }

    #[test]
    fn the_meta_version_must_equal_the_header() {
        // The header says 2026-07-28; _meta names a version the server does not speak.
        let h = [("mcp-method", "tools/call"), ("mcp-name", "echo")];
        let r = check(&h, &call("echo", "2099-01-01")).unwrap_err();
        assert_eq!((r.status, r.error.code), (400, -32022));
        // No envelope at all.
        let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
        let r = check(&[("mcp-method", "tools/list")], body).unwrap_err();
        assert_eq!((r.status, r.error.code), (400, -32602));
    }

    #[test]
    fn removed_and_undeclared_methods_are_404() {
        for method in ["ping", "prompts/list", "initialize"] {
            let body = format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#
            );
            let r = check(&[("mcp-method", method)], &body).unwrap_err();
            assert_eq!((r.status, r.error.code), (404, -32601), "{method}");
        }
    }

    #[test]
    fn batches_and_garbage_are_400_and_notifications_are_nothing() {
        let r = check(&[], "[]").unwrap_err();
        assert_eq!(r.status, 400);
        let r = check(&[], "nope").unwrap_err();
        assert_eq!((r.status, r.error.code), (400, -32700));
        let note =
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#;
        assert_eq!(check(&[], note), Ok(ModernPost::Nothing));
    }
}
