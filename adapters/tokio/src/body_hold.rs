//! The HTTP server's share of the core's [`BodyBudget`]: one budget for every connection,
//! and a guard per body being read that asks it before the body's buffer grows and gives
//! back what the buffer held when it is dropped, on every path (handed to the service,
//! broken off, timed out, refused, the connection's task dropped).

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use mcp_driver::mcp_proto::server::http::{BodyBudget, Refusal};

/// The budget every connection of one server shares.
#[derive(Clone, Debug)]
pub(crate) struct SharedBudget(Arc<Mutex<Budgeted>>);

#[derive(Debug)]
struct Budgeted {
    budget: BodyBudget,
    /// Whether a hold was refused since the bodies last held half the budget or less: the
    /// log says so once per run of refusals, not for each of the many bodies refused while
    /// others grow into what is freed.
    refusing: bool,
}

impl SharedBudget {
    pub(crate) fn new(budget: BodyBudget) -> Self {
        SharedBudget(Arc::new(Mutex::new(Budgeted {
            budget,
            refusing: false,
        })))
    }

    /// What the bodies being read hold now, in bytes.
    pub(crate) fn held(&self) -> usize {
        self.lock().budget.held()
    }

    /// A guard for one body, holding nothing yet.
    pub(crate) fn body(&self) -> BodyHold {
        BodyHold {
            budget: self.clone(),
            held: 0,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Budgeted> {
        // Nothing panics while the lock is held (counting only), so a poisoned lock still
        // holds a consistent count.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// What one body's buffer holds of the budget; released when dropped.
#[derive(Debug)]
pub(crate) struct BodyHold {
    budget: SharedBudget,
    held: usize,
}

impl BodyHold {
    /// The body's buffer is to grow by `bytes`: the core's refusal when the bodies being
    /// read would then hold more than the budget (nothing is counted then).
    pub(crate) fn grow(&mut self, bytes: usize) -> Result<(), Refusal> {
        let mut shared = self.budget.lock();
        match shared.budget.hold(bytes) {
            Ok(()) => {
                self.held += bytes;
                Ok(())
            }
            Err(refusal) => {
                if !std::mem::replace(&mut shared.refusing, true) {
                    tracing::warn!(
                        "the request bodies being received hold {} of {} bytes, the most this \
                         server holds at once: a body that needs more gets 503 until others \
                         complete",
                        shared.budget.held(),
                        shared.budget.limit()
                    );
                }
                Err(refusal)
            }
        }
    }
}

impl Drop for BodyHold {
    fn drop(&mut self) {
        if self.held > 0 {
            let mut shared = self.budget.lock();
            shared.budget.release(self.held);
            if shared.budget.held() <= shared.budget.limit() / 2 {
                shared.refusing = false;
            }
        }
    }
}
