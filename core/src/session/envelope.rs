//! The per-request `_meta` envelope of the discover era: protocol version, client
//! capabilities, client info and the optional log level, spliced into every request's params
//! by the merge rule of [`meta::splice`](super::meta::splice) (the session owns those keys; the
//! caller's other `_meta` members are kept).

use serde_json::value::RawValue;

use super::meta;
use super::pending::Stage;
use super::{MessageKind, Outgoing, RawParams, RequestHandle, Session, mrtr};
use crate::jsonrpc;
use crate::jsonrpc::Id;
use crate::types::v2026::{
    META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL, META_PROTOCOL_VERSION,
};

/// The envelope values that never change in a session, serialized once.
#[derive(Debug)]
pub(crate) struct Envelope {
    capabilities: Box<RawValue>,
    info: Box<RawValue>,
    log_level: Option<Box<RawValue>>,
}

impl Envelope {
    pub(crate) fn new(config: &super::SessionConfig) -> Self {
        // Invariant: the typed capabilities, implementation and level hold only strings,
        // booleans and JSON maps, which always serialize.
        let capabilities = jsonrpc::to_raw(&config.capabilities).expect("capabilities serialize");
        let info = jsonrpc::to_raw(&config.client_info).expect("client info serializes");
        let log_level = config
            .log_level
            .as_ref()
            .map(|l| jsonrpc::to_raw(l).expect("a level serializes"));
        Envelope {
            capabilities,
            info,
            log_level,
        }
    }
}

impl Session {
    /// `params` with the envelope in `_meta`; multi-round fields, when `top` names them, at
    /// the top level. Fails when params are not an object.
    pub(crate) fn envelope_with(
        &self,
        params: Option<&str>,
        top: &[(&str, Option<&RawValue>)],
    ) -> Result<Box<RawValue>, String> {
        let version = format!("\"{}\"", self.envelope_version().as_str());
        // Invariant: a version string has no characters that need escaping.
        let version = RawValue::from_string(version).expect("a version string is JSON");
        let e = self.handshake.envelope();
        let mut keys: Vec<(&str, &RawValue)> = vec![
            (META_PROTOCOL_VERSION, &version),
            (META_CLIENT_CAPABILITIES, &e.capabilities),
            (META_CLIENT_INFO, &e.info),
        ];
        if let Some(level) = &e.log_level {
            keys.push((META_LOG_LEVEL, level));
        }
        meta::splice(params, top, &keys)
    }

    /// For a transport that never re-sends a request (stdio: no HTTP session to lose): in
    /// the initialize era a request's params are dropped once it is sent, since nothing
    /// will send them again. The discover era keeps them (a multi-round request is re-issued
    /// with them).
    pub(crate) fn forget_sent_params(&mut self) {
        self.keeps_sent_params = false;
    }

    /// Encodes a queued request into `buf` (with the envelope and a round's fields in the
    /// discover era). `None` when it no longer needs sending (cancelled or timed out while
    /// queued: the server never sees it).
    pub(super) fn transmit_request(
        &mut self,
        handle: RequestHandle,
        buf: &mut Vec<u8>,
    ) -> Option<Outgoing> {
        // Cancelled or timed out while queued: the server never sees it.
        let p = self.pending.get(handle)?;
        if p.stage != Stage::Queued {
            return None;
        }
        let modern = if self.discover_mode() {
            match self.modern_params(handle, p.params.as_ref().map(RawParams::get)) {
                Ok(params) => Some(params),
                Err(detail) => {
                    self.complete(handle, Err(mrtr::envelope_error(detail)));
                    return None;
                }
            }
        } else {
            None
        };
        // Invariant: looked up just above, nothing removed it since.
        let p = self.pending.get_mut(handle).expect("pending entry");
        p.stage = Stage::Sent;
        let params = modern
            .as_deref()
            .map(RawValue::get)
            .or(p.params.as_ref().map(RawParams::get));
        jsonrpc::encode_request_text(buf, &Id::from(p.wire), &p.method, params);
        if !self.keeps_sent_params && modern.is_none() {
            // Nothing can re-send it (see `forget_sent_params`): its params are most of
            // what a pending request costs once the server has it.
            p.params = None;
        }
        Some(Outgoing {
            kind: MessageKind::Request,
            request: Some(handle),
            method: Some(p.method.clone()),
        })
    }

    /// `params` with the envelope in `_meta`.
    pub(crate) fn envelope(&self, params: Option<&str>) -> Result<Box<RawValue>, String> {
        self.envelope_with(params, &[])
    }
}

/// Whether raw params can take an envelope (absent, `null` or an object), checked cheaply at
/// send time so that the splice at transmit time cannot fail.
pub(crate) fn takes_envelope(params: Option<&str>) -> bool {
    params.is_none_or(|p| {
        let s = p.trim_start();
        s.starts_with('{') || s == "null"
    })
}
