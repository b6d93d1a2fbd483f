//! The server's side of the handshake: `initialize` answered once, with version negotiation.

use serde_json::value::RawValue;

use super::{ClientState, Diagnostic, Event, ServerSession, ServerState};
use crate::jsonrpc::{ErrorObject, Id, to_raw};
use crate::session::{Era, ProtocolVersion};
use crate::types::{InitializeParams, InitializeResult};

/// The version to answer a client that asked for `requested`: the same when this session
/// speaks it (2024-11-05 to 2025-11-25), else the latest it speaks, which the client may then
/// refuse by disconnecting (the spec's rule).
#[must_use]
pub fn negotiate(requested: &str) -> ProtocolVersion {
    ProtocolVersion::parse(requested)
        .filter(|v| v.era() == Era::Initialize)
        .unwrap_or(ProtocolVersion::LATEST_INITIALIZE)
}

impl ServerSession {
    /// Answers `initialize`: once, with readable params; a second one, or unreadable params,
    /// gets a JSON-RPC error and changes nothing.
    pub(super) fn handle_initialize(&mut self, id: Id, params: Option<&RawValue>) {
        if self.state != ServerState::AwaitingInitialize || self.deferred.is_some() {
            self.report(Diagnostic::RepeatedInitialize);
            let error = ErrorObject::new(
                ErrorObject::INVALID_REQUEST,
                "initialize was already received in this session",
            );
            return self.answer_initialize(id, Err(error));
        }
        let params =
            match serde_json::from_str::<InitializeParams>(params.map_or("null", RawValue::get)) {
                Ok(p) => p,
                Err(e) => {
                    let error = ErrorObject::new(
                        ErrorObject::INVALID_PARAMS,
                        format!("invalid initialize params: {e}"),
                    );
                    return self.answer_initialize(id, Err(error));
                }
            };
        if self.config.defer_initialize {
            return self.defer_initialize(id, params);
        }
        let Some(version) = self.negotiate_configured(&params.protocol_version) else {
            let speaks = self.modern_versions();
            let mut error = super::modern::unsupported_version(&params.protocol_version, &speaks);
            error.code = ErrorObject::INVALID_PARAMS;
            error.message = "this server speaks only protocol version 2026-07-28: use server/discover and the per-request _meta envelope".into();
            return self.answer_initialize(id, Err(error));
        };
        let result = InitializeResult {
            protocol_version: version.as_str().to_owned(),
            capabilities: self.config.capabilities.clone(),
            server_info: self.config.server_info.clone(),
            instructions: self.config.instructions.clone(),
            ..InitializeResult::default()
        };
        let result = match to_raw(&result) {
            Ok(raw) => raw,
            Err(e) => {
                let error = ErrorObject::new(ErrorObject::INTERNAL_ERROR, e.to_string());
                return self.answer_initialize(id, Err(error));
            }
        };
        self.client = Some(ClientState {
            version,
            info: params.client_info,
            capabilities: params.capabilities,
        });
        self.state = ServerState::Initializing;
        self.limits.handshake_deadline = None;
        self.answer_initialize(id, Ok(result));
        self.events.push_back(Event::InitializeAnswered { version });
    }

    /// [`negotiate`] within the configured versions: the requested one when configured,
    /// else the newest configured initialize-era one; `None` when none is configured.
    fn negotiate_configured(&self, requested: &str) -> Option<ProtocolVersion> {
        let configured =
            |v: &ProtocolVersion| v.era() == Era::Initialize && self.config.versions.contains(v);
        ProtocolVersion::parse(requested)
            .filter(configured)
            .or_else(|| {
                ProtocolVersion::INITIALIZE_ERA
                    .into_iter()
                    .rev()
                    .find(configured)
            })
    }

    fn answer_initialize(&mut self, id: Id, result: Result<Box<RawValue>, ErrorObject>) {
        // Not dropped for a full queue here: `handle_request` drops every request while the
        // queue is full, so this is reached only when there is room.
        self.outbound
            .push_back(super::outgoing::Queued::Response { id, result });
    }
}
