//! Spinning before sleeping: a waiter that expects its condition within
//! about the cost of a sleep and a wake-up (tens of µs when the woken CPU
//! has to leave a halt) polls it first. Whether a wait may spin at all is
//! its caller's policy (`ring::SpinPolicy`): on a core shared with other
//! runnable threads spinning only delays the thread it waits for.

use std::time::{Duration, Instant};

/// Polls `done` for at most `budget` (zero: not at all); `true` as soon as
/// it holds. The clock is read once every 64 polls (a read costs ~20 ns).
pub fn spin_until(budget: Duration, mut done: impl FnMut() -> bool) -> bool {
    if budget.is_zero() {
        return false;
    }
    let t0 = Instant::now();
    while t0.elapsed() < budget {
        for _ in 0..64 {
            if done() {
                return true;
            }
            std::hint::spin_loop();
        }
    }
    done()
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::sync::Cell32;
    use std::sync::Arc;

    #[test]
    fn a_zero_budget_polls_nothing() {
        let mut polls = 0;
        assert!(!spin_until(Duration::ZERO, || {
            polls += 1;
            true
        }));
        assert_eq!(polls, 0);
    }

    #[test]
    fn spinning_gives_up_after_its_budget() {
        let t0 = Instant::now();
        assert!(!spin_until(Duration::from_millis(2), || false));
        assert!(t0.elapsed() >= Duration::from_millis(2));
    }

    #[test]
    fn spinning_sees_another_threads_store() {
        let c = Arc::new(Cell32::new(0));
        let c2 = c.clone();
        let t = std::thread::spawn(move || c2.store_release(1));
        // Generous: the storing thread may not be scheduled for a while.
        let seen = spin_until(Duration::from_secs(10), || c.load_acquire() == 1);
        t.join().unwrap();
        assert!(seen);
    }
}
