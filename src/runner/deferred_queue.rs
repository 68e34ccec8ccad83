//! The run's queue of deferred requests (deferred.rs): clients push what they queue, the
//! deferred worker takes it in order.

use super::program::ClientValues;
use super::Shared;
use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Instant;

/// A transaction a client queued.
pub(super) struct Request {
    pub tx: usize,
    /// The client's values as it queued the request.
    pub values: ClientValues,
    pub queued: Instant,
}

/// The run's queue of deferred requests. Its waker works across the workers' runtimes.
#[derive(Default)]
pub(crate) struct DeferredQueue {
    requests: Mutex<VecDeque<Request>>,
    notify: tokio::sync::Notify,
}

impl DeferredQueue {
    pub(super) fn push(&self, r: Request) {
        crate::lock(&self.requests).push_back(r);
        self.notify.notify_one();
    }

    /// Wakes the worker (the run stops).
    pub(super) fn wake(&self) {
        self.notify.notify_one();
    }

    /// Requests still queued: at the end of a run, never executed.
    pub(super) fn len(&self) -> u64 {
        crate::lock(&self.requests).len() as u64
    }

    /// The oldest request; `None` once the run stops (what is queued then stays queued).
    pub(super) async fn next(&self, shared: &Shared) -> Option<Request> {
        loop {
            if shared.stopping() {
                return None;
            }
            if let Some(r) = crate::lock(&self.requests).pop_front() {
                return Some(r);
            }
            // A push or a stop between the check and here left a permit: no wake is lost.
            self.notify.notified().await;
        }
    }

    /// Puts back a request taken but not executed (the run stopped at the warmup's end).
    pub(super) fn put_back(&self, r: Request) {
        crate::lock(&self.requests).push_front(r);
    }
}
