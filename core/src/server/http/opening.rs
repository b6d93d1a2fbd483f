//! Opening sessions: where a new session's `Mcp-Session-Id` comes from (the hex form of the
//! host's random bytes, [`HttpServer::handle_request`], or an id the host mints itself,
//! [`HttpServer::handle_request_with_session_id`]), and the entries of stateful and stateless
//! sessions.

use super::entry::Entry;
use super::{HttpEvent, HttpServer, Refusal, RequestHead, ResponseId, SessionKey};
use crate::http::headers::validate_session_id;
use crate::server::ServerSession;
use crate::session::ProtocolVersion;
use crate::time::Instant;

/// How a request that opens a session names it.
pub(super) enum NewSessionId<'a> {
    /// The hex form of 16 random bytes from the host.
    Entropy([u8; 16]),
    /// The host's minter, called only when the request opens a session.
    Minted(Box<dyn FnOnce() -> String + 'a>),
}

impl NewSessionId<'_> {
    /// The id, or `None` when it cannot be an `Mcp-Session-Id`: one a client refuses
    /// ([`validate_session_id`]: empty, too long, or not only visible ASCII).
    pub(super) fn into_wire_id(self) -> Option<String> {
        let id = match self {
            NewSessionId::Entropy(bytes) => bytes.iter().map(|b| format!("{b:02x}")).collect(),
            NewSessionId::Minted(mint) => mint(),
        };
        validate_session_id(&id).is_ok().then_some(id)
    }
}

impl HttpServer {
    /// [`handle_request`](Self::handle_request) for a host that names its sessions itself:
    /// `mint` is called once if, and only if, this request opens a session, and its answer
    /// is the session's `Mcp-Session-Id`. An id a client would refuse (empty, too long, not
    /// only visible ASCII) or a live session's is refused ([`Refusal::UnusableSessionId`], 500), and no
    /// session opens.
    ///
    /// The id is all that stands between one client and another's session: a host that does
    /// not make it unguessable (with a CSPRNG, or a signature) must only serve clients it
    /// trusts, such as a test's.
    pub fn handle_request_with_session_id(
        &mut self,
        now: Instant,
        head: &RequestHead,
        body: &[u8],
        mint: impl FnOnce() -> String,
    ) -> ResponseId {
        self.take_request(now, head, body, NewSessionId::Minted(Box::new(mint)))
    }

    pub(super) fn open_session(
        &mut self,
        now: Instant,
        new_id: NewSessionId<'_>,
    ) -> Result<SessionKey, Refusal> {
        if self.entries.len() >= self.config.max_sessions {
            return Err(Refusal::TooManySessions {
                limit: self.config.max_sessions,
            });
        }
        let wire_id = new_id.into_wire_id().ok_or(Refusal::UnusableSessionId)?;
        if self.by_wire_id.contains_key(&wire_id) {
            // The id repeated: refusing is safer than sharing a session.
            return Err(Refusal::UnusableSessionId);
        }
        let key = self.insert_entry(now, wire_id.clone());
        self.by_wire_id.insert(wire_id, key);
        Ok(key)
    }

    pub(super) fn insert_entry(&mut self, now: Instant, wire_id: String) -> SessionKey {
        let key = SessionKey(self.next_session);
        self.next_session += 1;
        let session = ServerSession::new(self.config.server.clone(), now);
        self.entries.insert(key, Entry::new(wire_id, session, now));
        self.events
            .push_back(HttpEvent::SessionOpened { session: key });
        key
    }

    /// A stateless POST's own session, already initialized unless the body `initializes` it.
    pub(super) fn open_stateless(
        &mut self,
        now: Instant,
        version: Option<ProtocolVersion>,
        initializes: bool,
    ) -> Result<SessionKey, Refusal> {
        if self.entries.len() >= self.config.max_sessions {
            return Err(Refusal::TooManySessions {
                limit: self.config.max_sessions,
            });
        }
        let key = self.insert_entry(now, String::new());
        if initializes {
            return Ok(key);
        }
        let Some(entry) = self.entries.get_mut(&key) else {
            return Err(Refusal::UnknownSession);
        };
        let version = version.unwrap_or(ProtocolVersion::V2025_03_26);
        let init = format!(
            r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{}","capabilities":{{}},"clientInfo":{{"name":"stateless","version":"0"}}}}}}"#,
            version.as_str()
        );
        entry.session.handle_message_str(now, &init);
        if entry.session.initialize_pending() {
            // Deferred: the implied handshake is the server's own, answered from its
            // configuration (the version negotiated from the client's header, so it is spoken).
            let answer = crate::server::InitializeAnswer::from_config(&self.config.server);
            let _accepted = entry.session.accept_initialize(now, answer);
        }
        entry.session.handle_message_str(
            now,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        );
        // The implied handshake is not the client's: its answer and events are dropped.
        let mut sink = Vec::new();
        while entry.session.poll_transmit(&mut sink).is_some() {
            sink.clear();
        }
        while entry.session.poll_event().is_some() {}
        Ok(key)
    }
}
