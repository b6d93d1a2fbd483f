//! A Streamable HTTP server: connects to a URL, lists the tools and calls `echo` if there is
//! one.
//!
//! ```text
//! cargo run -p mcp-tokio --example http -- http://127.0.0.1:3001/mcp
//! cargo run -p mcp-tokio --example http        # against a scripted server on 127.0.0.1
//! ```
//!
//! Without a URL the example starts the driver's scripted HTTP test server
//! (`mcp_driver::testing::http_server`, feature `testing`) on a free port of 127.0.0.1, which
//! answers with plain JSON as a minimal Streamable HTTP server may.

use mcp_tokio::driver::testing::http_server::{RecordedRequest, ScriptedHttpServer, ScriptedReply};
use mcp_tokio::{Client, ClientBuilder};
use serde_json::json;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Kept alive until the end: dropping it stops the scripted server.
    let mut scripted = None;
    let url = match std::env::args().nth(1) {
        Some(url) => url,
        None => {
            let server = ScriptedHttpServer::start(scripted_mcp);
            let url = server.url("/mcp");
            scripted = Some(server);
            url
        }
    };
    let client: Client = ClientBuilder::new()
        // Sent with every request to this origin only, never logged.
        .header("Authorization", "Bearer example-token")
        .http(&url)
        .await?;
    println!(
        "connected to {} over HTTP (protocol {})",
        client.server_info().name,
        client.protocol_version()
    );
    let tools = client.list_tools().await?;
    for tool in &tools {
        println!("  {}", tool.name);
    }
    if tools.iter().any(|t| t.name == "echo") {
        let result = client
            .call_tool("echo", json!({"text": "over HTTP"}))
            .await?;
        println!("echo -> {}", result.content[0].as_text().unwrap_or("?"));
    }
    client.close().await;
    if let Some(server) = scripted {
        println!(
            "the scripted server saw {} HTTP requests",
            server.requests().len()
        );
    }
    Ok(())
}

/// A minimal Streamable HTTP server: one JSON answer per POSTed request, 202 for
/// notifications, 405 for the optional GET stream, 200 for the closing DELETE.
fn scripted_mcp(request: &RecordedRequest) -> ScriptedReply {
    match request.method.as_str() {
        "GET" => return ScriptedReply::status(405),
        "DELETE" => return ScriptedReply::status(200),
        _ => {}
    }
    let (Some(id), Some(method)) = (request.rpc_id(), request.rpc_method()) else {
        return ScriptedReply::status(202);
    };
    let result = match method.as_str() {
        "initialize" => json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "scripted-http", "version": "1.0.0"}
        }),
        "tools/list" => json!({"tools": [{
            "name": "echo",
            "description": "Echoes its text",
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}
        }]}),
        "tools/call" => {
            let text = request
                .json()
                .and_then(|m| m["params"]["arguments"]["text"].as_str().map(str::to_owned));
            json!({"content": [{"type": "text", "text": text.unwrap_or_default()}]})
        }
        "ping" => json!({}),
        _ => {
            return ScriptedReply::json(&json!({"jsonrpc": "2.0", "id": id,
                "error": {"code": -32601, "message": "method not found"}}));
        }
    };
    ScriptedReply::json(&json!({"jsonrpc": "2.0", "id": id, "result": result}))
}
