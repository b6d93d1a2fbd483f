//! What a `--listen` bridge tells its operator on stderr about its hosts, one terse line
//! each, at the default verbosity: each host session opened and closed (numbered, with the
//! host's name), and each request refused at the door (401 without or with a wrong bearer
//! token, 403 for a browser's Origin, 503 for a new session past `--max-sessions`). Other
//! refusals (404 for an unknown session, a bad header) with `-v`. No line holds a token.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use mcp_proto::server::http::Refusal;
use mcp_proto::server::http::SessionKey;
use mcp_proto::session::CloseReason;
use mcp_proto::types::Implementation;
use mcp_tokio::server::ServerHandle;
use mcp_tokio::server::http::StreamableHttp;

use crate::app::trace::HostWire;
use crate::app::ui::Ui;

/// The number of the next host session, from 1, over the whole process.
static NEXT_SESSION: AtomicU64 = AtomicU64::new(1);

/// `http` reporting each refused request on `ui`: 401, 403 and a session past the bound
/// always, others with `-v`.
pub fn reporting_refusals(http: StreamableHttp, ui: &Ui) -> StreamableHttp {
    let ui = ui.clone();
    http.on_refused(move |refusal| {
        if let Some((always, line)) = refusal_line(refusal)
            && (always || ui.verbose > 0)
        {
            ui.note(&line);
        }
    })
}

/// The line for `refusal`, and whether it is said without `-v` (an access refused: 401,
/// 403; a host turned away for want of room: 503); `None` for nothing worth a line.
fn refusal_line(refusal: &Refusal) -> Option<(bool, String)> {
    Some(match refusal {
        Refusal::Unauthorized => (
            true,
            "mcp bridge: refused a request with no Authorization (401; --bearer-token-env is set)"
                .to_owned(),
        ),
        Refusal::InvalidToken => (
            true,
            "mcp bridge: refused a request whose Authorization is wrong (401)".to_owned(),
        ),
        Refusal::Origin(origin) => (
            true,
            format!(
                "mcp bridge: refused a request from Origin {origin:?} (403; --allow-origin \
                 admits it)"
            ),
        ),
        Refusal::TooManySessions { limit } => (
            true,
            format!(
                "mcp bridge: refused a new host session: the session limit is reached (503; --max-sessions \
                 {limit}; a session ends with DELETE or after --session-idle)"
            ),
        ),
        other => (false, format!("mcp bridge: refused a request: {other}")),
    })
}

/// Why a host session closed, as its closed line says it. `Local` is the side that owns the
/// session: for a host session that is the bridge (stopping, its upstream gone, an
/// `initialize` that failed), not the client that `CloseReason`'s own wording names.
fn close_wording(reason: &CloseReason) -> String {
    match reason {
        CloseReason::Local => "closed by the bridge".to_owned(),
        other => other.to_string(),
    }
}

/// How the session lines name a host: the name and version of its `clientInfo`.
pub fn host_name(client: &Implementation) -> String {
    format!("{} {}", client.name, client.version)
}

/// One host session's lines: opened, closed, a tool it was refused.
#[derive(Clone)]
pub struct SessionLog {
    number: u64,
    ui: Ui,
    /// The host's name and version, once known (its `initialize`): the session's handle no
    /// longer has them when the session has closed.
    host: Arc<OnceLock<String>>,
    /// With `-v` (`--config --listen`): the host-side wire trace this session is in, until it
    /// closes.
    wire: Option<(Arc<HostWire>, SessionKey)>,
}

impl SessionLog {
    /// The session's number (from 1, over the whole process).
    pub fn number(&self) -> u64 {
        self.number
    }

    /// A new session's log, with the next number.
    pub fn new(ui: &Ui) -> Self {
        SessionLog {
            number: NEXT_SESSION.fetch_add(1, Ordering::Relaxed),
            ui: ui.clone(),
            host: Arc::default(),
            wire: None,
        }
    }

    /// `ui` with each line marked `[session N] `: the `-v` wire trace of what this host
    /// session sent and was sent, told from the other sessions'.
    pub fn marked(&self, ui: &Ui) -> Ui {
        ui.with_prefix(&format!("session {}", self.number))
    }

    /// `ui` with each line marked `[session N upstream] `: the `-v` wire trace of this
    /// session's own upstream connection (`--listen` with one upstream: each session has its
    /// own), told from the host's side of the same session.
    pub fn upstream_marked(&self, ui: &Ui) -> Ui {
        ui.with_prefix(&format!("session {} upstream", self.number))
    }

    /// This log with the session (`key`) traced in `wire`, its lines marked as
    /// [`marked`](Self::marked) marks them, until it closes.
    #[must_use]
    pub fn wire_traced(mut self, wire: &Arc<HostWire>, key: SessionKey) -> Self {
        wire.add(key, self.marked(&self.ui));
        self.wire = Some((wire.clone(), key));
        self
    }

    /// Call when the session is opened (its host initialized); `host` is the host's name and
    /// version when known.
    pub fn opened(&self, host: Option<&str>) {
        if let Some(host) = host {
            self.knows_host(host);
        }
        let by = host.map(|h| format!(" by {h}")).unwrap_or_default();
        self.ui.info(&format!(
            "mcp bridge: host session {} opened{by}",
            self.number
        ));
    }

    /// Records the host's name and version (the `clientInfo` of its `initialize`) for the
    /// closed line, when it was not known at [`opened`](Self::opened). The first one stays.
    pub fn knows_host(&self, host: &str) {
        let _ = self.host.set(host.to_owned());
    }

    /// Call when the session ended, `session` its handle and `reason` why.
    pub fn closed(&self, session: &ServerHandle, reason: &CloseReason) {
        self.ui.info(&self.closed_line(session, reason));
        if let Some((wire, key)) = &self.wire {
            wire.remove(*key);
        }
    }

    /// The closed line: the host named as the opened line names it, from what was recorded
    /// (else from the session's handle, which may have lost it by now).
    fn closed_line(&self, session: &ServerHandle, reason: &CloseReason) -> String {
        let host = self
            .host
            .get()
            .cloned()
            .or_else(|| session.client_info().map(|c| host_name(&c)));
        let by = host.map(|h| format!(" by {h}")).unwrap_or_default();
        format!(
            "mcp bridge: host session {}{by} closed: {}",
            self.number,
            close_wording(reason)
        )
    }

    /// Call when the session was refused `tool` (kept out by `--allow` / `--deny`).
    pub fn denied(&self, tool: &str) {
        self.ui.note(&format!(
            "mcp bridge: host session {}: refused tool {tool:?} (--allow / --deny)",
            self.number
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn access_refusals_are_said_and_others_only_with_v() {
        let said = |r: Refusal| refusal_line(&r).expect("a line");
        assert!(said(Refusal::Unauthorized).0);
        assert!(
            said(Refusal::InvalidToken)
                .1
                .contains("Authorization is wrong (401)")
        );
        let (always, line) = said(Refusal::Origin("https://evil.example".into()));
        assert!(
            always && line.contains(r#"Origin "https://evil.example" (403"#),
            "{line}"
        );
        assert!(!said(Refusal::UnknownSession).0);
        let (always, line) = said(Refusal::UnsupportedVersion("2026-07-28".into()));
        assert!(
            !always && line.ends_with("(400)") && !line.contains("UnsupportedVersion("),
            "{line}"
        );
        let (always, line) = said(Refusal::TooManySessions { limit: 3 });
        assert!(
            always
                && line
                    .contains("refused a new host session: the session limit is reached (503; --max-sessions 3"),
            "{line}"
        );
    }

    #[test]
    fn a_session_the_bridge_closed_is_not_said_to_be_closed_by_its_client() {
        assert_eq!(close_wording(&CloseReason::Local), "closed by the bridge");
        let deleted = CloseReason::TransportClosed {
            detail: Some("the client deleted the session".into()),
        };
        assert_eq!(
            close_wording(&deleted),
            "transport closed: the client deleted the session"
        );
    }
}
