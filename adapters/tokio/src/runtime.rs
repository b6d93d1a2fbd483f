//! [`Runtime`] for tokio.

use std::future::Future;
use std::io;
use std::pin::pin;
use std::process::ExitStatus;
use std::task::{Context, Poll};
use std::time::Instant;

use mcp_driver::{BoxFuture, ChildParts, ChildProcess, Runtime};
use tokio::runtime::Handle;
use tokio_util::compat::{TokioAsyncReadCompatExt as _, TokioAsyncWriteCompatExt as _};

/// The tokio runtime, as a handle.
///
/// Holds a [`Handle`] rather than calling `tokio::spawn`, so that spawning from outside the
/// runtime's threads (a `Drop` that runs on a plain thread) does not panic. The runtime must
/// have its time and I/O drivers enabled (`Builder::enable_all`, `#[tokio::main]`).
#[derive(Debug, Clone)]
pub struct TokioRuntime {
    handle: Handle,
}

impl TokioRuntime {
    /// The runtime this code is running on.
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime, like [`Handle::current`]; use [`TokioRuntime::try_current`]
    /// to get `None` instead.
    pub fn current() -> Self {
        Self {
            handle: Handle::current(),
        }
    }

    /// The runtime this code is running on, or `None` outside a tokio runtime.
    pub fn try_current() -> Option<Self> {
        Handle::try_current().ok().map(Self::from)
    }

    /// The handle tasks are spawned on.
    pub fn handle(&self) -> &Handle {
        &self.handle
    }
}

impl From<Handle> for TokioRuntime {
    fn from(handle: Handle) -> Self {
        Self { handle }
    }
}

impl Runtime for TokioRuntime {
    fn spawn(&self, future: BoxFuture) {
        // Detached: dropping the JoinHandle does not cancel the task. On a runtime that is
        // shutting down the task is dropped unrun, which `Runtime::spawn` allows.
        drop(self.handle.spawn(future));
    }

    fn sleep_until(&self, deadline: Instant) -> BoxFuture {
        // Create the timer inside the runtime's context so this works from any thread.
        let _enter = self.handle.enter();
        Box::pin(tokio::time::sleep_until(deadline.into()))
    }

    fn yield_now(&self) -> BoxFuture {
        // tokio defers this wake until the scheduler has looked at the rest of its work,
        // `block_on`'s future included.
        Box::pin(tokio::task::yield_now())
    }

    fn try_current() -> Option<Self> {
        TokioRuntime::try_current()
    }

    #[cfg(feature = "http")]
    fn http_client(
        &self,
        config: &mcp_driver::http::HttpClientConfig,
    ) -> io::Result<std::sync::Arc<dyn mcp_driver::http::HttpClient>> {
        // Built inside the runtime's context: the client's connector may need it.
        let _enter = self.handle.enter();
        crate::http::client(config)
    }

    fn spawn_child(&self, command: std::process::Command) -> io::Result<ChildParts> {
        let mut command = tokio::process::Command::from(command);
        // A last resort only: it kills the direct child, not its group. `StdioChild` kills
        // the group itself; this covers a `ChildProcess` dropped by other code.
        command.kill_on_drop(true);
        // The child's exit is registered with this runtime's reactor.
        let _enter = self.handle.enter();
        let mut child = command.spawn()?;
        let missing = |what: &str| io::Error::other(format!("child {what} is not piped"));
        let stdin = child.stdin.take().ok_or_else(|| missing("stdin"))?;
        let stdout = child.stdout.take().ok_or_else(|| missing("stdout"))?;
        let stderr = child.stderr.take().ok_or_else(|| missing("stderr"))?;
        #[cfg(unix)]
        let stdin_dup = std::os::fd::AsFd::as_fd(&stdin).try_clone_to_owned().ok();
        Ok(ChildParts {
            #[cfg(unix)]
            stdin_dup,
            stdin: Box::pin(stdin.compat_write()),
            stdout: Box::pin(stdout.compat()),
            stderr: Box::pin(stderr.compat()),
            process: Box::new(TokioChild(child)),
        })
    }
}

/// tokio's child behind [`ChildProcess`].
struct TokioChild(tokio::process::Child);

impl ChildProcess for TokioChild {
    fn id(&self) -> Option<u32> {
        self.0.id()
    }

    fn poll_wait(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<ExitStatus>> {
        // tokio offers only `async fn wait`. Polling a fresh `wait()` future once is sound:
        // the exit registration (pidfd or SIGCHLD watch) lives in the `Child`, not in the
        // future, so dropping a pending future loses no wake-up, and `wait` is cancel-safe.
        pin!(self.0.wait()).poll(cx)
    }

    fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        self.0.try_wait()
    }
}
