//! The group watchdog: ends a stdio server's whole process group when the client process
//! dies without shutting it down (SIGKILL, a crash, an abort): SIGTERM first, SIGKILL
//! [`KILL_GRACE_SECS`] later.
//!
//! The parent-death signal (Linux) reaches only the server's direct child; a launcher's
//! children (`npx` -> `node`, `uv run` -> `python`, `sh -c` wrappers) stay in the group and
//! would be re-parented to init and live on. The watchdog is a tiny `/bin/sh` loop started
//! next to each server, in its own process group (so a terminal's Ctrl-C does not reach it),
//! that blocks reading a pipe whose only write end the client holds. When the client process
//! ends, however it ends, the kernel closes that end, the read returns, and the watchdog sends
//! SIGTERM to the server's process group, waits [`KILL_GRACE_SECS`] and sends SIGKILL. The
//! grace lets a server that handles SIGTERM clean up (`mcp bridge --url` cancels its running
//! calls upstream and ends its remote session); one that ignores SIGTERM still dies. If the
//! group is already gone when the pipe closes, the watchdog exits at once. It works on every
//! Unix (macOS included), needs no help from the dying process, and costs one idle shell per
//! stdio server.
//!
//! The watchdog is forked by a short-lived outer shell, which is reaped at once: the watchdog
//! itself is re-parented to init and is never a child of the client (no zombie to reap).
//! Dropping the [`Watchdog`] closes the write end too; [`StdioChild`](super::StdioChild) does
//! that after it has killed the group itself, so the watchdog then finds nothing to kill.

use std::io::{self, PipeWriter};
use std::os::unix::process::CommandExt as _;
use std::process::{Command, Stdio};

/// Seconds between the watchdog's SIGTERM and its SIGKILL to the server's group.
///
/// Long enough for a server that handles SIGTERM to send a cancellation or a session DELETE
/// over a live connection, short enough that a stuck one does not linger.
pub(crate) const KILL_GRACE_SECS: u32 = 2;

/// Waits on fd 3 (the pipe, moved off stdin: a background job's stdin is `/dev/null`), then
/// sends SIGTERM to the group named by `$1` and, `$2` seconds later, SIGKILL. A failed
/// SIGTERM means the group is gone (the client shut it down itself), so nothing is left to
/// wait for. Ignores the signals a terminal sends.
const SCRIPT: &str = r#"exec 3<&0 </dev/null
(trap '' HUP INT QUIT TSTP; read _ <&3; kill -s TERM -- "-$1" || exit 0; sleep "$2"; kill -s KILL -- "-$1") >/dev/null 2>&1 &"#;

/// The client's end of a group watchdog: dropping it (or the client process dying) ends the
/// server's process group (SIGTERM, then SIGKILL after [`KILL_GRACE_SECS`]).
#[derive(Debug)]
pub(crate) struct Watchdog {
    _alive: PipeWriter,
}

impl Watchdog {
    /// Starts a watchdog for process group `pgid` and waits until it is in place.
    ///
    /// # Errors
    ///
    /// `/bin/sh` could not be started or failed; the server then runs without a watchdog.
    pub(crate) fn start(pgid: u32) -> io::Result<Self> {
        let (read, write) = io::pipe()?;
        // Both pipe ends are close-on-exec: no server and no other child inherits the write
        // end, so only this client's death (or drop) ends the read.
        let status = Command::new("/bin/sh")
            .args([
                "-c",
                SCRIPT,
                "mcp-group-watchdog",
                &pgid.to_string(),
                &KILL_GRACE_SECS.to_string(),
            ])
            .stdin(Stdio::from(read))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .status()?;
        if !status.success() {
            return Err(io::Error::other(format!(
                "the watchdog shell failed: {status}"
            )));
        }
        Ok(Self { _alive: write })
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::io::{BufRead as _, BufReader};
    use std::time::{Duration, Instant};

    use super::*;

    fn alive(pid: u32) -> bool {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            return false;
        };
        let state = stat[stat.rfind(')').unwrap() + 1..]
            .trim_start()
            .chars()
            .next();
        state != Some('Z')
    }

    fn eventually(mut cond: impl FnMut() -> bool) -> bool {
        // An anti-hang guard, not a timing assertion.
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if cond() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        cond()
    }

    fn exit_signal(status: std::process::ExitStatus) -> Option<i32> {
        std::os::unix::process::ExitStatusExt::signal(&status)
    }

    #[test]
    fn closing_the_write_end_terminates_the_whole_group_grandchildren_included() {
        let mut leader = Command::new("sh")
            .args(["-c", "sleep 300 & echo $!; exec sleep 300"])
            .stdout(Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(leader.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let grandchild: u32 = line.trim().parse().unwrap();
        let watchdog = Watchdog::start(leader.id()).unwrap();
        assert!(alive(grandchild));
        assert!(leader.try_wait().unwrap().is_none());
        drop(watchdog);
        // `sleep` does not handle SIGTERM, so the first signal already ends it.
        assert_eq!(exit_signal(leader.wait().unwrap()), Some(15));
        assert!(eventually(|| !alive(grandchild)), "grandchild alive");
    }

    #[test]
    fn a_server_that_handles_sigterm_gets_to_clean_up() {
        let marker = std::env::temp_dir().join(format!(
            "mcp-watchdog-test-{}-cleaned-up",
            std::process::id()
        ));
        let _ = std::fs::remove_file(&marker);
        // The trap runs once the foreground `sleep` (same group, so also terminated) ends.
        let mut leader = Command::new("sh")
            .args([
                "-c",
                r#"trap 'echo done > "$1"; exit 0' TERM; echo ready; sleep 300 & wait"#,
                "server",
                marker.to_str().unwrap(),
            ])
            .stdout(Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(leader.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line, "ready\n");
        drop(Watchdog::start(leader.id()).unwrap());
        assert!(leader.wait().unwrap().success());
        let written = std::fs::read_to_string(&marker);
        let _ = std::fs::remove_file(&marker);
        assert_eq!(written.unwrap(), "done\n");
    }

    #[test]
    fn a_server_that_ignores_sigterm_is_killed_after_the_grace() {
        // An ignored signal stays ignored across exec: this `sleep` survives SIGTERM.
        let mut leader = Command::new("sh")
            .args(["-c", "trap '' TERM; echo ready; exec sleep 300"])
            .stdout(Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(leader.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        drop(Watchdog::start(leader.id()).unwrap());
        assert_eq!(exit_signal(leader.wait().unwrap()), Some(9));
    }
}
