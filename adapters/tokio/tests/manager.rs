//! The manager test bodies (`mcp_driver::testing::manager`) on tokio: several stdio servers at
//! once (the Python fixture with delay / crash flags, and the real peers when installed).

#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_driver::testing::manager;
use mcp_tokio::TokioRuntime;

const GUARD: Duration = Duration::from_secs(60);

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/stdio_server.py")
}

/// A fresh directory under the target dir (removed on drop).
struct TempDir(PathBuf);

impl TempDir {
    fn new(test: &str) -> Self {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "mcp-manager-{test}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create the test directory");
        TempDir(dir)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

macro_rules! manager_tests {
    ($($name:ident),* $(,)?) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $name() {
            let dir = TempDir::new(stringify!($name));
            tokio::time::timeout(
                GUARD,
                manager::$name(TokioRuntime::current(), &script(), dir.path()),
            )
            .await
            .expect(concat!(stringify!($name), " hung"));
        }
    )*};
}

manager_tests!(
    slow_server_served_from_cache,
    changed_config_misses_cache,
    crashing_server_reconnects,
    names_collide_and_long,
    disconnect_while_connecting,
    permanent_failure_not_retried,
    unreachable_server_not_waited_for,
    crash_at_start_is_failed_not_unreachable,
    list_changed_refreshes_tools,
    connects_are_bounded,
    subscription_survives_restart,
    subscription_refused_after_restart,
);

/// server-everything (stdio) and the Python SDK peer beside the fixture. Needs the peers from
/// `scripts/install-peers` (`.peers/env.sh` sourced, as `scripts/test` does); skipped only
/// with `MCP_SKIP_INTEROP=1`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_servers_at_once() {
    let vars = [
        "MCP_PEER_EVERYTHING",
        "MCP_PEER_PYTHON",
        "MCP_PEER_PY_SERVER",
    ];
    let values: Vec<Option<String>> = vars.iter().map(|v| std::env::var(v).ok()).collect();
    let [Some(everything), Some(python), Some(py_server)] = &values[..] else {
        if std::env::var("MCP_SKIP_INTEROP").as_deref() == Ok("1") {
            eprintln!("real_servers_at_once: skipped (MCP_SKIP_INTEROP=1)");
            return;
        }
        panic!(
            "real_servers_at_once needs {vars:?} from .peers/env.sh: run scripts/test (or \
             scripts/install-peers and source .peers/env.sh), or set MCP_SKIP_INTEROP=1"
        );
    };
    let dir = TempDir::new("real_servers_at_once");
    tokio::time::timeout(
        GUARD,
        manager::real_servers_at_once(
            TokioRuntime::current(),
            &script(),
            dir.path(),
            everything,
            python,
            py_server,
        ),
    )
    .await
    .expect("real_servers_at_once hung");
}
