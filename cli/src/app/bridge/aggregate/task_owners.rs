//! `mcp bridge --config FILE --listen` (stateful): which HTTP session made each task, so that
//! a session does not see another's.
//!
//! The servers cannot tell the sessions apart (they share one connection per server), so the
//! bridge binds a task to the session whose task-augmented `tools/call` made it, by its
//! host-visible id: another session gets `-32602` `unknown task` for it (as for a task that
//! does not exist), does not find it in `tasks/list`, and is not sent its
//! `notifications/tasks/status`. A task the bridge has no owner for is every session's: one
//! made before the bridge started (its id kept by a host), or one forgotten because the table
//! holds at most [`MAX_OWNED`] tasks (the oldest go first). With `--stateless` every POST is
//! a session of its own, so tasks are not bound there.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, PoisonError};

/// The most tasks whose session is remembered.
pub const MAX_OWNED: usize = 4096;

/// The session (a router's number) of each task made through the bridge, by host-visible id.
#[derive(Default)]
pub struct TaskOwners {
    owners: Mutex<Owners>,
}

#[derive(Default)]
struct Owners {
    by_task: HashMap<String, u64>,
    /// The tasks in the order they were made, to forget the oldest.
    order: VecDeque<String>,
}

impl TaskOwners {
    /// Binds `task` (host-visible id) to `session`. Call when the session's call made it.
    pub fn record(&self, task: &str, session: u64) {
        let mut owners = self.owners.lock().unwrap_or_else(PoisonError::into_inner);
        if owners.by_task.insert(task.to_owned(), session).is_none() {
            owners.order.push_back(task.to_owned());
        }
        while owners.order.len() > MAX_OWNED {
            if let Some(oldest) = owners.order.pop_front() {
                owners.by_task.remove(&oldest);
            }
        }
    }

    /// Whether `session` may see `task` (host-visible id): its own, or one of no known session.
    pub fn visible(&self, task: &str, session: u64) -> bool {
        let owners = self.owners.lock().unwrap_or_else(PoisonError::into_inner);
        owners
            .by_task
            .get(task)
            .is_none_or(|owner| *owner == session)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_is_its_sessions_and_an_unknown_one_everybodys() {
        let owners = TaskOwners::default();
        owners.record("one/1", 7);
        assert!(owners.visible("one/1", 7));
        assert!(!owners.visible("one/1", 8));
        assert!(owners.visible("one/2", 8));
    }

    #[test]
    fn the_oldest_are_forgotten_past_the_bound() {
        let owners = TaskOwners::default();
        for n in 0..=MAX_OWNED {
            owners.record(&format!("s/{n}"), 1);
        }
        // The first one is forgotten (everybody's now); the last is still bound.
        assert!(owners.visible("s/0", 2));
        assert!(!owners.visible(&format!("s/{MAX_OWNED}"), 2));
        let kept = owners.owners.lock().expect("lock");
        assert_eq!(
            (kept.by_task.len(), kept.order.len()),
            (MAX_OWNED, MAX_OWNED)
        );
    }
}
