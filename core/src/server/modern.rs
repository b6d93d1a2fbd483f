//! The 2026-07-28 side of the server session: `server/discover`, the per-request `_meta`
//! envelope (read and checked on every request), the refusals of that era, and the members a
//! 2026 result carries (`resultType`, `_meta["io.modelcontextprotocol/serverInfo"]`).
//!
//! The era has no handshake: each request names its own protocol version, client
//! capabilities and client info, and the server must not infer capabilities from earlier
//! requests. A session enters the era with the first request that carries a valid envelope
//! (`server/discover` alone does not pin it, so a client that probed may still send
//! `initialize`); from then on a request without the envelope gets `-32602`, `initialize`
//! is refused, and the methods the era removed (`ping`, `logging/setLevel`,
//! `resources/subscribe`, `resources/unsubscribe`) get `-32601`.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::{ServerSession, ServerState};
use crate::jsonrpc::{ErrorObject, Id, to_raw};
use crate::session::{Era, ProtocolVersion, meta};
use crate::types::v2026::{META_SERVER_INFO, ResultType, UNSUPPORTED_PROTOCOL_VERSION};
use crate::types::{ClientCapabilities, Implementation, LoggingLevel, ServerCapabilities};

/// Methods the 2026-07-28 revision removed: a session in that era answers them `-32601`.
const REMOVED_METHODS: [&str; 4] = [
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
];

/// Whether the 2026-07-28 revision removed `method` (`-32601` there).
pub(super) fn removed_in_2026(method: &str) -> bool {
    REMOVED_METHODS.contains(&method)
}

/// What a 2026-07-28 request says about its client, read from its `params._meta`. It holds
/// for that request only (the spec forbids inferring capabilities from earlier requests).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct RequestEnvelope {
    /// `io.modelcontextprotocol/protocolVersion`: a version of the discover era this server
    /// speaks (others are refused with `-32022`).
    pub version: ProtocolVersion,
    /// `io.modelcontextprotocol/clientCapabilities` (`{}`: none).
    pub capabilities: ClientCapabilities,
    /// `io.modelcontextprotocol/clientInfo`, when the client sent it (it SHOULD). Self-reported:
    /// for display and logs, not for decisions.
    pub client_info: Option<Implementation>,
    /// `io.modelcontextprotocol/logLevel`: the lowest level of log messages the client wants
    /// for this request; absent, it wants none
    /// (see [`log_for`](ServerSession::log_for)).
    pub log_level: Option<LoggingLevel>,
}

/// The outcome of reading a request's envelope.
#[derive(Debug)]
pub(super) enum EnvelopeRead {
    /// No `_meta["io.modelcontextprotocol/protocolVersion"]`: an initialize-era request (or a
    /// 2026 request missing its envelope, which the era refuses).
    Absent,
    /// An envelope the spec refuses: the error to answer with.
    Invalid(ErrorObject),
    /// A valid envelope (boxed: it is what the request event carries).
    Valid(Box<RequestEnvelope>),
}

#[derive(Deserialize)]
struct WithMeta<'a> {
    #[serde(rename = "_meta", borrow, default)]
    meta: Option<&'a RawValue>,
}

/// The envelope's keys, raw: each is decoded on its own so a bad one gets a precise error.
#[derive(Deserialize)]
struct RawEnvelope<'a> {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", borrow, default)]
    version: Option<&'a RawValue>,
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities", borrow, default)]
    capabilities: Option<&'a RawValue>,
    #[serde(rename = "io.modelcontextprotocol/clientInfo", borrow, default)]
    client_info: Option<&'a RawValue>,
    #[serde(rename = "io.modelcontextprotocol/logLevel", borrow, default)]
    log_level: Option<&'a RawValue>,
}

/// Reads the envelope of a request's params. `speaks` are the discover-era versions the
/// server is configured for (a version outside it gets `-32022` listing them).
pub(super) fn read_envelope(params: Option<&RawValue>, speaks: &[ProtocolVersion]) -> EnvelopeRead {
    // Only an object has members (serde would read a struct from an array too).
    // Nor does one whose text cannot name `_meta` (no parse needed to know).
    let Some(params) = params.filter(|p| {
        p.get().trim_start().starts_with('{') && super::meta_presence::may_hold_meta(p.get())
    }) else {
        return EnvelopeRead::Absent;
    };
    // Params that are not an object carry no envelope.
    let Ok(WithMeta { meta: Some(raw) }) = serde_json::from_str::<WithMeta<'_>>(params.get())
    else {
        return EnvelopeRead::Absent;
    };
    if raw.get() == "null" {
        return EnvelopeRead::Absent;
    }
    let keys = match serde_json::from_str::<RawEnvelope<'_>>(raw.get()) {
        Ok(keys) => keys,
        Err(e) => return EnvelopeRead::Invalid(invalid(format!("params._meta: {e}"))),
    };
    let Some(version) = keys.version.filter(|v| v.get() != "null") else {
        return EnvelopeRead::Absent;
    };
    let Ok(requested) = serde_json::from_str::<String>(version.get()) else {
        return EnvelopeRead::Invalid(invalid(
            "io.modelcontextprotocol/protocolVersion must be a string".into(),
        ));
    };
    let Some(version) = ProtocolVersion::parse(&requested).filter(|v| speaks.contains(v)) else {
        return EnvelopeRead::Invalid(unsupported_version(&requested, speaks));
    };
    let Some(capabilities) = keys.capabilities else {
        return EnvelopeRead::Invalid(invalid(
            "params._meta lacks io.modelcontextprotocol/clientCapabilities (required; {} declares none)"
                .into(),
        ));
    };
    let capabilities = match serde_json::from_str::<ClientCapabilities>(capabilities.get()) {
        Ok(c) => c,
        Err(e) => {
            return EnvelopeRead::Invalid(invalid(format!(
                "io.modelcontextprotocol/clientCapabilities: {e}"
            )));
        }
    };
    let client_info = match keys.client_info.map(|i| serde_json::from_str(i.get())) {
        None => None,
        Some(Ok(info)) => Some(info),
        Some(Err(e)) => {
            return EnvelopeRead::Invalid(invalid(format!(
                "io.modelcontextprotocol/clientInfo: {e}"
            )));
        }
    };
    let log_level = match keys.log_level.map(|l| serde_json::from_str(l.get())) {
        None => None,
        Some(Ok(level)) => Some(level),
        Some(Err(e)) => {
            return EnvelopeRead::Invalid(invalid(format!(
                "io.modelcontextprotocol/logLevel: {e}"
            )));
        }
    };
    EnvelopeRead::Valid(Box::new(RequestEnvelope {
        version,
        capabilities,
        client_info,
        log_level,
    }))
}

/// Whether a 2026 method's complete result is a `CacheableResult` (`ttlMs` and `cacheScope`
/// required).
#[must_use]
pub(super) fn cacheable(method: &str) -> bool {
    matches!(
        method,
        "tools/list"
            | "prompts/list"
            | "resources/list"
            | "resources/templates/list"
            | "resources/read"
    )
}

fn invalid(message: String) -> ErrorObject {
    ErrorObject::new(ErrorObject::INVALID_PARAMS, message)
}

/// `-32022` with `data: {supported, requested}`, as the 2026-07-28 schema defines it.
#[must_use]
pub(super) fn unsupported_version(requested: &str, supported: &[ProtocolVersion]) -> ErrorObject {
    #[derive(Serialize)]
    struct Data<'a> {
        supported: Vec<&'static str>,
        requested: &'a str,
    }
    let data = Data {
        supported: newest_first(supported),
        requested,
    };
    ErrorObject {
        code: UNSUPPORTED_PROTOCOL_VERSION,
        message: format!("Unsupported protocol version: {requested:?}"),
        // A list of strings and a string always serialize.
        data: to_raw(&data).ok(),
    }
}

fn newest_first(versions: &[ProtocolVersion]) -> Vec<&'static str> {
    let mut out: Vec<ProtocolVersion> = versions.to_vec();
    out.sort_unstable_by(|a, b| b.cmp(a));
    out.dedup();
    out.into_iter().map(ProtocolVersion::as_str).collect()
}

/// The `DiscoverResult` this server answers with.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Discovered<'a> {
    supported_versions: Vec<&'static str>,
    capabilities: ServerCapabilities,
    #[serde(skip_serializing_if = "Option::is_none")]
    instructions: Option<&'a str>,
    result_type: &'static str,
    ttl_ms: u64,
    cache_scope: &'static str,
    #[serde(rename = "_meta")]
    meta: ServerInfoMeta<'a>,
}

#[derive(Serialize)]
struct ServerInfoMeta<'a> {
    #[serde(rename = "io.modelcontextprotocol/serverInfo")]
    server_info: &'a Implementation,
}

impl ServerSession {
    /// The discover-era versions this session is configured to speak (empty: it speaks only
    /// the initialize era, and answers `server/discover` with `-32601`).
    pub(super) fn modern_versions(&self) -> Vec<ProtocolVersion> {
        self.config
            .versions
            .iter()
            .copied()
            .filter(|v| v.era() == Era::Discover)
            .collect()
    }

    /// Answers `server/discover`: its `DiscoverResult` when the session speaks the discover
    /// era and the request's envelope is valid, `-32602` / `-32022` when it is not, `-32601`
    /// when the session speaks only the initialize era (a probing client then falls back).
    /// It answers in any state and does not pin the era; it stops the handshake timer (the
    /// client is talking).
    pub(super) fn handle_discover(&mut self, id: Id, params: Option<&RawValue>) {
        let method = "server/discover";
        let speaks = self.modern_versions();
        if speaks.is_empty() {
            return self.answer_by_session(id, Err(ErrorObject::method_not_found(method)), None);
        }
        self.limits.handshake_deadline = None;
        let answer = match read_envelope(params, &speaks) {
            EnvelopeRead::Absent => Err(invalid(
                "server/discover needs params._meta with io.modelcontextprotocol/protocolVersion and io.modelcontextprotocol/clientCapabilities".into(),
            )),
            EnvelopeRead::Invalid(e) => Err(e),
            EnvelopeRead::Valid(_) => {
                // Tasks are an extension in this revision, not a capability: not announced.
                let capabilities = ServerCapabilities {
                    tasks: None,
                    ..self.config.capabilities.clone()
                };
                let result = Discovered {
                    supported_versions: newest_first(&speaks),
                    capabilities,
                    instructions: self.config.instructions.as_deref(),
                    result_type: "complete",
                    ttl_ms: u64::try_from(self.config.discover_ttl.as_millis()).unwrap_or(u64::MAX),
                    cache_scope: "public",
                    meta: ServerInfoMeta {
                        server_info: &self.config.server_info,
                    },
                };
                to_raw(&result)
                    .map_err(|e| ErrorObject::new(ErrorObject::INTERNAL_ERROR, e.to_string()))
            }
        };
        self.answer_by_session(id, answer, Some(method));
    }

    /// Reads a client request's envelope where the era needs it. `Ok(Some)`: a 2026 request,
    /// handed to the host with its envelope (the first one pins the session to the era);
    /// `Ok(None)`: an initialize-era request; `Err`: the error to answer with.
    pub(super) fn admit_envelope(
        &mut self,
        method: &str,
        params: Option<&RawValue>,
    ) -> Result<Option<Box<RequestEnvelope>>, ErrorObject> {
        if matches!(self.state, ServerState::Initializing | ServerState::Ready) {
            // The initialize era: `_meta` members are the host's business.
            return Ok(None);
        }
        let speaks = self.modern_versions();
        if speaks.is_empty() {
            return Ok(None);
        }
        let envelope = match read_envelope(params, &speaks) {
            EnvelopeRead::Valid(envelope) => envelope,
            EnvelopeRead::Invalid(e) => return Err(e),
            EnvelopeRead::Absent if self.state == ServerState::PerRequest => {
                return Err(invalid(format!(
                    "{method}: params._meta lacks io.modelcontextprotocol/protocolVersion (required on every request in protocol version 2026-07-28)"
                )));
            }
            EnvelopeRead::Absent => return Ok(None),
        };
        if REMOVED_METHODS.contains(&method) {
            return Err(ErrorObject::new(
                ErrorObject::METHOD_NOT_FOUND,
                format!(
                    "Method not found: {method} is not part of protocol version {}",
                    envelope.version
                ),
            ));
        }
        if self.state == ServerState::AwaitingInitialize {
            self.state = ServerState::PerRequest;
            self.limits.handshake_deadline = None;
        }
        self.modern_version = Some(envelope.version);
        Ok(Some(envelope))
    }

    /// A 2026 result as the era wants it: `resultType` (`"complete"` unless the host set
    /// one, e.g. `"input_required"`), the server's info in `_meta`, and for a complete result
    /// of a cacheable method (see [`cacheable`]) the required cache hints, when the host gave
    /// none: `ttlMs: 0` and `cacheScope: "private"` (immediately stale, never shared: the
    /// session cannot know more). A result that is not an object, or whose `_meta` is not
    /// one, is left as the host gave it.
    pub(super) fn complete_modern_result(
        &self,
        result: Box<RawValue>,
        cacheable: bool,
    ) -> Box<RawValue> {
        let Some([has_type, has_ttl, has_scope]) =
            meta::has_members(result.get(), ["resultType", "ttlMs", "cacheScope"])
        else {
            return result;
        };
        let Ok(info) = to_raw(&self.config.server_info) else {
            return result;
        };
        // Invariant: these literals are JSON.
        let json = |s: &str| RawValue::from_string(s.to_owned()).expect("a JSON literal");
        let (complete, zero, private) = (json("\"complete\""), json("0"), json("\"private\""));
        let mut top: Vec<(&str, Option<&RawValue>)> = Vec::new();
        if !has_type {
            top.push(("resultType", Some(&complete)));
        }
        // A result the host typed otherwise (`input_required`) is never cached.
        let is_complete = !has_type || ResultType::of(&result) == ResultType::Complete;
        if cacheable && is_complete {
            if !has_ttl {
                top.push(("ttlMs", Some(&zero)));
            }
            if !has_scope {
                top.push(("cacheScope", Some(&private)));
            }
        }
        meta::splice(Some(result.get()), &top, &[(META_SERVER_INFO, &info)]).unwrap_or(result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_owned()).unwrap()
    }

    const SPEAKS: [ProtocolVersion; 1] = [ProtocolVersion::V2026_07_28];

    fn read(params: &str) -> EnvelopeRead {
        read_envelope(Some(&raw(params)), &SPEAKS)
    }

    #[test]
    fn a_full_envelope_is_read() {
        let r = read(
            r#"{"name":"x","_meta":{"progressToken":1,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"2"},"io.modelcontextprotocol/logLevel":"warning"}}"#,
        );
        let EnvelopeRead::Valid(e) = r else {
            panic!("{r:?}")
        };
        assert_eq!(e.version, ProtocolVersion::V2026_07_28);
        assert!(e.capabilities.elicitation.is_some());
        assert_eq!(e.client_info.unwrap().name, "c");
        assert_eq!(e.log_level, Some(LoggingLevel::Warning));
    }

    #[test]
    fn no_version_is_no_envelope() {
        for params in [
            "{}",
            "null",
            "[1]",
            r#"{"_meta":null}"#,
            r#"{"_meta":{"progressToken":3}}"#,
            r#"{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}"#,
        ] {
            assert!(matches!(read(params), EnvelopeRead::Absent), "{params}");
        }
        assert!(matches!(read_envelope(None, &SPEAKS), EnvelopeRead::Absent));
    }

    #[test]
    fn an_unknown_version_gets_32022_listing_the_supported() {
        let EnvelopeRead::Invalid(e) =
            read(r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"1900-01-01"}}"#)
        else {
            panic!()
        };
        assert_eq!(e.code, -32022);
        assert_eq!(
            e.data.unwrap().get(),
            r#"{"supported":["2026-07-28"],"requested":"1900-01-01"}"#
        );
        // An initialize-era version is not one of this era's.
        let EnvelopeRead::Invalid(e) = read(
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":{}}}"#,
        ) else {
            panic!()
        };
        assert_eq!(e.code, -32022);
    }

    #[test]
    fn bad_or_missing_keys_get_32602() {
        for params in [
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#,
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":7}}"#,
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":[]}}"#,
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":1}}}"#,
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"loud"}}"#,
            r#"{"_meta":[1,2]}"#,
        ] {
            match read(params) {
                EnvelopeRead::Invalid(e) => assert_eq!(e.code, -32602, "{params}"),
                other => panic!("{params}: {other:?}"),
            }
        }
    }
}
