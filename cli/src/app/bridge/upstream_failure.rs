//! What a host is told when the bridge's upstream server fails (it cannot be reached or
//! started, or it ended), and how `mcp` as a client reads that back.
//!
//! The bridge answers such a request with JSON-RPC -32603 whose message says what happened in
//! `mcp`'s words (`mcp bridge: the upstream server failed: could not connect to URL:
//! connection refused` for `initialize`, `mcp bridge: the server at URL closed the connection
//! before the answer came` for a later request) and whose `data` names the upstream for a
//! program:
//!
//! ```json
//! {"mcpBridge": {"upstream": "http://127.0.0.1:9/mcp", "failure": "connection_refused",
//!                "reason": "could not connect to http://127.0.0.1:9/mcp: connection refused"}}
//! ```
//!
//! `failure` is the upstream error's stable `--json` code (`connection_refused`,
//! `server_exited`, `spawn_failed`, …). A client that knows this (`mcp --url`) then says that
//! the bridge answered and its upstream failed, rather than suggesting that the URL it used
//! is wrong ([`from_bridge`]).

use mcp_manager::config::{ServerConfig, TransportConfig};
use mcp_proto::jsonrpc::ErrorObject;
use serde_json::{Value, json};

use crate::exit::CliError;

/// The member of an error's `data` that marks a bridge's upstream failure.
pub const DATA_KEY: &str = "mcpBridge";

/// The upstream as a person knows it: its URL, or its command line.
pub fn upstream_name(config: &ServerConfig) -> String {
    match &config.transport {
        TransportConfig::Http(h) => h.url.clone(),
        TransportConfig::Stdio(s) => {
            let words =
                std::iter::once(s.command.as_str()).chain(s.args.iter().map(String::as_str));
            // A word with a NUL byte cannot be quoted: the program alone then.
            shlex::try_join(words).unwrap_or_else(|_| s.command.clone())
        }
        _ => config.name.clone(),
    }
}

/// Whether `error` is a failure of the connection to the upstream (it could not be reached
/// or started, or it ended), as opposed to an answer of the upstream (a JSON-RPC error, a
/// timeout of one request).
pub fn is_upstream_failure(error: &CliError) -> bool {
    error.exit() == crate::exit::Exit::Connection
}

/// Whether the host is told of `error` as the upstream's failure ([`for_host`], with the
/// upstream named in its data): a failure of the connection ([`is_upstream_failure`]), or an
/// HTTP error status the upstream answered a request with (a 400, a 500: the upstream refused
/// or failed, not the bridge; a client of the bridge then hints at the upstream, not at a
/// server failing internally).
pub fn is_told_as_upstream(error: &CliError) -> bool {
    is_upstream_failure(error) || matches!(error, CliError::Http { .. })
}

/// The JSON-RPC error for the host when the connection to `upstream` failed with `error`:
/// while connecting (`initialize`) `mcp bridge: the upstream server failed: …`, on a later
/// request `mcp bridge: …` (the words `mcp` prints, which name the upstream).
pub fn for_host(upstream: &str, error: &CliError, connecting: bool) -> ErrorObject {
    let message = if connecting {
        format!("mcp bridge: the upstream server failed: {error}")
    } else {
        format!("mcp bridge: {error}")
    };
    let mut answer = ErrorObject::new(ErrorObject::INTERNAL_ERROR, message);
    let data = json!({DATA_KEY: {
        "upstream": upstream,
        "failure": error.code(),
        "reason": error.to_string(),
    }});
    // A value of strings always serializes; without data the message still says it all.
    answer.data = mcp_proto::jsonrpc::to_raw(&data).ok();
    answer
}

/// As a client of the bridge at `bridge`: the error to report for `error` (an answer to
/// `method`, `initialize` while connecting) when it is a bridge's upstream failure; `None`
/// for any other error.
pub fn from_bridge(bridge: &str, method: &str, error: &ErrorObject) -> Option<CliError> {
    let data: Value = serde_json::from_str(error.data.as_ref()?.get()).ok()?;
    let marker = data.get(DATA_KEY)?;
    let text = |key: &str| marker.get(key).and_then(Value::as_str).map(str::to_owned);
    Some(CliError::BridgeUpstream {
        bridge: bridge.to_owned(),
        method: method.to_owned(),
        upstream: text("upstream").unwrap_or_default(),
        failure: text("failure").unwrap_or_default(),
        // The bridge's own message when its data lacks the reason (another bridge's words).
        reason: text("reason").unwrap_or_else(|| error.message.clone()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_error_carries_the_upstream_and_reads_back_as_its_failure() {
        let refused = CliError::Network {
            url: "http://127.0.0.1:9/mcp".into(),
            what: "connecting".into(),
            kind: crate::exit::NetworkFailure::Refused,
            detail: "connection refused".into(),
        };
        assert!(is_upstream_failure(&refused));
        let answer = for_host("http://127.0.0.1:9/mcp", &refused, true);
        assert_eq!(answer.code, ErrorObject::INTERNAL_ERROR);
        assert!(
            answer.message.contains("upstream server failed")
                && answer.message.contains("127.0.0.1:9"),
            "{}",
            answer.message
        );
        let read = from_bridge("http://127.0.0.1:8080/mcp", "initialize", &answer)
            .expect("a bridge's upstream failure");
        let CliError::BridgeUpstream {
            bridge,
            upstream,
            failure,
            reason,
            ..
        } = &read
        else {
            panic!("{read:?}");
        };
        assert_eq!(bridge, "http://127.0.0.1:8080/mcp");
        assert_eq!(upstream, "http://127.0.0.1:9/mcp");
        assert_eq!(failure, "connection_refused");
        assert_eq!(reason, &refused.to_string());
        // The bridge's URL is not blamed: the hint speaks of the upstream.
        let hint = read.hint().unwrap_or_default();
        assert!(hint.contains("http://127.0.0.1:9/mcp"), "{hint}");
        assert!(!hint.contains("is the URL right"), "{hint}");
    }

    #[test]
    fn an_http_error_of_the_upstream_reads_back_as_the_upstreams_not_as_an_internal_failure() {
        let refused = CliError::Http {
            url: "evh".into(),
            what: "tools/call".into(),
            status: 400,
            text: "HTTP 400 Bad Request: {}".into(),
            connecting: false,
        };
        assert!(is_told_as_upstream(&refused));
        let answer = for_host("evh", &refused, false);
        let read = from_bridge("http://127.0.0.1:8080/mcp", "tools/call", &answer)
            .expect("a bridge's upstream failure");
        let hint = read.hint().unwrap_or_default();
        assert!(
            hint.contains("`evh` answered the bridge's request with an HTTP error"),
            "{hint}"
        );
        assert!(!hint.contains("failed internally"), "{hint}");
    }

    #[test]
    fn other_errors_are_not_read_as_a_bridges() {
        let plain = ErrorObject::new(ErrorObject::INTERNAL_ERROR, "boom");
        assert!(from_bridge("http://h/mcp", "tools/call", &plain).is_none());
        let mut other_data = plain.clone();
        other_data.data = mcp_proto::jsonrpc::to_raw(&json!({"detail": 1})).ok();
        assert!(from_bridge("http://h/mcp", "tools/call", &other_data).is_none());
    }
}
