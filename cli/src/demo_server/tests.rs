//! The demo server driven in-process over an in-memory stream pair with raw JSON lines.

use std::io;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use super::{DemoConfig, serve};

const WAIT: Duration = Duration::from_secs(5);

pub(super) struct Harness {
    to_server: Option<tokio::sync::mpsc::UnboundedSender<Vec<u8>>>,
    from_server: mpsc::Receiver<String>,
    server: Option<thread::JoinHandle<io::Result<()>>>,
}

impl Harness {
    pub(super) fn start() -> Self {
        Self::with(DemoConfig {
            quiet: true,
            ..DemoConfig::default()
        })
    }

    /// Runs the server on a runtime of its own thread, over a duplex stream whose other end
    /// is fed from `to_server` and read line by line into `from_server`.
    pub(super) fn with(config: DemoConfig) -> Self {
        let (to_server, mut rx) = tokio::sync::mpsc::unbounded_channel::<Vec<u8>>();
        let (tx, from_server) = mpsc::channel();
        let server = thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()?;
            rt.block_on(async move {
                let (ours, theirs) = tokio::io::duplex(1 << 20);
                let (our_read, mut our_write) = tokio::io::split(ours);
                let (their_read, their_write) = tokio::io::split(theirs);
                tokio::spawn(async move {
                    while let Some(chunk) = rx.recv().await {
                        if our_write.write_all(&chunk).await.is_err() {
                            return;
                        }
                    }
                    // The input is closed: end of file for the server.
                    let _ = our_write.shutdown().await;
                });
                let lines = tokio::spawn(async move {
                    let mut lines = BufReader::new(our_read).lines();
                    while let Ok(Some(line)) = lines.next_line().await {
                        if tx.send(format!("{line}\n")).is_err() {
                            return;
                        }
                    }
                });
                serve(their_read, their_write, config).await;
                // Every line the server wrote is forwarded before `close` looks.
                let _ = lines.await;
            });
            rt.shutdown_background();
            Ok(())
        });
        Harness {
            to_server: Some(to_server),
            from_server,
            server: Some(server),
        }
    }

    pub(super) fn send_raw(&self, text: &str) {
        let tx = self.to_server.as_ref().expect("input still open");
        tx.send(text.as_bytes().to_vec()).expect("server alive");
    }

    pub(super) fn send(&self, message: Value) {
        self.send_raw(&format!("{message}\n"));
    }

    pub(super) fn request(&self, id: u64, method: &str, params: Value) {
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
    }

    /// The next line the server writes, parsed; every line must be one JSON-RPC message.
    pub(super) fn recv(&self) -> Value {
        let line = self
            .from_server
            .recv_timeout(WAIT)
            .expect("the server answered in time");
        assert!(line.ends_with('\n') && !line[..line.len() - 1].contains('\n'));
        let value: Value = serde_json::from_str(&line).expect("stdout carries only JSON");
        assert_eq!(value["jsonrpc"], "2.0", "{value}");
        value
    }

    /// Reads until the response for `id`, returning it and what came before it.
    pub(super) fn response_with_others(&self, id: &Value) -> (Value, Vec<Value>) {
        let mut others = Vec::new();
        loop {
            let message = self.recv();
            let is_response = message.get("method").is_none()
                && (message.get("result").is_some() || message.get("error").is_some());
            if is_response && &message["id"] == id {
                return (message, others);
            }
            others.push(message);
        }
    }

    pub(super) fn response(&self, id: u64) -> Value {
        self.response_with_others(&json!(id)).0
    }

    pub(super) fn call(&self, id: u64, method: &str, params: Value) -> Value {
        self.request(id, method, params);
        self.response(id)
    }

    pub(super) fn initialize(&self, version: &str, capabilities: Value) -> Value {
        let response = self.call(
            0,
            "initialize",
            json!({
                "protocolVersion": version,
                "capabilities": capabilities,
                "clientInfo": { "name": "test", "version": "1" }
            }),
        );
        self.send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
        response
    }

    pub(super) fn ready() -> Self {
        let h = Harness::start();
        h.initialize("2025-11-25", json!({ "elicitation": {} }));
        h
    }

    pub(super) fn assert_silent(&self, for_: Duration) {
        if let Ok(line) = self.from_server.recv_timeout(for_) {
            panic!("expected nothing, got {line}");
        }
    }

    /// Closes the input and waits for the server to return.
    pub(super) fn close(mut self) -> Vec<Value> {
        self.to_server.take();
        let result = self.server.take().expect("joined once").join();
        result.expect("no panic").expect("no I/O error");
        self.from_server
            .try_iter()
            .map(|l| serde_json::from_str(&l).expect("JSON"))
            .collect()
    }
}

pub(super) fn text_of(response: &Value) -> &str {
    response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {response}"))
}

#[test]
fn handshake_negotiates_versions() {
    for (asked, answered) in [
        ("2024-11-05", "2024-11-05"),
        ("2025-03-26", "2025-03-26"),
        ("2025-06-18", "2025-06-18"),
        ("2025-11-25", "2025-11-25"),
        ("2099-01-01", "2025-11-25"),
    ] {
        let h = Harness::start();
        let response = h.initialize(asked, json!({}));
        let result = &response["result"];
        assert_eq!(result["protocolVersion"], answered, "asked {asked}");
        assert_eq!(result["serverInfo"]["name"], "mcp-demo");
        let caps = &result["capabilities"];
        for cap in ["tools", "resources", "prompts", "logging", "completions"] {
            assert!(caps.get(cap).is_some(), "capability {cap} in {caps}");
        }
        assert_eq!(caps["resources"]["subscribe"], true);
        assert!(result["instructions"].as_str().is_some());
        h.close();
    }
}

#[test]
fn requests_before_initialize_are_refused_but_ping_works() {
    let h = Harness::start();
    assert_eq!(h.call(1, "tools/list", json!({}))["error"]["code"], -32600);
    assert_eq!(h.call(2, "ping", json!({}))["result"], json!({}));
    h.close();
}

#[test]
fn ping_and_unknown_method() {
    let h = Harness::ready();
    assert_eq!(h.call(1, "ping", Value::Null)["result"], json!({}));
    let error = &h.call(2, "no/such", json!({}))["error"];
    assert_eq!(error["code"], -32601);
    assert!(error["message"].as_str().unwrap().contains("no/such"));
    h.close();
}

#[test]
fn tools_list_is_paginated() {
    let h = Harness::ready();
    let first = &h.call(1, "tools/list", json!({}))["result"];
    let names = |page: &Value| -> Vec<String> {
        page["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(names(first), ["echo", "add", "slow", "ask"]);
    let cursor = first["nextCursor"]
        .as_str()
        .expect("a second page")
        .to_owned();
    let second = &h.call(2, "tools/list", json!({ "cursor": cursor }))["result"];
    assert_eq!(names(second), ["image", "fail"]);
    assert!(second.get("nextCursor").is_none());
    let add = &first["tools"][1];
    assert_eq!(add["outputSchema"]["properties"]["sum"]["type"], "number");
    assert_eq!(add["inputSchema"]["required"], json!(["a", "b"]));
    let bad = &h.call(3, "tools/list", json!({ "cursor": "zzz" }))["error"];
    assert_eq!(bad["code"], -32602);
    h.close();
}

#[test]
fn page_size_is_configurable() {
    let h = Harness::with(DemoConfig {
        page_size: 100,
        quiet: true,
        ..DemoConfig::default()
    });
    h.initialize("2025-06-18", json!({}));
    let page = &h.call(1, "tools/list", Value::Null)["result"];
    assert_eq!(page["tools"].as_array().unwrap().len(), 6);
    assert!(page.get("nextCursor").is_none());
    h.close();
}

#[test]
fn echo_add_image_fail() {
    let h = Harness::ready();
    let echo = h.call(
        1,
        "tools/call",
        json!({ "name": "echo", "arguments": { "text": "hi" } }),
    );
    assert_eq!(text_of(&echo), "hi");
    assert!(echo["result"].get("isError").is_none());

    let add = h.call(
        2,
        "tools/call",
        json!({ "name": "add", "arguments": { "a": 2, "b": 3.5 } }),
    );
    assert_eq!(add["result"]["structuredContent"], json!({ "sum": 5.5 }));
    assert_eq!(text_of(&add), "2 + 3.5 = 5.5");

    let bad = h.call(
        3,
        "tools/call",
        json!({ "name": "add", "arguments": { "a": "x" } }),
    );
    assert_eq!(bad["result"]["isError"], true);
    assert!(text_of(&bad).contains("`a` must be a number"));

    let image = h.call(4, "tools/call", json!({ "name": "image" }));
    let block = &image["result"]["content"][0];
    assert_eq!(block["type"], "image");
    assert_eq!(block["mimeType"], "image/png");
    assert!(block["data"].as_str().unwrap().starts_with("iVBORw0KGgo"));

    h.request(5, "tools/call", json!({ "name": "fail" }));
    let (fail, others) = h.response_with_others(&json!(5));
    assert_eq!(fail["result"]["isError"], true);
    // The default log level is warning, and `fail` logs a warning.
    assert!(
        others
            .iter()
            .any(|m| m["method"] == "notifications/message" && m["params"]["level"] == "warning"),
        "{others:?}"
    );

    let unknown = h.call(6, "tools/call", json!({ "name": "nope" }));
    assert_eq!(unknown["error"]["code"], -32602);
    let no_params = h.call(7, "tools/call", Value::Null);
    assert_eq!(no_params["error"]["code"], -32602);
    h.close();
}

#[test]
fn resources_read_subscribe_and_templates() {
    let h = Harness::ready();
    let list = h.call(1, "resources/list", json!({}));
    assert_eq!(list["result"]["resources"][0]["uri"], "demo://readme");
    let templates = h.call(2, "resources/templates/list", json!({}));
    assert_eq!(
        templates["result"]["resourceTemplates"][0]["uriTemplate"],
        "demo://notes/{name}"
    );
    let readme = h.call(3, "resources/read", json!({ "uri": "demo://readme" }));
    let contents = &readme["result"]["contents"][0];
    assert_eq!(contents["uri"], "demo://readme");
    assert!(contents["text"].as_str().unwrap().contains("demo server"));
    let note = h.call(4, "resources/read", json!({ "uri": "demo://notes/todo" }));
    assert!(
        note["result"]["contents"][0]["text"]
            .as_str()
            .unwrap()
            .contains("todo")
    );
    let missing = h.call(5, "resources/read", json!({ "uri": "demo://nothing" }));
    assert_eq!(missing["error"]["code"], -32002);
    let sub = h.call(6, "resources/subscribe", json!({ "uri": "demo://readme" }));
    assert_eq!(sub["result"], json!({}));
    let unsub = h.call(
        7,
        "resources/unsubscribe",
        json!({ "uri": "demo://readme" }),
    );
    assert_eq!(unsub["result"], json!({}));
    let bad_sub = h.call(8, "resources/subscribe", json!({ "uri": "demo://nothing" }));
    assert_eq!(bad_sub["error"]["code"], -32002);
    h.close();
}

#[test]
fn prompts_and_completion() {
    let h = Harness::ready();
    let list = h.call(1, "prompts/list", json!({}));
    let prompt = &list["result"]["prompts"][0];
    assert_eq!(prompt["name"], "summarize");
    assert_eq!(prompt["arguments"][0]["required"], true);
    let got = h.call(
        2,
        "prompts/get",
        json!({ "name": "summarize", "arguments": { "text": "Long text.", "style": "formal" } }),
    );
    let message = &got["result"]["messages"][0];
    assert_eq!(message["role"], "user");
    let text = message["content"]["text"].as_str().unwrap();
    assert!(
        text.contains("formal") && text.contains("Long text."),
        "{text}"
    );
    let missing = h.call(3, "prompts/get", json!({ "name": "summarize" }));
    assert_eq!(missing["error"]["code"], -32602);
    let unknown = h.call(4, "prompts/get", json!({ "name": "other" }));
    assert_eq!(unknown["error"]["code"], -32602);

    let complete = h.call(
        5,
        "completion/complete",
        json!({ "ref": { "type": "ref/prompt", "name": "summarize" }, "argument": { "name": "style", "value": "b" } }),
    );
    assert_eq!(
        complete["result"]["completion"]["values"],
        json!(["brief", "bullet-points"])
    );
    let notes = h.call(
        6,
        "completion/complete",
        json!({ "ref": { "type": "ref/resource", "uri": "demo://notes/{name}" }, "argument": { "name": "name", "value": "" } }),
    );
    assert_eq!(notes["result"]["completion"]["total"], 3);
    let nothing = h.call(
        7,
        "completion/complete",
        json!({ "ref": { "type": "ref/prompt", "name": "summarize" }, "argument": { "name": "zzz", "value": "" } }),
    );
    assert_eq!(nothing["error"]["code"], -32602);
    h.close();
}

#[test]
fn log_level_filters_messages() {
    let h = Harness::ready();
    h.request(1, "logging/setLevel", json!({ "level": "debug" }));
    let (set, _) = h.response_with_others(&json!(1));
    assert_eq!(set["result"], json!({}));
    // At debug, a tool call logs its name at debug level.
    h.request(
        2,
        "tools/call",
        json!({ "name": "echo", "arguments": { "text": "x" } }),
    );
    let (_, before) = h.response_with_others(&json!(2));
    assert!(
        before
            .iter()
            .any(|m| m["params"]["level"] == "debug" && m["params"]["data"] == "tools/call echo"),
        "{before:?}"
    );
    h.request(3, "logging/setLevel", json!({ "level": "error" }));
    h.response(3);
    // At error, neither the debug line nor fail's warning is sent.
    h.request(4, "tools/call", json!({ "name": "fail" }));
    let (_, before) = h.response_with_others(&json!(4));
    assert!(before.is_empty(), "{before:?}");
    let bad = h.call(5, "logging/setLevel", json!({ "level": "loud" }));
    assert_eq!(bad["error"]["code"], -32602);
    h.close();
}

#[test]
fn slow_reports_progress_with_a_token() {
    let h = Harness::ready();
    h.send(json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "slow", "arguments": { "steps": 3, "delay_ms": 5 }, "_meta": { "progressToken": "p1" } } }));
    let (done, before) = h.response_with_others(&json!(1));
    assert_eq!(text_of(&done), "finished 3 steps");
    let progress: Vec<_> = before
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .map(|m| {
            (
                m["params"]["progressToken"].clone(),
                m["params"]["progress"].as_f64(),
                m["params"]["total"].as_f64(),
            )
        })
        .collect();
    assert_eq!(
        progress,
        [1.0, 2.0, 3.0].map(|p| (json!("p1"), Some(p), Some(3.0)))
    );
    // Without a token there is no progress.
    h.request(
        2,
        "tools/call",
        json!({ "name": "slow", "arguments": { "steps": 2, "delay_ms": 1 } }),
    );
    let (_, before) = h.response_with_others(&json!(2));
    assert!(before.is_empty(), "{before:?}");
    let bad = h.call(
        3,
        "tools/call",
        json!({ "name": "slow", "arguments": { "steps": 1000 } }),
    );
    assert_eq!(bad["result"]["isError"], true);
    // Below the schema's minimum of 1, as above its maximum.
    let zero = h.call(
        4,
        "tools/call",
        json!({ "name": "slow", "arguments": { "steps": 0 } }),
    );
    assert_eq!(zero["result"]["isError"], true, "{zero}");
    assert!(
        zero["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("from 1 to 100, got 0")),
        "{zero}"
    );
    h.close();
}

#[test]
fn answers_come_out_of_order_and_slow_does_not_block() {
    let h = Harness::ready();
    let started = Instant::now();
    h.request(
        1,
        "tools/call",
        json!({ "name": "slow", "arguments": { "steps": 2, "delay_ms": 300 } }),
    );
    h.request(2, "ping", json!({}));
    h.request(
        3,
        "tools/call",
        json!({ "name": "echo", "arguments": { "text": "fast" } }),
    );
    let first = h.recv();
    let second = h.recv();
    let ids: Vec<_> = [&first, &second].iter().map(|m| m["id"].clone()).collect();
    assert!(
        ids.contains(&json!(2)) && ids.contains(&json!(3)),
        "{ids:?}"
    );
    assert!(started.elapsed() < Duration::from_millis(450));
    let slow = h.response(1);
    assert_eq!(text_of(&slow), "finished 2 steps");
    assert!(started.elapsed() >= Duration::from_millis(600));
    h.close();
}

#[test]
fn cancelled_slow_sends_no_response() {
    let h = Harness::ready();
    h.send(json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "slow", "arguments": { "steps": 50, "delay_ms": 40 }, "_meta": { "progressToken": 9 } } }));
    // Wait for the first progress so the call is surely running.
    let progress = h.recv();
    assert_eq!(progress["method"], "notifications/progress");
    let cancelled_at = Instant::now();
    h.send(
        json!({ "jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": { "requestId": 1, "reason": "user pressed Ctrl-C" } }),
    );
    // Anything still in flight is at most one progress notification, then silence.
    let pong = h.call(2, "ping", json!({}));
    assert_eq!(pong["result"], json!({}));
    thread::sleep(Duration::from_millis(150));
    let late: Vec<Value> = h
        .from_server
        .try_iter()
        .map(|l| serde_json::from_str(&l).unwrap())
        .collect();
    assert!(
        late.iter().all(|m| m.get("id") != Some(&json!(1))),
        "{late:?}"
    );
    assert!(late.len() <= 1, "progress stopped: {late:?}");
    assert!(cancelled_at.elapsed() < Duration::from_secs(1));
    // Cancelling something unknown or finished is ignored.
    h.send(json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": 77 } }));
    assert_eq!(h.call(3, "ping", json!({}))["result"], json!({}));
    let rest = h.close();
    assert!(rest.is_empty(), "{rest:?}");
}

#[test]
fn elicitation_round_trip() {
    let h = Harness::ready();
    h.request(
        1,
        "tools/call",
        json!({ "name": "ask", "arguments": { "question": "Favourite colour?" } }),
    );
    let ask = h.recv();
    assert_eq!(ask["method"], "elicitation/create");
    assert_eq!(ask["params"]["message"], "Favourite colour?");
    assert_eq!(ask["params"]["mode"], "form");
    assert_eq!(ask["params"]["requestedSchema"]["type"], "object");
    let server_id = ask["id"].clone();
    // Other requests are still served while the tool waits for the user.
    assert_eq!(h.call(2, "ping", json!({}))["result"], json!({}));
    h.send(json!({ "jsonrpc": "2.0", "id": server_id,
        "result": { "action": "accept", "content": { "answer": "green" } } }));
    assert_eq!(text_of(&h.response(1)), "The user said: green");

    h.request(
        3,
        "tools/call",
        json!({ "name": "ask", "arguments": { "question": "Again?" } }),
    );
    let ask = h.recv();
    h.send(json!({ "jsonrpc": "2.0", "id": ask["id"], "result": { "action": "decline" } }));
    assert_eq!(text_of(&h.response(3)), "The user declined to answer.");

    h.request(
        4,
        "tools/call",
        json!({ "name": "ask", "arguments": { "question": "Err?" } }),
    );
    let ask = h.recv();
    h.send(json!({ "jsonrpc": "2.0", "id": ask["id"], "error": { "code": -32603, "message": "no UI" } }));
    let refused = h.response(4);
    assert_eq!(refused["result"]["isError"], true);
    assert!(text_of(&refused).contains("no UI"));
    h.close();
}

#[test]
fn elicitation_on_2025_06_18_has_no_mode() {
    let h = Harness::start();
    h.initialize("2025-06-18", json!({ "elicitation": {} }));
    h.request(
        1,
        "tools/call",
        json!({ "name": "ask", "arguments": { "question": "Q" } }),
    );
    let ask = h.recv();
    assert_eq!(ask["method"], "elicitation/create");
    assert!(ask["params"].get("mode").is_none(), "{ask}");
    h.send(json!({ "jsonrpc": "2.0", "id": ask["id"], "result": { "action": "cancel" } }));
    assert_eq!(text_of(&h.response(1)), "The user dismissed the question.");
    h.close();
}

#[test]
fn ask_without_elicitation_capability_is_a_tool_error() {
    let h = Harness::start();
    h.initialize("2025-11-25", json!({}));
    let response = h.call(
        1,
        "tools/call",
        json!({ "name": "ask", "arguments": { "question": "Q" } }),
    );
    assert_eq!(response["result"]["isError"], true);
    assert!(text_of(&response).contains("elicitation capability"));
    h.close();
}

#[test]
fn cancelling_ask_withdraws_the_elicitation() {
    let h = Harness::ready();
    h.request(
        1,
        "tools/call",
        json!({ "name": "ask", "arguments": { "question": "Q" } }),
    );
    let ask = h.recv();
    h.send(json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": 1 } }));
    let withdrawn = h.recv();
    assert_eq!(withdrawn["method"], "notifications/cancelled");
    assert_eq!(withdrawn["params"]["requestId"], ask["id"]);
    // A late answer to the withdrawn question is ignored, and no response for 1 comes.
    h.send(json!({ "jsonrpc": "2.0", "id": ask["id"], "result": { "action": "accept", "content": { "answer": "x" } } }));
    h.assert_silent(Duration::from_millis(100));
    let rest = h.close();
    assert!(rest.is_empty(), "{rest:?}");
}

#[test]
fn garbage_lines_get_a_parse_error_and_the_loop_goes_on() {
    let h = Harness::ready();
    h.send_raw("this is not json\n");
    let error = h.recv();
    assert_eq!(error["id"], Value::Null);
    assert_eq!(error["error"]["code"], -32700);
    h.send_raw("{\"hello\":\"world\"}\n");
    let invalid = h.recv();
    assert_eq!(invalid["id"], Value::Null);
    assert_eq!(invalid["error"]["code"], -32600);
    h.to_server
        .as_ref()
        .unwrap()
        .send(b"\xff\xfe\n".to_vec())
        .unwrap();
    assert_eq!(h.recv()["error"]["code"], -32700);
    // Blank lines are skipped silently; a request split over two writes still works.
    h.send_raw("\n   \n{\"jsonrpc\":\"2.0\",\"id\":5,");
    h.send_raw("\"method\":\"ping\"}\r\n");
    assert_eq!(h.response(5)["result"], json!({}));
    h.close();
}

#[test]
fn end_of_input_lets_fast_calls_finish_and_cancels_slow_ones() {
    let h = Harness::with(DemoConfig {
        shutdown_grace: Duration::from_millis(100),
        quiet: true,
        ..DemoConfig::default()
    });
    h.initialize("2025-11-25", json!({}));
    h.request(
        1,
        "tools/call",
        json!({ "name": "slow", "arguments": { "steps": 100, "delay_ms": 1000 } }),
    );
    h.request(
        2,
        "tools/call",
        json!({ "name": "echo", "arguments": { "text": "last" } }),
    );
    let started = Instant::now();
    let rest = h.close();
    assert!(started.elapsed() < Duration::from_secs(2));
    let ids: Vec<_> = rest.iter().filter_map(|m| m.get("id")).collect();
    assert!(
        ids.contains(&&json!(2)) && !ids.contains(&&json!(1)),
        "{rest:?}"
    );
}

/// The names `tools/list` gives a client (one page is enough: `page_size` is large).
fn listed_names(h: &Harness) -> Vec<String> {
    h.call(9, "tools/list", json!({}))["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn model_and_roots_ask_the_client_and_are_listed_only_with_the_capability() {
    let plain = Harness::with(DemoConfig {
        page_size: 100,
        quiet: true,
        ..DemoConfig::default()
    });
    plain.initialize("2025-11-25", json!({}));
    let names = listed_names(&plain);
    assert!(
        !names.iter().any(|n| n == "model" || n == "roots"),
        "{names:?}"
    );
    plain.close();

    let h = Harness::with(DemoConfig {
        page_size: 100,
        quiet: true,
        ..DemoConfig::default()
    });
    h.initialize("2025-11-25", json!({ "sampling": {}, "roots": {} }));
    let names = listed_names(&h);
    assert!(
        names.ends_with(&["model".to_owned(), "roots".to_owned()]),
        "{names:?}"
    );

    h.request(
        1,
        "tools/call",
        json!({ "name": "model", "arguments": { "prompt": "2+2?", "max_tokens": 5 } }),
    );
    let ask = h.recv();
    assert_eq!(ask["method"], "sampling/createMessage");
    assert_eq!(ask["params"]["maxTokens"], 5);
    assert_eq!(ask["params"]["messages"][0]["content"]["text"], "2+2?");
    h.send(json!({ "jsonrpc": "2.0", "id": ask["id"], "result": {
        "role": "assistant", "content": { "type": "text", "text": "4" }, "model": "m" } }));
    assert_eq!(text_of(&h.response(1)), "m replied: 4");

    h.request(
        2,
        "tools/call",
        json!({ "name": "model", "arguments": { "prompt": "x" } }),
    );
    let ask = h.recv();
    h.send(json!({ "jsonrpc": "2.0", "id": ask["id"],
        "error": { "code": -1, "message": "User rejected sampling request" } }));
    let declined = h.response(2);
    assert_eq!(declined["result"]["isError"], true);
    assert!(text_of(&declined).contains("User rejected sampling request"));

    h.request(3, "tools/call", json!({ "name": "roots" }));
    let ask = h.recv();
    assert_eq!(ask["method"], "roots/list");
    h.send(
        json!({ "jsonrpc": "2.0", "id": ask["id"], "result": { "roots": [
        { "uri": "file:///a", "name": "a" }, { "uri": "file:///b" } ] } }),
    );
    assert_eq!(text_of(&h.response(3)), "file:///a (a)\nfile:///b");
    h.close();
}

#[test]
fn the_clock_ticks_while_subscribed() {
    let h = Harness::ready();
    assert_eq!(
        h.call(1, "resources/read", json!({ "uri": "demo://clock" }))["result"]["contents"][0]["text"],
        "0\n"
    );
    h.call(2, "resources/subscribe", json!({ "uri": "demo://clock" }));
    let update = h.recv();
    assert_eq!(update["method"], "notifications/resources/updated");
    assert_eq!(update["params"]["uri"], "demo://clock");
    let read = h.call(3, "resources/read", json!({ "uri": "demo://clock" }));
    assert_ne!(read["result"]["contents"][0]["text"], "0\n", "{read}");
    h.call(4, "resources/unsubscribe", json!({ "uri": "demo://clock" }));
    h.close();
}
