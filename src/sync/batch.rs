//! Waking many futex words with one syscall.
//!
//! A ring publish may have to wake every sleeping reader, each on its own
//! word. A `FUTEX_WAKE` per word lets the first reader woken preempt the
//! writer on a busy core before the others are even woken (fan-out to 16
//! lost a fifth of its speed that way); submitted together as io_uring
//! `FUTEX_WAKE` operations, the kernel wakes them all in one
//! `io_uring_enter`, as one `FUTEX_WAKE` used to wake every sleeper of a
//! shared doorbell. Each thread that wakes several words keeps a small
//! io_uring of its own; without io_uring (or `IORING_OP_FUTEX_WAKE`, Linux
//! 6.7) the words are woken one by one.

use super::Cell32;

/// Words handed to one batch before it is submitted.
const BATCH: usize = 32;

/// Words to wake, collected while deciding who to wake and woken together by
/// [`WakeBatch::flush`] (or on drop). The caller changes each word's value
/// before adding it, so a reader that has not slept yet will not sleep.
pub struct WakeBatch<'a> {
    words: [Option<&'a Cell32>; BATCH],
    n: usize,
}

impl<'a> WakeBatch<'a> {
    /// An empty batch.
    pub fn new() -> Self {
        WakeBatch {
            words: [None; BATCH],
            n: 0,
        }
    }

    /// Adds a word whose every sleeper will be woken.
    pub fn add(&mut self, w: &'a Cell32) {
        if self.n == BATCH {
            self.flush();
        }
        self.words[self.n] = Some(w);
        self.n += 1;
    }

    /// Wakes every word added since the last flush.
    pub fn flush(&mut self) {
        let words = &self.words[..self.n];
        self.n = 0;
        match words {
            [] => {}
            [Some(w)] => w.wake_all(),
            _ => wake_each(words),
        }
    }
}

impl Default for WakeBatch<'_> {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for WakeBatch<'_> {
    fn drop(&mut self) {
        self.flush();
    }
}

#[cfg(loom)]
fn wake_each(words: &[Option<&Cell32>]) {
    words.iter().flatten().for_each(|w| w.wake_all());
}

#[cfg(not(loom))]
fn wake_each(words: &[Option<&Cell32>]) {
    use io_uring::{opcode, IoUring, Probe};
    use std::cell::RefCell;

    const FUTEX2_SIZE_U32: u32 = 0x02;
    const FUTEX_BITSET_MATCH_ANY: u64 = 0xffff_ffff;

    fn ring() -> Option<IoUring> {
        let ring = IoUring::new(BATCH as u32).ok()?;
        let mut probe = Probe::new();
        ring.submitter().register_probe(&mut probe).ok()?;
        probe.is_supported(opcode::FutexWake::CODE).then_some(ring)
    }

    thread_local! {
        /// `None` until first used; `Some(None)`: no usable io_uring here.
        static RING: RefCell<Option<Option<IoUring>>> = const { RefCell::new(None) };
    }
    let done = RING.with(|r| {
        let mut r = r.borrow_mut();
        let Some(ring) = r.get_or_insert_with(ring) else {
            return false;
        };
        let mut sq = ring.submission();
        for w in words.iter().flatten() {
            // `Cell32` is `repr(transparent)` over `AtomicU32`, laid out as a
            // `u32`: this is the word's address, alive for the whole call.
            let addr = std::ptr::from_ref(*w).cast::<u32>();
            let e = opcode::FutexWake::new(
                addr,
                u64::from(u32::MAX),
                FUTEX_BITSET_MATCH_ANY,
                FUTEX2_SIZE_U32,
            )
            .build();
            // SAFETY: the entry names only the word's address (the kernel
            // uses it as the futex key and reads nothing through it); the
            // queue has BATCH entries and a batch holds at most BATCH words,
            // and the queue is empty here (every earlier batch was submitted
            // and its completions drained before this one).
            if unsafe { sq.push(&e) }.is_err() {
                return false;
            }
        }
        drop(sq);
        // FUTEX_WAKE completes at submission: nothing to wait for. The
        // completions only need draining so the queue never overflows.
        let ok = ring.submit().is_ok();
        ring.completion().for_each(drop);
        ok
    });
    if !done {
        // Some words may be woken twice: harmless, waiters re-check.
        words.iter().flatten().for_each(|w| w.wake_all());
    }
}
