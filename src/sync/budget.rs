//! A bounded count of work in flight: the backpressure of a queue whose
//! producers may outrun its one consumer. A producer takes a unit before it
//! queues, sleeping (or refused) while the count is at its limit; the
//! consumer gives one back for each item it takes off, waking one sleeper.

use super::atomic::{AtomicU32, Ordering};
use super::futex::{self, Scope};

/// See the module notes. The words are this process's own (private futex).
pub struct Budget {
    used: AtomicU32,
    /// Producers asleep (or about to sleep) on `used`.
    sleepers: AtomicU32,
    limit: u32,
}

impl Budget {
    /// A budget of `limit` units (at least 1).
    pub fn new(limit: u32) -> Budget {
        Budget {
            used: AtomicU32::new(0),
            sleepers: AtomicU32::new(0),
            limit: limit.max(1),
        }
    }

    /// Takes a unit if one is left.
    pub fn try_take(&self) -> bool {
        let mut cur = self.used.load(Ordering::Relaxed);
        loop {
            if cur >= self.limit {
                return false;
            }
            // Acquire: pairs with the Release of `give`, so the consumer's
            // work before giving the unit back is seen by its next user.
            match self.used.compare_exchange_weak(
                cur,
                cur + 1,
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(now) => cur = now,
            }
        }
    }

    /// Takes a unit, sleeping while none is left.
    pub fn take(&self) {
        while !self.try_take() {
            // SeqCst on both sides (here: count ourselves, then read
            // `used`; in `give`: lower `used`, then read `sleepers`): either
            // `give` sees us and wakes us, or we see its lower count and do
            // not sleep. The futex re-checks `used == cur` atomically.
            self.sleepers.fetch_add(1, Ordering::SeqCst);
            let cur = self.used.load(Ordering::SeqCst);
            if cur >= self.limit {
                futex::wait_in(Scope::Private, &self.used, cur, None);
            }
            self.sleepers.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Gives a unit back (one taken before), waking one sleeper.
    pub fn give(&self) {
        // Release: pairs with the Acquire of `try_take`.
        self.used.fetch_sub(1, Ordering::SeqCst);
        if self.sleepers.load(Ordering::SeqCst) > 0 {
            futex::wake_in(Scope::Private, &self.used, 1);
        }
    }

    /// Units taken and not given back.
    pub fn used(&self) -> u32 {
        self.used.load(Ordering::Relaxed)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_full_budget_refuses_try_take_and_a_give_lets_one_more_in() {
        let b = Budget::new(2);
        assert!(b.try_take() && b.try_take());
        assert!(!b.try_take());
        b.give();
        assert!(b.try_take());
        assert_eq!(b.used(), 2);
    }

    #[test]
    fn take_sleeps_until_a_unit_is_given_back_and_no_wake_is_lost() {
        // Producers on 4 threads take 10 000 units through a budget of 3
        // while a consumer gives them back: all finish (a lost wake-up
        // would leave one asleep for good; the join is the hang guard's
        // business), and the count never exceeds the limit.
        let b = Arc::new(Budget::new(3));
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let producers: Vec<_> = (0..4)
            .map(|_| {
                let (b, tx) = (b.clone(), tx.clone());
                std::thread::spawn(move || {
                    for _ in 0..2500 {
                        b.take();
                        assert!(b.used() <= 3);
                        tx.send(()).unwrap();
                    }
                })
            })
            .collect();
        drop(tx);
        let mut n = 0;
        while rx.recv().is_ok() {
            b.give();
            n += 1;
        }
        for p in producers {
            p.join().unwrap();
        }
        assert_eq!((n, b.used()), (10_000, 0));
    }
}
