//! The scripted test server (`mcp_driver::testing::FakeServer`) seen from a raw client that
//! writes and reads its lines: its wire is the core's server session (handshake, `ping`,
//! refusals, id correlation, framing), and its deliberate misbehaviour is written as given.

use std::time::Duration;

use futures_util::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use mcp_driver::testing::{FakeServer, FakeTransport, PipeReader, PipeWriter};
use mcp_tokio::TokioRuntime;
use serde_json::{Value, json};

const GUARD: Duration = Duration::from_secs(30);

/// A client that speaks JSON lines by hand.
struct RawClient {
    reader: BufReader<PipeReader>,
    writer: PipeWriter,
}

impl RawClient {
    fn new(io: FakeTransport) -> Self {
        RawClient {
            reader: BufReader::new(io.reader),
            writer: io.writer,
        }
    }

    async fn send_line(&mut self, line: &str) {
        let mut bytes = line.as_bytes().to_vec();
        bytes.push(b'\n');
        self.writer.write_all(&bytes).await.expect("the fake reads");
    }

    async fn send(&mut self, message: Value) {
        self.send_line(&message.to_string()).await;
    }

    async fn next(&mut self) -> Value {
        let mut line = String::new();
        let n = self
            .reader
            .read_line(&mut line)
            .await
            .expect("the fake writes");
        assert!(n > 0, "the fake closed its output");
        serde_json::from_str(&line).expect("the fake writes JSON lines")
    }

    /// `initialize` asking for `version` with `capabilities`, and `initialized`; returns
    /// the `initialize` answer.
    async fn handshake(&mut self, version: &str, capabilities: Value) -> Value {
        self.send(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": version,
                "capabilities": capabilities,
                "clientInfo": {"name": "raw", "version": "0"}
            }}),
        )
        .await;
        let answer = self.next().await;
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        answer
    }
}

async fn guarded(body: impl std::future::Future<Output = ()>) {
    tokio::time::timeout(GUARD, body)
        .await
        .expect("the test finished within the guard");
}

/// The session answers the handshake, `ping`, garbage and what the fake does not offer; a
/// request it passes on reaches `recv` and is answered through it, under the client's id.
#[tokio::test]
async fn the_session_answers_the_protocol_and_passes_the_rest_on() {
    guarded(async {
        let (server, io) = FakeServer::start(&TokioRuntime::current());
        let mut init = mcp_driver::testing::default_initialize_result();
        init["capabilities"] = json!({"tools": {}});
        server.set_initialize_result(Some(init));
        let mut client = RawClient::new(io);

        // A request before `initialize` is refused by the session.
        client
            .send(json!({"jsonrpc": "2.0", "id": "early", "method": "tools/list"}))
            .await;
        let early = client.next().await;
        assert_eq!(
            (&early["id"], &early["error"]["code"]),
            (&json!("early"), &json!(-32600))
        );

        let answer = client.handshake("2025-11-25", json!({})).await;
        assert_eq!(answer["id"], 0);
        assert_eq!(answer["result"]["protocolVersion"], "2025-11-25");
        assert_eq!(answer["result"]["serverInfo"]["name"], "fake-server");
        assert_eq!(answer["result"]["capabilities"], json!({"tools": {}}));

        client.send_line("this is not json").await;
        let garbage = client.next().await;
        assert_eq!(
            (&garbage["id"], &garbage["error"]["code"]),
            (&Value::Null, &json!(-32700))
        );

        client
            .send(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
            .await;
        assert_eq!(
            client.next().await,
            json!({"jsonrpc": "2.0", "id": 1, "result": {}})
        );

        // Not declared in this `initialize` result: refused without reaching the test.
        client
            .send(json!({"jsonrpc": "2.0", "id": 2, "method": "prompts/list"}))
            .await;
        let refused = client.next().await;
        assert_eq!(
            (&refused["id"], &refused["error"]["code"]),
            (&json!(2), &json!(-32601))
        );

        client
            .send(json!({"jsonrpc": "2.0", "id": "t", "method": "tools/list", "params": {}}))
            .await;
        let request = server.recv().await.expect("the request reaches the test");
        assert_eq!(request["method"], "tools/list");
        // The same id again while the first is open: refused by the session.
        client
            .send(json!({"jsonrpc": "2.0", "id": "t", "method": "tools/list"}))
            .await;
        let duplicate = client.next().await;
        assert_eq!(
            (&duplicate["id"], &duplicate["error"]["code"]),
            (&json!("t"), &json!(-32600))
        );
        server.respond(&request, json!({"tools": []}));
        assert_eq!(
            client.next().await,
            json!({"jsonrpc": "2.0", "id": "t", "result": {"tools": []}})
        );
        let methods: Vec<Value> = server
            .received()
            .iter()
            .map(|m| m["method"].clone())
            .collect();
        assert_eq!(
            methods,
            [
                "tools/list",
                "initialize",
                "notifications/initialized",
                "ping",
                "prompts/list",
                "tools/list",
                "tools/list"
            ],
            "every JSON message is recorded, garbage is not"
        );
    })
    .await;
}

/// The fake's requests go out through the session (numeric ids it correlates); one the
/// client did not declare the capability for is written as given, with a `srv-N` id.
#[tokio::test]
async fn requests_to_the_client_and_the_written_as_given_escape() {
    guarded(async {
        let (server, io) = FakeServer::start(&TokioRuntime::current());
        let mut client = RawClient::new(io);
        client.handshake("2025-06-18", json!({"roots": {}})).await;
        // The handshake is over once the session saw `initialized`: a ping round trip.
        client
            .send(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
            .await;
        client.next().await;

        let id = server.request("roots/list", json!({}));
        assert!(id.is_u64(), "the session's id: {id}");
        let request = client.next().await;
        assert_eq!((&request["id"], &request["method"]), (&id, &json!("roots/list")));
        client
            .send(json!({"jsonrpc": "2.0", "id": id, "result": {"roots": []}}))
            .await;
        let answer = server.recv_response().await.expect("the answer");
        assert_eq!(answer["result"], json!({"roots": []}));

        // Sampling was not declared: the session would refuse to send it.
        let id = server.request("sampling/createMessage", json!({"maxTokens": 1}));
        assert_eq!(id, json!("srv-2"));
        let request = client.next().await;
        assert_eq!((&request["id"], &request["method"]), (&id, &json!("sampling/createMessage")));

        // A cancelled client request answered late: written as given, the test asked for it.
        client
            .send(json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "slow"}}))
            .await;
        let call = server.recv_method("tools/call").await.expect("the call");
        client
            .send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}))
            .await;
        server
            .recv_method("notifications/cancelled")
            .await
            .expect("the cancellation reaches the test");
        server.respond(&call, json!({"content": []}));
        assert_eq!(
            client.next().await,
            json!({"jsonrpc": "2.0", "id": 7, "result": {"content": []}})
        );
    })
    .await;
}

/// A progress notification for an open request goes through the session (which checks it
/// increases); one the session would not send is written as given.
#[tokio::test]
async fn progress_goes_through_the_session() {
    guarded(async {
        let (server, io) = FakeServer::start(&TokioRuntime::current());
        let mut client = RawClient::new(io);
        client.handshake("2025-11-25", json!({})).await;
        client
            .send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                "params": {"name": "long", "_meta": {"progressToken": "tok"}}}))
            .await;
        let call = server.recv_method("tools/call").await.expect("the call");
        server.notify(
            "notifications/progress",
            json!({"progressToken": "tok", "progress": 1, "total": 2}),
        );
        let note = client.next().await;
        assert_eq!(note["method"], "notifications/progress");
        assert_eq!(
            note["params"],
            json!({"progressToken": "tok", "progress": 1.0, "total": 2.0})
        );
        server.respond(&call, json!({"content": []}));
        assert_eq!(client.next().await["id"], 3);
    })
    .await;
}

/// A fake scripted for 2026-07-28 (a `server/discover` handler) is a 2026 session: the
/// session answers `server/discover` from the handler's description, refuses a request
/// without the per-request envelope, and completes the answers' `resultType`.
#[tokio::test]
async fn a_discover_handler_makes_a_2026_session() {
    guarded(async {
        let (server, io) = FakeServer::start(&TokioRuntime::current());
        server.on_request("server/discover", |_| {
            Ok(json!({
                "capabilities": {"tools": {}},
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "fake-2026", "version": "1"}}
            }))
        });
        server.on_request("tools/list", |_| Ok(json!({"tools": []})));
        let mut client = RawClient::new(io);
        let meta = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"}
        });
        client
            .send(json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover",
                "params": {"_meta": meta}}))
            .await;
        let discovered = client.next().await;
        assert_eq!(discovered["result"]["supportedVersions"][0], "2026-07-28", "{discovered}");
        assert_eq!(discovered["result"]["resultType"], "complete");
        assert_eq!(
            discovered["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
            "fake-2026"
        );

        client
            .send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
            .await;
        let refused = client.next().await;
        assert_eq!((&refused["id"], &refused["error"].is_object()), (&json!(2), &true), "{refused}");

        client
            .send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list",
                "params": {"_meta": meta}}))
            .await;
        let listed = client.next().await;
        assert_eq!(listed["result"]["tools"], json!([]), "{listed}");
        assert_eq!(listed["result"]["resultType"], "complete");
    })
    .await;
}
