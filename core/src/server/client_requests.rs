//! The client's requests that the host is answering, keyed by the host's token, with the
//! JSON-RPC ids they arrived with.

use super::ClientRequestId;
use crate::jsonrpc::Id;
use crate::rpc::peer_keys::PeerMap;
use crate::session::CounterMap;

/// What the session remembers of one open client request.
#[derive(Debug)]
pub(super) struct OpenRequest {
    /// The client's id, echoed verbatim in the answer.
    pub(super) wire: Id,
    /// The client's `_meta.progressToken`.
    pub(super) progress_token: Option<Id>,
    /// The last progress value sent for it (progress must increase).
    pub(super) last_progress: Option<f64>,
    /// A 2026-07-28 request: its result gets `resultType` and the server info.
    pub(super) modern: bool,
    /// Its method's complete result carries cache hints (2026-07-28).
    pub(super) cacheable: bool,
    /// The log level its envelope asked for (2026-07-28; `None`: no log messages).
    pub(super) log_level: Option<crate::types::LoggingLevel>,
}

/// Open client requests. Bounded by the caller
/// ([`ServerConfig::max_open_client_requests`](super::ServerConfig::max_open_client_requests)).
#[derive(Debug, Default)]
pub(super) struct ClientRequests {
    open: CounterMap<ClientRequestId, OpenRequest>,
    /// Peer-chosen keys: a randomly seeded hasher, so a client cannot choose ids that collide.
    by_wire: PeerMap<Id, ClientRequestId>,
    next: u64,
}

impl ClientRequests {
    pub(super) fn len(&self) -> usize {
        self.open.len()
    }

    pub(super) fn contains_wire(&self, wire: &Id) -> bool {
        self.by_wire.contains_key(wire)
    }

    /// Opens a request; the caller checked the wire id is not open already. `modern`: a
    /// 2026-07-28 request, its envelope's log level and whether its result is cacheable.
    pub(super) fn insert(
        &mut self,
        wire: Id,
        progress_token: Option<Id>,
        modern: Option<(Option<crate::types::LoggingLevel>, bool)>,
    ) -> ClientRequestId {
        let id = self.mint();
        self.by_wire.insert(wire.clone(), id);
        self.open.insert(
            id,
            OpenRequest {
                wire,
                progress_token,
                last_progress: None,
                modern: modern.is_some(),
                cacheable: modern.is_some_and(|(_, c)| c),
                log_level: modern.and_then(|(level, _)| level),
            },
        );
        id
    }

    /// A fresh token for something the session serves itself (a listen), from the same
    /// counter as the requests', so the two never collide.
    pub(super) fn mint(&mut self) -> ClientRequestId {
        let id = ClientRequestId(self.next);
        self.next += 1;
        id
    }

    pub(super) fn get(&self, id: ClientRequestId) -> Option<&OpenRequest> {
        self.open.get(&id)
    }

    pub(super) fn get_mut(&mut self, id: ClientRequestId) -> Option<&mut OpenRequest> {
        self.open.get_mut(&id)
    }

    pub(super) fn remove(&mut self, id: ClientRequestId) -> Option<OpenRequest> {
        let open = self.open.remove(&id)?;
        self.by_wire.remove(&open.wire);
        Some(open)
    }

    pub(super) fn remove_wire(&mut self, wire: &Id) -> Option<ClientRequestId> {
        let id = self.by_wire.remove(wire)?;
        self.open.remove(&id);
        Some(id)
    }

    pub(super) fn clear(&mut self) {
        self.open.clear();
        self.by_wire.clear();
    }
}
