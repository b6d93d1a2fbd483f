//! The initialize handshake: the request the session sends and what it does with the answer.

use serde::Deserialize;
use serde_json::value::RawValue;

use super::super::{CloseReason, Era, ProtocolVersion, ServerState, Session};
use crate::jsonrpc::{self, ErrorObject};
use crate::types::{Implementation, InitializeParams, ServerCapabilities};

/// The initialize result, read leniently: only `protocolVersion` is required. A server that
/// omits `capabilities` or `serverInfo` (some do) still works.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct InitializeAnswer {
    protocol_version: String,
    #[serde(default)]
    capabilities: ServerCapabilities,
    #[serde(default)]
    server_info: Option<Implementation>,
    #[serde(default)]
    instructions: Option<String>,
}

impl Session {
    pub(in crate::session) fn initialize_params(&self) -> Box<RawValue> {
        let params = InitializeParams {
            protocol_version: self.handshake.initialize_version().as_str().to_owned(),
            capabilities: self.config.capabilities.clone(),
            client_info: self.config.client_info.clone(),
            ..InitializeParams::default()
        };
        // Invariant: the typed params hold only strings, booleans and JSON maps.
        jsonrpc::to_raw(&params).expect("initialize params serialize")
    }

    /// The answer to `initialize` arrived.
    pub(in crate::session) fn finish_handshake(
        &mut self,
        now: crate::time::Instant,
        answer: Result<Box<RawValue>, ErrorObject>,
    ) {
        let raw = match answer {
            Ok(raw) => raw,
            Err(e) if self.try_reprobe(format!("initialize: {e}")) => return,
            Err(e) => return self.close_with(CloseReason::HandshakeRejected(e)),
        };
        let answer: InitializeAnswer = match serde_json::from_str(raw.get()) {
            Ok(a) => a,
            Err(e) if self.try_reprobe(format!("invalid initialize result: {e}")) => return,
            Err(e) => return self.close_with(CloseReason::InvalidHandshake(e.to_string())),
        };
        let version = ProtocolVersion::parse(&answer.protocol_version)
            .filter(|v| v.era() == Era::Initialize && self.config.supported_versions.contains(v));
        let Some(version) = version else {
            let supported = self
                .config
                .supported_versions
                .iter()
                .map(|v| v.as_str())
                .collect();
            return self.close_with(CloseReason::UnsupportedVersion {
                offered: answer.protocol_version,
                supported,
            });
        };
        self.server = Some(ServerState {
            version,
            info: answer
                .server_info
                .unwrap_or_else(|| Implementation::new("unknown", "")),
            capabilities: answer.capabilities,
            instructions: answer.instructions,
        });
        self.become_ready(now, version);
    }
}
