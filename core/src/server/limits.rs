//! The server session's limits in time: the handshake deadline (a client that never sends
//! `initialize`), the stall close (a client that stops reading while the outbound queue is
//! over its budget), and the protocol version each server-to-client method needs.

use super::ServerSession;
use crate::session::{CloseReason, ProtocolVersion};
use crate::time::{Instant, saturating_add};

/// The timers of the limits, beside the request deadlines.
#[derive(Debug, Default)]
pub(super) struct Limits {
    /// When the session closes unless `initialize` arrived (disarmed once it did).
    pub(super) handshake_deadline: Option<Instant>,
    /// When the session closes unless the transport took a message; armed while the
    /// outbound queue is at its budget.
    pub(super) stall_deadline: Option<Instant>,
    /// A message was taken since the stall deadline was armed: it is re-armed, not fired.
    pub(super) pulled: bool,
}

/// The first protocol version that has a server-to-client `method`, for the methods that came
/// after 2024-11-05 (`None`: every version has it, or the session does not know it).
#[must_use]
pub(super) fn first_version_of(method: &str) -> Option<ProtocolVersion> {
    match method {
        "elicitation/create" => Some(ProtocolVersion::V2025_06_18),
        "tasks/get"
        | "tasks/result"
        | "tasks/list"
        | "tasks/cancel"
        | "notifications/tasks/status"
        | "notifications/elicitation/complete" => Some(ProtocolVersion::V2025_11_25),
        _ => None,
    }
}

impl ServerSession {
    /// After the queue grew: arms the stall deadline once it reaches its budget.
    pub(super) fn track_backlog(&mut self, now: Instant) {
        if self.is_closed() {
            return;
        }
        match (self.outbound_full(), self.config.stall_timeout) {
            (true, Some(after)) if self.limits.stall_deadline.is_none() => {
                self.limits.stall_deadline = Some(saturating_add(now, after));
                self.limits.pulled = false;
            }
            (false, _) => self.limits.stall_deadline = None,
            _ => {}
        }
    }

    /// A message was taken by the transport: the client reads.
    pub(super) fn outbound_pulled(&mut self) {
        self.limits.pulled = true;
        if !self.outbound_full() {
            self.limits.stall_deadline = None;
        }
    }

    /// Fires the handshake and stall deadlines that are due at `now`.
    pub(super) fn fire_limits(&mut self, now: Instant) {
        if let (Some(at), Some(after)) = (
            self.limits.handshake_deadline,
            self.config.handshake_timeout,
        ) && now >= at
        {
            // What is queued (errors to early requests) may still be flushed, as on `close`.
            self.limits = Limits::default();
            if self.expire_deferred() {
                return self.close_with(CloseReason::InitializeNotAnswered { after });
            }
            return self.close_with(CloseReason::InitializeNotReceived { after });
        }
        let (Some(at), Some(after)) = (self.limits.stall_deadline, self.config.stall_timeout)
        else {
            return;
        };
        if now < at {
            return;
        }
        if std::mem::take(&mut self.limits.pulled) {
            // It read something since: still slow, not stalled. Check again later.
            self.limits.stall_deadline = Some(saturating_add(now, after));
            return;
        }
        let queued = self.outbound.bytes();
        self.limits = Limits::default();
        // What is queued can never be read: dropped, so the close frees it.
        self.outbound.clear();
        self.close_with(CloseReason::ClientStalled { after, queued });
    }

    /// The earliest deadline of the limits, if one is armed.
    pub(super) fn limits_timeout(&self) -> Option<Instant> {
        match (self.limits.handshake_deadline, self.limits.stall_deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Refuses `method` when the negotiated version predates it.
    pub(super) fn check_version(&self, method: &str) -> Result<(), super::UsageError> {
        let (Some(needs), Some(negotiated)) = (first_version_of(method), self.protocol_version())
        else {
            return Ok(());
        };
        if negotiated < needs {
            return Err(super::UsageError::VersionTooOld {
                method: method.to_owned(),
                needs,
                negotiated,
            });
        }
        Ok(())
    }
}
