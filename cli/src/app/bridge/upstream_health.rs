//! Whether an HTTP upstream is reachable, as the requests forwarded to it find it, said on
//! stderr when that changes: `mcp bridge: server "NAME" was lost; reconnecting (attempt N)`
//! when a request first finds it unreachable (refused, reset, DNS, TLS), and `mcp bridge:
//! server "NAME" is ready` when a request reaches it again: the words the aggregate bridge
//! uses for a stdio server's reconnects ([`super::aggregate::watch`]).
//!
//! An HTTP upstream is reconnected by the next request (there is no process to watch), so
//! its attempts are the requests that find it down: the first is said at once, each later one
//! with `-v` only (a host that polls would fill the log).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use mcp_manager::config::{ServerConfig, TransportConfig};

use mcp_proto::jsonrpc::ErrorObject;
use mcp_tokio::server::RequestOutcome;
use serde_json::Value;

use super::forward::Forwarder;
use super::upstream_failure::DATA_KEY;
use crate::app::ui::Ui;

/// The `failure` codes of a bridge's upstream-failure data that mean the upstream could not
/// be reached (see [`super::upstream_failure`]).
const UNREACHABLE: [&str; 6] = [
    "connection_refused",
    "connection_reset",
    "dns_failed",
    "tls_failed",
    "network_error",
    "connect_failed",
];

/// The reachability of each HTTP upstream, by name; reports its changes on stderr.
pub struct UpstreamHealth {
    ui: Ui,
    /// The upstreams found unreachable, with the number of requests that found them so.
    lost: Mutex<HashMap<String, u32>>,
}

impl UpstreamHealth {
    /// Reports on `ui`'s stderr.
    pub fn new(ui: Ui) -> Self {
        UpstreamHealth {
            ui,
            lost: Mutex::default(),
        }
    }

    /// Call with the outcome of every request forwarded to the HTTP upstream `server` (its
    /// URL, or its name in a config file). Says when it was lost (attempt 1 at once, later
    /// ones with `-v`) and when a request reached it again.
    pub fn saw(&self, server: &str, outcome: &RequestOutcome) {
        let mut lost = self.lost.lock().unwrap_or_else(PoisonError::into_inner);
        match reachability(outcome) {
            Some(false) => {
                let attempt = lost.entry(server.to_owned()).or_insert(0);
                *attempt += 1;
                if *attempt == 1 || self.ui.verbose > 0 {
                    self.ui.note(&format!(
                        "mcp bridge: server {server:?} was lost; reconnecting (attempt {attempt})"
                    ));
                }
            }
            Some(true) if lost.remove(server).is_some() => {
                self.ui
                    .info(&format!("mcp bridge: server {server:?} is ready"));
            }
            Some(true) | None => {}
        }
    }
}

/// `forwarder` reporting to `health` when `config` is an HTTP upstream (a stdio child's
/// loss ends its host session instead); as it is otherwise.
pub fn watched(
    forwarder: Forwarder,
    config: &ServerConfig,
    health: &Arc<UpstreamHealth>,
) -> Forwarder {
    match &config.transport {
        TransportConfig::Http(h) => forwarder.with_health(health.clone(), h.url.clone()),
        _ => forwarder,
    }
}

/// `Some(false)` when `outcome` says the upstream could not be reached, `Some(true)` when it
/// answered (a result, or an error of its own), `None` when it does not tell (a timeout, an
/// error of the bridge's own).
fn reachability(outcome: &RequestOutcome) -> Option<bool> {
    let error = match outcome {
        Ok(_) => return Some(true),
        Err(error) => error,
    };
    let failure = error
        .data
        .as_ref()
        .and_then(|d| serde_json::from_str::<Value>(d.get()).ok())
        .and_then(|d| d[DATA_KEY]["failure"].as_str().map(str::to_owned));
    match failure {
        Some(failure) => UNREACHABLE.contains(&failure.as_str()).then_some(false),
        // The server's own error: it answered. The bridge's own (-32603 `mcp bridge: …`, a
        // timeout) says nothing of the server.
        None => (error.code != ErrorObject::INTERNAL_ERROR
            || !error.message.starts_with("mcp bridge:"))
        .then_some(true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exit::{CliError, NetworkFailure};

    #[test]
    fn a_network_failure_is_unreachable_and_an_answer_reachable() {
        let refused = CliError::Network {
            url: "http://127.0.0.1:9/mcp".into(),
            what: String::new(),
            kind: NetworkFailure::Refused,
            detail: "connection refused".into(),
        };
        let failed = super::super::upstream_failure::for_host("u", &refused, false);
        assert_eq!(reachability(&Err(failed)), Some(false));
        let answer = mcp_proto::jsonrpc::to_raw(&serde_json::json!({})).expect("json");
        assert_eq!(reachability(&Ok(answer)), Some(true));
        let own = ErrorObject::new(-32602, "Tool x not found");
        assert_eq!(reachability(&Err(own)), Some(true));
        let timeout = ErrorObject::new(
            ErrorObject::INTERNAL_ERROR,
            "mcp bridge: tools/call timed out after 1.50s",
        );
        assert_eq!(reachability(&Err(timeout)), None);
    }
}
