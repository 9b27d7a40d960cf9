//! The doorbell of a progress thread: one consumer parks, many producers ring.

use super::atomic::{fence, AtomicU32, Ordering};
use super::futex::{self, Scope};
use super::Cell32;
use std::time::{Duration, Instant};

const RUNNING: u32 = 0;
const PARKED: u32 = 1;

/// Lets one consumer thread sleep until a producer has published work.
///
/// The protocol is a Dekker pair: the consumer stores `PARKED` then re-checks
/// its queue; a producer publishes into the queue then reads the word. The
/// SeqCst fences on both sides guarantee that at least one of them sees the
/// other, so a wake-up is never lost. A producer pays a syscall only when the
/// consumer is actually asleep.
///
/// The word lives in this process's own memory and only this process's
/// threads wake it, so its futex is private ([`Scope::Private`]: no page
/// lookup in the kernel on either side). A `Parker` must never be placed in
/// memory shared with another process.
pub struct Parker {
    word: AtomicU32,
}

impl Default for Parker {
    fn default() -> Self {
        Self::new()
    }
}

impl Parker {
    /// A parker whose consumer is running.
    pub fn new() -> Self {
        Self {
            word: AtomicU32::new(RUNNING),
        }
    }

    /// Called by producers after they published work.
    pub fn unpark(&self) {
        // Pairs with the fence in `park`: our publication is ordered before
        // the load of the word.
        fence(Ordering::SeqCst);
        if self.word.load(Ordering::Relaxed) == PARKED
            && self.word.swap(RUNNING, Ordering::SeqCst) == PARKED
        {
            futex::wake_in(Scope::Private, &self.word, 1);
        }
    }

    /// Called by the consumer when `has_work` was false: spins for `spin`,
    /// then sleeps until a producer calls [`Parker::unpark`] (or `timeout`).
    ///
    /// Spinning pays only while the consumer has a core of its own; the spin
    /// window is therefore short and configurable by the owner.
    pub fn park(&self, spin: Duration, timeout: Option<Duration>, has_work: impl Fn() -> bool) {
        if spin_for(spin, &has_work) {
            return;
        }
        self.word.store(PARKED, Ordering::Relaxed);
        // Pairs with the fence in `unpark`: either the producer sees PARKED,
        // or we see its published work below.
        fence(Ordering::SeqCst);
        if has_work() {
            self.word.store(RUNNING, Ordering::Relaxed);
            return;
        }
        futex::wait_in(Scope::Private, &self.word, PARKED, timeout);
        self.word.store(RUNNING, Ordering::Relaxed);
    }

    /// As [`Parker::park`], but also wakes when one of two external words is
    /// rung (e.g. a shared-memory ring reader's own wake word and the ring's
    /// doorbell), with one syscall (`futex_waitv`). After this parker is
    /// marked PARKED, `prepare` runs the external source's own sleep
    /// handshake: `Some(words and values)` to sleep on, `None` when its data
    /// already arrived. `end` runs after a sleep that `prepare` armed.
    pub fn park_with<'a>(
        &self,
        spin: Duration,
        has_work: impl Fn() -> bool,
        prepare: impl FnOnce() -> Option<[(&'a Cell32, u32); 2]>,
        end: impl FnOnce(),
    ) {
        if spin_for(spin, &has_work) {
            return;
        }
        self.word.store(PARKED, Ordering::Relaxed);
        // Pairs with the fence in `unpark` (as in `park`).
        fence(Ordering::SeqCst);
        let Some([(a, av), (b, bv)]) = prepare() else {
            self.word.store(RUNNING, Ordering::Relaxed);
            return;
        };
        if !has_work() {
            futex::wait_any(
                &[
                    (&self.word, PARKED, Scope::Private),
                    (a.atomic(), av, Scope::Shared),
                    (b.atomic(), bv, Scope::Shared),
                ],
                None,
            );
        }
        end();
        self.word.store(RUNNING, Ordering::Relaxed);
    }
}

/// Spins until `has_work` or `spin` has passed; `true`: work arrived.
fn spin_for(spin: Duration, has_work: &impl Fn() -> bool) -> bool {
    if spin.is_zero() {
        return false;
    }
    let start = Instant::now();
    let mut i = 0u32;
    loop {
        if has_work() {
            return true;
        }
        std::hint::spin_loop();
        i = i.wrapping_add(1);
        // Reading the clock costs ~20 ns: check it every 64 spins.
        if i % 64 == 0 && start.elapsed() >= spin {
            return false;
        }
    }
}
