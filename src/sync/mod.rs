//! The only home of atomics and futex calls in fastpmix.
//!
//! Every other module uses the small primitives exported here, never
//! `std::sync::atomic` directly (enforced by `clippy.toml`'s
//! `disallowed-types`). Under `--cfg loom` the atomics come from loom so the
//! protocols built on them can be model-checked.
//!
//! Futexes are always *shared* (no `FUTEX_PRIVATE_FLAG`): the same words will
//! live in shared memory in the ring, and a private wait armed by io_uring is
//! not woken reliably (see `docs/architecture.md`, "Wait and wake").

#![allow(clippy::disallowed_types)]

mod futex;
mod parker;
mod shared;
mod state;
mod wake;

pub use parker::Parker;
pub use shared::{fence_seqcst, Cell32, Cell64};
pub use state::{Generation, IdCounter, Latch, LifeCell, LifeState};
pub use wake::WakeWord;

#[cfg(not(loom))]
pub(crate) use std::sync::atomic;

#[cfg(loom)]
pub(crate) use loom::sync::atomic;
