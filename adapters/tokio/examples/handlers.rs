//! Answering the server's requests with typed handlers: sampling (the client's model),
//! elicitation (asking the user) and roots (the client's directories).
//!
//! The server here is the driver's scripted test server (`mcp_driver::testing::FakeServer`,
//! feature `testing`), so the example runs anywhere and shows both sides of each exchange:
//!
//! ```text
//! cargo run -p mcp-tokio --example handlers
//! ```

use mcp_tokio::driver::testing::FakeServer;
use mcp_tokio::types::{CreateMessageResult, ElicitResult};
use mcp_tokio::{ClientBuilder, Error, ErrorObject, Root, TokioRuntime};
use serde_json::json;

#[tokio::main]
async fn main() -> Result<(), Error> {
    let runtime = TokioRuntime::current();
    let (server, transport) = FakeServer::start(&runtime);

    let client = ClientBuilder::new()
        // Sampling: a real host would call its model here.
        .on_sampling(|params| async move {
            let question = params.last_user_text().unwrap_or_default();
            if question.is_empty() {
                return Err(ErrorObject::new(-1, "nothing to answer"));
            }
            Ok(CreateMessageResult::text(
                "example-model",
                format!("You asked: {question}"),
            ))
        })
        // Elicitation: a real host would show a form; this one accepts the schema's defaults.
        .on_elicitation(|params| async move {
            println!("client: the server asks {:?}", params.message);
            let form = params.default_content();
            Ok(if form.is_empty() {
                ElicitResult::decline()
            } else {
                ElicitResult::accept(form)
            })
        })
        // Roots: computed each time the server asks (`.roots([...])` for a fixed list).
        .on_roots(|| async {
            Ok(vec![
                Root::new("file:///home/me/project").with_name("project"),
            ])
        })
        .over(transport.reader, transport.writer)
        .await?;
    let declared = &server.received_method("initialize")[0]["params"]["capabilities"];
    println!("client declared: {declared}");

    let exchanges = [
        (
            "sampling/createMessage",
            json!({"messages": [{"role": "user", "content": {"type": "text", "text": "What is MCP?"}}],
                   "maxTokens": 100}),
        ),
        (
            "elicitation/create",
            json!({"message": "Your name?", "requestedSchema": {"type": "object",
                   "properties": {"name": {"type": "string", "default": "Ada"}}}}),
        ),
        ("roots/list", json!({})),
        // Not a CreateMessageParams (no `maxTokens`): answered -32602, the handler never runs.
        ("sampling/createMessage", json!({"messages": []})),
    ];
    for (method, params) in exchanges {
        server.request(method, params);
        let answer = server.recv_response().await.expect("the client answers");
        let shown = answer.get("result").or(answer.get("error")).cloned();
        println!("{method} -> {}", shown.unwrap_or_default());
    }
    client.close().await;
    Ok(())
}
