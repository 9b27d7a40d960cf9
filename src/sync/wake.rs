//! A futex word with wait/wake, for doorbells and for measuring the raw wake
//! cost that benchmarks report as their floor.

use super::atomic::{AtomicU32, Ordering};
use super::futex;
use std::time::Duration;

/// A 32-bit word that threads can sleep on until it changes.
#[derive(Default)]
pub struct WakeWord(AtomicU32);

impl WakeWord {
    /// A word holding `v`.
    pub fn new(v: u32) -> Self {
        Self(AtomicU32::new(v))
    }

    /// The current value (Acquire: pairs with [`WakeWord::set_and_wake`]).
    pub fn get(&self) -> u32 {
        self.0.load(Ordering::Acquire)
    }

    /// Stores `v` (Release) and wakes every sleeper (one futex syscall).
    pub fn set_and_wake(&self, v: u32) {
        self.0.store(v, Ordering::Release);
        futex::wake(&self.0, i32::MAX);
    }

    /// Sleeps until the value differs from `expected` (or `timeout`); returns
    /// the value seen last. Never spins: this is the raw futex path.
    pub fn wait_while(&self, expected: u32, timeout: Option<Duration>) -> u32 {
        let deadline = timeout.map(|t| std::time::Instant::now() + t);
        loop {
            let v = self.get();
            if v != expected {
                return v;
            }
            let left = match deadline {
                Some(d) => match d.checked_duration_since(std::time::Instant::now()) {
                    Some(l) => Some(l),
                    None => return v,
                },
                None => None,
            };
            futex::wait(&self.0, expected, left);
        }
    }
}
