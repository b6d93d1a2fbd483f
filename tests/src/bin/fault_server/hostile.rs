//! The resource-exhaustion and undecodable-answer faults: endless pages, a request flood,
//! answers that cannot be decoded and errors that name no request.

use std::io::{self, Write};
use std::sync::atomic::Ordering;

use mcp_proto::jsonrpc::Id;
use serde_json::{Value, json};

use super::Server;

/// One page of `endless_pages`: `per_page` tools of about 1 KiB each, and a cursor that was
/// never handed out before.
pub(crate) fn endless_page(params: &Value, per_page: usize) -> Value {
    let page: u64 = params
        .get("cursor")
        .and_then(Value::as_str)
        .and_then(|c| c.strip_prefix("page-"))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let description = "x".repeat(1000);
    let tools: Vec<Value> = (0..per_page)
        .map(|i| {
            json!({"name": format!("tool_{page}_{i}"), "description": description,
                   "inputSchema": {"type": "object"}})
        })
        .collect();
    json!({"tools": tools, "nextCursor": format!("page-{}", page + 1)})
}

impl Server {
    /// `ping_flood`: stops reading stdin, then writes `count` `ping` requests to stdout as fast
    /// as the pipe takes them, and never reads an answer.
    pub(crate) fn ping_flood(&self, count: u64) {
        self.stop_reading.store(true, Ordering::SeqCst);
        self.log_event(&format!(
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
        self.log_event(&format!("ping flood done: {sent} sent"));
    }

    /// `bad_utf8`: the answer to `id`, whole and well-formed except for bytes that are not
    /// UTF-8 inside a string.
    pub(crate) fn answer_bad_utf8(&self, id: &Id) {
        let mut line = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"")
            .into_bytes();
        line.extend_from_slice(b"\xff\xfe\xc3\x28");
        line.extend_from_slice(b"\"}]}}\n");
        self.send_raw(&line);
    }

    /// `bad_json`: an answer to `id` that is cut off in the middle of its result.
    pub(crate) fn answer_bad_json(&self, id: &Id) {
        let line = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"cut\n"
        );
        self.send_raw(line.as_bytes());
    }

    /// `null_id_error`: an error with `"id": null` instead of the answer.
    pub(crate) fn answer_null_id_error(&self) {
        self.send_raw(
            b"{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32603,\"message\":\"the server failed to read the request\"}}\n",
        );
    }
}
