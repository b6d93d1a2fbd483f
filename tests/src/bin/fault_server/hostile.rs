//! The resource-exhaustion and undecodable-answer faults: endless pages, a request flood,
//! answers that cannot be decoded and errors that name no request.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use mcp_proto::jsonrpc::Id;
use mcp_proto::types::{ListToolsResult, Tool};

use crate::faults::Wire;

/// One page of `endless_pages`: `per_page` tools of about 1 KiB each, and a cursor that was
/// never handed out before (`page-1`, `page-2`, ... after the page `cursor` names).
pub(crate) fn endless_page(cursor: Option<&str>, per_page: usize) -> ListToolsResult {
    let page: u64 = cursor
        .and_then(|c| c.strip_prefix("page-"))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let description = "x".repeat(1000);
    let mut object_schema = serde_json::Map::new();
    object_schema.insert("type".into(), "object".into());
    let tools = (0..per_page)
        .map(|i| Tool {
            name: format!("tool_{page}_{i}"),
            description: Some(description.clone()),
            input_schema: object_schema.clone(),
            ..Tool::default()
        })
        .collect();
    ListToolsResult {
        tools,
        next_cursor: Some(format!("page-{}", page + 1)),
        ..ListToolsResult::default()
    }
}

impl Wire {
    /// `ping_flood`: stops the stdin reader (`stop_reading`), then writes `count` `ping`
    /// requests to stdout as fast as the pipe takes them, and never reads an answer.
    pub(crate) fn ping_flood(&self, count: u64, stop_reading: &AtomicBool) {
        stop_reading.store(true, Ordering::SeqCst);
        self.log().event(&format!(
            "ping flood of {count} started, stdin no longer read"
        ));
        let mut out = io::stdout().lock();
        let mut chunk = Vec::with_capacity(64 * 1024);
        let mut sent = 0;
        while sent < count {
            chunk.clear();
            while sent < count && chunk.len() < 60 * 1024 {
                sent += 1;
                chunk.extend_from_slice(
                    format!(
                        "{{\"jsonrpc\":\"2.0\",\"id\":\"flood-{sent}\",\"method\":\"ping\"}}\n"
                    )
                    .as_bytes(),
                );
            }
            if out.write_all(&chunk).and_then(|()| out.flush()).is_err() {
                break;
            }
        }
        drop(out);
        self.log().event(&format!("ping flood done: {sent} sent"));
    }

    /// `bad_utf8`: the answer to `id`, whole and well-formed except for bytes that are not
    /// UTF-8 inside a string.
    pub(super) fn answer_bad_utf8(&self, id: &Id) {
        let mut line = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"")
            .into_bytes();
        line.extend_from_slice(b"\xff\xfe\xc3\x28");
        line.extend_from_slice(b"\"}]}}\n");
        self.write_raw(&line);
    }

    /// `bad_json`: an answer to `id` that is cut off in the middle of its result.
    pub(super) fn answer_bad_json(&self, id: &Id) {
        let line = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"cut\n"
        );
        self.write_raw(line.as_bytes());
    }

    /// `null_id_error`: an error with `"id": null` instead of the answer.
    pub(super) fn answer_null_id_error(&self) {
        self.write_raw(
            b"{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32603,\"message\":\"the server failed to read the request\"}}\n",
        );
    }
}
