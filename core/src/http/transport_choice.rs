//! [`TransportChoice`]: where a connection is in choosing its transport (Streamable HTTP or
//! legacy HTTP+SSE), and where its POSTs go once it chose.

use url::Url;

use super::error::HttpStatusError;
use super::exchange::Transport;

/// Where the connection is in choosing its transport.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Streamable or auto: the initialize POST has not been answered yet.
    Probing,
    /// Legacy: waiting for the `endpoint` event.
    LegacyConnecting,
    /// Messages flow on this transport.
    Up(Transport),
    /// Closing: only the DELETE (if any) is left.
    Closing,
    /// Nothing more will happen.
    Finished,
}

/// The transport decision of one connection: its [`Phase`], whether an auto connection
/// already fell back to legacy, and the legacy POST endpoint once the server named it.
#[derive(Debug)]
pub(crate) struct TransportChoice {
    /// Where the connection is; read and moved by the connection's inputs.
    pub(crate) phase: Phase,
    /// An auto connection fell back to legacy once (it never does twice).
    fell_back: bool,
    /// The legacy transport's POST URL, from the `endpoint` event.
    legacy_endpoint: Option<Url>,
    /// The refusal of the initialize POST that made the connection fall back, until the
    /// legacy stream names its endpoint: if the GET fails too, both are reported
    /// ([`CloseReason::NotMcp`](crate::session::CloseReason::NotMcp)).
    fallback_cause: Option<HttpStatusError>,
}

impl TransportChoice {
    /// A connection that starts in `phase`.
    pub(crate) fn new(phase: Phase) -> Self {
        TransportChoice {
            phase,
            fell_back: false,
            legacy_endpoint: None,
            fallback_cause: None,
        }
    }

    /// The transport, once known (legacy as soon as its endpoint is).
    pub(crate) fn transport(&self) -> Option<Transport> {
        match self.phase {
            Phase::Up(t) => Some(t),
            Phase::LegacyConnecting if self.legacy_endpoint.is_some() => Some(Transport::Legacy),
            _ => None,
        }
    }

    /// Whether messages may flow (the handshake included).
    pub(crate) fn is_up(&self) -> bool {
        matches!(self.phase, Phase::Up(_))
    }

    /// Whether the connection is closing or finished: nothing new is sent.
    pub(crate) fn is_over(&self) -> bool {
        matches!(self.phase, Phase::Closing | Phase::Finished)
    }

    /// Whether the legacy transport is in use (its endpoint is known): answers come on its
    /// SSE stream, and no session id or protocol version header applies.
    pub(crate) fn is_legacy(&self) -> bool {
        self.legacy_endpoint.is_some()
    }

    /// Whether the connection talks Streamable HTTP as far as closing is concerned (neither
    /// the legacy endpoint nor a legacy connection under way): only then is there a session
    /// to DELETE.
    pub(crate) fn is_streamable(&self) -> bool {
        self.legacy_endpoint.is_none() && self.phase != Phase::LegacyConnecting
    }

    /// Where a POST goes: the legacy endpoint once messages flow over legacy, else `url`.
    pub(crate) fn post_url(&self, url: &Url) -> Url {
        match (&self.phase, &self.legacy_endpoint) {
            (Phase::Up(Transport::Legacy), Some(u)) => u.clone(),
            _ => url.clone(),
        }
    }

    /// Whether an auto connection may still fall back to legacy (it has not yet).
    pub(crate) fn may_fall_back(&self) -> bool {
        !self.fell_back
    }

    /// Records the fall back to legacy, caused by the initialize POST's refusal `cause`
    /// (the caller starts the legacy connection).
    pub(crate) fn fall_back(&mut self, cause: HttpStatusError) {
        self.fell_back = true;
        self.fallback_cause = Some(cause);
    }

    /// The initialize POST's refusal that made the connection fall back, once: taken when the
    /// legacy connection failed too, to report both.
    pub(crate) fn take_fallback_cause(&mut self) -> Option<HttpStatusError> {
        self.fallback_cause.take()
    }

    /// The legacy `endpoint` event named `url`: messages flow over legacy from here on.
    pub(crate) fn select_legacy(&mut self, url: Url) {
        self.legacy_endpoint = Some(url);
        self.fallback_cause = None;
        self.phase = Phase::Up(Transport::Legacy);
    }
}
