//! [`PostQueue`]: the messages waiting for a POST slot, and the POSTs waiting to be sent again
//! after a 429 or 503 (`Retry-After`, clamped).

use std::collections::VecDeque;

use super::exchange::Purpose;
use crate::session::RequestHandle;
use crate::time::Instant;

/// A message waiting for a POST slot, or an exchange waiting to be re-issued (429 / 503).
#[derive(Debug)]
pub(crate) struct QueuedPost {
    pub(crate) body: Vec<u8>,
    pub(crate) purpose: Purpose,
    pub(crate) retries: u8,
    /// It is `notifications/initialized` (see `Exchange::initialized`).
    pub(crate) initialized: bool,
}

/// The POSTs not yet started: in order for a slot, and delayed until an instant.
#[derive(Debug, Default)]
pub(crate) struct PostQueue {
    queued: VecDeque<QueuedPost>,
    /// Answered 429 / 503: sent again at the instant.
    delayed: Vec<(Instant, QueuedPost)>,
}

impl PostQueue {
    /// How many wait for a slot (the delayed ones not counted).
    pub(crate) fn len(&self) -> usize {
        self.queued.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.queued.is_empty()
    }

    pub(crate) fn front(&self) -> Option<&QueuedPost> {
        self.queued.front()
    }

    pub(crate) fn pop_front(&mut self) -> Option<QueuedPost> {
        self.queued.pop_front()
    }

    pub(crate) fn push_back(&mut self, post: QueuedPost) {
        self.queued.push_back(post);
    }

    pub(crate) fn push_front(&mut self, post: QueuedPost) {
        self.queued.push_front(post);
    }

    /// Moves the first queued `initialize` to the front; whether there was one.
    pub(crate) fn initialize_first(&mut self) -> bool {
        let Some(i) = self
            .queued
            .iter()
            .position(|p| p.purpose == Purpose::Initialize)
        else {
            return false;
        };
        if let Some(p) = self.queued.remove(i) {
            self.queued.push_front(p);
        }
        true
    }

    /// Whether a queued `initialize` waits.
    pub(crate) fn has_initialize(&self) -> bool {
        self.queued.iter().any(|p| p.purpose == Purpose::Initialize)
    }

    /// Keeps the queued posts for which `keep` holds.
    pub(crate) fn retain(&mut self, keep: impl FnMut(&QueuedPost) -> bool) {
        self.queued.retain(keep);
    }

    /// Takes every queued post, in order.
    pub(crate) fn take_queued(&mut self) -> VecDeque<QueuedPost> {
        std::mem::take(&mut self.queued)
    }

    /// Sends `post` again at `at`.
    pub(crate) fn delay(&mut self, at: Instant, post: QueuedPost) {
        self.delayed.push((at, post));
    }

    /// Takes the delayed posts due at `now`.
    pub(crate) fn take_due(&mut self, now: Instant) -> Vec<QueuedPost> {
        let mut due = Vec::new();
        let mut i = 0;
        while i < self.delayed.len() {
            if now >= self.delayed[i].0 {
                due.push(self.delayed.swap_remove(i).1);
            } else {
                i += 1;
            }
        }
        due
    }

    /// Drops the delayed retries of request `handle`.
    pub(crate) fn forget_request(&mut self, handle: RequestHandle) {
        self.delayed
            .retain(|(_, p)| p.purpose != Purpose::Request(handle));
    }

    /// Drops every delayed retry.
    pub(crate) fn clear_delayed(&mut self) {
        self.delayed.clear();
    }

    /// When the next delayed retry is due.
    pub(crate) fn next_retry(&self) -> Option<Instant> {
        self.delayed.iter().map(|(at, _)| *at).min()
    }
}
