//! Child processes for stdio servers (Unix).
//!
//! The pieces, in the order a connection uses them:
//!
//! 1. [`StdioCommand`] describes what to run; [`StdioCommand::to_command`] turns it into a
//!    `std::process::Command` with piped stdio and the child in its own process group.
//! 2. [`StdioChild::spawn`] starts it through a [`Runtime`](crate::Runtime), arms a
//!    [`ProcessGroupGuard`] and starts [`drain_stderr`] into a shared [`StderrTail`].
//! 3. The driver executes the core's shutdown schedule with [`StdioChild::signal`]
//!    ([`Signal::Term`], then [`Signal::Kill`]) and [`StdioChild::poll_wait`].
//! 4. [`describe_exit`] and [`StderrTail::last_lines`] make the error message when a server
//!    dies.
//!
//! # Reaping: no zombies on any path
//!
//! * **Normal exit or shutdown.** The driver polls [`StdioChild::poll_wait`] until it returns
//!   the status; the runtime's wait reaps the child (`waitpid`).
//! * **Drop without wait** (a `Client` dropped without `close()`, a panic unwinding through
//!   the driver task). [`StdioChild`]'s `Drop` first SIGKILLs the whole process group
//!   (through its [`ProcessGroupGuard`]), so the child and every grandchild that stayed in the
//!   group die at once. It then tries a non-blocking reap; if the kernel has not finished the
//!   child yet, it spawns a small task on the runtime that polls the wait handle to
//!   completion. If the runtime is already gone, the runtime's own cleanup is the last resort
//!   (tokio: `kill_on_drop` plus its orphan queue, which reaps on the next SIGCHLD).
//! * **Grandchildren.** They die with the group. Once their parent is gone they are
//!   re-parented to init (or the nearest subreaper), which reaps them; they are never our
//!   children, so they can never be our zombies. A grandchild that moved itself into another
//!   process group or session (a daemon) escapes the group signal by design.
//!
//! # When the client process dies without shutting down
//!
//! The paths above need the client to run. When it is killed outright (SIGKILL, a crash, an
//! abort, a runtime that exits without dropping the client), the server is not left behind
//! either:
//!
//! * **Linux: parent-death signal.** [`StdioCommand::to_command`] asks the kernel
//!   (`prctl(PR_SET_PDEATHSIG, SIGTERM)`) to signal the direct child when its parent dies. The
//!   kernel ties that to the *thread* that forked, so every server is started from one
//!   long-lived spawner thread that lasts as long as the process (`spawner.rs`); a runtime's
//!   worker or blocking thread retiring never kills a server. A client that died between the
//!   fork and the `prctl` is caught too: the child then refuses to start.
//! * **Every Unix: the group watchdog.** The parent-death signal reaches only the direct
//!   child, not a launcher's children (`npx` -> `node`, `sh -c` wrappers), and macOS has no
//!   such signal. A tiny `/bin/sh` watchdog per server (`watchdog.rs`) blocks on a pipe whose
//!   write end only the client holds, and when the client's end closes sends SIGTERM to the
//!   server's whole process group, then SIGKILL 2 s later (`KILL_GRACE_SECS`). A server that
//!   handles SIGTERM gets those seconds to clean up (`mcp bridge --url` cancels its calls
//!   upstream and ends its remote session); one that ignores it still dies. If `/bin/sh`
//!   cannot be started the server runs without one (a warning is logged) and only the
//!   parent-death SIGTERM applies.
//!
//! Both signals are SIGTERM first, not SIGKILL, for that cleanup: the kernel's would
//! otherwise end the direct child before the watchdog's grace could help it.
//!
//! A client that gets SIGTERM or SIGHUP should handle them like Ctrl-C (drop the calls, then
//! `close()`): the graceful schedule then runs, and the signals above are only the floor for
//! deaths that leave no time for it.

mod child;
mod exit;
mod signal;
mod spawner;
mod stderr;
mod unread;
mod watchdog;

use std::ffi::OsString;
use std::os::unix::process::CommandExt as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};

pub use child::{StdioChild, StdioPipes};
pub use exit::{describe_exit, signal_name};
pub use signal::{ProcessGroupGuard, Signal, SignalOutcome, signal_group};
pub use stderr::{SERVER_STDERR_TARGET, StderrTail, StderrTailConfig, drain_stderr};
pub(crate) use unread::StdinPipe;
pub use unread::UnreadInput;

/// What to run for a stdio server: program, arguments, environment and working directory.
///
/// Build one from a server config; turn it into a `Command` with [`StdioCommand::to_command`].
/// The environment is merged over the parent's (entries here win) unless `clear_env` is set,
/// in which case the child sees only `env`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StdioCommand {
    /// The program: a path, or a name looked up in `PATH`.
    pub command: String,
    /// Arguments, not including the program name.
    pub args: Vec<String>,
    /// Environment entries set for the child, applied in order (a later entry for the same
    /// name wins).
    pub env: Vec<(String, String)>,
    /// Start from an empty environment instead of the parent's.
    pub clear_env: bool,
    /// The child's working directory; `None` inherits the parent's.
    pub cwd: Option<PathBuf>,
}

impl StdioCommand {
    /// A command with no arguments, the parent's environment and working directory.
    pub fn new(command: impl Into<String>) -> Self {
        Self {
            command: command.into(),
            ..Self::default()
        }
    }

    /// Appends arguments.
    #[must_use]
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Adds one environment entry.
    #[must_use]
    pub fn env(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((name.into(), value.into()));
        self
    }

    /// Builds the `std::process::Command` to hand to [`Runtime::spawn_child`](crate::Runtime::spawn_child).
    ///
    /// Guarantees: stdin, stdout and stderr are piped; the child becomes the leader of a new
    /// process group (`process_group(0)`, so its pgid equals its pid and it does not receive
    /// the terminal's Ctrl-C meant for us); the environment and working directory are as
    /// described on [`StdioCommand`]. On Linux the child gets SIGTERM when the thread that
    /// spawns it ends (the parent-death signal: spawn it from a thread that lives as long as
    /// the process, as [`StdioChild::spawn`] does; see the [module docs](self)).
    pub fn to_command(&self) -> Command {
        let mut cmd = Command::new(&self.command);
        cmd.args(&self.args);
        if self.clear_env {
            cmd.env_clear();
        }
        cmd.envs(
            self.env
                .iter()
                .map(|(k, v)| (OsString::from(k), OsString::from(v))),
        );
        if let Some(cwd) = &self.cwd {
            cmd.current_dir(cwd);
        }
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        #[cfg(any(target_os = "linux", target_os = "android"))]
        parent_death::arm(&mut cmd);
        cmd
    }
}

/// The Linux parent-death signal of a stdio server.
#[cfg(any(target_os = "linux", target_os = "android"))]
#[allow(unsafe_code)] // The crate's one unsafe block: std's `pre_exec` (see the crate root).
mod parent_death {
    use std::io;
    use std::os::unix::process::CommandExt as _;
    use std::process::Command;

    use rustix::process::{Signal, getpid, getppid, set_parent_process_death_signal};

    /// Makes the child ask for SIGTERM when its parent (thread) dies (SIGTERM, not SIGKILL,
    /// so it can clean up; the group watchdog follows with SIGKILL).
    pub(super) fn arm(cmd: &mut Command) {
        let parent = getpid();
        // SAFETY: the hook runs in the forked child before exec, where only async-signal-safe
        // calls are allowed: it makes two raw system calls (`prctl`, `getppid`) and builds an
        // `io::Error` from an errno, which does not allocate.
        unsafe {
            cmd.pre_exec(move || {
                set_parent_process_death_signal(Some(Signal::TERM))?;
                // The parent may have died between the fork and the prctl: then no signal
                // will ever come, so the server must not start at all.
                if getppid() != Some(parent) {
                    return Err(io::Error::from_raw_os_error(
                        rustix::io::Errno::SRCH.raw_os_error(),
                    ));
                }
                Ok(())
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn to_command_carries_program_args_env_and_cwd() {
        let spec = StdioCommand {
            command: "srv".into(),
            args: vec!["--a".into(), "b".into()],
            env: vec![("K".into(), "1".into()), ("K".into(), "2".into())],
            clear_env: true,
            cwd: Some("/tmp".into()),
        };
        let cmd = spec.to_command();
        assert_eq!(cmd.get_program(), "srv");
        let args: Vec<_> = cmd.get_args().collect();
        assert_eq!(args, ["--a", "b"]);
        // The later entry for the same name wins.
        let envs: Vec<_> = cmd.get_envs().collect();
        assert_eq!(envs, [("K".as_ref(), Some("2".as_ref()))]);
        assert_eq!(cmd.get_current_dir(), Some("/tmp".as_ref()));
    }

    #[test]
    fn builder_methods_append() {
        let spec = StdioCommand::new("npx").args(["-y", "pkg"]).env("A", "b");
        assert_eq!(spec.command, "npx");
        assert_eq!(spec.args, ["-y", "pkg"]);
        assert_eq!(spec.env, [("A".to_string(), "b".to_string())]);
        assert!(!spec.clear_env);
        assert_eq!(spec.cwd, None);
    }
}
