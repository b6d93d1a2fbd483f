//! [`SessionIdentity`]: who the connection is to the server, and what that puts on every
//! exchange's headers.
//!
//! Up to 2025-11-25 a Streamable HTTP session is named by the `Mcp-Session-Id` the server
//! assigned in its answer to `initialize`, and every later exchange carries it together with
//! the negotiated `MCP-Protocol-Version` (from 2025-06-18 on). A 404 to an exchange that
//! carried the id (or a 400 saying the id is not valid: [`session_gone`](super::session_gone))
//! means the server forgot the session: the id is dropped and a new
//! *generation* begins, so that answers and streams of the old session are told apart from
//! the new one's. 2026-07-28 has no session id: every POST carries the envelope's protocol
//! version and the standard `Mcp-Method` / `Mcp-Name` / `Mcp-Param-*` headers, the last ones
//! from the `x-mcp-header` bindings of the tools seen in `tools/list`.

use super::exchange::Purpose;
use super::headers::{HeaderList, InvalidSessionId, MCP_PROTOCOL_VERSION, MCP_SESSION_ID};
use super::modern::ToolHeaders;
use crate::session::Session;

/// The session-identity state of one HTTP connection: the session id, its generation, how
/// many resets happened back to back, and the 2026-07-28 tool header bindings.
#[derive(Debug, Default)]
pub(crate) struct SessionIdentity {
    /// The `Mcp-Session-Id` in use, if the server assigned a valid one.
    id: Option<String>,
    /// Bumped at every session reset; exchanges and streams remember the one they began in.
    generation: u32,
    /// Resets since the last answer to a request of the current generation: a second 404 in
    /// a row ends the connection instead of looping on re-initializations.
    resets_in_a_row: u8,
    /// 2026-07-28: the `x-mcp-header` bindings of the tools seen in `tools/list`.
    tool_headers: ToolHeaders,
}

impl SessionIdentity {
    /// The session id in use.
    pub(crate) fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }

    /// The current generation (see the module docs).
    pub(crate) fn generation(&self) -> u32 {
        self.generation
    }

    /// Takes `value`, the `Mcp-Session-Id` of the answer to `initialize`, as the session id if
    /// it is valid; an invalid one is refused and the previous id kept.
    pub(crate) fn adopt(&mut self, value: &str) -> Result<(), InvalidSessionId> {
        let v = super::headers::validate_session_id(value)?;
        self.id = Some(v.to_owned());
        Ok(())
    }

    /// A request of `generation` was answered: if that is the current one, the session works
    /// and the next 404 may reset it again.
    pub(crate) fn answered_in(&mut self, generation: u32) {
        if generation == self.generation {
            self.resets_in_a_row = 0;
        }
    }

    /// The server forgot the session: drops the id and returns it (empty if there was none).
    pub(crate) fn expire(&mut self) -> String {
        self.id.take().unwrap_or_default()
    }

    /// Whether the session expired again before any request of the last reset was answered.
    pub(crate) fn expired_again(&self) -> bool {
        self.resets_in_a_row > 0
    }

    /// Starts a new generation for the session a reset is about to build.
    pub(crate) fn renew(&mut self) {
        self.resets_in_a_row = self.resets_in_a_row.saturating_add(1);
        self.generation = self.generation.wrapping_add(1);
    }

    /// The 2026-07-28 tool header bindings, to update from a `tools/list` result.
    pub(crate) fn tool_headers_mut(&mut self) -> &mut ToolHeaders {
        &mut self.tool_headers
    }

    /// Puts the session headers of the moment on an exchange of `purpose` with `body`:
    /// over 2026-07-28 Streamable HTTP the envelope's version and the message headers (and
    /// never a session id); otherwise the session id (not on `initialize`, and only when
    /// `streamable`: the legacy transport has none) and the negotiated version where the
    /// version asks for the header. Returns whether the session id went out (a 404 to such an
    /// exchange means the session is gone).
    pub(crate) fn stamp(
        &self,
        headers: &mut HeaderList,
        session: &Session,
        streamable: bool,
        purpose: Purpose,
        body: &[u8],
    ) -> bool {
        let mut had_session_id = false;
        let modern = streamable && session.speaks_discover();
        if modern {
            headers.remove(MCP_SESSION_ID);
            let version = session.envelope_protocol_version();
            headers.insert(MCP_PROTOCOL_VERSION, version.as_str());
            for (name, value) in super::modern::message_headers(body, &self.tool_headers) {
                headers.insert(name, value);
            }
        } else if streamable
            && purpose != Purpose::Initialize
            && let Some(sid) = &self.id
        {
            headers.insert(MCP_SESSION_ID, sid.clone());
            had_session_id = true;
        } else {
            headers.remove(MCP_SESSION_ID);
        }
        if !modern
            && purpose != Purpose::Initialize
            && let Some(v) = session.protocol_version()
            && v.sends_version_header()
        {
            headers.insert(MCP_PROTOCOL_VERSION, v.as_str());
        }
        had_session_id
    }
}
