//! Test bodies for checking tool results against the tools' output schemas
//! ([`ClientBuilder::validate_output`]), generic over the runtime like
//! [`suite`](super::suite) (which re-exports them).

use std::time::Duration;

use serde_json::{Value, json};

use super::FakeServer;
use super::suite::{connect_fake, within};
use crate::{CallOptions, ClientBuilder, Error, Runtime};

const WAIT: Duration = Duration::from_secs(5);

/// A server with three tools: `add` declares `{"sum": number}` (required) as its output,
/// `broken` declares a schema that does not compile, `plain` declares none. `tools/call`
/// answers with the `structuredContent` given in the arguments' `out` (none when absent) and
/// `isError` from `fail`.
fn script(server: &FakeServer) {
    server.on_request("tools/list", |_| {
        Ok(json!({"tools": [
            {
                "name": "add",
                "inputSchema": {"type": "object"},
                "outputSchema": {
                    "type": "object",
                    "properties": {"sum": {"type": "number"}},
                    "required": ["sum"]
                }
            },
            {"name": "broken", "inputSchema": {"type": "object"}, "outputSchema": {"type": 12}},
            {"name": "plain", "inputSchema": {"type": "object"}}
        ]}))
    });
    server.on_request("tools/call", |p| {
        let mut result = json!({"content": [{"type": "text", "text": "done"}]});
        if let Some(out) = p["arguments"].get("out") {
            result["structuredContent"] = out.clone();
        }
        if p["arguments"]["fail"] == true {
            result["isError"] = json!(true);
        }
        Ok(result)
    });
}

/// The violations of an [`Error::OutputSchema`] as `(pointer, message)`, or a panic.
fn violations(r: Result<mcp_proto::types::CallToolResult, Error>) -> Vec<(String, String)> {
    match r {
        Err(Error::OutputSchema {
            ref tool,
            ref violations,
            total,
            ..
        }) => {
            assert_eq!(tool, "add");
            assert_eq!(total, violations.len());
            violations
                .iter()
                .map(|v| (v.pointer.clone(), v.message.clone()))
                .collect()
        }
        other => panic!("expected an output schema error, got {other:?}"),
    }
}

/// After `list_tools`, a valid result passes; an invalid or missing `structuredContent` is
/// [`Error::OutputSchema`] naming the pointer; a tool's own failure, a tool without a schema
/// and a tool whose schema does not compile are not checked; the connection goes on.
pub async fn output_schema_is_checked<R: Runtime>(rt: R) {
    let (server, client) = connect_fake(&rt, ClientBuilder::new()).await;
    script(&server);
    // Before any listing nothing is known about the tool: not checked.
    let r = client
        .call_tool("add", json!({"out": {"sum": "three"}}))
        .await;
    assert!(r.is_ok(), "an unlisted tool is not checked: {r:?}");

    assert_eq!(client.list_tools().await.expect("list").len(), 3);
    let r = client
        .call_tool("add", json!({"out": {"sum": 3}}))
        .await
        .expect("a valid result passes");
    assert_eq!(r.structured_content, Some(json!({"sum": 3})));

    let wrong = client
        .call_tool("add", json!({"out": {"sum": "three"}}))
        .await;
    let shown = wrong.as_ref().map_err(ToString::to_string).err();
    let v = violations(wrong);
    assert_eq!(v.len(), 1);
    assert_eq!(v[0].0, "/sum");
    assert!(v[0].1.contains("number"), "{v:?}");
    let shown = shown.expect("an error");
    assert!(
        shown.contains("tool \"add\"") && shown.contains("at /sum:"),
        "{shown}"
    );

    let v = violations(client.call_tool("add", json!({"out": {"total": 3}})).await);
    assert_eq!(v[0].0, "");
    assert!(v[0].1.contains("sum"), "{v:?}");

    let v = violations(client.call_tool("add", json!({})).await);
    assert_eq!(v[0].0, "");
    assert!(v[0].1.contains("structuredContent is missing"), "{v:?}");

    let failed = client
        .call_tool("add", json!({"fail": true}))
        .await
        .expect("a tool's own failure is not checked");
    assert_eq!(failed.is_error, Some(true));
    client
        .call_tool("broken", json!({"out": "anything"}))
        .await
        .expect("a schema that does not compile is skipped");
    client
        .call_tool("plain", json!({"out": [1, 2]}))
        .await
        .expect("a tool without a schema is not checked");
    // Raw requests are never checked.
    let params = serde_json::value::to_raw_value(
        &json!({"name": "add", "arguments": {"out": {"sum": "x"}}}),
    )
    .expect("params");
    let raw = client
        .request_raw("tools/call", Some(params), CallOptions::new())
        .await
        .expect("raw call");
    let raw: Value = serde_json::from_str(raw.get()).expect("JSON");
    assert_eq!(raw["structuredContent"], json!({"sum": "x"}));
    client.ping().await.expect("the connection goes on");
}

/// `validate_output(false)` turns the check off for the client, `skip_output_check` for one
/// call.
pub async fn output_schema_opt_out<R: Runtime>(rt: R) {
    let (server, client) = connect_fake(&rt, ClientBuilder::new().validate_output(false)).await;
    script(&server);
    client.list_tools().await.expect("list");
    let r = client
        .call_tool("add", json!({"out": {"sum": "three"}}))
        .await
        .expect("validation is off for this client");
    assert_eq!(r.structured_content, Some(json!({"sum": "three"})));

    let (server, client) = connect_fake(&rt, ClientBuilder::new()).await;
    script(&server);
    client.list_tools().await.expect("list");
    client
        .call_tool_with(
            "add",
            json!({"out": {"sum": "three"}}),
            CallOptions::new().skip_output_check(),
        )
        .await
        .expect("validation is off for this call");
    violations(
        client
            .call_tool("add", json!({"out": {"sum": "three"}}))
            .await,
    );
}

/// `notifications/tools/list_changed` drops the schemas (a call made once the notification
/// is seen is not checked); the next listing brings them back.
pub async fn output_schemas_dropped_on_list_changed<R: Runtime>(rt: R) {
    let (server, client) = connect_fake(&rt, ClientBuilder::new()).await;
    script(&server);
    client.list_tools().await.expect("list");
    violations(
        client
            .call_tool("add", json!({"out": {"sum": "three"}}))
            .await,
    );

    let mut notes = client.notifications();
    server.notify("notifications/tools/list_changed", json!({}));
    let note = within(&rt, WAIT, notes.recv())
        .await
        .expect("the notification in time")
        .expect("the stream is open")
        .expect("no lag");
    assert_eq!(note.method, "notifications/tools/list_changed");
    client
        .call_tool("add", json!({"out": {"sum": "three"}}))
        .await
        .expect("the schemas were dropped with the old tool list");

    client.list_tools().await.expect("list again");
    violations(
        client
            .call_tool("add", json!({"out": {"sum": "three"}}))
            .await,
    );
}
