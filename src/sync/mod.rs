//! The only home of atomics and futex calls in fastpmix.
//!
//! Every other module uses the small primitives exported here, never
//! `std::sync::atomic` directly (enforced by `clippy.toml`'s
//! `disallowed-types`). Under `--cfg loom` the atomics come from loom so the
//! protocols built on them can be model-checked.
//!
//! The io_uring `Reactor` lives here too (not under loom): it arms futex
//! waits on shared words, and futex calls have this one home.
//!
//! A futex word in shared memory is always a *shared* futex (no
//! `FUTEX_PRIVATE_FLAG`): other processes wake it, and a private wait armed
//! by io_uring is not woken reliably (see the reactor's module notes). A
//! word only this process's threads wake may be private (`futex::Scope`):
//! a `Parker`'s word, and the reactor's completion-queue tail, which lives
//! in the ring's own pages, where only a private key can name it.

#![allow(clippy::disallowed_types)]

mod batch;
mod budget;
#[cfg(not(loom))]
mod fork;
mod futex;
mod parker;
#[cfg(not(loom))]
mod published;
#[cfg(not(loom))]
mod reactor;
mod running;
mod shared;
mod spin;
mod state;
mod wake;

pub use batch::WakeBatch;
pub use budget::Budget;
#[cfg(not(loom))]
pub use fork::ForkWatch;
pub use parker::Parker;
#[cfg(not(loom))]
pub use published::Published;
#[cfg(not(loom))]
pub use reactor::{pidfd_exited, pidfd_open, pidfd_send_signal, Reactor, Token};
pub use running::Running;
pub use shared::{
    fence_acquire, fence_release, fence_seqcst, prefetch_read, prefetch_write, Cell32, Cell64,
};
pub use spin::spin_until;
pub use state::{Generation, IdCounter, Latch, LifeCell, LifeState};
pub use wake::WakeWord;

#[cfg(not(loom))]
pub(crate) use std::sync::atomic;

#[cfg(loom)]
pub(crate) use loom::sync::atomic;

/// Slot bytes in a loom model: loom's `UnsafeCell` reports any write that
/// races with a read, which is exactly what the ring's pin protocol forbids.
#[cfg(loom)]
pub struct ModelBytes(loom::cell::UnsafeCell<Vec<u8>>);

#[cfg(loom)]
impl ModelBytes {
    /// Empty bytes.
    pub fn new() -> Self {
        Self(loom::cell::UnsafeCell::new(Vec::new()))
    }

    /// Replaces the bytes (a write access loom tracks).
    pub fn write(&self, b: &[u8]) {
        // SAFETY: loom checks that no other access overlaps this one and
        // fails the model if the protocol let one happen.
        self.0.with_mut(|p| unsafe {
            (*p).clear();
            (*p).extend_from_slice(b);
        })
    }

    /// Copies the bytes out (a read access loom tracks).
    pub fn read(&self) -> Vec<u8> {
        // SAFETY: as for `write`, loom checks the access.
        self.0.with(|p| unsafe { (*p).clone() })
    }
}

#[cfg(loom)]
impl Default for ModelBytes {
    fn default() -> Self {
        Self::new()
    }
}

/// A mutex's guard, poisoned or not. Every mutex of fastpmix guards state
/// that a panic cannot leave half-updated (user callbacks run outside
/// them, and a panic across the C boundary is caught before any lock is
/// left), so a poisoned lock is as good as a clean one: one helper instead
/// of a copy per module.
pub fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
