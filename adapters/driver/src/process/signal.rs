//! Signalling a child's whole process group, and the guard that kills it on drop.

use std::io;

use rustix::process::{Pid, Signal as RawSignal, kill_process_group};

/// A signal the driver sends to a server's process group.
///
/// Only the two the shutdown schedule uses: a polite request and the final word.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Signal {
    /// `SIGTERM`: ask every process in the group to exit.
    Term,
    /// `SIGKILL`: end every process in the group; it cannot be caught or ignored.
    Kill,
}

impl Signal {
    fn raw(self) -> RawSignal {
        match self {
            Signal::Term => RawSignal::TERM,
            Signal::Kill => RawSignal::KILL,
        }
    }
}

/// What happened to a group signal that did not fail.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SignalOutcome {
    /// The signal was delivered to at least one process of the group.
    Sent,
    /// No process is left in the group (`ESRCH`): everything already exited.
    AlreadyGone,
}

/// Sends `signal` to every process in the process group `pgid` (`killpg`).
///
/// Use it with the pgid of a child started by [`StdioCommand::to_command`](super::StdioCommand::to_command),
/// which is the child's pid. An empty group is not an error: it is reported as
/// [`SignalOutcome::AlreadyGone`].
///
/// Signal the group *before* reaping its leader where you can: while the leader is an
/// unreaped zombie (or any member lives) the kernel cannot reuse the pgid, so the signal
/// cannot reach an unrelated group.
///
/// # Errors
///
/// `InvalidInput` for a pgid that would signal far more than one server: 0 (our own group
/// in `kill`'s encoding), 1 (`kill(-1)` means every process we may signal), values above
/// `i32::MAX`, and our own process group (a child that failed to get its own group). Other
/// errors (such as `EPERM`) come from the operating system.
pub fn signal_group(pgid: u32, signal: Signal) -> io::Result<SignalOutcome> {
    let pid = checked_pgid(pgid)?;
    match kill_process_group(pid, signal.raw()) {
        Ok(()) => Ok(SignalOutcome::Sent),
        Err(rustix::io::Errno::SRCH) => Ok(SignalOutcome::AlreadyGone),
        Err(e) => Err(e.into()),
    }
}

fn checked_pgid(pgid: u32) -> io::Result<Pid> {
    let invalid = |why: &str| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("refusing to signal process group {pgid}: {why}"),
        )
    };
    let raw = i32::try_from(pgid).map_err(|_| invalid("not a valid pid"))?;
    if raw <= 1 {
        return Err(invalid("it would signal more than one server's processes"));
    }
    let pid = Pid::from_raw(raw).ok_or_else(|| invalid("not a valid pid"))?;
    if own_pgid() == Some(pid) {
        return Err(invalid("it is our own process group"));
    }
    Ok(pid)
}

/// Our own process group, or `None` when it has no id in our pid namespace (its leader is
/// outside, as under `unshare --pid --fork` without `setsid`: the kernel reports 0 then).
///
/// Read from `/proc/self/stat` where there is one, because `getpgrp` assumes a nonzero
/// answer (rustix asserts it in debug builds and builds an invalid `Pid` otherwise).
fn own_pgid() -> Option<Pid> {
    match std::fs::read_to_string("/proc/self/stat") {
        Ok(stat) => stat_pgrp(&stat).and_then(Pid::from_raw),
        // No procfs (not Linux): no pid namespaces either, so the group has an id.
        Err(_) => Some(rustix::process::getpgrp()),
    }
}

/// The `pgrp` field of a `/proc/PID/stat` line: the third field after the command name,
/// which is in parentheses and may itself hold spaces and parentheses.
fn stat_pgrp(stat: &str) -> Option<i32> {
    let (_, after_name) = stat.rsplit_once(')')?;
    after_name.split_whitespace().nth(2)?.parse().ok()
}

/// Owns a child's process group and SIGKILLs all of it when dropped, unless disarmed.
///
/// This is what makes dropping a client without `close()` leave no process behind. A
/// runtime's kill-on-drop (tokio's `kill_on_drop`) only kills the direct child; a server
/// started through a launcher (`npx` starting `node`, `uv run` starting `python`) leaves the
/// real server running as an orphan. The guard kills every process in the group instead.
///
/// Arm it right after spawning, with the child's pid (its pgid). Call
/// [`ProcessGroupGuard::disarm`] only when the group should outlive us.
///
/// Dropping the guard after the leader has been reaped still signals the group, which is
/// what catches grandchildren left behind by a leader that exited on its own. If by then the
/// group is empty, the pgid could in principle have been reused by an unrelated new group;
/// that needs the pid space to wrap around in the meantime, so drop the guard promptly once
/// the child is gone.
#[derive(Debug)]
pub struct ProcessGroupGuard {
    pgid: u32,
    armed: bool,
}

impl ProcessGroupGuard {
    /// A guard for process group `pgid` (the group leader's pid), armed.
    ///
    /// # Errors
    ///
    /// The same `InvalidInput` cases as [`signal_group`]: a guard that could kill us, or
    /// everything, is refused up front rather than at drop time.
    pub fn new(pgid: u32) -> io::Result<Self> {
        checked_pgid(pgid)?;
        Ok(Self { pgid, armed: true })
    }

    /// The process group this guard owns.
    pub fn pgid(&self) -> u32 {
        self.pgid
    }

    /// Whether dropping the guard will kill the group.
    pub fn is_armed(&self) -> bool {
        self.armed
    }

    /// Sends `signal` to the group now; the guard stays as it is.
    ///
    /// # Errors
    ///
    /// As for [`signal_group`].
    pub fn signal(&self, signal: Signal) -> io::Result<SignalOutcome> {
        signal_group(self.pgid, signal)
    }

    /// Gives up ownership: dropping the guard will no longer signal the group.
    pub fn disarm(&mut self) {
        self.armed = false;
    }
}

impl Drop for ProcessGroupGuard {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        match signal_group(self.pgid, Signal::Kill) {
            Ok(SignalOutcome::Sent) => {
                tracing::debug!(pgid = self.pgid, "killed process group on drop");
            }
            Ok(SignalOutcome::AlreadyGone) => {}
            Err(e) => {
                tracing::warn!(pgid = self.pgid, error = %e, "could not kill process group on drop");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_process_group_is_read_past_a_command_name_with_parentheses() {
        let stat = "4242 (we (ird) name) S 4000 4100 4100 34816 4242 4194560 115 0 0 0";
        assert_eq!(super::stat_pgrp(stat), Some(4100));
        // A group whose leader is outside our pid namespace has no id here.
        let outside = "5 (mcp) S 0 0 0 0 -1 4194560";
        assert_eq!(
            super::stat_pgrp(outside).and_then(rustix::process::Pid::from_raw),
            None
        );
        assert_eq!(super::stat_pgrp("garbage"), None);
    }

    use super::*;

    #[test]
    fn refuses_pgids_that_would_hit_more_than_a_child() {
        for pgid in [0, 1, u32::MAX, i32::MAX as u32 + 1] {
            let err = signal_group(pgid, Signal::Term).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "pgid {pgid}");
            assert!(ProcessGroupGuard::new(pgid).is_err(), "pgid {pgid}");
        }
    }

    #[test]
    fn refuses_our_own_group() {
        let own = own_pgid()
            .expect("a test runs in a process group with an id")
            .as_raw_nonzero()
            .get() as u32;
        let err = signal_group(own, Signal::Kill).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert!(ProcessGroupGuard::new(own).is_err());
    }

    #[test]
    fn disarm_is_remembered() {
        // A pgid that is valid but (almost certainly) unused: nothing is signalled either way.
        let mut guard = ProcessGroupGuard::new(i32::MAX as u32).unwrap();
        assert!(guard.is_armed());
        assert_eq!(guard.pgid(), i32::MAX as u32);
        guard.disarm();
        assert!(!guard.is_armed());
    }

    #[test]
    fn empty_group_is_already_gone() {
        // pid_max is at most 2^22 on Linux and 99998 on macOS, so no group has this id.
        assert_eq!(
            signal_group(i32::MAX as u32, Signal::Term).unwrap(),
            SignalOutcome::AlreadyGone
        );
    }
}
