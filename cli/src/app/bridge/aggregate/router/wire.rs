//! The JSON the router reads and writes: the host's params, the error objects it answers
//! with, and the results it passes back (the notes on a tool's error, host-visible URIs).

use mcp_proto::jsonrpc::{ErrorObject, to_raw};
use mcp_tokio::mcp_driver::ManagerError;
use mcp_tokio::server::RequestOutcome;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use crate::app::bridge::aggregate::uri;
use crate::app::bridge::forward::error_for_host;

pub(super) fn internal(message: String) -> ErrorObject {
    ErrorObject::new(
        ErrorObject::INTERNAL_ERROR,
        format!("mcp bridge: {message}"),
    )
}

/// The host's error for a manager failure: the server's own error as it came, else what
/// kept the request from it.
pub(super) fn manager_error(e: ManagerError) -> ErrorObject {
    match e {
        ManagerError::Call(e) => error_for_host(e),
        other => internal(other.to_string()),
    }
}

/// The error of a tool name that is not offered: the same whether it was never listed or
/// `--allow` / `--deny` keep it out.
pub(super) fn unknown_tool(name: &str) -> ErrorObject {
    ErrorObject::new(ErrorObject::INVALID_PARAMS, format!("unknown tool: {name}"))
}

/// The `failure` in the bridge's upstream-failure data of a call to a server that is not
/// running (see [`upstream_failure`](crate::app::bridge::upstream_failure)).
pub const NOT_RUNNING: &str = "server_not_running";

/// The error of a call to a tool of `server`, which is not running (it failed to start, its
/// entry cannot be used, it is disabled) for the reason `why`: -32603 saying so, with the
/// bridge's upstream-failure data (`failure` [`NOT_RUNNING`]) naming the server, so that a
/// host tells it from an unknown tool and `mcp` as the host reports the server's failure.
pub(super) fn not_running(server: &str, why: &str) -> ErrorObject {
    let mut error = internal(format!("server {server:?} is not running: {why}"));
    let data = json!({crate::app::bridge::upstream_failure::DATA_KEY: {
        "upstream": server,
        "failure": NOT_RUNNING,
        "reason": format!("server {server:?} is not running: {why}"),
    }});
    // A value of strings always serializes; without data the message still says it all.
    error.data = to_raw(&data).ok();
    error
}

/// `error`, of a request to the HTTP entry `server` at `url`, with the entry and its URL
/// named when it is the connection's failure: the driver names the connection by the entry's
/// name alone where a URL would be (`could not connect to evh: connection refused`), which
/// reads as a host name; the host gets `server "evh" (URL): could not connect: connection
/// refused`. Any other error (the server's own answer) is left as it came.
pub(super) fn name_http_entry(mut error: ErrorObject, server: &str, url: &str) -> ErrorObject {
    use crate::app::bridge::upstream_failure::DATA_KEY;
    let Some(mut data) = error
        .data
        .as_ref()
        .and_then(|d| serde_json::from_str::<Value>(d.get()).ok())
    else {
        return error;
    };
    let Some(marker) = data.get_mut(DATA_KEY).and_then(Value::as_object_mut) else {
        return error;
    };
    if marker.get("upstream").and_then(Value::as_str) != Some(server) {
        return error;
    }
    let mut reason = marker
        .get("reason")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    // `… to evh: …`, `the connection to evh was reset`, `the server at evh closed …`,
    // `TLS with evh failed`, `the host of evh: …`: the name dropped with its preposition.
    for preposition in ["to", "at", "with", "of"] {
        for after in [":", " "] {
            reason = reason.replace(&format!(" {preposition} {server}{after}"), after);
        }
    }
    let named = format!("server {server:?} ({url}): {reason}");
    error.message = format!("mcp bridge: {named}");
    marker.insert("reason".into(), Value::String(named));
    marker.insert("url".into(), Value::String(url.to_owned()));
    error.data = to_raw(&data).ok().or(error.data);
    error
}

pub(super) fn raw(value: &Value) -> RequestOutcome {
    to_raw(value).map_err(|e| internal(e.to_string()))
}

/// The request's params as an object (absent params: an empty one).
pub(super) fn object(params: Option<&RawValue>) -> Result<Map<String, Value>, ErrorObject> {
    match params {
        None => Ok(Map::new()),
        Some(p) => serde_json::from_str(p.get()).map_err(|e| {
            ErrorObject::new(
                ErrorObject::INVALID_PARAMS,
                format!("params must be an object: {e}"),
            )
        }),
    }
}

pub(super) fn string_field(
    object: &Map<String, Value>,
    field: &str,
) -> Result<String, ErrorObject> {
    match object.get(field) {
        Some(Value::String(s)) => Ok(s.clone()),
        _ => Err(ErrorObject::new(
            ErrorObject::INVALID_PARAMS,
            format!("`{field}` must be a string"),
        )),
    }
}

/// The server and its own URI behind a host-visible one.
pub(super) fn server_uri(host_uri: &str) -> Result<(String, String), ErrorObject> {
    uri::from_host(host_uri)
        .map(|(server, original)| (server, original.to_owned()))
        .ok_or_else(|| {
            ErrorObject::new(
                ErrorObject::INVALID_PARAMS,
                format!(
                    "unknown resource {host_uri:?}: this bridge's URIs start with {}SERVER/",
                    uri::SCHEME
                ),
            )
        })
}

/// Appended, with the reason, to a tool's error result when a request of its server
/// (sampling, elicitation) was refused during the call (`--config --listen`).
pub const NOT_FORWARDED: &str = "mcp bridge --config --listen passes a server's sampling and \
     elicitation requests to the one HTTP session with requests in flight to that server, and \
     could not pass one during this call";

/// Appended to a tool's error result about roots with `--config --listen`.
pub const ROOTS_NOT_OFFERED: &str = "(mcp bridge --config --listen does not offer roots to \
     its servers: every HTTP session shares them, and roots describe one host's workspace)";

/// `result` with a note appended to its content when it is a tool error: [`NOT_FORWARDED`]
/// and `refused` when a request of its server was refused during the call, else
/// [`ROOTS_NOT_OFFERED`] when its text names roots; otherwise as it is.
pub(super) fn note_tool_error(result: Box<RawValue>, refused: Option<&str>) -> RequestOutcome {
    if !result.get().contains("\"isError\"") {
        return Ok(result);
    }
    let Ok(mut value) = serde_json::from_str::<Value>(result.get()) else {
        return Ok(result);
    };
    let is_error = value.get("isError").and_then(Value::as_bool) == Some(true);
    let Some(content) = value.get_mut("content").and_then(Value::as_array_mut) else {
        return Ok(result);
    };
    let says = |words: &str| {
        content.iter().any(|c| {
            c.get("text")
                .and_then(Value::as_str)
                .is_some_and(|t| t.contains(words))
        })
    };
    let note = match refused {
        // The server's own error text passed the reason on already.
        Some(reason) if says(reason) => format!("({NOT_FORWARDED})"),
        Some(reason) => format!("({NOT_FORWARDED}: {reason})"),
        None if says("roots") => ROOTS_NOT_OFFERED.to_owned(),
        None => return Ok(result),
    };
    if !is_error {
        return Ok(result);
    }
    content.push(json!({"type": "text", "text": note}));
    to_raw(&value).map_err(|e| internal(e.to_string()))
}

/// `server`'s result with its resource URIs made host-visible ([`uri::result_to_host`]).
pub(super) fn host_uris(server: &str, result: &RawValue) -> RequestOutcome {
    uri::result_to_host(server, result).map_err(|e| internal(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_error_gets_the_refusal_or_a_word_on_roots() {
        let raw = |v: Value| to_raw(&v).expect("json");
        let error =
            |text: &str| raw(json!({"isError": true, "content": [{"type": "text", "text": text}]}));
        let noted = note_tool_error(error("no model answered"), Some("2 host sessions ..."))
            .expect("a result");
        assert!(noted.get().contains(NOT_FORWARDED), "{noted}");
        assert!(noted.get().contains("2 host sessions ..."), "{noted}");
        // A reason the server's text gives already is not repeated.
        let noted = note_tool_error(
            error("declined: mcp bridge: 2 host sessions ..."),
            Some("2 host sessions ..."),
        )
        .expect("a result");
        assert_eq!(noted.get().matches("2 host sessions").count(), 1, "{noted}");
        assert!(noted.get().contains(NOT_FORWARDED), "{noted}");
        let noted = note_tool_error(error("the client has no roots"), None).expect("a result");
        assert!(noted.get().contains("does not offer roots"), "{noted}");
        for (untouched, refused) in [
            (error("disk full"), None),
            (
                raw(json!({"content": [{"type": "text", "text": "roots: 2"}]})),
                None,
            ),
            (
                raw(json!({"content": [{"type": "text", "text": "ok"}]})),
                Some("refused"),
            ),
        ] {
            let before = untouched.get().to_owned();
            let after = note_tool_error(untouched, refused).expect("a result");
            assert_eq!(after.get(), before);
        }
    }

    #[test]
    fn a_lost_http_entry_is_named_with_its_url() {
        let failure = crate::app::bridge::upstream_failure::for_host(
            "evh",
            &crate::exit::CliError::Network {
                url: "evh".into(),
                what: String::new(),
                kind: crate::exit::NetworkFailure::Refused,
                detail: "connection refused".into(),
            },
            false,
        );
        let named = name_http_entry(failure, "evh", "http://127.0.0.1:3001/mcp");
        assert_eq!(
            named.message,
            r#"mcp bridge: server "evh" (http://127.0.0.1:3001/mcp): could not connect: connection refused"#
        );
        let data: Value = serde_json::from_str(named.data.expect("data").get()).expect("json");
        assert_eq!(data["mcpBridge"]["upstream"], "evh");
        assert_eq!(data["mcpBridge"]["failure"], "connection_refused");
        assert_eq!(data["mcpBridge"]["url"], "http://127.0.0.1:3001/mcp");
        // The server's own error is not touched.
        let own = ErrorObject::new(-32000, "to evh: no");
        assert_eq!(
            name_http_entry(own.clone(), "evh", "u").message,
            own.message
        );
    }

    #[test]
    fn a_foreign_uri_is_invalid_params() {
        let e = server_uri("demo://readme").expect_err("not ours");
        assert_eq!(e.code, ErrorObject::INVALID_PARAMS);
        assert!(e.message.contains("mcp-bridge://SERVER/"), "{}", e.message);
        let (server, original) = server_uri("mcp-bridge://demo/demo://readme").expect("ours");
        assert_eq!(
            (server.as_str(), original.as_str()),
            ("demo", "demo://readme")
        );
    }

    #[test]
    fn params_must_be_an_object_with_string_fields() {
        let bad = to_raw(&json!([1])).expect("encodes");
        assert_eq!(
            object(Some(&bad)).expect_err("array").code,
            ErrorObject::INVALID_PARAMS
        );
        let params = object(Some(&to_raw(&json!({"name": 3})).expect("encodes"))).expect("object");
        assert!(string_field(&params, "name").is_err());
        assert!(object(None).expect("empty").is_empty());
    }
}
