use std::collections::HashSet;
use std::time::Duration;

use mcp_proto::jsonrpc::ErrorObject;

use serde_json::Value;

use super::*;

fn all() -> Vec<CliError> {
    vec![
        CliError::Usage("bad".into()),
        CliError::Spawn {
            program: "nope".into(),
            reason: "No such file".into(),
            not_found: true,
        },
        CliError::Connect {
            url: "http://127.0.0.1:9/mcp".into(),
            reason: "refused".into(),
        },
        CliError::Handshake("unsupported version".into()),
        CliError::Closed("EOF".into()),
        CliError::Remote {
            method: "tools/call".into(),
            error: ErrorObject::method_not_found("x"),
        },
        CliError::Timeout {
            what: "tools/call slow".into(),
            after: Duration::from_secs(5),
            connecting: false,
            total: false,
        },
        CliError::Interrupted,
        CliError::Stopped(StopSignal::Terminate),
        CliError::Stopped(StopSignal::Hangup),
        CliError::ToolFailed("boom".into()),
        CliError::LintErrors(2),
        CliError::File {
            path: "out.png".into(),
            reason: "denied".into(),
        },
        CliError::Invalid("tools/list: bad".into()),
        CliError::Unsupported("HTTP".into()),
        CliError::LoginRequired {
            url: "http://127.0.0.1:9/mcp".into(),
            refused: false,
            oauth: true,
        },
        CliError::AuthFailed("denied".into()),
        // Added with the error classes: keep the order of `documented_codes`.
        CliError::InvalidUrl {
            url: "localhost:3000".into(),
            reason: "no http:// or https:// scheme".into(),
            suggestion: Some("http://localhost:3000".into()),
        },
        CliError::InvalidArgument {
            message: "the tool has no argument `txt`".into(),
            suggestions: vec!["text".into()],
        },
        CliError::MissingArguments {
            tool: "add".into(),
            missing: vec!["b".into()],
            required: vec!["a".into(), "b".into()],
            signature: "a: number, b: number".into(),
        },
        CliError::Network {
            url: "http://127.0.0.1:9/mcp".into(),
            what: "connecting".into(),
            kind: NetworkFailure::Refused,
            detail: "Connection refused (os error 111)".into(),
        },
        CliError::Network {
            url: "http://127.0.0.1:9/mcp".into(),
            what: "tools/call".into(),
            kind: NetworkFailure::Timeout,
            detail: "operation timed out".into(),
        },
        CliError::Http {
            url: "http://127.0.0.1:9/mcp".into(),
            what: "initialize".into(),
            status: 500,
            text: "HTTP 500 Internal Server Error".into(),
            connecting: true,
        },
        CliError::Http {
            url: "http://127.0.0.1:9/mcp".into(),
            what: "tools/call".into(),
            status: 500,
            text: "HTTP 500 Internal Server Error".into(),
            connecting: false,
        },
        CliError::Exited("exited with status 1".into()),
        CliError::NotFound {
            kind: Missing::Tool,
            name: "ecko".into(),
            server: "mcp-demo".into(),
            said: None,
            suggestions: vec!["echo".into()],
        },
        CliError::InvalidParams(Box::new(Rejected {
            method: "tools/call".into(),
            name: "add".into(),
            message: "b is required".into(),
            data: None,
            required: vec!["a".into(), "b".into()],
            signature: "a: number, b: number".into(),
        })),
        CliError::OutputSchema {
            tool: "add".into(),
            violations: vec![("/sum".into(), r#""x" is not of type "number""#.into())],
            total: 2,
        },
        CliError::NotOffered {
            server: "mcp-demo".into(),
            method: "tasks/list".into(),
            reason: "its capabilities have no `tasks.list`".into(),
        },
        CliError::Config {
            message: "mcp.json: no server list".into(),
            hint: Some("rename \"mcpServerz\" to \"mcpServers\"".into()),
            did_you_mean: Some("mcpServers".into()),
        },
        CliError::TokenRefused {
            url: "http://127.0.0.1:9/mcp".into(),
            said: Some("the access token is not the one this server requires".into()),
        },
        CliError::BridgeUpstream {
            bridge: "http://127.0.0.1:8080/mcp".into(),
            method: "initialize".into(),
            upstream: "http://127.0.0.1:9/mcp".into(),
            failure: "connection_refused".into(),
            reason: "could not connect to http://127.0.0.1:9/mcp: connection refused".into(),
        },
        CliError::NotMcp {
            url: "http://127.0.0.1:8000/".into(),
            said: "it answered the initialize POST with HTTP 501 Not Implemented".into(),
        },
        CliError::NoServerUp(vec![
            ("a".into(), "exited with code 2: no db".into()),
            ("b".into(), "could not start `x`: not found".into()),
        ]),
    ]
}

#[test]
fn documented_codes() {
    let codes: Vec<u8> = all().iter().map(|e| e.exit().code()).collect();
    assert_eq!(
        codes,
        [
            2, 3, 3, 3, 3, 4, 5, 130, 143, 129, 1, 1, 2, 4, 3, 3, 3, 2, 2, 2, 3, 5, 3, 4, 3, 4, 4,
            4, 4, 2, 3, 3, 3, 3
        ]
    );
    assert_eq!(Exit::Ok.code(), 0);
}

#[test]
fn every_error_but_a_signal_has_a_hint() {
    for e in all() {
        let signal = matches!(e, CliError::Interrupted | CliError::Stopped(_));
        assert_eq!(e.hint().is_none(), signal, "{e}");
    }
}

#[test]
fn every_code_is_in_the_module_docs_with_its_exit() {
    let docs = include_str!("../exit.rs");
    for e in all() {
        let code = e.code();
        let row = docs
            .lines()
            .find(|l| l.starts_with(&format!("//! | `{code}` |")))
            .unwrap_or_else(|| panic!("`{code}` is not documented"));
        // The exit column: one number, `N / M` for a code shared by two signals, or
        // `N while connecting, M after`.
        let exit = row.split('|').nth(2).unwrap_or_default();
        let code_text = e.exit().code().to_string();
        assert!(
            exit.split(|c: char| !c.is_ascii_digit())
                .any(|n| n == code_text),
            "{code}: exit {} not in {row:?}",
            e.exit()
        );
    }
}

#[test]
fn a_wrong_token_a_bridges_upstream_and_failed_servers_say_what_they_are() {
    let [.., token, bridge, _, none] = &all()[..] else {
        unreachable!("the list is long")
    };
    assert_eq!(
        token.to_string(),
        "http://127.0.0.1:9/mcp refused the access token sent: the access token is not the one this server requires"
    );
    assert!(!token.hint().unwrap().contains("mcp login"));
    assert_eq!(
        bridge.to_string(),
        "initialize: the bridge at http://127.0.0.1:8080/mcp is up, but its upstream server \
         failed: could not connect to http://127.0.0.1:9/mcp: connection refused"
    );
    let hint = bridge.hint().unwrap();
    assert!(
        hint.contains("`http://127.0.0.1:9/mcp` is down or unreachable"),
        "{hint}"
    );
    assert_eq!(
        none.to_string(),
        r#"no server of the config file came up: server "a": exited with code 2: no db; server "b": could not start `x`: not found"#
    );
    assert!(!none.hint().unwrap().contains("connection ended"));
    let object = none.json_object().unwrap();
    assert_eq!(object["error"]["servers"][1]["name"], "b");
    assert_eq!(object["error"]["code"], "no_server_up");
}

#[test]
fn json_objects_have_code_exit_message_and_details() {
    let objects: Vec<Value> = all().iter().filter_map(CliError::json_object).collect();
    // tool_error and lint_errors print their result instead.
    assert_eq!(objects.len(), all().len() - 2);
    let codes: HashSet<&str> = objects
        .iter()
        .map(|o| o["error"]["code"].as_str().unwrap())
        .collect();
    // Distinct but for the two timeouts, the two HTTP errors, the two stop signals of the
    // list and the two ways authorization fails (`mcp login`, a refused token).
    assert_eq!(codes.len(), objects.len() - 4);
    for o in &objects {
        let e = &o["error"];
        assert!(e["exit"].is_u64() && e["message"].is_string(), "{o}");
    }
    let not_found = all()
        .into_iter()
        .find(|e| e.code() == "tool_not_found")
        .unwrap();
    assert_eq!(
        not_found.json_object().unwrap(),
        serde_json::json!({ "error": {
            "code": "tool_not_found",
            "exit": 4,
            "message": "tool `ecko` not found on mcp-demo",
            "hint": "did you mean `echo`? `mcp tools` lists the server's tools",
            "didYouMean": ["echo"],
        }})
    );
    let remote = CliError::Remote {
        method: "tools/call".into(),
        error: ErrorObject {
            data: serde_json::value::RawValue::from_string(r#"{"url":"https://x"}"#.into()).ok(),
            ..ErrorObject::new(-32042, "open a URL")
        },
    };
    let o = remote.json_object().unwrap();
    assert_eq!(o["error"]["code"], "server_error");
    assert_eq!(o["error"]["rpcCode"], -32042);
    assert_eq!(o["error"]["data"]["url"], "https://x");
    assert!(CliError::ToolFailed("x".into()).json_object().is_none());
}

#[test]
fn reports_say_what_and_what_to_try() {
    let e = CliError::Spawn {
        program: "uvx".into(),
        reason: "No such file or directory".into(),
        not_found: true,
    };
    assert_eq!(
        e.report(),
        "error: could not start `uvx`: No such file or directory\n\
         hint: is `uvx` installed and on PATH? Give its full path, or check the spelling\n"
    );
    let e = CliError::Timeout {
        what: "tools/call slow".into(),
        after: Duration::from_millis(1500),
        connecting: false,
        total: false,
    };
    assert_eq!(e.to_string(), "tools/call slow timed out after 1.50s");
    let e = CliError::Timeout {
        what: "tools/call".into(),
        after: Duration::from_secs(600),
        connecting: false,
        total: true,
    };
    assert_eq!(
        e.to_string(),
        "tools/call timed out after 600.00s (--max-time)"
    );
    assert!(e.hint().unwrap().contains("raise --max-time"), "{e}");
    assert_eq!(
        CliError::Stopped(StopSignal::Terminate).report(),
        "error: stopped by SIGTERM\n"
    );
    let e = CliError::Remote {
        method: "tools/call".into(),
        error: ErrorObject::new(ErrorObject::INVALID_PARAMS, "unknown tool: x"),
    };
    assert_eq!(
        e.to_string(),
        "tools/call failed: MCP error -32602: unknown tool: x"
    );
    assert!(e.hint().unwrap().contains("mcp tools"));
    let odd = CliError::Remote {
        method: "m".into(),
        error: ErrorObject::new(-1, "custom"),
    };
    assert_eq!(odd.hint(), None);
    assert_eq!(CliError::Interrupted.report(), "error: interrupted\n");
    let e = CliError::LoginRequired {
        url: "https://h/mcp".into(),
        refused: false,
        oauth: true,
    };
    assert_eq!(
        e.report(),
        "error: https://h/mcp needs authorization\nhint: run: mcp login --url https://h/mcp\n"
    );
    let static_token = CliError::LoginRequired {
        url: "https://h/mcp".into(),
        refused: false,
        oauth: false,
    };
    let hint = static_token.hint().expect("a hint");
    assert!(hint.contains("-H 'Authorization: Bearer"), "{hint}");
    assert!(!hint.contains("mcp login"), "{hint}");
}

#[test]
fn http_and_network_errors_never_point_at_stderr() {
    for e in all() {
        let text = e.report();
        let stdio_only = matches!(e, CliError::Exited(_) | CliError::Spawn { .. });
        if !stdio_only && !matches!(e, CliError::Remote { .. }) {
            assert!(!text.contains("stderr"), "{text}");
        }
    }
    let e = CliError::Network {
        url: "http://127.0.0.1:9/mcp".into(),
        what: "connecting".into(),
        kind: NetworkFailure::Refused,
        detail: String::new(),
    };
    assert_eq!(
        e.report(),
        "error: could not connect to http://127.0.0.1:9/mcp: connection refused\n\
         hint: is the server running, on that host and port? Add -v to see the HTTP exchange\n"
    );
    let dropped = |detail: &str| CliError::Network {
        url: "http://127.0.0.1:9/mcp".into(),
        what: "tools/call".into(),
        kind: NetworkFailure::Reset,
        detail: detail.into(),
    };
    assert_eq!(
        dropped("the server closed the connection before its response was complete").to_string(),
        "tools/call: the server at http://127.0.0.1:9/mcp closed the connection before the answer came"
    );
    assert_eq!(
        dropped("connection error: Connection reset by peer (os error 104)").to_string(),
        "tools/call: the connection to http://127.0.0.1:9/mcp was reset before the answer came"
    );
}

#[test]
fn the_rpc_prefix_is_stripped_once_or_more() {
    assert_eq!(strip_rpc_prefix("MCP error -32602: bad", -32602), "bad");
    assert_eq!(
        strip_rpc_prefix("MCP error -32602: MCP error -32602: bad", -32602),
        "bad"
    );
    assert_eq!(
        strip_rpc_prefix("MCP error -1: bad", -32602),
        "MCP error -1: bad"
    );
    assert_eq!(strip_rpc_prefix("bad", -32602), "bad");
}

#[test]
fn missing_and_invalid_params_list_the_required_arguments() {
    let e = all()
        .into_iter()
        .find(|e| e.code() == "missing_argument")
        .unwrap();
    assert_eq!(
        e.report(),
        "error: `add`: missing required argument `b`\n\
         hint: `add` takes: a: number, b: number\n"
    );
    let e = all()
        .into_iter()
        .find(|e| matches!(e, CliError::InvalidParams(_)))
        .unwrap();
    assert_eq!(
        e.hint().unwrap(),
        "`add` requires `a`, `b` (takes: a: number, b: number); `mcp tools` shows its input schema"
    );
}

#[test]
fn a_stalled_server_was_disconnected_by_the_client_not_closed_by_itself() {
    use mcp_proto::session::CloseReason;
    let stalled = CloseReason::Stalled {
        after: Duration::from_secs(30),
        queued: 70_000,
        dropped: 2,
    };
    let text = CliError::session_closed(&stalled).to_string();
    assert!(
        text.starts_with("the client disconnected: the server stopped reading its input"),
        "{text}"
    );
    let eof = CloseReason::TransportClosed { detail: None };
    assert_eq!(
        CliError::session_closed(&eof).to_string(),
        "the server closed the connection: transport closed"
    );
}

#[test]
fn a_task_result_refused_with_an_internal_error_points_to_the_tasks_status() {
    let e = CliError::Remote {
        method: "tasks/result".into(),
        error: ErrorObject::new(ErrorObject::INTERNAL_ERROR, "Task t-1 has no result stored"),
    };
    assert!(
        e.hint().unwrap_or_default().contains("mcp tasks get"),
        "{:?}",
        e.hint()
    );
    let e = CliError::Remote {
        method: "tools/call".into(),
        error: ErrorObject::new(ErrorObject::INTERNAL_ERROR, "boom"),
    };
    assert!(e.hint().unwrap_or_default().contains("failed internally"));
}
