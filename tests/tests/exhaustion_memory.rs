//! Peak heap of a real client (tokio) while `fault_server` tries to exhaust it: a tools list
//! that never ends (a fresh `nextCursor` on every page of 100 tools of 1 KiB), bounded by the
//! default list budget; and 4 million `ping`s from a server that never reads its stdin,
//! bounded by the default outgoing queue limit.
//!
//! A test binary of its own: the counting allocator sees every allocation of the process, so
//! the tests here take a lock to run one at a time.

#![cfg(target_os = "linux")]

use std::sync::Mutex;
use std::time::Duration;

use mcp_driver::process::StdioCommand;
use mcp_driver::{Error, ListLimit};
use mcp_tests::counting_alloc::CountingAlloc;
use mcp_tokio::ClientBuilder;

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc::new();

static SERIAL: Mutex<()> = Mutex::new(());

const MIB: usize = 1 << 20;
/// A guard against hangs, not a timing: every row ends in seconds.
const GUARD: Duration = Duration::from_secs(120);

fn fault_server(args: &[&str]) -> StdioCommand {
    StdioCommand::new(env!("CARGO_BIN_EXE_fault_server")).args(args.iter().copied())
}

fn mib(n: usize) -> f64 {
    n as f64 / MIB as f64
}

/// Runs `f` on a fresh two-thread tokio runtime, one test at a time, under [`GUARD`].
fn on_tokio<F: std::future::Future<Output = ()>>(f: impl FnOnce() -> F) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    rt.block_on(async {
        tokio::time::timeout(GUARD, f()).await.expect("hung");
    });
}

/// The default budget (64 MiB of results) stops the endless list; the client's peak heap
/// stays within a small multiple of it (measured: 129 MiB, the decoded tools of 64 MiB of
/// JSON and their vector's last doubling). Without a byte budget the list grew by ~300 MB a second up to its 10 000-page
/// cap (1 GB here).
#[test]
fn endless_pages_stop_at_the_byte_budget() {
    on_tokio(endless_pages);
}

async fn endless_pages() {
    let client = ClientBuilder::new()
        .name("endless")
        .stdio(fault_server(&["endless_pages"]))
        .await
        .expect("connect");
    ALLOC.reset_peak();
    let listed = client.list_tools().await;
    let peak = ALLOC.peak_above_baseline();
    eprintln!(
        "endless pages: peak heap {:.1} MiB over the baseline",
        mib(peak)
    );
    match listed {
        Err(Error::ListBudget { limit, .. }) => {
            assert_eq!(limit, ListLimit::Bytes(64 << 20));
        }
        other => panic!("expected the byte budget, got {:?}", other.map(|t| t.len())),
    }
    assert!(
        peak < 256 * MIB,
        "peak heap {:.1} MiB over the baseline",
        mib(peak)
    );
    client.close().await;
}

/// 4 million `ping`s (the repro) while the server never reads: the answers the client
/// cannot queue beyond the default 8 MiB are dropped, and the connection is declared stalled
/// (after 3 s here). Without the bound, every answer was queued (527 MB and rising).
#[test]
fn a_ping_flood_nobody_reads_stays_bounded() {
    on_tokio(ping_flood);
}

async fn ping_flood() {
    use mcp_driver::mcp_proto::session::CloseReason;
    let client = ClientBuilder::new()
        .name("flood")
        .stall_timeout(Some(Duration::from_secs(3)))
        .stdio(fault_server(&["ping_flood", "4000000"]))
        .await
        .expect("connect");
    ALLOC.reset_peak();
    let call = client
        .call_tool_with(
            "echo",
            serde_json::json!({"message": "m"}),
            mcp_driver::CallOptions::new().no_timeout(),
        )
        .await;
    let peak = ALLOC.peak_above_baseline();
    eprintln!(
        "ping flood: peak heap {:.1} MiB over the baseline",
        mib(peak)
    );
    assert!(
        matches!(
            call,
            Err(Error::Closed {
                reason: CloseReason::Stalled { .. },
                ..
            })
        ),
        "{call:?}"
    );
    assert!(
        peak < 48 * MIB,
        "peak heap {:.1} MiB over the baseline",
        mib(peak)
    );
    client.close().await;
}
