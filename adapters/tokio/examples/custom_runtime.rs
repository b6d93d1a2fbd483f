//! A custom `Runtime`: the driver runs on anything that can spawn a task, sleep, and start a
//! child process. This one wraps tokio and counts the tasks the driver spawns; a real one
//! might run on an in-house executor or a simulator.
//!
//! ```text
//! cargo run -p mcp-tokio --example custom_runtime                 # runs `mcp demo-server`
//! cargo run -p mcp-tokio --example custom_runtime -- COMMAND [ARGS...]
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use mcp_tokio::driver::process::StdioCommand;
use mcp_tokio::driver::{BoxFuture, ChildParts, ClientBuilder, Runtime};
use mcp_tokio::{Error, TokioRuntime};

/// Tokio underneath, with a count of spawned tasks.
#[derive(Clone)]
struct CountingRuntime {
    inner: TokioRuntime,
    spawned: Arc<AtomicUsize>,
}

impl Runtime for CountingRuntime {
    fn spawn(&self, future: BoxFuture) {
        self.spawned.fetch_add(1, Ordering::Relaxed);
        self.inner.spawn(future);
    }

    fn sleep_until(&self, deadline: Instant) -> BoxFuture {
        self.inner.sleep_until(deadline)
    }

    fn spawn_child(&self, command: std::process::Command) -> std::io::Result<ChildParts> {
        self.inner.spawn_child(command)
    }

    fn try_current() -> Option<Self> {
        None
    }

    // HTTP: delegate too, so `ClientBuilder::http` works on this runtime.
    fn http_client(
        &self,
        config: &mcp_tokio::driver::http::HttpClientConfig,
    ) -> std::io::Result<Arc<dyn mcp_tokio::driver::http::HttpClient>> {
        self.inner.http_client(config)
    }
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let command = match args.split_first() {
        Some((program, rest)) => StdioCommand::new(program).args(rest.iter().cloned()),
        None => StdioCommand::new("mcp").args(["demo-server"]),
    };
    let runtime = CountingRuntime {
        inner: TokioRuntime::current(),
        spawned: Arc::default(),
    };
    let client = ClientBuilder::new()
        .runtime(runtime.clone())
        .stdio(command)
        .await?;
    let tools = client.list_tools().await?;
    println!("{} tools on {}", tools.len(), client.server_info().name);
    client.close().await;
    println!(
        "the driver spawned {} task(s) on the custom runtime",
        runtime.spawned.load(Ordering::Relaxed)
    );
    Ok(())
}
