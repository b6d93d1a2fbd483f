//! The resource-exhaustion and undecodable-answer rows of the fault matrix, against the
//! `fault_server` binary: a list that never ends, answers that cannot be decoded, errors that
//! name no request, a peer that floods requests and never reads. Each asserts the typed
//! outcome within a bound (a guard against hangs, far below the 60 s request timeout the
//! client is given), then that every process of the server is gone.
//!
//! The heap side of the endless list and of the request flood is measured with a counting
//! allocator in `tests/tests/exhaustion_memory.rs`, a test binary of its own.

use std::path::PathBuf;
use std::time::Duration;

use mcp_driver::{ClientBuilder, Error, ListBudget, ListLimit, Runtime};
use serde_json::json;

use super::bounded;
use super::faults::Fault;

/// Far longer than any prompt error takes, far shorter than the request timeout below: a
/// call that only ends at its timeout fails the row.
const PROMPT: Duration = Duration::from_secs(15);
/// The request timeout the rows give the client.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

fn builder<R: Runtime>() -> ClientBuilder<R> {
    ClientBuilder::new().request_timeout(Some(REQUEST_TIMEOUT))
}

/// endless pages: a fresh `nextCursor` on every page. The list stops at the item budget, and
/// at the byte budget, with [`Error::ListBudget`] naming it; the connection carries on.
pub async fn exhaust_endless_pages<R: Runtime>(rt: R, bin: PathBuf) {
    let budget = ListBudget::default().max_items(1000);
    let f = Fault::start_with(&rt, &bin, &["endless_pages"], builder().list_budget(budget)).await;
    let client = &f.spawned.client;
    match bounded(&rt, PROMPT, "endless list", client.list_tools()).await {
        Err(Error::ListBudget { method, limit, .. }) => {
            assert_eq!(method, "tools/list");
            assert_eq!(limit, ListLimit::Items(1000));
        }
        other => panic!("expected the item budget, got {other:?}"),
    }
    // Ten pages of 100 items each fit; the eleventh went over.
    let pages = f
        .received()
        .iter()
        .filter(|m| m["method"] == "tools/list")
        .count();
    assert_eq!(pages, 11, "pages asked for");
    let echo = client
        .call_tool("echo", json!({"message": "still here"}))
        .await;
    assert!(echo.is_ok(), "the connection must survive: {echo:?}");
    f.finish(&rt).await;

    let budget = ListBudget::default().max_bytes(256 * 1024);
    let f = Fault::start_with(&rt, &bin, &["endless_pages"], builder().list_budget(budget)).await;
    match bounded(&rt, PROMPT, "endless list", f.spawned.client.list_tools()).await {
        Err(e @ Error::ListBudget { .. }) => {
            assert!(
                matches!(
                    e,
                    Error::ListBudget {
                        limit: ListLimit::Bytes(262_144),
                        ..
                    }
                ),
                "{e:?}"
            );
            assert!(
                e.to_string().contains("the byte budget (262144 bytes)"),
                "{e}"
            );
        }
        other => panic!("expected the byte budget, got {other:?}"),
    }
    f.finish(&rt).await;
}

/// Calls the fault tool `tool` and returns its error, within [`PROMPT`] (the request timeout
/// is [`REQUEST_TIMEOUT`]: an answer that is dropped instead of failing the call fails here).
async fn failing_call<R: Runtime>(rt: &R, f: &Fault<R>, tool: &str) -> Error {
    let call = f.spawned.client.call_tool(tool, json!({}));
    match bounded(rt, PROMPT, tool, call).await {
        Ok(r) => panic!("{tool}: expected an error, got {r:?}"),
        Err(e) => e,
    }
}

/// bad UTF-8 and bad JSON: an answer with the right id that cannot be decoded fails its call
/// at once with [`Error::InvalidResponse`]; the connection carries on.
pub async fn exhaust_undecodable_answers<R: Runtime>(rt: R, bin: PathBuf) {
    let f = Fault::start_with(&rt, &bin, &["echo"], builder()).await;
    match failing_call(&rt, &f, "bad_utf8").await {
        Error::InvalidResponse { method, detail, .. } => {
            assert_eq!(method, "tools/call");
            assert!(detail.contains("not valid UTF-8"), "{detail}");
        }
        other => panic!("bad_utf8: expected an invalid response, got {other:?}"),
    }
    match failing_call(&rt, &f, "bad_json").await {
        Error::InvalidResponse { detail, .. } => {
            assert!(detail.contains("not a valid JSON-RPC response"), "{detail}");
        }
        other => panic!("bad_json: expected an invalid response, got {other:?}"),
    }
    let echo = f
        .spawned
        .client
        .call_tool("echo", json!({"message": "after"}))
        .await;
    assert!(echo.is_ok(), "the connection must survive: {echo:?}");
    f.finish(&rt).await;
}

/// An error with `"id": null` while one call is pending fails that call at once with the
/// server's error ([`Error::Remote`]).
pub async fn exhaust_null_id_error<R: Runtime>(rt: R, bin: PathBuf) {
    let f = Fault::start_with(&rt, &bin, &["echo"], builder()).await;
    match failing_call(&rt, &f, "null_id_error").await {
        Error::Remote { code, message, .. } => {
            assert_eq!(code, -32603);
            assert!(message.contains("failed to read the request"), "{message}");
        }
        other => panic!("null_id_error: expected the remote error, got {other:?}"),
    }
    let echo = f
        .spawned
        .client
        .call_tool("echo", json!({"message": "after"}))
        .await;
    assert!(echo.is_ok(), "the connection must survive: {echo:?}");
    f.finish(&rt).await;
}

/// ping flood: the server writes a million `ping`s and never reads its stdin. The client
/// drops the pings it cannot queue, and once nothing has been written for the stall timeout
/// the connection closes with [`CloseReason::Stalled`]: the pending call fails with it,
/// promptly, instead of at its own timeout (or never, for a call without one).
///
/// [`CloseReason::Stalled`]: mcp_driver::mcp_proto::session::CloseReason::Stalled
pub async fn exhaust_ping_flood<R: Runtime>(rt: R, bin: PathBuf) {
    use mcp_driver::mcp_proto::session::CloseReason;
    let builder = builder()
        .max_outbound_bytes(256 * 1024)
        .stall_timeout(Some(Duration::from_secs(2)));
    let f = Fault::start_with(&rt, &bin, &["ping_flood", "1000000"], builder).await;
    let call = f.spawned.client.call_tool_with(
        "echo",
        json!({"message": "m"}),
        mcp_driver::CallOptions::new().no_timeout(),
    );
    match bounded(&rt, PROMPT, "a call to a flooding server", call).await {
        Err(Error::Closed {
            reason: CloseReason::Stalled { after, dropped, .. },
            ..
        }) => {
            assert_eq!(after, Duration::from_secs(2));
            assert!(dropped > 0, "no ping was dropped");
        }
        other => panic!("expected a stalled connection, got {other:?}"),
    }
    assert!(
        f.log_lines().iter().any(|l| l == "# stdin reader stopped"),
        "{:?}",
        f.log_lines()
    );
    f.finish(&rt).await;
}
