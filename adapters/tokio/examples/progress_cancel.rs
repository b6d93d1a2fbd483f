//! Progress and cancellation: follows the progress of a slow tool, then cancels a second call
//! with a reason the server receives (`notifications/cancelled`).
//!
//! ```text
//! cargo run -p mcp-tokio --example progress_cancel                  # runs `mcp demo-server`
//! cargo run -p mcp-tokio --example progress_cancel -- COMMAND [ARGS...]  # any server with the demo's `slow` tool
//! ```

use std::process::ExitCode;

use mcp_tokio::driver::process::StdioCommand;
use mcp_tokio::{CallOptions, Client, Error};
use serde_json::json;

#[tokio::main]
async fn main() -> ExitCode {
    match run(server_command()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The server to run: the command line, or `mcp demo-server`.
fn server_command() -> StdioCommand {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.split_first() {
        Some((program, rest)) => StdioCommand::new(program).args(rest.iter().cloned()),
        None => StdioCommand::new("mcp").args(["demo-server"]),
    }
}

async fn run(command: StdioCommand) -> Result<(), Box<dyn std::error::Error>> {
    let client = Client::stdio(command).await?;

    // 1. Progress: a callback on every update (on the driver task: keep it short).
    let options = CallOptions::new().on_progress(|p| {
        println!(
            "progress {}/{} {}",
            p.progress,
            p.total.unwrap_or(f64::NAN),
            p.message.as_deref().unwrap_or("")
        );
    });
    let result = client
        .call_tool_with("slow", json!({"steps": 3, "delay_ms": 10}), options)
        .await?;
    println!("slow: {}", result.content[0].as_text().unwrap_or("?"));

    // 2. Cancel: a handle for the call, used once its first progress update arrived.
    let (options, mut progress) = CallOptions::new().progress_watch();
    let (options, cancel) = options.cancel_handle();
    let call = tokio::spawn({
        let client = client.clone();
        async move {
            client
                .call_tool_with("slow", json!({"steps": 100, "delay_ms": 50}), options)
                .await
        }
    });
    if let Some(p) = progress.changed().await {
        println!("second call at step {}; cancelling", p.progress);
    }
    cancel.cancel("the example has seen enough");
    match call.await.expect("the call's task does not panic") {
        Err(Error::Cancelled { method, .. }) => println!("{method} cancelled"),
        // 100 steps of 50 ms: the call cannot have finished before the cancel.
        other => {
            client.close().await;
            return Err(format!("the call was not cancelled: {other:?}").into());
        }
    }

    // The connection goes on after a cancellation.
    client.ping().await?;
    println!("ping after cancel: ok");
    client.close().await;
    Ok(())
}
