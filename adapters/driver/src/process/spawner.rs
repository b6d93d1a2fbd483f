//! The one long-lived thread that starts every stdio server.
//!
//! On Linux a server gets a parent-death signal (see [`super::StdioCommand::to_command`]),
//! and the kernel sends it when the *thread* that forked the server ends, not the process.
//! Servers started from a runtime's worker or blocking threads (which come and go) would be
//! killed when that thread retires. So every spawn runs here instead: one thread, started on
//! first use and never ended, so the signal comes only when the whole client process dies.

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::OnceLock;
use std::sync::mpsc::{SendError, Sender, channel, sync_channel};
use std::thread;

type Job = Box<dyn FnOnce() + Send>;

/// The spawner thread's queue; `None` when the thread could not be started.
static QUEUE: OnceLock<Option<Sender<Job>>> = OnceLock::new();

fn queue() -> Option<&'static Sender<Job>> {
    QUEUE
        .get_or_init(|| {
            let (tx, rx) = channel::<Job>();
            let started = thread::Builder::new()
                .name("mcp-stdio-spawner".into())
                .spawn(move || {
                    // Lives as long as the process: the queue's sender is never dropped.
                    for job in rx {
                        job();
                    }
                });
            match started {
                Ok(_) => Some(tx),
                Err(e) => {
                    tracing::warn!(error = %e, "no spawner thread: stdio servers are started from the calling thread");
                    None
                }
            }
        })
        .as_ref()
}

/// Runs `spawn` on the spawner thread and returns its result; blocks the caller for as long
/// as the spawn takes (a fork and exec, as spawning on the caller's thread would). A panic in
/// `spawn` is resumed in the caller; the spawner thread survives it.
///
/// Runs `spawn` on the calling thread when the spawner thread cannot be started, so a spawn
/// never fails for that reason (the parent-death signal then follows the calling thread).
pub(crate) fn run<T: Send + 'static>(spawn: impl FnOnce() -> T + Send + 'static) -> T {
    let Some(queue) = queue() else {
        return spawn();
    };
    let (done, result) = sync_channel(1);
    let job: Job = Box::new(move || {
        // The caller waits on `result` until this is sent, so it cannot have gone.
        let _ = done.send(catch_unwind(AssertUnwindSafe(spawn)));
    });
    let sent = queue.send(job);
    if let Err(SendError(job)) = sent {
        // Only if the spawner thread ended, which it never does on its own.
        job();
    }
    match result.recv() {
        Ok(Ok(value)) => value,
        Ok(Err(panic)) => resume_unwind(panic),
        // The queued job was dropped unrun: the spawner thread is going away with the process.
        Err(_) => panic!("the stdio spawner thread is gone (the process is exiting)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_every_job_on_one_thread_that_outlives_its_callers() {
        let here = thread::current().id();
        let first = run(|| thread::current().id());
        let second = thread::spawn(|| run(|| thread::current().id()))
            .join()
            .unwrap();
        assert_ne!(first, here);
        assert_eq!(first, second, "one spawner thread");
        assert_eq!(
            run(|| thread::current().name().map(str::to_owned)).as_deref(),
            Some("mcp-stdio-spawner")
        );
    }

    #[test]
    fn a_panicking_job_panics_its_caller_and_the_thread_survives() {
        let caught = std::panic::catch_unwind(|| run(|| panic!("boom")));
        assert!(caught.is_err());
        assert_eq!(run(|| 7), 7);
    }
}
