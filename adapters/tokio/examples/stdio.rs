//! Connects to a stdio MCP server given on the command line, lists its tools and calls one.
//!
//! ```text
//! cargo run -p mcp-tokio --example stdio -- mcp demo-server
//! cargo run -p mcp-tokio --example stdio -- npx -y @modelcontextprotocol/server-everything
//! cargo run -p mcp-tokio --example stdio -- --call echo '{"message":"hi"}' -- npx -y @modelcontextprotocol/server-everything
//! ```
//!
//! Without `--call`, `echo` is called if the server has it.

use std::process::ExitCode;

use mcp_tokio::Client;
use mcp_tokio::mcp_driver::process::StdioCommand;
use mcp_tokio::mcp_proto::types::ContentBlock;

#[tokio::main]
async fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut call: Option<(String, serde_json::Value)> = None;
    if args.first().map(String::as_str) == Some("--call") {
        if args.len() < 4 || args[3] != "--" {
            eprintln!("usage: stdio [--call TOOL JSON_ARGS --] COMMAND [ARGS...]");
            return ExitCode::FAILURE;
        }
        let arguments = match serde_json::from_str(&args[2]) {
            Ok(v) => v,
            Err(e) => {
                eprintln!("invalid JSON arguments: {e}");
                return ExitCode::FAILURE;
            }
        };
        call = Some((args[1].clone(), arguments));
        args.drain(..4);
    }
    let Some((program, rest)) = args.split_first() else {
        eprintln!("usage: stdio [--call TOOL JSON_ARGS --] COMMAND [ARGS...]");
        return ExitCode::FAILURE;
    };
    match run(StdioCommand::new(program).args(rest.iter().cloned()), call).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(
    command: StdioCommand,
    call: Option<(String, serde_json::Value)>,
) -> Result<(), mcp_tokio::Error> {
    let client = Client::stdio(command).await?;
    let info = client.server_info();
    println!(
        "connected to {} {} (protocol {})",
        info.name,
        info.version,
        client.protocol_version()
    );

    let tools = client.list_tools().await?;
    println!("{} tools:", tools.len());
    for tool in &tools {
        println!(
            "  {:<24} {}",
            tool.name,
            tool.description.as_deref().unwrap_or("")
        );
    }

    // Without `--call`, call `echo` if the server has it (server-everything does); never a
    // tool picked at random, which could dump the environment or change something.
    // The argument's name comes from the tool's schema (`message` in server-everything,
    // `text` in `mcp demo-server`).
    let call = call.or_else(|| {
        let echo = tools.iter().find(|t| t.name == "echo")?;
        let argument = echo
            .input_schema
            .get("required")
            .and_then(|r| r.get(0))
            .and_then(serde_json::Value::as_str)
            .unwrap_or("message");
        Some((
            "echo".to_owned(),
            serde_json::json!({ argument: "hello from mcp-tokio" }),
        ))
    });
    if let Some((name, arguments)) = call {
        println!("calling {name} {arguments}");
        let result = client.call_tool(&name, arguments).await?;
        for block in &result.content {
            match block {
                ContentBlock::Text(t) => println!("  text: {}", t.text),
                other => println!("  {}", other.kind().unwrap_or("content")),
            }
        }
        if let Some(structured) = &result.structured_content {
            println!("  structured: {structured}");
        }
        if result.is_error == Some(true) {
            println!("  (the tool reported an error)");
        }
    }
    client.close().await;
    Ok(())
}
