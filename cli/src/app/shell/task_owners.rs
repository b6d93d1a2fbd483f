//! Which task status notifications the shell prints.
//!
//! A `call` of a tool that the server runs as a task shows the task's status where progress
//! goes (`task working: ...`), as `mcp call` does; the same statuses also come as
//! `notifications/tasks/status`, which must not be printed a second time. The driver does
//! not say which call a task belongs to, so the shell decides by the task's id: a task first
//! heard of while a `call` line runs is that call's (the line is the only thing in the shell
//! that starts tasks), and stays the call's; any other task (first heard of between lines,
//! or during another command) is printed. A task started by a cancelled line whose first
//! status comes during a later `call` is counted as that call's: its news is hidden, which
//! costs nothing the cancelled line had not already reported.

use std::collections::HashSet;

/// How many task ids each side remembers; past that it starts afresh (bounded memory for a
/// server that invents ids), deciding a forgotten id again the next time it is heard of.
const REMEMBERED: usize = 4096;

/// The task ids seen in this session, by whether a call follows them.
#[derive(Debug, Default)]
pub struct TaskOwners {
    /// Tasks of `call` lines: their statuses are the call's status line.
    of_calls: HashSet<String>,
    /// Every other task: their statuses are printed.
    others: HashSet<String>,
}

impl TaskOwners {
    /// Whether a status notification about task `id` belongs to a call (and is not printed).
    /// `call_running`: a `call` line is running now. Call it for each status notification.
    pub fn belongs_to_a_call(&mut self, id: &str, call_running: bool) -> bool {
        if self.of_calls.contains(id) {
            return true;
        }
        if self.others.contains(id) {
            return false;
        }
        let side = if call_running {
            &mut self.of_calls
        } else {
            &mut self.others
        };
        if side.len() >= REMEMBERED {
            side.clear();
        }
        side.insert(id.to_owned());
        call_running
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_first_heard_of_during_a_call_stays_the_calls() {
        let mut owners = TaskOwners::default();
        assert!(owners.belongs_to_a_call("t1", true));
        // Its last status may come after the call's line ended: still the call's.
        assert!(owners.belongs_to_a_call("t1", false));
        // A task heard of between lines is printed, also during a later call.
        assert!(!owners.belongs_to_a_call("t2", false));
        assert!(!owners.belongs_to_a_call("t2", true));
    }

    #[test]
    fn memory_stays_bounded() {
        let mut owners = TaskOwners::default();
        for i in 0..3 * REMEMBERED {
            owners.belongs_to_a_call(&format!("t{i}"), i % 2 == 0);
        }
        assert!(owners.of_calls.len() <= REMEMBERED && owners.others.len() <= REMEMBERED);
    }
}
