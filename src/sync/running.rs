//! Which handler the progress thread is calling, so that a blocking
//! deregistration can return without a round trip through that thread.
//!
//! The progress thread announces a handler ([`Running::announce`], SeqCst,
//! then a full fence) before it checks that the handler is alive, and
//! clears the announcement once the call returned. A deregistering thread
//! kills the handler, then ([`Running::wait_while_calling`]) a full fence,
//! then reads the announcement: one of the two sees the other's write, so
//! either the progress thread sees the handler dead and never calls it, or
//! the deregistering thread sees it announced and waits until the call
//! returned. Either way no call of the handler starts after the
//! deregistration returns.

use super::atomic::{AtomicU32, AtomicU64, Ordering};
use super::futex::{self, Scope};
use super::shared::fence_seqcst;
use std::time::Duration;

/// The handler being called (0: none), and the wake-up of those waiting
/// for its call to return.
#[derive(Default)]
pub struct Running {
    current: AtomicU64,
    /// Threads in [`Running::wait_while_calling`].
    waiters: AtomicU32,
    /// Bumped on each clear that a waiter may need (a futex word).
    cleared: AtomicU32,
}

impl Running {
    /// The progress thread is about to check handler `id`'s liveness and
    /// call it.
    pub fn announce(&self, id: u64) {
        self.current.store(id, Ordering::SeqCst);
        fence_seqcst();
    }

    /// The call announced returned (or was not made).
    pub fn clear(&self) {
        self.current.store(0, Ordering::SeqCst);
        // Dekker with `wait_while_calling`: this store, a fence, then the
        // load of `waiters`; there the increment, a fence, then the load of
        // `current`.
        fence_seqcst();
        if self.waiters.load(Ordering::SeqCst) > 0 {
            self.cleared.fetch_add(1, Ordering::SeqCst);
            futex::wake_in(Scope::Private, &self.cleared, i32::MAX);
        }
    }

    /// After killing handler `id`: returns once no call of it is under
    /// way (at once, unless the progress thread is calling it now).
    pub fn wait_while_calling(&self, id: u64) {
        fence_seqcst();
        if self.current.load(Ordering::SeqCst) != id {
            return;
        }
        self.waiters.fetch_add(1, Ordering::SeqCst);
        fence_seqcst();
        loop {
            let seen = self.cleared.load(Ordering::SeqCst);
            if self.current.load(Ordering::SeqCst) != id {
                break;
            }
            // A slice: a wake is never lost (above), the slice only bounds
            // a sleep if it were.
            futex::wait_in(
                Scope::Private,
                &self.cleared,
                seen,
                Some(Duration::from_millis(100)),
            );
        }
        self.waiters.fetch_sub(1, Ordering::SeqCst);
    }
}
