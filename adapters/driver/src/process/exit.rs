//! Human-readable descriptions of how a child ended, for error messages and logs.

use std::os::unix::process::ExitStatusExt as _;
use std::process::ExitStatus;

use rustix::process::Signal;

/// Describes `status` for a person: `"exited with status 1"`,
/// `"killed by signal 9 (SIGKILL)"`, `"killed by signal 11 (SIGSEGV, core dumped)"`.
///
/// Use it in the error a client reports when a server goes away. Unknown signal numbers
/// (real-time signals) are given by number only.
pub fn describe_exit(status: ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("exited with status {code}");
    }
    if let Some(sig) = status.signal() {
        let core = if status.core_dumped() {
            ", core dumped"
        } else {
            ""
        };
        return match signal_name(sig) {
            Some(name) => format!("killed by signal {sig} ({name}{core})"),
            None if core.is_empty() => format!("killed by signal {sig}"),
            None => format!("killed by signal {sig} (core dumped)"),
        };
    }
    if let Some(sig) = status.stopped_signal() {
        return format!("stopped by signal {sig}");
    }
    // Neither exited nor signalled (a `continued` report): std's own wording is all we have.
    status.to_string()
}

/// The conventional name (`"SIGTERM"`) of signal number `signal` on this platform, or
/// `None` for numbers without a portable name.
pub fn signal_name(signal: i32) -> Option<&'static str> {
    const NAMES: &[(Signal, &str)] = &[
        (Signal::HUP, "SIGHUP"),
        (Signal::INT, "SIGINT"),
        (Signal::QUIT, "SIGQUIT"),
        (Signal::ILL, "SIGILL"),
        (Signal::TRAP, "SIGTRAP"),
        (Signal::ABORT, "SIGABRT"),
        (Signal::BUS, "SIGBUS"),
        (Signal::FPE, "SIGFPE"),
        (Signal::KILL, "SIGKILL"),
        (Signal::USR1, "SIGUSR1"),
        (Signal::SEGV, "SIGSEGV"),
        (Signal::USR2, "SIGUSR2"),
        (Signal::PIPE, "SIGPIPE"),
        (Signal::ALARM, "SIGALRM"),
        (Signal::TERM, "SIGTERM"),
        (Signal::CHILD, "SIGCHLD"),
        (Signal::CONT, "SIGCONT"),
        (Signal::STOP, "SIGSTOP"),
        (Signal::TSTP, "SIGTSTP"),
        (Signal::TTIN, "SIGTTIN"),
        (Signal::TTOU, "SIGTTOU"),
        (Signal::URG, "SIGURG"),
        (Signal::XCPU, "SIGXCPU"),
        (Signal::XFSZ, "SIGXFSZ"),
        (Signal::VTALARM, "SIGVTALRM"),
        (Signal::PROF, "SIGPROF"),
        (Signal::WINCH, "SIGWINCH"),
        (Signal::IO, "SIGIO"),
        (Signal::SYS, "SIGSYS"),
    ];
    NAMES
        .iter()
        .find(|(s, _)| s.as_raw() == signal)
        .map(|&(_, name)| name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes() {
        // A wait status encodes an exit code in bits 8..16.
        assert_eq!(
            describe_exit(ExitStatus::from_raw(1 << 8)),
            "exited with status 1"
        );
        assert_eq!(
            describe_exit(ExitStatus::from_raw(0)),
            "exited with status 0"
        );
    }

    #[test]
    fn signals() {
        assert_eq!(
            describe_exit(ExitStatus::from_raw(9)),
            "killed by signal 9 (SIGKILL)"
        );
        assert_eq!(
            describe_exit(ExitStatus::from_raw(15)),
            "killed by signal 15 (SIGTERM)"
        );
        // 0x80 is the core-dump flag.
        assert_eq!(
            describe_exit(ExitStatus::from_raw(11 | 0x80)),
            "killed by signal 11 (SIGSEGV, core dumped)"
        );
    }

    #[test]
    fn unnamed_signal_is_given_by_number() {
        // 40 is a real-time signal on Linux and out of range on macOS: unnamed on both.
        assert_eq!(signal_name(40), None);
        assert_eq!(
            describe_exit(ExitStatus::from_raw(40)),
            "killed by signal 40"
        );
    }

    #[test]
    fn names_follow_the_platform_numbers() {
        assert_eq!(signal_name(Signal::TERM.as_raw()), Some("SIGTERM"));
        assert_eq!(signal_name(Signal::USR1.as_raw()), Some("SIGUSR1"));
        assert_eq!(signal_name(0), None);
    }
}
