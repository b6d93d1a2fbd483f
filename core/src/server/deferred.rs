//! The deferred `initialize` (opt-in: [`ServerConfig::defer_initialize`]): the session hands
//! the client's `initialize` to its host as [`Event::InitializeRequested`] and answers it
//! when the host does, with the identity, capabilities and instructions the host gives. A
//! proxy needs it: what it answers depends on the upstream it connects for this client.
//!
//! The rules stay the session's: the answered version must be one the client can take, a
//! second `initialize` is refused, requests before the answer get `-32600`, and the
//! handshake deadline ([`ServerConfig::handshake_timeout`]) bounds a host that never
//! answers.

use super::{ClientState, Event, ServerConfig, ServerSession, ServerState, UsageError};
use crate::jsonrpc::{ErrorObject, Id, to_raw};
use crate::session::{Era, ProtocolVersion};
use crate::time::Instant;
use crate::types::{
    ClientCapabilities, Implementation, InitializeParams, InitializeResult, ServerCapabilities,
};

/// The host's answer to a deferred `initialize`
/// ([`ServerSession::accept_initialize`]): who the server is, what it offers, and
/// optionally the protocol version (else the session negotiates it from the client's
/// request, as without deferral).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct InitializeAnswer {
    /// The `serverInfo` of the result.
    pub server_info: Implementation,
    /// The capabilities of the result; from the answer on they gate the session's
    /// behaviour as [`ServerConfig::capabilities`] does.
    pub capabilities: ServerCapabilities,
    /// The `instructions` of the result.
    pub instructions: Option<String>,
    /// The version to answer with; `None`: the session's own negotiation
    /// ([`negotiate`](super::negotiate)).
    pub protocol_version: Option<ProtocolVersion>,
}

impl InitializeAnswer {
    /// An answer as `server_info`, with no capabilities, no instructions, and the version
    /// left to the session.
    #[must_use]
    pub fn new(server_info: Implementation) -> Self {
        InitializeAnswer {
            server_info,
            capabilities: ServerCapabilities::default(),
            instructions: None,
            protocol_version: None,
        }
    }

    /// The answer the session would give without deferral: the configuration's identity,
    /// capabilities and instructions.
    #[must_use]
    pub fn from_config(config: &ServerConfig) -> Self {
        InitializeAnswer {
            server_info: config.server_info.clone(),
            capabilities: config.capabilities.clone(),
            instructions: config.instructions.clone(),
            protocol_version: None,
        }
    }

    /// Sets the capabilities.
    #[must_use]
    pub fn with_capabilities(mut self, capabilities: ServerCapabilities) -> Self {
        self.capabilities = capabilities;
        self
    }

    /// Sets the instructions.
    #[must_use]
    pub fn with_instructions(mut self, instructions: Option<String>) -> Self {
        self.instructions = instructions;
        self
    }

    /// Sets the version to answer with (checked by
    /// [`accept_initialize`](ServerSession::accept_initialize)).
    #[must_use]
    pub fn with_protocol_version(mut self, version: ProtocolVersion) -> Self {
        self.protocol_version = Some(version);
        self
    }
}

/// A client's `initialize` waiting for the host's answer.
#[derive(Clone, Debug)]
pub(super) struct PendingInitialize {
    /// Its JSON-RPC id.
    id: Id,
    /// The version the client asked for, as it wrote it.
    requested: String,
    info: Implementation,
    capabilities: ClientCapabilities,
}

/// The version to answer a client that asked for `requested` when the host chose `chosen`:
/// the session's negotiation without a choice; else the choice, when the session speaks it
/// and the client can take it (not newer than a known version the client asked for: a
/// client knows no later version than the one it sends).
///
/// # Errors
/// [`UsageError::VersionNotOffered`] otherwise.
pub fn answered_version(
    requested: &str,
    chosen: Option<ProtocolVersion>,
) -> Result<ProtocolVersion, UsageError> {
    let Some(chosen) = chosen else {
        return Ok(super::negotiate(requested));
    };
    let spoken = chosen.era() == Era::Initialize;
    let newer = ProtocolVersion::parse(requested)
        .filter(|r| r.era() == Era::Initialize)
        .is_some_and(|r| chosen > r);
    if !spoken || newer {
        return Err(UsageError::VersionNotOffered {
            answered: chosen,
            requested: requested.to_owned(),
        });
    }
    Ok(chosen)
}

impl ServerSession {
    /// Whether a deferred `initialize` waits for
    /// [`accept_initialize`](Self::accept_initialize) or
    /// [`refuse_initialize`](Self::refuse_initialize).
    #[must_use]
    pub fn initialize_pending(&self) -> bool {
        self.deferred.is_some()
    }

    /// Holds the client's readable `initialize` for the host (deferred mode).
    pub(super) fn defer_initialize(&mut self, id: Id, params: InitializeParams) {
        self.deferred = Some(PendingInitialize {
            id,
            requested: params.protocol_version.clone(),
            info: params.client_info.clone(),
            capabilities: params.capabilities.clone(),
        });
        self.events.push_back(Event::InitializeRequested {
            params: Box::new(params),
        });
    }

    /// Answers the deferred `initialize` with `answer`, exactly once: the session takes the
    /// answer's identity, capabilities and instructions as its own (its
    /// [`config`](Self::config) shows them), the client's requests flow from now on, and
    /// [`Event::InitializeAnswered`] follows. Returns the version answered.
    ///
    /// Errors (nothing is sent, the `initialize` still waits): [`UsageError::Closed`];
    /// [`UsageError::NoInitializePending`] when no `initialize` waits (none came, or it was
    /// answered already); [`UsageError::VersionNotOffered`] for a version the session does
    /// not speak or the client cannot take (see [`answered_version`]);
    /// [`UsageError::InvalidParams`] when the answer does not serialize.
    pub fn accept_initialize(
        &mut self,
        now: Instant,
        answer: InitializeAnswer,
    ) -> Result<ProtocolVersion, UsageError> {
        if self.is_closed() {
            return Err(UsageError::Closed);
        }
        let pending = self
            .deferred
            .as_ref()
            .ok_or(UsageError::NoInitializePending)?;
        let version = answered_version(&pending.requested, answer.protocol_version)?;
        let result = InitializeResult {
            protocol_version: version.as_str().to_owned(),
            capabilities: answer.capabilities.clone(),
            server_info: answer.server_info.clone(),
            instructions: answer.instructions.clone(),
            ..InitializeResult::default()
        };
        let result = to_raw(&result).map_err(|e| UsageError::InvalidParams(e.to_string()))?;
        let Some(pending) = self.deferred.take() else {
            return Err(UsageError::NoInitializePending);
        };
        self.config.server_info = answer.server_info;
        self.config.capabilities = answer.capabilities;
        self.config.instructions = answer.instructions;
        self.client = Some(ClientState {
            version,
            info: pending.info,
            capabilities: pending.capabilities,
        });
        self.state = ServerState::Initializing;
        self.limits.handshake_deadline = None;
        self.outbound.push_back(super::outgoing::Queued::Response {
            id: pending.id,
            result: Ok(result),
        });
        self.events.push_back(Event::InitializeAnswered { version });
        self.track_backlog(now);
        Ok(version)
    }

    /// Answers the deferred `initialize` with `error`, exactly once. The session stays
    /// uninitialized: the client may send `initialize` again while the handshake deadline
    /// runs; a host that will never accept closes the session after this (the error is still
    /// sent, as on [`close`](Self::close)).
    ///
    /// Errors: [`UsageError::Closed`]; [`UsageError::NoInitializePending`].
    pub fn refuse_initialize(
        &mut self,
        now: Instant,
        error: ErrorObject,
    ) -> Result<(), UsageError> {
        if self.is_closed() {
            return Err(UsageError::Closed);
        }
        let pending = self
            .deferred
            .take()
            .ok_or(UsageError::NoInitializePending)?;
        self.outbound.push_back(super::outgoing::Queued::Response {
            id: pending.id,
            result: Err(error),
        });
        self.track_backlog(now);
        Ok(())
    }

    /// The handshake deadline passed while the host held the `initialize`: the client is
    /// told (`-32603`), then the session closes. `false` when nothing was pending.
    pub(super) fn expire_deferred(&mut self) -> bool {
        let Some(pending) = self.deferred.take() else {
            return false;
        };
        let error = ErrorObject::new(
            ErrorObject::INTERNAL_ERROR,
            "the server did not answer initialize in time",
        );
        self.outbound.push_back(super::outgoing::Queued::Response {
            id: pending.id,
            result: Err(error),
        });
        true
    }
}
