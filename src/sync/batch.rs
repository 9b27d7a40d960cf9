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
    if !wake_uring(words) {
        // Some words may be woken twice: harmless, waiters re-check.
        words.iter().flatten().for_each(|w| w.wake_all());
    }
}

/// Wakes every word through this thread's io_uring; `false` when there is
/// none (or it failed), and the caller must wake them itself.
#[cfg(not(loom))]
fn wake_uring(words: &[Option<&Cell32>]) -> bool {
    use io_uring::{opcode, IoUring, Probe};
    use std::cell::RefCell;
    if cfg!(miri) {
        return false; // no io_uring under miri
    }

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
    RING.with(|r| {
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
    })
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    /// Threads asleep on eight words, then one io_uring submission: every
    /// thread wakes (the kernel this runs on has IORING_OP_FUTEX_WAKE: the
    /// server's reactor already requires Linux 6.7). The sleepers have no
    /// timeout: only a wake ends their wait.
    #[test]
    fn one_io_uring_submission_wakes_a_sleeper_on_each_word() {
        let words: Arc<Vec<Cell32>> = Arc::new((0..8).map(|_| Cell32::new(0)).collect());
        let asleep = Arc::new(Cell32::new(0));
        let (tx, rx) = std::sync::mpsc::channel();
        for i in 0..8 {
            let (words, asleep, tx) = (words.clone(), asleep.clone(), tx.clone());
            std::thread::spawn(move || {
                asleep.fetch_add_seqcst(1);
                while words[i].load_acquire() == 0 {
                    words[i].wait_while(0, None);
                }
                tx.send(i).unwrap();
            });
        }
        while asleep.load_acquire() < 8 {
            std::thread::yield_now();
        }
        // Let them reach FUTEX_WAIT (one that has not sees the new value).
        std::thread::sleep(Duration::from_millis(20));
        let mut b: [Option<&Cell32>; 8] = [None; 8];
        for (slot, w) in b.iter_mut().zip(words.iter()) {
            w.fetch_add_seqcst(1);
            *slot = Some(w);
        }
        assert!(
            wake_uring(&b),
            "io_uring FUTEX_WAKE is available and submitted"
        );
        for _ in 0..8 {
            // A hang guard, not a timing: an unwoken sleeper never sends.
            rx.recv_timeout(Duration::from_secs(20))
                .expect("every sleeper woken by the batch");
        }
    }
}
