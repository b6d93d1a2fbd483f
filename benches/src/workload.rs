//! Realistic server-to-client message streams, as an MCP server would write them.
//!
//! Every stream is a list of compact JSON-RPC messages (one per line on stdio, one per event
//! on SSE). Responses answer the ids `1..=responses` in order; progress notifications carry the
//! tokens `progress_tokens`, which [`crate::setup`] gives to requests that stay pending.

/// The size classes measured, each as its own stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// `tools/call` results of about 200 bytes (a short text answer).
    Result200,
    /// `tools/call` results of about 4 KiB (a paragraph of text, JSON escapes included).
    Result4K,
    /// `tools/call` results of about 256 KiB (a file read back, newlines escaped).
    Result256K,
    /// `notifications/progress` for long-running requests.
    Progress,
    /// A `tools/list` result of 100 tools with input schemas (about 60 KiB).
    ToolsList,
    /// All of the above interleaved, the way a busy server's output looks.
    Mixed,
}

impl Class {
    /// Every class, in report order.
    pub const ALL: [Class; 6] = [
        Class::Result200,
        Class::Result4K,
        Class::Result256K,
        Class::Progress,
        Class::ToolsList,
        Class::Mixed,
    ];

    /// The name used in benchmark ids and in `BENCHMARKS.md`.
    pub fn name(self) -> &'static str {
        match self {
            Class::Result200 => "result_200B",
            Class::Result4K => "result_4KiB",
            Class::Result256K => "result_256KiB",
            Class::Progress => "progress",
            Class::ToolsList => "tools_list_100",
            Class::Mixed => "mixed",
        }
    }
}

/// How many requests stay pending (with progress) to receive the progress notifications.
pub const PROGRESS_REQUESTS: u64 = 100;

/// One stream of server messages.
#[derive(Clone, Debug)]
pub struct Stream {
    /// The class it was built for.
    pub class: Class,
    /// Compact JSON messages, without line endings.
    pub messages: Vec<String>,
    /// Responses answer ids `1..=responses`, in order.
    pub responses: u64,
    /// Progress notifications use tokens `responses + 1 ..= responses + PROGRESS_REQUESTS`.
    pub progress_requests: u64,
}

impl Stream {
    /// Builds the stream of a class (deterministic), progress tokens still placeholders.
    fn build(class: Class) -> Stream {
        let mut b = Builder::default();
        match class {
            Class::Result200 => (0..5000).for_each(|_| b.text_result(200)),
            Class::Result4K => (0..256).for_each(|_| b.text_result(4096)),
            Class::Result256K => (0..8).for_each(|_| b.text_result(256 * 1024)),
            Class::Progress => (0..7000).for_each(|_| b.progress()),
            Class::ToolsList => (0..16).for_each(|_| b.tools_list(100)),
            Class::Mixed => {
                for round in 0..40 {
                    for _ in 0..25 {
                        b.progress();
                        b.text_result(200);
                    }
                    for _ in 0..4 {
                        b.text_result(4096);
                    }
                    if round % 10 == 0 {
                        b.text_result(256 * 1024);
                        b.tools_list(100);
                    }
                }
            }
        }
        b.finish(class)
    }

    /// The messages as newline-delimited bytes (the stdio wire format).
    pub fn ndjson(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.total_len() + self.messages.len());
        for m in &self.messages {
            out.extend_from_slice(m.as_bytes());
            out.push(b'\n');
        }
        out
    }

    /// The messages as SSE events: `event: message`, a `data:` line, and an `id:` on every
    /// fourth event (as a resumable Streamable HTTP server sends them).
    pub fn sse(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.total_len() + self.messages.len() * 40);
        for (i, m) in self.messages.iter().enumerate() {
            out.extend_from_slice(b"event: message\n");
            if i % 4 == 0 {
                out.extend_from_slice(format!("id: stream-1/{i}\n").as_bytes());
            }
            out.extend_from_slice(b"data: ");
            out.extend_from_slice(m.as_bytes());
            out.extend_from_slice(b"\n\n");
        }
        out
    }

    /// The same messages with the `jsonrpc` member moved to the end
    /// (`{"id":1,"result":{...},"jsonrpc":"2.0"}`): a member order no SDK writes, which the
    /// core's compact fast paths take all the same.
    #[must_use]
    pub fn jsonrpc_last(self) -> Stream {
        self.rewrite(|m| match m {
            Canonical::Response { id, result } => {
                format!(r#"{{"id":{id},"result":{result},"jsonrpc":"2.0"}}"#)
            }
            Canonical::Notification { method, params } => {
                format!(r#"{{"method":"{method}","params":{params},"jsonrpc":"2.0"}}"#)
            }
        })
    }

    /// The same messages in the member order the TypeScript SDK writes: a response's
    /// `result` first, then `jsonrpc`, then `id`; a notification's `method` and `params`,
    /// then `jsonrpc` (its servers build them as `{ result, jsonrpc, id }` and
    /// `{ ...notification, jsonrpc }`).
    #[must_use]
    pub fn typescript_order(self) -> Stream {
        self.rewrite(|m| match m {
            Canonical::Response { id, result } => {
                format!(r#"{{"result":{result},"jsonrpc":"2.0","id":{id}}}"#)
            }
            Canonical::Notification { method, params } => {
                format!(r#"{{"method":"{method}","params":{params},"jsonrpc":"2.0"}}"#)
            }
        })
    }

    /// The same messages with a space after each colon and comma of the envelope, as
    /// Python's `json.dumps` writes by default: the core's envelope walk skips the whitespace
    /// (`core/src/jsonrpc/compact.rs`), as serde's parse does.
    #[must_use]
    pub fn spaced(self) -> Stream {
        self.rewrite(|m| match m {
            Canonical::Response { id, result } => {
                format!(r#"{{"jsonrpc": "2.0", "id": {id}, "result": {result}}}"#)
            }
            Canonical::Notification { method, params } => {
                format!(r#"{{"jsonrpc": "2.0", "method": "{method}", "params": {params}}}"#)
            }
        })
    }

    /// Every message rewritten from its parts.
    fn rewrite(mut self, write: impl Fn(Canonical<'_>) -> String) -> Stream {
        for m in &mut self.messages {
            *m = write(Canonical::parse(m));
        }
        self
    }

    /// Total bytes of the messages (line endings not counted).
    pub fn total_len(&self) -> usize {
        self.messages.iter().map(String::len).sum()
    }
}

/// A message as the builder writes it, in the canonical compact form, taken apart: the
/// text of its members' values.
enum Canonical<'a> {
    Response { id: &'a str, result: &'a str },
    Notification { method: &'a str, params: &'a str },
}

impl<'a> Canonical<'a> {
    fn parse(m: &'a str) -> Self {
        // Invariant: the builder writes every message as `{"jsonrpc":"2.0",` + either
        // `"id":<digits>,"result":<value>` or `"method":"<name>","params":<value>` + `}`.
        let body = m
            .strip_prefix(r#"{"jsonrpc":"2.0","#)
            .and_then(|rest| rest.strip_suffix('}'))
            .expect("a canonical message");
        match body.strip_prefix(r#""id":"#) {
            Some(after) => {
                let (id, result) = after.split_once(',').expect("a member after the id");
                let result = result.strip_prefix(r#""result":"#).expect("a result");
                Canonical::Response { id, result }
            }
            None => {
                let after = body.strip_prefix(r#""method":""#).expect("a method");
                let (method, params) = after.split_once('"').expect("the method's end");
                let params = params.strip_prefix(r#","params":"#).expect("params");
                Canonical::Notification { method, params }
            }
        }
    }
}

/// Cuts `bytes` into chunks of `size` (the last one shorter), as a 64 KiB read loop would.
pub fn chunks(bytes: &[u8], size: usize) -> Vec<&[u8]> {
    bytes.chunks(size).collect()
}

#[derive(Default)]
struct Builder {
    messages: Vec<String>,
    next_response: u64,
    next_progress: u64,
}

/// Words for generated text: mostly ASCII, one accented word, no control characters.
const WORDS: [&str; 16] = [
    "the", "server", "returned", "résumé", "data", "for", "request", "with", "value", "and",
    "status", "ok", "result", "file", "line", "quoted",
];

impl Builder {
    fn finish(self, class: Class) -> Stream {
        Stream {
            class,
            messages: self.messages,
            responses: self.next_response,
            progress_requests: PROGRESS_REQUESTS,
        }
    }

    fn response_id(&mut self) -> u64 {
        self.next_response += 1;
        self.next_response
    }

    /// A `tools/call` result whose whole message is about `target` bytes.
    fn text_result(&mut self, target: usize) {
        let id = self.response_id();
        let head = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":""#
        );
        let tail = r#""}],"isError":false}}"#;
        let budget = target.saturating_sub(head.len() + tail.len());
        let mut msg = String::with_capacity(target + 16);
        msg.push_str(&head);
        push_text(&mut msg, budget, id as usize);
        msg.push_str(tail);
        self.messages.push(msg);
    }

    /// A progress notification for one of the long-running requests.
    fn progress(&mut self) {
        let n = self.next_progress;
        self.next_progress += 1;
        // Tokens are fixed up in `finish` order-independently: they follow the responses.
        let token = RESPONSE_TOKEN_BASE + n % PROGRESS_REQUESTS;
        let msg = format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":{token},"progress":{},"total":100,"message":"Processed {} of 100 items"}}}}"#,
            n % 100,
            n % 100
        );
        self.messages.push(msg);
    }

    /// A `tools/list` result with `n` tools.
    fn tools_list(&mut self, n: usize) {
        let id = self.response_id();
        let tools: Vec<serde_json::Value> = (0..n).map(tool).collect();
        let result = serde_json::json!({ "tools": tools, "nextCursor": "page-2" });
        let msg = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#);
        self.messages.push(msg);
    }
}

/// Placeholder for progress tokens; replaced in [`fix_tokens`] once the response count is known.
const RESPONSE_TOKEN_BASE: u64 = 9_000_000_000;

/// A realistic tool definition: title, description, a JSON schema with several typed
/// properties, annotations.
fn tool(i: usize) -> serde_json::Value {
    serde_json::json!({
        "name": format!("repo_tool_{i}"),
        "title": format!("Repository tool {i}"),
        "description": format!(
            "Runs operation {i} against the repository: searches files, reads their contents \
             and reports matches with line numbers. Use it when the user asks about code."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Path relative to the repository root"},
                "pattern": {"type": "string", "description": "A regular expression to search for"},
                "maxResults": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 50},
                "caseSensitive": {"type": "boolean", "default": false},
                "mode": {"type": "string", "enum": ["files", "lines", "count"]}
            },
            "required": ["path", "pattern"],
            "additionalProperties": false
        },
        "annotations": {"readOnlyHint": !i.is_multiple_of(3), "openWorldHint": false}
    })
}

/// Appends about `budget` bytes of JSON string content: words, an escaped newline every few
/// words and an escaped quote now and then, like text or source code read back.
fn push_text(out: &mut String, budget: usize, seed: usize) {
    let start = out.len();
    let mut k = seed;
    while out.len() - start < budget {
        k = k
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let w = WORDS[(k >> 33) % WORDS.len()];
        out.push_str(w);
        match (k >> 40) % 12 {
            0 => out.push_str("\\n"),
            1 => out.push_str(" \\\"x\\\" "),
            _ => out.push(' '),
        }
    }
    // Never end on a lone backslash (the escapes above are pushed whole, so this cannot
    // happen; keep the content a valid JSON string regardless of the budget).
    debug_assert!(!out.ends_with('\\') || out.ends_with("\\\\"));
}

/// Replaces the placeholder progress tokens with real ones (after the responses' ids).
fn fix_tokens(stream: &mut Stream) {
    for m in &mut stream.messages {
        if let Some(pos) = m.find("\"progressToken\":") {
            let start = pos + "\"progressToken\":".len();
            let end = start + m[start..].find(',').unwrap_or(0);
            let placeholder: u64 = m[start..end].parse().unwrap_or(RESPONSE_TOKEN_BASE);
            let token = stream.responses + 1 + (placeholder - RESPONSE_TOKEN_BASE);
            m.replace_range(start..end, &token.to_string());
        }
    }
}

/// Builds a class's stream with its progress tokens resolved.
pub fn stream(class: Class) -> Stream {
    let mut s = Stream::build(class);
    fix_tokens(&mut s);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jsonrpc_last_moves_only_the_member() {
        let canonical = stream(Class::Mixed);
        let moved = stream(Class::Mixed).jsonrpc_last();
        assert_eq!(canonical.messages.len(), moved.messages.len());
        for (a, b) in canonical.messages.iter().zip(&moved.messages) {
            assert!(b.ends_with(r#","jsonrpc":"2.0"}"#), "{b}");
            let (a, b): (serde_json::Value, serde_json::Value) = (
                serde_json::from_str(a).unwrap(),
                serde_json::from_str(b).unwrap(),
            );
            assert_eq!(a, b);
        }
    }

    #[test]
    fn spaced_adds_only_whitespace() {
        let canonical = stream(Class::Mixed);
        let spaced = stream(Class::Mixed).spaced();
        for (a, b) in canonical.messages.iter().zip(&spaced.messages) {
            assert!(b.starts_with(r#"{"jsonrpc": "2.0", "#), "{b}");
            let (a, b): (serde_json::Value, serde_json::Value) = (
                serde_json::from_str(a).unwrap(),
                serde_json::from_str(b).unwrap(),
            );
            assert_eq!(a, b);
        }
    }

    #[test]
    fn typescript_order_moves_only_the_members() {
        let canonical = stream(Class::Mixed);
        let moved = stream(Class::Mixed).typescript_order();
        assert_eq!(canonical.messages.len(), moved.messages.len());
        let mut responses = 0;
        for (a, b) in canonical.messages.iter().zip(&moved.messages) {
            if b.starts_with(r#"{"result":"#) {
                responses += 1;
                assert!(b.contains(r#","jsonrpc":"2.0","id":"#), "{b}");
            } else {
                assert!(b.starts_with(r#"{"method":"#), "{b}");
                assert!(b.ends_with(r#","jsonrpc":"2.0"}"#), "{b}");
            }
            let (a, b): (serde_json::Value, serde_json::Value) = (
                serde_json::from_str(a).unwrap(),
                serde_json::from_str(b).unwrap(),
            );
            assert_eq!(a, b);
        }
        assert_eq!(responses, canonical.responses);
    }

    #[test]
    fn every_message_is_valid_json_rpc_of_about_the_target_size() {
        for class in Class::ALL {
            let s = stream(class);
            assert!(
                s.total_len() > 900_000,
                "{}: {}",
                class.name(),
                s.total_len()
            );
            for m in &s.messages {
                let v: serde_json::Value = serde_json::from_str(m).unwrap();
                assert_eq!(v["jsonrpc"], "2.0");
                assert!(!m.contains('\n'));
            }
        }
        let r = stream(Class::Result4K);
        assert!(r.messages.iter().all(|m| (4090..4200).contains(&m.len())));
        let t = stream(Class::ToolsList);
        let v: serde_json::Value = serde_json::from_str(&t.messages[0]).unwrap();
        assert_eq!(v["result"]["tools"].as_array().unwrap().len(), 100);
    }

    #[test]
    fn progress_tokens_follow_the_responses() {
        let s = stream(Class::Mixed);
        for m in &s.messages {
            let v: serde_json::Value = serde_json::from_str(m).unwrap();
            if let Some(t) = v["params"]["progressToken"].as_u64() {
                assert!(
                    t > s.responses && t <= s.responses + PROGRESS_REQUESTS,
                    "{t}"
                );
            } else {
                assert!(v["id"].as_u64().unwrap() <= s.responses);
            }
        }
    }

    #[test]
    fn sse_and_ndjson_hold_every_message() {
        let s = stream(Class::Result200);
        let nd = s.ndjson();
        assert_eq!(nd.iter().filter(|&&b| b == b'\n').count(), s.messages.len());
        let sse = s.sse();
        assert_eq!(
            sse.windows(2).filter(|w| w == b"\n\n").count(),
            s.messages.len()
        );
    }
}
