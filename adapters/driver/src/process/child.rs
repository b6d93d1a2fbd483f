//! A spawned stdio server: pipes, process-group ownership, stderr drain and reaping.

use std::fmt;
use std::future::poll_fn;
use std::io;
use std::pin::Pin;
use std::process::ExitStatus;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use super::watchdog::Watchdog;
use super::{
    ProcessGroupGuard, Signal, SignalOutcome, StderrTail, StderrTailConfig, StdioCommand,
    describe_exit, drain_stderr,
};
use crate::runtime::{ChildProcess, Runtime};

/// The protocol pipes of a [`StdioChild`]: what the driver writes to and reads from.
///
/// Dropping `stdin` closes the server's input, the first step of a graceful shutdown.
pub struct StdioPipes {
    /// The server's standard input.
    pub stdin: Pin<Box<dyn futures_io::AsyncWrite + Send>>,
    /// The server's standard output.
    pub stdout: Pin<Box<dyn futures_io::AsyncRead + Send>>,
    /// How much of what was written to `stdin` the server has not read (while `stdin` is
    /// open).
    pub unread: super::UnreadInput,
}

impl fmt::Debug for StdioPipes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StdioPipes").finish_non_exhaustive()
    }
}

/// A running stdio server process that cleans up after itself.
///
/// Made by [`StdioChild::spawn`], which also starts draining its stderr. It owns the child's
/// process group: dropping it SIGKILLs the whole group and makes sure the child is reaped
/// (see the [module docs](super) for every path). The graceful path is the driver's: close
/// stdin, [`StdioChild::poll_wait`] with a deadline, [`StdioChild::signal`] with
/// [`Signal::Term`], wait again, then [`Signal::Kill`], as the core's shutdown schedule says.
pub struct StdioChild<R: Runtime> {
    runtime: R,
    /// `None` only while dropping (moved into the background reaper).
    process: Option<Box<dyn ChildProcess>>,
    guard: ProcessGroupGuard,
    status: Option<ExitStatus>,
    name: Arc<str>,
    stderr: Arc<Mutex<StderrTail>>,
    /// Kills the group if this process dies without dropping us; `None` without `/bin/sh`.
    /// Declared last: dropped after `Drop::drop` has killed the group itself.
    _watchdog: Option<Watchdog>,
}

impl<R: Runtime> StdioChild<R> {
    /// Spawns `spec` on `runtime`, takes ownership of its process group and starts a task
    /// that drains its stderr into a [`StderrTail`] with `tail` limits (lines are logged at
    /// debug level under `name`).
    ///
    /// The spawn runs on the process's one spawner thread (the Linux parent-death signal
    /// follows the thread that forks) and a group watchdog is started beside the server; see
    /// the [module docs](super) for what happens when this process dies without dropping
    /// the child. The caller is blocked for the fork and exec of both (a few milliseconds).
    ///
    /// # Errors
    ///
    /// The spawn error (`NotFound` for a missing program, `PermissionDenied`, ...), or
    /// `Other` if the runtime returned a child without a pid. A child that was started but
    /// could not be taken over is killed before the error is returned.
    pub fn spawn(
        runtime: &R,
        spec: &StdioCommand,
        name: impl Into<Arc<str>>,
        tail: StderrTailConfig,
    ) -> io::Result<(Self, StdioPipes)> {
        let name = name.into();
        let (parts, watchdog) = {
            let runtime = runtime.clone();
            let command = spec.to_command();
            super::spawner::run(move || -> io::Result<_> {
                let parts = runtime.spawn_child(command)?;
                let watchdog = parts.process.id().map(Watchdog::start);
                Ok((parts, watchdog))
            })?
        };
        let pid = parts.process.id().ok_or_else(|| {
            io::Error::other("the runtime returned a child process without a pid")
        })?;
        // On error `parts` drops here, and the runtime's kill-on-drop ends the direct child.
        let guard = ProcessGroupGuard::new(pid)?;
        let watchdog = match watchdog {
            Some(Ok(w)) => Some(w),
            Some(Err(e)) => {
                tracing::warn!(server = &*name, pid, error = %e, "no group watchdog: if this process is killed, the server's own children may outlive it");
                None
            }
            None => None,
        };
        tracing::debug!(server = &*name, pid, command = %spec.command, "spawned stdio server");

        let stderr = Arc::new(Mutex::new(StderrTail::new(tail)));
        let drain = drain_stderr(parts.stderr, stderr.clone(), name.clone());
        runtime.spawn(Box::pin(async move {
            // The error was already logged by the drain loop; nobody else needs it.
            let _ = drain.await;
        }));

        let child = Self {
            runtime: runtime.clone(),
            process: Some(parts.process),
            guard,
            status: None,
            name,
            stderr,
            _watchdog: watchdog,
        };
        let (stdin, unread) = super::StdinPipe::new(parts.stdin, parts.stdin_dup);
        let pipes = StdioPipes {
            stdin: Box::pin(stdin),
            stdout: parts.stdout,
            unread,
        };
        Ok((child, pipes))
    }

    /// The child's pid, which is also its process group id.
    pub fn id(&self) -> u32 {
        self.guard.pgid()
    }

    /// The server name used in logs.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The exit status, once the child has been reaped.
    pub fn status(&self) -> Option<ExitStatus> {
        self.status
    }

    /// The shared stderr tail; the drain task keeps filling it until stderr closes.
    pub fn stderr_tail(&self) -> &Arc<Mutex<StderrTail>> {
        &self.stderr
    }

    /// Up to `n` of the most recent complete stderr lines, oldest first.
    pub fn last_stderr_lines(&self, n: usize) -> Vec<String> {
        self.stderr
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .last_lines(n)
    }

    /// Sends `signal` to the child's whole process group (grandchildren included).
    ///
    /// Still meaningful after the child was reaped: it reaches grandchildren left in the
    /// group.
    ///
    /// # Errors
    ///
    /// As for [`super::signal_group`]; an empty group is `Ok(SignalOutcome::AlreadyGone)`.
    pub fn signal(&self, signal: Signal) -> io::Result<SignalOutcome> {
        self.guard.signal(signal)
    }

    /// Polls for the child's exit, reaping it. After the first `Ready(Ok(_))` every call
    /// returns the same status at once.
    ///
    /// # Errors
    ///
    /// The runtime's wait error (rare: the child was reaped by someone else).
    pub fn poll_wait(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<ExitStatus>> {
        if let Some(status) = self.status {
            return Poll::Ready(Ok(status));
        }
        let Some(process) = self.process.as_mut() else {
            return Poll::Ready(Err(io::Error::other("child handle already released")));
        };
        let status = std::task::ready!(process.poll_wait(cx))?;
        self.record(status);
        Poll::Ready(Ok(status))
    }

    /// Waits for the child's exit, reaping it. Cancel-safe.
    ///
    /// # Errors
    ///
    /// As for [`StdioChild::poll_wait`].
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        poll_fn(|cx| self.poll_wait(cx)).await
    }

    /// Reaps the child if it has exited, without waiting.
    ///
    /// # Errors
    ///
    /// As for [`StdioChild::poll_wait`].
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        if let Some(status) = self.status {
            return Ok(Some(status));
        }
        let Some(process) = self.process.as_mut() else {
            return Err(io::Error::other("child handle already released"));
        };
        let status = process.try_wait()?;
        if let Some(status) = status {
            self.record(status);
        }
        Ok(status)
    }

    fn record(&mut self, status: ExitStatus) {
        self.status = Some(status);
        tracing::debug!(
            server = &*self.name,
            pid = self.id(),
            "stdio server {}",
            describe_exit(status)
        );
    }
}

impl<R: Runtime> Drop for StdioChild<R> {
    fn drop(&mut self) {
        // Kill the group before reaping: while the leader is unreaped its pgid cannot be
        // reused, so the signal cannot reach anyone else.
        if let Err(e) = self.guard.signal(Signal::Kill) {
            tracing::warn!(server = &*self.name, pid = self.id(), error = %e, "could not kill process group");
        }
        self.guard.disarm();
        if self.status.is_some() {
            return;
        }
        let Some(mut process) = self.process.take() else {
            return;
        };
        match process.try_wait() {
            Ok(Some(_)) => {}
            Ok(None) => {
                // SIGKILL is delivered but the kernel has not finished the child yet.
                let name = self.name.clone();
                self.runtime.spawn(Box::pin(async move {
                    match poll_fn(|cx| process.poll_wait(cx)).await {
                        Ok(status) => tracing::debug!(
                            server = &*name,
                            "reaped dropped stdio server: {}",
                            describe_exit(status)
                        ),
                        Err(e) => tracing::warn!(server = &*name, error = %e, "could not reap dropped stdio server"),
                    }
                }));
            }
            Err(e) => {
                tracing::warn!(server = &*self.name, error = %e, "could not reap dropped stdio server");
            }
        }
    }
}

impl<R: Runtime> fmt::Debug for StdioChild<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StdioChild")
            .field("name", &self.name)
            .field("pid", &self.id())
            .field("status", &self.status)
            .finish_non_exhaustive()
    }
}
