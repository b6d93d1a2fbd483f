//! The child-process shutdown schedule, as a pure policy.
//!
//! MCP's stdio transport shuts a server down in three steps: close the child's stdin and
//! wait; send `SIGTERM` and wait; send `SIGKILL`. [`ShutdownSchedule`] decides which step comes
//! next and when; the adapter executes the [`ShutdownAction`]s, sleeps until
//! [`poll_timeout`](ShutdownSchedule::poll_timeout), and reports the child's exit.
//!
//! The schedule needs a running client. A host should run it for every way it is asked to stop
//! (`close`, Ctrl-C, `SIGTERM`, `SIGHUP`: the `mcp` command does). For a client that dies
//! without running it (`SIGKILL`, a crash) the policy is: the server's whole process group is
//! killed at once with `SIGKILL`, there being no one left to wait for it. The adapters enforce
//! that floor outside the process (`mcp-driver`'s `process` module: a parent-death signal on
//! Linux, a group watchdog on every Unix).

use crate::time::{Duration, Instant, saturating_add};

/// How long each step of the shutdown may take before the next, harsher one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShutdownConfig {
    /// How long to wait after closing stdin before `SIGTERM`. Default 2 s.
    ///
    /// Well-behaved servers exit on stdin EOF within milliseconds.
    pub stdin_grace: Duration,
    /// How long to wait after `SIGTERM` before `SIGKILL`. Default 2 s.
    pub term_grace: Duration,
}

impl Default for ShutdownConfig {
    fn default() -> Self {
        Self {
            stdin_grace: Duration::from_secs(2),
            term_grace: Duration::from_secs(2),
        }
    }
}

/// One step the adapter must execute, in the order [`ShutdownSchedule::poll_action`] gives them.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ShutdownAction {
    /// Close the write end of the child's stdin, so the server reads EOF.
    CloseStdin,
    /// Send `SIGTERM` to the child's whole process group.
    TerminateGroup,
    /// Send `SIGKILL` to the child's whole process group. Errors such as `ESRCH` (the group
    /// is already empty) are expected and can be ignored.
    KillGroup,
}

/// Where the escalation stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Stdin is (to be) closed; `SIGTERM` is due at the deadline.
    StdinClosed { deadline: Instant },
    /// `SIGTERM` is (to be) sent; `SIGKILL` is due at the deadline.
    Terminated { deadline: Instant },
    /// `SIGKILL` is (to be) sent; only the child's exit is still awaited.
    Killed,
    /// The direct child has exited.
    Exited,
}

/// Bits of `ShutdownSchedule::pending`, lowest first in emission order.
const CLOSE_STDIN: u8 = 1;
const TERMINATE: u8 = 2;
const KILL: u8 = 4;

/// The stdio shutdown policy: which signal to send when.
///
/// ```text
///            new(now)
///               │  CloseStdin
///               ▼
///         ┌─────────────┐  stdin_grace elapsed  ┌────────────┐  term_grace elapsed  ┌────────┐
///         │ StdinClosed │ ────────────────────▶ │ Terminated │ ───────────────────▶ │ Killed │
///         └─────────────┘   TerminateGroup      └────────────┘      KillGroup       └────────┘
///               │                                     │                                 │
///               │ child exited: KillGroup             │ child exited: KillGroup         │ child exited
///               ▼                                     ▼                                 ▼
///         ┌──────────────────────────────────────────────────────────────────────────────────┐
///         │ Exited (done once every action has been polled)                                 │
///         └──────────────────────────────────────────────────────────────────────────────────┘
/// ```
///
/// # Use
///
/// 1. Create it when the session is closed (or the host asks for shutdown), with the time.
/// 2. After `new` and after every `handle_*` call, drain [`poll_action`](Self::poll_action)
///    and execute each action, then sleep until [`poll_timeout`](Self::poll_timeout) (or until
///    the child exits, whichever comes first).
/// 3. Call [`handle_timeout`](Self::handle_timeout) when the deadline passes and
///    [`handle_child_exited`](Self::handle_child_exited) when the direct child has been reaped.
/// 4. Stop when [`is_done`](Self::is_done).
///
/// # Guarantees
///
/// - Actions come out in escalation order, each at most once: `CloseStdin` first, then
///   `TerminateGroup`, then `KillGroup`. `TerminateGroup` never comes after the child exited.
/// - Once the direct child exits, any processes left in its group are orphans (for example a
///   shell wrapper's grandchildren), so the schedule asks for one `KillGroup` unless it has
///   already done so, and is then done. Send it promptly: a process group id is not reused
///   while members remain, so the signal reaches exactly those orphans.
/// - After `handle_timeout(now)`, `poll_timeout()` is `None` or later than `now`: every step
///   whose deadline has passed is decided in that one call (zero graces escalate at once).
/// - After `KillGroup` there is no further deadline: `SIGKILL` cannot be caught, so the adapter
///   waits for the exit and reaps the child. The schedule is only done once that exit has been
///   reported, so that no child is left a zombie.
#[derive(Debug, Clone)]
pub struct ShutdownSchedule {
    config: ShutdownConfig,
    phase: Phase,
    /// Actions decided but not yet handed out (a set of the bit constants above).
    pending: u8,
    /// Whether `KillGroup` has been decided, so it is asked for at most once.
    kill_decided: bool,
}

impl ShutdownSchedule {
    /// Starts the shutdown at `now`: the first action is [`ShutdownAction::CloseStdin`], and
    /// `SIGTERM` is due `config.stdin_grace` later.
    pub fn new(config: ShutdownConfig, now: Instant) -> Self {
        Self {
            config,
            phase: Phase::StdinClosed {
                deadline: saturating_add(now, config.stdin_grace),
            },
            pending: CLOSE_STDIN,
            kill_decided: false,
        }
    }

    /// The next action to execute, if any. Call until `None` after `new` and after every
    /// `handle_*` call.
    #[must_use]
    pub fn poll_action(&mut self) -> Option<ShutdownAction> {
        let (bit, action) = [
            (CLOSE_STDIN, ShutdownAction::CloseStdin),
            (TERMINATE, ShutdownAction::TerminateGroup),
            (KILL, ShutdownAction::KillGroup),
        ]
        .into_iter()
        .find(|(bit, _)| self.pending & bit != 0)?;
        self.pending &= !bit;
        Some(action)
    }

    /// When [`handle_timeout`](Self::handle_timeout) must next be called, or `None` if no
    /// deadline is armed (after `KillGroup`, or once the child has exited).
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        match self.phase {
            Phase::StdinClosed { deadline } | Phase::Terminated { deadline } => Some(deadline),
            Phase::Killed | Phase::Exited => None,
        }
    }

    /// Escalates every step whose deadline is at or before `now`. Calling it early, or after
    /// the child has exited, is a no-op.
    pub fn handle_timeout(&mut self, now: Instant) {
        loop {
            match self.phase {
                Phase::StdinClosed { deadline } if deadline <= now => {
                    self.pending |= TERMINATE;
                    self.phase = Phase::Terminated {
                        deadline: saturating_add(now, self.config.term_grace),
                    };
                }
                Phase::Terminated { deadline } if deadline <= now => {
                    self.decide_kill();
                    self.phase = Phase::Killed;
                }
                _ => return,
            }
        }
    }

    /// Reports that the direct child has exited and been reaped.
    ///
    /// Unless `KillGroup` was already decided, the schedule asks for it once (for orphans
    /// left in the group); a `TerminateGroup` not yet handed out is dropped. Reporting the exit
    /// again is a no-op.
    pub fn handle_child_exited(&mut self, _now: Instant) {
        if self.phase == Phase::Exited {
            return;
        }
        self.phase = Phase::Exited;
        self.pending &= !TERMINATE;
        self.decide_kill();
    }

    /// Whether the shutdown is complete: the child's exit has been reported and every action
    /// has been handed out.
    pub fn is_done(&self) -> bool {
        self.phase == Phase::Exited && self.pending == 0
    }

    fn decide_kill(&mut self) {
        if !self.kill_decided {
            self.kill_decided = true;
            self.pending |= KILL;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ShutdownAction::*;
    use proptest::prelude::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn drain(s: &mut ShutdownSchedule) -> Vec<ShutdownAction> {
        std::iter::from_fn(|| s.poll_action()).collect()
    }

    fn schedule() -> (ShutdownSchedule, Instant) {
        let t0 = Instant::now();
        (ShutdownSchedule::new(ShutdownConfig::default(), t0), t0)
    }

    #[test]
    fn default_graces_are_two_seconds() {
        let c = ShutdownConfig::default();
        assert_eq!(c.stdin_grace, Duration::from_secs(2));
        assert_eq!(c.term_grace, Duration::from_secs(2));
    }

    #[test]
    fn child_exits_after_stdin_close() {
        let (mut s, t0) = schedule();
        assert_eq!(drain(&mut s), [CloseStdin]);
        assert_eq!(s.poll_timeout(), Some(t0 + ms(2000)));
        assert!(!s.is_done());

        s.handle_child_exited(t0 + ms(10));
        assert!(
            !s.is_done(),
            "the orphan KillGroup is still to be handed out"
        );
        assert_eq!(drain(&mut s), [KillGroup]);
        assert!(s.is_done());
        assert_eq!(s.poll_timeout(), None);
    }

    #[test]
    fn child_needs_sigterm() {
        let (mut s, t0) = schedule();
        assert_eq!(drain(&mut s), [CloseStdin]);
        s.handle_timeout(t0 + ms(2000));
        assert_eq!(drain(&mut s), [TerminateGroup]);
        assert_eq!(s.poll_timeout(), Some(t0 + ms(4000)));

        s.handle_child_exited(t0 + ms(2100));
        assert_eq!(drain(&mut s), [KillGroup]);
        assert!(s.is_done());
        assert_eq!(s.poll_timeout(), None);
    }

    #[test]
    fn child_needs_sigkill() {
        let (mut s, t0) = schedule();
        assert_eq!(drain(&mut s), [CloseStdin]);
        s.handle_timeout(t0 + ms(2000));
        assert_eq!(drain(&mut s), [TerminateGroup]);
        s.handle_timeout(t0 + ms(4000));
        assert_eq!(drain(&mut s), [KillGroup]);
        assert_eq!(s.poll_timeout(), None);
        assert!(!s.is_done(), "done only once the exit is reported");

        // The group was already killed: no second KillGroup.
        s.handle_child_exited(t0 + ms(4001));
        assert_eq!(drain(&mut s), []);
        assert!(s.is_done());
    }

    #[test]
    fn term_deadline_counts_from_when_the_timeout_was_handled() {
        let (mut s, t0) = schedule();
        let _ = drain(&mut s);
        s.handle_timeout(t0 + ms(2500));
        assert_eq!(drain(&mut s), [TerminateGroup]);
        assert_eq!(s.poll_timeout(), Some(t0 + ms(4500)));
    }

    #[test]
    fn exit_reported_before_any_action_was_polled() {
        let (mut s, t0) = schedule();
        s.handle_child_exited(t0);
        assert_eq!(drain(&mut s), [CloseStdin, KillGroup]);
        assert!(s.is_done());
    }

    #[test]
    fn exit_drops_an_unpolled_sigterm() {
        let (mut s, t0) = schedule();
        let _ = drain(&mut s);
        s.handle_timeout(t0 + ms(2000));
        s.handle_child_exited(t0 + ms(2000));
        assert_eq!(drain(&mut s), [KillGroup]);
        assert!(s.is_done());
    }

    #[test]
    fn exit_reported_twice_is_a_no_op() {
        let (mut s, t0) = schedule();
        let _ = drain(&mut s);
        s.handle_child_exited(t0 + ms(1));
        assert_eq!(drain(&mut s), [KillGroup]);
        s.handle_child_exited(t0 + ms(2));
        s.handle_timeout(t0 + ms(10_000));
        assert_eq!(drain(&mut s), []);
        assert!(s.is_done());
    }

    #[test]
    fn early_timeouts_are_no_ops() {
        let (mut s, t0) = schedule();
        let _ = drain(&mut s);
        s.handle_timeout(t0);
        s.handle_timeout(t0 + ms(1999));
        assert_eq!(drain(&mut s), []);
        assert_eq!(s.poll_timeout(), Some(t0 + ms(2000)));

        s.handle_timeout(t0 + ms(2000));
        assert_eq!(drain(&mut s), [TerminateGroup]);
        s.handle_timeout(t0 + ms(3999));
        assert_eq!(drain(&mut s), []);
        assert_eq!(s.poll_timeout(), Some(t0 + ms(4000)));
    }

    #[test]
    fn a_late_timeout_decides_every_overdue_step() {
        let t0 = Instant::now();
        let config = ShutdownConfig {
            stdin_grace: ms(100),
            term_grace: Duration::ZERO,
        };
        let mut s = ShutdownSchedule::new(config, t0);
        s.handle_timeout(t0 + ms(100));
        assert_eq!(drain(&mut s), [CloseStdin, TerminateGroup, KillGroup]);
        assert_eq!(s.poll_timeout(), None);
    }

    #[test]
    fn huge_graces_do_not_overflow() {
        let t0 = Instant::now();
        let config = ShutdownConfig {
            stdin_grace: Duration::MAX,
            term_grace: Duration::MAX,
        };
        let mut s = ShutdownSchedule::new(config, t0);
        let deadline = s.poll_timeout().expect("armed");
        assert!(deadline > t0);
        s.handle_timeout(deadline);
        // The deadline saturated at the latest representable instant, so both graces end
        // there: no overflow, and the escalation keeps its order.
        let actions = drain(&mut s);
        assert!(
            actions.starts_with(&[CloseStdin, TerminateGroup]),
            "{actions:?}"
        );
        assert!(s.poll_timeout().is_none_or(|t| t >= deadline));
    }

    #[derive(Debug, Clone)]
    enum Op {
        Advance(u64),
        Timeout,
        Exit,
        Poll,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0u64..3000).prop_map(Op::Advance),
            Just(Op::Timeout),
            Just(Op::Exit),
            Just(Op::Poll),
        ]
    }

    proptest! {
        #[test]
        fn invariants_hold_for_any_call_sequence(
            stdin_grace in 0u64..3000,
            term_grace in 0u64..3000,
            ops in prop::collection::vec(op(), 0..30),
        ) {
            let t0 = Instant::now();
            let config = ShutdownConfig { stdin_grace: ms(stdin_grace), term_grace: ms(term_grace) };
            let mut s = ShutdownSchedule::new(config, t0);
            let mut now = t0;
            let mut actions = Vec::new();
            let mut exited = false;
            for op in ops {
                match op {
                    Op::Advance(d) => now += ms(d),
                    Op::Timeout => {
                        s.handle_timeout(now);
                        if let Some(t) = s.poll_timeout() {
                            prop_assert!(t > now);
                        }
                    }
                    Op::Exit => {
                        s.handle_child_exited(now);
                        exited = true;
                        prop_assert_eq!(s.poll_timeout(), None);
                    }
                    Op::Poll => {
                        while let Some(a) = s.poll_action() {
                            prop_assert!(
                                !(exited && a == TerminateGroup),
                                "TerminateGroup after exit"
                            );
                            actions.push(a);
                        }
                    }
                }
            }
            actions.extend(drain(&mut s));
            // In escalation order, each at most once, and CloseStdin always first.
            let rank = |a: &ShutdownAction| match a {
                CloseStdin => 0,
                TerminateGroup => 1,
                KillGroup => 2,
            };
            prop_assert_eq!(actions.first(), Some(&CloseStdin));
            prop_assert!(actions.windows(2).all(|w| rank(&w[0]) < rank(&w[1])), "{:?}", actions);
            prop_assert_eq!(s.is_done(), exited);
            if exited {
                prop_assert_eq!(actions.last(), Some(&KillGroup));
            }
        }
    }
}
