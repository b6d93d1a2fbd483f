//! Requests nobody waits for: the `tasks/cancel` a client sends when the caller of a task
//! is gone (its call dropped, the program stopping).

use std::borrow::Cow;

use serde_json::value::RawValue;

use super::{Era, Queued, Session, UsageError};

impl Session {
    /// Queues a request whose answer nobody waits for: it has a wire id but no handle and no
    /// pending entry, so it is encoded as it is when pulled, still goes out when
    /// [`close`](Self::close) follows at once (a request made with
    /// [`send_request`](Self::send_request) would be failed by the close before it is sent),
    /// and its answer, when it comes, is reported as an unknown response. Call it for a
    /// best-effort message to the server on the way out.
    ///
    /// # Errors
    ///
    /// [`UsageError::Closed`] on a closed session; [`UsageError::NotInEra`] in the discover
    /// era (whose requests need the per-request envelope: use `send_request` there). The
    /// outbound queue's own bound applies as to every message.
    pub fn send_detached_request(
        &mut self,
        method: Cow<'static, str>,
        params: Option<Box<RawValue>>,
    ) -> Result<(), UsageError> {
        if self.is_closed() {
            return Err(UsageError::Closed);
        }
        if self.era() != Some(Era::Initialize) {
            return Err(UsageError::NotInEra {
                method: method.into_owned(),
                era: Era::Discover,
            });
        }
        let wire = self.next_id;
        self.next_id += 1;
        self.outbound.push_back(Queued::Detached {
            wire,
            method,
            params,
        });
        Ok(())
    }
}
