//! The runtime abstraction: the few things the driver needs from an async runtime.
//!
//! The driver is written once, generic over [`Runtime`]; each adapter crate (`mcp-tokio`,
//! `mcp-async-std`) implements it in a few dozen lines. The shape follows quinn's `Runtime`:
//! boxed futures and boxed byte streams, so that the trait stays small and every runtime's
//! types disappear behind `futures-io`.
//!
//! Nothing here decides protocol. A runtime spawns tasks, sleeps until a deadline, reads the
//! clock and starts child processes exactly as configured; the policy (when to sleep, when to
//! signal, when to give up) comes from the core and the driver.

use std::fmt;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::process::ExitStatus;
use std::task::{Context, Poll};
use std::time::Instant;

/// A boxed, sendable future with no output: the unit of work the driver hands to a runtime.
pub type BoxFuture = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// What the driver needs from an async runtime.
///
/// Implement this once per runtime. The driver clones the runtime into every connection task,
/// so `Clone` should be cheap (a handle, not the runtime itself).
///
/// Implementations must be usable from any thread (`Send + Sync`); none of the methods may
/// block the calling thread.
pub trait Runtime: Clone + Send + Sync + 'static {
    /// Runs `future` to completion in the background.
    ///
    /// Exists for the per-connection driver task, the stderr drain loop and the background
    /// reaper of a dropped child (see [`crate::process::StdioChild`]). The runtime owns the
    /// task; the driver never joins it, so no join handle is returned. If the runtime is
    /// shutting down, the future may be dropped without running: callers only spawn work whose
    /// loss is harmless (a reaper's fallback is the runtime's own child cleanup).
    ///
    /// Must not panic when called from a thread that is not a runtime worker (for example
    /// from a `Drop` impl that runs after the caller left the runtime).
    fn spawn(&self, future: BoxFuture);

    /// A future that completes at (or soon after) `deadline`.
    ///
    /// Exists so the driver can arm one timer at the core's `poll_timeout`. A deadline in the
    /// past completes at once. The driver re-creates the future when the deadline moves, so
    /// implementations need no reset method.
    fn sleep_until(&self, deadline: Instant) -> BoxFuture;

    /// A future that lets the runtime's other tasks run once, then completes.
    ///
    /// Exists so the driver can hand the thread to callers between slices of a large batch
    /// of answers (their follow-up requests then reach the server while the rest is decoded).
    /// The default wakes the task at once, which is enough on runtimes that queue a task
    /// woken during its own poll behind the others. Runtimes that run a self-woken task again
    /// before anything else (tokio's current-thread scheduler runs up to 61 queued tasks
    /// before it polls `block_on`'s future) should return their own cooperative yield.
    fn yield_now(&self) -> BoxFuture {
        Box::pin(YieldOnce(false))
    }

    /// The current time, as the core's `now` argument.
    ///
    /// Exists so tests can substitute a virtual clock that agrees with [`Runtime::sleep_until`].
    /// The default reads the system's monotonic clock.
    fn now(&self) -> Instant {
        Instant::now()
    }

    /// Starts `command` as a child process and hands back its three pipes and a wait handle.
    ///
    /// Exists because spawning and waiting must be wired into the runtime's reactor (a child
    /// exit is an I/O event). The command arrives fully configured by
    /// [`crate::process::StdioCommand::to_command`]: stdin, stdout and stderr piped, the
    /// child in its own process group and, on Linux, a pre-exec hook that sets its
    /// parent-death signal. Implementations must keep that configuration, must not add their
    /// own stdio redirection, and should ask their runtime to kill the direct child if the
    /// returned [`ChildProcess`] is dropped unreaped (a last resort: the driver kills the
    /// whole process group itself). The driver calls this from its one long-lived spawner
    /// thread, not from a runtime thread: the runtime must accept a spawn from any thread.
    ///
    /// # Errors
    ///
    /// The spawn error from the operating system (for example `NotFound` for a missing
    /// program), or `Other` if a pipe the command asked for is missing.
    fn spawn_child(&self, command: std::process::Command) -> io::Result<ChildParts>;

    /// The runtime the calling code runs on, if the runtime has such a notion (tokio's
    /// `Handle::try_current`). Exists so that `Client::stdio(..)` needs no runtime argument;
    /// the default returns `None`, and such runtimes are passed explicitly with
    /// [`ClientBuilder::runtime`](crate::ClientBuilder::runtime).
    fn try_current() -> Option<Self>
    where
        Self: Sized,
    {
        None
    }

    /// An HTTP client for one connection's exchanges, set up as `config` says.
    ///
    /// Exists for the HTTP transport: the driver asks for one client per connection and
    /// performs every exchange the core asks for with it (see [`crate::http`] for the rules an
    /// implementation follows). The default returns an `Unsupported` error, so a runtime
    /// without HTTP support still compiles and serves stdio and byte streams.
    ///
    /// # Errors
    ///
    /// `Unsupported` when the runtime has no HTTP client; `InvalidInput` for a configuration
    /// the client cannot use (a root certificate that is not PEM, say).
    fn http_client(
        &self,
        config: &crate::http::HttpClientConfig,
    ) -> io::Result<std::sync::Arc<dyn crate::http::HttpClient>> {
        let _ = config;
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "HTTP is not supported by this runtime",
        ))
    }
}

/// A freshly spawned child process: its pipes and its wait handle.
///
/// The pipes are independent so the driver can write, read and drain stderr from different
/// tasks. Dropping `stdin` closes the child's standard input, which is the first step of the
/// graceful shutdown schedule.
pub struct ChildParts {
    /// The child's standard input.
    pub stdin: Pin<Box<dyn futures_io::AsyncWrite + Send>>,
    /// The child's standard output (the protocol stream).
    pub stdout: Pin<Box<dyn futures_io::AsyncRead + Send>>,
    /// The child's standard error (diagnostics; drain it continuously).
    pub stderr: Pin<Box<dyn futures_io::AsyncRead + Send>>,
    /// The wait handle: exit status and pid.
    pub process: Box<dyn ChildProcess>,
    /// A duplicate of `stdin`'s write end (`try_clone_to_owned` of the pipe), through which
    /// the driver asks how much of what it wrote the child has not read (`FIONREAD`): a
    /// server that exits having read nothing crashed, whatever it was sent, and is not started
    /// again for the era probe. The driver closes it together with `stdin`. `None` when the
    /// runtime cannot provide one: a child is then taken to have read its input.
    #[cfg(unix)]
    pub stdin_dup: Option<std::os::fd::OwnedFd>,
}

impl fmt::Debug for ChildParts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChildParts")
            .field("pid", &self.process.id())
            .finish_non_exhaustive()
    }
}

/// A runtime's handle on a running child process, reduced to what the driver needs.
///
/// Object-safe so [`ChildParts`] can carry any runtime's child type. Signals are not here:
/// the driver signals the child's whole process group by pid (see
/// [`crate::process::signal_group`]), which needs no runtime support.
///
/// # Reaping contract
///
/// Once [`ChildProcess::poll_wait`] or [`ChildProcess::try_wait`] has returned an exit status,
/// the child has been reaped and later calls return the same status. An implementation that
/// is dropped before that must not leave a zombie behind for the life of the program: it
/// should kill and reap the child in the background (tokio's `kill_on_drop` and orphan queue,
/// async-process's reaper do this). The driver does not rely on that alone: see
/// [`crate::process::StdioChild`].
pub trait ChildProcess: Send {
    /// The child's process id, or `None` once it has been reaped.
    ///
    /// Exists to name the process group: the child is its group's leader, so its pid is the
    /// pgid. Read it right after spawning, while it is certain to be valid.
    fn id(&self) -> Option<u32>;

    /// Polls for the child's exit; on `Ready(Ok(status))` the child has been reaped.
    ///
    /// Exists for the driver's shutdown schedule (wait for exit, with a deadline) and to
    /// notice a server that dies on its own. Registers `cx`'s waker for the exit.
    fn poll_wait(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<ExitStatus>>;

    /// Reaps the child if it has already exited, without waiting and without a waker.
    ///
    /// Exists for synchronous paths (a `Drop` impl) that want to know whether background
    /// reaping is still needed.
    fn try_wait(&mut self) -> io::Result<Option<ExitStatus>>;
}

impl fmt::Debug for dyn ChildProcess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChildProcess")
            .field("pid", &self.id())
            .finish()
    }
}

/// [`Runtime::yield_now`]'s default: pending once (with an immediate wake), then ready.
struct YieldOnce(bool);

impl Future for YieldOnce {
    type Output = ();

    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            return Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}
