//! [`Runtime`] for async-std and smol: async-io's reactor, async-process's children.

use std::fmt;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use mcp_driver::{BoxFuture, ChildParts, ChildProcess, Runtime};

/// The async-std / smol runtime: an executor to spawn on, and async-io's global reactor.
///
/// Timers and I/O go through async-io's reactor, which is process-global and driven by
/// whichever thread blocks first (or by its own fallback thread), so the same value works
/// under `async_std::task::block_on`, `smol::block_on` or any other executor. Only the
/// choice of executor for the driver's background tasks differs, and it is fixed at
/// construction:
///
/// - [`AsyncStdRuntime::async_std`] spawns with `async_std::task::spawn` (feature
///   `async-std`, on by default; [`Default`] picks it then).
/// - [`AsyncStdRuntime::smol`] spawns with `smol::spawn`, smol's global executor
///   ([`Default`] without the `async-std` feature).
/// - [`AsyncStdRuntime::from_spawner`] takes any spawn function, for an application that
///   runs its own `async_executor::Executor`.
///
/// Cloning is cheap (one `Arc`).
#[derive(Clone)]
pub struct AsyncStdRuntime {
    spawner: Arc<dyn Fn(BoxFuture) + Send + Sync>,
    name: &'static str,
}

/// The same runtime type, under the name smol users look for; construct it with
/// [`AsyncStdRuntime::smol`].
pub type SmolRuntime = AsyncStdRuntime;

impl AsyncStdRuntime {
    /// Spawns on async-std's global executor.
    #[cfg(feature = "async-std")]
    pub fn async_std() -> Self {
        // Dropping async-std's JoinHandle detaches the task.
        Self::named("async-std", |f| drop(async_std::task::spawn(f)))
    }

    /// Spawns on smol's global executor (`smol::spawn`), whose threads start on first use.
    pub fn smol() -> Self {
        Self::named("smol", |f| smol::spawn(f).detach())
    }

    /// Spawns with `spawner`, which must run each future to completion in the background
    /// and must not panic when called from a thread outside the executor.
    ///
    /// ```
    /// use std::sync::Arc;
    /// let ex = Arc::new(smol::Executor::new());
    /// let spawner = ex.clone();
    /// let rt = mcp_async_std::AsyncStdRuntime::from_spawner(move |f| spawner.spawn(f).detach());
    /// // ... then drive `ex` (for example `smol::block_on(ex.run(app))`).
    /// # drop(rt);
    /// ```
    pub fn from_spawner(spawner: impl Fn(BoxFuture) + Send + Sync + 'static) -> Self {
        Self::named("custom", spawner)
    }

    fn named(name: &'static str, spawner: impl Fn(BoxFuture) + Send + Sync + 'static) -> Self {
        Self {
            spawner: Arc::new(spawner),
            name,
        }
    }
}

impl Default for AsyncStdRuntime {
    fn default() -> Self {
        #[cfg(feature = "async-std")]
        return Self::async_std();
        #[cfg(not(feature = "async-std"))]
        return Self::smol();
    }
}

impl fmt::Debug for AsyncStdRuntime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AsyncStdRuntime")
            .field("executor", &self.name)
            .finish()
    }
}

impl Runtime for AsyncStdRuntime {
    fn spawn(&self, future: BoxFuture) {
        (self.spawner)(future);
    }

    fn sleep_until(&self, deadline: Instant) -> BoxFuture {
        let timer = async_io::Timer::at(deadline);
        Box::pin(async move {
            timer.await;
        })
    }

    /// Always the [`Default`] runtime: both executors are global and start on first use, so
    /// there is no "outside the runtime" and `Client::stdio(..)` needs no runtime argument.
    fn try_current() -> Option<Self> {
        Some(Self::default())
    }

    fn spawn_child(&self, command: std::process::Command) -> io::Result<ChildParts> {
        let mut command = async_process::Command::from(command);
        // async-process cannot read back the std command's stdio and would reset it to
        // `inherit`: restate the pipes the driver configured. Everything else, the process
        // group included, stays as configured.
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // A last resort only: `StdioChild` kills the whole group itself.
            .kill_on_drop(true);
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
            stdin: Box::pin(stdin),
            stdout: Box::pin(stdout),
            stderr: Box::pin(stderr),
            process: Box::new(AsyncChild {
                child,
                wait: None,
                status: None,
            }),
        })
    }

    /// hyper 1 (HTTP/1.1) over smol's TCP with rustls (ring, the system's roots plus any
    /// configured CA); kept-alive connections reused per origin, their tasks spawned with
    /// this runtime.
    #[cfg(feature = "http")]
    fn http_client(
        &self,
        config: &mcp_driver::http::HttpClientConfig,
    ) -> io::Result<Arc<dyn mcp_driver::http::HttpClient>> {
        crate::http::client(self.clone(), config)
    }
}

type StatusFuture = Pin<Box<dyn Future<Output = io::Result<ExitStatus>> + Send>>;

/// async-process's child behind [`ChildProcess`]. Dropped unreaped, async-process kills it
/// (`kill_on_drop`) and its reaper collects the zombie in the background.
struct AsyncChild {
    child: async_process::Child,
    /// The pending `status()` future, kept across polls so its exit registration persists.
    wait: Option<StatusFuture>,
    status: Option<ExitStatus>,
}

impl ChildProcess for AsyncChild {
    fn id(&self) -> Option<u32> {
        // async-process reports the pid even after reaping; the contract says `None` then.
        self.status.is_none().then(|| self.child.id())
    }

    fn poll_wait(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<ExitStatus>> {
        if let Some(status) = self.status {
            return Poll::Ready(Ok(status));
        }
        let wait = self
            .wait
            .get_or_insert_with(|| Box::pin(self.child.status()));
        let result = std::task::ready!(wait.as_mut().poll(cx));
        self.wait = None;
        if let Ok(status) = result {
            self.status = Some(status);
        }
        Poll::Ready(result)
    }

    fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        if self.status.is_none() {
            self.status = self.child.try_status()?;
        }
        Ok(self.status)
    }
}
