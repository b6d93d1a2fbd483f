//! The client on smol (no tokio runtime): a stdio server's tools, a call with progress, and a
//! call cancelled through its handle.
//!
//! ```text
//! cargo run -p mcp-async-std --example smol_stdio                 # runs `mcp demo-server`
//! cargo run -p mcp-async-std --example smol_stdio -- COMMAND [ARGS...]
//! ```

use mcp_async_std::driver::process::StdioCommand;
use mcp_async_std::{CallOptions, ClientBuilder, Error, SmolRuntime};
use serde_json::json;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let command = match args.split_first() {
        Some((program, rest)) => StdioCommand::new(program).args(rest.iter().cloned()),
        None => StdioCommand::new("mcp").args(["demo-server"]),
    };
    smol::block_on(async {
        let client = ClientBuilder::new()
            .runtime(SmolRuntime::smol())
            .stdio(command)
            .await?;
        let tools = client.list_tools().await?;
        println!("{} tools on {}", tools.len(), client.server_info().name);

        let options = CallOptions::new().on_progress(|p| println!("progress {}", p.progress));
        let result = client
            .call_tool_with("slow", json!({"steps": 2, "delay_ms": 10}), options)
            .await?;
        println!("slow: {}", result.content[0].as_text().unwrap_or("?"));

        let (options, mut progress) = CallOptions::new().progress_watch();
        let (options, cancel) = options.cancel_handle();
        let call = smol::spawn({
            let client = client.clone();
            async move {
                client
                    .call_tool_with("slow", json!({"steps": 100, "delay_ms": 50}), options)
                    .await
            }
        });
        progress.changed().await;
        cancel.cancel("stopped by the smol example");
        let outcome = call.await;
        client.close().await;
        match outcome {
            Err(Error::Cancelled { .. }) => {
                println!("second call cancelled");
                Ok(())
            }
            other => Err(format!("the call was not cancelled: {other:?}").into()),
        }
    })
}
