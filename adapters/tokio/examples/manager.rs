//! Many servers through the manager: an `mcpServers` configuration (the format of Claude
//! Desktop, Cursor and `.mcp.json`), tools namespaced as `server__tool`, one call routed to
//! its server, every server shut down together.
//!
//! ```text
//! cargo run -p mcp-tokio --example manager                  # two copies of `mcp demo-server`
//! cargo run -p mcp-tokio --example manager -- servers.json  # your own mcpServers file
//! ```

use std::process::ExitCode;

use mcp_tokio::mcp_manager::config::parse_mcp_servers;
use mcp_tokio::{Manager, TokioRuntime};
use serde_json::json;

/// Two demo servers; `${MCP_BIN:-mcp}` is expanded from the environment.
const DEFAULT_CONFIG: &str = r#"{
  "mcpServers": {
    "alpha": {"command": "${MCP_BIN:-mcp}", "args": ["demo-server"]},
    "beta":  {"command": "${MCP_BIN:-mcp}", "args": ["demo-server"]}
  }
}"#;

#[tokio::main]
async fn main() -> ExitCode {
    let text = match std::env::args().nth(1) {
        Some(path) => match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) => {
                eprintln!("error: {path}: {e}");
                return ExitCode::FAILURE;
            }
        },
        None => DEFAULT_CONFIG.to_owned(),
    };
    let servers = match parse_mcp_servers(&text, &|name| std::env::var(name).ok()) {
        Ok(servers) => servers,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };

    let manager: Manager = Manager::builder(TokioRuntime::current())
        .add_all(servers)
        .build();
    let summary = manager.start().await;
    // Every server that is not live, and why: nothing is hidden.
    println!("live: {:?}", summary.live);
    for (server, why) in &summary.failed {
        println!("failed: {server}: {why}");
    }
    for (server, why) in &summary.unreachable {
        println!("unreachable: {server}: {why}");
    }
    for server in &summary.from_cache {
        println!("still connecting, cached tools served: {server}");
    }
    for server in &summary.pending {
        println!("still connecting: {server}");
    }

    let tools = manager.tools();
    for tool in &tools {
        println!("  {:<20} (server {})", tool.name, tool.server);
    }
    // Call the first namespaced `echo` the servers offer (the demo server has one).
    if let Some(echo) = tools.iter().find(|t| t.tool.name == "echo") {
        match manager
            .call_tool(&echo.name, json!({"text": "hello"}))
            .await
        {
            Ok(result) => println!(
                "{} -> {}",
                echo.name,
                result.content[0].as_text().unwrap_or("?")
            ),
            Err(e) => eprintln!("{}: {e}", echo.name),
        }
    }
    manager.shutdown().await;
    if summary.live.is_empty() {
        eprintln!("error: no server started");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
