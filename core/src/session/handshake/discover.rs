//! What the session does in the discover handshake (2026-07-28): the answer to
//! `server/discover`, the Auto probe's fallback to `initialize` and its re-probe, version
//! retries on -32022, the end of the handshake (either one). Which handshake runs, and the
//! state it keeps, is the [`Handshake`](super::Handshake)'s.
//!
//! Fallback signals (Auto only, never keyed to one error code): an error answer to
//! `server/discover` that is not a recognised modern error, an answer that is not a valid
//! `DiscoverResult` (`{}`), or no answer within the probe timeout. A modern error
//! (-32020 / -32021) means the server is modern and the handshake failed; -32022 lists the
//! versions to retry with. A discover answer arriving after the fallback has a wire id the
//! session no longer waits for, so it is reported as a stale response and ignored.

use std::borrow::Cow;

use serde_json::value::RawValue;

use super::super::{
    CloseReason, Diagnostic, Event, ProtocolVersion, Queued, RequestError, ServerState, Session,
    SessionState, Waiting,
};
use crate::jsonrpc::{self, ErrorObject};
use crate::time::Instant;
use crate::types::Implementation;
use crate::types::v2026::{self, DiscoverResult, ResultType};

/// Methods the discover era removed: the session refuses them there.
pub(crate) const REMOVED_METHODS: [&str; 4] = [
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
];

/// What to do with a -32022 answer: retry the discover at another modern version, fall back
/// to `initialize`, or give up.
enum VersionVerdict {
    Retry(ProtocolVersion),
    Initialize(ProtocolVersion),
    None,
}

impl Session {
    /// Whether the session speaks (or is probing) the discover era.
    pub(crate) fn discover_mode(&self) -> bool {
        self.handshake.is_discover()
    }

    /// The version the envelope carries.
    pub(crate) fn envelope_version(&self) -> ProtocolVersion {
        self.handshake.envelope_version()
    }

    /// Whether the session is waiting for an Auto probe (the stdio layer respawns a server
    /// that exits on it).
    #[must_use]
    pub fn is_probing(&self) -> bool {
        self.handshake.is_probing()
    }

    /// The wire id of the current handshake request (`server/discover` or `initialize`): it
    /// changes whenever the handshake is re-issued (a fallback, a version retry, a re-probe),
    /// so a transport can tell an answered exchange from the one still awaited.
    pub(crate) fn handshake_wire(&self) -> u64 {
        self.handshake.wire()
    }

    pub(in crate::session) fn discover_params(&self) -> Box<RawValue> {
        // Invariant: `{}` is an object, so the splice cannot fail.
        let empty = RawValue::from_string("{}".to_owned()).expect("{} is JSON");
        self.envelope(Some(empty.get()))
            .expect("an empty object takes an envelope")
    }

    /// The answer to `server/discover` arrived.
    pub(in crate::session) fn finish_discover(
        &mut self,
        now: Instant,
        answer: Result<Box<RawValue>, ErrorObject>,
    ) {
        let Some(fallback) = self.handshake.falls_back() else {
            return;
        };
        let raw = match answer {
            Ok(raw) => raw,
            Err(e) if e.code == v2026::UNSUPPORTED_PROTOCOL_VERSION => {
                let supported = supported_in(&e);
                return match self.version_verdict(&supported) {
                    VersionVerdict::Retry(v) => self.rediscover(v),
                    VersionVerdict::Initialize(v) if fallback => {
                        self.fall_back(now, v, format!("server/discover: {e}"));
                    }
                    _ => self.close_unsupported(supported.join(", ")),
                };
            }
            Err(e) if v2026::is_modern_error_code(e.code) || !fallback => {
                return self.close_with(CloseReason::HandshakeRejected(e));
            }
            Err(e) => {
                let v = self.config.protocol_version;
                return self.fall_back(now, v, format!("server/discover: {e}"));
            }
        };
        let parsed = serde_json::from_str::<DiscoverResult>(raw.get())
            .map_err(|e| e.to_string())
            .and_then(|d| match ResultType::of(&raw) {
                ResultType::Complete => Ok(d),
                other => Err(format!("resultType {other:?}")),
            });
        let result = match parsed {
            Ok(d) => d,
            Err(detail) if fallback => {
                let v = self.config.protocol_version;
                return self.fall_back(now, v, format!("not a DiscoverResult: {detail}"));
            }
            Err(detail) => return self.close_with(CloseReason::InvalidHandshake(detail)),
        };
        let version = match self.version_verdict(&result.supported_versions) {
            VersionVerdict::Retry(v) => v,
            VersionVerdict::Initialize(v) if fallback => {
                let reason = "the server lists only initialize-era versions".to_owned();
                return self.fall_back(now, v, reason);
            }
            _ => return self.close_unsupported(result.supported_versions.join(", ")),
        };
        self.handshake.set_envelope_version(version);
        self.server = Some(ServerState {
            version,
            info: result
                .server_info()
                .unwrap_or_else(|| Implementation::new("unknown", "")),
            capabilities: result.capabilities,
            instructions: result.instructions,
        });
        self.become_ready(now, version);
    }

    /// Picks what to do with a list of versions the server speaks: keep (or retry at) a
    /// modern one, else an initialize-era one.
    fn version_verdict(&self, supported: &[String]) -> VersionVerdict {
        let accepted = |v: &ProtocolVersion| {
            self.config.supported_versions.contains(v) && supported.iter().any(|s| s == v.as_str())
        };
        let current = self.envelope_version();
        let tried = self.handshake.tried();
        if accepted(&current) {
            return VersionVerdict::Retry(current);
        }
        if let Some(v) = ProtocolVersion::DISCOVER_ERA
            .into_iter()
            .rev()
            .find(|v| accepted(v) && !tried.contains(v))
        {
            return VersionVerdict::Retry(v);
        }
        let init = if accepted(&self.config.protocol_version) {
            Some(self.config.protocol_version)
        } else {
            ProtocolVersion::INITIALIZE_ERA
                .into_iter()
                .rev()
                .find(accepted)
        };
        init.map_or(VersionVerdict::None, VersionVerdict::Initialize)
    }

    /// -32022 on the discover: try again at `version` with a fresh wire id, bounded. A list
    /// that names the version just sent gets one more try at it (the spec says to retry with
    /// a listed version; the rejection may have been about the request, not the version);
    /// the same rejection twice closes.
    fn rediscover(&mut self, version: ProtocolVersion) {
        let wire = self.next_id;
        match self.handshake.rediscover(version, wire) {
            Ok(request) => {
                self.next_id += 1;
                self.outbound.push_back(request);
            }
            Err(tried) => self.close_unsupported(tried),
        }
    }

    fn close_unsupported(&mut self, offered: String) {
        let supported = self
            .config
            .supported_versions
            .iter()
            .map(|v| v.as_str())
            .collect();
        self.close_with(CloseReason::UnsupportedVersion { offered, supported });
    }

    /// Leaves the probe for `initialize` at `version` (fresh wire id; the discover's id is
    /// forgotten, so a late answer to it is stale).
    pub(in crate::session) fn fall_back(
        &mut self,
        _now: Instant,
        version: ProtocolVersion,
        reason: String,
    ) {
        let request = self.handshake.fall_back(version, self.next_id);
        self.next_id += 1;
        self.outbound.push_back(request);
        self.report(Diagnostic::EraFallback { reason });
    }

    /// Auto with a remembered initialize era, and `initialize` failed: probe discover once
    /// instead of closing. Returns whether it did.
    pub(in crate::session) fn try_reprobe(&mut self, reason: String) -> bool {
        let Some(request) = self.handshake.reprobe(self.next_id) else {
            return false;
        };
        self.next_id += 1;
        self.outbound.push_back(request);
        self.report(Diagnostic::EraFallback { reason });
        true
    }

    /// The transport closed while probing (an old stdio server that exits on any request
    /// before `initialize`): the adapter respawns the server and the session goes straight to
    /// `initialize` on the new pipes. Requests the host issued keep waiting, under the same
    /// handles. Returns `false` (and does nothing) when the session is not probing.
    pub(crate) fn restart_after_respawn(&mut self, now: Instant) -> bool {
        // Also right after a fallback: a server may answer the probe with an error and exit
        // before it reads `initialize`.
        let after_fallback = self.handshake.running_after_fallback();
        if !self.is_probing() && !after_fallback {
            return false;
        }
        // What was queued for the dead process (the discover, answers) is meaningless now.
        self.outbound.clear();
        self.inbound.clear();
        while self.clock.is_paused() {
            self.clock.resume(now);
        }
        let v = if self.is_probing() {
            self.config.protocol_version
        } else {
            self.handshake.initialize_version()
        };
        self.fall_back(now, v, "the server exited on server/discover".into());
        true
    }

    /// The HTTP layer's report on a refused probe POST (400, 404 or 405): `Some` with the
    /// recognised modern JSON-RPC error the body carried (handled like that answer), `None` for
    /// an empty or non-modern body (Auto falls back to `initialize`; Discover closes). Ignored
    /// unless the session waits for its discover answer.
    pub(crate) fn handle_probe_refusal(&mut self, now: Instant, error: Option<ErrorObject>) {
        if !self.handshake.is_running() || !self.discover_mode() {
            return;
        }
        match error {
            Some(e) => self.finish_discover(now, Err(e)),
            None if self.is_probing() => {
                let v = self.config.protocol_version;
                self.fall_back(now, v, "the HTTP server refused the modern probe".into());
            }
            None => self.close_with(CloseReason::InvalidHandshake(
                "the HTTP server refused server/discover".into(),
            )),
        }
    }

    /// Whether requests go out in the discover era (envelope, 2026 HTTP headers), or the
    /// session is running the discover handshake.
    #[must_use]
    pub fn speaks_discover(&self) -> bool {
        self.discover_mode()
    }

    /// The protocol version the envelope carries now (for `MCP-Protocol-Version`).
    #[must_use]
    pub fn envelope_protocol_version(&self) -> ProtocolVersion {
        self.envelope_version()
    }

    /// The pending request sent with wire id `wire`, if any (for a transport that inspects
    /// answers before the session sees them).
    #[must_use]
    pub(crate) fn request_for_wire(&self, wire: u64) -> Option<crate::session::RequestHandle> {
        self.pending.by_wire(wire)
    }

    /// The probe timeout fired: fall back.
    pub(in crate::session) fn probe_timed_out(&mut self, now: Instant) {
        let v = self.config.protocol_version;
        self.fall_back(now, v, "no answer to server/discover in time".into());
    }

    /// The handshake finished at `version`: release what waited for it.
    pub(in crate::session) fn become_ready(&mut self, now: Instant, version: ProtocolVersion) {
        self.state = SessionState::Ready;
        self.handshake.finish();
        let discover = version.era() == crate::session::Era::Discover;
        if !discover {
            self.outbound.push_back(Queued::Notification {
                method: Cow::Borrowed("notifications/initialized"),
                params: None,
            });
        }
        while let Some(w) = self.waiting.pop_front() {
            match w {
                Waiting::Request(handle) => {
                    let method = self.pending.get(handle).map(|p| p.method.to_string());
                    match method {
                        // The era is settled now: what it lacks fails.
                        Some(m) if self.handshake.era_lacking(&m).is_some() => {
                            self.complete(handle, Err(RequestError::NotInEra { method: m }));
                        }
                        _ => self.queue_request(now, handle),
                    }
                }
                Waiting::Notification { method, .. }
                    if discover && method == "notifications/roots/list_changed" => {}
                Waiting::Notification { method, params } => {
                    self.outbound
                        .push_back(Queued::Notification { method, params });
                }
            }
        }
        self.events.push_back(Event::Ready {
            era: version.era(),
            version,
        });
    }

    /// Whether both sides negotiated the tasks extension (a `resultType: "task"` is valid).
    pub(crate) fn tasks_negotiated(&self) -> bool {
        let client = self.config.capabilities.extra.get("extensions");
        let server = self
            .server
            .as_ref()
            .and_then(|s| s.capabilities.extra.get("extensions"));
        matches!((client, server), (Some(c), Some(s))
            if c.get(v2026::TASKS_EXTENSION).is_some() && s.get(v2026::TASKS_EXTENSION).is_some())
    }
}

/// `data.supported` of a -32022 error (empty when absent or malformed).
pub(crate) fn supported_in(e: &ErrorObject) -> Vec<String> {
    #[derive(serde::Deserialize)]
    struct Data {
        #[serde(default)]
        supported: Vec<String>,
    }
    e.data
        .as_deref()
        .and_then(|d| serde_json::from_str::<Data>(d.get()).ok())
        .map(|d| d.supported)
        .unwrap_or_default()
}

/// The encoded `server/discover` request.
pub(in crate::session) fn encode_discover(buf: &mut Vec<u8>, wire: u64, params: &RawValue) {
    jsonrpc::encode_request(
        buf,
        &jsonrpc::Id::from(wire),
        "server/discover",
        Some(params),
    );
}
